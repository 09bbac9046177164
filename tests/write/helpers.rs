//! Helpers shared by the write tests (tests/write.rs, tests/write_crash.rs): reads by this
//! engine and by hudi-rs in one row encoding, and writes of rows in the input form.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use hudi_edge::api::input::{decode_rows, InputFormat};
use hudi_edge::api::output::{rows_as_json, rows_as_json_with, JsonStyle};
use hudi_edge::read::ReadOptions;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::write::{Operation, WriteOptions, WriteResult};
use hudi_edge::Table;
use serde_json::{Map, Value};

pub async fn open(dir: &Path) -> Table {
    Table::open(Arc::new(LocalStorage::new(dir)))
        .await
        .expect("open")
}

/// Rows of a read in the oracle encoding, each as sorted-key JSON text, sorted.
pub async fn our_rows(dir: &Path, options: ReadOptions) -> Vec<String> {
    let table = open(dir).await;
    let result = table.read(&options).await.expect("read");
    oracle_rows(&result.batches)
}

/// Batches as sorted oracle-encoded JSON rows.
fn oracle_rows(batches: &[arrow_array::RecordBatch]) -> Vec<String> {
    let mut rows: Vec<String> = batches
        .iter()
        .flat_map(|b| rows_as_json_with(b, JsonStyle::ORACLE))
        .map(|m| sorted_json(&Value::Object(m)))
        .collect();
    rows.sort();
    rows
}

