//! Behaviour tests on every log file of the real fixture tables (data table and metadata
//! table): framing, byte-exact rewriting, ranged reads, and agreement with the timeline.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray};
use bytes::Bytes;

use super::block::{BlockType, LogBlock};
use super::delete::encode_delete_block;
use super::reader::{read_log_file, read_log_file_with, LogReadOptions};
use super::test_util::{block_on, fixture_zips, is_log_file, load_table};
use super::writer::encode_block;
use crate::storage::memory::MemoryStorage;
use crate::storage::{Instrumented, Purpose, StorageExt};
use crate::timeline::metadata::{decode_instant_file, CommitMetadata};

fn log_paths(storage: &MemoryStorage) -> Vec<String> {
    storage
        .paths()
        .into_iter()
        .filter(|p| is_log_file(p))
        .collect()
}

fn bytes_of(storage: &MemoryStorage, path: &str) -> Bytes {
    block_on(storage.get(path, Purpose::LogBlock)).unwrap()
}

/// Records a data or delete block holds (HFile blocks too: every cell is a record).
fn records_in_block(storage: &MemoryStorage, block: &LogBlock) -> Option<usize> {
    if block.block_type != BlockType::HFileData {
        return record_count(storage, block);
    }
    let content = block.loaded_content().expect("small files are read whole");
    let hfile = crate::hfile::HFileReader::from_bytes(content.clone(), block.path()).unwrap();
    Some(block_on(hfile.scan_all()).unwrap().len())
}

/// Every log file of every fixture: parsed into the blocks Apache Hudi's own reader sees (type,
/// instant, record count — `tests/data/generated/hudi_log_blocks.json`, made by
/// `tests/spark/hudi_log_expected.sh` with Hudi 1.1.1's `HoodieLogFormat` reader), and
/// rewritten byte for byte.
#[test]
fn every_fixture_log_file_reads_as_hudi_reads_it_and_rewrites_byte_for_byte() {
    let expected: serde_json::Value = serde_json::from_str(include_str!(
        "../../tests/data/generated/hudi_log_blocks.json"
    ))
    .unwrap();
    let mut zips = 0;
    for (name, zip) in fixture_zips() {
        let storage = load_table(&zip);
        let mut ours = serde_json::Map::new();
        for path in log_paths(&storage) {
            let original = bytes_of(&storage, &path);
            let file =
                block_on(read_log_file(&storage, &path, Some(original.len() as u64))).unwrap();
            let mut rewritten = Vec::new();
            let mut blocks = Vec::new();
            for b in &file.blocks {
                let content = b.loaded_content().expect("small files are read whole");
                let mut block = serde_json::json!({
                    "type": b.block_type.java_name(),
                    "instant": b.instant_time(),
                });
                if let Some(n) = records_in_block(&storage, b) {
                    block["records"] = n.into();
                }
                blocks.push(block);
                if !b.is_corrupt() {
                    rewritten
                        .extend(encode_block(b.block_type, &b.header, content, &b.footer).unwrap());
                }
            }
            assert_eq!(file.corrupt_block_count(), 0, "{name}: {path}");
            assert_eq!(rewritten, original, "{name}: {path} is not reproduced");
            ours.insert(path, blocks.into());
        }
        let want = expected
            .get(&name)
            .unwrap_or_else(|| panic!("{name}: not in hudi_log_blocks.json (regenerate it)"));
        for (path, blocks) in want.as_object().unwrap() {
            assert_eq!(
                ours.get(path),
                Some(blocks),
                "{name}: {path} (Hudi's blocks)"
            );
        }
        assert_eq!(
            ours.len(),
            want.as_object().unwrap().len(),
            "{name}: log files"
        );
        zips += 1;
    }
    assert_eq!(zips, expected.as_object().unwrap().len(), "fixture zips");
}

