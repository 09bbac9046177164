//! Planning with the metadata table on the `*_meta` fixtures: files come from the `files`
//! partition (no data-partition listing) and agree with a listing; partition stats, column
//! stats and the record index prune to exactly the file groups the data says (worked out from
//! the expected rows), and rows stay equal to a read without skipping and to the expected
//! JSON. Damaged metadata tables: tests/metadata_table_damaged.rs.

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use common::mdt::*;
use common::oracle::key_fields;
use common::*;
use hudi_edge::read::{QueryType, ReadOptions};
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::storage::Purpose;
use hudi_edge::Table;

// --- files from the metadata table ---

#[tokio::test]
async fn files_come_from_the_metadata_table_without_listing_data_partitions() {
    for name in ALL {
        // Every listed prefix, to prove planning lists no data partition.
        let lists = Arc::new(Mutex::new(Vec::<String>::new()));
        let mut recording =
            common::hooked::Hooked::new(Arc::new(LocalStorage::new(table_path(name))));
        let seen = lists.clone();
        recording.on_list = Box::new(move |prefix| seen.lock().unwrap().push(prefix.to_string()));
        let recording = Arc::new(recording);
        let table = Table::open(recording.clone()).await.unwrap();
        let plan = table.plan(&ReadOptions::default()).await.unwrap();
        assert_eq!(plan.stats.planning_source, "metadata_table", "{name}");
        assert!(
            plan.stats.planning_notes[0].contains("no listing of data partitions"),
            "{name}: {:?}",
            plan.stats.planning_notes
        );
        let lists = lists.lock().unwrap().clone();
        assert!(
            lists.iter().all(|p| p.starts_with(".hoodie")),
            "{name}: listed {lists:?}"
        );
        let listed = open(name)
            .await
            .unwrap()
            .plan(&without_metadata(ReadOptions::default()))
            .await
            .unwrap();
        assert_eq!(listed.stats.planning_source, "listing");
        assert_eq!(slices(&plan), slices(&listed), "{name}: slices");
        let exp = expected(name).unwrap();
        let want: Vec<(String, String)> = exp["snapshot_file_slices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let p = s["partition_path"].as_str().unwrap().to_string();
                (p, s["file_id"].as_str().unwrap().to_string())
            })
            .collect();
        let got: Vec<(String, String)> = plan
            .file_slices
            .iter()
            .map(|s| (s.partition.clone(), s.file_id.clone()))
            .collect();
        assert_eq!(got, want, "{name}: snapshot file slices");
    }
}

#[tokio::test]
async fn time_travel_and_incremental_plans_agree_with_listing() {
    for name in ALL {
        let exp = expected(name).unwrap();
        let table = open(name).await.unwrap();
        for c in exp["timeline_folder"]["completed"].as_array().unwrap() {
            let t = c["instant_time"].as_str().unwrap().to_string();
            let cases = [
                ReadOptions {
                    as_of: Some(t.clone()),
                    ..Default::default()
                },
                ReadOptions {
                    query: QueryType::Incremental,
                    start: Some(t.clone()),
                    ..Default::default()
                },
            ];
            for o in cases {
                let mdt = table.plan(&o).await.unwrap();
                let listed = table.plan(&without_metadata(o.clone())).await.unwrap();
                assert_eq!(slices(&mdt), slices(&listed), "{name} {o:?}");
            }
        }
    }
}

// --- data skipping ---

struct Case {
    table: &'static str,
    filters: &'static [&'static str],
    /// What the index stage keeps: the file groups as a set of `partition/file id`
    /// (`None`: work it out from the expected rows' statistics).
    groups: Option<&'static [&'static str]>,
}

