//! Merge-On-Read compaction of the data table. Tables created here (with a metadata table
//! and its record index) are written with upserts and deletes: inline compaction runs every
//! five delta commits, every reader (this engine from its metadata table and from a
//! listing, hudi-rs) reads the same rows before and after, read-optimized reads show the
//! merged rows, and a full scan costs fewer requests. Writes while a plan is pending land in
//! the slice it starts. A Spark-written table rewound to before its compaction gets the same
//! plan from us, and Spark's plan executed here writes the rows Spark's compaction wrote.
//! A compaction that dies at any request leaves the last snapshot readable and is finished
//! by the next run.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use helpers::*;
use hudi_edge::api::output::{rows_as_json_with, JsonStyle};
use hudi_edge::config::TableType;
use hudi_edge::read::{QueryType, ReadOptions};
use hudi_edge::storage::crash::CrashAfter;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::write::create::NewTable;
use hudi_edge::write::{CompactRequest, CompactionReport, Operation, WriteOptions};
use hudi_edge::Table;
use serde_json::{json, Map, Value};

fn dir_for(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("write_compaction")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

const NO_INLINE: &[(&str, &str)] = NO_INLINE_COMPACTION;

/// A Merge-On-Read table partitioned by region, merging by `ts`, with a metadata table
/// (files, column_stats, partition_stats and record_index).
async fn new_table(dir: &Path) {
    let new = NewTable {
        name: "events".into(),
        table_type: TableType::MergeOnRead,
        schema: hudi_edge::schema::to_avro::schema_from_ddl(
            "id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE, note STRING",
        )
        .unwrap(),
        record_key_fields: vec!["id".into()],
        partition_fields: vec!["region".into()],
        ordering_fields: vec!["ts".into()],
        options: options(&[("hoodie.metadata.record.index.enable", "true")]),
    };
    Table::create(Arc::new(LocalStorage::new(dir)), &new)
        .await
        .expect("create");
}

fn row(i: usize, ts: i64, note: &str) -> Map<String, Value> {
    let region = ["us", "eu", "ap"][i % 3];
    json!({"id": format!("K{i:03}"), "ts": ts, "region": region, "v": i as f64 * 0.5, "note": note})
        .as_object()
        .unwrap()
        .clone()
}

/// The i-th batch of a run: updates spread over the keys written so far, new keys, and a
/// delete of two keys every fourth write.
fn batch(i: usize, model: &Model) -> (Vec<Map<String, Value>>, Operation) {
    let keys: Vec<&String> = model.0.keys().collect();
    if i % 4 == 3 && keys.len() > 4 {
        let rows = [keys[i % keys.len()], keys[(i * 7 + 1) % keys.len()]]
            .iter()
            .map(|k| model.0[*k].clone())
            .collect();
        return (rows, Operation::Delete);
    }
    let mut rows: Vec<Map<String, Value>> = (0..keys.len().min(4))
        .map(|j| {
            let k = keys[(i * 5 + j * 3) % keys.len()];
            let mut r = model.0[k].clone();
            r.insert("ts".into(), json!(1_000 * (i as i64 + 1) + j as i64));
            r.insert("note".into(), json!(format!("update-{i}")));
            r
        })
        .collect();
    rows.sort_by_key(|r| r["id"].as_str().unwrap().to_string());
    rows.dedup_by_key(|r| r["id"].as_str().unwrap().to_string());
    rows.extend((0..6).map(|j| row(i * 10 + j, 100 + i as i64, "insert")));
    (rows, Operation::Upsert)
}

async fn compact(
    dir: &Path,
    request: CompactRequest,
    settings: &[(&str, &str)],
) -> CompactionReport {
    open(dir)
        .await
        .compact(&request, &options(settings))
        .await
        .unwrap_or_else(|e| panic!("compact {}: {e}", dir.display()))
}

fn read_optimized() -> ReadOptions {
    ReadOptions {
        query: QueryType::ReadOptimized,
        ..ReadOptions::default()
    }
}

/// Requests a fresh reader spends on a full scan, and the rows.
async fn full_scan(dir: &Path) -> (u64, u64, usize) {
    let table = open(dir).await;
    let result = table.read(&ReadOptions::default()).await.expect("read");
    let io = table.io();
    (io.requests, io.bytes, result.num_rows())
}

fn completed_compactions(dir: &Path) -> Vec<String> {
    let names = timeline_names(dir, false);
    names
        .iter()
        .filter_map(|n| n.strip_suffix(".compaction.requested"))
        .filter(|t| {
            names
                .iter()
                .any(|m| m.starts_with(&format!("{t}_")) && m.ends_with(".commit"))
        })
        .map(str::to_string)
        .collect()
}

/// Twelve writes with inline compaction at its defaults: a compaction after the fifth and
/// the tenth delta commit, every reader in step after each write, read-optimized reads the
/// merged rows right after a compaction, the record index still finds every key, and time
/// travel to before a compaction reads as it did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_compaction_keeps_every_reader_in_step() {
    let dir = dir_for("inline");
    new_table(&dir).await;
    let mut hudi = HudiRs::start();
    let mut model = Model::default();
    let mut compacted_after = Vec::new();
    let mut before_first: Option<(String, Vec<String>)> = None;
    for i in 0..12 {
        let (rows, op) = batch(i, &model);
        let result = write_with(&dir, &rows, op, &[]).await;
        model.apply(&rows, op);
        let what = format!("write {i}");
        let ours = readers_agree(&dir, &model, &what, &mut hudi).await;
        if compacted_after.is_empty() {
            before_first = Some((result.instant.clone(), model.rows()));
        }
        let Some(report) = &result.services.compaction else {
            continue;
        };
        assert!(result.services.errors.is_empty(), "{what}: {result:?}");
        let [c] = report.completed.as_slice() else {
            panic!("{what}: {report:?}");
        };
        assert!(c.scheduled_here && c.rolled_back.is_none(), "{c:?}");
        assert!(
            c.instant > result.completion_time,
            "{what}: after the commit"
        );
        assert!(c.file_groups > 0 && c.files_written.len() == c.file_groups);
        eprintln!(
            "{what}: compaction {}: {} file groups, {} log files, {} records, {} bytes, {} requests, {} ms",
            c.instant, c.file_groups, c.log_files, c.records_written, c.bytes_written, c.io.requests, c.elapsed_ms
        );
        compacted_after.push(i);
        // Every slice was compacted: base files alone hold the snapshot.
        let ro = our_rows(&dir, read_optimized()).await;
        same_rows(
            &ro,
            &ours,
            &format!("{what}: read-optimized after the compaction"),
        );
        let logs: usize = slices(&dir, &ReadOptions::default())
            .await
            .iter()
            .map(|s| s.3.len())
            .sum();
        assert_eq!(logs, 0, "{what}: no log file in a latest slice");
    }
    assert_eq!(
        compacted_after,
        [4, 9],
        "compactions after the 5th and 10th delta commit"
    );
    // The record index still locates keys (compaction keeps file groups).
    let table = open(&dir).await;
    let key = model.0.keys().next().unwrap().clone();
    let lookup = ReadOptions {
        filters: vec![hudi_edge::expr::parse_filter(&format!("id = {key}")).unwrap()],
        ..ReadOptions::default()
    };
    let plan = table.plan(&lookup).await.expect("plan");
    assert_eq!(plan.file_slices.len(), 1, "{:?}", plan.stats.planning_notes);
    assert_eq!(table.read(&lookup).await.unwrap().num_rows(), 1);
    // Time travel to before the first compaction.
    let (t, rows) = before_first.unwrap();
    let then = our_rows(
        &dir,
        ReadOptions {
            as_of: Some(t.clone()),
            ..ReadOptions::default()
        },
    )
    .await;
    same_rows(&data_only(&then), &rows, &format!("as of {t}"));
    assert_eq!(pending(&dir), Vec::<String>::new());
}

