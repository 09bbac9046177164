//! Spark-written tables (Apache Hudi 1.1.1, table version 9) with writer options the shared
//! fixtures do not cover (tests/data/spark_variants, made by tests/write/make_spark_variants.sh):
//! a bucket index, dropped partition columns, URL-encoded partition paths, CDC (its log files
//! ignored by reads) and column stats on decimal, date and timestamp columns. Every query equals
//! what both PyPI `hudi` and Hudi Spark returned, planned from the metadata table.

#[macro_use]
mod common;

use common::two_readers;

async fn check(name: &str) {
    let (table, exp) = two_readers::open("spark_variants", name).await;
    two_readers::check(name, &table, &exp, Some("metadata_table")).await;
}

/// Column stats of logical types prune by value: decimals by their scaled value, dates by day,
/// timestamps by instant.
#[tokio::test]
async fn column_stats_of_logical_types_prune() {
    let name = "spark_v9_colstats_types";
    let (table, _) = two_readers::open("spark_variants", name).await;
    for filter in [
        "amount > 20.00",
        "event_date < 2024-01-08",
        "event_ts >= 2024-01-01T20:00:00Z",
    ] {
        let plan = table.plan(&two_readers::opts(&[filter])).await.unwrap();
        let s = &plan.stats;
        let kept = s.files_after_column_stats.expect("column stats ran");
        let all = table.read(&two_readers::opts(&[filter])).await.unwrap();
        let mut unpruned = two_readers::opts(&[filter]);
        unpruned.data_skipping = false;
        let unpruned = table.read(&unpruned).await.unwrap();
        assert_eq!(all.num_rows(), unpruned.num_rows(), "{filter}");
        assert!(all.num_rows() > 0, "{filter}");
        assert!(
            kept < s.files_after_partition_pruning,
            "{filter}: kept {kept}: {}",
            s.planning_notes.join("\n")
        );
    }
}

two_reader_tests! {
    "spark_variants",
    check,
    spark_v9_bucket_cow,
    spark_v9_drop_partcols,
    spark_v9_urlencoded,
    spark_v9_cdc_mor,
    spark_v9_colstats_types,
}
