//! Record keys of the metadata table and the file group each key lives in (docs:
//! docs/hudi-format.md §8.6–8.10).
//!
//! Column and partition ids are XXH64 (seed `0xdabadaba` sign-extended, Java's `int` seed)
//! written big-endian and Base64-encoded; file ids are the MD5 of the file name. Keys are
//! sharded over a partition's N file groups by Java's `String.hashCode`.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use md5::{Digest, Md5};

/// The partition identifier of a non-partitioned table.
pub const NON_PARTITIONED_ID: &str = ".";

/// Key of the `files` record that lists every partition.
pub const ALL_PARTITIONS_KEY: &str = "__all_partitions__";

/// Java `HashID` seed `0xdabadaba` as a signed int widened to long.
const XXH64_SEED: u64 = 0xFFFF_FFFF_DABA_DABA;

/// `"."` for the non-partitioned table's empty path, the path otherwise.
pub fn partition_id(partition_path: &str) -> &str {
    if partition_path.is_empty() {
        NON_PARTITIONED_ID
    } else {
        partition_path
    }
}

/// Base64 of the big-endian XXH64 of `s` (Java `ColumnIndexID` / `PartitionIndexID`).
pub fn hash_id_64(s: &str) -> String {
    let h = xxhash_rust::xxh64::xxh64(s.as_bytes(), XXH64_SEED);
    BASE64.encode(h.to_be_bytes())
}

/// Base64 of the MD5 of `s` (Java `FileIndexID`).
pub fn hash_id_128(s: &str) -> String {
    BASE64.encode(Md5::digest(s.as_bytes()))
}

/// `column_stats` key: column id ‖ partition id ‖ file id (48 ASCII chars).
pub fn column_stats_key(column: &str, partition_path: &str, file_name: &str) -> String {
    column_stats_key_prefix(column, Some(partition_path)) + &hash_id_128(file_name)
}

/// Prefix of the `column_stats` keys of one column, optionally within one partition.
pub fn column_stats_key_prefix(column: &str, partition_path: Option<&str>) -> String {
    let mut key = hash_id_64(column);
    if let Some(p) = partition_path {
        key += &hash_id_64(partition_id(p));
    }
    key
}

/// `partition_stats` key: column id ‖ partition id (24 ASCII chars).
pub fn partition_stats_key(column: &str, partition_path: &str) -> String {
    column_stats_key_prefix(column, Some(partition_path))
}

/// `bloom_filters` key: partition id ‖ file id.
pub fn bloom_filter_key(partition_path: &str, file_name: &str) -> String {
    hash_id_64(partition_id(partition_path)) + &hash_id_128(file_name)
}

pub use crate::value::java_string_hash;

/// The file group (0-based) holding `key` among `n` file groups, as Java's
/// `mapRecordKeyToFileGroupIndex`: `abs(abs(hash) % n)`. `n = 0` is treated as 1.
pub fn file_group_index(key: &str, n: usize) -> usize {
    let n = i64::try_from(n.max(1)).unwrap_or(i64::MAX);
    // Java's Math.abs(Integer.MIN_VALUE) stays negative; the outer abs repairs the remainder.
    let h = java_string_hash(key).wrapping_abs() as i64;
    (h % n).unsigned_abs() as usize
}

/// Separates the secondary value from the record key in a secondary-index key.
pub const SECONDARY_SEPARATOR: char = '$';
const ESCAPE: char = '\\';
const NULL_CHAR: char = '\0';

/// Escapes `\`, `$` and NUL with a backslash; a null value becomes a lone NUL
/// (Java `SecondaryIndexKeyUtils.escapeSpecialChars`).
pub fn escape_secondary(value: Option<&str>) -> String {
    let Some(value) = value else {
        return NULL_CHAR.to_string();
    };
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, ESCAPE | SECONDARY_SEPARATOR | NULL_CHAR) {
            out.push(ESCAPE);
        }
        out.push(c);
    }
    out
}

