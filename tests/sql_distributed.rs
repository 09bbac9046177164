//! SQL on a Ballista cluster (feature `ballista`). A Hudi scan survives DataFusion's codecs:
//! decoded, a physical plan reads the rows it read before, and a logical plan opens its tables
//! again and plans the same scans. Then a scheduler and two executors of the built binary on
//! loopback: the queries of tests/data/sql/queries.json (filters on key, partition and data
//! columns, GROUP BY, ORDER BY … LIMIT, a join, time travel, incremental) return the rows one
//! process returns, which are Spark SQL 1.1.1's (tests/data/sql/expected.json), and both
//! executors read Hudi scan partitions.
#![cfg(feature = "ballista")]

mod common;

use common::sql::{create_tables, data};

use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use datafusion::datasource::physical_plan::{FileScanConfig, FileScanConfigBuilder};
use datafusion::datasource::source::DataSourceExec;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::SessionContext;
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use hudi_edge::api::output::{rows_as_json_with, JsonStyle};
use hudi_edge::read::ReadOptions;
use hudi_edge::sql::codec::HudiFileSource;
use hudi_edge::sql::distributed::codecs;
use hudi_edge::sql::{ffi, HudiScanExec, Opener, SqlResult, SqlSession};
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::storage::Storage;
use serde_json::Value;

fn opener() -> Opener {
    Arc::new(|location: &str| Ok(Arc::new(LocalStorage::new(location)) as Arc<dyn Storage>))
}

/// A result's columns and rows as Spark's JSON; rows sorted unless `ordered`.
fn rows_of(result: &SqlResult, ordered: bool) -> (Vec<String>, Vec<Value>) {
    let columns = (result.schema.fields().iter())
        .map(|f| f.name().clone())
        .collect();
    let mut rows: Vec<Value> = (result.batches.iter())
        .flat_map(|b| rows_as_json_with(b, JsonStyle::ORACLE))
        .map(Value::Object)
        .collect();
    if !ordered {
        rows.sort_by_cached_key(|r| r.to_string());
    }
    (columns, rows)
}

/// Equal as JSON, floats to 1e-9 relative (partial sums may add in another order).
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

fn same_rows(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
}

fn hudi_scans(plan: &Arc<dyn ExecutionPlan>, out: &mut Vec<Arc<dyn ExecutionPlan>>) {
    if plan.downcast_ref::<HudiScanExec>().is_some() || file_scan(plan).is_some() {
        out.push(plan.clone());
    }
    for child in plan.children() {
        hudi_scans(child, out);
    }
}

/// The file scan standing for a Hudi scan, and its source.
fn file_scan(plan: &Arc<dyn ExecutionPlan>) -> Option<(&FileScanConfig, &HudiFileSource)> {
    let exec = plan.downcast_ref::<DataSourceExec>()?;
    let config =
        (exec.data_source().as_ref() as &dyn std::any::Any).downcast_ref::<FileScanConfig>()?;
    let source =
        (config.file_source().as_ref() as &dyn std::any::Any).downcast_ref::<HudiFileSource>()?;
    Some((config, source))
}

/// Sorted rows of a DataFusion plan, as JSON.
async fn run_plan(plan: Arc<dyn ExecutionPlan>, ctx: Arc<TaskContext>) -> Vec<Value> {
    let batches = collect(plan, ctx).await.expect("execute");
    let mut rows: Vec<Value> = batches
        .into_iter()
        .map(|b| ffi::batch_from_df(b).expect("batch"))
        .flat_map(|b| rows_as_json_with(&b, JsonStyle::ORACLE))
        .map(Value::Object)
        .collect();
    rows.sort_by_cached_key(|r| r.to_string());
    rows
}

