//! Writes into copies of the Apache Hudi-written fixtures, checked by two readers: after an
//! upsert (updates, inserts, duplicate keys in one batch, a new partition) and a delete
//! (an existing and a missing key), this engine's snapshot equals the expected rows, PyPI
//! `hudi` (hudi-rs) returns the same rows field for field, time travel to the commit before
//! returns the old rows in both, and an incremental query returns exactly the batch.
//! Apache Hudi Spark reads the same tables in `tests/write/spark_check.sh` (recorded).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use hudi_edge::api::input::{decode_rows, InputFormat};
use hudi_edge::api::output::{rows_as_json, rows_as_json_with, JsonStyle};
use hudi_edge::read::{QueryType, ReadOptions};
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::write::{Operation, WriteOptions, WriteResult};
use hudi_edge::Table;
use serde_json::{Map, Value};

async fn open(dir: &Path) -> Table {
    Table::open(Arc::new(LocalStorage::new(dir)))
        .await
        .expect("open")
}

/// Rows of a read in the oracle encoding, each as sorted-key JSON text, sorted.
async fn our_rows(dir: &Path, options: ReadOptions) -> Vec<String> {
    let table = open(dir).await;
    let result = table.read(&options).await.expect("read");
    let mut rows: Vec<String> = result
        .batches
        .iter()
        .flat_map(|b| rows_as_json_with(b, JsonStyle::ORACLE))
        .map(|m| sorted_json(&Value::Object(m)))
        .collect();
    rows.sort();
    rows
}

/// JSON text with object keys sorted at every depth (as Python's `sort_keys`).
fn sorted_json(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sort(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sort(v)).unwrap()
}

fn python() -> PathBuf {
    let cache = std::env::var("HUDI_EDGE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/hudi-edge"));
    let p = cache.join("venv/bin/python");
    assert!(
        p.exists(),
        "{} missing: run .ci/setup (PyPI hudi is the oracle)",
        p.display()
    );
    p
}

/// The same read through hudi-rs.
fn hudi_rs_rows(dir: &Path, args: &[&str]) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/write/hudi_rs_rows.py");
    let out = Command::new(python())
        .arg(script)
        .arg(dir)
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "hudi-rs failed on {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut rows: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| sorted_json(&serde_json::from_str(l).unwrap()))
        .collect();
    rows.sort();
    rows
}