/// Inverse of [`escape_secondary`].
pub fn unescape_secondary(s: &str) -> Option<String> {
    if s == "\0" {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut escaped = false;
    for c in s.chars() {
        if c == ESCAPE && !escaped {
            escaped = true;
        } else {
            out.push(c);
            escaped = false;
        }
    }
    Some(out)
}

/// Secondary-index key `<esc(secondary)>$<esc(record key)>`.
pub fn secondary_index_key(secondary: Option<&str>, record_key: Option<&str>) -> String {
    format!(
        "{}{SECONDARY_SEPARATOR}{}",
        escape_secondary(secondary),
        escape_secondary(record_key)
    )
}

/// What a V2 secondary index hashes to pick the file group: `<esc(secondary)>$`, so all
/// record keys of one secondary value share a file group. V1 hashes the full key.
pub fn secondary_index_shard_key(secondary: Option<&str>) -> String {
    format!("{}{SECONDARY_SEPARATOR}", escape_secondary(secondary))
}

/// Splits a secondary-index key into (secondary value, record key), unescaped; `None` when
/// the key has no unescaped `$`.
pub fn split_secondary_index_key(key: &str) -> Option<(Option<String>, Option<String>)> {
    let mut escaped = false;
    for (i, c) in key.char_indices() {
        match c {
            ESCAPE if !escaped => escaped = true,
            SECONDARY_SEPARATOR if !escaped => {
                return Some((
                    unescape_secondary(&key[..i]),
                    unescape_secondary(&key[i + 1..]),
                ))
            }
            _ => escaped = false,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_examples() {
        assert_eq!(hash_id_64("fee_amount"), "5RNSbpYG6oU=");
        assert_eq!(hash_id_64("region=us"), "431THTTwO5Q=");
        assert_eq!(hash_id_64(partition_id("")), "FXThHwelITM=");
        assert_eq!(
            hash_id_128("3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_1-27-53_20260307162557587.parquet"),
            "F01d3NbdD9QcFpSCtykrRA=="
        );
        let key = column_stats_key(
            "fee_amount",
            "region=us",
            "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_1-27-53_20260307162557587.parquet",
        );
        assert_eq!(key, "5RNSbpYG6oU=431THTTwO5Q=F01d3NbdD9QcFpSCtykrRA==");
        assert_eq!(key.len(), 48);
        assert_eq!(partition_stats_key("fee_amount", "region=us"), key[..24]);
        assert_eq!(column_stats_key_prefix("fee_amount", None), key[..12]);
        assert_eq!(
            column_stats_key_prefix("c", Some("")),
            hash_id_64("c") + "FXThHwelITM="
        );
    }

    #[test]
    fn java_hash_and_shards() {
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("hello"), 99162322);
        // Supplementary characters hash as two UTF-16 units, like Java.
        assert_eq!(java_string_hash("😀"), 0xD83D * 31 + 0xDE00);
        // "polygenelubricants" is a classic string whose hashCode is Integer.MIN_VALUE.
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        assert_eq!(file_group_index("polygenelubricants", 10), 8);
        assert_eq!(file_group_index("anything", 1), 0);
        assert_eq!(file_group_index("anything", 0), 0);
        assert!((0..1000).all(|i| file_group_index(&format!("k{i}"), 7) < 7));
    }

    #[test]
    fn secondary_keys_round_trip() {
        assert_eq!(
            secondary_index_key(Some("a$b\\c"), Some("k1")),
            "a\\$b\\\\c$k1"
        );
        assert_eq!(secondary_index_key(None, Some("k")), "\0$k");
        assert_eq!(secondary_index_shard_key(Some("19743")), "19743$");
        for (s, k) in [
            (Some("a$b\\c\0"), Some("x$y")),
            (None, Some("k")),
            (Some(""), Some("")),
        ] {
            let key = secondary_index_key(s, k);
            let want = (s.map(String::from), k.map(String::from));
            assert_eq!(split_secondary_index_key(&key), Some(want), "{key:?}");
        }
        assert_eq!(split_secondary_index_key("no-separator"), None);
    }
}
