//! Cleaning (tests/write_clean.rs): tables created here, written many times, then cleaned
//! as Apache Hudi 1.1 cleans. Reads give the same rows before and after (ours and hudi-rs),
//! exactly the expected slices go, the metadata table's `files` partition lists exactly the
//! files on storage, time travel before the retain point is refused, and a clean that dies
//! at any request leaves the last snapshot readable and is finished by the next clean or
//! write. The metadata table's own clean runs once it is due.

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
use hudi_edge::write::{Operation, WriteOptions};
use hudi_edge::Table;
use serde_json::{json, Map, Value};

fn dir_of(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("write-clean")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

async fn create(dir: &Path, table_type: TableType) -> Table {
    let new = hudi_edge::write::create::NewTable {
        name: "t".into(),
        table_type,
        schema: hudi_edge::schema::to_avro::schema_from_ddl(
            "id BIGINT NOT NULL, ts BIGINT, region STRING, note STRING",
        )
        .unwrap(),
        record_key_fields: vec!["id".into()],
        partition_fields: vec!["region".into()],
        ordering_fields: vec!["ts".into()],
        options: Default::default(),
    };
    let storage = Arc::new(LocalStorage::new(dir));
    Table::create(storage, &new).await.expect("create")
}

/// Rows of write `n`: keys n..n+3 mod 8 (updates and, early on, inserts), two partitions.
fn batch(n: u64) -> Vec<Map<String, Value>> {
    (0..4)
        .map(|k| {
            let id = (n + k) % 8;
            let region = if id.is_multiple_of(2) { "eu" } else { "us" };
            json!({"id": id, "ts": n, "region": region, "note": format!("w{n}")})
                .as_object()
                .unwrap()
                .clone()
        })
        .collect()
}

fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Writes batch `n` with the given options; returns the commit's instant.
async fn write_n(
    dir: &Path,
    n: u64,
    opts: &BTreeMap<String, String>,
) -> hudi_edge::write::WriteResult {
    let table = open(dir).await;
    let batches = decode_input(&table, &batch(n)).await;
    let mut o = WriteOptions::new(Operation::Upsert);
    o.options = opts.clone();
    table.write(&batches, &o).await.expect("write")
}

/// Base and log files on storage (relative paths), outside `.hoodie`.
fn data_files(dir: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeSet<String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if name != ".hoodie" {
                    walk(root, &p, out);
                }
            } else if name.ends_with(".parquet") || name.contains(".log.") {
                out.insert(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

/// What the metadata table's `files` partition lists, as relative paths.
async fn mdt_files(dir: &Path) -> BTreeSet<String> {
    let table = open(dir).await;
    let mdt = table.metadata_table(&[]).await.expect("metadata table");
    let partitions = mdt.all_partitions().await.unwrap();
    mdt.files(&partitions)
        .await
        .unwrap()
        .into_iter()
        .map(|f| format!("{}/{}", f.partition, f.name))
        .collect()
}

/// The slices Java's KEEP_LATEST_COMMITS would clean, computed here from the file-system
/// view by listing: base instant before `retain`, not the latest, not the last before.
async fn expected_clean(dir: &Path, retain: &str) -> BTreeSet<String> {
    let table = open(dir).await;
    let view = table.file_system_view(None).await.unwrap();
    let mut out = BTreeSet::new();
    for g in &view.groups {
        let latest = g.slices.last().unwrap().base_instant.clone();
        let last_before = g
            .slices
            .iter()
            .rev()
            .find(|s| s.base_instant.as_str() < retain)
            .map(|s| s.base_instant.clone());
        for s in &g.slices {
            if s.base_instant == latest || Some(&s.base_instant) == last_before.as_ref() {
                continue;
            }
            if s.base_instant.as_str() < retain {
                for n in s.file_names() {
                    out.insert(format!("{}/{n}", s.partition));
                }
            }
        }
    }
    out
}

fn as_of(t: &str) -> ReadOptions {
    ReadOptions {
        as_of: Some(t.to_string()),
        ..ReadOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cow_clean_deletes_the_old_slices_and_reads_stay() {
    let dir = dir_of("cow");
    create(&dir, TableType::CopyOnWrite).await;
    let off = options(&[("hoodie.clean.automatic", "false")]);
    let mut commits = Vec::new();
    for n in 0..14 {
        commits.push(write_n(&dir, n, &off).await.instant);
    }
    let before = our_rows(&dir, ReadOptions::default()).await;
    let files_before = data_files(&dir);
    // Keep 3 commits: the 12th commit (index 11) is the earliest retained.
    let retain = commits[11].clone();
    let at_retain = our_rows(&dir, as_of(&retain)).await;
    let expected = expected_clean(&dir, &retain).await;
    assert!(!expected.is_empty());
    let done = open(&dir)
        .await
        .clean(&options(&[("hoodie.clean.commits.retained", "3")]))
        .await
        .expect("clean");
    assert_eq!(done.len(), 1, "{done:?}");
    let c = &done[0];
    assert_eq!(
        (c.table, c.earliest_commit_to_retain.as_str()),
        ("data", retain.as_str())
    );
    assert_eq!(c.files_deleted, expected.len());
    assert!(c.bytes_freed > 0 && c.files_missing == 0 && !c.resumed);
    let files_after = data_files(&dir);
    let gone: BTreeSet<String> = files_before.difference(&files_after).cloned().collect();
    assert_eq!(gone, expected, "exactly the expected slices go");
    assert_eq!(
        mdt_files(&dir).await,
        files_after,
        "files partition = storage"
    );
    assert_eq!(our_rows(&dir, ReadOptions::default()).await, before);
    assert_eq!(hudi_rs_rows(&dir, &[]), before, "hudi-rs reads the same");
    assert_eq!(our_rows(&dir, as_of(&retain)).await, at_retain);
    // Before the retain point the files are gone: refused, as Hudi refuses it.
    let e = open(&dir)
        .await
        .read(&as_of(&commits[2]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
    assert!(e.to_string().contains("cleaner"), "{e}");
    // The instants are Avro as Java writes them: a plan with full paths, metadata with names.
    let timeline = dir.join(".hoodie/timeline");
    let requested = std::fs::read(timeline.join(format!("{}.clean.requested", c.instant))).unwrap();
    let plan = hudi_edge::timeline::metadata::decode_instant_file(&requested, "plan").unwrap();
    let paths = &plan["filePathsToBeDeletedPerPartition"]["eu"];
    assert!(paths[0]["filePath"]
        .as_str()
        .unwrap()
        .starts_with(&dir.to_string_lossy().to_string()));
    assert_eq!(plan["version"], json!(2));
    assert_eq!(plan["policy"], json!("KEEP_LATEST_COMMITS"));
    assert_eq!(
        std::fs::metadata(timeline.join(format!("{}.clean.inflight", c.instant)))
            .unwrap()
            .len(),
        0
    );
    // Nothing more is due until the next commit.
    let keep = options(&[("hoodie.clean.commits.retained", "3")]);
    assert!(open(&dir).await.clean(&keep).await.unwrap().is_empty());
    // Automatic cleaning after the next write (incremental: the partitions written between
    // the two retain points).
    let w = write_n(&dir, 14, &keep).await;
    assert_eq!(w.services.clean.len(), 1, "{:?}", w.services.clean);
    assert!(w.services.errors.is_empty() && w.services.io.requests > 0);
    assert_eq!(mdt_files(&dir).await, data_files(&dir));
    assert_eq!(
        hudi_rs_rows(&dir, &[]),
        our_rows(&dir, ReadOptions::default()).await
    );
}

/// A write that defers its services answers at its commit point, cleaning nothing; the
/// clean it would have run comes from a later run of those services, as it would have.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_defers_its_services_leaves_them_to_a_later_run() {
    let dir = dir_of("deferred");
    create(&dir, TableType::CopyOnWrite).await;
    let off = options(&[("hoodie.clean.automatic", "false")]);
    let mut commits = Vec::new();
    for n in 0..14 {
        commits.push(write_n(&dir, n, &off).await.instant);
    }
    let keep = options(&[("hoodie.clean.commits.retained", "3")]);
    let table = open(&dir).await;
    let batches = decode_input(&table, &batch(14)).await;
    let mut deferred = WriteOptions::new(Operation::Upsert);
    deferred.options = keep.clone();
    deferred.defer_services = true;
    let files_before = data_files(&dir);
    let w = table.write(&batches, &deferred).await.expect("write");
    commits.push(w.instant.clone());
    assert!(
        w.services.clean.is_empty() && w.services.io.requests == 0,
        "{:?}",
        w.services
    );
    assert!(
        data_files(&dir).is_superset(&files_before),
        "nothing cleaned"
    );
    // Keep 3 of the 15 commits.
    let retain = commits[12].clone();
    let expected = expected_clean(&dir, &retain).await;
    assert!(!expected.is_empty());
    let rows = our_rows(&dir, ReadOptions::default()).await;
    let (done, rolled_back) = open(&dir)
        .await
        .services_after_write(&keep)
        .await
        .expect("services");
    assert!(rolled_back.is_empty() && done.errors.is_empty(), "{done:?}");
    assert_eq!(done.clean.len(), 1, "{:?}", done.clean);
    let c = &done.clean[0];
    assert_eq!(
        (c.table, c.earliest_commit_to_retain.as_str()),
        ("data", retain.as_str())
    );
    assert_eq!(c.files_deleted, expected.len());
    let gone: BTreeSet<String> = files_before
        .difference(&data_files(&dir))
        .cloned()
        .collect();
    assert_eq!(gone, expected, "exactly the expected slices go");
    assert_eq!(
        mdt_files(&dir).await,
        data_files(&dir),
        "files partition = storage"
    );
    assert_eq!(our_rows(&dir, ReadOptions::default()).await, rows);
    assert_eq!(hudi_rs_rows(&dir, &[]), rows, "hudi-rs reads the same");
    // Nothing is due any more.
    let (again, _) = open(&dir).await.services_after_write(&keep).await.unwrap();
    assert!(again.clean.is_empty() && again.archival.is_none() && again.errors.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mor_cleans_its_metadata_table_when_due() {
    let dir = dir_of("mor");
    create(&dir, TableType::MergeOnRead).await;
    let mut cleaned = Vec::new();
    // No compaction, and new keys in new file groups (a small base file rewritten with them
    // would leave a slice to clean).
    let no_compaction = options(&[
        ("hoodie.compact.inline", "false"),
        ("hoodie.parquet.small.file.limit", "0"),
    ]);
    for n in 0..34 {
        let w = write_n(&dir, n, &no_compaction).await;
        assert!(w.services.errors.is_empty(), "{:?}", w.services.errors);
        cleaned.extend(w.services.clean);
    }
    // Log files only on the data table (no compaction here): nothing of it to clean; the
    // metadata table compacted every 10 delta commits and cleans its older slices.
    assert!(cleaned.iter().all(|c| c.table == "metadata"), "{cleaned:?}");
    assert!(!cleaned.is_empty(), "the metadata table's clean ran");
    let mdt_timeline = dir.join(".hoodie/metadata/.hoodie/timeline");
    let names: Vec<String> = std::fs::read_dir(&mdt_timeline)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.ends_with(".clean")), "{names:?}");
    // The initial slices of the metadata table are gone, reads are unchanged.
    let files = std::fs::read_dir(dir.join(".hoodie/metadata/files")).unwrap();
    let bases: Vec<String> = files
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".hfile"))
        .collect();
    assert!(
        bases
            .iter()
            .all(|n| !n.ends_with("_00000000000000000.hfile")),
        "{bases:?}"
    );
    assert_eq!(mdt_files(&dir).await, data_files(&dir));
    let ours = our_rows(&dir, ReadOptions::default()).await;
    assert_eq!(ours.len(), 8);
    assert_eq!(hudi_rs_rows(&dir, &[]), ours);
}

/// A clean that dies at the k-th request that changes storage, for every k: the last
/// snapshot reads the same meanwhile, and the next clean (or, every other k, the next
/// write's automatic clean) finishes it from its plan, leaving what a clean that did not
/// die leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_cut_short_at_any_request_is_finished_next_time() {
    let base = dir_of("crash-base");
    create(&base, TableType::CopyOnWrite).await;
    let off = options(&[("hoodie.clean.automatic", "false")]);
    for n in 0..13 {
        write_n(&base, n, &off).await;
    }
    let rows = our_rows(&base, ReadOptions::default()).await;
    let keep = options(&[("hoodie.clean.commits.retained", "3")]);
    // A clean that does not die, on a copy: what the others must end with.
    let clean_copy = dir_of("crash-reference");
    common::copy_dir(&base, &clean_copy);
    open(&clean_copy).await.clean(&keep).await.unwrap();
    let reference = data_files(&clean_copy);
    let mut k = 1;
    loop {
        let dir = dir_of(&format!("crash-{k}"));
        common::copy_dir(&base, &dir);
        let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&dir)), k));
        let table = Table::open(crash.clone()).await.unwrap();
        let outcome = table.clean(&keep).await;
        if !crash.crashed() {
            outcome.expect("a clean that did not crash");
            assert_eq!(data_files(&dir), reference);
            let _ = std::fs::remove_dir_all(&dir);
            break;
        }
        assert!(outcome.is_err(), "k={k}");
        keep_crashed(&dir, &format!("clean_{k}"));
        assert_eq!(our_rows(&dir, ReadOptions::default()).await, rows, "k={k}");
        if !k.is_multiple_of(2) {
            let done = open(&dir).await.clean(&keep).await.expect("finish");
            assert!(done.iter().any(|c| c.table == "data"), "k={k}: {done:?}");
        } else {
            // The next write's automatic clean finishes it (and may plan the next one).
            let mut with = keep.clone();
            with.insert("hoodie.clean.automatic".into(), "true".into());
            let w = write_n(&dir, 100, &with).await;
            assert!(
                w.services.errors.is_empty(),
                "k={k}: {:?}",
                w.services.errors
            );
        }
        let timeline: Vec<String> = std::fs::read_dir(dir.join(".hoodie/timeline"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let pending: Vec<&String> = timeline
            .iter()
            .filter(|n| {
                n.contains(".clean.")
                    && !timeline
                        .iter()
                        .any(|c| c.ends_with(".clean") && c.starts_with(&n[..17]))
            })
            .collect();
        assert!(pending.is_empty(), "k={k}: {pending:?}");
        if !k.is_multiple_of(2) {
            assert_eq!(data_files(&dir), reference, "k={k}");
            assert_eq!(our_rows(&dir, ReadOptions::default()).await, rows, "k={k}");
        }
        assert_eq!(mdt_files(&dir).await, data_files(&dir), "k={k}");
        assert_eq!(
            hudi_rs_rows(&dir, &[]),
            our_rows(&dir, ReadOptions::default()).await,
            "k={k}"
        );
        let _ = std::fs::remove_dir_all(&dir);
        k += 1;
        assert!(k < 100, "a clean of a few files takes fewer requests");
    }
    assert!(k > 5, "the clean was cut at {} points", k - 1);
}

/// A write whose automatic clean is the metadata table's own, cut at every request (its own
/// and its clean's): meanwhile the table reads the last snapshot; the next write finishes or
/// rolls back what was left, and the metadata table lists exactly the files on storage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_table_clean_cut_short_at_any_request_is_finished_next_time() {
    let dir = dir_of("mdt-crash-base");
    let before = dir_of("mdt-crash-before");
    create(&dir, TableType::MergeOnRead).await;
    let none = BTreeMap::new();
    // Write until a write cleans the metadata table; `before` is the table just before it.
    let mut n = 0;
    loop {
        let _ = std::fs::remove_dir_all(&before);
        common::copy_dir(&dir, &before);
        let w = write_n(&dir, n, &none).await;
        if w.services.clean.iter().any(|c| c.table == "metadata") {
            break;
        }
        n += 1;
        assert!(n < 60, "no metadata-table clean in 60 writes");
    }
    let rows = our_rows(&before, ReadOptions::default()).await;
    let mut k = 1;
    loop {
        let t = dir_of(&format!("mdt-crash-{k}"));
        common::copy_dir(&before, &t);
        let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&t)), k));
        let table = Table::open(crash.clone()).await.unwrap();
        let batches = decode_input(&table, &batch(n)).await;
        let outcome = table
            .write(&batches, &WriteOptions::new(Operation::Upsert))
            .await;
        if !crash.crashed() {
            let w = outcome.expect("a write that did not crash");
            assert!(w.services.clean.iter().any(|c| c.table == "metadata"));
            let _ = std::fs::remove_dir_all(&t);
            break;
        }
        keep_crashed(&t, &format!("mdt_clean_{k}"));
        // Cut in the write: the last snapshot; cut in its clean: the write's commit (its
        // error is the clean's, reported beside the commit).
        let now = our_rows(&t, ReadOptions::default()).await;
        match &outcome {
            Err(_) => assert_eq!(now, rows, "k={k}"),
            Ok(w) => assert!(!w.services.errors.is_empty(), "k={k}"),
        }
        let next = write_n(&t, n + 1, &none).await;
        assert!(
            next.services.errors.is_empty(),
            "k={k}: {:?}",
            next.services.errors
        );
        let timeline = t.join(".hoodie/metadata/.hoodie/timeline");
        let names: Vec<String> = std::fs::read_dir(&timeline)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let pending_cleans = names
            .iter()
            .filter(|p| p.ends_with(".clean.requested"))
            .filter(|p| {
                !names
                    .iter()
                    .any(|c| c.ends_with(".clean") && c.starts_with(&p[..17]))
            })
            .count();
        assert_eq!(pending_cleans, 0, "k={k}: {names:?}");
        assert_eq!(mdt_files(&t).await, data_files(&t), "k={k}");
        assert_eq!(our_rows(&t, ReadOptions::default()).await.len(), 8, "k={k}");
        let _ = std::fs::remove_dir_all(&t);
        k += 1;
        assert!(k < 400, "a write and its clean take fewer requests");
    }
    assert!(k > 40, "cut at {} points", k - 1);
}

