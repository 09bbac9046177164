//! SQL through the DataFusion provider (feature `datafusion`): the queries of
//! tests/data/sql/queries.json on fixture tables return Spark SQL 1.1.1's full rows
//! (tests/data/sql/expected.json, made by tests/spark/sql_expected.py); filters reach the
//! engine's planner (a selective one scans the slices `plan` selects, never the table); and
//! `hudi-edge sql` names tables by `--table`, `hudi."LOCATION"` and `STORED AS HUDI`.
#![cfg(feature = "datafusion")]

mod common;

use common::sql::{create_tables, data};

use std::process::Command;
use std::sync::Arc;

use datafusion::common::stats::Precision;
use datafusion::common::ScalarValue;
use datafusion::physical_plan::ExecutionPlan;
use hudi_edge::api::output::{rows_as_json_with, JsonStyle};
use hudi_edge::expr::parse_filter;
use hudi_edge::read::ReadOptions;
use hudi_edge::sql::{HudiScanExec, Opener, SqlSession};
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::storage::Storage;
use serde_json::Value;

fn session() -> SqlSession {
    let opener: Opener =
        Arc::new(|location: &str| Ok(Arc::new(LocalStorage::new(location)) as Arc<dyn Storage>));
    SqlSession::new(opener, ReadOptions::default()).expect("session")
}

