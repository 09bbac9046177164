//! The metadata-table file cache shared across table handles ([`MdtFileCache`]): a second
//! open + upsert of an unchanged table reads the record index, files and stats partitions
//! from the cache instead of storage, and after another writer's commits (new MDT log files,
//! then an MDT compaction with new base files) the cached writer still tags exactly: a key
//! the other writer inserted is an update, never a second insert, and every reader (this
//! engine with and without the cache, hudi-rs) returns the model's rows.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use helpers::*;
use hudi_edge::expr::parse_filter;
use hudi_edge::read::ReadOptions;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::storage::mdt_cache::MdtFileCache;
use hudi_edge::storage::{IoSnapshot, Purpose};
use hudi_edge::write::{Operation, WriteOptions, WriteResult};
use hudi_edge::Table;
use serde_json::{Map, Value};

const FIXTURE: &str = "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle";

/// Metadata-table requests (HFile index and data blocks, log files) of an operation.
fn mdt_requests(io: &IoSnapshot) -> u64 {
    [Purpose::MdtIndexBlock, Purpose::MdtDataBlock]
        .iter()
        .filter_map(|p| io.by_purpose.get(p))
        .map(|p| p.requests)
        .sum()
}

async fn open_cached(dir: &Path, cache: &Arc<MdtFileCache>) -> Table {
    Table::open_with_cache(Arc::new(LocalStorage::new(dir)), Some(cache.clone()))
        .await
        .expect("open")
}

/// An upsert through a handle opened with `cache` (None: a writer without it), with
/// `max_delta` delta commits before the metadata table compacts.
async fn upsert(
    dir: &Path,
    cache: Option<&Arc<MdtFileCache>>,
    rows: &[Map<String, Value>],
    max_delta: usize,
) -> (WriteResult, IoSnapshot) {
    upsert_with(dir, cache, rows, &[(MAX_DELTA, &max_delta.to_string())]).await
}

const MAX_DELTA: &str = "hoodie.metadata.compact.max.delta.commits";

