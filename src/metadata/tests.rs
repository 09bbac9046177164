//! Metadata-table tests against the fixture tables: every record of every MDT partition
//! (base HFiles and HFILE_DATA log blocks) decodes, keys recompute from record contents and
//! sit in the file group their hash names, and records agree with the files on disk.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use futures::executor::block_on;

use super::keys::*;
use super::merge::{merge_column_stats, merge_files};
use super::*;
use crate::error::HudiError;
use crate::hfile::test_support as ts;
use crate::hfile::HFileReader;
use crate::value::Value;

/// Records of one MDT file (a base HFile or one log block).
struct Batch {
    partition: String,
    file_group: usize,
    records: Vec<MetadataRecord>,
}

fn decode_hfile(r: &HFileReader, decoder: &RecordDecoder) -> Vec<MetadataRecord> {
    decoder
        .decode_cells(&block_on(r.scan_all()).unwrap())
        .unwrap()
}

/// `col-stats-0001-0_…` / `.col-stats-0001-0_…log…` → 1.
fn file_group_of(path: &Path) -> usize {
    let name = path.file_name().unwrap().to_string_lossy();
    let id = name.trim_start_matches('.').split('_').next().unwrap();
    id.rsplit('-').nth(1).unwrap().parse().unwrap()
}

/// Every MDT record of a table, base HFiles first, then log blocks, each in file-name order.
/// Decoded once per test process.
fn batches(root: &Path) -> Arc<Vec<Batch>> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Vec<Batch>>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(b) = cache.lock().unwrap().get(root) {
        return b.clone();
    }
    let decoded = Arc::new(decode_all(root));
    cache
        .lock()
        .unwrap()
        .insert(root.to_path_buf(), decoded.clone());
    decoded
}

fn decode_all(root: &Path) -> Vec<Batch> {
    let mut out = Vec::new();
    for (partition, path) in ts::mdt_hfiles(root) {
        let name = path.to_string_lossy();
        let r = HFileReader::from_bytes(Bytes::from(std::fs::read(&path).unwrap()), &name).unwrap();
        let records = decode_hfile(&r, &RecordDecoder::for_hfile(&r).unwrap());
        out.push(Batch {
            partition,
            file_group: file_group_of(&path),
            records,
        });
    }
    for (partition, path) in ts::mdt_log_files(root) {
        let name = path.to_string_lossy();
        for (schema, content) in ts::log_hfile_blocks(&std::fs::read(&path).unwrap()) {
            let r = HFileReader::from_bytes(content, &name).unwrap();
            let records = decode_hfile(&r, &RecordDecoder::new(&schema.unwrap(), &name).unwrap());
            let file_group = file_group_of(&path);
            out.push(Batch {
                partition: partition.clone(),
                file_group,
                records,
            });
        }
    }
    out
}

/// Number of file groups of each MDT partition, from the file names on disk.
fn file_group_counts(root: &Path) -> BTreeMap<String, usize> {
    let mut groups: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    for (p, path) in ts::mdt_files(root, |n| n.ends_with(".hfile") || n.contains(".log.")) {
        groups.entry(p).or_default().insert(file_group_of(&path));
    }
    groups.into_iter().map(|(p, g)| (p, g.len())).collect()
}

fn all_partitions(batches: &[Batch]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for r in batches.iter().flat_map(|b| &b.records) {
        if let MetadataPayload::AllPartitions(list) = &r.payload {
            out.extend(list.iter().map(|e| e.name.clone()));
        }
    }
    out
}

fn partition_dir(root: &Path, partition: &str) -> std::path::PathBuf {
    match partition {
        "" | NON_PARTITIONED_ID => root.to_path_buf(),
        p => root.join(p),
    }
}

#[test]
fn every_record_decodes_to_its_partitions_type() {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for table in ts::MDT_TABLES {
        for b in batches(&ts::table(table)).iter() {
            for r in &b.records {
                use MetadataPayload as P;
                let kind = match (&r.payload, b.partition.as_str()) {
                    (P::AllPartitions(_), "files") if r.key == ALL_PARTITIONS_KEY => {
                        "all_partitions"
                    }
                    (P::Files(_), "files") if r.key != ALL_PARTITIONS_KEY => "files",
                    (P::ColumnStats(_), "column_stats") => "column_stats",
                    (P::PartitionStats(_), "partition_stats") => "partition_stats",
                    (P::RecordIndex(_), "record_index") => "record_index",
                    (P::SecondaryIndex(_), p) if p.starts_with("secondary_index_") => "secondary",
                    (p, part) => panic!("{table}: {part} holds {p:?}"),
                };
                *seen.entry(kind).or_default() += 1;
            }
        }
    }
    eprintln!("decoded records by kind: {seen:?}");
    assert_eq!(seen.len(), 6, "{seen:?}");
    assert!(seen.values().all(|&n| n >= 10), "{seen:?}");
}

