//! Writers at once under Hudi's storage-based lock (optimistic concurrency), in one process
//! on local copies of Apache Hudi-written tables: a write that loses a conflict fails
//! `CONFLICT` naming the instant that won and leaves nothing behind, or with commit retries
//! commits on the new snapshot; many concurrent writers leave every acknowledged row, no
//! pending instant, no heartbeat, and a snapshot PyPI `hudi` reads the same.
//! (Processes, S3 and the kill / pause / clock-skew cases: tests/write/multi_writer.py.)

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::path::Path;
use std::sync::Arc;

use helpers::*;
use hudi_edge::read::ReadOptions;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::write::{Operation, WriteOptions};
use hudi_edge::Table;
use serde_json::{Map, Value};

const MOR: &str = "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle";
const COW: &str = "sample_table/cow/v9_txns_simple_overwrite";

fn occ(retries: u32) -> WriteOptions {
    let mut o = WriteOptions::new(Operation::Upsert);
    for (k, v) in [
        (
            "hoodie.write.concurrency.mode",
            "optimistic_concurrency_control",
        ),
        (
            "hoodie.write.lock.provider",
            "org.apache.hudi.client.transaction.lock.StorageBasedLockProvider",
        ),
        ("hoodie.write.lock.wait_time_ms_between_retry", "20"),
    ] {
        o.options.insert(k.into(), v.into());
    }
    o.commit_retries = retries;
    o
}

fn with(
    row: &Map<String, Value>,
    key: &str,
    field: &str,
    value: &str,
    order: i64,
) -> Map<String, Value> {
    let mut r = row.clone();
    r.insert("txn_id".into(), Value::from(key));
    r.insert(field.into(), Value::from(value));
    r.insert("txn_ts".into(), Value::from(order));
    r
}

/// A handle on the table at `dir` whose storage holds its first inflight instant (between
/// tagging and writing) until released; `reached` fires when it is held.
async fn held_at_inflight(
    dir: &Path,
) -> (
    Table,
    futures::channel::oneshot::Receiver<()>,
    futures::channel::oneshot::Sender<()>,
) {
    let mut gated = common::hooked::Hooked::new(Arc::new(LocalStorage::new(dir)));
    let (hook, reached, release) = common::hooked::gate_once(|path| {
        path.starts_with(".hoodie/timeline/")
            && path.ends_with("inflight")
            && !path.contains("rollback")
    });
    gated.on_put = hook;
    (
        Table::open(Arc::new(gated)).await.unwrap(),
        reached,
        release,
    )
}

/// `template` as one row for key `key` with `merchant_name` `value`, decoded through `table`.
async fn merchant_row(
    table: &Table,
    template: &Map<String, Value>,
    (key, value, order): (&str, &str, i64),
) -> Vec<arrow_array::RecordBatch> {
    decode_input(table, &[with(template, key, "merchant_name", value, order)]).await
}

fn listing(dir: &Path, sub: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.join(sub))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// No pending commit / delta commit, no heartbeat, the lock released.
fn settled(dir: &Path, what: &str) {
    let timeline = listing(dir, ".hoodie/timeline");
    let done: Vec<&str> = timeline
        .iter()
        .filter_map(|n| n.split('.').next().filter(|t| t.contains('_')))
        .map(|t| t.split('_').next().unwrap())
        .collect();
    let pending: Vec<&String> = timeline
        .iter()
        .filter(|n| {
            let t = n.split('.').next().unwrap();
            !t.contains('_') && !done.contains(&t) && !n.contains("rollback") && n.contains('.')
        })
        .collect();
    assert!(pending.is_empty(), "{what}: pending instants {pending:?}");
    assert!(
        listing(dir, ".hoodie/.heartbeat").is_empty(),
        "{what}: heartbeats left"
    );
    let lock = std::fs::read_to_string(dir.join(".hoodie/.locks/table_lock.json")).unwrap();
    assert!(lock.contains("\"expired\":true"), "{what}: {lock}");
}

