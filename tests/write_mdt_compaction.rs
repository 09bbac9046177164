//! Metadata-table compaction: 25 small upserts into copies of fixtures whose MDT has files,
//! column_stats, partition_stats and record_index. A compaction runs at the start of the
//! write that finds `hoodie.metadata.compact.max.delta.commits` (10) delta commits since the
//! last one; afterwards this engine's snapshot equals the model, hudi-rs returns the same
//! rows, no MDT file group's latest slice has more than 10 log files, and a one-key read
//! through the record index costs a bounded number of requests. A compaction that dies at
//! any request leaves the MDT readable and is completed by the next write.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use helpers::*;
use hudi_edge::expr::parse_filter;
use hudi_edge::read::ReadOptions;
use hudi_edge::storage::crash::CrashAfter;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::write::{Operation, WriteOptions, WriteResult};
use hudi_edge::Table;
use serde_json::{Map, Value};

const MAX: usize = 10;

fn timeline_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join(".hoodie/metadata/.hoodie/timeline"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// (delta commits since the last completed MDT compaction, that compaction's time).
fn mdt_state(dir: &Path) -> (usize, Option<String>) {
    let names = timeline_names(dir);
    let last = names
        .iter()
        .filter(|n| n.ends_with(".commit"))
        .filter_map(|n| n.split('_').next().map(str::to_string))
        .max();
    let mut deltas: Vec<&str> = names
        .iter()
        .filter(|n| n.contains(".deltacommit"))
        .filter_map(|n| n.split(['_', '.']).next())
        .filter(|t| last.as_deref().is_none_or(|c| *t > c))
        .collect();
    deltas.sort();
    deltas.dedup();
    (deltas.len(), last)
}

/// The most log files in any MDT file group's latest slice (v8+ rule: a log file belongs to
/// the slice with the greatest committed base instant at or before its completion time).
fn max_logs_in_latest_slice(dir: &Path) -> usize {
    let names = timeline_names(dir);
    let completion: HashMap<String, String> = names
        .iter()
        .filter(|n| n.ends_with(".deltacommit"))
        .filter_map(|n| {
            let (t, rest) = n.split_once('_')?;
            Some((t.to_string(), rest.split('.').next()?.to_string()))
        })
        .collect();
    let committed_bases: Vec<String> = names
        .iter()
        .filter(|n| n.ends_with(".commit"))
        .filter_map(|n| n.split('_').next().map(str::to_string))
        .collect();
    let mut worst = 0;
    for p in ["files", "column_stats", "partition_stats", "record_index"] {
        let mut bases: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut logs: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in std::fs::read_dir(dir.join(".hoodie/metadata").join(p)).unwrap() {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(rest) = n.strip_prefix('.') {
                if let Some((id, tail)) = rest.split_once('_') {
                    if let Some(c) = completion.get(tail.split('.').next().unwrap()) {
                        logs.entry(id.to_string()).or_default().push(c.clone());
                    }
                }
            } else if n.ends_with(".hfile") {
                let id = n.split('_').next().unwrap().to_string();
                let t = n.rsplit('_').next().unwrap().trim_end_matches(".hfile");
                if t.starts_with("00000000000000") || committed_bases.iter().any(|c| c == t) {
                    bases.entry(id).or_default().push(t.to_string());
                }
            }
        }
        for (id, completions) in logs {
            let latest = bases.get(&id).and_then(|b| b.iter().max().cloned());
            let n = completions
                .iter()
                .filter(|c| latest.as_ref().is_none_or(|b| *c >= b))
                .count();
            worst = worst.max(n);
        }
    }
    worst
}

/// MDT compactions requested and not completed.
fn pending_compactions(dir: &Path) -> Vec<String> {
    let names = timeline_names(dir);
    names
        .iter()
        .filter_map(|n| n.strip_suffix(".compaction.requested"))
        .filter(|t| {
            !names
                .iter()
                .any(|m| m.starts_with(&format!("{t}_")) && m.ends_with(".commit"))
        })
        .map(str::to_string)
        .collect()
}

/// Requests of a fresh reader asking for one key (the record index prunes to its file).
async fn one_key_read(dir: &Path, field: &str, value: &Value) -> (u64, usize) {
    let table = open(dir).await;
    let literal = match value {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    };
    let options = ReadOptions {
        filters: vec![parse_filter(&format!("{field} = {literal}")).unwrap()],
        ..ReadOptions::default()
    };
    let result = table.read(&options).await.expect("read");
    let rows = result.batches.iter().map(|b| b.num_rows()).sum();
    (table.io().requests, rows)
}

async fn write_with(dir: &Path, rows: &[Map<String, Value>], max: usize) -> WriteResult {
    let table = open(dir).await;
    write_opts(&table, rows, max)
        .await
        .unwrap_or_else(|e| panic!("write into {}: {e}", dir.display()))
}

async fn write_opts(
    table: &Table,
    rows: &[Map<String, Value>],
    max: usize,
) -> hudi_edge::Result<WriteResult> {
    let batches = decode_input(table, rows).await;
    let mut options = WriteOptions::new(Operation::Upsert);
    options.options.insert(
        "hoodie.metadata.compact.max.delta.commits".into(),
        max.to_string(),
    );
    // The data table's compactions would add metadata delta commits of their own.
    options
        .options
        .insert("hoodie.compact.inline".into(), "false".into());
    // So would a clean: these tests count the writes' alone.
    options
        .options
        .insert("hoodie.clean.automatic".into(), "false".into());
    table.write(&batches, &options).await
}

/// The i-th upsert: one update of an existing row and one new key.
struct Upserts {
    fields: Vec<String>,
    edit: String,
    ordering: Option<String>,
    rows: Vec<Map<String, Value>>,
    model: BTreeMap<String, Map<String, Value>>,
    repeated: Vec<Map<String, Value>>,
}

impl Upserts {
    async fn new(dir: &Path) -> Upserts {
        let table = open(dir).await;
        let fields = table.config().record_key_fields.clone();
        let ordering = table.config().ordering_fields.first().cloned();
        let all = input_rows(dir).await;
        let mut seen: HashMap<String, usize> = HashMap::new();
        for r in &all {
            *seen.entry(key_of(&fields, r)).or_default() += 1;
        }
        let rows: Vec<_> = all
            .iter()
            .filter(|r| seen[&key_of(&fields, r)] == 1)
            .cloned()
            .collect();
        let edit = editable(&table, &rows[0]).await.expect("a column to edit");
        // A key in two file groups (a fixture quirk) is left alone and kept twice.
        let repeated = all
            .iter()
            .filter(|r| seen[&key_of(&fields, r)] > 1)
            .cloned()
            .collect();
        let model = rows
            .iter()
            .map(|r| (key_of(&fields, r), r.clone()))
            .collect();
        Upserts {
            fields,
            edit,
            ordering,
            rows,
            model,
            repeated,
        }
    }

    fn batch(&mut self, i: usize) -> Vec<Map<String, Value>> {
        let mut u = self.rows[i % self.rows.len()].clone();
        u.insert(self.edit.clone(), Value::from(format!("compaction-{i}")));
        if let Some(Value::Number(n)) = self.ordering.as_ref().and_then(|o| u.get(o)) {
            if let Some(v) = n.as_i64() {
                let o = self.ordering.clone().unwrap_or_default();
                u.insert(o, Value::from(v + 1));
            }
        }
        let mut n = self.rows[0].clone();
        for f in &self.fields {
            let v = match n.get(f) {
                Some(Value::Number(_)) => Value::from(800_000 + i as i64),
                _ => Value::from(format!("MDTC-{i:03}")),
            };
            n.insert(f.clone(), v);
        }
        for r in [&u, &n] {
            self.model.insert(key_of(&self.fields, r), r.clone());
        }
        let at = i % self.rows.len();
        self.rows[at] = u.clone();
        vec![u, n]
    }

    fn model_rows(&self) -> Vec<Map<String, Value>> {
        let mut out: Vec<_> = self.model.values().cloned().collect();
        out.extend(self.repeated.iter().cloned());
        out
    }
}

async fn twenty_five_upserts(fixture: &str, test: &str) {
    let dir = common::table_copy(fixture, "write_mdt_compaction", test);
    let plain = common::table_copy(fixture, "write_mdt_compaction", &format!("{test}_never"));
    let mut upserts = Upserts::new(&dir).await;
    let mut never = Upserts::new(&plain).await;
    let probe_key = upserts.rows[1].clone();
    let field = upserts.fields[0].clone();
    let (before, rows) = one_key_read(&dir, &field, &probe_key[&field]).await;
    assert_eq!(rows, 1, "{fixture}: one row for the probe key");

    let (mut count, _) = mdt_state(&dir);
    let mut compactions = Vec::new();
    for i in 0..25 {
        let batch = upserts.batch(i);
        let due = count >= MAX;
        let result = write_with(&dir, &batch, MAX).await;
        assert_eq!(
            (result.records.updated, result.records.inserted),
            (1, 1),
            "{fixture} write {i}"
        );
        let c = &result.metadata_table.compaction;
        assert_eq!(
            c.is_some(),
            due,
            "{fixture} write {i}: {count} delta commits"
        );
        if let Some(c) = c {
            assert!(!c.resumed);
            assert!(c.instant < result.instant, "{fixture}: {c:?}");
            eprintln!(
                "{fixture}: compaction {} before write {i}: {} files, {} requests ({} gets, {} lists, {} puts, {} round trips), {} ms",
                c.instant,
                c.files_written.len(),
                c.io.requests,
                c.io.gets,
                c.io.lists,
                c.io.puts,
                c.io.round_trips,
                c.elapsed_ms
            );
            compactions.push(i);
            count = 0;
        }
        count += 1;
        let (n, last) = mdt_state(&dir);
        assert_eq!(n, count, "{fixture} write {i}: since {last:?}");
        let logs = max_logs_in_latest_slice(&dir);
        assert!(
            logs <= MAX,
            "{fixture} write {i}: {logs} log files in a slice"
        );
        // The same writes, never compacting, for the request counts.
        let never_batch = never.batch(i);
        let r = write_with(&plain, &never_batch, 1000).await;
        assert!(r.metadata_table.compaction.is_none());
    }
    assert!(compactions.len() >= 2, "{fixture}: {compactions:?}");
    eprintln!("{fixture}: compactions before writes {compactions:?}");

    let ours = our_rows(&dir, ReadOptions::default()).await;
    same_rows(
        &data_only(&ours),
        &data_only(&model_rows(&dir, &upserts.model_rows()).await),
        &format!("{fixture}: snapshot after 25 upserts"),
    );
    same_rows(
        &hudi_rs_rows(&dir, &[]),
        &ours,
        &format!("{fixture}: hudi-rs after 25 upserts"),
    );
    // Without the metadata table the same rows (the MDT listing is the one compacted).
    let listed = our_rows(
        &dir,
        ReadOptions {
            use_metadata_table: false,
            data_skipping: false,
            ..ReadOptions::default()
        },
    )
    .await;
    same_rows(&listed, &ours, &format!("{fixture}: listing vs MDT"));

    let (after, rows) = one_key_read(&dir, &field, &probe_key[&field]).await;
    assert_eq!(rows, 1);
    let (uncompacted, rows) = one_key_read(&plain, &field, &probe_key[&field]).await;
    assert_eq!(rows, 1);
    eprintln!(
        "{fixture}: one-key read requests: fixture {before}, after 25 upserts {after} with compaction, {uncompacted} without"
    );
    assert!(after < uncompacted, "{after} vs {uncompacted}");
    assert!(after <= before + 30, "{after} requests (fixture: {before})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cow_compacts_every_ten_delta_commits() {
    twenty_five_upserts("sample_table/cow/v9_txns_simple_overwrite", "cow").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mor_compacts_every_ten_delta_commits() {
    twenty_five_upserts(
        "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
        "mor",
    )
    .await;
}

/// A compaction that dies at its k-th mutating request, for every k: readers still see the
/// previous snapshot, and the next write completes the pending compaction (or, when not
/// even the plan was written, schedules a new one) and commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_compaction_is_completed_by_the_next_write() {
    let fixture = "sample_table/cow/v9_txns_simple_overwrite";
    let base = common::table_copy(fixture, "write_mdt_compaction", "crash_base");
    let mut upserts = Upserts::new(&base).await;
    // Up to the write that compacts.
    let mut i = 0;
    while mdt_state(&base).0 < MAX {
        let batch = upserts.batch(i);
        write_with(&base, &batch, MAX).await;
        i += 1;
    }
    let snapshot = our_rows(&base, ReadOptions::default()).await;
    let batch = upserts.batch(i);
    let expected = data_only(&model_rows(&base, &upserts.model_rows()).await);
    let mut hudi = HudiRs::start();
    let mut k = 1;
    loop {
        let dir = base.with_file_name(format!("crash_k{k}"));
        let _ = std::fs::remove_dir_all(&dir);
        common::copy_dir(&base, &dir);
        let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&dir)), k));
        let table = Table::open(crash.clone()).await.expect("open");
        let result = write_opts(&table, &batch, MAX).await;
        let pending = !pending_compactions(&dir).is_empty();
        if let Ok(r) = &result {
            // Past every request of the write: the crash point is beyond it.
            assert!(r.metadata_table.compaction.is_some());
            let _ = std::fs::remove_dir_all(&dir);
            break;
        }
        let now = our_rows(&dir, ReadOptions::default()).await;
        // Before the data commit the old snapshot, after it the new one.
        let committed = data_only(&now) == expected;
        if !committed {
            same_rows(&now, &snapshot, &format!("k={k}: after the crash"));
        }
        same_rows(
            &hudi.rows(&dir),
            &now,
            &format!("k={k}: hudi-rs after the crash"),
        );
        let done = write_with(&dir, &batch, MAX).await;
        if pending {
            let c = done.metadata_table.compaction.as_ref().expect("completed");
            assert!(c.resumed, "k={k}: {c:?}");
        }
        same_rows(
            &data_only(&our_rows(&dir, ReadOptions::default()).await),
            &expected,
            &format!("k={k}: after the next write"),
        );
        assert_eq!(
            pending_compactions(&dir),
            Vec::<String>::new(),
            "k={k}: a compaction left pending"
        );
        if k % 4 == 1 {
            same_rows(
                &hudi.rows(&dir),
                &our_rows(&dir, ReadOptions::default()).await,
                &format!("k={k}: hudi-rs after the next write"),
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
        k += 1;
        assert!(k < 200, "the write never finished");
    }
    eprintln!("crashed at each of {} requests", k - 1);
}