/// A compaction on request: the same rows, the read-optimized view catches up, and a full
/// scan reads one base file per file group instead of every log file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_cuts_what_a_full_scan_reads() {
    let dir = dir_for("full_scan");
    new_table(&dir).await;
    let mut model = Model::default();
    for i in 0..12 {
        let (rows, op) = batch(i, &model);
        let r = write_with(&dir, &rows, op, NO_INLINE).await;
        assert!(r.services.compaction.is_none());
        model.apply(&rows, op);
    }
    let before = our_rows(&dir, ReadOptions::default()).await;
    same_rows(&data_only(&before), &model.rows(), "before");
    let ro_before = our_rows(&dir, read_optimized()).await;
    assert_ne!(ro_before, before, "logs hold rows the base files do not");
    let (requests, bytes, rows) = full_scan(&dir).await;
    let report = compact(&dir, CompactRequest::default(), &[]).await;
    let [c] = report.completed.as_slice() else {
        panic!("{report:?}");
    };
    let after = our_rows(&dir, ReadOptions::default()).await;
    same_rows(
        &moved(&after),
        &moved(&before),
        "snapshot before vs after the compaction",
    );
    same_rows(
        &our_rows(&dir, read_optimized()).await,
        &after,
        "read-optimized after",
    );
    let (requests_after, bytes_after, rows_after) = full_scan(&dir).await;
    assert_eq!(rows, rows_after);
    eprintln!(
        "full scan: {requests} requests / {bytes} bytes before, {requests_after} / {bytes_after} after compacting {} log files of {} file groups",
        c.log_files, c.file_groups
    );
    assert!(
        requests_after + c.log_files as u64 / 2 <= requests,
        "{requests_after} vs {requests}"
    );
    // Nothing left to compact.
    let again = compact(&dir, CompactRequest::default(), &[]).await;
    assert!(
        again.completed.is_empty() && again.not_scheduled.is_some(),
        "{again:?}"
    );
    let mut hudi = HudiRs::start();
    readers_agree(&dir, &model, "after compacting on request", &mut hudi).await;
}

