//! Every fixture table (written by Apache Hudi Spark) read natively and compared with its
//! expected output value for value: timeline, latest file slices, commit metadata, and the
//! full rows of the snapshot, time travel at every commit, incremental ranges, read-optimized
//! and filtered reads (tests/common/oracle.rs). Disagreements with the oracle are allowed only
//! where tests/data/oracle_allowances.json names them (tests/data/fixtures/README.md D2, D3,
//! D4, D6).

mod common;

use common::oracle::{
    allowance, allowances, check_reads, expected_commits, expected_file_slices, CommitFacts,
};
use common::*;
use hudi_edge::api::commit::CommitDetail;

pub async fn check(name: &str) {
    let exp = expected(name).unwrap_or_else(|| panic!("no expected output for {name}"));
    let spec = allowances();
    if let Some(a) = allowance(&spec, "unsupported_base_file_format", name, &exp, "open") {
        let err = open(name).await.expect_err("refused base file format");
        assert_eq!(err.code(), a["error"]["code"], "{name}: {err}");
        let needle = a["error"]["message_contains"].as_str().unwrap();
        assert!(err.to_string().contains(needle), "{name}: {err}");
        return;
    }
    let table = open(name)
        .await
        .unwrap_or_else(|e| panic!("{name}: open failed: {e}"));
    let v8_plus = exp["table"]["table_version"].as_u64().unwrap_or(0) >= 8;

    // Timeline: every completed instant with its action (and completion time for v8+).
    let timeline = table.timeline();
    let got: Vec<(String, String, String)> = timeline
        .completed()
        .map(|i| {
            (
                i.requested_time.clone(),
                i.action.clone(),
                i.requested_action().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String, String)> = exp["timeline_folder"]["completed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
            (s("instant_time"), s("action"), s("requested_action"))
        })
        .collect();
    assert_eq!(got, want, "{name}: completed instants");
    if v8_plus {
        for c in exp["timeline_folder"]["completed"].as_array().unwrap() {
            let i = timeline.get(c["instant_time"].as_str().unwrap()).unwrap();
            assert_eq!(
                i.completion_time.as_deref(),
                c["completion_time"].as_str(),
                "{name}: completion time"
            );
        }
    }

    // The latest file slices: base file and log files of every file group.
    let view = table
        .file_system_view(None)
        .await
        .expect("file system view");
    let mut slices: Vec<(String, String, String, Vec<String>)> = view
        .latest_slices()
        .map(|s| {
            let mut logs: Vec<String> = s.log_files.iter().map(|l| l.name.clone()).collect();
            logs.sort();
            let base = s.base_file.as_ref().map(|b| b.name.clone());
            (
                s.partition.clone(),
                s.file_id.clone(),
                base.unwrap_or_default(),
                logs,
            )
        })
        .collect();
    slices.sort();
    assert_eq!(
        slices,
        expected_file_slices(&exp),
        "{name}: latest file slices"
    );

    // Commit metadata: operation, write totals, files written, replaced file groups.
    for want in expected_commits(&exp) {
        let instant = timeline.get(&want.0).expect("instant of commit metadata");
        let content = table
            .instant_content(instant)
            .await
            .expect("instant content");
        let d = CommitDetail::new(instant.into(), Some(content));
        let mut files: Vec<String> = d.files.iter().map(|f| f.path.clone()).collect();
        files.sort();
        let mut replaced: Vec<(String, String)> = d
            .replaced_file_groups
            .iter()
            .map(|r| (r.partition.clone(), r.file_id.clone()))
            .collect();
        replaced.sort();
        let got: CommitFacts = (
            instant.requested_time.clone(),
            instant.action.clone(),
            d.operation.clone().unwrap_or_default(),
            [d.writes, d.inserts, d.updates, d.deletes],
            files,
            replaced,
        );
        assert_eq!(got, want, "{name}: commit metadata of {}", want.0);
    }

    check_reads(&spec, name, &exp, &table).await;
}

macro_rules! fixture_tests {
    ($($fn:ident => $name:literal,)*) => {
        $(
            #[tokio::test]
            async fn $fn() {
                check($name).await;
            }
        )*

        #[test]
        fn every_fixture_has_a_test() {
            let covered = [$($name),*];
            for name in fixture_names() {
                assert!(covered.contains(&name.as_str()), "fixture {name} has no test");
            }
        }
    };
}

fixture_tests! {
    qs_cow_v9_trips_lance => "quickstart_trips_table/cow/v9_trips_lance",
    qs_mor_v6_trips_8i1u => "quickstart_trips_table/mor/avro/v6_trips_8i1u",
    qs_mor_v6_trips_8i3d => "quickstart_trips_table/mor/avro/v6_trips_8i3d",
    qs_mor_v8_trips_8i3u1d => "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
    qs_mor_v9_trips_lance => "quickstart_trips_table/mor/avro/v9_trips_lance",
    cow_v6_complexkeygen_hivestyle => "sample_table/cow/v6_complexkeygen_hivestyle",
    cow_v6_empty => "sample_table/cow/v6_empty",
    cow_v6_nonpartitioned => "sample_table/cow/v6_nonpartitioned",
    cow_v6_simplekeygen_hivestyle_no_metafields => "sample_table/cow/v6_simplekeygen_hivestyle_no_metafields",
    cow_v6_simplekeygen_nonhivestyle => "sample_table/cow/v6_simplekeygen_nonhivestyle",
    cow_v6_timebasedkeygen_nonhivestyle => "sample_table/cow/v6_timebasedkeygen_nonhivestyle",
    cow_v8_empty => "sample_table/cow/v8_empty",
    cow_v8_nonpartitioned => "sample_table/cow/v8_nonpartitioned",
    cow_v8_simplekeygen_hivestyle_no_metafields => "sample_table/cow/v8_simplekeygen_hivestyle_no_metafields",
    cow_v8_simplekeygen_nonhivestyle => "sample_table/cow/v8_simplekeygen_nonhivestyle",
    cow_v9_lance_nonpartitioned => "sample_table/cow/v9_lance_nonpartitioned",
    cow_v9_lance_txns_nonpart => "sample_table/cow/v9_lance_txns_nonpart",
    cow_v9_lance_txns_simple => "sample_table/cow/v9_lance_txns_simple",
    cow_v9_timebasedkeygen_epochmillis => "sample_table/cow/v9_timebasedkeygen_epochmillis",
    cow_v9_timebasedkeygen_nonhivestyle => "sample_table/cow/v9_timebasedkeygen_nonhivestyle",
    cow_v9_timebasedkeygen_unixtimestamp => "sample_table/cow/v9_timebasedkeygen_unixtimestamp",
    cow_v9_txns_complex_nometa => "sample_table/cow/v9_txns_complex_nometa",
    cow_v9_txns_nonpart_meta => "sample_table/cow/v9_txns_nonpart_meta",
    cow_v9_txns_nonpart_nometa => "sample_table/cow/v9_txns_nonpart_nometa",
    cow_v9_txns_simple_meta => "sample_table/cow/v9_txns_simple_meta",
    cow_v9_txns_simple_nometa => "sample_table/cow/v9_txns_simple_nometa",
    cow_v9_txns_simple_overwrite => "sample_table/cow/v9_txns_simple_overwrite",
    mor_v9_lance_nonhivestyle => "sample_table/mor/avro/v9_lance_nonhivestyle",
    mor_v9_nonpartitioned_rollback => "sample_table/mor/avro/v9_nonpartitioned_rollback",
    mor_v9_timebasedkeygen_nonhivestyle => "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
    mor_v9_txns_complex_nometa => "sample_table/mor/avro/v9_txns_complex_nometa",
    mor_v9_txns_nonpart_nometa => "sample_table/mor/avro/v9_txns_nonpart_nometa",
    mor_v9_txns_simple_meta => "sample_table/mor/avro/v9_txns_simple_meta",
    mor_v9_txns_simple_nometa => "sample_table/mor/avro/v9_txns_simple_nometa",
    mor_parquet_v6_complexkeygen_hivestyle => "sample_table/mor/parquet/v6_complexkeygen_hivestyle",
    mor_parquet_v6_empty => "sample_table/mor/parquet/v6_empty",
    mor_parquet_v6_nonpartitioned => "sample_table/mor/parquet/v6_nonpartitioned",
    mor_parquet_v6_simplekeygen_hivestyle_no_metafields => "sample_table/mor/parquet/v6_simplekeygen_hivestyle_no_metafields",
    mor_parquet_v6_simplekeygen_nonhivestyle => "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle",
    mor_parquet_v6_simplekeygen_nonhivestyle_overwritetable => "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle_overwritetable",
}
