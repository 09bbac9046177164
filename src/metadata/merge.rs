//! Combining an older and a newer version of one metadata record (base file first, then
//! log records in order), as Java's `HoodieMetadataPayload` does (docs: hudi-format §8.5, §8.6).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::records::{ColumnStats, FilesEntry, MetadataPayload, StatValue};
use crate::error::{HudiError, Result};

/// `files` merge (Java `combineFileSystemMetadata`): a newer tombstone drops a live older
/// entry but is kept when the older one is absent or also deleted (a later merge with the
/// base file may still need it); a newer live entry takes the larger size and is live.
pub fn merge_files(older: &[FilesEntry], newer: &[FilesEntry]) -> Vec<FilesEntry> {
    let mut merged: BTreeMap<&str, FilesEntry> =
        older.iter().map(|e| (e.name.as_str(), e.clone())).collect();
    for new in newer {
        let old = merged.get(new.name.as_str());
        match (old, new.is_deleted) {
            (Some(old), true) if !old.is_deleted => {
                merged.remove(new.name.as_str());
            }
            (_, true) => {
                merged.insert(&new.name, new.clone());
            }
            (old, false) => {
                let size = old.map_or(new.size, |o| o.size.max(new.size));
                let entry = FilesEntry {
                    size,
                    ..new.clone()
                };
                merged.insert(&new.name, entry);
            }
        }
    }
    merged.into_values().collect()
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
    let bound = |a: &Option<StatValue>, b: &Option<StatValue>, keep: Ordering| match (a, b) {
        (Some(x), Some(y)) => match compare_stat_values(x, y) {
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
pub fn merge_payloads(older: &MetadataPayload, newer: &MetadataPayload) -> Result<MetadataPayload> {
    use MetadataPayload as P;
    Ok(match (older, newer) {
        (P::AllPartitions(a), P::AllPartitions(b)) => P::AllPartitions(merge_files(a, b)),
        (P::Files(a), P::Files(b)) => P::Files(merge_files(a, b)),
        (P::ColumnStats(a), P::ColumnStats(b)) => P::ColumnStats(merge_column_stats(a, b)?),
        (P::PartitionStats(a), P::PartitionStats(b)) => {
            P::PartitionStats(merge_column_stats(a, b)?)
        }
        (P::RecordIndex(_), P::RecordIndex(_))
        | (P::SecondaryIndex(_), P::SecondaryIndex(_))
        | (P::BloomFilter(_), P::BloomFilter(_)) => newer.clone(),
        _ => {
            return Err(HudiError::invalid(format!(
                "cannot merge metadata records of different types: {older:?} and {newer:?}"
            )))
        }
    })
}

/// Java's natural order of the unwrapped values: numbers across widths, strings by UTF-16
/// units, decimals by value, bytes unsigned. `None` when the kinds do not compare.
pub fn compare_stat_values(a: &StatValue, b: &StatValue) -> Option<Ordering> {
    use StatValue as S;
    match (a, b) {
        (S::Boolean(x), S::Boolean(y)) => Some(x.cmp(y)),
        (S::String(x), S::String(y)) => Some(x.encode_utf16().cmp(y.encode_utf16())),
        (S::Bytes(x), S::Bytes(y)) => Some(x.cmp(y)),
        (S::Date(x), S::Date(y)) | (S::LocalDate(x), S::LocalDate(y)) => Some(x.cmp(y)),
        (S::TimeMicros(x), S::TimeMicros(y)) | (S::TimestampMicros(x), S::TimestampMicros(y)) => {
            Some(x.cmp(y))
        }
        (
            S::Decimal {
                unscaled: x,
                scale: sx,
                ..
            },
            S::Decimal {
                unscaled: y,
                scale: sy,
                ..
            },
        ) => compare_decimals(x, *sx, y, *sy),
        (S::Array(x), S::Array(y)) => compare_arrays(x, y),
        _ => compare_numbers(a, b),
    }
}

fn compare_numbers(a: &StatValue, b: &StatValue) -> Option<Ordering> {
    let int = |v: &StatValue| match v {
        StatValue::Int(i) => Some(*i as i64),
        StatValue::Long(l) => Some(*l),
        _ => None,
    };
    let float = |v: &StatValue| match v {
        StatValue::Float(f) => Some(*f as f64),
        StatValue::Double(d) => Some(*d),
        other => int(other).map(|i| i as f64),
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => Some(float(a)?.total_cmp(&float(b)?)),
    }
}

fn compare_arrays(x: &[Option<StatValue>], y: &[Option<StatValue>]) -> Option<Ordering> {
    for (a, b) in x.iter().zip(y) {
        let o = match (a, b) {
            (Some(a), Some(b)) => compare_stat_values(a, b)?,
            (a, b) => a.is_some().cmp(&b.is_some()),
        };
        if o != Ordering::Equal {
            return Some(o);
        }
    }
    Some(x.len().cmp(&y.len()))
}

/// Big-endian two's complement, at most 16 bytes (precision ≤ 38 always fits).
fn unscaled_i128(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return (b.is_empty()).then_some(0);
    }
    let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
    let mut buf = [fill; 16];
    buf[16 - b.len()..].copy_from_slice(b);
    Some(i128::from_be_bytes(buf))
}

fn compare_decimals(x: &[u8], sx: u32, y: &[u8], sy: u32) -> Option<Ordering> {
    let (x, y) = (unscaled_i128(x)?, unscaled_i128(y)?);
    // Scale the one with fewer fraction digits up; on overflow its sign decides.
    let (up, other, flip) = if sx < sy { (x, y, false) } else { (y, x, true) };
    let scaled = 10i128
        .checked_pow(sx.abs_diff(sy))
        .and_then(|p| up.checked_mul(p));
    let o = match scaled {
        Some(s) => s.cmp(&other),
        None if up == 0 => 0.cmp(&other),
        None => up.signum().cmp(&0),
    };
    Some(if flip { o.reverse() } else { o })
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
        let merged = merge_files(&older, &newer);
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
        assert_eq!(merge_files(&[f("d", 9, false)], &merged[2..3]), vec![]);
        // A file re-added after a tombstone is live with the larger size.
        assert_eq!(
            merge_files(&[f("c", 0, true)], &[f("c", 4, false)]),
            vec![f("c", 4, false)]
        );
    }

    fn stats(min: i64, max: i64, nulls: i64) -> ColumnStats {
        ColumnStats {
            file_name: "f.parquet".into(),
            column_name: "amount".into(),
            min: Some(StatValue::Long(min)),
            max: Some(StatValue::Long(max)),
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
        assert_eq!(
            (m.min, m.max),
            (Some(StatValue::Long(3)), Some(StatValue::Long(9)))
        );
        assert_eq!((m.null_count, m.value_count), (Some(3), Some(20)));
        assert_eq!(
            (m.total_size, m.total_uncompressed_size),
            (Some(200), Some(400))
        );
        // A missing bound takes the other side's.
        let mut empty = stats(0, 0, 4);
        (empty.min, empty.max) = (None, None);
        let m = merge_column_stats(&empty, &stats(3, 7, 0)).unwrap();
        assert_eq!(
            (m.min, m.max),
            (Some(StatValue::Long(3)), Some(StatValue::Long(7)))
        );
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
        text.min = Some(StatValue::String("x".into()));
        assert_eq!(
            merge_column_stats(&stats(1, 2, 0), &text)
                .unwrap_err()
                .code(),
            "CORRUPT"
        );
    }

    #[test]
    fn stat_values_compare_like_java() {
        use StatValue as S;
        let cmp = |a: &S, b: &S| compare_stat_values(a, b);
        assert_eq!(cmp(&S::Int(3), &S::Long(2)), Some(Ordering::Greater));
        assert_eq!(cmp(&S::Double(2.5), &S::Long(2)), Some(Ordering::Greater));
        // UTF-16 order: U+FF5E sorts after U+1F600's high surrogate (0xD83D), unlike UTF-8.
        assert_eq!(
            cmp(&S::String("～".into()), &S::String("😀".into())),
            Some(Ordering::Greater)
        );
        let dec = |v: i128, scale| S::Decimal {
            unscaled: v.to_be_bytes()[12..].to_vec(),
            precision: 10,
            scale,
        };
        assert_eq!(cmp(&dec(1250, 2), &dec(125, 1)), Some(Ordering::Equal));
        assert_eq!(cmp(&dec(-1, 0), &dec(5, 3)), Some(Ordering::Less));
        assert_eq!(cmp(&dec(7, 0), &dec(6999, 3)), Some(Ordering::Greater));
        let big = S::Decimal {
            unscaled: vec![0x7f; 16],
            precision: 38,
            scale: 0,
        };
        assert_eq!(cmp(&big, &dec(1, 30)), Some(Ordering::Greater));
        assert_eq!(
            cmp(&S::Bytes(vec![0x80]), &S::Bytes(vec![0x01])),
            Some(Ordering::Greater)
        );
        assert_eq!(cmp(&S::Boolean(true), &S::Int(1)), None);
        let arr = |v: Vec<Option<S>>| S::Array(v);
        assert_eq!(
            cmp(
                &arr(vec![Some(S::Int(1)), None]),
                &arr(vec![Some(S::Int(1)), Some(S::Int(0))])
            ),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn payload_merge_dispatches() {
        let files = |v: Vec<FilesEntry>| MetadataPayload::Files(v);
        let m = merge_payloads(
            &files(vec![f("a", 1, false)]),
            &files(vec![f("b", 2, false)]),
        );
        assert_eq!(m.unwrap(), files(vec![f("a", 1, false), f("b", 2, false)]));
        let stats_p = MetadataPayload::ColumnStats(stats(1, 2, 0));
        assert!(merge_payloads(&files(vec![]), &stats_p).is_err());
    }
}