/// A plan left pending (schedule only): writes after it read correctly everywhere, their
/// log files go to the slice the compaction starts once it commits, and the compaction
/// writes the file groups as they were when it was planned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_during_a_pending_compaction_land_in_the_next_slice() {
    let dir = dir_for("pending");
    new_table(&dir).await;
    let mut hudi = HudiRs::start();
    let mut model = Model::default();
    for i in 0..3 {
        let (rows, op) = batch(i, &model);
        write_with(&dir, &rows, op, NO_INLINE).await;
        model.apply(&rows, op);
    }
    let planned_model = model.clone();
    let report = compact(&dir, CompactRequest::schedule_only(), &[]).await;
    let c = report.scheduled.clone().expect("scheduled");
    assert!(report.completed.is_empty());
    let planned: BTreeSet<String> = slices(&dir, &ReadOptions::default())
        .await
        .into_iter()
        .filter(|s| !s.3.is_empty())
        .map(|s| s.1)
        .collect();
    // Two writes while it is pending: updates to planned file groups and a delete.
    let mut after_plan = Vec::new();
    for i in 3..5 {
        let (rows, op) = batch(i, &model);
        let r = write_with(&dir, &rows, op, NO_INLINE).await;
        for p in &r.files_written {
            if p.contains(".log.") {
                after_plan.push(p.rsplit('/').next().unwrap().to_string());
            }
        }
        // As Spark 1.1 records a log append.
        let (_, meta) = open(&dir).await.instant(&r.instant).await.unwrap();
        for stats in meta["partitionToWriteStats"].as_object().unwrap().values() {
            for s in stats.as_array().unwrap() {
                if s["path"].as_str().unwrap().contains(".log.") {
                    assert_eq!(s["prevCommit"], json!(r.instant));
                    assert_eq!(s["baseFile"], json!(""));
                }
            }
        }
        model.apply(&rows, op);
        readers_agree(
            &dir,
            &model,
            &format!("write {i} while {c} is pending"),
            &mut hudi,
        )
        .await;
    }
    assert!(!after_plan.is_empty());
    // Executed now: from the plan, whatever came since.
    let report = compact(&dir, CompactRequest::execute(c.clone()), &[]).await;
    let [done] = report.completed.as_slice() else {
        panic!("{report:?}");
    };
    assert_eq!(done.instant, c);
    assert!(!done.scheduled_here);
    assert!(
        report.scheduled.is_none() && report.not_scheduled.is_none(),
        "{report:?}"
    );
    readers_agree(&dir, &model, "after the compaction", &mut hudi).await;
    // The later logs sit in the slice at `c`; its base file holds the planned state.
    let now = slices(&dir, &ReadOptions::default()).await;
    for (partition, file_id, base, logs) in &now {
        if !planned.contains(file_id) {
            continue;
        }
        let base = base.as_deref().unwrap_or_default();
        assert!(
            base.ends_with(&format!("_{c}.parquet")),
            "{partition}/{file_id}: {base}"
        );
        for l in logs {
            assert!(
                after_plan.iter().any(|a| l.ends_with(a)),
                "{l} came before the plan"
            );
        }
    }
    // Its base files hold the rows as they were planned, not the later writes' versions.
    let compacted: Vec<String> = base_file_rows(&dir, &c).into_values().flatten().collect();
    let compacted = data_only(&compacted);
    let as_planned = planned_model.rows();
    let mut changed_since = 0;
    for r in &compacted {
        assert!(as_planned.contains(r), "{r} is not as planned");
        let key = serde_json::from_str::<Value>(r).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        changed_since += usize::from(
            model
                .0
                .get(&key)
                .map(|m| sorted_json(&Value::Object(m.clone())))
                != Some(r.clone()),
        );
    }
    assert!(changed_since > 0, "no later write touched a compacted key");
    assert_eq!(pending(&dir), Vec::<String>::new());
    // The next compaction takes the logs written meanwhile.
    let report = compact(&dir, CompactRequest::default(), &[]).await;
    assert_eq!(report.completed.len(), 1, "{report:?}");
    same_rows(
        &our_rows(&dir, read_optimized()).await,
        &our_rows(&dir, ReadOptions::default()).await,
        "all compacted",
    );
}

