//! Clustering. Tables created here (Copy-On-Write and Merge-On-Read, with a metadata table
//! and its record index) are written in many small commits, each opening new file groups;
//! clustering rewrites each partition's small groups into one, and every reader (this
//! engine from its metadata table and from a listing, hudi-rs) reads the same rows before
//! and after, the record index finds every key in its new file group, time travel to before
//! the clustering reads the old groups, and writes go on into the new ones. Inline
//! clustering runs every fourth commit. A clustering that dies at any request leaves the
//! last snapshot readable and is finished by the next run.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use helpers::*;
use hudi_edge::config::TableType;
use hudi_edge::read::ReadOptions;
use hudi_edge::storage::crash::CrashAfter;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::storage::StorageExt;
use hudi_edge::write::{ClusterRequest, ClusteringReport, Operation};
use hudi_edge::Table;
use serde_json::{json, Map, Value};

fn dir_for(test: &str) -> PathBuf {
    fresh_dir("write_clustering", test)
}

fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Every insert opens a new file group (no small-file routing), and Merge-On-Read logs are
/// left uncompacted: many small groups to cluster.
const SMALL_GROUPS: &[(&str, &str)] = &[
    ("hoodie.parquet.small.file.limit", "0"),
    ("hoodie.compact.inline", "false"),
];

async fn new_table(dir: &Path, table_type: TableType) {
    create_events(
        dir,
        table_type,
        &[("hoodie.metadata.record.index.enable", "true")],
    )
    .await;
}

fn row(i: usize, ts: i64) -> Map<String, Value> {
    let region = ["us", "eu", "ap"][i % 3];
    json!({"id": format!("K{i:03}"), "ts": ts, "region": region, "v": i as f64 * 0.5})
        .as_object()
        .unwrap()
        .clone()
}

/// The i-th write: six new keys (two per partition) and updates of three earlier ones;
/// every fifth write deletes two keys instead.
fn batch(i: usize, model: &Model) -> (Vec<Map<String, Value>>, Operation) {
    let keys: Vec<&String> = model.0.keys().collect();
    if i % 5 == 4 {
        let rows = [keys[i % keys.len()], keys[(i * 7 + 1) % keys.len()]]
            .iter()
            .map(|k| ((*k).clone(), model.0[*k].clone()))
            .collect::<BTreeMap<_, _>>()
            .into_values()
            .collect();
        return (rows, Operation::Delete);
    }
    let mut rows: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    for j in 0..keys.len().min(3) {
        let k = keys[(i * 5 + j * 3) % keys.len()];
        let mut r = model.0[k].clone();
        r.insert("ts".into(), json!(1_000 * (i as i64 + 1) + j as i64));
        r.insert("v".into(), json!(i as f64 + 0.25));
        rows.insert(k.clone(), r);
    }
    for j in 0..6 {
        let r = row(i * 10 + j, 100 + i as i64);
        rows.insert(r["id"].as_str().unwrap().to_string(), r);
    }
    (rows.into_values().collect(), Operation::Upsert)
}

/// Writes `n` batches from `first` on.
async fn fill(dir: &Path, model: &mut Model, first: usize, n: usize, settings: &[(&str, &str)]) {
    for i in first..first + n {
        let (rows, op) = batch(i, model);
        write_with(dir, &rows, op, settings).await;
        model.apply(&rows, op);
    }
}

async fn cluster(
    dir: &Path,
    request: ClusterRequest,
    settings: &[(&str, &str)],
) -> ClusteringReport {
    open(dir)
        .await
        .cluster(&request, &options(settings))
        .await
        .unwrap_or_else(|e| panic!("cluster {}: {e}", dir.display()))
}

