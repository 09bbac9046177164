//! Planning with the metadata table on the `*_meta` fixtures: files come from the `files`
//! partition (no data-partition listing) and agree with a listing; partition stats, column
//! stats and the record index prune to exactly the file groups the data says (worked out from
//! the expected rows), rows stay equal to a read without skipping and to the expected JSON,
//! and damaged metadata tables fall back safely with a note.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use common::*;
use hudi_edge::expr::{parse_filter, Expr, Op, Predicate};
use hudi_edge::read::{Plan, QueryType, ReadOptions};
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::storage::Purpose;
use hudi_edge::Table;
use serde_json::Value;

const COW: &str = "sample_table/cow/v9_txns_simple_meta";
const MOR: &str = "sample_table/mor/avro/v9_txns_simple_meta";
const NONPART: &str = "sample_table/cow/v9_txns_nonpart_meta";
const TRIPS_V8: &str = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d";
const ALL: [&str; 4] = [COW, MOR, NONPART, TRIPS_V8];

fn options(filters: &[&str]) -> ReadOptions {
    ReadOptions {
        filters: filters.iter().map(|f| parse_filter(f).unwrap()).collect(),
        ..Default::default()
    }
}

fn without_skipping(mut o: ReadOptions) -> ReadOptions {
    o.data_skipping = false;
    o
}

fn without_metadata(mut o: ReadOptions) -> ReadOptions {
    o.use_metadata_table = false;
    o
}

/// Planned file groups as `partition/file id`.
fn groups(plan: &Plan) -> BTreeSet<String> {
    plan.file_slices
        .iter()
        .map(|s| format!("{}/{}", s.partition, s.file_id))
        .collect()
}

/// Everything a plan says about its slices, to compare two plans.
fn slices(plan: &Plan) -> Vec<(String, String, Option<String>, Vec<String>)> {
    plan.file_slices
        .iter()
        .map(|s| {
            (
                s.partition.clone(),
                s.file_id.clone(),
                s.base_path(),
                s.log_paths(),
            )
        })
        .collect()
}