/// JSON text with object keys sorted at every depth (as Python's `sort_keys`).
pub fn sorted_json(v: &Value) -> String {
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

pub fn python() -> PathBuf {
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
pub fn hudi_rs_rows(dir: &Path, args: &[&str]) -> Vec<String> {
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
pub fn same_rows(left: &[String], right: &[String], what: &str) {
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

pub fn data_only(rows: &[String]) -> Vec<String> {
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
pub async fn input_rows(dir: &Path) -> Vec<Map<String, Value>> {
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

pub async fn write(dir: &Path, rows: &[Map<String, Value>], operation: Operation) -> WriteResult {
    write_with(dir, rows, operation, &[]).await
}

/// [`write`] with write configs (`hoodie.*`).
pub async fn write_with(
    dir: &Path,
    rows: &[Map<String, Value>],
    operation: Operation,
    settings: &[(&str, &str)],
) -> WriteResult {
    let table = open(dir).await;
    write_on_with(&table, rows, operation, settings)
        .await
        .unwrap_or_else(|e| panic!("write into {}: {e}", dir.display()))
}

/// Write configs that leave compaction to another run (the write's own log files stay).
pub const NO_INLINE_COMPACTION: &[(&str, &str)] = &[("hoodie.compact.inline", "false")];

/// Writes `rows` (the write's input form) through an opened table.
/// Rows in the input form (`read --format jsonl`) decoded against the table's schema, as
/// the CLI decodes them.
pub async fn decode_input(
    table: &Table,
    rows: &[Map<String, Value>],
) -> Vec<arrow_array::RecordBatch> {
    let visible = table.timeline().visibility_as_of(None);
    let schema = hudi_edge::snapshot::schema::table_schema(table.client(), &visible)
        .await
        .unwrap();
    let text: String = rows
        .iter()
        .map(|r| Value::Object(r.clone()).to_string() + "\n")
        .collect();
    decode_rows(
        text.into(),
        InputFormat::Jsonl,
        &schema,
        "input",
        &Default::default(),
    )
    .expect("decode")
}

pub async fn write_on(
    table: &Table,
    rows: &[Map<String, Value>],
    operation: Operation,
) -> hudi_edge::Result<WriteResult> {
    write_on_with(table, rows, operation, &[]).await
}

/// [`write_on`] with write configs (`hoodie.*`).
pub async fn write_on_with(
    table: &Table,
    rows: &[Map<String, Value>],
    operation: Operation,
    settings: &[(&str, &str)],
) -> hudi_edge::Result<WriteResult> {
    let batches = decode_input(table, rows).await;
    let mut options = WriteOptions::new(operation);
    options.options = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    table.write(&batches, &options).await
}

/// What the test changes: a string column outside key, partition and ordering fields.
pub async fn editable(table: &Table, row: &Map<String, Value>) -> Option<String> {
    let c = table.config();
    let visible = table.timeline().visibility_as_of(None);
    let schema = hudi_edge::snapshot::schema::table_schema(table.client(), &visible)
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

/// hudi-rs as one long-running reader (tests/write/hudi_rs_server.py): many tables, one
/// Python start.
pub struct HudiRs {
    child: std::process::Child,
    out: std::io::BufReader<std::process::ChildStdout>,
}

impl HudiRs {
    pub fn start() -> HudiRs {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/write/hudi_rs_server.py");
        let mut child = Command::new(python())
            .arg(script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start the hudi-rs reader");
        let out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        HudiRs { child, out }
    }

    /// The snapshot rows of `dir` as hudi-rs reads them (same encoding as `our_rows`).
    pub fn rows(&mut self, dir: &Path) -> Vec<String> {
        use std::io::{BufRead, Write};
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{}", dir.display()).expect("ask hudi-rs");
        stdin.flush().expect("flush");
        let mut rows = Vec::new();
        loop {
            let mut line = String::new();
            let n = self.out.read_line(&mut line).expect("hudi-rs answer");
            assert!(n > 0, "hudi-rs reader exited on {}", dir.display());
            let line = line.trim_end();
            if line == "### END" {
                break;
            }
            if let Some(e) = line.strip_prefix("### ERROR ") {
                panic!("hudi-rs failed on {}: {e}", dir.display());
            }
            rows.push(sorted_json(&serde_json::from_str(line).expect("JSON row")));
        }
        rows.sort();
        rows
    }
}

impl Drop for HudiRs {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// Model rows (input encoding) in the oracle encoding, by decoding them as a write would.
pub async fn model_rows(dir: &Path, rows: &[Map<String, Value>]) -> Vec<String> {
    oracle_rows(&decode_input(&open(dir).await, rows).await)
}

/// A row's record key as text: its key fields' JSON values joined by commas.
pub fn key_of(fields: &[String], r: &Map<String, Value>) -> String {
    fields
        .iter()
        .map(|f| r.get(f).map(Value::to_string).unwrap_or_default())
        .collect::<Vec<_>>()
        .join(",")
}

/// A fresh directory for `test` of `group` under the target's temp dir.
#[allow(dead_code)]
pub fn fresh_dir(group: &str, test: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Creates table `events` (id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE; key id,
/// partitioned by region, merging by ts) of `table_type`, with table configs `options`.
#[allow(dead_code)]
pub async fn create_events(
    dir: &Path,
    table_type: hudi_edge::config::TableType,
    options: &[(&str, &str)],
) {
    let new = hudi_edge::write::create::NewTable {
        name: "events".into(),
        table_type,
        schema: hudi_edge::schema::to_avro::schema_from_ddl(
            "id STRING NOT NULL, ts BIGINT, region STRING, v DOUBLE",
        )
        .unwrap(),
        record_key_fields: vec!["id".into()],
        partition_fields: vec!["region".into()],
        ordering_fields: vec!["ts".into()],
        options: (options.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    };
    Table::create(Arc::new(LocalStorage::new(dir)), &new)
        .await
        .expect("create");
}

/// Rows without `_hoodie_file_name`: a compaction or clustering moves rows to new base
/// files, every other column (the commit time and sequence number too) stays.
#[allow(dead_code)]
pub fn moved(rows: &[String]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| {
            let mut m: Map<String, Value> = serde_json::from_str(r).unwrap();
            m.remove("_hoodie_file_name");
            sorted_json(&Value::Object(m))
        })
        .collect();
    out.sort();
    out
}

#[allow(dead_code)]
pub fn listed() -> ReadOptions {
    ReadOptions {
        use_metadata_table: false,
        data_skipping: false,
        ..ReadOptions::default()
    }
}

/// Latest slices as (partition, file id, base file, log files), planned from the metadata
/// table or from a listing.
#[allow(dead_code)]
pub async fn slices(
    dir: &Path,
    options: &ReadOptions,
) -> Vec<(String, String, Option<String>, Vec<String>)> {
    let plan = open(dir).await.plan(options).await.expect("plan");
    crate::common::mdt::slices(&plan)
}

#[allow(dead_code)]
pub fn timeline_names(dir: &Path, mdt: bool) -> Vec<String> {
    let tl = if mdt {
        ".hoodie/metadata/.hoodie/timeline"
    } else {
        ".hoodie/timeline"
    };
    let mut names: Vec<String> = std::fs::read_dir(dir.join(tl))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "history")
        .collect();
    names.sort();
    names
}

/// Instants with no completed file, on both timelines.
#[allow(dead_code)]
pub fn pending(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for mdt in [false, true] {
        let names = timeline_names(dir, mdt);
        for n in &names {
            let t = n.split(['.', '_']).next().unwrap();
            if (n.ends_with(".requested") || n.ends_with(".inflight"))
                && !names.iter().any(|m| m.starts_with(&format!("{t}_")))
            {
                out.push(n.clone());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What a table of `id`-keyed rows holds, by key, as the writes say.
#[derive(Default, Clone)]
pub struct Model(pub std::collections::BTreeMap<String, Map<String, Value>>);

impl Model {
    pub fn apply(&mut self, rows: &[Map<String, Value>], op: Operation) {
        for r in rows {
            let key = r["id"].as_str().unwrap().to_string();
            match op {
                Operation::Delete => {
                    self.0.remove(&key);
                }
                _ => {
                    self.0.insert(key, r.clone());
                }
            }
        }
    }

    pub fn rows(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .0
            .values()
            .map(|r| sorted_json(&Value::Object(r.clone())))
            .collect();
        out.sort();
        out
    }
}

/// Every reader agrees with the model: this engine from the metadata table and from a
/// listing (the same slices), hudi-rs.
pub async fn readers_agree(
    dir: &Path,
    model: &Model,
    what: &str,
    hudi: &mut HudiRs,
) -> Vec<String> {
    let ours = our_rows(dir, ReadOptions::default()).await;
    same_rows(
        &data_only(&ours),
        &model.rows(),
        &format!("{what}: snapshot vs model"),
    );
    let from_listing = our_rows(dir, listed()).await;
    same_rows(
        &from_listing,
        &ours,
        &format!("{what}: listing vs metadata table"),
    );
    assert_eq!(
        slices(dir, &ReadOptions::default()).await,
        slices(dir, &listed()).await,
        "{what}: the metadata table's files vs storage"
    );
    same_rows(&hudi.rows(dir), &ours, &format!("{what}: hudi-rs"));
    ours
}

/// With `HUDI_EDGE_KEEP_CRASHED=DIR`, a copy of a table as a crash left it, at `DIR/name`,
/// for readers outside the test (tests/write/spark_crash_readers.sh reads them with Spark).
pub fn keep_crashed(dir: &Path, name: &str) {
    if let Some(keep) = std::env::var_os("HUDI_EDGE_KEEP_CRASHED") {
        crate::common::copy_dir(dir, &Path::new(&keep).join(name));
    }
}