const SPARK_MOR: &str = "sample_table/mor/avro/v9_txns_simple_nometa";
/// The fixture's compaction (Spark 1.1.1) and what came after it.
const SPARK_COMPACTION: &str = "20260307135839895";

/// Removes from a table every instant from `from` on (timeline files and data files),
/// keeping `keep` timeline files: the table as it was before.
fn rewind(dir: &Path, from: &str, keep: &[String]) {
    let tl = dir.join(".hoodie/timeline");
    for n in timeline_names(dir, false) {
        let t = n.split(['.', '_']).next().unwrap();
        if t >= from && !keep.contains(&n) {
            std::fs::remove_file(tl.join(&n)).unwrap();
        }
    }
    for p in data_files(dir) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let instant = name
            .strip_suffix(".parquet")
            .and_then(|s| s.rsplit('_').next())
            .or_else(|| name.split('_').nth(1).and_then(|s| s.split('.').next()));
        if instant.is_some_and(|t| t >= from) {
            std::fs::remove_file(p).unwrap();
        }
    }
}

fn data_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().filter_map(|e| e.ok()) {
        if e.file_type().unwrap().is_dir() && !e.file_name().to_string_lossy().starts_with('.') {
            for f in std::fs::read_dir(e.path()).unwrap().filter_map(|f| f.ok()) {
                let n = f.file_name().to_string_lossy().into_owned();
                if n.ends_with(".parquet") || n.contains(".log.") {
                    out.push(f.path());
                }
            }
        }
    }
    out.sort();
    out
}

