//! Crash safety of writes: the process "dies" at the k-th request that changes storage
//! (that request and every later one fail), for every k of a clean write. After each
//! crash this engine and hudi-rs read exactly the previous snapshot (or the new one, once
//! the commit point was passed); then a new write rolls the leftovers back with a rollback
//! instant (data table and metadata table) and both readers see the previous snapshot plus
//! the write. A rollback that itself dies at any request is finished by the next write.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use helpers::*;
use hudi_edge::read::ReadOptions;
use hudi_edge::storage::crash::CrashAfter;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::write::{Operation, WriteResult};
use hudi_edge::Table;
use serde_json::{Map, Value};

const NEVER: u64 = u64::MAX;

/// Removes a table copy unless `HUDI_EDGE_KEEP_CRASH_TABLES` is set (to inspect them).
fn discard(dir: &Path) {
    if std::env::var_os("HUDI_EDGE_KEEP_CRASH_TABLES").is_none() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

async fn open_crashing(dir: &Path, fail_from: u64) -> (Table, Arc<CrashAfter>) {
    let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(dir)), fail_from));
    let table = Table::open(crash.clone()).await.expect("open");
    (table, crash)
}

/// Writes `batch`, the k-th mutating request and all later ones failing.
async fn write_crashing(
    dir: &Path,
    batch: &[Map<String, Value>],
    fail_from: u64,
) -> (hudi_edge::Result<WriteResult>, u64) {
    let (table, crash) = open_crashing(dir, fail_from).await;
    // The write alone: its inline compaction has its own crash test
    // (tests/write_compaction.rs).
    let result = write_on_with(&table, batch, Operation::Upsert, NO_INLINE_COMPACTION).await;
    // Nothing of the write may still be running once it returned, failed or not.
    assert_eq!(crash.abandoned(), 0, "requests left running by the write");
    (result, crash.mutations())
}

/// Two updates and one insert, in the input form.
async fn upsert_batch(dir: &Path) -> Vec<Map<String, Value>> {
    let table = open(dir).await;
    let config = table.config().clone();
    let rows = input_rows(dir).await;
    let edit = editable(&table, &rows[0]).await.expect("a column to edit");
    let mut batch: Vec<Map<String, Value>> = rows[..2]
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut u = r.clone();
            u.insert(edit.clone(), Value::from(format!("crash-edit-{i}")));
            u
        })
        .collect();
    let mut fresh = rows[2].clone();
    for f in &config.record_key_fields {
        let value = match fresh.get(f) {
            Some(Value::Number(_)) => Value::from(912_345),
            _ => Value::from("CRASH-NEW"),
        };
        fresh.insert(f.clone(), value);
    }
    batch.push(fresh);
    batch
}

/// Files under the table that belong to instant `t`: timeline files (data and metadata
/// table), data and metadata files, the files in its marker folder.
fn leftovers_of(dir: &Path, t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            // Empty directories (a local store keeps them) are not files.
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            // Markers are named `MARKERS0`, `MARKERS.type` or `<file>.marker.<type>`
            // inside the instant's folder: the folder names the instant.
            let in_markers = p.to_string_lossy().contains(&format!("/.temp/{t}/"));
            let of_t = name.starts_with(&format!("{t}."))
                || name.starts_with(&format!("{t}_"))
                || name.contains(&format!("_{t}."))
                || in_markers;
            if of_t {
                out.push(p.display().to_string());
            }
        }
    }
    out
}

/// Pending instants left on the data and metadata timelines.
fn pending_instants(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for tl in [".hoodie/timeline", ".hoodie/metadata/.hoodie/timeline"] {
        let Ok(entries) = std::fs::read_dir(dir.join(tl)) else {
            continue;
        };
        let names: Vec<String> = entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        for n in &names {
            if n.ends_with(".inflight") || n.ends_with(".requested") {
                let t = n.split('.').next().unwrap();
                if !names.iter().any(|m| m.starts_with(&format!("{t}_"))) {
                    out.push(format!("{tl}/{n}"));
                }
            }
        }
    }
    out.sort();
    out
}

struct Snapshots {
    before: Vec<String>,
    after_data: Vec<String>,
}

/// Runs the clean write once: the number of mutating requests and both snapshots.
async fn reference(fixture: &str, name: &str, mut hudi: Option<&mut HudiRs>) -> (u64, Snapshots) {
    let dir = common::table_copy(fixture, "write_crash", &format!("{name}-clean"));
    let before = our_rows(&dir, ReadOptions::default()).await;
    if let Some(h) = hudi.as_deref_mut() {
        same_rows(&h.rows(&dir), &before, &format!("{name}: hudi-rs before"));
    }
    let batch = upsert_batch(&dir).await;
    let (result, n) = write_crashing(&dir, &batch, NEVER).await;
    let result = result.expect("clean write");
    assert!(
        result.rolled_back.is_empty(),
        "{name}: nothing to roll back"
    );
    let after = our_rows(&dir, ReadOptions::default()).await;
    if let Some(h) = hudi {
        same_rows(&h.rows(&dir), &after, &format!("{name}: hudi-rs after"));
    }
    assert_ne!(data_only(&before), data_only(&after));
    discard(&dir);
    (
        n,
        Snapshots {
            before,
            after_data: data_only(&after),
        },
    )
}