/// A write that defers its services leaves a metadata-table compaction that came due to
/// them: it commits with one delta commit more, and the services then compact (under the
/// same rules), the table reading the same rows throughout, in hudi-rs too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferring_write_leaves_a_due_compaction_to_the_services() {
    let fixture = "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle";
    let dir = common::table_copy(fixture, "write_mdt_compaction", "deferred");
    let mut upserts = Upserts::new(&dir).await;
    let max = 2;
    let settings: BTreeMap<String, String> = [
        ("hoodie.metadata.compact.max.delta.commits", "2"),
        ("hoodie.compact.inline", "false"),
        ("hoodie.clean.automatic", "false"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    // Writes until a compaction is due (as a write before it would see it).
    while mdt_state(&dir).0 < max {
        write_with(&dir, &upserts.batch(mdt_state(&dir).0), max).await;
    }
    let (due, last) = mdt_state(&dir);
    let table = open(&dir).await;
    let batches = decode_input(&table, &upserts.batch(50)).await;
    let mut deferred = WriteOptions::new(Operation::Upsert);
    deferred.options = settings.clone();
    deferred.defer_services = true;
    let w = table.write(&batches, &deferred).await.expect("write");
    assert!(
        w.metadata_table.compaction.is_none(),
        "{:?}",
        w.metadata_table
    );
    assert_eq!(
        mdt_state(&dir),
        (due + 1, last.clone()),
        "one delta commit more"
    );
    let rows = our_rows(&dir, ReadOptions::default()).await;
    same_rows(
        &data_only(&rows),
        &data_only(&model_rows(&dir, &upserts.model_rows()).await),
        "after the deferring write",
    );
    let (done, _) = open(&dir)
        .await
        .services_after_write(&settings)
        .await
        .expect("services");
    assert!(done.errors.is_empty(), "{:?}", done.errors);
    let c = done
        .metadata_compaction
        .expect("the compaction the write left");
    assert!(
        !c.resumed && c.instant > w.instant,
        "{c:?} after {}",
        w.instant
    );
    let (n, now) = mdt_state(&dir);
    assert_eq!((n, now.as_deref()), (0, Some(c.instant.as_str())));
    assert!(done.io.requests >= c.io.requests);
    same_rows(
        &our_rows(&dir, ReadOptions::default()).await,
        &rows,
        "after the services",
    );
    same_rows(
        &hudi_rs_rows(&dir, &[]),
        &rows,
        "hudi-rs after the services",
    );
    // Nothing due any more; the next deferring write compacts nothing.
    let (again, _) = open(&dir)
        .await
        .services_after_write(&settings)
        .await
        .unwrap();
    assert!(again.metadata_compaction.is_none());
}