async fn value_of(dir: &Path, key: &str, field: &str) -> Option<String> {
    let table = open(dir).await;
    let rows = table.read(&ReadOptions::default()).await.unwrap();
    rows.batches
        .iter()
        .flat_map(hudi_edge::api::output::rows_as_json)
        .find(|r| r.get("txn_id").and_then(Value::as_str) == Some(key))
        .and_then(|r| r.get(field).and_then(Value::as_str).map(str::to_string))
}

/// Writer A tags, then waits at its first write while B updates the same key and commits:
/// A fails CONFLICT naming B's instant and leaves nothing; with one retry A commits on top.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_conflict_names_the_winner_and_a_retry_commits() {
    for (fixture, test) in [(COW, "cow"), (MOR, "mor")] {
        for retries in [0u32, 1] {
            let dir = common::table_copy(fixture, "write-concurrent", &format!("{test}-{retries}"));
            let rows = input_rows(&dir).await;
            let template = rows[0].clone();
            let field = "merchant_name";
            // A key of its own, so the snapshot holds it exactly once.
            let key = "CONFLICT-KEY".to_string();
            let setup = open(&dir).await;
            let setup_rows = decode_input(
                &setup,
                &[with(&template, &key, field, "setup", 3_000_000_000_000)],
            )
            .await;
            setup
                .write(&setup_rows, &WriteOptions::new(Operation::Upsert))
                .await
                .unwrap();
            // A's storage holds its first inflight instant (between tagging and writing)
            // until B has committed.
            let (a_table, reached, release) = held_at_inflight(&dir).await;
            let a_rows = decode_input(
                &a_table,
                &[with(&template, &key, field, "from A", 3_000_000_000_002)],
            )
            .await;
            let a_options = occ(retries);
            let a_write = a_table.write(&a_rows, &a_options);
            // B, on its own handle, updates the same key (so the same file group) while A
            // waits; both futures run on this task.
            let b_write = async {
                reached.await.unwrap();
                let b_table = open(&dir).await;
                let b_rows = decode_input(
                    &b_table,
                    &[with(&template, &key, field, "from B", 3_000_000_000_001)],
                )
                .await;
                let b = b_table.write(&b_rows, &occ(0)).await.unwrap();
                release.send(()).unwrap();
                b
            };
            let (a, b) = futures::join!(a_write, b_write);
            let what = format!("{test}, {retries} retries");
            if retries == 0 {
                let e = a.unwrap_err();
                assert_eq!(e.code(), "CONFLICT", "{what}: {e}");
                assert!(e.to_string().contains(&b.instant), "{what}: {e}");
                assert_eq!(value_of(&dir, &key, field).await.as_deref(), Some("from B"));
            } else {
                let a = a.unwrap();
                assert_eq!(a.attempts, 2, "{what}");
                assert!(a.completion_time > b.completion_time, "{what}");
                assert_eq!(value_of(&dir, &key, field).await.as_deref(), Some("from A"));
            }
            settled(&dir, &what);
            same_rows(
                &hudi_rs_rows(&dir, &[]),
                &our_rows(&dir, ReadOptions::default()).await,
                &format!("{what}: hudi-rs"),
            );
        }
    }
}