fn key_fields(exp: &Value) -> Vec<String> {
    exp["table"]["record_key_fields"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

async fn read_rows(table: &Table, opts: &ReadOptions, keys: &[String]) -> Vec<Value> {
    let r = table
        .read(opts)
        .await
        .unwrap_or_else(|e| panic!("read {opts:?}: {e}"));
    oracle_rows(&r.batches, keys)
}

// --- the filter, evaluated on expected JSON rows (SQL semantics: null never matches) ---

fn compare(row: &Value, literal: &str) -> Option<std::cmp::Ordering> {
    match row {
        Value::Null => None,
        Value::Number(n) => n.as_f64()?.partial_cmp(&literal.parse::<f64>().ok()?),
        Value::Bool(b) => Some(b.cmp(&literal.parse::<bool>().ok()?)),
        Value::String(s) => match (s.parse::<f64>(), literal.parse::<f64>()) {
            (Ok(a), Ok(b)) => a.partial_cmp(&b),
            _ => Some(s.as_str().cmp(literal)),
        },
        _ => None,
    }
}

fn row_matches(row: &Value, e: &Expr) -> bool {
    match e {
        Expr::And(parts) => parts.iter().all(|p| row_matches(row, p)),
        Expr::Or(parts) => parts.iter().any(|p| row_matches(row, p)),
        Expr::Pred(p) => {
            let v = &row[p.column.as_str()];
            let cmp = |lit: &str| compare(v, lit);
            let first = || cmp(&p.values[0]);
            use std::cmp::Ordering::*;
            match p.op {
                Op::Eq => first() == Some(Equal),
                Op::Ne => matches!(first(), Some(Less | Greater)),
                Op::Lt => first() == Some(Less),
                Op::Le => matches!(first(), Some(Less | Equal)),
                Op::Gt => first() == Some(Greater),
                Op::Ge => matches!(first(), Some(Greater | Equal)),
                Op::In => p.values.iter().any(|l| cmp(l) == Some(Equal)),
                Op::NotIn => !v.is_null() && p.values.iter().all(|l| cmp(l) != Some(Equal)),
                Op::IsNull => v.is_null(),
                Op::IsNotNull => !v.is_null(),
            }
        }
    }
}

fn expected_rows(rows: &Value, filters: &[&str]) -> Vec<Value> {
    let exprs: Vec<Expr> = filters.iter().map(|f| parse_filter(f).unwrap()).collect();
    rows.as_array()
        .unwrap()
        .iter()
        .filter(|r| exprs.iter().all(|e| row_matches(r, e)))
        .cloned()
        .collect()
}

/// `partition/file id` of a snapshot row.
fn group_of(row: &Value) -> String {
    let name = row["_hoodie_file_name"].as_str().unwrap();
    let id = name.split('_').next().unwrap();
    format!("{}/{id}", row["_hoodie_partition_path"].as_str().unwrap())
}

/// The file groups whose rows' min/max (and null counts) admit the filter — what exact
/// file-level statistics prune to when every row of a file is live (copy-on-write, or
/// merge-on-read slices without log files).
fn groups_by_statistics(rows: &Value, filter: &str) -> BTreeSet<String> {
    let expr = parse_filter(filter).unwrap();
    let mut by_group: std::collections::BTreeMap<String, Vec<&Value>> = Default::default();
    for r in rows.as_array().unwrap() {
        by_group.entry(group_of(r)).or_default().push(r);
    }
    by_group
        .into_iter()
        .filter(|(_, rs)| stats_admit(rs, &expr))
        .map(|(g, _)| g)
        .collect()
}

fn stats_admit(rows: &[&Value], e: &Expr) -> bool {
    match e {
        Expr::And(parts) => parts.iter().all(|p| stats_admit(rows, p)),
        Expr::Or(parts) => parts.iter().any(|p| stats_admit(rows, p)),
        Expr::Pred(p) => {
            let values: Vec<&Value> = rows
                .iter()
                .map(|r| &r[p.column.as_str()])
                .filter(|v| !v.is_null())
                .collect();
            let nulls = rows.len() - values.len();
            let lit = |l: &str| {
                // Any value of the file may be anywhere in [min, max]: a range test.
                let below = values.iter().any(|v| {
                    matches!(
                        compare(v, l),
                        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
                    )
                });
                let above = values.iter().any(|v| {
                    matches!(
                        compare(v, l),
                        Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
                    )
                });
                (below, above)
            };
            // No non-null value: min/max are unknown, so only null counts can prune.
            let unknown = values.is_empty();
            match p.op {
                Op::Eq => unknown || lit(&p.values[0]) == (true, true),
                Op::In => unknown || p.values.iter().any(|l| lit(l) == (true, true)),
                // A range or `!=` admits [min, max] iff some value satisfies it.
                Op::Lt | Op::Le | Op::Gt | Op::Ge | Op::Ne => unknown || range_admits(&values, p),
                Op::NotIn => true,
                Op::IsNull => nulls > 0,
                Op::IsNotNull => !values.is_empty(),
            }
        }
    }
}

/// `<`, `>`, … against [min, max]: whether the extreme value satisfies the predicate.
fn range_admits(values: &[&Value], p: &Predicate) -> bool {
    let row = |v: &Value| serde_json::json!({ p.column.as_str(): v });
    values
        .iter()
        .any(|v| row_matches(&row(v), &Expr::Pred(p.clone())))
}

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

// --- damaged metadata tables ---

static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A private copy of a fixture table to damage.
fn copy_of(name: &str) -> PathBuf {
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dest = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("damaged-tables")
        .join(format!(
            "{}-{}-{n}",
            name.replace('/', "_"),
            std::process::id()
        ));
    let _ = std::fs::remove_dir_all(&dest);
    copy_dir(&table_path(name), &dest);
    dest
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn files_in(dir: &Path, pred: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| pred(&p.file_name().unwrap().to_string_lossy()))
        .collect();
    out.sort();
    out
}

fn truncate(path: &Path) {
    let len = std::fs::metadata(path).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len / 2).unwrap();
}

async fn open_at(path: &Path) -> Table {
    Table::open(Arc::new(LocalStorage::new(path)))
        .await
        .unwrap()
}

fn has_note(plan: &Plan, needle: &str) -> bool {
    plan.stats.planning_notes.iter().any(|n| n.contains(needle))
}

#[tokio::test]
async fn truncated_files_partition_falls_back_to_listing() {
    let dir = copy_of(COW);
    let files = dir.join(".hoodie/metadata/files");
    let latest_base = files_in(&files, |n| n.ends_with(".hfile")).pop().unwrap();
    truncate(&latest_base);
    let table = open_at(&dir).await;
    let plan = table.plan(&options(&["amount > 4000"])).await.unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    let name = latest_base
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        has_note(&plan, "cannot be read") && has_note(&plan, &name),
        "{:?}",
        plan.stats.planning_notes
    );
    let exp = expected(COW).unwrap();
    let rows = read_rows(&table, &options(&["amount > 4000"]), &key_fields(&exp)).await;
    assert_eq!(
        rows,
        expected_rows(&exp["snapshot"]["rows"], &["amount > 4000"])
    );
}