/// Rows of the base files written at `instant`, by file id, without `_hoodie_file_name`
/// (its write token is the writer's).
fn base_file_rows(dir: &Path, instant: &str) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for p in data_files(dir) {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(&format!("_{instant}.parquet")) {
            continue;
        }
        let bytes = bytes::Bytes::from(std::fs::read(&p).unwrap());
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap();
        let mut rows: Vec<String> = reader
            .flat_map(|b| rows_as_json_with(&b.unwrap(), JsonStyle::ORACLE))
            .map(|mut m| {
                m.remove("_hoodie_file_name");
                sorted_json(&Value::Object(m))
            })
            .collect();
        rows.sort();
        out.insert(name.split('_').next().unwrap().to_string(), rows);
    }
    out
}

fn decode(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    hudi_edge::timeline::metadata::decode_instant_file(&bytes, &path.display().to_string()).unwrap()
}

fn completed_file(dir: &Path, instant: &str) -> PathBuf {
    let n = timeline_names(dir, false)
        .into_iter()
        .find(|n| n.starts_with(&format!("{instant}_")))
        .unwrap_or_else(|| panic!("{instant} not completed"));
    dir.join(".hoodie/timeline").join(n)
}

/// The write stats Spark and we both fill, by file id.
fn stats_by_file(commit: &Value) -> BTreeMap<String, Value> {
    let keys = [
        "partitionPath",
        "prevCommit",
        "prevBaseFile",
        "numWrites",
        "numDeletes",
        "numUpdateWrites",
        "numInserts",
        "totalLogRecords",
        "totalUpdatedRecordsCompacted",
        "totalLogBlocks",
        "totalCorruptLogBlock",
        "totalRollbackBlocks",
        "totalLogFilesCompacted",
        "totalLogSizeCompacted",
        "totalLogFiles",
        "numUpdates",
        "logVersion",
        "baseFile",
        "logFiles",
    ];
    let mut out = BTreeMap::new();
    for stats in commit["partitionToWriteStats"]
        .as_object()
        .unwrap()
        .values()
    {
        for s in stats.as_array().unwrap() {
            let picked: Map<String, Value> = keys
                .iter()
                .map(|k| (k.to_string(), s[*k].clone()))
                .collect();
            out.insert(
                s["fileId"].as_str().unwrap().to_string(),
                Value::Object(picked),
            );
        }
    }
    out
}