/// Writer A waits at its inflight instant while B adds a column (`add_columns`) in other file
/// groups and commits: committed after B's, A's narrower schema would become the table's and
/// drop the column, so A fails CONFLICT naming B; with one retry it commits in B's schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_column_added_meanwhile_conflicts_and_a_retry_keeps_it() {
    use arrow_array::{ArrayRef, RecordBatch, StringArray};
    for retries in [0u32, 1] {
        let dir = common::table_copy(COW, "write-concurrent", &format!("added-column-{retries}"));
        let template = input_rows(&dir).await.remove(0);
        let (a_table, reached, release) = held_at_inflight(&dir).await;
        let a_rows = merchant_row(&a_table, &template, ("A-KEY", "A", 1)).await;
        let mut a_options = occ(retries);
        // New keys go to new file groups: no file group in common with B.
        a_options
            .options
            .insert("hoodie.parquet.small.file.limit".into(), "0".into());
        let a_write = a_table.write(&a_rows, &a_options);
        let b_write = async {
            reached.await.unwrap();
            let b_table = open(&dir).await;
            let b_rows = merchant_row(&b_table, &template, ("B-KEY", "B", 1)).await;
            let b = &b_rows[0];
            let mut fields: Vec<_> = b.schema().fields().iter().cloned().collect();
            fields.push(Arc::new(arrow_schema::Field::new(
                "channel",
                arrow_schema::DataType::Utf8,
                true,
            )));
            let mut columns: Vec<ArrayRef> = b.columns().to_vec();
            columns.push(Arc::new(StringArray::from(vec!["web"])));
            let wider =
                RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns).unwrap();
            let mut b_options = occ(0);
            b_options.add_columns = true;
            b_options
                .options
                .insert("hoodie.parquet.small.file.limit".into(), "0".into());
            let b = b_table.write(&[wider], &b_options).await.unwrap();
            release.send(()).unwrap();
            b
        };
        let (a, b) = futures::join!(a_write, b_write);
        let what = format!("{retries} retries");
        if retries == 0 {
            let e = a.unwrap_err();
            assert_eq!(e.code(), "CONFLICT", "{what}: {e}");
            assert!(
                e.to_string().contains(&b.instant) && e.to_string().contains("added columns"),
                "{e}"
            );
        } else {
            assert_eq!(a.unwrap().attempts, 2, "{what}");
        }
        settled(&dir, &what);
        assert_eq!(
            value_of(&dir, "B-KEY", "channel").await.as_deref(),
            Some("web"),
            "{what}"
        );
        let rows = our_rows(&dir, ReadOptions::default()).await;
        assert!(
            rows.iter().all(|r| r.contains("\"channel\"")),
            "{what}: the column stays"
        );
        assert_eq!(
            rows.iter().any(|r| r.contains("A-KEY")),
            retries == 1,
            "{what}"
        );
        same_rows(&hudi_rs_rows(&dir, &[]), &rows, &format!("{what}: hudi-rs"));
    }
}

/// Four writers × four commits at once, new keys each and one shared key every other
/// commit, half retrying: every acknowledged new key is there, refused ones are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_keep_every_acknowledged_commit() {
    for (fixture, test) in [(MOR, "mor"), (COW, "cow")] {
        let dir = common::table_copy(fixture, "write-concurrent-many", test);
        let template = input_rows(&dir).await[0].clone();
        let shared = template["txn_id"].as_str().unwrap().to_string();
        let mut tasks = Vec::new();
        for w in 0..4i64 {
            let (dir, template, shared) = (dir.clone(), template.clone(), shared.clone());
            // Futures of one task, interleaving at every request (the local store's writes
            // run on the blocking pool meanwhile).
            tasks.push(async move {
                let mut out = Vec::new();
                for j in 0..4i64 {
                    let table = open(&dir).await;
                    let key = format!("W{w}-{j}");
                    let mut rows = vec![with(
                        &template,
                        &key,
                        "merchant_name",
                        &key,
                        3_000_000_000_000 + j,
                    )];
                    if j % 2 == 0 {
                        rows.push(with(
                            &template,
                            &shared,
                            "merchant_name",
                            &key,
                            3_000_000_000_000 + j * 10 + w,
                        ));
                    }
                    let batches = decode_input(&table, &rows).await;
                    let r = table.write(&batches, &occ((w % 2) as u32 * 3)).await;
                    out.push((key, r.map(|r| r.completion_time).map_err(|e| e.code())));
                }
                out
            });
        }
        let outcomes: Vec<_> = futures::future::join_all(tasks)
            .await
            .into_iter()
            .flatten()
            .collect();
        let table = open(&dir).await;
        let read = table.read(&ReadOptions::default()).await.unwrap();
        let keys: Vec<String> = read
            .batches
            .iter()
            .flat_map(hudi_edge::api::output::rows_as_json)
            .filter_map(|r| r.get("txn_id").and_then(Value::as_str).map(str::to_string))
            .collect();
        let mut completions = Vec::new();
        for (key, outcome) in &outcomes {
            match outcome {
                Ok(c) => {
                    assert!(keys.contains(key), "{test}: acknowledged {key} missing");
                    completions.push(c.clone());
                }
                Err(code) => {
                    assert_eq!(*code, "CONFLICT", "{test}: {key}");
                    assert!(!keys.contains(key), "{test}: refused {key} present");
                }
            }
        }
        completions.sort();
        completions.dedup();
        assert_eq!(
            completions.len(),
            outcomes.iter().filter(|o| o.1.is_ok()).count()
        );
        assert!(!completions.is_empty(), "{test}: nothing committed");
        settled(&dir, test);
        same_rows(
            &hudi_rs_rows(&dir, &[]),
            &our_rows(&dir, ReadOptions::default()).await,
            &format!("{test}: hudi-rs"),
        );
    }
}