/// Every key is found by the record index in exactly one file group of the latest slices,
/// and read from it.
async fn record_index_finds(dir: &Path, model: &Model, what: &str) {
    let table = open(dir).await;
    let latest: BTreeSet<String> = slices(dir, &ReadOptions::default())
        .await
        .into_iter()
        .map(|s| s.1)
        .collect();
    for key in model.0.keys() {
        let lookup = ReadOptions {
            filters: vec![hudi_edge::expr::parse_filter(&format!("id = {key}")).unwrap()],
            ..ReadOptions::default()
        };
        let plan = table.plan(&lookup).await.expect("plan");
        let [s] = plan.file_slices.as_slice() else {
            panic!("{what}: {key} in {} slices", plan.file_slices.len());
        };
        assert!(
            latest.contains(&s.file_id),
            "{what}: {key} located in an old group"
        );
        assert_eq!(
            table.read(&lookup).await.unwrap().num_rows(),
            1,
            "{what}: {key}"
        );
    }
}

/// Requested times of completed clusterings.
fn completed_clusterings(dir: &Path) -> Vec<String> {
    let names = timeline_names(dir, false);
    (names.iter())
        .filter_map(|n| n.strip_suffix(".clustering.requested"))
        .filter(|t| {
            (names.iter()).any(|m| m.starts_with(&format!("{t}_")) && m.ends_with(".replacecommit"))
        })
        .map(str::to_string)
        .collect()
}

/// Clustering on request, Copy-On-Write and Merge-On-Read: each partition's small groups
/// (and, Merge-On-Read, their log files) become one new file group holding the same rows
/// with the same commit times; the replace commit names the old groups; readers, the
/// record index and time travel agree; writes go on into the new groups.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clustering_rewrites_small_groups_and_every_reader_agrees() {
    let mut hudi = HudiRs::start();
    for table_type in [TableType::CopyOnWrite, TableType::MergeOnRead] {
        let dir = dir_for(&format!("on_request_{table_type:?}"));
        new_table(&dir, table_type).await;
        let mut model = Model::default();
        fill(&dir, &mut model, 0, 6, SMALL_GROUPS).await;
        let what = format!("{table_type:?}");
        let before = readers_agree(&dir, &model, &format!("{what} before"), &mut hudi).await;
        let groups_before: BTreeSet<String> = (slices(&dir, &ReadOptions::default()).await)
            .into_iter()
            .map(|s| format!("{}/{}", s.0, s.1))
            .collect();
        assert!(groups_before.len() > 6, "{what}: {groups_before:?}");
        let last_write = open(&dir)
            .await
            .timeline()
            .instants
            .last()
            .unwrap()
            .requested_time
            .clone();

        let report = cluster(&dir, ClusterRequest::default(), &[]).await;
        let [c] = report.completed.as_slice() else {
            panic!("{what}: {report:?}");
        };
        eprintln!(
            "{what}: clustering {}: {} groups, {} file groups ({} bytes) into {} files ({} records, {} bytes), {} requests, {} ms",
            c.instant, c.groups, c.file_groups_replaced.len(), c.bytes_replaced,
            c.files_written.len(), c.records_written, c.bytes_written, c.io.requests, c.elapsed_ms
        );
        assert!(c.scheduled_here && c.rolled_back.is_none());
        assert_eq!(c.groups, 3, "{what}: one group per partition");
        let replaced: BTreeSet<String> = c.file_groups_replaced.iter().cloned().collect();
        assert_eq!(
            replaced, groups_before,
            "{what}: every small group replaced"
        );
        assert_eq!(c.files_written.len(), 3);
        assert_eq!(c.records_written as usize, model.0.len());

        let after = readers_agree(&dir, &model, &format!("{what} after"), &mut hudi).await;
        same_rows(
            &moved(&after),
            &moved(&before),
            &format!("{what}: meta columns kept"),
        );
        let latest = slices(&dir, &ReadOptions::default()).await;
        assert_eq!(latest.len(), 3, "{what}: {latest:?}");
        assert!(latest.iter().all(|s| s.3.is_empty() && s.2.is_some()));
        record_index_finds(&dir, &model, &what).await;

        // The completed replace commit, as Spark writes it.
        let (_, content) = open(&dir).await.instant(&c.instant).await.expect("commit");
        assert_eq!(content["operationType"], "CLUSTER", "{content}");
        let named: BTreeSet<String> = content["partitionToReplaceFileIds"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(p, ids)| {
                ids.as_array()
                    .unwrap()
                    .iter()
                    .map(move |i| format!("{p}/{}", i.as_str().unwrap()))
            })
            .collect();
        assert_eq!(named, groups_before);
        assert_eq!(
            completed_clusterings(&dir),
            std::slice::from_ref(&c.instant)
        );

        // Time travel to the last write before it reads the old groups.
        let then = our_rows(
            &dir,
            ReadOptions {
                as_of: Some(last_write.clone()),
                ..ReadOptions::default()
            },
        )
        .await;
        same_rows(&then, &before, &format!("{what}: as of {last_write}"));

        // Writes go on into the new groups.
        fill(&dir, &mut model, 6, 2, SMALL_GROUPS).await;
        readers_agree(&dir, &model, &format!("{what}: writes after"), &mut hudi).await;
        record_index_finds(&dir, &model, &format!("{what}: writes after")).await;
        assert_eq!(pending(&dir), Vec::<String>::new());
    }
}