async fn check_case(c: &Case) {
    let exp = expected(c.table).unwrap();
    let keys = key_fields(&exp);
    let table = open(c.table).await.unwrap();
    let o = options(c.filters);
    let plan = table.plan(&o).await.unwrap();
    let what = format!("{} {:?}", c.table, c.filters);
    assert_eq!(plan.stats.planning_source, "metadata_table", "{what}");
    let got = groups(&plan);
    let rows = &exp["snapshot"]["rows"];
    let want: BTreeSet<String> = match c.groups {
        Some(g) => g.iter().map(|s| s.to_string()).collect(),
        None => groups_by_statistics(rows, &c.filters.join(" and ")),
    };
    assert_eq!(
        got, want,
        "{what}: planned file groups ({:?})",
        plan.stats.planning_notes
    );
    // No false negative: every group holding a matching row is planned.
    let want_rows = expected_rows(rows, c.filters);
    for r in &want_rows {
        assert!(got.contains(&group_of(r)), "{what}: {} pruned", group_of(r));
    }
    let with = read_rows(&table, &o, &keys).await;
    let fresh = open(c.table).await.unwrap();
    let without_plan = fresh.plan(&without_skipping(o.clone())).await.unwrap();
    let without = read_rows(&fresh, &without_skipping(o.clone()), &keys).await;
    let s = &plan.stats;
    eprintln!(
        "{what}: files {} -> partition {} -> pstats {:?} -> rli {:?} -> cstats {:?} -> footers {}; plan requests {} bytes {} (without skipping: {} requests, {} bytes, {} files)",
        s.files_total,
        s.files_after_partition_pruning,
        s.files_after_partition_stats,
        s.files_after_record_index,
        s.files_after_column_stats,
        s.files_selected,
        plan.io.requests,
        plan.io.bytes,
        without_plan.io.requests,
        without_plan.io.bytes,
        without_plan.stats.files_selected,
    );
    // Every request and byte is counted under one purpose.
    let by_purpose = plan.io.by_purpose.values();
    let sums = by_purpose.fold((0, 0), |(r, b), p| (r + p.requests, b + p.bytes));
    assert_eq!(
        sums,
        (plan.io.requests, plan.io.bytes),
        "{what}: io by purpose"
    );
    assert_eq!(with, without, "{what}: rows with and without skipping");
    assert_eq!(with, want_rows, "{what}: rows against the expected JSON");
}

#[tokio::test]
async fn column_stats_prune_on_data_columns_of_every_type() {
    let cases = [
        // decimal(15,2)
        Case {
            table: COW,
            filters: &["amount > 4000"],
            groups: None,
        },
        Case {
            table: COW,
            filters: &["fee_amount = 7.50"],
            groups: None,
        },
        // date, timestamp
        Case {
            table: COW,
            filters: &["txn_date = 2024-01-21"],
            groups: None,
        },
        Case {
            table: COW,
            filters: &["txn_datetime >= 2024-01-21T00:00:00.000000Z"],
            groups: None,
        },
        // boolean, long, string
        Case {
            table: COW,
            filters: &["is_international = true"],
            groups: None,
        },
        Case {
            table: COW,
            filters: &["txn_ts >= 1700300000007", "txn_ts <= 1700700000016"],
            groups: None,
        },
        Case {
            table: COW,
            filters: &["account_id in (ACC-O, ACC-Z)"],
            groups: None,
        },
        Case {
            table: COW,
            filters: &["currency != USD"],
            groups: None,
        },
        // null counts, OR
        Case {
            table: COW,
            filters: &["merchant_name is null"],
            groups: None,
        },
        Case {
            table: COW,
            filters: &["amount > 8000 or txn_date = 2024-01-21"],
            groups: None,
        },
        Case {
            table: NONPART,
            filters: &["txn_date = 2024-01-20"],
            groups: None,
        },
        Case {
            table: NONPART,
            filters: &["amount < 100"],
            groups: None,
        },
        Case {
            table: MOR,
            filters: &["amount > 4000"],
            groups: None,
        },
        Case {
            table: MOR,
            filters: &["txn_datetime < 2024-01-16T00:00:00.000000Z"],
            groups: None,
        },
    ];
    for c in &cases {
        check_case(c).await;
    }
}