/// The table at `dir` opened on a storage that holds the first listing of `dir_to_hold`'s
/// answer: answers the handle, a receiver told when it is held and the sender that lets it go.
async fn holding_a_listing(
    dir: &Path,
    dir_to_hold: &'static str,
) -> (
    Table,
    futures::channel::oneshot::Receiver<()>,
    futures::channel::oneshot::Sender<()>,
) {
    let mut hooked = common::hooked::Hooked::new(Arc::new(LocalStorage::new(dir)));
    let (hook, listed, release) =
        common::hooked::gate_once(move |prefix| prefix.trim_end_matches('/') == dir_to_hold);
    hooked.after_list = hook;
    (
        Table::open(Arc::new(hooked)).await.unwrap(),
        listed,
        release,
    )
}

/// While a request of `reader` is held: another handle commits `key`, `reader` reloads its
/// timeline, then the request goes on. Answers the commit's instant.
async fn commit_and_refresh_while_held(
    dir: &Path,
    template: &Map<String, Value>,
    key: &str,
    reader: &Table,
    held: futures::channel::oneshot::Receiver<()>,
    release: futures::channel::oneshot::Sender<()>,
) -> String {
    held.await.unwrap();
    let writer = open(dir).await;
    let row = with(template, key, "merchant_name", key, 3_000_000_000_000);
    let rows = decode_input(&writer, &[row]).await;
    // No compaction after it: the commit stays the latest instant.
    let mut options = WriteOptions::new(Operation::Upsert);
    options
        .options
        .insert("hoodie.compact.inline".into(), "false".into());
    let committed = writer.write(&rows, &options).await.unwrap();
    reader.client().reload_timeline().await.unwrap();
    release.send(()).unwrap();
    committed.instant
}

/// A handle's data timeline is refreshed (as a write on it does under the lock, or before a
/// retry) while its metadata table is being opened, after the metadata table's timeline was
/// listed and a commit landed: the open answers for the timeline it started from instead of
/// calling the table behind, and the handle's next ask opens the metadata table anew, so it
/// knows that commit and reads its row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_table_opened_while_the_handle_refreshes_its_timeline() {
    for (fixture, test) in [(MOR, "mor"), (COW, "cow")] {
        let dir = common::table_copy(fixture, "write-concurrent-mdt-open", test);
        let template = input_rows(&dir).await[0].clone();
        let (reader, listed, release) =
            holding_a_listing(&dir, ".hoodie/metadata/.hoodie/timeline").await;
        let key = "LANDED-WHILE-OPENING";
        let open_mdt = reader.metadata_table(&[]);
        let meanwhile =
            commit_and_refresh_while_held(&dir, &template, key, &reader, listed, release);
        let (opened, instant) = futures::join!(open_mdt, meanwhile);
        let opened = opened.unwrap_or_else(|e| panic!("{test}: {e}"));
        assert_ne!(opened.latest_instant().as_deref(), Some(instant.as_str()));
        let now = reader.metadata_table(&[]).await.unwrap();
        assert_eq!(
            now.latest_instant().as_deref(),
            Some(instant.as_str()),
            "{test}: the handle answered with a metadata table older than its timeline"
        );
        let read = reader.read(&ReadOptions::default()).await.unwrap();
        assert_eq!(
            read.plan.stats.planning_source, "metadata_table",
            "{test}: {:?}",
            read.plan.stats.planning_notes
        );
        let found = read
            .batches
            .iter()
            .flat_map(hudi_edge::api::output::rows_as_json)
            .any(|r| r.get("txn_id").and_then(Value::as_str) == Some(key));
        assert!(found, "{test}: the commit the handle shows is not read");
    }
}

