//! The change feed of Spark-written CDC tables (tests/data/cdc, made by
//! tests/write/make_cdc_tables.sh): every supplemental logging mode, Copy-On-Write and
//! Merge-On-Read, with inserts, updates, deletes, a compaction, a clustering and an insert
//! overwrite. Each commit's feed alone, and the whole range's, equals the rows Apache Hudi
//! Spark 1.1.1 returned for the same range, op by op and image by image.

#[macro_use]
mod common;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::Array;
use hudi_edge::storage::memory::MemoryStorage;
use hudi_edge::Table;
use serde_json::Value;

async fn open(name: &str) -> (Table, Value) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cdc");
    let zip = std::fs::read(dir.join(format!("{name}.zip"))).expect("zip");
    let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("json");
    let storage = MemoryStorage::from_zip(&zip, name).expect("zip");
    let table = Table::open(Arc::new(storage)).await.expect("open");
    (table, serde_json::from_str(&text).expect("json"))
}

/// `[op, ts_ms, before, after]` rows, sorted as the expected file sorts them.
fn feed_rows(feed: &hudi_edge::read::cdc::ChangeFeed) -> Vec<Value> {
    let mut rows = Vec::new();
    for b in &feed.batches {
        let cols: Vec<_> = (0..4).map(|i| b.column(i).as_string::<i32>()).collect();
        for r in 0..b.num_rows() {
            let cell = |c: usize| match cols[c].is_null(r) {
                true => Value::Null,
                false => Value::String(cols[c].value(r).to_string()),
            };
            rows.push(Value::Array((0..4).map(cell).collect()));
        }
    }
    let key = |r: &Value| -> Vec<String> {
        (r.as_array().unwrap().iter())
            .map(|v| v.as_str().unwrap_or("").to_string())
            .collect()
    };
    rows.sort_by_key(key);
    rows
}

async fn check(name: &str) {
    let (table, exp) = open(name).await;
    let feeds = exp["feeds"].as_array().expect("feeds");
    assert!(feeds.len() > 8, "{name}: {} feeds", feeds.len());
    let mut changed = 0;
    for f in feeds {
        let (start, end) = (f["start"].as_str().unwrap(), f["end"].as_str().unwrap());
        let feed = table.changes(Some(start), Some(end)).await.unwrap();
        let want = f["rows"].as_array().unwrap();
        let got = feed_rows(&feed);
        changed += usize::from(!want.is_empty());
        if got != *want {
            let missing: Vec<_> = want.iter().filter(|r| !got.contains(r)).collect();
            let extra: Vec<_> = got.iter().filter(|r| !want.contains(r)).collect();
            panic!(
                "{name} ({start}, {end}]: {} rows, Spark {}\nmissing {missing:#?}\nextra {extra:#?}",
                got.len(),
                want.len()
            );
        }
    }
    assert!(changed > 5, "{name}: only {changed} feeds had rows");
}

/// Where each commit's changes come from: inserts from new base files, MOR updates from log
/// files merged with the slice before them, COW updates from the CDC log files the writer
/// kept, the insert overwrite from the file groups it dropped; compaction and clustering
/// commits change nothing.
#[tokio::test]
async fn splits_name_where_changes_come_from() {
    use hudi_edge::read::cdc::InferenceCase::*;
    for (name, want) in [
        (
            "cdc_v9_mor_data_before_after",
            &[BaseFileInsert, LogFile, ReplaceCommit][..],
        ),
        (
            "cdc_v9_cow_data_before_after",
            &[BaseFileInsert, AsIs, ReplaceCommit][..],
        ),
    ] {
        let (table, exp) = open(name).await;
        let plan = table.plan_changes(Some("0"), None).await.unwrap();
        for case in want {
            assert!(
                plan.splits.iter().any(|s| s.case == *case),
                "{name}: no {case:?} split"
            );
        }
        let actions: Vec<(&str, &str)> = (exp["completed_instants"].as_array().unwrap().iter())
            .map(|i| {
                (
                    i["requested_time"].as_str().unwrap(),
                    i["action"].as_str().unwrap(),
                )
            })
            .collect();
        // Compaction (`commit` on a MOR table) and clustering yield nothing.
        for (t, _) in actions.iter().filter(|(_, a)| *a == "commit") {
            if name.contains("mor") {
                assert!(!plan.instants.iter().any(|i| i == t), "{name}: {t}");
            }
        }
    }
}

#[tokio::test]
async fn tables_without_change_data_capture_say_so() {
    let (table, _) = common::two_readers::open("spark_variants", "spark_v9_bucket_cow").await;
    let err = table
        .changes(Some("0"), None)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("hoodie.table.cdc.enabled"), "{err}");
}

macro_rules! cdc_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                check(stringify!($name)).await;
            }
        )*
    };
}

cdc_tests! {
    cdc_v9_cow_op_key_only,
    cdc_v9_cow_data_before,
    cdc_v9_cow_data_before_after,
    cdc_v9_mor_op_key_only,
    cdc_v9_mor_data_before,
    cdc_v9_mor_data_before_after,
    cdc_v8_mor_data_before_after,
}
