//! The footer filters of Spark-written fixture files: every key of a file is in its filter,
//! and a filter built afresh from the file's keys serializes to the same footer string.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::Array;
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;

use super::*;
use crate::hfile::test_support::table;

/// COW and MOR, table versions 6, 8 and 9.
const TABLES: &[&str] = &[
    "sample_table/cow/v6_nonpartitioned",
    "sample_table/cow/v6_complexkeygen_hivestyle",
    "sample_table/cow/v8_nonpartitioned",
    "sample_table/cow/v9_txns_simple_meta",
    "sample_table/cow/v9_txns_simple_nometa",
    "sample_table/mor/parquet/v6_complexkeygen_hivestyle",
    "sample_table/mor/avro/v9_txns_simple_meta",
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
];

/// The footer's key/value pairs and the file's record keys in file order.
pub(crate) fn footer_and_keys(path: &Path) -> (Vec<(String, String)>, Vec<String>) {
    let bytes = Bytes::from(std::fs::read(path).unwrap());
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
    let kv = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let col = builder
        .parquet_schema()
        .columns()
        .iter()
        .position(|c| c.name() == "_hoodie_record_key")
        .unwrap();
    let mask = ProjectionMask::leaves(builder.parquet_schema(), [col]);
    let reader = builder.with_projection(mask).build().unwrap();
    let mut keys = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let a = batch.column(0).as_string::<i32>();
        keys.extend(
            (0..a.len())
                .filter(|&i| a.is_valid(i))
                .map(|i| a.value(i).to_string()),
        );
    }
    (kv, keys)
}

fn get<'a>(kv: &'a [(String, String)], key: &str) -> Option<&'a str> {
    kv.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