/// Archived instants loaded while the handle's timeline is refreshed (a commit landed and the
/// handle listed it): the history joins the timeline held after the load, so the refresh
/// (and the commit it shows) stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_loaded_while_the_handle_refreshes_keeps_the_refresh() {
    let dir = common::table_copy(COW, "write-concurrent-history", "cow");
    let template = input_rows(&dir).await[0].clone();
    let (reader, listed, release) = holding_a_listing(&dir, ".hoodie/timeline/history").await;
    let key = "LANDED-WHILE-LOADING-HISTORY";
    let meanwhile = commit_and_refresh_while_held(&dir, &template, key, &reader, listed, release);
    let (loaded, instant) = futures::join!(reader.load_history(), meanwhile);
    let loaded = loaded.unwrap();
    for (what, timeline) in [("answer", loaded), ("handle", reader.client().timeline())] {
        assert!(timeline.history_loaded, "{what}");
        assert!(
            timeline.completed_write(&instant).is_some(),
            "{what}: the refresh made during the history load was undone"
        );
    }
}

/// A write whose future is dropped at its commit point (the completed instant's put held,
/// the lock held): nothing of it is visible, the lock is neither renewed nor released and no
/// heartbeat beats, so the next writer takes the lock once its validity ran out and rolls the
/// attempt back. (The wasm twin, an `AbortSignal` there: tests/js/concurrency.test.mjs.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_dropped_at_its_commit_point_leaves_nothing_and_its_lease_runs_out() {
    let dir = common::table_copy(COW, "write-concurrent-dropped", "cow");
    let template = input_rows(&dir).await[0].clone();
    let held_instant = Arc::new(std::sync::Mutex::new(None::<String>));
    let seen = held_instant.clone();
    let (hook, reached, _never_released) = common::hooked::gate_once(move |path| {
        let name = path.strip_prefix(".hoodie/timeline/").unwrap_or("");
        let commit_point = !name.contains('/') && name.contains('_') && name.ends_with(".commit");
        if commit_point {
            *seen.lock().unwrap() = name.split('_').next().map(str::to_string);
        }
        commit_point
    });
    let mut hooked = common::hooked::Hooked::new(Arc::new(LocalStorage::new(&dir)));
    hooked.on_put = hook;
    let writer = Table::open(Arc::new(hooked)).await.unwrap();
    let mut options = occ(0);
    for (k, v) in [
        ("hoodie.write.lock.storage.validity.timeout.secs", "10"),
        ("hoodie.write.lock.storage.renew.interval.secs", "1"),
        ("hoodie.client.heartbeat.interval_in_ms", "1000"),
        ("hoodie.client.heartbeat.tolerable.misses", "2"),
    ] {
        options.options.insert(k.into(), v.into());
    }
    let key = "DROPPED-AT-THE-COMMIT-POINT";
    let rows = decode_input(
        &writer,
        &[with(
            &template,
            key,
            "merchant_name",
            key,
            3_000_000_000_000,
        )],
    )
    .await;
    {
        let write = Box::pin(writer.write(&rows, &options));
        match futures::future::select(write, reached).await {
            futures::future::Either::Left((done, _)) => panic!("the write ended: {done:?}"),
            futures::future::Either::Right((_, write)) => drop(write),
        }
    }
    let instant = held_instant.lock().unwrap().clone().unwrap();
    let lock_path = dir.join(".hoodie/.locks/table_lock.json");
    let beat_path = dir.join(".hoodie/.heartbeat").join(&instant);
    let lock_at_drop = std::fs::read(&lock_path).unwrap();
    let beat_at_drop = std::fs::metadata(&beat_path).unwrap().modified().unwrap();
    let held: Value = serde_json::from_slice(&lock_at_drop).unwrap();
    assert_eq!(held["expired"], Value::Bool(false), "{held}");
    // Renewal and beats were every second while the future lived.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(
        std::fs::read(&lock_path).unwrap(),
        lock_at_drop,
        "renewed after the drop"
    );
    assert_eq!(
        std::fs::metadata(&beat_path).unwrap().modified().unwrap(),
        beat_at_drop,
        "beat after the drop"
    );

    let next = open(&dir).await;
    let after = "AFTER-THE-DROPPED-ONE";
    let rows = decode_input(
        &next,
        &[with(
            &template,
            after,
            "merchant_name",
            after,
            3_000_000_000_001,
        )],
    )
    .await;
    let committed = next.write(&rows, &options).await.unwrap();
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let valid_until = held["validUntil"].as_i64().unwrap();
    assert!(
        now_ms >= valid_until + 500,
        "the lock was taken {} ms before its lease (+ drift) ran out",
        valid_until + 500 - now_ms
    );
    let rolled: Vec<&str> = committed
        .rolled_back
        .iter()
        .map(|r| r.instant.as_str())
        .collect();
    assert_eq!(rolled, [instant.as_str()]);
    settled(&dir, "after the dropped write");
    assert!(
        !listing(&dir, ".hoodie/timeline")
            .iter()
            .any(|f| f.starts_with(&instant)),
        "the dropped attempt left instant files"
    );
    assert!(value_of(&dir, after, "merchant_name").await.is_some());
    assert_eq!(
        value_of(&dir, key, "merchant_name").await,
        None,
        "the dropped write is visible"
    );
}