#[test]
fn keys_recompute_and_sit_in_their_file_group() {
    let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
    for table in ts::MDT_TABLES {
        let root = ts::table(table);
        let groups = file_group_counts(&root);
        let all = batches(&root);
        let partitions = all_partitions(&all);
        let v1_secondary = table.contains("/v8_");
        for b in all.iter() {
            let n = groups[&b.partition];
            for r in &b.records {
                let (kind, shard_key) = match &r.payload {
                    MetadataPayload::ColumnStats(s) => {
                        let matching: Vec<_> = partitions
                            .iter()
                            .filter(|p| column_stats_key(&s.column_name, p, &s.file_name) == r.key)
                            .collect();
                        assert_eq!(matching.len(), 1, "{table}: {} {s:?}", r.key);
                        ("column_stats", r.key.clone())
                    }
                    MetadataPayload::PartitionStats(s) => {
                        assert_eq!(partition_stats_key(&s.column_name, &s.file_name), r.key);
                        ("partition_stats", r.key.clone())
                    }
                    MetadataPayload::SecondaryIndex(_) => {
                        let (sec, rec) = split_secondary_index_key(&r.key).expect("separator");
                        assert_eq!(secondary_index_key(sec.as_deref(), rec.as_deref()), r.key);
                        let shard = match v1_secondary {
                            true => r.key.clone(),
                            false => secondary_index_shard_key(sec.as_deref()),
                        };
                        ("secondary", shard)
                    }
                    MetadataPayload::RecordIndex(_) => ("record_index", r.key.clone()),
                    _ => continue,
                };
                assert_eq!(
                    file_group_index(&shard_key, n),
                    b.file_group,
                    "{table}: {}",
                    r.key
                );
                *checked.entry(kind).or_default() += 1;
            }
        }
    }
    eprintln!("keys recomputed and sharded: {checked:?}");
    assert_eq!(checked.len(), 4);
    assert!(checked["column_stats"] > 300, "{checked:?}");
}

#[test]
fn files_partition_lists_files_on_disk() {
    for table in ts::MDT_TABLES {
        let root = ts::table(table);
        let all = batches(&root);
        for p in all_partitions(&all) {
            assert!(partition_dir(&root, &p).is_dir(), "{table}: partition {p}");
        }
        let mut listed = 0;
        for (partition, files) in
            all.iter()
                .flat_map(|b| &b.records)
                .filter_map(|r| match &r.payload {
                    MetadataPayload::Files(f) => Some((&r.key, f)),
                    _ => None,
                })
        {
            for f in files.iter().filter(|f| !f.is_deleted) {
                let path = partition_dir(&root, partition).join(&f.name);
                let len = std::fs::metadata(&path).map(|m| m.len());
                assert_eq!(len.ok(), Some(f.size as u64), "{table}: {}", path.display());
                listed += 1;
            }
        }
        assert!(listed > 5, "{table}: {listed} files listed");
    }
}

#[test]
fn merged_files_listing_of_v9_mor_table() {
    let root = ts::table("sample_table/mor/avro/v9_txns_simple_meta");
    let mut listing: BTreeMap<String, Vec<FilesEntry>> = BTreeMap::new();
    for r in batches(&root).iter().flat_map(|b| b.records.clone()) {
        if let MetadataPayload::Files(files) = r.payload {
            let merged = merge_files(listing.remove(&r.key).unwrap_or_default(), &files);
            listing.insert(r.key, merged);
        }
    }
    assert_eq!(
        listing.keys().collect::<Vec<_>>(),
        ["region=apac", "region=eu", "region=us"]
    );
    let us: BTreeSet<_> = listing["region=us"]
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    // Every data file on disk is listed (MOR logs were compacted away on disk but stay listed
    // until a clean, which this table never ran).
    for f in std::fs::read_dir(root.join("region=us")).unwrap().flatten() {
        let name = f.file_name().to_string_lossy().into_owned();
        if name.ends_with(".parquet") {
            assert!(us.contains(name.as_str()), "{name} missing from {us:?}");
        }
    }
}

#[test]
fn record_index_points_at_existing_file_groups() {
    let mut checked = 0;
    for table in ts::MDT_TABLES {
        let root = ts::table(table);
        for r in batches(&root).iter().flat_map(|b| &b.records) {
            let MetadataPayload::RecordIndex(e) = &r.payload else {
                continue;
            };
            let dir = partition_dir(&root, &e.partition);
            let exists = std::fs::read_dir(&dir).unwrap().flatten().any(|f| {
                let name = f.file_name().to_string_lossy().into_owned();
                name.trim_start_matches('.')
                    .starts_with(&format!("{}_", e.file_id))
            });
            assert!(exists, "{table}: {} -> {e:?}", r.key);
            // Epoch milliseconds of a 2025/2026 instant.
            assert!(e
                .instant_time_ms
                .is_some_and(|t| (1_735_000_000_000..1_800_000_000_000).contains(&t)));
            if table.contains("sample_table") {
                assert!(r.key.starts_with("TXN-"), "{}", r.key);
            }
            checked += 1;
        }
    }
    assert!(checked > 30, "{checked}");
}

