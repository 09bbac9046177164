//! Tables written by hudi-rs 0.6.0-rc.1's writer (tests/data/hudi_rs, made by
//! tests/write/make_hudi_rs_matrix.sh): COW and MOR × table versions 8 and 9 × partitioned or
//! not, with a metadata table of files, column_stats, partition_stats and record_index, plus a
//! MOR table after hudi-rs' compaction and one after its rollback, and two small tables with
//! decimal columns of four precisions (Avro `bytes` decimals). Every query equals what
//! both PyPI `hudi` (hudi-rs) and Apache Hudi Spark 1.1.1 returned, and plans come from the
//! metadata table, whose HFiles declare CRC32C checksums stored as zeros (read as Hudi's own
//! reader reads them, and said so in the plan notes).

#[macro_use]
mod common;

use std::collections::BTreeSet;

use common::{oracle_rows, two_readers};
use hudi_edge::file_group::FileSlice;
use hudi_edge::read::{Plan, ReadOptions};
use serde_json::Value;

fn notes(plan: &Plan) -> String {
    plan.stats.planning_notes.join("\n")
}

fn of_slices<'a>(plan: &'a Plan, f: impl Fn(&'a FileSlice) -> &'a String) -> BTreeSet<&'a str> {
    plan.file_slices.iter().map(|s| f(s).as_str()).collect()
}

async fn check(name: &str) {
    let (table, exp) = two_readers::open("hudi_rs", name).await;
    two_readers::check(name, &table, &exp, Some("metadata_table")).await;
    if name.contains("decimals") {
        // A table of its own shape (no matrix writes); its filters are on decimal columns.
        return;
    }

    let snapshot_q = &exp["queries"][0];
    assert_eq!(snapshot_q["kind"], "snapshot");
    let snapshot = two_readers::expected_rows(&exp, snapshot_q);
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert!(
        notes(&plan).contains("declare checksums but store zeros"),
        "{name}: {}",
        notes(&plan)
    );
    assert!(
        table
            .io()
            .warnings
            .iter()
            .any(|w| w.contains("store zeros")),
        "{name}: {:?}",
        table.io().warnings
    );
    if exp["table_type"] == "MERGE_ON_READ" && !name.contains("compacted") {
        // Updates sit in Parquet log blocks the snapshot merged.
        assert!(
            plan.file_slices.iter().any(|s| s.log_files.len() >= 2),
            "{name}"
        );
    }

    // Record index: keys go straight to their file groups (in any shard), deleted keys to
    // none.
    let with_key = |k: &str| snapshot.iter().find(|r| r["id"] == k).cloned();
    for keys in [
        vec!["id-0050"],
        vec!["id-0001", "id-0040", "id-0099", "id-0004"],
    ] {
        let filter = format!("id in ({})", keys.join(", "));
        let result = table.read(&two_readers::opts(&[&filter])).await.unwrap();
        let want: Vec<Value> = keys.iter().filter_map(|k| with_key(k)).collect();
        let mut got = oracle_rows(&result.batches, &[]);
        got.sort_by_key(|r| r["id"].as_str().unwrap().to_string());
        assert_eq!(got, want, "{name}: {filter}");
        let s = &result.plan.stats;
        assert_eq!(
            s.files_after_record_index.map(|_| ()),
            Some(()),
            "{name}: {}",
            notes(&result.plan)
        );
        // Exactly the file groups holding the keys (a base file name starts with its file id;
        // hudi-rs stamps rows from log blocks with the file id alone).
        let planned = of_slices(&result.plan, |s| &s.file_id);
        let holding: BTreeSet<&str> = want
            .iter()
            .map(|r| {
                r["_hoodie_file_name"]
                    .as_str()
                    .unwrap()
                    .split('_')
                    .next()
                    .unwrap()
            })
            .collect();
        assert_eq!(planned, holding, "{name}: {filter}");
    }

    // Column stats: only the first insert wrote ts < 1030, into the first file group of each
    // partition. Partition stats: from the fifth write on, every write touched partition c
    // only, and only those wrote ts >= 5000.
    for (filter, keep) in [("ts < 1030", 1030..i64::MAX), ("ts >= 5000", 0..5000)] {
        let result = table.read(&two_readers::opts(&[filter])).await.unwrap();
        let want: Vec<Value> = snapshot
            .iter()
            .filter(|r| !keep.contains(&r["ts"].as_i64().unwrap()))
            .cloned()
            .collect();
        assert!(!want.is_empty(), "{name}: {filter}");
        assert_eq!(oracle_rows(&result.batches, &[]), want, "{name}: {filter}");
        let s = &result.plan.stats;
        let (before, why) = (s.files_after_partition_pruning, notes(&result.plan));
        if filter.contains('<') {
            let kept = s.files_after_column_stats.expect("column stats ran");
            assert!(
                kept < before,
                "{name}: {filter}: column stats kept {kept}: {why}"
            );
        } else if !name.contains("nonpart") {
            let kept = s.files_after_partition_stats.expect("partition stats ran");
            assert!(
                kept < before,
                "{name}: {filter}: partition stats kept {kept}: {why}"
            );
            let partitions = of_slices(&result.plan, |s| &s.partition);
            assert_eq!(partitions, BTreeSet::from(["part=c"]), "{name}: {filter}");
        }
    }
}

two_reader_tests! {
    "hudi_rs",
    check,
    hudi_rs_cow_v8_part,
    hudi_rs_cow_v8_nonpart,
    hudi_rs_cow_v9_part,
    hudi_rs_cow_v9_nonpart,
    hudi_rs_mor_v8_part,
    hudi_rs_mor_v8_nonpart,
    hudi_rs_mor_v9_part,
    hudi_rs_mor_v9_nonpart,
    hudi_rs_mor_v9_part_compacted,
    hudi_rs_mor_v9_part_rollback,
    hudi_rs_decimals_cow_v9,
    hudi_rs_decimals_mor_v9,
}