/// A wrong stored checksum is read as Apache Hudi's reader reads it (hudi-io never verifies
/// them), and said in the plan notes and io warnings.
#[tokio::test]
async fn wrong_hfile_checksum_is_read_and_said() {
    let dir = copy_of(TRIPS_V8);
    let files = dir.join(".hoodie/metadata/files");
    let latest_base = files_in(&files, |n| n.ends_with(".hfile")).pop().unwrap();
    let mut bytes = std::fs::read(&latest_base).unwrap();
    assert_eq!(bytes[24], 2, "HBase writes CRC32C");
    // The first block starts the file; its last byte is a checksum byte.
    let end = 33 + u32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[end - 1] ^= 0x5a;
    std::fs::write(&latest_base, bytes).unwrap();
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(plan.stats.planning_source, "metadata_table");
    assert!(
        has_note(&plan, "wrong or uncheckable checksums") && has_note(&plan, "checksum mismatch"),
        "{:?}",
        plan.stats.planning_notes
    );
    assert!(table.io().warnings.iter().any(|w| w.contains("checksum")));
    let exp = expected(TRIPS_V8).unwrap();
    let rows = read_rows(&table, &ReadOptions::default(), &key_fields(&exp)).await;
    assert_eq!(rows, exp["snapshot"]["rows"].as_array().unwrap().clone());
}

#[tokio::test]
async fn truncated_column_stats_file_keeps_every_file() {
    let dir = copy_of(COW);
    for f in files_in(&dir.join(".hoodie/metadata/column_stats"), |n| {
        n.ends_with(".hfile")
    }) {
        truncate(&f);
    }
    let table = open_at(&dir).await;
    let o = options(&["txn_date = 2024-01-21"]);
    let plan = table.plan(&o).await.unwrap();
    assert_eq!(plan.stats.planning_source, "metadata_table");
    assert!(
        has_note(
            &plan,
            "column_stats not used: .hoodie/metadata/column_stats/col-stats-"
        ),
        "{:?}",
        plan.stats.planning_notes
    );
    assert_eq!(plan.stats.files_after_column_stats, None);
    // Partition stats and the Parquet footers still prune; rows are right.
    let exp = expected(COW).unwrap();
    let rows = read_rows(&table, &o, &key_fields(&exp)).await;
    assert_eq!(
        rows,
        expected_rows(&exp["snapshot"]["rows"], &["txn_date = 2024-01-21"])
    );
}