/// Asserts equal row sets, printing only the rows that differ.
fn same_rows(left: &[String], right: &[String], what: &str) {
    let only_left: Vec<&String> = left.iter().filter(|r| !right.contains(r)).collect();
    let only_right: Vec<&String> = right.iter().filter(|r| !left.contains(r)).collect();
    assert!(
        only_left.is_empty() && only_right.is_empty() && left.len() == right.len(),
        "{what}: {} vs {} rows\nonly in the first:\n{}\nonly in the second:\n{}",
        left.len(),
        right.len(),
        only_left
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        only_right
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn data_only(rows: &[String]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| {
            let mut m: Map<String, Value> = serde_json::from_str(r).unwrap();
            m.retain(|k, _| !k.starts_with("_hoodie_"));
            sorted_json(&Value::Object(m))
        })
        .collect();
    out.sort();
    out
}

/// Rows as `read --format jsonl` prints them, data columns only: the write's input form.
async fn input_rows(dir: &Path) -> Vec<Map<String, Value>> {
    let table = open(dir).await;
    let result = table.read(&ReadOptions::default()).await.expect("read");
    let mut rows: Vec<Map<String, Value>> = result
        .batches
        .iter()
        .flat_map(rows_as_json)
        .map(|mut m| {
            m.retain(|k, _| !k.starts_with("_hoodie_"));
            m
        })
        .collect();
    rows.sort_by_key(|m| Value::Object(m.clone()).to_string());
    rows
}

async fn write(dir: &Path, rows: &[Map<String, Value>], operation: Operation) -> WriteResult {
    let table = open(dir).await;
    let schema = table
        .client()
        .table_schema(&table.timeline().visibility_as_of(None))
        .await
        .unwrap();
    let text: String = rows
        .iter()
        .map(|r| Value::Object(r.clone()).to_string() + "\n")
        .collect();
    let batches = decode_rows(text.into(), InputFormat::Jsonl, &schema, "input").expect("decode");
    table
        .write(&batches, &WriteOptions::new(operation))
        .await
        .unwrap_or_else(|e| panic!("write into {}: {e}", dir.display()))
}

/// What the test changes: a string column outside key, partition and ordering fields.
async fn editable(table: &Table, row: &Map<String, Value>) -> Option<String> {
    let c = table.config();
    let schema = table
        .client()
        .table_schema(&table.timeline().visibility_as_of(None))
        .await
        .unwrap();
    row.iter()
        .find(|(k, v)| {
            v.is_string()
                && schema
                    .field_with_name(k)
                    .is_ok_and(|f| f.data_type() == &arrow_schema::DataType::Utf8)
                && !c.record_key_fields.contains(k)
                && !c.partition_fields.contains(k)
                && !c.ordering_fields.contains(k)
        })
        .map(|(k, _)| k.clone())
}

fn bump(row: &mut Map<String, Value>, field: &str, by: i64) {
    if let Some(Value::Number(n)) = row.get(field) {
        if let Some(i) = n.as_i64() {
            row.insert(field.to_string(), Value::from(i + by));
        }
    }
}

async fn latest(dir: &Path) -> (String, String) {
    let table = open(dir).await;
    let i = table
        .timeline()
        .latest_completed_write()
        .cloned()
        .expect("a commit");
    (i.requested_time, i.completion_time.unwrap_or_default())
}

/// Upsert, then delete, each checked against the model and hudi-rs.
async fn round_trip(fixture: &str, test: &str) {
    let dir = common::table_copy(fixture, "write", test);
    let table = open(&dir).await;
    let config = table.config().clone();
    let all_rows = input_rows(&dir).await;
    // Rows whose key the snapshot holds once (a non-global table may repeat a key across
    // partitions; Spark left one fixture with a key in two file groups).
    let key_of = |r: &Map<String, Value>| {
        config
            .record_key_fields
            .iter()
            .map(|f| r.get(f).map(Value::to_string).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut seen = std::collections::HashMap::new();
    for r in &all_rows {
        *seen.entry(key_of(r)).or_insert(0) += 1;
    }
    let (unique, repeated): (Vec<_>, Vec<_>) =
        all_rows.into_iter().partition(|r| seen[&key_of(r)] == 1);
    let rows = unique;
    assert!(rows.len() >= 3, "{fixture}: too few rows to test with");
    let edit = editable(&table, &rows[0])
        .await
        .expect("a string column to edit");
    let ordering = config.ordering_fields.first().cloned();
    let before = our_rows(&dir, ReadOptions::default()).await;
    same_rows(
        &hudi_rs_rows(&dir, &[]),
        &before,
        &format!("{fixture}: hudi-rs disagrees before any write"),
    );
    let (before_instant, before_completion) = latest(&dir).await;

    // Upsert: two updates, two new keys (one given twice: the higher ordering value wins).
    let mut batch = Vec::new();
    for (i, r) in rows.iter().take(2).enumerate() {
        let mut u = r.clone();
        u.insert(edit.clone(), Value::from(format!("edited-{i}")));
        if let Some(o) = &ordering {
            bump(&mut u, o, 1);
        }
        batch.push(u);
    }
    let new_key = |base: &Map<String, Value>, tag: &str| {
        let mut n = base.clone();
        for f in &config.record_key_fields {
            let value = match n.get(f) {
                Some(Value::Number(_)) => Value::from(900_000 + tag.as_bytes()[0] as i64),
                _ => Value::from(format!("NEW-{tag}")),
            };
            n.insert(f.clone(), value);
        }
        n
    };
    let mut winner = new_key(&rows[1], "A");
    winner.insert(edit.clone(), Value::from("winner"));
    let mut loser = new_key(&rows[1], "A");
    loser.insert(edit.clone(), Value::from("loser"));
    if let Some(o) = &ordering {
        bump(&mut winner, o, 5);
    }
    let fresh = new_key(&rows[2], "B");
    let by_event_time = ordering.is_some();
    if by_event_time {
        batch.extend([winner.clone(), loser.clone(), fresh.clone()]);
    } else {
        batch.extend([loser.clone(), winner.clone(), fresh.clone()]);
    }
    let result = write(&dir, &batch, Operation::Upsert).await;
    assert_eq!(
        (
            result.records.updated,
            result.records.inserted,
            result.records.deduplicated
        ),
        (2, 2, 1),
        "{fixture}: {result:?}"
    );

    let mut model: Vec<Map<String, Value>> = rows[2..].to_vec();
    model.extend(repeated.iter().cloned());
    model.extend(batch[..2].iter().cloned());
    model.extend([winner.clone(), fresh.clone()]);
    let after = our_rows(&dir, ReadOptions::default()).await;
    let expected_data = data_only(&our_model(&dir, &model).await);
    same_rows(
        &data_only(&after),
        &expected_data,
        &format!("{fixture}: snapshot after the upsert"),
    );
    same_rows(
        &hudi_rs_rows(&dir, &[]),
        &after,
        &format!("{fixture}: hudi-rs after the upsert"),
    );

    // Time travel to the commit before, in both readers.
    let old = our_rows(
        &dir,
        ReadOptions {
            as_of: Some(before_instant.clone()),
            ..ReadOptions::default()
        },
    )
    .await;
    same_rows(
        &old,
        &before,
        &format!("{fixture}: time travel to {before_instant}"),
    );
    same_rows(
        &hudi_rs_rows(&dir, &["--as-of", &before_instant]),
        &before,
        &format!("{fixture}: hudi-rs time travel"),
    );

    // Incremental from the previous commit: exactly the batch (after pre-combining).
    let changed = our_rows(
        &dir,
        ReadOptions {
            query: QueryType::Incremental,
            start: Some(before_completion.clone()),
            ..ReadOptions::default()
        },
    )
    .await;
    let mut batch_rows = batch[..2].to_vec();
    batch_rows.extend([winner, fresh]);
    same_rows(
        &data_only(&changed),
        &data_only(&our_model(&dir, &batch_rows).await),
        &format!("{fixture}: incremental since {before_completion}"),
    );
    for r in &changed {
        assert!(r.contains(&result.instant), "{fixture}: commit time of {r}");
    }

    // Delete: one key that exists, one that does not.
    let victim = rows[2].clone();
    let mut missing = rows[2].clone();
    for f in &config.record_key_fields {
        let value = match missing.get(f) {
            Some(Value::Number(_)) => Value::from(987_654),
            _ => Value::from("NO-SUCH-KEY"),
        };
        missing.insert(f.clone(), value);
    }
    let result = write(&dir, &[victim.clone(), missing], Operation::Delete).await;
    assert_eq!(
        (result.records.deleted, result.records.delete_missing),
        (1, 1),
        "{fixture}: {result:?}"
    );
    let after_delete = our_rows(&dir, ReadOptions::default()).await;
    let victim_data = data_only(&our_model(&dir, &[victim]).await);
    let remaining = data_only(&after_delete);
    assert!(
        !remaining.contains(&victim_data[0]),
        "{fixture}: deleted row still there"
    );
    assert_eq!(
        remaining.len(),
        expected_data.len() - 1,
        "{fixture}: rows after the delete"
    );
    same_rows(
        &hudi_rs_rows(&dir, &[]),
        &after_delete,
        &format!("{fixture}: hudi-rs after the delete"),
    );
}

/// Model rows (input encoding) in the oracle encoding, by decoding them as a write would.
async fn our_model(dir: &Path, rows: &[Map<String, Value>]) -> Vec<String> {
    let table = open(dir).await;
    let schema = table
        .client()
        .table_schema(&table.timeline().visibility_as_of(None))
        .await
        .unwrap();
    let text: String = rows
        .iter()
        .map(|r| Value::Object(r.clone()).to_string() + "\n")
        .collect();
    let batches = decode_rows(text.into(), InputFormat::Jsonl, &schema, "model").unwrap();
    let mut out: Vec<String> = batches
        .iter()
        .flat_map(|b| rows_as_json_with(b, JsonStyle::ORACLE))
        .map(|m| sorted_json(&Value::Object(m)))
        .collect();
    out.sort();
    out
}

macro_rules! round_trips {
    ($($name:ident => $fixture:literal),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                round_trip($fixture, stringify!($name)).await;
            }
        )*
    };
}

round_trips! {
    cow_v9_simple => "sample_table/cow/v9_txns_simple_nometa",
    mor_v9_simple => "sample_table/mor/avro/v9_txns_simple_nometa",
    cow_v9_complex => "sample_table/cow/v9_txns_complex_nometa",
    mor_v9_complex => "sample_table/mor/avro/v9_txns_complex_nometa",
    cow_v9_nonpartitioned => "sample_table/cow/v9_txns_nonpart_nometa",
    mor_v9_nonpartitioned => "sample_table/mor/avro/v9_txns_nonpart_nometa",
    cow_v8_simple => "sample_table/cow/v8_simplekeygen_nonhivestyle",
    cow_v8_nonpartitioned => "sample_table/cow/v8_nonpartitioned",
    // With a metadata table: files, column_stats, partition_stats, record_index.
    cow_v9_mdt_full => "sample_table/cow/v9_txns_simple_overwrite",
    cow_v9_mdt_epoch_millis => "sample_table/cow/v9_timebasedkeygen_epochmillis",
    mor_v9_mdt_date_string => "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
}

/// A refused write: the error code, and not one request that changes storage.
async fn refused(dir: &Path, batches: &[arrow_array::RecordBatch], operation: Operation) -> String {
    let table = open(dir).await;
    let err = table
        .write(batches, &WriteOptions::new(operation))
        .await
        .expect_err("the write must be refused");
    let io = table.io();
    assert_eq!(
        (io.puts, io.deletes),
        (0, 0),
        "{}: {err} after changing storage",
        dir.display()
    );
    err.code().to_string()
}

fn batch(columns: Vec<(&str, arrow_array::ArrayRef)>) -> arrow_array::RecordBatch {
    arrow_array::RecordBatch::try_from_iter(columns).unwrap()
}

#[tokio::test]
async fn refuses_tables_it_cannot_keep_consistent() {
    use arrow_array::StringArray;
    let rows = || {
        vec![batch(vec![(
            "txn_id",
            Arc::new(StringArray::from(vec!["X"])) as arrow_array::ArrayRef,
        )])]
    };
    for (fixture, why) in [
        ("sample_table/cow/v6_nonpartitioned", "table version 6"),
        ("sample_table/cow/v9_txns_simple_meta", "secondary index"),
        (
            "sample_table/cow/v8_simplekeygen_hivestyle_no_metafields",
            "no meta fields",
        ),
    ] {
        let dir = common::table_copy(
            fixture,
            "write-refused",
            fixture.rsplit('/').next().unwrap(),
        );
        let code = refused(&dir, &rows(), Operation::Upsert).await;
        assert_eq!(code, "UNSUPPORTED", "{fixture} ({why})");
    }
}

#[tokio::test]
async fn refuses_bad_input_before_writing() {
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    let dir = common::table_copy(
        "sample_table/cow/v9_txns_simple_nometa",
        "write-refused",
        "bad_input",
    );
    let s = |v: Vec<Option<&str>>| Arc::new(StringArray::from(v)) as ArrayRef;
    let l = |v: Vec<i64>| Arc::new(Int64Array::from(v)) as ArrayRef;
    let cases: Vec<(&str, Vec<(&str, ArrayRef)>)> = vec![
        (
            "unknown column",
            vec![
                ("txn_id", s(vec![Some("A")])),
                ("region", s(vec![Some("us")])),
                ("txn_ts", l(vec![1])),
                ("nope", s(vec![Some("x")])),
            ],
        ),
        (
            "null key",
            vec![
                ("txn_id", s(vec![None])),
                ("region", s(vec![Some("us")])),
                ("txn_ts", l(vec![1])),
            ],
        ),
        (
            "missing ordering field",
            vec![
                ("txn_id", s(vec![Some("A")])),
                ("region", s(vec![Some("us")])),
            ],
        ),
        (
            "missing partition field",
            vec![("txn_id", s(vec![Some("A")])), ("txn_ts", l(vec![1]))],
        ),
        (
            "wrong type",
            vec![
                ("txn_id", s(vec![Some("A")])),
                ("region", s(vec![Some("us")])),
                ("txn_ts", s(vec![Some("soon")])),
            ],
        ),
    ];
    for (what, columns) in cases {
        let code = refused(&dir, &[batch(columns)], Operation::Upsert).await;
        assert_eq!(code, "INVALID_INPUT", "{what}");
    }
}

#[tokio::test]
async fn refuses_read_only_storage_before_any_request() {
    use arrow_array::{ArrayRef, StringArray};
    // A zip copied into memory: the write would vanish with the handle.
    let name = "sample_table/cow/v9_txns_simple_nometa";
    let zip = std::fs::read(common::fixtures_dir().join(format!("tables/{name}.zip"))).unwrap();
    let storage = hudi_edge::storage::memory::MemoryStorage::from_zip(&zip, name).unwrap();
    let table = Table::open(Arc::new(storage)).await.unwrap();
    let before = table.io();
    let rows = batch(vec![(
        "txn_id",
        Arc::new(StringArray::from(vec!["X"])) as ArrayRef,
    )]);
    let err = table
        .write(&[rows], &WriteOptions::new(Operation::Upsert))
        .await
        .expect_err("refused");
    assert_eq!(err.code(), "UNSUPPORTED", "{err}");
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(table.io().requests, before.requests, "no request");
}