/// Under optimistic concurrency with the storage lock: writes clean after their commits (the
/// lock taken only when a clean has work), two writers at once leave one clean per plan, and
/// the table reads the same in both readers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleans_under_the_storage_lock() {
    let dir = dir_of("occ");
    create(&dir, TableType::CopyOnWrite).await;
    let occ = options(&[
        (
            "hoodie.write.concurrency.mode",
            "optimistic_concurrency_control",
        ),
        (
            "hoodie.write.lock.provider",
            "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider",
        ),
        ("hoodie.write.lock.wait_time_ms_between_retry", "20"),
        ("hoodie.clean.commits.retained", "3"),
    ]);
    let mut cleaned = 0;
    for n in 0..8 {
        let w = write_n(&dir, n, &occ).await;
        assert!(w.services.errors.is_empty(), "{:?}", w.services.errors);
        cleaned += w.services.clean.len();
    }
    assert!(cleaned >= 3, "{cleaned} cleans");
    // Two writers (each on its own keys) commit and clean at once.
    let one_row = |n: u64, i: usize| {
        let (dir, occ) = (&dir, &occ);
        async move {
            let table = open(dir).await;
            let rows = vec![batch(n)[i].clone()];
            let mut o = WriteOptions::new(Operation::Upsert);
            o.options = occ.clone();
            o.commit_retries = 5;
            table.write(&decode_input(&table, &rows).await, &o).await
        }
    };
    let (a, b) = futures::join!(one_row(20, 0), one_row(21, 1));
    for w in [a.expect("writer a"), b.expect("writer b")] {
        assert!(w.services.errors.is_empty(), "{:?}", w.services.errors);
    }
    let lock: Value =
        serde_json::from_slice(&std::fs::read(dir.join(".hoodie/.locks/table_lock.json")).unwrap())
            .unwrap();
    assert_eq!(lock["expired"], json!(true), "released: {lock}");
    let names: Vec<String> = std::fs::read_dir(dir.join(".hoodie/timeline"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let requested = names
        .iter()
        .filter(|n| n.ends_with(".clean.requested"))
        .count();
    let completed = names.iter().filter(|n| n.ends_with(".clean")).count();
    assert_eq!(requested, completed, "{names:?}");
    assert_eq!(mdt_files(&dir).await, data_files(&dir));
    assert_eq!(
        hudi_rs_rows(&dir, &[]),
        our_rows(&dir, ReadOptions::default()).await
    );
}

/// Requested times of writes left pending on the timeline (failed writes).
fn pending_writes(dir: &Path) -> BTreeSet<String> {
    let names: Vec<String> = std::fs::read_dir(dir.join(".hoodie/timeline"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let completed = |t: &str| {
        names
            .iter()
            .any(|n| n.starts_with(&format!("{t}_")) && n.ends_with(".deltacommit"))
    };
    names
        .iter()
        .filter_map(|n| n.strip_suffix(".deltacommit.requested"))
        .filter(|t| !completed(t))
        .map(str::to_string)
        .collect()
}

/// A write that dies partway through on a Merge-On-Read table.
async fn failed_write(dir: &Path, n: u64, opts: &BTreeMap<String, String>) {
    let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(dir)), 5));
    let table = Table::open(crash.clone()).await.unwrap();
    let batches = decode_input(&table, &batch(n)).await;
    let mut o = WriteOptions::new(Operation::Upsert);
    o.options = opts.clone();
    assert!(table.write(&batches, &o).await.is_err() && crash.crashed());
}