/// `hoodie.clustering.inline`: a clustering after every fourth commit (counted since the
/// last one), readers in step after each write; with sort columns the rows come out
/// sorted; `hoodie.clustering.schedule.inline` writes the plan only, which the next
/// request executes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_clustering_runs_every_fourth_commit() {
    let mut hudi = HudiRs::start();
    let dir = dir_for("inline");
    new_table(&dir, TableType::MergeOnRead).await;
    let mut model = Model::default();
    let mut settings = SMALL_GROUPS.to_vec();
    settings.extend([
        ("hoodie.clustering.inline", "true"),
        ("hoodie.clustering.plan.strategy.sort.columns", "v"),
    ]);
    let mut clustered_after = Vec::new();
    for i in 0..9 {
        let (rows, op) = batch(i, &model);
        let r = write_with(&dir, &rows, op, &settings).await;
        model.apply(&rows, op);
        assert!(r.services.errors.is_empty(), "{:?}", r.services.errors);
        readers_agree(&dir, &model, &format!("write {i}"), &mut hudi).await;
        if let Some(c) = &r.services.clustering {
            assert_eq!(c.completed.len(), 1, "{c:?}");
            clustered_after.push(i);
            // Each new base file holds its rows sorted by `v`.
            let table = open(&dir).await;
            for s in slices(&dir, &ReadOptions::default()).await {
                let Some(base) = s.2 else { continue };
                if !base.contains(&c.completed[0].instant) {
                    continue;
                }
                let rows = our_rows_of_file(&table, &base).await;
                let v: Vec<f64> = rows.iter().map(|r| r["v"].as_f64().unwrap()).collect();
                assert!(v.windows(2).all(|w| w[0] <= w[1]), "{base}: {v:?}");
            }
        }
    }
    assert_eq!(clustered_after, [3, 7], "after the 4th and the 8th commit");
    record_index_finds(&dir, &model, "inline").await;

    // Schedule only: the plan waits for a request.
    let mut schedule_only = SMALL_GROUPS.to_vec();
    schedule_only.push(("hoodie.clustering.schedule.inline", "true"));
    let mut scheduled = None;
    for i in 9..13 {
        let (rows, op) = batch(i, &model);
        let r = write_with(&dir, &rows, op, &schedule_only).await;
        model.apply(&rows, op);
        if let Some(c) = &r.services.clustering {
            assert!(c.completed.is_empty());
            scheduled = c.scheduled.clone();
            // Updates into the planned groups are refused until it runs.
            break;
        }
    }
    let t = scheduled.expect("a plan scheduled after the 4th commit");
    assert_eq!(pending(&dir), [format!("{t}.clustering.requested")]);
    readers_agree(&dir, &model, "with a pending plan", &mut hudi).await;
    let report = cluster(&dir, ClusterRequest::execute(t.clone()), &[]).await;
    assert_eq!(report.completed.len(), 1);
    assert!(!report.completed[0].scheduled_here);
    readers_agree(&dir, &model, "after the plan ran", &mut hudi).await;
    record_index_finds(&dir, &model, "after the plan ran").await;
    assert_eq!(pending(&dir), Vec::<String>::new());
}