/// A physical plan with Hudi scans goes through the physical codec; decoded (with a handle
/// that opens the table anew) it returns the same rows, and each scan partition reads the
/// slices it read before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_physical_plan_round_trips_through_the_codec() {
    let (_, physical) = codecs(opener(), None);
    let cases = [
        (
            "sample_table/mor/avro/v9_txns_simple_meta",
            "SELECT region, COUNT(*) AS n, SUM(amount) AS total FROM t WHERE region <> 'apac' GROUP BY region",
        ),
        (
            "sample_table/cow/v9_txns_simple_meta",
            "SELECT txn_id, amount FROM t WHERE txn_id IN ('TXN-003', 'TXN-011')",
        ),
    ];
    for (fixture, sql) in cases {
        let session = SqlSession::new(opener(), ReadOptions::default()).expect("session");
        let path = common::table_path(fixture).display().to_string();
        session.register("t", &path).await.expect("register");
        let frame = session.context().sql(sql).await.expect("sql");
        let plan = frame.create_physical_plan().await.expect("plan");
        let ctx = session.context().task_ctx();
        let bytes = physical_plan_to_bytes_with_extension_codec(plan.clone(), physical.as_ref())
            .expect("encode");
        let decoded =
            physical_plan_from_bytes_with_extension_codec(&bytes, &ctx, physical.as_ref())
                .expect("decode");
        let (mut before, mut after) = (Vec::new(), Vec::new());
        hudi_scans(&plan, &mut before);
        hudi_scans(&decoded, &mut after);
        assert_eq!(before.len(), 1, "{fixture}");
        assert_eq!(after.len(), 1, "{fixture}");
        let (b, a) = (
            before[0].downcast_ref::<HudiScanExec>().expect("scan"),
            after[0].downcast_ref::<HudiScanExec>().expect("scan"),
        );
        assert_eq!(a.groups(), b.groups(), "{fixture}");
        assert_eq!(a.plan().file_slices, b.plan().file_slices, "{fixture}");
        assert_eq!(a.plan().filter, b.plan().filter, "{fixture}");
        assert_eq!(a.names(), b.names(), "{fixture}");
        assert!(!b.plan().file_slices.is_empty(), "{fixture}");
        // Decoded, the scan has not opened its table, and the planning report stays behind.
        assert!(a.report().is_none() && b.report().is_some(), "{fixture}");
        let want = run_plan(plan, ctx.clone()).await;
        let got = run_plan(decoded, ctx).await;
        assert!(!want.is_empty(), "{fixture}");
        assert!(same_rows(&got, &want), "{fixture}: {got:?}\n{want:?}");
    }
}

/// A logical plan over a Hudi table goes through the logical codec: another session (a
/// scheduler's) opens the table from its location and options and plans the same scan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logical_plan_round_trips_through_the_codec() {
    let (logical, _) = codecs(opener(), None);
    let session = SqlSession::new(opener(), ReadOptions::default()).expect("session");
    let path = common::table_path("sample_table/cow/v9_txns_simple_meta");
    let sql = format!(
        "CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '{}' OPTIONS ('as_of' '20260307162444563');\
         SELECT txn_id, amount, region FROM t WHERE region = 'us'",
        path.display()
    );
    let want = session.run(&sql).await.expect("local");
    let (_, want) = rows_of(&want, false);
    let frame = session
        .context()
        .sql("SELECT txn_id, amount, region FROM t WHERE region = 'us'")
        .await
        .expect("sql");
    let plan = frame.into_optimized_plan().expect("optimized");
    let bytes =
        logical_plan_to_bytes_with_extension_codec(&plan, logical.as_ref()).expect("encode");
    let other = SessionContext::new();
    let decoded =
        logical_plan_from_bytes_with_extension_codec(&bytes, &other.task_ctx(), logical.as_ref())
            .expect("decode");
    let physical = other
        .state()
        .create_physical_plan(&decoded)
        .await
        .expect("plan");
    // There the scan takes the shape a Ballista scheduler splits: a file scan whose file
    // groups are the scan's partitions.
    let mut scans = Vec::new();
    hudi_scans(&physical, &mut scans);
    assert_eq!(scans.len(), 1);
    let (config, source) = file_scan(&scans[0]).expect("a file scan of Hudi partitions");
    let scan = source.scan();
    assert_eq!(config.file_groups.len(), scan.groups().len().max(1));
    // Time travel and the pushed filter came across.
    assert_eq!(scan.plan().as_of.as_deref(), Some("20260307162444563"));
    assert_eq!(
        scan.report().map(|r| r.filters.clone()),
        Some(vec!["region = us".to_string()])
    );
    let got = run_plan(physical.clone(), other.task_ctx()).await;
    assert!(!want.is_empty());
    assert!(same_rows(&got, &want), "{got:?}\n{want:?}");
}

