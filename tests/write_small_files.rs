//! New keys fill small file groups, as Java's upsert partitioners send them, instead of
//! opening a file group per commit: Copy-On-Write and Merge-On-Read without a log-indexing
//! index rewrite the smallest base file; Merge-On-Read with the record index appends them
//! to small slices' logs. Rows read the same as a model of the writes and as hudi-rs reads
//! them.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use helpers::*;
use hudi_edge::config::TableType;
use hudi_edge::read::ReadOptions;
use hudi_edge::write::{Operation, WriteOptions};
use serde_json::{json, Map, Value};

fn dir_for(test: &str) -> PathBuf {
    fresh_dir("small_files", test)
}

/// Write `n`: two updates of earlier keys and three new keys.
fn batch(n: usize) -> Vec<Map<String, Value>> {
    let row = |i: usize| {
        let region = ["us", "eu"][i % 2];
        json!({"id": format!("K{i:03}"), "ts": n as i64, "region": region, "v": n as f64})
            .as_object()
            .unwrap()
            .clone()
    };
    let mut rows: Vec<_> = (0..3).map(|k| row(n * 3 + k)).collect();
    if n > 0 {
        rows.extend([row(n - 1), row((n * 7) % (n * 3))]);
    }
    rows
}

/// (file groups, slices of the latest snapshot with log files) per table.
async fn layout(dir: &Path) -> (usize, usize) {
    let table = open(dir).await;
    let plan = table.plan(&ReadOptions::default()).await.expect("plan");
    let logs = plan
        .file_slices
        .iter()
        .filter(|s| !s.log_files.is_empty())
        .count();
    (plan.file_slices.len(), logs)
}

#[tokio::test]
async fn inserts_fill_small_file_groups() {
    type Case<'a> = (&'a str, TableType, &'a [(&'a str, &'a str)], bool);
    let cases: [Case; 3] = [
        ("cow", TableType::CopyOnWrite, &[], false),
        ("mor_simple", TableType::MergeOnRead, &[], false),
        (
            "mor_record_index",
            TableType::MergeOnRead,
            &[("hoodie.metadata.record.index.enable", "true")],
            true,
        ),
    ];
    let mut hudi_rs = HudiRs::start();
    for (name, table_type, options, logs_expected) in cases {
        let dir = dir_for(name);
        create_events(&dir, table_type, options).await;
        let mut model: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
        for n in 0..12 {
            let rows = batch(n);
            let table = open(&dir).await;
            let batches = decode_input(&table, &rows).await;
            table
                .write(&batches, &WriteOptions::new(Operation::Upsert))
                .await
                .expect("write");
            for r in rows {
                model.insert(r["id"].as_str().unwrap().to_string(), r);
            }
        }
        let (groups, with_logs) = layout(&dir).await;
        assert_eq!(groups, 2, "{name}: one file group per partition");
        assert_eq!(
            with_logs > 0,
            logs_expected,
            "{name}: new keys appended to logs"
        );
        let expected: Vec<Map<String, Value>> = model.into_values().collect();
        let ours = our_rows(&dir, ReadOptions::default()).await;
        same_rows(
            &data_only(&ours),
            &data_only(&model_rows(&dir, &expected).await),
            name,
        );
        same_rows(&data_only(&ours), &data_only(&hudi_rs.rows(&dir)), name);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
