//! Tables whose timelines reach into the v6 archive and the v8+ LSM history, written and
//! read back by Apache Hudi Spark itself (tests/spark/make_archive_fixtures.py; Hudi 1.1.1
//! for table version 9, 0.15.0 for version 6). Every expectation here is what Hudi Spark
//! returned, including its errors (time travel to cleaned instants) and its incremental
//! fallback to a full table scan when a range reaches archived commits.

mod common;

use std::sync::Arc;

use common::oracle_rows;
use hudi_edge::read::{QueryType, ReadOptions};
use hudi_edge::storage::memory::MemoryStorage;
use hudi_edge::Table;
use serde_json::Value;

fn generated(name: &str) -> (Vec<u8>, Value) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/generated");
    let zip = std::fs::read(dir.join(format!("{name}.zip"))).expect("zip");
    let json = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("json"),
    )
    .expect("json");
    (zip, json)
}

async fn open(name: &str) -> (Table, Value) {
    let (zip, exp) = generated(name);
    let storage = MemoryStorage::from_zip(&zip, name).expect("zip");
    (Table::open(Arc::new(storage)).await.expect("open"), exp)
}

fn keys(rows: &[Value]) -> Vec<String> {
    let mut k: Vec<String> = rows
        .iter()
        .map(|r| r["_hoodie_record_key"].as_str().unwrap().to_string())
        .collect();
    k.sort();
    k
}

fn expected_keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    k.sort();
    k
}

async fn read(table: &Table, opts: ReadOptions) -> hudi_edge::Result<Vec<Value>> {
    Ok(oracle_rows(&table.read(&opts).await?.batches, &[]))
}

async fn check(name: &str) {
    let (table, exp) = open(name).await;
    let v9 = exp["table_version"].as_u64() == Some(9);

    // The timeline, archived instants included, as Hudi reads it.
    let timeline = table.load_history().await.expect("history");
    let got: Vec<(String, String, bool)> = timeline
        .completed()
        .map(|i| (i.requested_time.clone(), i.action.clone(), i.archived))
        .collect();
    let want: Vec<(String, String, bool)> = exp["completed_instants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["requested_time"].as_str().unwrap().into(),
                c["action"].as_str().unwrap().into(),
                c["timeline"] == "archived",
            )
        })
        .collect();
    assert_eq!(got, want, "{name}: completed instants");
    if v9 {
        for c in exp["completed_instants"].as_array().unwrap() {
            let i = timeline.get(c["requested_time"].as_str().unwrap()).unwrap();
            assert_eq!(
                i.completion_time.as_deref(),
                c["completion_time"].as_str(),
                "{name}: completion time"
            );
        }
    }

    // Latest snapshot and read-optimized, every column.
    let snapshot = read(&table, ReadOptions::default())
        .await
        .expect("snapshot");
    assert_eq!(
        snapshot,
        exp["snapshot"]["rows"].as_array().unwrap().clone(),
        "{name}: snapshot"
    );
    if let Some(ro) = exp.get("read_optimized").filter(|v| !v.is_null()) {
        let got = read(
            &table,
            ReadOptions {
                query: QueryType::ReadOptimized,
                ..Default::default()
            },
        )
        .await
        .expect("ro");
        assert_eq!(
            got,
            ro["rows"].as_array().unwrap().clone(),
            "{name}: read-optimized"
        );
    }

    // Time travel to every commit, archived ones included; Hudi refuses instants the
    // cleaner removed, and so must we.
    for tt in exp["time_travel"].as_array().unwrap() {
        let as_of = tt["as_of_instant"].as_str().unwrap();
        let result = read(
            &table,
            ReadOptions {
                as_of: Some(as_of.into()),
                ..Default::default()
            },
        )
        .await;
        match tt.get("error").and_then(Value::as_str) {
            Some(hudi_error) => {
                let err = result.expect_err("Hudi refused this time travel");
                assert!(
                    err.to_string().contains("clean"),
                    "{name} as of {as_of}: {err} (Hudi: {hudi_error})"
                );
            }
            None => {
                let got = result.unwrap_or_else(|e| panic!("{name} as of {as_of}: {e}"));
                assert_eq!(
                    got,
                    tt["rows"].as_array().unwrap().clone(),
                    "{name}: as of {as_of}"
                );
            }
        }
    }

    // Incremental ranges between consecutive commits. Hudi 1.x falls back to a full table
    // scan when the range holds archived commits; Hudi 0.15 returns nothing there unless the
    // fallback is enabled, so for v6 the fallback answer is the reference (never empty).
    let ranges = if v9 {
        &exp["incremental"]
    } else {
        &exp["incremental_with_fulltablescan_fallback"]
    };
    for r in ranges.as_array().unwrap() {
        let begin = r["begin"].as_str().unwrap();
        let start = if begin == "000" {
            None
        } else {
            Some(begin.to_string())
        };
        let opts = ReadOptions {
            query: QueryType::Incremental,
            start: start.clone(),
            end: Some(r["end"].as_str().unwrap().into()),
            ..Default::default()
        };
        let got = read(&table, opts.clone())
            .await
            .unwrap_or_else(|e| panic!("{name} incremental ({begin}, {}]: {e}", r["end"]));
        let plan = table.plan(&opts).await.expect("plan");
        let fell_back = plan
            .stats
            .planning_notes
            .iter()
            .any(|n| n.contains("latest snapshot"));
        let commit = r["commit"].as_str().unwrap();
        let archived = r["timeline"] == "archived"
            || start
                .as_deref()
                .is_some_and(|s| timeline.get(s).is_some_and(|i| i.archived))
            || start.is_none();
        let want = if v9 {
            expected_keys(r)
        } else if fell_back {
            // As Hudi 1.x's fallback: the records of the merged latest snapshot whose commit
            // is in range. (Hudi 0.15's MOR fallback scans base files only and returns
            // records updated or deleted in log files stale; its COW fallback agrees.)
            assert!(archived, "{name}: fell back on an active range");
            let mut latest: Vec<String> = exp["snapshot"]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|row| row["_hoodie_commit_time"] == commit)
                .map(|row| row["_hoodie_record_key"].as_str().unwrap().to_string())
                .collect();
            latest.sort();
            latest
        } else {
            // An active range: Hudi 0.15's own answer.
            let plain = exp["incremental"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["commit"] == commit)
                .unwrap();
            expected_keys(plain)
        };
        assert_eq!(
            keys(&got),
            want,
            "{name}: incremental ({begin}, {}]",
            r["end"]
        );
    }
}

#[tokio::test]
async fn v9_lsm_history_cow() {
    check("v9_archive_cow").await;
}

#[tokio::test]
async fn v9_lsm_history_mor() {
    check("v9_archive_mor").await;
}

#[tokio::test]
async fn v9_lsm_history_cow_without_cleaning() {
    check("v9_archive_noclean_cow").await;
}

#[tokio::test]
async fn v9_lsm_history_mor_without_cleaning() {
    check("v9_archive_noclean_mor").await;
}

#[tokio::test]
async fn v6_archive_cow() {
    check("v6_archive_cow").await;
}

#[tokio::test]
async fn v6_archive_mor() {
    check("v6_archive_mor").await;
}

#[tokio::test]
async fn v6_archive_cow_without_cleaning() {
    check("v6_archive_noclean_cow").await;
}