/// The rows of one base file of the table (`path` relative to it), in file order.
async fn our_rows_of_file(table: &Table, path: &str) -> Vec<Map<String, Value>> {
    let bytes = table
        .client()
        .storage()
        .get(path, hudi_edge::storage::Purpose::Other)
        .await
        .expect("base file");
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
    batches
        .iter()
        .flat_map(hudi_edge::api::output::rows_as_json)
        .collect()
}

/// The snapshot a crash left is the model's: read by every reader when `hudi` is given,
/// else by this engine alone.
async fn snapshot_reads(dir: &Path, model: &Model, what: &str, hudi: Option<&mut HudiRs>) {
    match hudi {
        Some(hudi) => {
            readers_agree(dir, model, what, hudi).await;
        }
        None => {
            let now = our_rows(dir, ReadOptions::default()).await;
            same_rows(
                &data_only(&now),
                &model.rows(),
                &format!("{what}: snapshot"),
            );
        }
    }
}

/// A clustering that dies at its k-th request, for every k, on a Copy-On-Write and a
/// Merge-On-Read table with a metadata table: every reader (this engine from the metadata
/// table and from a listing, hudi-rs) reads the last snapshot, and the next `cluster`
/// finishes — a plan left requested executed, an inflight one rolled back and executed
/// again — with the metadata table in step with storage and the record index pointing at
/// the new groups.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_clustering_is_finished_by_the_next_run() {
    let mut hudi = HudiRs::start();
    for table_type in [TableType::CopyOnWrite, TableType::MergeOnRead] {
        let seed = dir_for(&format!("crash_seed_{table_type:?}"));
        new_table(&seed, table_type).await;
        let mut model = Model::default();
        fill(&seed, &mut model, 0, 4, SMALL_GROUPS).await;
        let mut k = 0;
        loop {
            k += 1;
            let dir = dir_for(&format!("crash_{table_type:?}_{k}"));
            common::copy_dir(&seed, &dir);
            let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&dir)), k));
            let table = Table::open(crash.clone()).await.expect("open");
            let outcome = table
                .cluster(&ClusterRequest::default(), &BTreeMap::new())
                .await;
            assert_eq!(crash.abandoned(), 0, "k={k}: requests left running");
            let what = format!("{table_type:?}: crash at request {k}");
            if !crash.crashed() {
                let r = outcome.expect("the clustering without a crash");
                assert_eq!(r.completed.len(), 1, "{r:?}");
                let _ = std::fs::remove_dir_all(&dir);
                break;
            }
            assert!(outcome.is_err(), "{what}: {outcome:?}");
            keep_crashed(&dir, &format!("clustering_{table_type:?}_{k}"));
            snapshot_reads(&dir, &model, &what, (k % 3 == 1).then_some(&mut hudi)).await;
            let r = cluster(&dir, ClusterRequest::default(), &[]).await;
            assert!(!r.completed.is_empty(), "{what}: {r:?}");
            assert_eq!(pending(&dir), Vec::<String>::new(), "{what}: left pending");
            assert_eq!(completed_clusterings(&dir).len(), 1, "{what}");
            readers_agree(
                &dir,
                &model,
                &format!("{what}: after the next run"),
                &mut hudi,
            )
            .await;
            record_index_finds(&dir, &model, &what).await;
            let _ = std::fs::remove_dir_all(&dir);
            assert!(k < 200, "the clustering never finished");
        }
        eprintln!("{table_type:?}: crashed at each of {} requests", k - 1);
    }
}