#[test]
fn fixture_footer_filters_hold_their_keys_and_reserialize_byte_for_byte() {
    let mut checked = 0;
    for rel in TABLES {
        for file in crate::hfile::test_support::data_base_files(&table(rel)) {
            let (kv, keys) = footer_and_keys(&file);
            let Some(serialized) = get(&kv, FOOTER_KEY) else {
                continue;
            };
            let name = file.display().to_string();
            let code = get(&kv, TYPE_CODE_KEY);
            let filter = BloomFilter::from_footer(serialized, code, &name).unwrap();
            assert!(!keys.is_empty(), "{name}");
            for k in &keys {
                assert!(filter.might_contain(k), "{name}: {k}");
            }
            assert!(!filter.might_contain("no-such-key-3f9a1c"), "{name}");
            assert_eq!(filter.serialize(), serialized, "{name}: round trip");

            // Java's defaults, checked against the header rather than assumed.
            let (nr, rows) = filter.dynamic_shape();
            assert_eq!(filter.kind(), DEFAULT_TYPE, "{name}");
            assert_eq!((nr, rows), (DEFAULT_NUM_ENTRIES as u32, 1), "{name}");
            let mut fresh = BloomFilter::new(
                filter.kind(),
                DEFAULT_NUM_ENTRIES,
                DEFAULT_FPP,
                DEFAULT_MAX_ENTRIES,
            );
            assert_eq!(fresh.shape(), filter.shape(), "{name}");
            for k in &keys {
                fresh.add(k);
            }
            assert!(
                fresh.serialize() == serialized,
                "{name}: rebuilt filter differs"
            );
            assert_eq!(fresh.type_code(), code.unwrap(), "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} files had a footer filter");
}

#[test]
fn sizes_follow_java() {
    // 60000 entries at 1e-9: 2587966 bits, 30 hashes (the fixtures' headers).
    let f = BloomFilter::new(BloomType::DynamicV0, 60_000, 1e-9, 100_000);
    assert_eq!(f.shape(), (2_587_966, 30));
    let f = BloomFilter::new(BloomType::Simple, 1000, 0.01, 0);
    assert_eq!(f.shape(), (9586, 7));
    // Nonsense configs clamp instead of panicking.
    for (n, p) in [
        (0, 0.5),
        (5, 0.0),
        (5, 1.0),
        (5, f64::NAN),
        (usize::MAX, 0.5),
    ] {
        let mut f = BloomFilter::new(BloomType::Simple, n, p, 0);
        f.add("k");
        assert!(f.might_contain("k"));
    }
}

#[test]
fn murmur_of_nothing_is_its_seed_mixed() {
    // Key lengths 1 to 36 with every tail length are covered by the fixtures above.
    assert_eq!(murmur_hash(b"", 0), 0);
    assert_ne!(murmur_hash(&[0xc3, 0xa9], 0), murmur_hash(&[0xa9, 0xc3], 0));
}

#[test]
fn simple_filter_round_trips_and_has_no_false_negatives() {
    let mut f = BloomFilter::new(BloomType::Simple, 1000, 0.001, 0);
    let keys: Vec<String> = (0..1000).map(|i| format!("key-{i}")).collect();
    for k in &keys {
        f.add(k);
    }
    let s = f.serialize();
    let g = BloomFilter::from_footer(&s, None, "f").unwrap();
    assert_eq!(g, f);
    assert!(keys.iter().all(|k| g.might_contain(k)));
    let false_pos = (0..10_000)
        .filter(|i| g.might_contain(&format!("other-{i}")))
        .count();
    assert!(false_pos < 100, "{false_pos}");
    assert_eq!(
        BloomFilter::from_footer(&s, Some("simple"), "f").unwrap(),
        f
    );
}

#[test]
fn dynamic_filter_grows_to_its_bound_then_reuses_rows() {
    let mut f = BloomFilter::new(BloomType::DynamicV0, 10, 0.01, 25);
    let keys: Vec<String> = (0..100).map(|i| format!("k{i}")).collect();
    for (i, k) in keys.iter().enumerate() {
        f.add(k);
        let rows = f.dynamic_shape().1;
        // Rows open at 10 and 20 keys; 3 × 10 ≥ 25 stops growth.
        assert_eq!(rows, 1 + (i >= 10) as usize + (i >= 20) as usize, "{i}");
    }
    assert!(keys.iter().all(|k| f.might_contain(k)));
    let g = BloomFilter::from_footer(&f.serialize(), Some("DYNAMIC_V0"), "f").unwrap();
    assert_eq!(g.serialize(), f.serialize());
    assert!(keys.iter().all(|k| g.might_contain(k)));
}

#[test]
fn damaged_footers_are_typed_errors_naming_the_file() {
    let good = BloomFilter::new(BloomType::DynamicV0, 100, 0.01, 1000).serialize();
    let raw = BASE64.decode(&good).unwrap();
    let mut cases: Vec<(String, Option<&str>)> = vec![
        ("not base64!".into(), Some("DYNAMIC_V0")),
        (String::new(), Some("DYNAMIC_V0")),
        (good.clone(), Some("BLOOM_V9")),
    ];
    // Every truncation.
    for n in [0, 3, 12, 13, 20, 24, 25, 37, raw.len() - 1] {
        cases.push((BASE64.encode(&raw[..n]), Some("DYNAMIC_V0")));
    }
    // Hostile sizes: huge vectors and row counts without the bytes behind them.
    let mut huge = raw.clone();
    huge[9..13].copy_from_slice(&i32::MAX.to_be_bytes());
    cases.push((BASE64.encode(&huge), Some("DYNAMIC_V0")));
    let mut rows = raw.clone();
    rows[21..25].copy_from_slice(&i32::MAX.to_be_bytes());
    cases.push((BASE64.encode(&rows), Some("DYNAMIC_V0")));
    let mut hashes = raw.clone();
    hashes[4..8].copy_from_slice(&i32::MAX.to_be_bytes());
    cases.push((BASE64.encode(&hashes), Some("DYNAMIC_V0")));
    let mut jenkins = raw.clone();
    jenkins[8] = 0;
    cases.push((BASE64.encode(&jenkins), Some("DYNAMIC_V0")));
    let mut zero_nr = raw.clone();
    zero_nr[13..17].copy_from_slice(&0i32.to_be_bytes());
    cases.push((BASE64.encode(&zero_nr), Some("DYNAMIC_V0")));
    for (s, code) in cases {
        let e = BloomFilter::from_footer(&s, code, "p/f.parquet").unwrap_err();
        assert_eq!(e.object(), Some("p/f.parquet"), "{e}");
        assert!(matches!(e.code(), "CORRUPT" | "UNSUPPORTED"), "{e}");
    }
    // Unpadded Base64 is accepted, as Java's decoder does.
    let unpadded = good.trim_end_matches('=');
    assert!(BloomFilter::from_footer(unpadded, Some("DYNAMIC_V0"), "f").is_ok());
}