/// A writer that died after taking its instant time but before requesting it (or after
/// committing, before deleting its heartbeat) leaves a heartbeat with no pending instant:
/// the next writer deletes it once expired, and leaves a live one alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_heartbeats_without_a_pending_instant_are_deleted() {
    let dir = common::table_copy(MOR, "write-concurrent-heartbeats", "mor");
    let template = input_rows(&dir).await[0].clone();
    let beats = dir.join(".hoodie/.heartbeat");
    std::fs::create_dir_all(&beats).unwrap();
    let (dead, live) = ("20200101000000000", "20200101000000001");
    for name in [dead, live] {
        std::fs::write(beats.join(name), b"").unwrap();
    }
    // Default heartbeat: 60 s × 2 misses; this one stopped an hour ago.
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(beats.join(dead))
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    let table = open(&dir).await;
    let rows = decode_input(
        &table,
        &[with(
            &template,
            "AFTER-A-DEAD-ONE",
            "merchant_name",
            "x",
            3_000_000_000_000,
        )],
    )
    .await;
    table.write(&rows, &occ(0)).await.unwrap();
    assert_eq!(listing(&dir, ".hoodie/.heartbeat"), [live]);
}

/// Two single writers at once (no lock: outside Hudi's single-writer contract, but what a
/// worker serving requests at once does unless set up for several writers). The second
/// finds the first's instant pending and rolls it back as a failed write while the first is
/// writing its files; the first must then fail CONFLICT at its commit point instead of
/// completing a commit that names deleted files, and the table reads as the second left it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_writer_rolled_back_by_another_does_not_complete() {
    for (fixture, test) in [(MOR, "mor"), (COW, "cow")] {
        let dir = common::table_copy(fixture, "write-concurrent-single", test);
        let template = input_rows(&dir).await[0].clone();
        let mut hooked = common::hooked::Hooked::new(Arc::new(LocalStorage::new(&dir)));
        // The first writer is held at one of its data-file puts (the others go on).
        let (hook, held, release) = common::hooked::gate_once(|path| {
            !path.starts_with(".hoodie/") && (path.ends_with(".parquet") || path.contains(".log."))
        });
        hooked.on_put = hook;
        let first = Table::open(Arc::new(hooked)).await.unwrap();
        let first_rows = merchant_row(&first, &template, ("FIRST", "first", 3)).await;
        let first_options = WriteOptions::new(Operation::Upsert);
        let first_write = first.write(&first_rows, &first_options);
        let second_write = async {
            held.await.unwrap();
            let second = open(&dir).await;
            let second_rows = merchant_row(&second, &template, ("SECOND", "second", 4)).await;
            let done = second
                .write(&second_rows, &WriteOptions::new(Operation::Upsert))
                .await
                .unwrap();
            release.send(()).unwrap();
            done
        };
        let (first_result, done) = futures::future::join(first_write, second_write).await;
        assert_eq!(
            done.rolled_back.len(),
            1,
            "{test}: the first write rolled back as failed"
        );
        let e = first_result.unwrap_err();
        assert_eq!(e.code(), "CONFLICT", "{test}: {e}");
        assert!(e.to_string().contains("rollback"), "{test}: {e}");
        let ours = our_rows(&dir, ReadOptions::default()).await;
        assert!(ours.iter().any(|r| r.contains("SECOND")), "{test}");
        assert!(!ours.iter().any(|r| r.contains("FIRST")), "{test}");
        same_rows(&hudi_rs_rows(&dir, &[]), &ours, &format!("{test}: hudi-rs"));
    }
}