/// Spark's compaction of a fixture table against ours: the table rewound to before it,
/// our plan names the slices Spark's did, field for field; Spark's own plan executed here
/// writes the rows Spark's compaction wrote, and the commit's write stats agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spark_plans_and_compactions_match_ours() {
    let spark = common::table_path(SPARK_MOR);
    let spark_plan = decode(&spark.join(format!(
        ".hoodie/timeline/{SPARK_COMPACTION}.compaction.requested"
    )));
    let spark_commit = decode(&completed_file(&spark, SPARK_COMPACTION));
    let spark_rows = base_file_rows(&spark, SPARK_COMPACTION);
    assert_eq!(spark_rows.len(), 2);

    // Spark's plan, executed by us.
    let dir = common::table_copy(SPARK_MOR, "write_compaction", "spark_plan");
    rewind(
        &dir,
        SPARK_COMPACTION,
        &[format!("{SPARK_COMPACTION}.compaction.requested")],
    );
    let before = our_rows(&dir, ReadOptions::default()).await;
    let mut hudi = HudiRs::start();
    same_rows(
        &hudi.rows(&dir),
        &before,
        "hudi-rs with Spark's plan pending",
    );
    let report = compact(&dir, CompactRequest::execute(SPARK_COMPACTION), &[]).await;
    assert_eq!(report.completed.len(), 1, "{report:?}");
    let after = our_rows(&dir, ReadOptions::default()).await;
    same_rows(
        &moved(&after),
        &moved(&before),
        "our execution of Spark's plan: the same snapshot",
    );
    same_rows(
        &hudi.rows(&dir),
        &after,
        "hudi-rs after our execution of Spark's plan",
    );
    let ours = base_file_rows(&dir, SPARK_COMPACTION);
    assert_eq!(ours, spark_rows, "the rows of Spark's compacted base files");
    let our_commit = decode(&completed_file(&dir, SPARK_COMPACTION));
    assert_eq!(stats_by_file(&our_commit), stats_by_file(&spark_commit));
    for k in ["compacted", "operationType", "version"] {
        assert_eq!(our_commit[k], spark_commit[k], "{k}");
    }
    assert_eq!(
        our_commit["extraMetadata"], spark_commit["extraMetadata"],
        "the schema"
    );

    // Our plan, scheduled on the table as it was before Spark's.
    let dir = common::table_copy(SPARK_MOR, "write_compaction", "our_plan");
    rewind(&dir, SPARK_COMPACTION, &[]);
    let report = compact(&dir, CompactRequest::schedule_only(), &[]).await;
    let t = report.scheduled.expect("scheduled");
    let ours = decode(&dir.join(format!(".hoodie/timeline/{t}.compaction.requested")));
    assert_eq!(ours, spark_plan, "our plan vs Spark's");
}

/// A write whose inline compaction dies at its k-th request that changes storage, for
/// every k: the last good snapshot reads (this engine, hudi-rs), and the next write
/// finishes what was left — a pending plan executed, an inflight one rolled back and
/// executed again — with the metadata table's files in step with storage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_compaction_is_finished_by_the_next_write() {
    let seed = dir_for("crash_seed");
    new_table(&seed).await;
    let mut model = Model::default();
    for i in 0..4 {
        let (rows, op) = batch(i, &model);
        write_with(&seed, &rows, op, &[]).await;
        model.apply(&rows, op);
    }
    let before = model.clone();
    let (rows, op) = batch(4, &model);
    model.apply(&rows, op);
    let (next_rows, next_op) = batch(5, &model);
    let mut last = model.clone();
    last.apply(&next_rows, next_op);
    let mut hudi = HudiRs::start();
    let mut k = 0;
    loop {
        k += 1;
        let dir = dir_for(&format!("crash_{k}"));
        common::copy_dir(&seed, &dir);
        let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&dir)), k));
        let table = Table::open(crash.clone()).await.expect("open");
        let batches = decode_input(&table, &rows).await;
        let outcome = table.write(&batches, &WriteOptions::new(op)).await;
        assert_eq!(crash.abandoned(), 0, "k={k}: requests left running");
        let what = format!("crash at request {k}");
        if !crash.crashed() {
            let r = outcome.expect("the write without a crash");
            assert!(r.services.errors.is_empty(), "{:?}", r.services.errors);
            let c = r.services.compaction.expect("compacted");
            assert!(c.completed.len() == 1, "{c:?}");
            let _ = std::fs::remove_dir_all(&dir);
            break;
        }
        keep_crashed(&dir, &format!("compaction_{k}"));
        // The write's commit point, then the compaction's: either snapshot reads.
        let committed = match &outcome {
            Ok(r) => {
                let failed = r.services.errors.iter().any(|e| e.service == "compaction");
                assert!(failed, "{what}: {:?}", r.services);
                true
            }
            Err(_) => false,
        };
        let now = our_rows(&dir, ReadOptions::default()).await;
        let expected = if committed { &model } else { &before };
        same_rows(
            &data_only(&now),
            &expected.rows(),
            &format!("{what}: snapshot"),
        );
        if k % 3 == 1 {
            same_rows(&hudi.rows(&dir), &now, &format!("{what}: hudi-rs"));
        }
        // The next write finishes the compaction (or rolls the write back and compacts
        // after writing again).
        if !committed {
            write_with(&dir, &rows, op, &[]).await;
        }
        let r = write_with(&dir, &next_rows, next_op, &[]).await;
        assert!(
            r.services.errors.is_empty(),
            "{what}: {:?}",
            r.services.errors
        );
        assert_eq!(pending(&dir), Vec::<String>::new(), "{what}: left pending");
        assert!(
            !completed_compactions(&dir).is_empty(),
            "{what}: no compaction"
        );
        readers_agree(
            &dir,
            &last,
            &format!("{what}: after the next write"),
            &mut hudi,
        )
        .await;
        let _ = std::fs::remove_dir_all(&dir);
        assert!(k < 200, "the write never finished");
    }
    eprintln!("crashed at each of {} requests", k - 1);
}

