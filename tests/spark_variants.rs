//! Spark-written tables (Apache Hudi 1.1.1 at table version 9, one by 0.15 at version 6) with
//! writer options the shared fixtures do not cover (tests/data/spark_variants, made by tests/write/make_spark_variants.sh):
//! a bucket index, dropped partition columns, URL-encoded partition paths, CDC (its log files
//! ignored by reads) and column stats on decimal, date and timestamp columns, and a Hudi 0.15
//! (table version 6) table with its metadata table, a table without meta fields whose record
//! index Hudi leaves empty, and tables whose schema evolved on read
//! (renamed, dropped, retyped and re-added columns, read by column id). Every query equals what both PyPI `hudi`
//! and Hudi Spark returned (or, where they differ, what Hudi's source backs), planned from the
//! metadata table (v9) or by listing, as the plan notes say (v6).

#[macro_use]
mod common;

use common::two_readers;

async fn check(name: &str) {
    let (table, exp) = two_readers::open("spark_variants", name).await;
    // Metadata tables of table version 6 are not read (their 0.x layout): the plan says so.
    let v6 = exp["table_version"] == 6;
    let source = if v6 { "listing" } else { "metadata_table" };
    two_readers::check(name, &table, &exp, Some(source)).await;
    if v6 {
        let plan = table.plan(&Default::default()).await.unwrap();
        let notes = plan.stats.planning_notes.join("\n");
        assert!(notes.contains("table version 6"), "{name}: {notes}");
    }
}

/// Hudi writes no record-index entries for a table without meta fields: a key filter is not
/// answered by that index (Spark's is, and loses the key's rows), and returns every row the
/// snapshot holds for the key (Spark's upserts left id-005 in three file groups).
#[tokio::test]
async fn record_index_of_a_table_without_meta_fields_is_not_used() {
    let name = "spark_v9_no_meta_fields_record_index_mor";
    let (table, _) = two_readers::open("spark_variants", name).await;
    let filter = ["id = id-005"];
    let plan = table.plan(&two_readers::opts(&filter)).await.unwrap();
    let notes = plan.stats.planning_notes.join("\n");
    assert!(notes.contains("record_index not used"), "{notes}");
    assert_eq!(plan.stats.files_after_record_index, None, "{notes}");
    let pruned = table.read(&two_readers::opts(&filter)).await.unwrap();
    let mut unpruned = two_readers::opts(&filter);
    unpruned.data_skipping = false;
    let unpruned = table.read(&unpruned).await.unwrap();
    assert_eq!((pruned.num_rows(), unpruned.num_rows()), (3, 3));
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
    spark_v9_bucket_mor,
    spark_v9_drop_partcols,
    spark_v9_drop_partcols_mor,
    spark_v9_urlencoded,
    spark_v9_cdc_mor,
    spark_v9_colstats_types,
    spark_v9_no_meta_fields_cow,
    spark_v9_no_meta_fields_mor,
    spark_v9_no_meta_fields_record_index_mor,
    spark_v6_mdt_cow,
    spark_v9_schema_on_read_cow,
    spark_v9_schema_on_read_mor,
}