/// Under Hudi's LAZY failed-writes policy a failed write waits for the cleaner, which rolls
/// it back before cleaning (Java's `rollbackFailedWrites`): later writes leave it, a clean
/// under the default EAGER policy leaves it to the next write, a LAZY clean rolls it back,
/// and so does a single writer's automatic clean after its commit. Reads never change.
#[tokio::test]
async fn lazy_failed_writes_are_rolled_back_by_the_cleaner() {
    let dir = dir_of("lazy-rollback");
    create(&dir, TableType::MergeOnRead).await;
    let lazy = options(&[
        ("hoodie.cleaner.policy.failed.writes", "LAZY"),
        ("hoodie.clean.automatic", "false"),
    ]);
    write_n(&dir, 0, &lazy).await;
    failed_write(&dir, 1, &lazy).await;
    let failed = pending_writes(&dir);
    assert_eq!(failed.len(), 1, "{failed:?}");
    let w = write_n(&dir, 2, &lazy).await;
    assert!(w.rolled_back.is_empty(), "{:?}", w.rolled_back);
    assert_eq!(pending_writes(&dir), failed, "a LAZY write leaves it");
    let rows = our_rows(&dir, ReadOptions::default()).await;

    let eager = open(&dir)
        .await
        .clean_reporting_rollbacks(&options(&[]))
        .await;
    assert!(eager.unwrap().rolled_back.is_empty());
    assert_eq!(pending_writes(&dir), failed, "an EAGER clean leaves it");

    let done = open(&dir).await.clean_reporting_rollbacks(&lazy).await;
    let rolled: BTreeSet<String> = (done.unwrap().rolled_back.iter())
        .map(|r| r.instant.clone())
        .collect();
    assert_eq!(rolled, failed);
    assert!(pending_writes(&dir).is_empty());
    assert_eq!(our_rows(&dir, ReadOptions::default()).await, rows);

    // The automatic clean after a single LAZY writer's commit.
    failed_write(&dir, 3, &lazy).await;
    let failed = pending_writes(&dir);
    assert_eq!(failed.len(), 1, "{failed:?}");
    let mut auto = lazy.clone();
    auto.insert("hoodie.clean.automatic".into(), "true".into());
    let w = write_n(&dir, 4, &auto).await;
    assert!(w.services.errors.is_empty(), "{:?}", w.services.errors);
    let rolled: BTreeSet<String> = w.rolled_back.iter().map(|r| r.instant.clone()).collect();
    assert_eq!(rolled, failed);
    assert!(pending_writes(&dir).is_empty());
    assert_eq!(our_rows(&dir, ReadOptions::default()).await.len(), 8);
}