/// The same blocks come out of ranged reads with contents left in storage.
#[test]
fn ranged_walk_matches_the_whole_file_read() {
    let tiny = LogReadOptions {
        whole_file_threshold: 0,
        read_ahead: 100,
        ..Default::default()
    };
    for (name, zip) in fixture_zips()
        .into_iter()
        .filter(|(n, _)| n.contains("v9_txns_simple_meta"))
    {
        let memory = Arc::new(load_table(&zip));
        let storage = Instrumented::new(memory.clone());
        for path in log_paths(&memory) {
            let whole = block_on(read_log_file(memory.as_ref(), &path, None)).unwrap();
            let before = storage.stats().snapshot();
            let ranged = block_on(read_log_file_with(&storage, &path, None, tiny)).unwrap();
            let cost = storage.stats().snapshot().since(&before);
            assert!(
                cost.requests >= 2,
                "{name}: {path} needs a head and ranged reads"
            );
            assert_eq!(whole.blocks.len(), ranged.blocks.len());
            for (a, b) in whole.blocks.iter().zip(&ranged.blocks) {
                assert_eq!(
                    (a.block_type, a.offset, a.len),
                    (b.block_type, b.offset, b.len)
                );
                assert_eq!((&a.header, &a.footer), (&b.header, &b.footer));
                let lazy = block_on(b.content(&storage)).unwrap();
                assert_eq!(a.loaded_content().unwrap(), &lazy, "{path}");
            }
        }
    }
}

#[test]
fn small_files_cost_one_request() {
    let (_, zip) = fixture_zips()
        .into_iter()
        .find(|(n, _)| n.ends_with("v6_trips_8i1u.zip"))
        .unwrap();
    let memory = Arc::new(load_table(&zip));
    let storage = Instrumented::new(memory.clone());
    for path in log_paths(&memory) {
        for size in [None, Some(bytes_of(&memory, &path).len() as u64)] {
            let before = storage.stats().snapshot();
            let file = block_on(read_log_file(&storage, &path, size)).unwrap();
            assert_eq!(storage.stats().snapshot().since(&before).requests, 1);
            assert!(file.blocks.iter().all(|b| b.loaded_content().is_some()));
        }
    }
}

/// Completed write instants of the table at `base` ("" or ".hoodie/metadata/").
fn completed_commits(storage: &MemoryStorage, base: &str) -> Vec<(String, CommitMetadata)> {
    let timeline = format!("{base}.hoodie/");
    let mut out = Vec::new();
    for path in storage.paths() {
        let Some(rest) = path.strip_prefix(&timeline) else {
            continue;
        };
        let name = rest.strip_prefix("timeline/").unwrap_or(rest);
        let Some((stem, action)) = name.split_once('.') else {
            continue;
        };
        let instant = stem.split('_').next().unwrap_or(stem);
        let is_instant =
            !instant.is_empty() && stem.bytes().all(|b| b.is_ascii_digit() || b == b'_');
        if !is_instant || !matches!(action, "deltacommit" | "commit" | "replacecommit") {
            continue;
        }
        let json = decode_instant_file(&bytes_of(storage, &path), &path).unwrap();
        out.push((
            instant.to_string(),
            CommitMetadata::from_json(json, &path).unwrap(),
        ));
    }
    out
}

/// Records a block holds: rows for data blocks, keys for delete blocks; `None` for HFile.
fn record_count(storage: &MemoryStorage, block: &LogBlock) -> Option<usize> {
    block_on(async {
        match block.block_type {
            BlockType::AvroData => Some(block.avro_batch(storage, None).await.unwrap().num_rows()),
            BlockType::ParquetData => {
                let batches = block.parquet_batches(storage).await.unwrap();
                Some(batches.iter().map(RecordBatch::num_rows).sum())
            }
            BlockType::Delete => Some(block.delete_records(storage).await.unwrap().len()),
            _ => None,
        }
    })
}

fn strings(batch: &RecordBatch, column: &str) -> Vec<Option<String>> {
    let col = batch.column_by_name(column).unwrap();
    let col = col.as_any().downcast_ref::<StringArray>().unwrap();
    (0..col.len())
        .map(|i| col.is_valid(i).then(|| col.value(i).to_string()))
        .collect()
}