/// The state after a crash at request `k` is readable as before (or after, once the
/// commit point passed); returns whether the crashed write committed.
async fn check_crashed(
    dir: &Path,
    what: &str,
    result: &hudi_edge::Result<WriteResult>,
    snaps: &Snapshots,
    hudi: Option<&mut HudiRs>,
) -> bool {
    let committed = result.is_ok();
    let rows = our_rows(dir, ReadOptions::default()).await;
    if committed {
        same_rows(&data_only(&rows), &snaps.after_data, what);
    } else {
        same_rows(&rows, &snaps.before, what);
    }
    if let Some(h) = hudi {
        same_rows(&h.rows(dir), &rows, &format!("{what}: hudi-rs"));
    }
    committed
}

/// A write that finds leftovers: it rolls them back and commits; both readers see the
/// write, and nothing of the failed instant is left.
async fn recover(
    dir: &Path,
    what: &str,
    batch: &[Map<String, Value>],
    snaps: &Snapshots,
    expect_rollback: bool,
    hudi: Option<&mut HudiRs>,
) -> WriteResult {
    let (result, _) = write_crashing(dir, batch, NEVER).await;
    let result = result.unwrap_or_else(|e| panic!("{what}: recovery write: {e}"));
    assert_eq!(
        !result.rolled_back.is_empty(),
        expect_rollback,
        "{what}: rollbacks {:?}",
        result.rolled_back
    );
    for rb in &result.rolled_back {
        let left = leftovers_of(dir, &rb.instant);
        assert!(left.is_empty(), "{what}: left of {}: {left:?}", rb.instant);
    }
    assert_eq!(pending_instants(dir), Vec::<String>::new(), "{what}");
    let rows = our_rows(dir, ReadOptions::default()).await;
    same_rows(&data_only(&rows), &snaps.after_data, what);
    if let Some(h) = hudi {
        same_rows(&h.rows(dir), &rows, &format!("{what}: hudi-rs"));
    }
    result
}

