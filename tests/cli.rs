//! The `hudi-edge` command line, run as a process: the surface tests and benchmarks drive.
//! Exact rows of every subcommand and flag: tests/cli_commands.rs.

mod common;

use std::process::Command;

use serde_json::Value;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hudi-edge"))
        .args(args)
        .output()
        .expect("run hudi-edge");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The batches of a `read --format arrow` run.
fn read_arrow(args: &[&str]) -> Vec<arrow_array::RecordBatch> {
    let out = Command::new(env!("CARGO_BIN_EXE_hudi-edge"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(out.stdout), None)
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

fn table(name: &str) -> String {
    common::table_path(name).to_string_lossy().into_owned()
}

#[test]
fn timeline_json_lists_instants_with_times_action_and_state() {
    let (code, out, err) = run(&[
        "timeline",
        &table("sample_table/mor/avro/v9_txns_simple_meta"),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let instants = v["instants"].as_array().unwrap();
    let compaction = instants
        .iter()
        .find(|i| i["requested_action"] == "compaction")
        .unwrap();
    assert_eq!(compaction["action"], "commit");
    assert_eq!(compaction["state"], "completed");
    assert_eq!(compaction["completion_time"], "20260307162619230");
}

#[test]
fn read_jsonl_csv_and_arrow_agree() {
    let t = table("sample_table/cow/v9_txns_simple_nometa");
    let args = [
        "--filter",
        "region = eu",
        "--columns",
        "txn_id,amount,txn_date,txn_datetime,region",
    ];
    let (code, jsonl, err) = run(&[&["read", &t][..], &args].concat());
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!rows.is_empty());
    let first = rows[0].as_object().unwrap();
    assert_eq!(
        first.keys().cloned().collect::<Vec<_>>(),
        vec!["txn_id", "amount", "txn_date", "txn_datetime", "region"]
    );
    assert!(rows.iter().all(|r| r["region"] == "eu"));
    assert!(
        rows[0]["amount"].as_str().unwrap().contains('.'),
        "decimals as strings with scale"
    );
    assert!(
        rows[0]["txn_datetime"].as_str().unwrap().ends_with('Z'),
        "UTC timestamps end with Z"
    );

    let (code, csv, err) = run(&[&["read", &t, "--format", "csv"][..], &args].concat());
    assert_eq!(code, 0, "{err}");
    assert_eq!(csv.lines().count(), rows.len() + 1);
    assert_eq!(
        csv.lines().next().unwrap(),
        "txn_id,amount,txn_date,txn_datetime,region"
    );

    let batches = read_arrow(&[&["read", &t, "--format", "arrow"][..], &args].concat());
    let n: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(n, rows.len());
}

#[test]
fn plan_json_has_the_fixed_keys() {
    let (code, out, err) = run(&[
        "plan",
        &table("sample_table/cow/v9_txns_simple_nometa"),
        "--filter",
        "region = us",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    for k in [
        "files_total",
        "files_after_partition_pruning",
        "files_after_file_stats",
        "files_selected",
        "planning_source",
    ] {
        assert!(v["stats"].get(k).is_some(), "stats.{k}");
    }
    assert!(v["io"]["requests"].as_u64().unwrap() > 0 && v["io"]["bytes"].as_u64().is_some());
    let by_purpose = v["io"]["by_purpose"].as_object().expect("io.by_purpose");
    let requests: u64 = by_purpose
        .values()
        .map(|p| p["requests"].as_u64().unwrap())
        .sum();
    assert_eq!(
        Some(requests),
        v["io"]["requests"].as_u64(),
        "{by_purpose:?}"
    );
    let slice = &v["file_slices"][0];
    for k in ["partition", "file_id", "base_file", "log_files"] {
        assert!(slice.get(k).is_some(), "file_slices[].{k}");
    }
    assert!(
        v["stats"]["files_after_partition_pruning"].as_u64() < v["stats"]["files_total"].as_u64()
    );
}

#[test]
fn errors_are_typed_with_exit_codes() {
    let (code, _, err) = run(&["read", "/definitely/not/a/table"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("error[NOT_FOUND]"), "{err}");
    let (code, _, err) = run(&[
        "read",
        &table("sample_table/cow/v6_nonpartitioned"),
        "--filter",
        "nope = 1",
    ]);
    assert_eq!(code, 2, "bad arguments exit 2");
    assert!(
        err.contains("INVALID_ARGUMENT") && err.contains("nope"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "read",
        &common::fixtures_dir()
            .join("tables/sample_table/cow/v9_lance_nonpartitioned.zip")
            .to_string_lossy(),
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("UNSUPPORTED") && err.contains("LANCE"),
        "{err}"
    );
}

#[test]
fn read_limit_and_stats_go_through_one_scan() {
    let t = table("sample_table/mor/avro/v9_txns_simple_meta");
    let (code, out, err) = run(&["read", &t, "--limit", "2", "--stats"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 2);
    let stats: Value = serde_json::from_str(err.trim()).unwrap();
    assert_eq!(stats["rows"], 2);
    for k in ["stats", "plan_io", "read_io", "total_io"] {
        assert!(stats.get(k).is_some(), "{k}");
    }
    assert!(stats["read_io"]["round_trips"].as_u64().is_some());
}

/// `read TABLE --filter FILTER EXTRA… --stats` at 20 ms per request: its cost report, with
/// the rows (JSON lines) under `out`.
fn read_at_20ms(t: &str, filter: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--latency-ms", "20", "read", t, "--filter", filter];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--stats", "--format", "jsonl"]);
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{err}");
    let mut stats: Value = serde_json::from_str(err.trim()).unwrap();
    stats["out"] = Value::String(out);
    stats
}

/// A query planned from the metadata table has the metadata table's properties and files
/// fetched beside the table's own: two listings in all (the timeline, the metadata table's
/// directory) instead of six, and a record-index lookup in at most four round trips (five
/// before), its base file read in one. The rows are those of a read that plans by listing.
#[test]
fn a_query_fetches_the_metadata_table_beside_the_open() {
    let t = table("sample_table/mor/avro/v9_txns_simple_meta");
    let read = |extra: &[&str]| read_at_20ms(&t, "txn_id = TXN-015", extra);
    let with_mdt = read(&[]);
    assert_eq!(with_mdt["stats"]["planning_source"], "metadata_table");
    assert_eq!(with_mdt["stats"]["files_after_record_index"], 1);
    let io = &with_mdt["total_io"];
    assert_eq!(io["by_purpose"]["listing"]["requests"], 2, "{io}");
    assert!(io["round_trips"].as_u64() <= Some(4), "{io}");
    // Planning learned where footers start (one file's tail, beside its lookups): the
    // base file's footer head and data come beside its tail, in one round trip.
    let read_io = &with_mdt["read_io"];
    assert_eq!(read_io["round_trips"], 1, "{read_io}");
    assert_eq!(read_io["by_purpose"]["footer"]["requests"], 1, "{read_io}");

    let by_listing = read(&["--no-metadata-table"]);
    assert_ne!(by_listing["stats"]["planning_source"], "metadata_table");
    assert_eq!(with_mdt["rows"], 1);
    assert_eq!(with_mdt["out"], by_listing["out"]);

    // Statistics instead of the record index: the tail is read beside their data blocks.
    let stats = read_at_20ms(&t, "txn_ts >= 4", &[]);
    let notes = stats["stats"]["planning_notes"].to_string();
    assert!(notes.contains("column_stats: 5 of 5"), "{notes}");
    assert_eq!(stats["read_io"]["round_trips"], 1, "{}", stats["read_io"]);
    assert!(
        stats["total_io"]["round_trips"].as_u64() <= Some(4),
        "{stats}"
    );
}

/// A slice with a log file reads its base file's footer beside the log, and the small base
/// file's data with the footer's head: two round trips, not three (log, footer, data).
#[test]
fn a_merged_slice_reads_its_footer_beside_its_log_files() {
    let t = table("quickstart_trips_table/mor/avro/v8_trips_8i3u1d");
    // One file slice: a base file and a log file.
    let stats = read_at_20ms(&t, "city = sao_paulo", &[]);
    let read = &stats["read_io"];
    for purpose in ["log_block", "footer", "column_chunk"] {
        assert_eq!(read["by_purpose"][purpose]["requests"], 1, "{read}");
    }
    assert_eq!(read["round_trips"], 2, "{read}");
}

/// The CLI reads file slices on the runtime's worker threads and writes Arrow as batches
/// arrive: on a MOR table with log files its rows are exactly the library's single-task read.
#[test]
fn arrow_read_on_worker_threads_equals_a_single_task_read() {
    let name = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d";
    let cli = read_arrow(&["read", &table(name), "--format", "arrow"]);
    let single = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(async {
            let t = common::open(name).await.unwrap();
            let read = t.read(&Default::default()).await.unwrap();
            assert!(
                read.plan
                    .file_slices
                    .iter()
                    .any(|s| !s.log_files.is_empty()),
                "{name} has slices with log files to merge"
            );
            read.batches
        });
    let rows = |batches: &[arrow_array::RecordBatch]| {
        let mut rows: Vec<String> = batches
            .iter()
            .flat_map(|b| {
                hudi_edge::api::output::rows_as_json_with(
                    b,
                    hudi_edge::api::output::JsonStyle::ORACLE,
                )
            })
            .map(|r| Value::Object(r).to_string())
            .collect();
        rows.sort();
        rows
    };
    let cli_rows = rows(&cli);
    assert!(!cli_rows.is_empty());
    assert_eq!(cli_rows, rows(&single));
}

/// A copy of `fixture` with one new file group, of a row per `txn_ts`, in each of twenty new
/// partitions `r00` .. `r19`, written by the CLI.
fn one_file_in_each_of_twenty_partitions(fixture: &str, test: &str, txn_ts: &[i64]) -> String {
    let dir = common::table_copy(fixture, "cli", test);
    let mut rows = String::new();
    for i in 0..20 {
        for ts in txn_ts {
            rows += &format!(
                concat!(
                    r#"{{"txn_id":"RA-{i}-{ts}","account_id":"ACC-A","txn_ts":{ts},"#,
                    r#""txn_datetime":"2024-01-22T00:00:00.000000Z","txn_date":"2024-01-22","#,
                    r#""amount":"1.00","currency":"USD","txn_type":"debit","merchant_name":"m","#,
                    r#""is_international":false,"fee_amount":"0.00","txn_metadata":"{{}}","#,
                    r#""region":"r{i:02}"}}"#,
                    "\n"
                ),
                i = i,
                ts = ts
            );
        }
    }
    let input = dir.join("rows.jsonl");
    std::fs::write(&input, rows).unwrap();
    let table = dir.to_string_lossy().into_owned();
    let (code, _, err) = run(&["write", &table, "--input", &input.to_string_lossy()]);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_file(&input).unwrap();
    table
}

/// Where column statistics expect few of a file's rows to match (and planning learned how
/// long footers are), a file counts what its read fetches, not its size (most of it a bloom
/// filter the read skips): under a read-ahead of two files' sizes the twenty files of a
/// selective query are read together, those of a query every row matches in three links.
#[test]
fn files_expected_to_match_few_rows_are_read_together() {
    let table = one_file_in_each_of_twenty_partitions(
        "sample_table/cow/v9_txns_simple_overwrite",
        "files_expected_to_match_few_rows",
        &[1700000000000, 1700000100000],
    );
    let read = |txn_ts: &str, rows: usize| -> Value {
        let filters = ["region >= r00", "region <= r19", txn_ts];
        let extra = ["--read-ahead-bytes", "1000000"];
        let mut stats = read_at_20ms(&table, &filters.join(" and "), &extra);
        assert_eq!(stats["stats"]["slices_selected"], 20, "{stats}");
        assert_eq!(stats["out"].as_str().unwrap().lines().count(), rows);
        let notes = stats["stats"]["planning_notes"].to_string();
        assert!(notes.contains("column_stats: 20 of 20"), "{notes}");
        stats["read_io"].take()
    };
    // 1 % of each file's range: one row of its two.
    let selective = read("txn_ts >= 1700000099000", 20);
    let every_row = read("txn_ts >= 1700000000000", 40);
    assert_eq!(selective["requests"], every_row["requests"]);
    assert!(selective["round_trips"].as_u64() <= Some(2), "{selective}");
    assert!(every_row["round_trips"].as_u64() >= Some(3), "{every_row}");
}

/// Twenty small base files: a read fetches their data all at once (their footers came with
/// the plan, which prunes by them), where eight at a time took three round trips.
/// `round_trips` is the longest chain of requests each sent after the one before it was
/// answered.
#[test]
fn small_base_files_are_read_together_and_round_trips_count_the_chain() {
    let table = one_file_in_each_of_twenty_partitions(
        "sample_table/cow/v9_txns_simple_nometa",
        "small_base_files_are_read_together",
        &[1700900000000],
    );

    let read = |extra: &[&str]| -> Value {
        let mut args = vec!["--latency-ms", "20", "read", &table, "--stats"];
        args.extend_from_slice(&["--filter", "region >= r00", "--filter", "region <= r19"]);
        // A data column's predicate, so the plan prunes by footers (the partition column's
        // prune by the path alone).
        args.extend_from_slice(&["--filter", "txn_ts >= 1700000000000"]);
        args.extend_from_slice(&["--format", "jsonl"]);
        args.extend_from_slice(extra);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.lines().count(), 20);
        let stats: Value = serde_json::from_str(err.trim()).unwrap();
        assert_eq!(stats["stats"]["slices_selected"], 20, "{stats}");
        stats["read_io"].clone()
    };
    let together = read(&[]);
    let eight_at_a_time = read(&["--read-ahead-bytes", "0"]);
    assert_eq!(together["requests"], eight_at_a_time["requests"]);
    assert_eq!(together["requests"], 20, "{together}");
    // One link; a second only if a loaded machine sends a request 20 ms late.
    assert!(together["round_trips"].as_u64() <= Some(2), "{together}");
    // 8 + 8 + 4 slices, one group after another.
    assert!(
        eight_at_a_time["round_trips"].as_u64() >= Some(3),
        "{eight_at_a_time}"
    );
    // Under a limit the first slices' rows are enough: no slice starts early.
    let (code, out, err) = run(&[
        "--latency-ms",
        "20",
        "read",
        &table,
        "--filter",
        "region >= r00",
        "--filter",
        "region <= r19",
        "--limit",
        "1",
        "--stats",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1);
    let stats: Value = serde_json::from_str(err.trim()).unwrap();
    // At most the first window (8 slices, a footer and a column chunk each) — how many of it
    // start before the first row arrives is up to the machine; read ahead, all 20 would.
    assert!(stats["read_io"]["requests"].as_u64() <= Some(16), "{stats}");
}
