//! Tables whose expected results two independent readers gave (PyPI `hudi` and Apache Hudi
//! Spark 1.1.1; tests/write/hudi_rs_matrix_expected.py): `tests/data/<dir>/NAME.{zip,json}`.

use std::sync::Arc;

use hudi_edge::expr::parse_filter;
use hudi_edge::read::{QueryType, ReadOptions};
use hudi_edge::storage::memory::MemoryStorage;
use hudi_edge::Table;
use serde_json::Value;

use super::oracle_rows;

/// One `#[tokio::test]` per table, each calling `$check(name)`, and a test that every zip of
/// `tests/data/$dir` has one.
#[allow(unused_macros)]
macro_rules! two_reader_tests {
    ($dir:literal, $check:ident, $($f:ident,)*) => {
        $(
            #[tokio::test]
            async fn $f() {
                $check(stringify!($f)).await;
            }
        )*

        #[test]
        fn every_table_has_a_test() {
            common::two_readers::assert_every_table_tested($dir, &[$(stringify!($f)),*]);
        }
    };
}

/// Every zip of `tests/data/<dir>` is among `tested`.
pub fn assert_every_table_tested(dir: &str, tested: &[&str]) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir);
    for e in std::fs::read_dir(dir).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().to_string();
        if let Some(t) = n.strip_suffix(".zip") {
            assert!(tested.contains(&t), "{t} has no test");
        }
    }
}

/// The table (from its zip, in memory) and its expected results.
pub async fn open(dir: &str, name: &str) -> (Table, Value) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(dir);
    let zip = std::fs::read(dir.join(format!("{name}.zip"))).expect("zip");
    let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("json");
    let storage = MemoryStorage::from_zip(&zip, name).expect("zip");
    let table = Table::open(Arc::new(storage)).await.expect("open");
    (table, serde_json::from_str(&text).expect("json"))
}

/// The rows both readers returned for a query; where they differ, the reader Hudi's Java
/// source backs (`right`).
pub fn expected_rows(exp: &Value, q: &Value) -> Vec<Value> {
    let answer = if q["agree"] == true {
        q
    } else {
        let right = q["right"]
            .as_str()
            .expect("a disagreement names the right reader");
        &q[right]
    };
    let rows = exp["rows"].as_array().unwrap();
    answer["row_ids"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: expected rows, got {answer}", q["id"]))
        .iter()
        .map(|i| rows[i.as_u64().unwrap() as usize].clone())
        .collect()
}

/// The error of a query the reader Hudi's source backs refuses, if it does.
fn expected_refusal(q: &Value) -> Option<&str> {
    let right = q["right"].as_str().filter(|_| q["agree"] == false)?;
    q[right]["error"].as_str()
}

pub fn opts(filters: &[&str]) -> ReadOptions {
    ReadOptions {
        filters: filters.iter().map(|f| parse_filter(f).unwrap()).collect(),
        ..Default::default()
    }
}

/// The timeline and every query of `exp` read from `table`; `planning_source`, when given,
/// is what every plan that selects files must say.
pub async fn check(name: &str, table: &Table, exp: &Value, planning_source: Option<&str>) {
    // The timeline as written; completion times from file names (v8+; v6 has none).
    let v6 = exp["table_version"] == 6;
    let got: Vec<String> = table
        .timeline()
        .completed()
        .map(|i| {
            let done = i.completion_time.as_deref().filter(|_| !v6);
            format!("{} {done:?} {}", i.requested_time, i.action)
        })
        .collect();
    let want: Vec<String> = exp["completed_instants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let done = c["completion_time"].as_str().filter(|_| !v6);
            format!(
                "{} {done:?} {}",
                c["requested_time"].as_str().unwrap(),
                c["action"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(got, want, "{name}: completed instants");

    // Every query both readers answered, planned from the metadata table.
    for q in exp["queries"].as_array().unwrap() {
        let s = |k: &str| q[k].as_str().map(str::to_string);
        let o = match q["kind"].as_str().unwrap() {
            "snapshot" => ReadOptions::default(),
            "read_optimized" => ReadOptions {
                query: QueryType::ReadOptimized,
                ..Default::default()
            },
            "time_travel" => ReadOptions {
                as_of: s("as_of"),
                ..Default::default()
            },
            "filter" => {
                let triples = q["filters"].as_array().unwrap().iter();
                let text: Vec<String> = triples
                    .map(|t| {
                        t.as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_str().unwrap())
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect();
                opts(&text.iter().map(String::as_str).collect::<Vec<_>>())
            }
            _ => ReadOptions {
                query: QueryType::Incremental,
                // Spark's "from the beginning" is "000"; ours is no start.
                start: s("start").filter(|t| t != "000"),
                end: s("end"),
                ..Default::default()
            },
        };
        let id = q["id"].as_str().unwrap();
        // Where the reader Hudi backs refused the query (Spark's own HoodieException), so must we.
        if let Some(refusal) = expected_refusal(q) {
            let e =
                table.read(&o).await.err().unwrap_or_else(|| {
                    panic!("{name} {id}: answered where Hudi refuses ({refusal})")
                });
            assert_eq!(e.code(), "UNSUPPORTED", "{name} {id}: {e}");
            continue;
        }
        let result = table
            .read(&o)
            .await
            .unwrap_or_else(|e| panic!("{name} {id}: {e}"));
        // As sets: rows are listed by record key, which a table without meta fields lacks.
        let by_text = |mut rows: Vec<Value>| {
            rows.sort_by_cached_key(|r| r.to_string());
            rows
        };
        assert_eq!(
            by_text(oracle_rows(&result.batches, &[])),
            by_text(expected_rows(exp, q)),
            "{name}: {id}"
        );
        if let (Some(source), false) = (planning_source, result.plan.file_slices.is_empty()) {
            assert_eq!(
                result.plan.stats.planning_source,
                source,
                "{name} {id}: {}",
                result.plan.stats.planning_notes.join("\n")
            );
        }
    }
}