/// A write whose inline clustering is due, dying at its k-th request for every k, on a
/// Copy-On-Write and a Merge-On-Read table: before its commit point the write fails and
/// readers see the table without it; after, the write stands, its clustering's failure is
/// reported in the result, and readers see the write. Either way the next `cluster`
/// finishes (or runs) the clustering, readers and the record index agree, and the next
/// write rolls back a failed one and commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_crashed_in_its_inline_clustering_loses_nothing() {
    let mut hudi = HudiRs::start();
    let mut inline = SMALL_GROUPS.to_vec();
    inline.push(("hoodie.clustering.inline", "true"));
    for table_type in [TableType::CopyOnWrite, TableType::MergeOnRead] {
        let seed = dir_for(&format!("inline_crash_seed_{table_type:?}"));
        new_table(&seed, table_type).await;
        let mut seeded = Model::default();
        fill(&seed, &mut seeded, 0, 3, SMALL_GROUPS).await;
        let (mut k, mut after_commit) = (0, 0);
        loop {
            k += 1;
            let dir = dir_for(&format!("inline_crash_{table_type:?}_{k}"));
            common::copy_dir(&seed, &dir);
            let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&dir)), k));
            let table = Table::open(crash.clone()).await.expect("open");
            let mut model = seeded.clone();
            let (rows, op) = batch(3, &model);
            let outcome = write_on_with(&table, &rows, op, &inline).await;
            assert_eq!(crash.abandoned(), 0, "k={k}: requests left running");
            let what = format!("{table_type:?}: crash at request {k}");
            if !crash.crashed() {
                let w = outcome.expect("the write without a crash");
                let c = w.services.clustering.expect("an inline clustering");
                assert_eq!(c.completed.len(), 1, "{c:?}");
                let _ = std::fs::remove_dir_all(&dir);
                break;
            }
            keep_crashed(&dir, &format!("inline_clustering_{table_type:?}_{k}"));
            if let Ok(w) = &outcome {
                // Committed: the services after it met the crash and said so.
                assert!(!w.services.errors.is_empty(), "{what}: {w:?}");
                model.apply(&rows, op);
                after_commit += 1;
            }
            // Every reader at a few crash points (hudi-rs is the slow one); ours at all.
            let all_readers = k % 8 == 1;
            snapshot_reads(&dir, &model, &what, all_readers.then_some(&mut hudi)).await;
            // A failed write stays pending until the next write rolls it back.
            let r = cluster(&dir, ClusterRequest::default(), &[]).await;
            assert!(!r.completed.is_empty(), "{what}: {r:?}");
            let left = pending(&dir);
            let clustering = |p: &String| p.contains("clustering") || p.contains("replacecommit");
            assert!(!left.iter().any(clustering), "{what}: {left:?}");
            assert_eq!(completed_clusterings(&dir).len(), 1, "{what}");
            if all_readers {
                readers_agree(&dir, &model, &format!("{what}: clustered"), &mut hudi).await;
                record_index_finds(&dir, &model, &what).await;
            }
            // Writes go on (at the points every reader checked).
            if all_readers {
                let (rows, op) = batch(4, &model);
                let w = write_with(&dir, &rows, op, &inline).await;
                assert!(
                    w.services.errors.is_empty(),
                    "{what}: {:?}",
                    w.services.errors
                );
                model.apply(&rows, op);
                assert_eq!(pending(&dir), Vec::<String>::new(), "{what}: left pending");
                let now = our_rows(&dir, ReadOptions::default()).await;
                same_rows(
                    &data_only(&now),
                    &model.rows(),
                    &format!("{what}: next write"),
                );
            }
            let _ = std::fs::remove_dir_all(&dir);
            assert!(k < 300, "the write never finished");
        }
        assert!(
            after_commit > 0,
            "{table_type:?}: no crash fell after the commit point"
        );
        eprintln!(
            "{table_type:?}: crashed at each of {} requests, {after_commit} after the commit",
            k - 1
        );
    }
}