/// Bucket index: writers A and B each put a new key of the same bucket into a partition that
/// has no file group for it; each would start that bucket with its own file id, so they
/// conflict over the bucket (Java's bucket-index conflict strategy), not the file id. A
/// loses (CONFLICT naming B) or, with a retry, joins B's file group: one group per bucket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_starting_the_same_bucket_conflict() {
    use hudi_edge::write::bucket::{bucket_of_file_id, Buckets};
    let buckets = Buckets {
        count: 2,
        hash_fields: vec!["id".into()],
    };
    let key_in = |bucket: u32, skip: usize| {
        (0..)
            .map(|i| format!("bucket-key-{i}"))
            .filter(|k| buckets.of(k).unwrap() == bucket)
            .nth(skip)
            .unwrap()
    };
    let (a_key, b_key) = (key_in(1, 0), key_in(1, 1));
    for retries in [0u32, 1] {
        let what = format!("bucket, {retries} retries");
        let dir = common::table_copy(
            "spark_variants/spark_v9_bucket_cow",
            "write-concurrent",
            &format!("bucket-{retries}"),
        );
        let template = input_rows(&dir).await[0].clone();
        let row = |key: &str| {
            let mut r = template.clone();
            r.insert("id".into(), Value::from(key));
            r.insert("part".into(), Value::from("p9"));
            r
        };
        let options = |retries: u32| {
            let mut o = occ(retries);
            for (k, v) in [
                ("hoodie.index.type", "BUCKET"),
                ("hoodie.bucket.index.num.buckets", "2"),
                ("hoodie.bucket.index.hash.field", "id"),
            ] {
                o.options.insert(k.into(), v.into());
            }
            o
        };
        let (a_table, reached, release) = held_at_inflight(&dir).await;
        let a_rows = decode_input(&a_table, &[row(&a_key)]).await;
        let a_options = options(retries);
        let a_write = a_table.write(&a_rows, &a_options);
        let b_write = async {
            reached.await.unwrap();
            let b_table = open(&dir).await;
            let b_rows = decode_input(&b_table, &[row(&b_key)]).await;
            let b = b_table.write(&b_rows, &options(0)).await.unwrap();
            release.send(()).unwrap();
            b
        };
        let (a, b) = futures::join!(a_write, b_write);
        if retries == 0 {
            let e = a.unwrap_err();
            assert_eq!(e.code(), "CONFLICT", "{what}: {e}");
            assert!(e.to_string().contains(&b.instant), "{what}: {e}");
        } else {
            assert_eq!(a.unwrap().attempts, 2, "{what}");
        }
        settled(&dir, &what);
        let plan = open(&dir)
            .await
            .plan(&ReadOptions::default())
            .await
            .unwrap();
        let groups: Vec<&str> = (plan.file_slices.iter())
            .filter(|s| s.partition == "part=p9")
            .map(|s| s.file_id.as_str())
            .collect();
        assert_eq!(
            groups.len(),
            1,
            "{what}: one file group for bucket 1: {groups:?}"
        );
        assert_eq!(bucket_of_file_id(groups[0]), Some(1), "{what}");
        let rows = our_rows(&dir, ReadOptions::default()).await;
        let held = |k: &str| {
            rows.iter()
                .filter(|r| r.contains(&format!("\"{k}\"")))
                .count()
        };
        assert_eq!(held(&b_key), 1, "{what}");
        assert_eq!(held(&a_key), retries as usize, "{what}");
    }
}