/// Column stats of the v9 table: the V2 encodings become typed values.
#[test]
fn v9_column_stats_values_are_typed() {
    let root = ts::table("sample_table/mor/avro/v9_txns_simple_meta");
    let mut min_date = i32::MAX;
    let mut by_column: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in batches(&root).iter().flat_map(|b| b.records.clone()) {
        let (MetadataPayload::ColumnStats(s) | MetadataPayload::PartitionStats(s)) = r.payload
        else {
            continue;
        };
        if let Some(v) = &s.min {
            let kind = format!("{v:?}");
            by_column
                .entry(s.column_name.clone())
                .or_default()
                .insert(kind.split(['(', ' ']).next().unwrap().into());
            match (s.column_name.as_str(), v) {
                (
                    "amount",
                    Value::Decimal {
                        precision, scale, ..
                    },
                ) => assert_eq!((*precision, *scale), (15, 2)),
                (
                    "fee_amount",
                    Value::Decimal {
                        precision, scale, ..
                    },
                ) => assert_eq!((*precision, *scale), (10, 2)),
                ("txn_date", Value::Date(d)) => min_date = min_date.min(*d),
                _ => {}
            }
        }
    }
    let kinds = |c: &str| by_column[c].iter().cloned().collect::<Vec<_>>().join(",");
    assert_eq!(kinds("amount"), "Decimal");
    assert_eq!(kinds("txn_date"), "Date");
    assert_eq!(kinds("txn_datetime"), "TimestampMicros");
    assert_eq!(kinds("txn_ts"), "Long");
    assert_eq!(kinds("is_international"), "Boolean");
    assert_eq!(kinds("merchant_name"), "String");
    assert_eq!(
        min_date, 19737,
        "DATE '2024-01-15' is the earliest txn_date"
    );
}

/// v8 (V1) stats carry plain wrappers and no valueType; merging a file's base and log stats
/// in order works for every key.
#[test]
fn v8_column_stats_merge_in_order() {
    let root = ts::table(ts::MDT_TABLES[0]);
    let mut merged: BTreeMap<String, ColumnStats> = BTreeMap::new();
    for r in batches(&root).iter().flat_map(|b| b.records.clone()) {
        if let MetadataPayload::ColumnStats(s) | MetadataPayload::PartitionStats(s) = r.payload {
            assert!(s.value_type.is_none());
            if s.column_name == "fare" {
                assert!(matches!(s.min, None | Some(Value::Double(_))), "{s:?}");
            }
            let next = match merged.get(&r.key) {
                Some(old) => merge_column_stats(old, &s).unwrap(),
                None => s,
            };
            merged.insert(r.key, next);
        }
    }
    assert!(merged.len() > 50);
}

#[test]
fn malformed_values_are_corrupt_errors() {
    let root = ts::table("sample_table/cow/v9_txns_simple_meta");
    let files = ts::mdt_hfiles(&root);
    let open = |i: usize| {
        let path = &files.iter().filter(|(p, _)| p == "files").nth(i).unwrap().1;
        let name = path.to_string_lossy().into_owned();
        let r = HFileReader::from_bytes(Bytes::from(std::fs::read(path).unwrap()), &name);
        let r = r.unwrap();
        let cells = block_on(r.scan_all()).unwrap();
        (
            RecordDecoder::for_hfile(&r).unwrap(),
            name,
            cells[0].value.to_vec(),
        )
    };
    let corrupt = |dec: &RecordDecoder, v: &[u8], needle: &str| match dec.decode("k", v) {
        Err(HudiError::Corrupt { path, reason, .. }) => {
            assert!(path.ends_with(".hfile"), "{path}");
            assert!(reason.contains(needle), "{reason}");
        }
        other => panic!("{other:?}"),
    };
    // The compacted HFile's first record lists files; cut it inside a name. (apache-avro
    // reads EOF at a union index as null, so a cut just before a trailing union decodes.)
    let (dec, _, value) = open(1);
    corrupt(&dec, &value[..value.len() / 2], "Avro");
    corrupt(&dec, &[value.clone(), vec![0]].concat(), "after the record");
    // The init HFile's only record: 5 null meta fields, empty key, zig-zag `type` 1 (0x02).
    let (dec, _, value) = open(0);
    assert_eq!(&value[..7], &[0, 0, 0, 0, 0, 0, 2]);
    let mut as_stats = value.clone();
    as_stats[6] = 6; // type 3 without ColumnStatsMetadata
    corrupt(&dec, &as_stats, "ColumnStatsMetadata is missing");
    let mut unknown = value;
    unknown[6] = 18; // type 9
    let e = dec.decode("k", &unknown).unwrap_err();
    assert!(
        matches!(e, HudiError::Unsupported { path: Some(_), .. }),
        "{e:?}"
    );
    let e = RecordDecoder::new("{not json", "x.hfile").unwrap_err();
    assert_eq!(e.object(), Some("x.hfile"));
}