/// A pending clustering blocks writes into its groups, as Java's conflict rules do; new
/// keys are not packed into its small files (they would be lost when the groups are
/// replaced) but go to new groups, Copy-On-Write and Merge-On-Read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_into_a_pending_clustering_are_refused() {
    let mut hudi = HudiRs::start();
    for table_type in [TableType::CopyOnWrite, TableType::MergeOnRead] {
        let dir = dir_for(&format!("pending_blocks_{table_type:?}"));
        new_table(&dir, table_type).await;
        let mut model = Model::default();
        fill(&dir, &mut model, 0, 3, SMALL_GROUPS).await;
        let r = cluster(&dir, ClusterRequest::schedule_only(), &[]).await;
        let t = r.scheduled.expect("scheduled");
        let key = model.0.keys().next().unwrap().clone();
        let mut update = model.0[&key].clone();
        update.insert("ts".into(), json!(99_999));
        let refused = write_on_with(&open(&dir).await, &[update], Operation::Upsert, &[]).await;
        assert!(
            matches!(refused, Err(hudi_edge::HudiError::Conflict { .. })),
            "{refused:?}"
        );
        // New keys, small-file routing on: new groups, not the planned ones.
        let planned: BTreeSet<String> = (slices(&dir, &ReadOptions::default()).await)
            .into_iter()
            .map(|s| s.1)
            .collect();
        let fresh = vec![row(900, 1), row(901, 1), row(902, 1)];
        let w = write_with(
            &dir,
            &fresh,
            Operation::Upsert,
            &[("hoodie.compact.inline", "false")],
        )
        .await;
        model.apply(&fresh, Operation::Upsert);
        let into: Vec<&String> = (w.files_written.iter())
            .filter(|f| planned.iter().any(|id| f.contains(id.as_str())))
            .collect();
        assert_eq!(
            into,
            Vec::<&String>::new(),
            "{table_type:?}: written into planned groups"
        );
        let done = cluster(&dir, ClusterRequest::execute(t), &[]).await;
        assert_eq!(done.completed.len(), 1);
        let what = format!("{table_type:?} after");
        readers_agree(&dir, &model, &what, &mut hudi).await;
        record_index_finds(&dir, &model, &what).await;
    }
}

/// The cleaner removes the replaced groups' files once the replace commit is past its
/// retain point, the metadata table in step; readers still agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cleaner_deletes_replaced_groups() {
    let dir = dir_for("clean_after");
    new_table(&dir, TableType::CopyOnWrite).await;
    let mut model = Model::default();
    fill(&dir, &mut model, 0, 3, SMALL_GROUPS).await;
    let c = cluster(&dir, ClusterRequest::default(), &[]).await;
    let replaced = &c.completed[0].file_groups_replaced;
    let keep_one = [("hoodie.clean.commits.retained", "1")];
    let mut settings = SMALL_GROUPS.to_vec();
    settings.extend(keep_one);
    fill(&dir, &mut model, 3, 2, &settings).await;
    let cleaned = open(&dir)
        .await
        .clean(&options(&keep_one))
        .await
        .expect("clean");
    let left: Vec<String> = replaced
        .iter()
        .filter(|g| {
            let (partition, id) = g.split_once('/').unwrap();
            std::fs::read_dir(dir.join(partition))
                .unwrap()
                .any(|e| e.unwrap().file_name().to_string_lossy().contains(id))
        })
        .cloned()
        .collect();
    assert_eq!(
        left,
        Vec::<String>::new(),
        "replaced groups left: {cleaned:?}"
    );
    let mut hudi = HudiRs::start();
    readers_agree(&dir, &model, "after the clean", &mut hudi).await;
    record_index_finds(&dir, &model, "after the clean").await;
}
