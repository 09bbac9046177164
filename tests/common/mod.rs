//! Shared by the behaviour tests: the fixture tables (real Apache Hudi tables, unzipped once
//! per build into the target dir) and their expected outputs.
#![allow(dead_code)]

#[macro_use]
pub mod two_readers;

pub mod hooked;
pub mod mdt;
pub mod oracle;
pub mod rng;
#[cfg(feature = "datafusion")]
pub mod sql;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arrow_array::RecordBatch;
use hudi_edge::api::output::{rows_as_json_with, JsonStyle};
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::Table;
use serde_json::Value;

pub fn fixtures_dir() -> PathBuf {
    match std::env::var("HUDI_EDGE_FIXTURES") {
        Ok(p) => PathBuf::from(p),
        Err(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixtures"),
    }
}

/// Every fixture name (`sample_table/cow/v9_txns_simple_meta`), from the zips on disk.
pub fn fixture_names() -> Vec<String> {
    let root = fixtures_dir().join("tables");
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for e in fs::read_dir(dir).expect("fixtures dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            walk(root, &p, out);
        } else if p.extension().is_some_and(|x| x == "zip") {
            let rel = p.strip_prefix(root).unwrap().with_extension("");
            out.push(rel.to_string_lossy().into_owned());
        }
    }
}

/// The unzipped base path of a fixture table (extracted once, atomically).
pub fn table_path(name: &str) -> PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    let root =
        ROOT.get_or_init(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fixture-tables"));
    let dest = root.join(name);
    // `spark_variants/NAME`, `generated/NAME`, `hudi_rs/NAME`: a table of this repository's tests/data.
    let zip_path = match name.split_once('/') {
        Some((dir @ ("spark_variants" | "generated" | "hudi_rs"), table)) => {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data")
                .join(dir)
                .join(format!("{table}.zip"))
        }
        _ => fixtures_dir().join("tables").join(format!("{name}.zip")),
    };
    let mut archive =
        zip::ZipArchive::new(fs::File::open(&zip_path).expect("fixture zip")).expect("zip");
    let top = archive
        .by_index(0)
        .expect("entry")
        .name()
        .expect("utf-8 name")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let table = dest.join(&top);
    if table.join(".hoodie").exists() {
        return table;
    }
    let tmp = root.join(format!(
        "{name}.tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    fs::create_dir_all(&tmp).unwrap();
    archive.extract(&tmp).expect("extract");
    fs::create_dir_all(dest.parent().unwrap()).unwrap();
    fs::create_dir_all(&dest).unwrap();
    // Another test may have won the race; either copy is complete.
    let _ = fs::rename(tmp.join(&top), &table);
    let _ = fs::remove_dir_all(&tmp);
    table
}

pub fn expected(name: &str) -> Option<Value> {
    let p = fixtures_dir().join("expected").join(format!("{name}.json"));
    let text = fs::read_to_string(p).ok()?;
    Some(serde_json::from_str(&text).expect("expected json"))
}

pub async fn open(name: &str) -> hudi_edge::Result<Table> {
    Table::open(Arc::new(LocalStorage::new(table_path(name)))).await
}

/// Rows in the oracle's encoding, sorted as the expected files sort them.
pub fn oracle_rows(batches: &[RecordBatch], key_fields: &[String]) -> Vec<Value> {
    let mut rows: Vec<(String, String, String, Value)> = batches
        .iter()
        .flat_map(|b| rows_as_json_with(b, JsonStyle::ORACLE))
        .map(|m| {
            let key = record_key(&m, key_fields);
            let partition = m
                .get("_hoodie_partition_path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let v = Value::Object(m);
            (key, partition, v.to_string(), v)
        })
        .collect();
    rows.sort_by(|a, b| (&a.0, &a.1, &a.2).cmp(&(&b.0, &b.1, &b.2)));
    rows.into_iter().map(|r| r.3).collect()
}

pub fn record_key(row: &serde_json::Map<String, Value>, key_fields: &[String]) -> String {
    if let Some(Value::String(k)) = row.get("_hoodie_record_key") {
        return k.clone();
    }
    let text = |v: Option<&Value>| match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    if key_fields.len() == 1 {
        return text(row.get(&key_fields[0]));
    }
    key_fields
        .iter()
        .map(|f| format!("{f}:{}", text(row.get(f))))
        .collect::<Vec<_>>()
        .join(",")
}

/// Keys with partition paths, sorted, from rows.
pub fn keys_with_partition(rows: &[Value], key_fields: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            let m = r.as_object().unwrap();
            (
                record_key(m, key_fields),
                m.get("_hoodie_partition_path")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

pub fn expected_pairs(v: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_string(),
                p[1].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Copies the tree at `from` to `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A private, writable copy of a fixture table for a test that changes it.
pub fn table_copy(fixture: &str, group: &str, test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(test);
    let _ = fs::remove_dir_all(&dir);
    copy_dir(&table_path(fixture), &dir);
    dir
}