/// Each write stat naming a log file points at a block of that commit holding the records
/// the stat counts; data records carry the commit time.
#[test]
fn log_blocks_agree_with_commit_metadata() {
    let (mut checked, mut init_logs) = (0, 0);
    for (name, zip) in fixture_zips() {
        let storage = load_table(&zip);
        let mut seen = std::collections::HashSet::new();
        for base in ["", ".hoodie/metadata/"] {
            for (instant, meta) in completed_commits(&storage, base) {
                for (_, stat) in meta.write_stats() {
                    let Some(rel) = stat.path.as_deref().filter(|p| is_log_file(p)) else {
                        continue;
                    };
                    let path = format!("{base}{rel}");
                    let file = block_on(read_log_file(&storage, &path, None)).unwrap();
                    let offset = stat.log_offset.unwrap_or(0) as u64;
                    let blocks: Vec<&LogBlock> = file
                        .blocks
                        .iter()
                        .filter(|b| b.offset >= offset && b.instant_time() == Some(&instant))
                        .collect();
                    assert!(
                        !blocks.is_empty(),
                        "{name}: no block of {instant} in {path}"
                    );
                    assert_eq!(blocks[0].offset, offset, "{name}: {path}");
                    let (mut writes, mut deletes) = (0, 0);
                    for b in &blocks {
                        let Some(n) = record_count(&storage, b) else {
                            continue;
                        };
                        match b.block_type {
                            BlockType::Delete => deletes += n as i64,
                            _ => writes += n as i64,
                        }
                        if b.block_type == BlockType::AvroData && base.is_empty() {
                            let batch = block_on(b.avro_batch(&storage, None)).unwrap();
                            let times = strings(&batch, "_hoodie_commit_time");
                            assert!(times.iter().all(|t| t.as_deref() == Some(&instant)));
                            assert!(strings(&batch, "_hoodie_record_key")
                                .iter()
                                .all(Option::is_some));
                        }
                    }
                    // HFile records are counted by the HFile reader's tests.
                    if blocks.iter().all(|b| b.block_type != BlockType::HFileData) {
                        assert_eq!(writes, stat.num_writes.unwrap_or(0), "{name}: {path}");
                    }
                    assert_eq!(deletes, stat.num_deletes.unwrap_or(0), "{name}: {path}");
                    checked += 1;
                    seen.insert(path);
                }
            }
        }
        for path in log_paths(&storage)
            .into_iter()
            .filter(|p| !seen.contains(p))
        {
            check_mdt_init_log(&storage, &path);
            init_logs += 1;
        }
    }
    assert_eq!((checked, init_logs), (562, 290));
}

/// MDT partitions are initialized outside any delta commit, with an empty delete block per
/// file group at instant `00000000000000000` (+ partition offset) or, for indexes built later,
/// at the `indexing` instant.
fn check_mdt_init_log(storage: &MemoryStorage, path: &str) {
    let name = path.rsplit('/').next().unwrap();
    let instant = name.split('_').nth(1).unwrap().split('.').next().unwrap();
    assert!(path.starts_with(".hoodie/metadata/"), "{path}");
    let file = block_on(read_log_file(storage, path, None)).unwrap();
    assert_eq!(file.blocks.len(), 1, "{path}");
    let b = &file.blocks[0];
    assert_eq!(
        (b.block_type, b.instant_time(), b.schema()),
        (BlockType::Delete, Some(instant), None)
    );
    assert!(block_on(b.delete_records(storage)).unwrap().is_empty());
}

#[test]
fn data_table_deletes_are_keys_with_natural_ordering() {
    let mut keys = Vec::new();
    for (name, zip) in fixture_zips() {
        let storage = load_table(&zip);
        for path in log_paths(&storage) {
            let file = block_on(read_log_file(&storage, &path, None)).unwrap();
            for b in file.of_type(BlockType::Delete) {
                let records = block_on(b.delete_records(&storage)).unwrap();
                let content = b.loaded_content().unwrap();
                assert_eq!(&encode_delete_block(&records)[..], &content[..], "{path}");
                assert!(
                    records.iter().all(|r| r.ordering.is_natural_order()),
                    "{path}"
                );
                if name.ends_with("sample_table/mor/avro/v9_txns_simple_meta.zip")
                    && !path.starts_with(".hoodie/")
                {
                    keys.extend(
                        records
                            .into_iter()
                            .map(|r| (r.record_key.unwrap(), r.partition_path.unwrap())),
                    );
                }
            }
        }
    }
    keys.sort();
    assert!(!keys.is_empty());
    assert!(keys
        .iter()
        .all(|(k, p)| k.starts_with("TXN-") && p.starts_with("region=")));
    assert!(keys.contains(&("TXN-002".to_string(), "region=us".to_string())));
}