#[tokio::test]
async fn partition_column_and_partition_stats_prune_partitions() {
    let table = open(COW).await.unwrap();
    let plan = table.plan(&options(&["region = eu"])).await.unwrap();
    assert_eq!(plan.stats.files_after_partition_pruning, 2);
    assert!(plan.file_slices.iter().all(|s| s.partition == "region=eu"));
    check_case(&Case {
        table: COW,
        filters: &["region = eu"],
        groups: None,
    })
    .await;

    // amount > 4000: region=eu holds nothing above 999.99, so partition stats drop it
    // (2 files) before column stats look at files.
    let plan = table.plan(&options(&["amount > 4000"])).await.unwrap();
    assert_eq!(plan.stats.files_total, 5);
    assert_eq!(plan.stats.files_after_partition_stats, Some(3));
    assert_eq!(plan.stats.files_after_column_stats, Some(2));
    assert!(plan
        .stats
        .planning_notes
        .iter()
        .any(|n| n == "partition_stats: 2 of 3 partitions may match on [amount]"));
    // Partition stats describe the latest snapshot: not used for time travel.
    let mut o = options(&["amount > 4000"]);
    o.as_of = plan.as_of.clone();
    let tt = table.plan(&o).await.unwrap();
    assert_eq!(tt.stats.files_after_partition_stats, None);
    assert_eq!(groups(&tt), groups(&plan));
}

#[tokio::test]
async fn record_index_goes_straight_to_the_file_groups() {
    let cases = [
        Case {
            table: COW,
            filters: &["txn_id = TXN-013"],
            groups: Some(&["region=us/6d0f5b25-276e-4c1b-8ed0-c74a7d393fc9-0"]),
        },
        Case {
            table: COW,
            filters: &["txn_id in (TXN-013, TXN-018, TXN-404)"],
            groups: Some(&[
                "region=eu/a7c7d197-4f4c-4552-9b08-b19ad21297b3-0",
                "region=us/6d0f5b25-276e-4c1b-8ed0-c74a7d393fc9-0",
            ]),
        },
        Case {
            table: COW,
            filters: &["_hoodie_record_key = TXN-017"],
            groups: Some(&["region=us/cfac0ac4-94d0-48b8-9af4-f0dbc7acfe0c-0"]),
        },
        // A deleted key is not in the index: nothing to read.
        Case {
            table: COW,
            filters: &["txn_id = TXN-002"],
            groups: Some(&[]),
        },
        Case {
            table: NONPART,
            filters: &["txn_id = TXN-016"],
            groups: Some(&["/090e6d2d-294b-4b98-a7f3-a5b1f93d58b4-0"]),
        },
        Case {
            table: MOR,
            filters: &["txn_id = TXN-001"],
            groups: Some(&["region=us/4b63f708-eab3-4bdf-ba38-ce90f356fce2-0"]),
        },
        Case {
            table: TRIPS_V8,
            filters: &["uuid = 7a84095f-737f-40bc-b62f-6b69664712d2"],
            groups: Some(&["city=sao_paulo/8aa68f7e-afd6-4c94-b86c-8a886552e08d-0"]),
        },
    ];
    for c in &cases {
        check_case(c).await;
        let plan = open(c.table)
            .await
            .unwrap()
            .plan(&options(c.filters))
            .await
            .unwrap();
        assert!(
            plan.stats.files_after_record_index.is_some(),
            "{:?}",
            c.filters
        );
        assert_eq!(plan.file_slices.len(), c.groups.unwrap().len());
        // The key column's statistics add nothing to an exact index.
        assert_eq!(plan.stats.files_after_column_stats, None, "{:?}", c.filters);
    }
    // With another column in the filter, column stats still run on what the index kept.
    let plan = open(COW)
        .await
        .unwrap()
        .plan(&options(&["txn_id in (TXN-013, TXN-018)", "amount > 100"]))
        .await
        .unwrap();
    assert_eq!(plan.stats.files_after_record_index, Some(2));
    assert_eq!(plan.stats.files_after_column_stats, Some(1));
}