/// A task given some of a file scan's groups (as a Ballista scheduler narrows a stage to a
/// task's partitions) ships only their slices: decoded, the scan reads those partitions' rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_ships_only_its_partitions_slices() {
    let (logical, physical) = codecs(opener(), None);
    let session = SqlSession::new(opener(), ReadOptions::default()).expect("session");
    let path = common::table_path("sample_table/mor/avro/v9_txns_simple_meta");
    session
        .register("t", &path.display().to_string())
        .await
        .expect("register");
    let frame = session
        .context()
        .sql("SELECT txn_id, amount, region FROM t")
        .await
        .expect("sql");
    let plan = frame.into_optimized_plan().expect("optimized");
    let bytes =
        logical_plan_to_bytes_with_extension_codec(&plan, logical.as_ref()).expect("encode");
    let other = SessionContext::new_with_config(
        datafusion::prelude::SessionConfig::new().with_target_partitions(3),
    );
    let decoded =
        logical_plan_from_bytes_with_extension_codec(&bytes, &other.task_ctx(), logical.as_ref())
            .expect("decode");
    let planned = other
        .state()
        .create_physical_plan(&decoded)
        .await
        .expect("plan");
    let mut scans = Vec::new();
    hudi_scans(&planned, &mut scans);
    let (config, source) = file_scan(&scans[0]).expect("file scan");
    let groups = source.scan().groups().to_vec();
    assert!(groups.len() >= 2, "{groups:?}");
    let ctx = other.task_ctx();
    let mut all = Vec::new();
    for (k, group) in config.file_groups.iter().enumerate() {
        let task = FileScanConfigBuilder::from(config.clone())
            .with_file_groups(vec![group.clone()])
            .build();
        let task: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(task);
        let bytes = physical_plan_to_bytes_with_extension_codec(task.clone(), physical.as_ref())
            .expect("encode");
        let shipped =
            physical_plan_from_bytes_with_extension_codec(&bytes, &ctx, physical.as_ref())
                .expect("decode");
        let scan = shipped.downcast_ref::<HudiScanExec>().expect("a Hudi scan");
        assert_eq!(scan.groups(), &[groups[k].clone()][..]);
        let got = run_plan(shipped.clone(), ctx.clone()).await;
        let want = run_plan(task, ctx.clone()).await;
        assert!(
            !got.is_empty() && same_rows(&got, &want),
            "{k}: {got:?}\n{want:?}"
        );
        all.extend(got);
    }
    // The partitions together are the table, each row once.
    all.sort_by_cached_key(|r| r.to_string());
    let whole = session
        .run("SELECT txn_id, amount, region FROM t")
        .await
        .expect("whole");
    let (_, whole) = rows_of(&whole, false);
    assert!(same_rows(&all, &whole), "{all:?}\n{whole:?}");
}

/// A process of the built binary, killed when dropped; its stderr in a file.
struct Proc {
    child: Child,
    log: PathBuf,
}

impl Proc {
    fn start(args: &[&str], log: PathBuf) -> Proc {
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_hudi-edge"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(file)
            .spawn()
            .expect("start hudi-edge");
        Proc { child, log }
    }