#[test]
fn metadata_table_logs_hold_hfile_and_schema_less_delete_blocks() {
    let (_, zip) = fixture_zips()
        .into_iter()
        .find(|(n, _)| n.ends_with("sample_table/mor/avro/v9_txns_simple_meta.zip"))
        .unwrap();
    let storage = load_table(&zip);
    let mut hfile = 0;
    for path in log_paths(&storage)
        .iter()
        .filter(|p| p.starts_with(".hoodie/metadata/"))
    {
        let file = block_on(read_log_file(&storage, path, None)).unwrap();
        for b in &file.blocks {
            match b.block_type {
                BlockType::HFileData => {
                    assert!(b.loaded_content().unwrap().starts_with(b"DATABLK*"));
                    hfile += 1;
                }
                BlockType::Delete => {
                    if b.schema().is_none() {
                        let recs = block_on(b.delete_records(&storage)).unwrap();
                        assert!(recs.iter().all(|r| r.ordering.is_natural_order()));
                    }
                }
                t => panic!("unexpected {t:?} block in {path}"),
            }
        }
    }
    assert!(hfile > 0);
}

/// A decoded cell in the oracle's JSON encoding (fixtures README "Value encoding").
fn oracle_value(col: &dyn Array, i: usize) -> serde_json::Value {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, Int32Type, Int64Type, TimestampMicrosecondType};
    use arrow_schema::DataType as D;
    if col.is_null(i) {
        return serde_json::Value::Null;
    }
    match col.data_type() {
        D::Utf8 => col.as_string::<i32>().value(i).into(),
        D::Boolean => col.as_boolean().value(i).into(),
        D::Int32 => col.as_primitive::<Int32Type>().value(i).into(),
        D::Int64 => col.as_primitive::<Int64Type>().value(i).into(),
        D::Float64 => col.as_primitive::<Float64Type>().value(i).into(),
        D::Timestamp(_, tz) => {
            let v = col.as_primitive::<TimestampMicrosecondType>().value(i);
            let t = chrono::DateTime::from_timestamp_micros(v).unwrap();
            let z = if tz.is_some() { "Z" } else { "" };
            format!("{}{z}", t.format("%Y-%m-%dT%H:%M:%S%.6f")).into()
        }
        _ => arrow_cast::display::array_value_to_string(col, i)
            .unwrap()
            .into(),
    }
}

/// Rows of each data-table Avro block equal the oracle's rows for the same key and commit
/// in the time-travel snapshot as of the block's instant (decimals, dates, timestamps …).
#[test]
fn avro_block_rows_match_the_oracle() {
    let expected_root = super::test_util::fixtures_root().join("../expected");
    let (mut matched, mut compared) = (0, 0);
    for (name, zip) in fixture_zips() {
        let Ok(text) = std::fs::read_to_string(expected_root.join(name.replace(".zip", ".json")))
        else {
            continue;
        };
        let oracle: serde_json::Value = serde_json::from_str(&text).unwrap();
        let storage = load_table(&zip);
        for path in log_paths(&storage)
            .iter()
            .filter(|p| !p.starts_with(".hoodie/"))
        {
            let file = block_on(read_log_file(&storage, path, None)).unwrap();
            for b in file.of_type(BlockType::AvroData) {
                let instant = b.instant_time().unwrap();
                let Some(rows) = oracle["time_travel"]
                    .as_array()
                    .and_then(|tt| tt.iter().find(|t| t["as_of"] == instant))
                    .and_then(|t| t["rows"].as_array())
                else {
                    continue;
                };
                let batch = block_on(b.avro_batch(&storage, None)).unwrap();
                let keys = strings(&batch, "_hoodie_record_key");
                compared += keys.len();
                for (i, key) in keys.iter().enumerate() {
                    let Some(want) = rows.iter().find(|r| {
                        r["_hoodie_record_key"].as_str() == key.as_deref()
                            && r["_hoodie_commit_time"] == instant
                    }) else {
                        continue;
                    };
                    for (f, col) in batch.schema().fields().iter().zip(batch.columns()) {
                        assert_eq!(
                            oracle_value(col.as_ref(), i),
                            want[f.name()],
                            "{name}: {path} row {i} column {}",
                            f.name()
                        );
                    }
                    matched += 1;
                }
            }
        }
    }
    assert_eq!(matched, compared, "rows without an oracle row");
    assert!(matched >= 19, "only {matched} rows compared");
}
