//! Hudi's simple bucket index (`hoodie.index.type=BUCKET`): a record's file group is fixed by
//! its key — `(hash of the key fields' values as a Java List<String>) mod buckets` — and the
//! group's id starts with that bucket number (`%08d`). `hoodie.properties` records none of it
//! (the bucket count and hash fields are writer settings), so a table is known by its file
//! ids and its writers must be given the same settings, as Spark's are.

use std::collections::BTreeMap;

use super::config::{BucketSettings, IndexType};
use super::plan::ChangePlan;
use crate::config::TableConfig;
use crate::error::{HudiError, Result};
use crate::file_group::FileSlice;

/// The bucket layout a write keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Buckets {
    pub count: u32,
    /// `hoodie.bucket.index.hash.field`: record key fields whose values are hashed.
    pub hash_fields: Vec<String>,
}

/// The bucket number a file id starts with (`00000003-…`), if it has that form. Only ids
/// whose first segment is eight digits starting `00` count: a random UUID starts so about
/// once in 4,000 files; bucket counts reach a million in no real table.
pub fn bucket_of_file_id(file_id: &str) -> Option<u32> {
    let head = file_id.get(..9)?;
    let (digits, dash) = head.split_at(8);
    (dash == "-" && digits.starts_with("00") && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// A new file group id for `bucket`: a random one whose first eight characters are the
/// bucket number, as Java's `BucketIdentifier.newBucketFileIdPrefix`.
pub(crate) fn new_file_id(bucket: u32) -> Result<String> {
    let random = super::files::new_file_id()?;
    Ok(format!("{bucket:08}{}", &random[8..]))
}

/// The layout this write must keep: `None` for tables without a bucket index. A table is
/// taken for one when the write says `hoodie.index.type=BUCKET` (or its properties do), or
/// when every file group it holds has a bucket id; an explicit other index type overrules
/// the ids. Its bucket count must then be given (`hoodie.bucket.index.num.buckets`) and
/// hold every bucket the table has.
pub fn layout(
    config: &TableConfig,
    settings: &BucketSettings,
    index: Option<IndexType>,
    slices: &[FileSlice],
) -> Result<Option<Buckets>> {
    let ids: Vec<Option<u32>> = slices
        .iter()
        .map(|s| bucket_of_file_id(&s.file_id))
        .collect();
    let laid_out = !ids.is_empty() && ids.iter().all(Option::is_some);
    let bucketed = match index {
        Some(i) => i == IndexType::Bucket,
        None => laid_out,
    };
    if !bucketed {
        return Ok(None);
    }
    let example = slices.first().map(|s| s.file_id.as_str()).unwrap_or("");
    if settings.consistent_hashing {
        return Err(HudiError::unsupported(
            "writing a table with the CONSISTENT_HASHING bucket index engine (its buckets split \
             and merge through .hoodie/.bucket_index); only SIMPLE buckets are written",
        ));
    }
    let Some(count) = settings.count else {
        return Err(HudiError::invalid(format!(
            "this table's file groups are Hudi bucket-index buckets (e.g. {example}), which \
             hoodie.properties does not describe: give the settings its writers use, \
             hoodie.index.type=BUCKET and hoodie.bucket.index.num.buckets (and \
             hoodie.bucket.index.hash.field when it is not the record key); or another \
             hoodie.index.type if these ids are not buckets"
        )));
    };
    if let Some((slice, bucket)) = (slices.iter().zip(&ids))
        .filter_map(|(s, b)| b.map(|b| (s, b)))
        .find(|(_, b)| *b >= count)
    {
        return Err(HudiError::invalid(format!(
            "hoodie.bucket.index.num.buckets={count}, but the table has bucket {bucket} \
             (file group {} in {})",
            slice.file_id, slice.partition
        )));
    }
    if laid_out {
        // A file group without a bucket id would never be found by a bucket lookup.
    } else if let Some(s) = slices
        .iter()
        .find(|s| bucket_of_file_id(&s.file_id).is_none())
    {
        return Err(HudiError::unsupported(format!(
            "writing with a bucket index into a table whose file group {} (in {}) is no \
             bucket",
            s.file_id, s.partition
        )));
    }
    let hash_fields = match &settings.hash_fields {
        Some(f) => f.clone(),
        None => config.record_key_fields.clone(),
    };
    if let Some(f) = hash_fields
        .iter()
        .find(|f| !config.record_key_fields.contains(f))
    {
        return Err(HudiError::invalid(format!(
            "hoodie.bucket.index.hash.field names {f}, which is not a record key field ({})",
            config.record_key_fields.join(",")
        )));
    }
    Ok(Some(Buckets { count, hash_fields }))
}

/// Java's `String.hashCode` (over UTF-16 code units, wrapping).
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

impl Buckets {
    /// The bucket of a record key as Java's `BucketIdentifier.getBucketId`: a key without
    /// `:` is the one value hashed; a `field:value,…` key hashes the hash fields' values.
    pub fn of(&self, record_key: &str) -> Result<u32> {
        let values: Vec<&str> = if !record_key.contains(':') {
            vec![record_key]
        } else {
            let mut pairs = BTreeMap::new();
            for part in record_key.split(',') {
                let mut it = part.split(':');
                let (Some(k), Some(v)) = (it.next(), it.next()) else {
                    return Err(HudiError::invalid_input(format!(
                        "record key {record_key:?} cannot be split into field:value pairs \
                         for the bucket index"
                    )));
                };
                if pairs.insert(k, v).is_some() {
                    return Err(HudiError::invalid_input(format!(
                        "record key {record_key:?} names {k} twice"
                    )));
                }
            }
            let mut values = Vec::with_capacity(self.hash_fields.len());
            for f in &self.hash_fields {
                values.push(*pairs.get(f.as_str()).ok_or_else(|| {
                    HudiError::invalid_input(format!(
                        "record key {record_key:?} has no value for hash field {f}"
                    ))
                })?);
            }
            values
        };
        // `List.hashCode`: 31 * h + element hash, from 1.
        let hash = values.iter().fold(1i32, |h, v| {
            h.wrapping_mul(31).wrapping_add(java_string_hash(v))
        });
        Ok(((hash & i32::MAX) as u32) % self.count)
    }
}

/// Routes the plan's records by bucket: updates and deletes must already be in their key's
/// bucket (else the given settings are not the table's); new keys join the file group of
/// their bucket in their partition (a Copy-On-Write rewrite, a Merge-On-Read log append, as
/// Java's bucket index does), or start that bucket's file group.
pub(crate) fn route(plan: &mut ChangePlan, slices: &[FileSlice], buckets: &Buckets) -> Result<()> {
    for ((partition, file_id), change) in &plan.groups {
        let Some(group_bucket) = bucket_of_file_id(file_id) else {
            continue;
        };
        let keys =
            (change.updates.iter().map(|(k, _, _)| k)).chain(change.deletes.iter().map(|(k, _)| k));
        for key in keys {
            let bucket = buckets.of(key)?;
            if bucket != group_bucket {
                return Err(HudiError::invalid(format!(
                    "record key {key} is in bucket {group_bucket} (file group {file_id} in \
                     {partition}) but hashes to bucket {bucket} of {} over [{}]: the table \
                     was written with another bucket count or hash field",
                    buckets.count,
                    buckets.hash_fields.join(",")
                )));
            }
        }
    }
    let groups: BTreeMap<(&str, u32), &str> = slices
        .iter()
        .filter_map(|s| {
            bucket_of_file_id(&s.file_id).map(|b| ((s.partition.as_str(), b), s.file_id.as_str()))
        })
        .collect();
    for (partition, rows) in std::mem::take(&mut plan.inserts) {
        for row in rows {
            let bucket = buckets.of(&row.0)?;
            match groups.get(&(partition.as_str(), bucket)) {
                Some(file_id) => plan
                    .groups
                    .entry((partition.clone(), file_id.to_string()))
                    .or_default()
                    .inserts
                    .push(row),
                None => plan
                    .bucket_inserts
                    .entry((partition.clone(), bucket))
                    .or_default()
                    .push(row),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_as_java() {
        // Java: "id-001".hashCode() == -1195166081; List.of("a","b").hashCode() == 4066.
        assert_eq!(java_string_hash("id-001"), -1195166081);
        assert_eq!(java_string_hash(""), 0);
        let two = Buckets {
            count: 1_000_000,
            hash_fields: vec!["x".into(), "y".into()],
        };
        assert_eq!(two.of("x:a,y:b").unwrap(), 4066);
        assert_eq!(two.of("y:b,x:a").unwrap(), 4066);
        assert!(two.of("x:a").is_err());
        assert_eq!(
            bucket_of_file_id("00000003-9f77-4bf2-8837-7c931ee42ad8-0"),
            Some(3)
        );
        assert_eq!(
            bucket_of_file_id("12345678-9f77-4bf2-8837-7c931ee42ad8-0"),
            None
        );
        assert_eq!(
            bucket_of_file_id("00a00003-9f77-4bf2-8837-7c931ee42ad8-0"),
            None
        );
        let id = new_file_id(7).unwrap();
        assert_eq!(bucket_of_file_id(&id), Some(7));
        assert_eq!(id.len(), 38);
    }
}