async fn upsert_with(
    dir: &Path,
    cache: Option<&Arc<MdtFileCache>>,
    rows: &[Map<String, Value>],
    configs: &[(&str, &str)],
) -> (WriteResult, IoSnapshot) {
    let table = match cache {
        Some(c) => open_cached(dir, c).await,
        None => open(dir).await,
    };
    let batches = decode_input(&table, rows).await;
    let mut options = WriteOptions::new(Operation::Upsert);
    for (k, v) in configs {
        options.options.insert(k.to_string(), v.to_string());
    }
    let result = table.write(&batches, &options).await.expect("write");
    (result, table.io())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_cache_saves_mdt_reads_and_stays_exact_across_writers() {
    let dir = common::table_copy(FIXTURE, "mdt_cache", "mor");
    let table = open(&dir).await;
    let fields = table.config().record_key_fields.clone();
    let rows = input_rows(&dir).await;
    let edit = editable(&table, &rows[0]).await.expect("a column to edit");
    drop(table);
    // A key occurring twice in the fixture stays as it is (two rows).
    let twice: Vec<String> = {
        let mut seen = BTreeMap::<String, usize>::new();
        rows.iter()
            .for_each(|r| *seen.entry(key_of(&fields, r)).or_default() += 1);
        seen.into_iter()
            .filter(|(_, n)| *n > 1)
            .map(|(k, _)| k)
            .collect()
    };
    let single: Vec<Map<String, Value>> = rows
        .iter()
        .filter(|r| !twice.contains(&key_of(&fields, r)))
        .cloned()
        .collect();
    let mut model: BTreeMap<String, Map<String, Value>> = single
        .iter()
        .map(|r| (key_of(&fields, r), r.clone()))
        .collect();
    let mut edited = |mut r: Map<String, Value>, tag: &str| {
        r.insert(edit.clone(), Value::from(tag.to_string()));
        model.insert(key_of(&fields, &r), r.clone());
        r
    };
    let new_key = |i: i64| {
        let mut n = single[0].clone();
        for f in &fields {
            let v = match n.get(f) {
                Some(Value::Number(_)) => Value::from(900_000 + i),
                _ => Value::from(format!("CACHE-{i:03}")),
            };
            n.insert(f.clone(), v);
        }
        n
    };
    let cache = Arc::new(MdtFileCache::new(
        hudi_edge::storage::mdt_cache::DEFAULT_MDT_CACHE_BYTES,
    ));

    // 1. Cold: every MDT file read comes from storage (and is kept).
    let b1 = vec![edited(single[0].clone(), "c1"), edited(new_key(1), "c1")];
    let (r1, io1) = upsert(&dir, Some(&cache), &b1, 1000).await;
    assert_eq!((r1.records.updated, r1.records.inserted), (1, 1));
    let cold = mdt_requests(&io1);
    assert!(cold >= 10, "{io1:?}");
    assert!(cache.stats().bytes > 0, "{:?}", cache.stats());

    // 2. Warm, on the table as this cache last saw it plus its own delta commit: only
    // the files that commit added (local listings carry no ETag to match a put's) and
    // blocks for keys not asked before are fetched.
    let b2 = vec![edited(single[1].clone(), "c2"), edited(new_key(2), "c2")];
    let (r2, io2) = upsert(&dir, Some(&cache), &b2, 1000).await;
    assert_eq!((r2.records.updated, r2.records.inserted), (1, 1));
    let warm = mdt_requests(&io2);
    eprintln!(
        "MDT requests: cold {cold}, warm {warm}; cache {:?}",
        cache.stats()
    );
    assert!(warm * 2 <= cold, "warm {warm} vs cold {cold}");
    // The same write without the cache, for comparison, on a copy in the same state.
    let plain = dir.with_file_name("mor_plain");
    let _ = std::fs::remove_dir_all(&plain);
    common::copy_dir(&dir, &plain);
    let b2b = vec![single[2].clone(), new_key(50)];
    let (_, io_plain) = upsert(&plain, None, &b2b, 1000).await;
    let uncached = mdt_requests(&io_plain);
    eprintln!("the next write without a cache: {uncached} MDT requests");
    assert!(warm * 2 <= uncached, "warm {warm} vs uncached {uncached}");
    let _ = std::fs::remove_dir_all(&plain);

    // 3. Another writer (no cache) inserts a key; the cached writer then upserts it: an
    // update, found through the other writer's new record-index log files.
    let b3 = vec![edited(new_key(3), "other")];
    let (r3, _) = upsert(&dir, None, &b3, 1000).await;
    assert_eq!(r3.records.inserted, 1);
    let b4 = vec![edited(new_key(3), "c4"), edited(new_key(1), "c4")];
    let (r4, _) = upsert(&dir, Some(&cache), &b4, 1000).await;
    assert_eq!(
        (r4.records.updated, r4.records.inserted),
        (2, 0),
        "keys written by another writer and by this one are updates"
    );

    // 4. Another writer compacts the metadata table (new base files for every file group,
    // in 4 KiB blocks — `hoodie.hfile.block.size`; the slices the cache holds are no longer
    // the latest), inserting a key; the cached writer upserts it.
    let b5 = vec![edited(new_key(5), "compacting")];
    let small_blocks = [(MAX_DELTA, "1"), ("hoodie.hfile.block.size", "4096")];
    let (r5, _) = upsert_with(&dir, None, &b5, &small_blocks).await;
    let compaction = r5.metadata_table.compaction.as_ref().expect("compacted");
    let most_blocks = compaction
        .files_written
        .iter()
        .map(|f| {
            let bytes = std::fs::read(dir.join(f)).unwrap();
            let r = hudi_edge::hfile::HFileReader::from_bytes(bytes.into(), f).unwrap();
            r.data_index_len()
        })
        .max()
        .unwrap();
    assert!(most_blocks > 1, "{most_blocks} blocks");
    let b6 = vec![
        edited(new_key(5), "c6"),
        edited(new_key(2), "c6"),
        edited(new_key(6), "c6"),
    ];
    let (r6, _) = upsert(&dir, Some(&cache), &b6, 1000).await;
    assert_eq!((r6.records.updated, r6.records.inserted), (2, 1));

    // A block size out of range is refused before anything is written.
    let table = open(&dir).await;
    let batches = decode_input(&table, &b6).await;
    let mut bad = WriteOptions::new(Operation::Upsert);
    bad.options
        .insert("hoodie.hfile.block.size".into(), "12".into());
    let err = table.write(&batches, &bad).await.unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT", "{err}");
    assert_eq!(table.io().puts, 0);

    // Readers agree with the model: this engine without and with the cache, and hudi-rs.
    let mut expected: Vec<Map<String, Value>> = model.values().cloned().collect();
    expected.extend(
        rows.iter()
            .filter(|r| twice.contains(&key_of(&fields, r)))
            .cloned(),
    );
    let ours = our_rows(&dir, ReadOptions::default()).await;
    same_rows(
        &data_only(&ours),
        &data_only(&model_rows(&dir, &expected).await),
        "snapshot after cached and uncached writes",
    );
    let cached = open_cached(&dir, &cache).await;
    let read = cached.read(&ReadOptions::default()).await.expect("read");
    let mut cached_rows: Vec<String> = read
        .batches
        .iter()
        .flat_map(|b| {
            hudi_edge::api::output::rows_as_json_with(b, hudi_edge::api::output::JsonStyle::ORACLE)
        })
        .map(|m| sorted_json(&Value::Object(m)))
        .collect();
    cached_rows.sort();
    same_rows(&cached_rows, &ours, "a read through the cache");
    same_rows(&hudi_rs_rows(&dir, &[]), &ours, "hudi-rs");
    // A one-key read through the record index, on a warm cache, finds the key's one row.
    let field = &fields[0];
    let probe = &new_key(5)[field];
    let literal = match probe {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    };
    let table = open_cached(&dir, &cache).await;
    let options = ReadOptions {
        filters: vec![parse_filter(&format!("{field} = {literal}")).unwrap()],
        ..ReadOptions::default()
    };
    let found = table.read(&options).await.expect("read");
    assert_eq!(found.batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