/// Equal as Spark's JSON, floats to 1e-9 relative (sums may add in another order).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn sort_rows(rows: &mut [Value]) {
    rows.sort_by_cached_key(|r| r.to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_return_what_spark_sql_returns() {
    let queries = data("queries.json");
    let expected = data("expected.json");
    let mut failures = Vec::new();
    for q in queries["queries"].as_array().expect("queries") {
        let name = q["name"].as_str().expect("name");
        let want = &expected[name];
        let sql = create_tables(&q["tables"]) + q["sql"].as_str().expect("sql");
        let result = match session().run(&sql).await {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let columns: Vec<&str> = result
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        let want_columns: Vec<&str> = (want["columns"].as_array().expect("columns").iter())
            .map(|c| c.as_str().unwrap_or(""))
            .collect();
        if columns != want_columns {
            failures.push(format!(
                "{name}: columns {columns:?}, Spark {want_columns:?}"
            ));
            continue;
        }
        let mut got: Vec<Value> = (result.batches.iter())
            .flat_map(|b| rows_as_json_with(b, JsonStyle::ORACLE))
            .map(Value::Object)
            .collect();
        let mut want_rows = want["rows"].as_array().expect("rows").clone();
        if !q["ordered"].as_bool().unwrap_or(false) {
            sort_rows(&mut got);
            sort_rows(&mut want_rows);
        }
        let equal =
            got.len() == want_rows.len() && got.iter().zip(&want_rows).all(|(a, b)| same(a, b));
        if !equal {
            failures.push(format!(
                "{name}: got\n{}\nSpark\n{}",
                serde_json::to_string_pretty(&got).unwrap_or_default(),
                serde_json::to_string_pretty(&want_rows).unwrap_or_default()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The slices a SQL filter scans are those the engine's `plan` selects for the same filter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selective_filter_scans_only_the_slices_the_plan_selects() {
    let cases = [
        (
            "sample_table/cow/v9_txns_simple_meta",
            "txn_id = 'TXN-003'",
            "txn_id = TXN-003",
        ),
        (
            "sample_table/mor/avro/v9_txns_simple_meta",
            "region = 'eu'",
            "region = eu",
        ),
        (
            "sample_table/cow/v9_txns_simple_meta",
            "region IN ('eu', 'apac')",
            "(region = eu) or (region = apac)",
        ),
    ];
    for (fixture, sql_filter, engine_filter) in cases {
        let path = common::table_path(fixture);
        let session = session();
        session
            .register("t", &path.display().to_string())
            .await
            .expect("register");
        let sql = format!("SELECT * FROM t WHERE {sql_filter}");
        session.run(&sql).await.expect("query");
        let report = session.report();
        let scans = &report[0].scans;
        assert_eq!(scans.len(), 1, "{fixture}: {scans:?}");
        assert_eq!(
            scans[0].filters,
            vec![engine_filter.to_string()],
            "{fixture}"
        );
        let table = common::open(fixture).await.expect("open");
        let options = ReadOptions {
            filters: vec![parse_filter(engine_filter).expect("filter")],
            ..ReadOptions::default()
        };
        let plan = table.plan(&options).await.expect("plan");
        let stats = &scans[0].stats;
        assert_eq!(
            stats.slices_selected, plan.stats.slices_selected,
            "{fixture}: {stats:?}"
        );
        assert!(
            stats.slices_selected < stats.slices_total,
            "{fixture}: {stats:?}"
        );
        // Exact: DataFusion keeps no filter of its own above the scan.
        let explain = session.explain(&sql).await.expect("explain");
        assert!(explain.contains("HudiScanExec"), "{explain}");
        assert!(!explain.contains("FilterExec"), "{explain}");
        let selected = format!("slices={}/{}", stats.slices_selected, stats.slices_total);
        assert!(explain.contains(&selected), "{explain}");
    }
}

/// A filter the engine only prunes by (a prefix `LIKE`) stays in DataFusion too, and one it
/// cannot express stays there alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inexact_and_unsupported_filters_stay_with_datafusion() {
    let path = common::table_path("sample_table/cow/v9_txns_simple_meta");
    let session = session();
    session
        .register("t", &path.display().to_string())
        .await
        .expect("register");
    let sql = "SELECT txn_id FROM t WHERE merchant_name LIKE 'Am%' AND upper(currency) = 'USD'";
    let explain = session.explain(sql).await.expect("explain");
    assert!(explain.contains("FilterExec"), "{explain}");
    assert!(
        explain.contains("filters=[(merchant_name >= Am) and (merchant_name < An)]"),
        "{explain}"
    );
    let rows = session.run(sql).await.expect("query");
    let n: usize = rows.batches.iter().map(|b| b.num_rows()).sum();
    assert!(n > 0);
}

/// The Hudi scan of a physical plan.
fn hudi_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<&HudiScanExec> {
    if let Some(scan) = plan.downcast_ref::<HudiScanExec>() {
        return Some(scan);
    }
    plan.children().into_iter().find_map(hudi_scan)
}

/// A statistic as Spark's JSON shows the value (dates as `yyyy-MM-dd`).
fn shown(v: &Precision<ScalarValue>) -> Option<String> {
    v.get_value().map(|s| s.to_string())
}

fn spark_shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Scans give DataFusion's optimizer what the metadata table's `column_stats` say of the
/// files they read. A Copy-On-Write table read whole: exact counts, nulls and bounds, equal to
/// what Spark SQL computes over the rows, so `COUNT`, `MIN` and `MAX` are answered without a
/// scan. Merge-On-Read slices with log files (as of an instant before compaction): inexact
/// figures that bound Spark's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_give_the_optimizer_the_metadata_tables_statistics() {
    let queries = data("queries.json");
    let expected = data("expected.json");
    let cases = [
        ("stats_aggregates_cow", true),
        ("stats_aggregates_mor_log_files", false),
    ];
    for (name, exact) in cases {
        let query = (queries["queries"].as_array().expect("queries").iter())
            .find(|q| q["name"] == name)
            .expect("query");
        let spark = &expected[name]["rows"][0];
        let session = session();
        session
            .run(&create_tables(&query["tables"]))
            .await
            .expect("create");
        let sql = "SELECT txn_id, txn_ts, txn_date, merchant_name FROM t";
        let frame = session.context().sql(sql).await.expect("sql");
        let plan = frame.create_physical_plan().await.expect("plan");
        let stats = hudi_scan(&plan).expect("a Hudi scan").statistics(None);
        let n = spark["n"].as_u64().expect("n") as usize;
        let merchants = spark["merchants"].as_u64().expect("merchants") as usize;
        let columns = &stats.column_statistics;
        let bounds = [
            (0, "first_txn", "last_txn"),
            (1, "first_ts", "last_ts"),
            (2, "first_date", "last_date"),
        ];
        if exact {
            assert_eq!(stats.num_rows, Precision::Exact(n), "{name}");
            assert_eq!(columns[3].null_count, Precision::Exact(n - merchants));
            for (i, min, max) in bounds {
                assert!(
                    columns[i].min_value.is_exact() == Some(true),
                    "{name}: {min}"
                );
                assert_eq!(shown(&columns[i].min_value), Some(spark_shown(&spark[min])));
                assert_eq!(shown(&columns[i].max_value), Some(spark_shown(&spark[max])));
            }
            // Answered from the statistics: no scan left in the plan.
            let explain = session.explain(query["sql"].as_str().expect("sql")).await;
            let explain = explain.expect("explain");
            assert!(!explain.contains("HudiScanExec"), "{explain}");
        } else {
            let rows = stats.num_rows.get_value().copied().expect("rows");
            assert!(
                !stats.num_rows.is_exact().unwrap_or(true) && rows >= n,
                "{name}"
            );
            for (i, min, max) in bounds {
                let (lo, hi) = (&columns[i].min_value, &columns[i].max_value);
                assert!(lo.is_exact() == Some(false), "{name}: {lo:?}");
                let (lo, hi) = (shown(lo).expect(min), shown(hi).expect(max));
                // The same width per column (ids, epoch millis, dates): text order is value order.
                assert!(lo <= spark_shown(&spark[min]), "{name}: {lo}");
                assert!(hi >= spark_shown(&spark[max]), "{name}: {hi}");
            }
        }
    }
}

fn cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hudi-edge"))
        .args(args)
        .output()
        .expect("run hudi-edge");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn the_cli_names_tables_three_ways() {
    let cow = common::table_path("sample_table/cow/v9_txns_simple_meta");
    let mor = common::table_path("sample_table/mor/avro/v9_txns_simple_meta");
    let (cow, mor) = (cow.display().to_string(), mor.display().to_string());
    let table = format!("c={cow}");
    let sql = format!(
        "CREATE EXTERNAL TABLE m STORED AS HUDI LOCATION '{mor}'; \
         SELECT c.region, COUNT(*) AS n FROM c JOIN m ON c.txn_id = m.txn_id \
         JOIN hudi.\"{cow}\" h ON h.txn_id = c.txn_id WHERE c.region = 'us' GROUP BY c.region"
    );
    let (ok, out, err) = cli(&[
        "sql", &sql, "--table", &table, "--format", "jsonl", "--stats",
    ]);
    assert!(ok, "{err}");
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("jsonl"))
        .collect();
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0]["region"], "us");
    let stats: Value = serde_json::from_str(err.trim()).expect("stats json");
    assert_eq!(stats["rows"], 1);
    let tables = stats["tables"].as_array().expect("tables");
    assert_eq!(tables.len(), 3, "{stats}");
    assert!(
        tables
            .iter()
            .all(|t| t["io"]["requests"].as_u64() > Some(0)),
        "{stats}"
    );

    let (ok, out, err) = cli(&[
        "sql",
        "SELECT txn_id FROM c WHERE txn_id = 'TXN-001'",
        "--table",
        &table,
        "--explain",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("HudiScanExec") && out.contains("filters=[txn_id = TXN-001]"),
        "{out}"
    );

    let (ok, out, err) = cli(&[
        "sql",
        "SELECT txn_id, amount FROM c ORDER BY txn_id LIMIT 2",
        "--table",
        &table,
    ]);
    assert!(ok, "{err}");
    assert!(out.starts_with("txn_id  | amount\n"), "{out}");
    assert!(out.ends_with("(2 rows)\n"), "{out}");

    let (ok, _, err) = cli(&["sql", "SELECT * FROM nope"]);
    assert!(!ok);
    assert!(err.contains("nope"), "{err}");

    // The change feed is `read --query cdc`'s: SQL refuses it by name, as a flag or option.
    let from_options = format!(
        "CREATE EXTERNAL TABLE f STORED AS HUDI LOCATION '{cow}' OPTIONS ('query' 'cdc'); \
         SELECT * FROM f"
    );
    for args in [
        vec![
            "sql",
            "SELECT * FROM c",
            "--table",
            &table,
            "--query",
            "cdc",
        ],
        vec!["sql", &from_options],
    ] {
        let (ok, _, err) = cli(&args);
        assert!(!ok);
        assert!(err.contains("UNSUPPORTED") && err.contains("cdc"), "{err}");
    }
}