/// With several writers configured, a compaction holds Hudi's storage lock throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_optimistic_concurrency_compaction_holds_the_lock() {
    let dir = dir_for("locked");
    new_table(&dir).await;
    let mut model = Model::default();
    let occ = [
        (
            hudi_edge::write::lock::CONCURRENCY_MODE,
            "optimistic_concurrency_control",
        ),
        (
            hudi_edge::write::lock::LOCK_PROVIDER,
            hudi_edge::write::lock::STORAGE_LOCK_PROVIDER,
        ),
    ];
    let mut compacted = 0;
    for i in 0..5 {
        let (rows, op) = batch(i, &model);
        let r = write_with(&dir, &rows, op, &occ).await;
        model.apply(&rows, op);
        assert!(r.services.errors.is_empty(), "{:?}", r.services.errors);
        if let Some(c) = r.services.compaction {
            compacted += c.completed.len();
        }
    }
    assert_eq!(compacted, 1);
    let held = std::fs::read_to_string(dir.join(".hoodie/.locks/table_lock.json")).unwrap();
    assert!(held.contains("\"expired\":true"), "released: {held}");
    let mut hudi = HudiRs::start();
    readers_agree(&dir, &model, "compacted under the lock", &mut hudi).await;
}

/// `hoodie.compact.schedule.inline`: the fifth write leaves a plan; the next write with
/// inline compaction executes it before anything else (Java's `runAnyPendingCompactions`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_scheduled_inline_is_executed_by_the_next_inline_run() {
    let dir = dir_for("schedule_inline");
    new_table(&dir).await;
    let mut model = Model::default();
    let schedule_only = [
        ("hoodie.compact.inline", "false"),
        ("hoodie.compact.schedule.inline", "true"),
    ];
    let mut scheduled = Vec::new();
    for i in 0..5 {
        let (rows, op) = batch(i, &model);
        let r = write_with(&dir, &rows, op, &schedule_only).await;
        model.apply(&rows, op);
        assert!(r.services.errors.is_empty(), "{:?}", r.services.errors);
        if let Some(c) = r.services.compaction {
            assert!(c.completed.is_empty(), "{c:?}");
            scheduled.extend(c.scheduled);
        }
    }
    let [plan] = scheduled.as_slice() else {
        panic!("one plan after the fifth delta commit: {scheduled:?}");
    };
    assert_eq!(pending(&dir), [format!("{plan}.compaction.requested")]);
    let (rows, op) = batch(5, &model);
    let r = write_with(&dir, &rows, op, &[]).await;
    model.apply(&rows, op);
    let c = r.services.compaction.expect("the pending plan executed");
    let done: Vec<(&str, bool)> = (c.completed.iter())
        .map(|d| (d.instant.as_str(), d.scheduled_here))
        .collect();
    assert_eq!(done, [(plan.as_str(), false)], "{c:?}");
    assert_eq!(pending(&dir), Vec::<String>::new());
    let mut hudi = HudiRs::start();
    readers_agree(&dir, &model, "after the scheduled plan ran", &mut hudi).await;
}