    fn log(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    /// Waits until the log shows `text`; false if the process ended or time ran out.
    fn wait_for(&mut self, text: &str, timeout: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if self.log().contains(text) {
                return true;
            }
            if let Ok(Some(_)) = self.child.try_wait() {
                return self.log().contains(text);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port free on loopback now (the OS hands out a fresh one each time).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// A scheduler and two executors (two task slots each), registered.
fn start_cluster(dir: &Path) -> (String, Proc, Vec<Proc>) {
    std::fs::create_dir_all(dir).expect("dir");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let mut scheduler = Proc::start(
        &["ballista", "scheduler", "--bind", &bind],
        dir.join("scheduler.log"),
    );
    let start = Instant::now();
    while std::net::TcpStream::connect(&bind).is_err() {
        let ended = matches!(scheduler.child.try_wait(), Ok(Some(_)));
        assert!(
            !ended && start.elapsed() < Duration::from_secs(60),
            "scheduler: {}",
            scheduler.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut executors = Vec::new();
    for i in 0..2 {
        let flight = format!("127.0.0.1:{}", free_port());
        let grpc = free_port().to_string();
        let work = dir.join(format!("work-{i}"));
        let mut executor = Proc::start(
            &[
                "ballista",
                "executor",
                "--scheduler",
                &bind,
                "--bind",
                &flight,
                "--grpc-port",
                &grpc,
                "--slots",
                "2",
                "--work-dir",
                &work.display().to_string(),
            ],
            dir.join(format!("executor-{i}.log")),
        );
        assert!(
            executor.wait_for("registration succeed", Duration::from_secs(60)),
            "executor {i}: {}",
            executor.log()
        );
        executors.push(executor);
    }
    (format!("df://{bind}"), scheduler, executors)
}

/// Lines of an executor's log naming a Hudi scan partition it read.
fn scan_tasks(log: &str) -> usize {
    log.lines()
        .filter(|l| l.starts_with("hudi-edge: scan "))
        .count()
}

/// Ballista tasks an executor ran.
fn tasks(log: &str) -> usize {
    log.lines().filter(|l| l.contains("Execute task")).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queries_on_two_executors_return_what_one_process_returns() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sql-distributed");
    let _ = std::fs::remove_dir_all(&dir);
    let (url, scheduler, executors) = start_cluster(&dir);
    let queries = data("queries.json");
    let expected = data("expected.json");
    let mut failures = Vec::new();
    for q in queries["queries"].as_array().expect("queries") {
        let name = q["name"].as_str().expect("name");
        let ordered = q["ordered"].as_bool().unwrap_or(false);
        let sql = create_tables(&q["tables"]) + q["sql"].as_str().expect("sql");
        let local = SqlSession::new(opener(), ReadOptions::default()).expect("session");
        let local = rows_of(&local.run(&sql).await.expect("local"), ordered);
        let remote = SqlSession::remote(&url, opener(), ReadOptions::default())
            .await
            .expect("remote session");
        let remote = match remote.run(&sql).await {
            Ok(r) => rows_of(&r, ordered),
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if remote.0 != local.0 || !same_rows(&remote.1, &local.1) {
            failures.push(format!("{name}: cluster {remote:?}\none process {local:?}"));
            continue;
        }
        // And so Spark's (tests/sql.rs holds one process to them).
        let mut spark = expected[name]["rows"].as_array().expect("rows").clone();
        if !ordered {
            spark.sort_by_cached_key(|r| r.to_string());
        }
        if !same_rows(&remote.1, &spark) {
            failures.push(format!("{name}: cluster {:?}\nSpark {spark:?}", remote.1));
        }
    }
    let logs: Vec<String> = executors.iter().map(Proc::log).collect();
    assert!(
        failures.is_empty(),
        "{}\nscheduler:\n{}",
        failures.join("\n\n"),
        scheduler.log()
    );
    // The work was split: both executors ran tasks and read Hudi scan partitions.
    for (i, log) in logs.iter().enumerate() {
        assert!(
            scan_tasks(log) > 0 && tasks(log) > 0,
            "executor {i} read no Hudi scan partition:\n{log}"
        );
    }
    eprintln!(
        "tasks per executor: {:?}, Hudi scan partitions: {:?}",
        logs.iter().map(|l| tasks(l)).collect::<Vec<_>>(),
        logs.iter().map(|l| scan_tasks(l)).collect::<Vec<_>>()
    );

    // The CLI submits to the cluster too; its rows are the session's.
    let path = common::table_path("sample_table/mor/avro/v9_txns_simple_meta");
    let sql = "SELECT region, COUNT(*) AS n FROM t GROUP BY region";
    let run = |cluster: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hudi-edge"));
        cmd.args(["sql", sql, "--format", "jsonl"])
            .arg("--table")
            .arg(format!("t={}", path.display()));
        if let Some(url) = cluster {
            cmd.args(["--cluster", url]);
        }
        let out = cmd.output().expect("hudi-edge sql");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        lines.sort();
        lines
    };
    let remote = run(Some(&url));
    assert!(!remote.is_empty());
    assert_eq!(remote, run(None));
}
