//! Metadata tables this engine builds: tables `create` makes get one (Spark 1.1's
//! partitions, or the ones asked for), `index` builds missing partitions on a table that
//! was written without them, and a crash at any request of that build leaves a table
//! every reader reads as before, finished by the next attempt. Each table is read back
//! against hudi-rs, and planned from its metadata table: a key lookup through the record
//! index to one slice, a range filter pruned by the statistics.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use helpers::*;
use hudi_edge::config::TableType;
use hudi_edge::expr::parse_filter;
use hudi_edge::read::ReadOptions;
use hudi_edge::storage::crash::CrashAfter;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::write::create::NewTable;
use hudi_edge::write::Operation;
use hudi_edge::Table;
use serde_json::{json, Map, Value};

fn dir_for(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("mdt_init")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn new_table(table_type: TableType, keys: &[&str], partitioned: bool) -> NewTable {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    NewTable {
        name: "events".into(),
        table_type,
        schema: hudi_edge::schema::to_avro::schema_from_ddl(
            "id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE",
        )
        .unwrap(),
        record_key_fields: strings(keys),
        partition_fields: if partitioned {
            strings(&["region"])
        } else {
            Vec::new()
        },
        ordering_fields: strings(&["ts"]),
        options: BTreeMap::new(),
    }
}

fn rows(ids: std::ops::Range<usize>, ts: i64) -> Vec<Map<String, Value>> {
    ids.map(|i| {
        let region = ["us", "eu", "ap"][i % 3];
        json!({"id": format!("K{i:03}"), "ts": ts + i as i64, "region": region, "v": i as f64 * 0.5})
            .as_object()
            .unwrap()
            .clone()
    })
    .collect()
}

/// Three writes: inserts, an upsert of updates and new keys (in new file groups: small-file
/// handling off, so that statistics have files to tell apart), a delete.
async fn three_writes(dir: &Path) {
    write(dir, &rows(0..30, 100), Operation::Insert).await;
    let table = open(dir).await;
    let batches = decode_input(&table, &rows(20..45, 1_000)).await;
    let mut upsert = hudi_edge::write::WriteOptions::new(Operation::Upsert);
    upsert
        .options
        .insert("hoodie.parquet.small.file.limit".into(), "0".into());
    table.write(&batches, &upsert).await.expect("upsert");
    write(dir, &rows(5..8, 2_000), Operation::Delete).await;
}

fn partitions_of(table: &Table) -> Vec<String> {
    let mut p = table.config().metadata_partitions.clone();
    p.sort();
    p
}

/// The table reads as hudi-rs reads it, from the metadata table as from a listing.
async fn reads_agree(dir: &Path, what: &str) {
    let ours = our_rows(dir, ReadOptions::default()).await;
    let listed = our_rows(
        dir,
        ReadOptions {
            use_metadata_table: false,
            ..ReadOptions::default()
        },
    )
    .await;
    assert_eq!(ours, listed, "{what}: metadata table vs listing");
    same_rows(&ours, &hudi_rs_rows(dir, &[]), what);
}

/// A key lookup plans through the record index to one slice, and a range on `ts` (which
/// grows with each write) prunes by the statistics.
async fn plans_from_the_metadata_table(dir: &Path, what: &str, record_index: bool) {
    let table = open(dir).await;
    // Every key field pinned (K033 is in region `us`).
    let mut filters = vec![parse_filter("id = K033").unwrap()];
    if table.config().record_key_fields.len() > 1 {
        filters.push(parse_filter("region = us").unwrap());
    }
    let lookup = ReadOptions {
        filters,
        ..ReadOptions::default()
    };
    let plan = table.plan(&lookup).await.expect("plan");
    assert_eq!(plan.stats.planning_source, "metadata_table", "{what}");
    // The planner's record-index lookup takes a single key field's equality.
    if record_index && table.config().record_key_fields.len() == 1 {
        assert_eq!(plan.file_slices.len(), 1, "{what}: {:?}", plan.stats);
        assert!(
            plan.stats
                .planning_notes
                .iter()
                .any(|n| n.starts_with("record_index")),
            "{what}: {:?}",
            plan.stats.planning_notes
        );
    }
    // Keys 0..20 keep their first `ts` (100..), less keys 5..8 deleted; the upsert's new
    // keys went to new file groups on Merge-On-Read (Copy-On-Write packs them into the
    // small files it has, so only its row count is checked).
    let found = table.read(&lookup).await.expect("read");
    assert_eq!(found.num_rows(), 1, "{what}: the key looked up");
    let range = ReadOptions {
        filters: vec![parse_filter("ts < 500").unwrap()],
        ..ReadOptions::default()
    };
    let plan = table.plan(&range).await.expect("plan");
    if table.config().is_mor() {
        assert!(
            plan.stats
                .files_after_column_stats
                .is_some_and(|n| n < plan.stats.files_total),
            "{what}: statistics pruned nothing: {:?}",
            plan.stats
        );
    }
    let read = table.read(&range).await.expect("read");
    assert_eq!(read.num_rows(), 17, "{what}: rows with ts < 500");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_tables_keep_a_metadata_table() {
    for (table_type, keys, partitioned, record_index) in [
        (TableType::MergeOnRead, &["id"][..], true, true),
        (TableType::CopyOnWrite, &["id"][..], true, false),
        (TableType::MergeOnRead, &["id", "region"][..], false, false),
        (TableType::CopyOnWrite, &["id", "region"][..], false, true),
    ] {
        let what = format!("{table_type:?} keys {keys:?} partitioned {partitioned}");
        let dir = dir_for(&format!(
            "created_{}_{}_{partitioned}",
            table_type.as_str(),
            keys.len()
        ));
        let mut new = new_table(table_type, keys, partitioned);
        if record_index {
            new.options
                .insert("hoodie.metadata.record.index.enable".into(), "true".into());
        }
        let table = Table::create(Arc::new(LocalStorage::new(&dir)), &new)
            .await
            .expect("create");
        let mut expected = vec!["column_stats", "files"];
        if partitioned {
            expected.push("partition_stats");
        }
        if record_index {
            expected.push("record_index");
        }
        expected.sort();
        assert_eq!(partitions_of(&table), expected, "{what}");
        three_writes(&dir).await;
        reads_agree(&dir, &what).await;
        plans_from_the_metadata_table(&dir, &what, record_index).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_without_a_metadata_table_when_asked() {
    let dir = dir_for("created_without");
    let mut new = new_table(TableType::MergeOnRead, &["id"], true);
    new.options
        .insert("hoodie.metadata.enable".into(), "false".into());
    let table = Table::create(Arc::new(LocalStorage::new(&dir)), &new)
        .await
        .expect("create");
    assert!(table.config().metadata_partitions.is_empty());
    assert!(!dir.join(".hoodie/metadata").exists());
    let mut bad = new_table(TableType::MergeOnRead, &["id"], true);
    bad.options.insert(
        "hoodie.metadata.index.bloom.filter.enable".into(),
        "true".into(),
    );
    let err = Table::create(Arc::new(LocalStorage::new(dir_for("bloom"))), &bad)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "UNSUPPORTED", "{err}");
}

/// A table written without a metadata table (log files included) gets one from `index`,
/// and a write that asks for the record index adds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_builds_what_a_table_lacks() {
    let dir = dir_for("indexed_later");
    let mut new = new_table(TableType::MergeOnRead, &["id"], true);
    new.options
        .insert("hoodie.metadata.enable".into(), "false".into());
    Table::create(Arc::new(LocalStorage::new(&dir)), &new)
        .await
        .expect("create");
    three_writes(&dir).await;
    let before = our_rows(&dir, ReadOptions::default()).await;
    let built = open(&dir)
        .await
        .index(&[], &BTreeMap::new())
        .await
        .expect("index")
        .expect("partitions built");
    let names: Vec<&str> = built
        .partitions
        .iter()
        .map(|p| p.partition.as_str())
        .collect();
    assert_eq!(names, ["files", "column_stats", "partition_stats"]);
    let instants: Vec<&str> = built
        .partitions
        .iter()
        .map(|p| p.instant.as_str())
        .collect();
    assert_eq!(
        instants,
        [
            "00000000000000000",
            "00000000000000001",
            "00000000000000002"
        ]
    );
    assert_eq!(our_rows(&dir, ReadOptions::default()).await, before);
    reads_agree(&dir, "indexed").await;
    plans_from_the_metadata_table(&dir, "indexed", false).await;
    // Nothing more to build.
    assert!(open(&dir)
        .await
        .index(&[], &BTreeMap::new())
        .await
        .unwrap()
        .is_none());

    // A write asking for the record index builds it first, then keeps it.
    let table = open(&dir).await;
    let batches = decode_input(&table, &rows(40..50, 3_000)).await;
    let mut options = hudi_edge::write::WriteOptions::new(Operation::Upsert);
    options
        .options
        .insert("hoodie.metadata.record.index.enable".into(), "true".into());
    let result = table.write(&batches, &options).await.expect("write");
    let init = result
        .metadata_table
        .initialized
        .expect("record index built");
    assert_eq!(init.partitions[0].partition, "record_index");
    assert_eq!(init.partitions[0].file_groups, 10);
    assert_eq!(init.partitions[0].records, 42, "live keys before the write");
    assert!(result
        .metadata_table
        .partitions
        .contains(&"record_index".to_string()));
    // Both indexes are defined as Java defines them, the statistics' columns first.
    let defs: Value =
        serde_json::from_slice(&std::fs::read(dir.join(".hoodie/.index_defs/index.json")).unwrap())
            .unwrap();
    assert_eq!(
        defs["indexDefinitions"]["column_stats"]["sourceFields"],
        json!([
            "_hoodie_commit_time",
            "_hoodie_partition_path",
            "_hoodie_record_key",
            "id",
            "ts",
            "region",
            "v"
        ])
    );
    assert_eq!(defs["indexDefinitions"]["record_index"]["version"], "V1");
    reads_agree(&dir, "record index added").await;
    plans_from_the_metadata_table(&dir, "record index added", true).await;
}

/// A writer that opens a table whose creator is still building its metadata table waits
/// for it, then keeps it in step (a first write past it would leave the metadata table
/// behind the data).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_write_waits_for_the_creator() {
    let dir = dir_for("racing_creator");
    let new = new_table(TableType::MergeOnRead, &["id"], true);
    // The creator's first request: the properties, its partitions listed as being built.
    hudi_edge::write::create::create_table(&LocalStorage::new(&dir), &new)
        .await
        .expect("properties");
    let table = open(&dir).await;
    assert_eq!(table.config().metadata_partitions_inflight.len(), 3);
    let finished = std::sync::atomic::AtomicBool::new(false);
    let writer = async {
        let r = write(&dir, &rows(0..12, 100), Operation::Insert).await;
        finished.store(true, std::sync::atomic::Ordering::SeqCst);
        r
    };
    let creator = async {
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        let waited = !finished.load(std::sync::atomic::Ordering::SeqCst);
        // The creator finishes its build.
        open(&dir)
            .await
            .index(&[], &BTreeMap::new())
            .await
            .expect("build");
        waited
    };
    let (result, waited) = futures::join!(writer, creator);
    assert!(waited, "the writer waits for the creator");
    assert_eq!(result.records.inserted, 12);
    assert!(result
        .metadata_table
        .partitions
        .contains(&"files".to_string()));
    reads_agree(&dir, "written after the creator's build").await;
}

/// With several writers configured, the build holds Hudi's storage lock, as Java's does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_optimistic_concurrency_the_build_holds_the_lock() {
    let dir = dir_for("locked");
    let mut new = new_table(TableType::CopyOnWrite, &["id"], true);
    new.options
        .insert("hoodie.metadata.enable".into(), "false".into());
    Table::create(Arc::new(LocalStorage::new(&dir)), &new)
        .await
        .expect("create");
    write(&dir, &rows(0..12, 100), Operation::Insert).await;
    let lock = dir.join(".hoodie/.locks/table_lock.json");
    assert!(!lock.exists());
    let options: BTreeMap<String, String> = [
        (
            hudi_edge::write::lock::CONCURRENCY_MODE,
            "optimistic_concurrency_control",
        ),
        (
            hudi_edge::write::lock::LOCK_PROVIDER,
            hudi_edge::write::lock::STORAGE_LOCK_PROVIDER,
        ),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let built = open(&dir).await.index(&[], &options).await.expect("index");
    assert_eq!(built.expect("built").partitions.len(), 3);
    let held = std::fs::read_to_string(&lock).expect("the lock was taken");
    assert!(held.contains("\"expired\":true"), "and released: {held}");
    reads_agree(&dir, "built under the lock").await;
}

/// The build dies at its k-th request that changes storage, for every k: readers read the
/// table as before (the partitions count only once the properties list them), and the
/// next `index` builds them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_build_is_invisible_and_redone() {
    let seed = dir_for("crash_seed");
    let mut new = new_table(TableType::MergeOnRead, &["id"], true);
    new.options
        .insert("hoodie.metadata.enable".into(), "false".into());
    Table::create(Arc::new(LocalStorage::new(&seed)), &new)
        .await
        .expect("create");
    three_writes(&seed).await;
    let before = our_rows(&seed, ReadOptions::default()).await;
    let mut asked = BTreeMap::new();
    asked.insert(
        "hoodie.metadata.record.index.enable".to_string(),
        "true".to_string(),
    );
    let mut k = 0;
    loop {
        k += 1;
        let dir = dir_for(&format!("crash_{k}"));
        common::copy_dir(&seed, &dir);
        let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&dir)), k));
        let table = Table::open(crash.clone()).await.expect("open");
        let outcome = table.index(&[], &asked).await;
        let crashed = crash.crashed();
        assert_eq!(
            our_rows(&dir, ReadOptions::default()).await,
            before,
            "crash at request {k}"
        );
        if !crashed {
            outcome.expect("the build without a crash");
            assert!(k > 10, "a build takes more than {k} requests");
            let _ = std::fs::remove_dir_all(&dir);
            break;
        }
        let listed_before_redo = partitions_of(&open(&dir).await);
        open(&dir).await.index(&[], &asked).await.expect("redo");
        let table = open(&dir).await;
        assert_eq!(
            partitions_of(&table),
            ["column_stats", "files", "partition_stats", "record_index"],
            "after the redo of a crash at {k} (listed before: {listed_before_redo:?})"
        );
        reads_agree(&dir, &format!("redone after a crash at {k}")).await;
        plans_from_the_metadata_table(&dir, &format!("crash {k}"), true).await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}