#[tokio::test]
async fn mor_slices_with_log_files_keep_rows_at_every_instant() {
    // Time travel reaches slices with log files (updates and delete-only logs): a slice is
    // kept when any of its files may match, and rows equal a read without skipping and the
    // expected time-travel rows.
    for name in [MOR, TRIPS_V8] {
        let exp = expected(name).unwrap();
        let keys = key_fields(&exp);
        let table = open(name).await.unwrap();
        let filters: &[&str] = if name == MOR {
            &["amount > 1000", "is_international = false"]
        } else {
            &["fare > 40", "rider = rider-A"]
        };
        let mut with_logs = 0;
        for tt in exp["time_travel"].as_array().unwrap() {
            let as_of = tt["as_of"].as_str().unwrap();
            for f in filters {
                for query in [QueryType::Snapshot, QueryType::ReadOptimized] {
                    let mut o = options(&[f]);
                    o.as_of = Some(as_of.to_string());
                    o.query = query;
                    let plan = table.plan(&o).await.unwrap();
                    with_logs += plan
                        .file_slices
                        .iter()
                        .filter(|s| !s.log_files.is_empty())
                        .count();
                    let got = read_rows(&table, &o, &keys).await;
                    let without = read_rows(&table, &without_skipping(o.clone()), &keys).await;
                    assert_eq!(got, without, "{name} as of {as_of} {query:?} {f}");
                    if query == QueryType::Snapshot {
                        assert_eq!(
                            got,
                            expected_rows(&tt["rows"], &[f]),
                            "{name} as of {as_of} {f}"
                        );
                    }
                }
            }
        }
        assert!(with_logs > 0, "{name}: no planned slice had log files");
    }
}

#[tokio::test]
async fn skipping_reads_fewer_files_and_bytes() {
    for (name, filter) in [
        (COW, "txn_date = 2024-01-21"),
        (MOR, "amount > 4000"),
        (NONPART, "txn_date = 2024-01-20"),
        (TRIPS_V8, "fare > 90"),
    ] {
        let o = options(&[filter]);
        let with = open(name).await.unwrap().read(&o).await.unwrap();
        let without = open(name)
            .await
            .unwrap()
            .read(&without_skipping(o.clone()))
            .await
            .unwrap();
        let s = &with.plan.stats;
        let pruned = s.files_after_column_stats.unwrap();
        assert!(pruned < s.files_total, "{name} {filter}: {s:?}");
        let bytes = |r: &hudi_edge::read::ReadResult| r.plan.io.bytes + r.io.bytes;
        // Of the data files: footers (bloom filters left unread) are now cheaper than the
        // index blocks of these few-file tables' metadata table, so all bytes may not fall.
        let data_bytes = |r: &hudi_edge::read::ReadResult| {
            let of = |io: &hudi_edge::storage::IoSnapshot| -> u64 {
                [Purpose::Footer, Purpose::ColumnChunk, Purpose::LogBlock]
                    .iter()
                    .filter_map(|p| io.by_purpose.get(p))
                    .map(|p| p.bytes)
                    .sum()
            };
            of(&r.plan.io) + of(&r.io)
        };
        assert!(
            data_bytes(&with) < data_bytes(&without),
            "{name} {filter}: {} data-file bytes with skipping, {} without",
            data_bytes(&with),
            data_bytes(&without)
        );
        eprintln!(
            "{name} [{filter}]: files {} -> {}; plan+read requests {} vs {} without skipping; bytes {} vs {}",
            s.files_total,
            s.files_selected,
            with.plan.io.requests + with.io.requests,
            without.plan.io.requests + without.io.requests,
            bytes(&with),
            bytes(&without),
        );
    }
}
