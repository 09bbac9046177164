//! Combining an older and a newer version of one metadata record (base file first, then
//! log records in order), as Java's `HoodieMetadataPayload` does (docs/hudi-format.md §8.5, §8.6).

use std::cmp::Ordering;

use super::records::{ColumnStats, FilesEntry, MetadataPayload};
use crate::error::{HudiError, Result};
use crate::value::Value;

/// `files` merge (Java `combineFileSystemMetadata`): a newer tombstone drops a live older
/// entry but is kept when the older one is absent or also deleted (a later merge with the
/// base file may still need it); a newer live entry takes the larger size and is live.
/// The result is sorted by name. One pass over both sides: a partition's list is merged once
/// per log record, and rebuilding a map of it each time made that quadratic.
pub fn merge_files(older: Vec<FilesEntry>, newer: &[FilesEntry]) -> Vec<FilesEntry> {
    let mut newer: Vec<&FilesEntry> = newer.iter().collect();
    // Stable: the versions of one name keep their order.
    newer.sort_by(|a, b| a.name.cmp(&b.name));
    let mut olds = by_name(older).into_iter().peekable();
    let mut news = newer.into_iter().peekable();
    let mut merged = Vec::with_capacity(olds.len() + news.len());
    while let Some(&new) = news.peek() {
        let name = new.name.as_str();
        while let Some(old) = olds.next_if(|o| o.name.as_str() < name) {
            merged.push(old);
        }
        let mut current = olds.next_if(|o| o.name == name);
        while let Some(new) = news.next_if(|n| n.name == name) {
            current = merge_file(current, new);
        }
        merged.extend(current);
    }
    merged.extend(olds);
    merged
}

/// One newer version of a file's entry onto what is known of it.
fn merge_file(older: Option<FilesEntry>, newer: &FilesEntry) -> Option<FilesEntry> {
    match (older, newer.is_deleted) {
        (Some(old), true) if !old.is_deleted => None,
        (_, true) => Some(newer.clone()),
        (old, false) => Some(FilesEntry {
            size: old.map_or(newer.size, |o| o.size.max(newer.size)),
            ..newer.clone()
        }),
    }
}

/// Sorted by name, the last of equal names kept (as a map built from them keeps it).
fn by_name(mut entries: Vec<FilesEntry>) -> Vec<FilesEntry> {
    if entries.windows(2).all(|w| w[0].name < w[1].name) {
        return entries;
    }
    // Reversed, a stable sort puts the last of equal names first, which dedup keeps.
    entries.reverse();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    entries.dedup_by(|later, kept| later.name == kept.name);
    entries
}

/// The entries that are not tombstones: what a listing shows.
pub fn live_files(entries: &[FilesEntry]) -> impl Iterator<Item = &FilesEntry> {
    entries.iter().filter(|e| !e.is_deleted)
}

/// Column-stats merge (Java `mergeColumnStatsRecords`): a tombstone on either side or a
/// tight-bound newer record replaces the older one; otherwise min of mins, max of maxes and
/// sums of counts and sizes. Errors when the bounds cannot be compared.
pub fn merge_column_stats(older: &ColumnStats, newer: &ColumnStats) -> Result<ColumnStats> {
    if older.column_name != newer.column_name {
        return Err(HudiError::invalid(format!(
            "cannot merge stats of column {:?} into {:?}",
            newer.column_name, older.column_name
        )));
    }
    if older.is_deleted || newer.is_deleted || newer.is_tight_bound {
        return Ok(newer.clone());
    }
    let bound = |a: &Option<Value>, b: &Option<Value>, keep: Ordering| match (a, b) {
        (Some(x), Some(y)) => match x.compare_utf16(y) {
            Some(o) => Ok(Some(if o == keep { x.clone() } else { y.clone() })),
            None => Err(HudiError::corrupt(
                &newer.file_name,
                format!(
                    "column {:?}: cannot compare {x:?} with {y:?}",
                    newer.column_name
                ),
            )),
        },
        (x, y) => Ok(x.clone().or_else(|| y.clone())),
    };
    Ok(ColumnStats {
        min: bound(&older.min, &newer.min, Ordering::Less)?,
        max: bound(&older.max, &newer.max, Ordering::Greater)?,
        null_count: sum(older.null_count, newer.null_count),
        value_count: sum(older.value_count, newer.value_count),
        total_size: sum(older.total_size, newer.total_size),
        total_uncompressed_size: sum(older.total_uncompressed_size, newer.total_uncompressed_size),
        value_type: newer
            .value_type
            .clone()
            .or_else(|| older.value_type.clone()),
        ..newer.clone()
    })
}