#[tokio::test]
async fn metadata_behind_the_data_table_falls_back_to_listing() {
    // The metadata table lost its latest delta commit: it does not know the latest data
    // commit's files.
    let dir = copy_of(COW);
    let exp = expected(COW).unwrap();
    let latest_write = exp["timeline_folder"]["completed"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|c| c["action"] == "commit" || c["action"] == "replacecommit")
        .unwrap()["instant_time"]
        .as_str()
        .unwrap()
        .to_string();
    let timeline = dir.join(".hoodie/metadata/.hoodie/timeline");
    for f in files_in(&timeline, |n| n.starts_with(&latest_write)) {
        std::fs::remove_file(f).unwrap();
    }
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    assert!(
        has_note(&plan, "behind the data table") && has_note(&plan, &latest_write),
        "{:?}",
        plan.stats.planning_notes
    );
    let rows = read_rows(&table, &ReadOptions::default(), &key_fields(&exp)).await;
    assert_eq!(rows, exp["snapshot"]["rows"].as_array().unwrap().clone());
}

#[tokio::test]
async fn metadata_commit_missing_from_the_data_timeline_is_left_to_the_data_timeline() {
    // The data table's latest commit is gone (as if it failed after the metadata table
    // committed): its files stay in the `files` partition but are not committed data.
    let dir = copy_of(COW);
    let exp = expected(COW).unwrap();
    let completed = exp["timeline_folder"]["completed"].as_array().unwrap();
    let writes: Vec<&Value> = completed
        .iter()
        .filter(|c| c["action"] == "commit" || c["action"] == "replacecommit")
        .collect();
    let (gone, previous) = (writes[writes.len() - 1], writes[writes.len() - 2]);
    let gone = gone["instant_time"].as_str().unwrap();
    for f in files_in(&dir.join(".hoodie/timeline"), |n| n.starts_with(gone)) {
        std::fs::remove_file(f).unwrap();
    }
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(
        plan.stats.planning_source, "metadata_table",
        "{:?}",
        plan.stats.planning_notes
    );
    assert!(has_note(&plan, gone), "{:?}", plan.stats.planning_notes);
    let listed = table
        .plan(&without_metadata(ReadOptions::default()))
        .await
        .unwrap();
    assert_eq!(slices(&plan), slices(&listed));
    let want = exp["time_travel"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["as_of"] == previous["instant_time"])
        .unwrap();
    let rows = read_rows(&table, &ReadOptions::default(), &key_fields(&exp)).await;
    assert_eq!(rows, want["rows"].as_array().unwrap().clone());
}

#[tokio::test]
async fn missing_or_disabled_metadata_table_lists_and_says_why() {
    let dir = copy_of(NONPART);
    std::fs::remove_file(dir.join(".hoodie/metadata/.hoodie/hoodie.properties")).unwrap();
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    assert!(
        has_note(&plan, "no metadata table"),
        "{:?}",
        plan.stats.planning_notes
    );

    let table = open(NONPART).await.unwrap();
    let plan = table
        .plan(&without_metadata(ReadOptions::default()))
        .await
        .unwrap();
    assert!(
        has_note(&plan, "turned off"),
        "{:?}",
        plan.stats.planning_notes
    );
    let plan = open("sample_table/cow/v9_txns_simple_nometa")
        .await
        .unwrap()
        .plan(&ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    assert!(
        has_note(&plan, "hoodie.table.metadata.partitions"),
        "{:?}",
        plan.stats.planning_notes
    );
}

#[tokio::test]
async fn files_partition_missing_the_latest_commit_falls_back_to_listing() {
    // The files partition's log of the latest data commit is gone: the metadata table looks
    // in sync by its timeline, but the latest commit's files are not in it.
    let dir = copy_of(NONPART);
    let exp = expected(NONPART).unwrap();
    let writes: Vec<&Value> = exp["timeline_folder"]["completed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] == "commit" || c["action"] == "replacecommit")
        .collect();
    let latest = writes.last().unwrap()["instant_time"].as_str().unwrap();
    let files = dir.join(".hoodie/metadata/files");
    let logs = files_in(&files, |n| n.contains(&format!("_{latest}.log.")));
    assert_eq!(logs.len(), 1);
    std::fs::remove_file(&logs[0]).unwrap();
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    assert!(
        has_note(&plan, "files partition misses"),
        "{:?}",
        plan.stats.planning_notes
    );
    let rows = read_rows(&table, &ReadOptions::default(), &key_fields(&exp)).await;
    assert_eq!(rows, exp["snapshot"]["rows"].as_array().unwrap().clone());
}