/// Every k for `fixture`; hudi-rs reads every k when `hudi_every` is true, else every
/// third (`None`: never — it reads columns by name, which tables evolved on read defeat).
async fn crash_every_request(fixture: &str, name: &str, hudi_every: Option<bool>) {
    let started = Instant::now();
    let mut hudi = hudi_every.map(|_| HudiRs::start());
    let (n, snaps) = reference(fixture, name, hudi.as_mut()).await;
    let mut commit_point = None;
    for k in 1..=n {
        let dir = common::table_copy(fixture, "write_crash", &format!("{name}-{k}"));
        let batch = upsert_batch(&dir).await;
        let what = format!("{name}: crash at request {k} of {n}");
        let (result, _) = write_crashing(&dir, &batch, k).await;
        let use_hudi = hudi_every.is_some_and(|every| every || k % 3 == 0 || k == n);
        let committed = check_crashed(
            &dir,
            &what,
            &result,
            &snaps,
            hudi.as_mut().filter(|_| use_hudi),
        )
        .await;
        if committed && commit_point.is_none() {
            commit_point = Some(k);
        }
        // Request 1 is the requested instant: a crash there leaves nothing to roll back.
        recover(
            &dir,
            &what,
            &batch,
            &snaps,
            !committed && k > 1,
            hudi.as_mut().filter(|_| use_hudi),
        )
        .await;
        discard(&dir);
    }
    eprintln!(
        "{name}: {n} mutating requests per write, commit point at request {}, {:.1} s for all k",
        // No crash before the last request left a commit: the last request is the commit point.
        commit_point.map_or(n, |k| k - 1),
        started.elapsed().as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mor_with_metadata_table_every_k() {
    crash_every_request(
        "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
        "mor_mdt",
        Some(true),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cow_with_metadata_table_every_k() {
    crash_every_request(
        "sample_table/cow/v9_txns_simple_overwrite",
        "cow_mdt",
        Some(false),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cow_without_metadata_table_every_k() {
    crash_every_request(
        "sample_table/cow/v9_txns_simple_nometa",
        "cow_nomdt",
        Some(false),
    )
    .await;
}

/// Tables without meta fields (keys from the key fields) with their metadata table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_meta_fields_every_k() {
    for kind in ["cow", "mor"] {
        crash_every_request(
            &format!("spark_variants/spark_v9_no_meta_fields_{kind}"),
            &format!("{kind}_no_meta_fields"),
            Some(false),
        )
        .await;
    }
}

/// A table whose schema evolved on read: its history files go with the data files, before
/// the commit point, and a rollback removes them with the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mor_evolved_on_read_every_k() {
    crash_every_request(
        "spark_variants/spark_v9_schema_on_read_mor",
        "mor_evolved",
        None,
    )
    .await;
}

/// The rollback itself dies at every request: for the crash that leaves the most behind
/// (everything but the data commit: data files, a completed metadata delta commit), the
/// recovering write is cut at each of its requests; the next write still finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_survives_crashes() {
    let fixture = "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle";
    let name = "rollback_crash";
    let started = Instant::now();
    let mut hudi = HudiRs::start();
    let (n, snaps) = reference(fixture, name, Some(&mut hudi)).await;
    // The last request before the commit point, found by trying from the end.
    let mut last_uncommitted = 0;
    for k in (1..=n).rev() {
        let dir = common::table_copy(fixture, "write_crash", &format!("{name}-probe"));
        let batch = upsert_batch(&dir).await;
        if write_crashing(&dir, &batch, k).await.0.is_err() {
            last_uncommitted = k;
            break;
        }
    }
    assert!(last_uncommitted > 1);
    // How many requests the recovering write makes, rollback included.
    let dir = common::table_copy(fixture, "write_crash", &format!("{name}-probe"));
    let batch = upsert_batch(&dir).await;
    let _ = write_crashing(&dir, &batch, last_uncommitted).await;
    let (result, m) = write_crashing(&dir, &batch, NEVER).await;
    let result = result.expect("recovery");
    assert_eq!(result.rolled_back.len(), 1);
    assert!(
        result.rolled_back[0].metadata_table,
        "{:?}",
        result.rolled_back
    );
    discard(&dir);
    let mut resumed = 0;
    for j in 1..=m {
        let dir = common::table_copy(fixture, "write_crash", &format!("{name}-{j}"));
        let batch = upsert_batch(&dir).await;
        let what = format!("{name}: rollback cut at request {j} of {m}");
        assert!(write_crashing(&dir, &batch, last_uncommitted)
            .await
            .0
            .is_err());
        let (second, _) = write_crashing(&dir, &batch, j).await;
        check_crashed(&dir, &what, &second, &snaps, Some(&mut hudi)).await;
        let left_pending = !pending_instants(&dir).is_empty();
        let result = recover(&dir, &what, &batch, &snaps, left_pending, Some(&mut hudi)).await;
        resumed += result.rolled_back.iter().filter(|r| r.resumed).count();
        discard(&dir);
    }
    assert!(resumed > 0, "no run resumed a pending rollback");
    eprintln!(
        "{name}: crash at request {last_uncommitted} of {n}, then the recovering write ({m} requests) cut at each; {resumed} resumed a pending rollback; {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// A failed write without markers (a writer that keeps none, or lost them): the rollback
/// plans by listing the files that carry the failed instant, as Java's listing strategy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_by_listing_without_markers() {
    for (fixture, name) in [
        ("sample_table/cow/v9_txns_simple_nometa", "listing_cow"),
        (
            "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
            "listing_mor",
        ),
    ] {
        let mut hudi = HudiRs::start();
        let (n, snaps) = reference(fixture, name, Some(&mut hudi)).await;
        let dir = common::table_copy(fixture, "write_crash", &format!("{name}-nomarkers"));
        let batch = upsert_batch(&dir).await;
        // Crash at the commit point: every data file is there.
        let mut k = n;
        while write_crashing(&dir, &batch, k).await.0.is_ok() {
            discard(&dir);
            common::table_copy(fixture, "write_crash", &format!("{name}-nomarkers"));
            k -= 1;
        }
        let _ = std::fs::remove_dir_all(dir.join(".hoodie/.temp"));
        let what = format!("{name}: no markers, crash at {k}");
        check_crashed(
            &dir,
            &what,
            &Err(hudi_edge::HudiError::invalid("x")),
            &snaps,
            Some(&mut hudi),
        )
        .await;
        let result = recover(&dir, &what, &batch, &snaps, true, Some(&mut hudi)).await;
        let rb = &result.rolled_back[0];
        assert!(!rb.files_deleted.is_empty(), "{what}: {rb:?}");
        discard(&dir);
    }
}

/// Leaves a crashed write behind for Apache Hudi Spark to roll back (run by hand, see
/// tests/write/spark_rollback.sh): `HUDI_EDGE_CRASH_DIR=DIR HUDI_EDGE_CRASH_AT=K`.
#[tokio::test]
#[ignore]
async fn leave_a_crashed_write() {
    let (Some(dir), Some(k)) = (
        std::env::var_os("HUDI_EDGE_CRASH_DIR"),
        std::env::var("HUDI_EDGE_CRASH_AT").ok(),
    ) else {
        panic!("set HUDI_EDGE_CRASH_DIR (a copy of a table) and HUDI_EDGE_CRASH_AT");
    };
    let dir = std::path::PathBuf::from(dir);
    let batch = upsert_batch(&dir).await;
    let (result, mutations) = write_crashing(&dir, &batch, k.parse().unwrap()).await;
    assert!(result.is_err(), "the write should have crashed");
    println!("crashed after {mutations} mutating requests");
}