fn sum(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.saturating_add(y)),
        (x, y) => x.or(y),
    }
}

/// Merges two versions of the same key. Files and stats combine; for the record index,
/// secondary index and bloom filters the newer version wins.
pub fn merge_payloads(older: MetadataPayload, newer: &MetadataPayload) -> Result<MetadataPayload> {
    use MetadataPayload as P;
    Ok(match (older, newer) {
        (P::AllPartitions(a), P::AllPartitions(b)) => P::AllPartitions(merge_files(a, b)),
        (P::Files(a), P::Files(b)) => P::Files(merge_files(a, b)),
        (P::ColumnStats(a), P::ColumnStats(b)) => P::ColumnStats(merge_column_stats(&a, b)?),
        (P::PartitionStats(a), P::PartitionStats(b)) => {
            P::PartitionStats(merge_column_stats(&a, b)?)
        }
        (P::RecordIndex(_), P::RecordIndex(_))
        | (P::SecondaryIndex(_), P::SecondaryIndex(_))
        | (P::BloomFilter(_), P::BloomFilter(_)) => newer.clone(),
        (older, _) => {
            return Err(HudiError::invalid(format!(
                "cannot merge metadata records of different types: {older:?} and {newer:?}"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, size: i64, is_deleted: bool) -> FilesEntry {
        FilesEntry {
            name: name.into(),
            size,
            is_deleted,
        }
    }

    #[test]
    fn files_merge_follows_java() {
        let older = [f("a", 10, false), f("b", 5, false), f("c", 0, true)];
        let newer = [
            f("a", 7, false), // live again: max size
            f("b", 0, true),  // deletes a live file: both vanish
            f("c", 0, true),  // repeated delete: tombstone stays
            f("d", 0, true),  // delete of an unknown file: tombstone kept for the base merge
            f("e", 3, false), // new file
        ];
        let merged = merge_files(older.to_vec(), &newer);
        assert_eq!(
            merged,
            vec![
                f("a", 10, false),
                f("c", 0, true),
                f("d", 0, true),
                f("e", 3, false)
            ]
        );
        let live: Vec<_> = live_files(&merged).map(|e| e.name.as_str()).collect();
        assert_eq!(live, ["a", "e"]);
        // A tombstone carried from the logs removes the base file's entry.
        assert_eq!(merge_files(vec![f("d", 9, false)], &merged[2..3]), vec![]);
        // A file re-added after a tombstone is live with the larger size.
        assert_eq!(
            merge_files(vec![f("c", 0, true)], &[f("c", 4, false)]),
            vec![f("c", 4, false)]
        );
    }

    /// Versions applied one by one onto a map of the older list, the rules read literally.
    fn merge_files_one_by_one(older: &[FilesEntry], newer: &[FilesEntry]) -> Vec<FilesEntry> {
        let mut map: std::collections::BTreeMap<String, FilesEntry> =
            older.iter().map(|e| (e.name.clone(), e.clone())).collect();
        for new in newer {
            match merge_file(map.remove(&new.name), new) {
                Some(e) => map.insert(new.name.clone(), e),
                None => None,
            };
        }
        map.into_values().collect()
    }

    #[test]
    fn files_merge_matches_applying_versions_one_by_one() {
        // Unsorted sides, repeated names on both, tombstones and re-adds.
        let mut seed = 7u64;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..500 {
            let mut side = |len: u64| -> Vec<FilesEntry> {
                (0..next(len))
                    .map(|_| f(&format!("f{}", next(12)), next(100) as i64, next(3) == 0))
                    .collect()
            };
            let (older, newer) = (side(10), side(8));
            assert_eq!(
                merge_files(older.clone(), &newer),
                merge_files_one_by_one(&older, &newer),
                "older {older:?} newer {newer:?}"
            );
        }
    }

    fn stats(min: i64, max: i64, nulls: i64) -> ColumnStats {
        ColumnStats {
            file_name: "f.parquet".into(),
            column_name: "amount".into(),
            min: Some(Value::Long(min)),
            max: Some(Value::Long(max)),
            null_count: Some(nulls),
            value_count: Some(10),
            total_size: Some(100),
            total_uncompressed_size: Some(200),
            is_deleted: false,
            is_tight_bound: false,
            value_type: Some((4, None)),
        }
    }

    #[test]
    fn column_stats_merge_widens_and_sums() {
        let m = merge_column_stats(&stats(5, 9, 1), &stats(3, 7, 2)).unwrap();
        assert_eq!((m.min, m.max), (Some(Value::Long(3)), Some(Value::Long(9))));
        assert_eq!((m.null_count, m.value_count), (Some(3), Some(20)));
        assert_eq!(
            (m.total_size, m.total_uncompressed_size),
            (Some(200), Some(400))
        );
        // A missing bound takes the other side's.
        let mut empty = stats(0, 0, 4);
        (empty.min, empty.max) = (None, None);
        let m = merge_column_stats(&empty, &stats(3, 7, 0)).unwrap();
        assert_eq!((m.min, m.max), (Some(Value::Long(3)), Some(Value::Long(7))));
    }

    #[test]
    fn tombstones_and_tight_bounds_replace() {
        let mut dead = stats(0, 1, 0);
        dead.is_deleted = true;
        assert_eq!(merge_column_stats(&stats(5, 9, 1), &dead).unwrap(), dead);
        assert_eq!(
            merge_column_stats(&dead, &stats(5, 9, 1)).unwrap(),
            stats(5, 9, 1)
        );
        let mut tight = stats(6, 7, 0);
        tight.is_tight_bound = true;
        assert_eq!(merge_column_stats(&stats(1, 9, 1), &tight).unwrap(), tight);
        let mut other = stats(1, 2, 0);
        other.column_name = "other".into();
        assert!(merge_column_stats(&stats(1, 2, 0), &other).is_err());
        let mut text = stats(1, 2, 0);
        text.min = Some(Value::String("x".into()));
        assert_eq!(
            merge_column_stats(&stats(1, 2, 0), &text)
                .unwrap_err()
                .code(),
            "CORRUPT"
        );
    }

    #[test]
    fn string_bounds_merge_in_java_order() {
        let text = |min: &str, max: &str| ColumnStats {
            min: Some(Value::String(min.into())),
            max: Some(Value::String(max.into())),
            ..stats(0, 0, 0)
        };
        // UTF-16 order: U+FF5E sorts after U+1F600's high surrogate (0xD83D), unlike UTF-8.
        let m = merge_column_stats(&text("～", "～"), &text("😀", "😀")).unwrap();
        let string = |v: &str| Some(Value::String(v.into()));
        assert_eq!((m.min, m.max), (string("😀"), string("～")));
    }

    #[test]
    fn payload_merge_dispatches() {
        let files = |v: Vec<FilesEntry>| MetadataPayload::Files(v);
        let m = merge_payloads(
            files(vec![f("a", 1, false)]),
            &files(vec![f("b", 2, false)]),
        );
        assert_eq!(m.unwrap(), files(vec![f("a", 1, false), f("b", 2, false)]));
        let stats_p = MetadataPayload::ColumnStats(stats(1, 2, 0));
        assert!(merge_payloads(files(vec![]), &stats_p).is_err());
    }
}
