//! Every `hudi-edge` subcommand and read flag, run as a process, table-driven: each case is
//! the arguments, the exit code, and what stdout must hold — exact rows, file slices, commit
//! totals and instants from the fixtures' expected files (Hudi-written tables read by an
//! independent reader) and Hudi Spark's own read-back of the archived-timeline tables.
//! The http-only flags (`--header`, `--retries`, `--concurrency`, `--listing`) are driven
//! against real servers in tests/http/node.test.mjs.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::oracle::{
    allowances, expected_commits, expected_file_slices, expected_reads, key_fields, Want,
};
use hudi_edge::read::QueryType;
use serde_json::Value;

const COW: &str = "sample_table/cow/v9_txns_simple_meta";
const MOR: &str = "sample_table/mor/avro/v9_txns_simple_meta";

struct Run {
    code: i32,
    out: String,
    err: String,
}

fn run(args: &[String]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_hudi-edge"))
        .args(args)
        // ISO-8601 times with an offset convert to the timeline's zone (local for these tables).
        .env("TZ", "UTC")
        .output()
        .expect("run hudi-edge");
    Run {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn table(name: &str) -> String {
    common::table_path(name).to_string_lossy().into_owned()
}

fn jsonl(out: &str) -> Vec<Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Rows sorted as the expected files sort them (key, partition, row JSON).
fn sorted(rows: &[Value], keys: &[String]) -> Vec<Value> {
    let mut r: Vec<(String, String, String, Value)> = rows
        .iter()
        .map(|v| {
            let m = v.as_object().unwrap();
            let part = m
                .get("_hoodie_partition_path")
                .and_then(Value::as_str)
                .unwrap_or("");
            (
                common::record_key(m, keys),
                part.to_string(),
                v.to_string(),
                v.clone(),
            )
        })
        .collect();
    r.sort_by(|a, b| (&a.0, &a.1, &a.2).cmp(&(&b.0, &b.1, &b.2)));
    r.into_iter().map(|x| x.3).collect()
}

fn project(rows: &[Value], cols: &[&str]) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            let m: serde_json::Map<String, Value> = cols
                .iter()
                .map(|c| (c.to_string(), r[*c].clone()))
                .collect();
            Value::Object(m)
        })
        .collect()
}

/// What a case's stdout must hold.
enum Expect {
    /// JSON lines equal to these rows (any order).
    Rows(Vec<Value>),
    /// `n` JSON lines, each one of these rows.
    SomeOf(usize, Vec<Value>),
    /// CSV: this header, then these records (any order).
    Csv(String, Vec<String>),
    /// A JSON document checked by the function.
    Json(Box<dyn Fn(&Value)>),
    /// Text checked by the function.
    Text(Box<dyn Fn(&str)>),
    /// stderr starts with `error[CODE]` and names this text.
    Error(&'static str, String),
}

struct Case {
    what: String,
    args: Vec<String>,
    code: i32,
    expect: Expect,
}

fn check(case: &Case, keys: &[String]) {
    let r = run(&case.args);
    let what = format!("{} ({})", case.what, case.args.join(" "));
    assert_eq!(r.code, case.code, "{what}: exit code; stderr: {}", r.err);
    match &case.expect {
        Expect::Rows(want) => {
            assert_eq!(
                sorted(&jsonl(&r.out), keys),
                sorted(want, keys),
                "{what}: rows"
            );
        }
        Expect::SomeOf(n, pool) => {
            let got = jsonl(&r.out);
            assert_eq!(got.len(), *n, "{what}: row count");
            for row in &got {
                assert!(pool.contains(row), "{what}: {row} is not an expected row");
            }
            let distinct: BTreeSet<String> = got.iter().map(Value::to_string).collect();
            assert_eq!(distinct.len(), got.len(), "{what}: rows repeat");
        }
        Expect::Csv(header, records) => {
            let mut lines = r.out.lines();
            assert_eq!(lines.next(), Some(header.as_str()), "{what}: header");
            let mut got: Vec<String> = lines.map(str::to_string).collect();
            got.sort();
            let mut want = records.clone();
            want.sort();
            assert_eq!(got, want, "{what}: records");
        }
        Expect::Json(f) => f(&serde_json::from_str(&r.out)
            .unwrap_or_else(|e| panic!("{what}: stdout is not JSON: {e}\n{}", r.out))),
        Expect::Text(f) => f(&r.out),
        Expect::Error(code, needle) => {
            assert!(
                r.err.starts_with(&format!("error[{code}]")),
                "{what}: {}",
                r.err
            );
            assert!(r.err.contains(needle.as_str()), "{what}: {}", r.err);
        }
    }
}

/// `read` with each expected read of a fixture (snapshot, time travel at every commit,
/// incremental ranges, read-optimized, filters) as command-line flags.
fn read_cases(name: &str) -> Vec<Case> {
    let exp = common::expected(name).unwrap();
    let spec = allowances();
    let t = table(name);
    expected_reads(&spec, name, &exp)
        .into_iter()
        .map(|read| {
            let mut a = args(&["read", &t]);
            let o = &read.options;
            match o.query {
                QueryType::Incremental => a.extend(args(&["--query", "incremental"])),
                QueryType::ReadOptimized => a.extend(args(&["--query", "read_optimized"])),
                _ => {}
            }
            for (flag, v) in [
                ("--as-of", &o.as_of),
                ("--start", &o.start),
                ("--end", &o.end),
            ] {
                if let Some(v) = v {
                    a.extend([flag.to_string(), v.clone()]);
                }
            }
            for f in &o.filters {
                a.extend(["--filter".to_string(), f.to_string()]);
            }
            let Want::Rows { rows, .. } = read.want else {
                panic!("{name} {}: an error read", read.what)
            };
            Case {
                what: format!("{name} {}", read.what),
                args: a,
                code: 0,
                expect: Expect::Rows(rows),
            }
        })
        .collect()
}

#[test]
fn read_every_expected_read_of_a_cow_and_a_mor_table() {
    for name in [COW, MOR] {
        let keys = key_fields(&common::expected(name).unwrap());
        let cases = read_cases(name);
        assert!(cases.len() > 20, "{name}: {} reads", cases.len());
        for case in &cases {
            check(case, &keys);
        }
    }
}

/// The instant time of a commit as the ISO-8601 forms the CLI takes.
fn iso(instant: &str) -> (String, String) {
    let (d, t) = (&instant[..8], &instant[8..]);
    let wall = format!(
        "{}-{}-{} {}:{}:{}.{}",
        &d[..4],
        &d[4..6],
        &d[6..],
        &t[..2],
        &t[2..4],
        &t[4..6],
        &t[6..]
    );
    let utc = format!("{}Z", wall.replace(' ', "T"));
    (wall, utc)
}

#[test]
fn read_flags_and_times() {
    let exp = common::expected(COW).unwrap();
    let keys = key_fields(&exp);
    let t = table(COW);
    let snapshot = exp["snapshot"]["rows"].as_array().unwrap().clone();
    let tt = &exp["time_travel"][3];
    let as_of = tt["as_of"].as_str().unwrap();
    let as_of_rows = tt["rows"].as_array().unwrap().clone();
    let (wall, utc) = iso(as_of);
    let cols = ["txn_id", "amount", "txn_datetime", "region"];
    let csv: Vec<String> = snapshot
        .iter()
        .map(|r| {
            cols.iter()
                .map(|c| match &r[*c] {
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect();
    let cases = vec![
        Case {
            what: "--as-of as ISO-8601 wall-clock time".into(),
            args: args(&["read", &t, "--as-of", &wall]),
            code: 0,
            expect: Expect::Rows(as_of_rows.clone()),
        },
        Case {
            what: "--as-of as ISO-8601 UTC (TZ=UTC: the timeline's local zone)".into(),
            args: args(&["read", &t, "--as-of", &utc]),
            code: 0,
            expect: Expect::Rows(as_of_rows.clone()),
        },
        Case {
            what: "--limit".into(),
            args: args(&["read", &t, "--limit", "3"]),
            code: 0,
            expect: Expect::SomeOf(3, snapshot.clone()),
        },
        Case {
            what: "--limit beyond the rows".into(),
            args: args(&["read", &t, "--limit", "1000"]),
            code: 0,
            expect: Expect::Rows(snapshot.clone()),
        },
        Case {
            what: "--columns".into(),
            args: args(&["read", &t, "--columns", &cols.join(",")]),
            code: 0,
            expect: Expect::Rows(project(&snapshot, &cols)),
        },
        Case {
            what: "--format csv".into(),
            args: args(&["read", &t, "--format", "csv", "--columns", &cols.join(",")]),
            code: 0,
            expect: Expect::Csv(cols.join(","), csv),
        },
        Case {
            what: "--header, --retries, --concurrency are accepted for local tables".into(),
            args: args(&[
                "read",
                &t,
                "--header",
                "X-Test: 1",
                "--retries",
                "0",
                "--concurrency",
                "1",
            ]),
            code: 0,
            expect: Expect::Rows(snapshot.clone()),
        },
        Case {
            what: "a time that is no time".into(),
            args: args(&["read", &t, "--as-of", "yesterday-ish"]),
            code: 2,
            expect: Expect::Error("INVALID_ARGUMENT", "yesterday-ish".into()),
        },
        Case {
            what: "an unknown query".into(),
            args: args(&["read", &t, "--query", "sideways"]),
            code: 2,
            expect: Expect::Text(Box::new(|out| assert!(out.is_empty()))),
        },
        Case {
            what: "a limit that is no number".into(),
            args: args(&["read", &t, "--limit", "many"]),
            code: 2,
            expect: Expect::Text(Box::new(|out| assert!(out.is_empty()))),
        },
        Case {
            what: "a filter on an unknown column".into(),
            args: args(&["read", &t, "--filter", "nope = 1"]),
            code: 2,
            expect: Expect::Error("INVALID_ARGUMENT", "nope".into()),
        },
        Case {
            what: "no table there".into(),
            args: args(&["read", "/definitely/not/a/table"]),
            code: 1,
            expect: Expect::Error("NOT_FOUND", "hoodie.properties".into()),
        },
    ];
    for case in &cases {
        check(case, &keys);
    }

    // --stats: the rows on stdout, the counts on stderr.
    let r = run(&args(&["read", &t, "--stats"]));
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(sorted(&jsonl(&r.out), &keys), sorted(&snapshot, &keys));
    let stats: Value = serde_json::from_str(r.err.trim()).unwrap();
    assert_eq!(stats["rows"].as_u64(), Some(snapshot.len() as u64));
    let slices = exp["snapshot_file_slices"].as_array().unwrap().len() as u64;
    assert_eq!(stats["stats"]["files_selected"].as_u64(), Some(slices));
    let sum = |io: &Value| io["requests"].as_u64().unwrap();
    assert_eq!(
        sum(&stats["total_io"]),
        sum(&stats["plan_io"]) + sum(&stats["read_io"]) + stats_open_requests(&stats),
        "total = open + plan + read"
    );
}

/// Requests of the open: what total_io counts beyond plan and read.
fn stats_open_requests(stats: &Value) -> u64 {
    let total = &stats["total_io"]["by_purpose"];
    let plan = &stats["plan_io"]["by_purpose"];
    let read = &stats["read_io"]["by_purpose"];
    total
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let n = |x: &Value| x[k]["requests"].as_u64().unwrap_or(0);
            v["requests"].as_u64().unwrap() - n(plan) - n(read)
        })
        .sum()
}

fn slices_of(groups: &Value) -> Vec<(String, String, String, Vec<String>)> {
    let mut out: Vec<_> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let s = g["slices"].as_array().unwrap().last().unwrap();
            let mut logs: Vec<String> = s["log_files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["name"].as_str().unwrap().to_string())
                .collect();
            logs.sort();
            (
                g["partition"].as_str().unwrap().to_string(),
                g["file_id"].as_str().unwrap().to_string(),
                s["base_file"]["name"].as_str().unwrap_or("").to_string(),
                logs,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn info_file_groups_plan_commit_and_timeline() {
    for name in [COW, MOR] {
        let exp = common::expected(name).unwrap();
        let t = table(name);
        let keys = key_fields(&exp);
        let want_slices = expected_file_slices(&exp);
        let e = exp.clone();
        let ws = want_slices.clone();
        let first = exp["commit_metadata"][0].clone();
        let completed: Vec<(String, String, String)> = exp["timeline_folder"]["completed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap().to_string();
                (s("instant_time"), s("completion_time"), s("action"))
            })
            .collect();
        let (tl_json, tl_text) = (completed.clone(), completed.clone());
        let mut cases = vec![
            Case {
                what: format!("{name}: info"),
                args: args(&["info", &t]),
                code: 0,
                expect: Expect::Json(Box::new(move |v| {
                    let tb = &e["table"];
                    assert_eq!(v["name"], tb["name"]);
                    assert_eq!(v["version"], tb["table_version"]);
                    assert_eq!(v["table_type"], tb["table_type"]);
                    assert_eq!(v["record_key_fields"], tb["record_key_fields"]);
                    assert_eq!(v["partition_fields"], tb["partition_fields"]);
                    assert_eq!(v["key_generator"], tb["key_generator"]);
                    assert_eq!(v["merge_mode"], tb["record_merge_mode"]);
                    assert_eq!(v["metadata_partitions"], tb["metadata_partitions_property"]);
                    let props: serde_json::Map<String, Value> = tb["hoodie_properties"]
                        .as_object()
                        .unwrap()
                        .clone()
                        .into_iter()
                        .collect();
                    assert_eq!(v["properties"].as_object().unwrap(), &props);
                })),
            },
            Case {
                what: format!("{name}: file-groups (latest slices)"),
                args: args(&["file-groups", &t]),
                code: 0,
                expect: Expect::Json(Box::new(move |v| assert_eq!(slices_of(v), ws))),
            },
            Case {
                what: format!("{name}: file-groups --as-of the first commit"),
                args: args(&[
                    "file-groups",
                    &t,
                    "--as-of",
                    first["instant_time"].as_str().unwrap(),
                ]),
                code: 0,
                expect: Expect::Json(Box::new(move |v| {
                    let mut got: Vec<String> = slices_of(v)
                        .into_iter()
                        .map(|(p, _, base, _)| format!("{p}/{base}"))
                        .collect();
                    got.sort();
                    let mut want: Vec<String> = first["files_written"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| f.as_str().unwrap().to_string())
                        .collect();
                    want.sort();
                    assert_eq!(got, want);
                })),
            },
            Case {
                what: format!("{name}: plan --json"),
                args: args(&["plan", &t, "--json"]),
                code: 0,
                expect: Expect::Json(Box::new(move |v| {
                    let mut got: Vec<(String, String, String, Vec<String>)> = v["file_slices"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| {
                            let name = |p: &str| p.rsplit('/').next().unwrap().to_string();
                            let mut logs: Vec<String> = s["log_files"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .map(|l| name(l.as_str().unwrap()))
                                .collect();
                            logs.sort();
                            (
                                s["partition"].as_str().unwrap().to_string(),
                                s["file_id"].as_str().unwrap().to_string(),
                                name(s["base_file"].as_str().unwrap_or("")),
                                logs,
                            )
                        })
                        .collect();
                    got.sort();
                    assert_eq!(got, want_slices);
                })),
            },
            Case {
                what: format!("{name}: timeline --json"),
                args: args(&["timeline", &t, "--json"]),
                code: 0,
                expect: Expect::Json(Box::new(move |v| {
                    let got: Vec<(String, String, String)> = v["instants"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|i| i["state"] == "completed")
                        .map(|i| {
                            let s = |k: &str| i[k].as_str().unwrap().to_string();
                            (s("requested_time"), s("completion_time"), s("action"))
                        })
                        .collect();
                    assert_eq!(got, tl_json);
                })),
            },
            Case {
                what: format!("{name}: timeline (text)"),
                args: args(&["timeline", &t]),
                code: 0,
                expect: Expect::Text(Box::new(move |out| {
                    let got: Vec<(String, String, String)> = out
                        .lines()
                        .skip(1)
                        .map(|l| {
                            let f: Vec<&str> = l.split_whitespace().collect();
                            (f[0].into(), f[1].into(), f[2].into())
                        })
                        .collect();
                    assert_eq!(got, tl_text);
                })),
            },
            Case {
                what: format!("{name}: commit of an instant that is not there"),
                args: args(&["commit", &t, "20000101000000000"]),
                code: 1,
                expect: Expect::Error("NOT_FOUND", "20000101000000000".into()),
            },
        ];
        for want in expected_commits(&exp) {
            cases.push(Case {
                what: format!("{name}: commit {}", want.0),
                args: args(&["commit", &t, &want.0]),
                code: 0,
                expect: Expect::Json(Box::new(move |v| {
                    assert_eq!(v["instant"]["requested_time"], want.0.as_str());
                    assert_eq!(v["instant"]["action"], want.1.as_str());
                    let c = &v["content"];
                    assert_eq!(c["operationType"], want.2.as_str());
                    let stats: Vec<&Value> = c["partitionToWriteStats"]
                        .as_object()
                        .unwrap()
                        .values()
                        .flat_map(|l| l.as_array().unwrap())
                        .collect();
                    let total = |k: &str| stats.iter().map(|s| s[k].as_i64().unwrap()).sum::<i64>();
                    assert_eq!(
                        [
                            total("numWrites"),
                            total("numInserts"),
                            total("numUpdateWrites"),
                            total("numDeletes")
                        ],
                        want.3
                    );
                    let mut files: Vec<String> = stats
                        .iter()
                        .map(|s| s["path"].as_str().unwrap().to_string())
                        .collect();
                    files.sort();
                    assert_eq!(files, want.4);
                })),
            });
        }
        for case in &cases {
            check(case, &keys);
        }
    }
}

#[test]
fn archived_timeline_as_hudi_spark_read_it() {
    for name in ["v6_archive_cow", "v9_archive_mor"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/generated");
        let zip = dir
            .join(format!("{name}.zip"))
            .to_string_lossy()
            .into_owned();
        let hudi: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let v9 = hudi["table_version"].as_u64() == Some(9);
        let facts = |list: &[Value], archived: &dyn Fn(&Value) -> bool| -> Vec<Value> {
            list.iter()
                .map(|i| {
                    let completion = if v9 {
                        i["completion_time"].clone()
                    } else {
                        Value::Null
                    };
                    serde_json::json!([i["requested_time"], i["action"], completion, archived(i)])
                })
                .collect()
        };
        let want = facts(hudi["completed_instants"].as_array().unwrap(), &|i| {
            i["timeline"] == "archived"
        });
        let active_only: Vec<Value> = want.iter().filter(|w| w[3] == false).cloned().collect();
        for (flag, want) in [(true, want.clone()), (false, active_only)] {
            let mut a = args(&["timeline", &zip, "--json"]);
            if flag {
                a.push("--archived".into());
            }
            let r = run(&a);
            assert_eq!(r.code, 0, "{name}: {}", r.err);
            let v: Value = serde_json::from_str(&r.out).unwrap();
            let completed: Vec<Value> = v["instants"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|i| i["state"] == "completed")
                .cloned()
                .collect();
            let got = facts(&completed, &|i| i["archived"] == true);
            assert_eq!(got, want, "{name}: timeline (--archived: {flag})");
        }
    }
}

/// Every file under `dir` (relative, with its size), but in-flight markers and the manifest.
fn files_on_disk(root: &Path, dir: &Path, out: &mut BTreeSet<(String, u64)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            files_on_disk(root, &p, out);
        } else {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.insert((rel, e.metadata().unwrap().len()));
        }
    }
}

fn manifest_files(m: &Value) -> BTreeSet<(String, u64)> {
    m["dirs"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(dir, files)| {
            files.as_array().unwrap().iter().map(move |f| {
                let name = f[0].as_str().unwrap();
                let path = if dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{dir}/{name}")
                };
                (path, f[1].as_u64().unwrap())
            })
        })
        .collect()
}

#[test]
fn manifest_names_every_file_with_its_size() {
    for name in [COW, MOR] {
        let copy = common::table_copy(name, "cli_commands", &name.replace('/', "_"));
        let mut on_disk = BTreeSet::new();
        files_on_disk(&copy, &copy, &mut on_disk);
        let on_disk: BTreeSet<(String, u64)> = on_disk
            .into_iter()
            .filter(|(p, _)| !p.contains(".hoodie/.temp/"))
            .collect();
        let out = std::env::temp_dir().join(format!(
            "hudi-edge-cli-manifest-{}.json",
            std::process::id()
        ));
        let r = run(&args(&[
            "manifest",
            &copy.to_string_lossy(),
            "--output",
            &out.to_string_lossy(),
        ]));
        assert_eq!(r.code, 0, "{}", r.err);
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        std::fs::remove_file(&out).unwrap();
        assert_eq!(written["format"], "hudi-edge-manifest");
        assert_eq!(manifest_files(&written), on_disk, "{name}: --output");
        assert!(
            !copy.join(".hoodie/hudi-edge-manifest.json").exists(),
            "--output writes nowhere else"
        );

        // Without --output it lands in the table, and lists everything but itself.
        let r = run(&args(&["manifest", &copy.to_string_lossy()]));
        assert_eq!(r.code, 0, "{}", r.err);
        let in_table: Value = serde_json::from_str(
            &std::fs::read_to_string(copy.join(".hoodie/hudi-edge-manifest.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(manifest_files(&in_table), on_disk, "{name}: in the table");
        let latest = in_table["latestInstant"].as_str().unwrap();
        let exp = common::expected(name).unwrap();
        let last = exp["timeline_folder"]["completed"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["instant_time"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(latest, last, "{name}: latest instant");
    }
}

/// The first `.parquet` under `dir` (a base file of a fixture table).
fn some_parquet(dir: &Path) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() && !path.ends_with(".hoodie") {
            if let Some(found) = some_parquet(&path) {
                return Some(found);
            }
        } else if path.extension().is_some_and(|e| e == "parquet") {
            return Some(path);
        }
    }
    None
}

/// `create` of table `name` (id, ts, note; ordered by ts) in a fresh folder `dir` of the
/// test temp dir, with `extra` flags: the folder, the table's path and the run.
fn create_small(dir: &str, name: &str, extra: &[&str]) -> (std::path::PathBuf, String, Run) {
    let root = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(dir);
    let _ = std::fs::remove_dir_all(&root);
    let t = root.join(name).to_string_lossy().into_owned();
    let mut a = args(&[
        "create",
        &t,
        "--columns",
        "id BIGINT NOT NULL, ts BIGINT, note STRING",
        "--record-key",
        "id",
        "--ordering",
        "ts",
    ]);
    a.extend(args(extra));
    let r = run(&a);
    (root, t, r)
}

#[test]
fn create_from_columns_and_from_a_data_file() {
    let (root, orders, r) = create_small("cli_create", "orders", &["--type", "mor"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out
            .starts_with("created orders (MergeOnRead, table version 9)"),
        "{}",
        r.out
    );
    let info: Value = serde_json::from_str(&run(&args(&["info", &orders])).out).unwrap();
    assert_eq!(info["table_type"], "MERGE_ON_READ");
    assert_eq!(info["key_generator"], "NON_PARTITION");
    // Created once: the second is refused and leaves the first as it was.
    let before = std::fs::read(root.join("orders/.hoodie/hoodie.properties")).unwrap();
    let again = run(&args(&[
        "create",
        &orders,
        "--columns",
        "id INT",
        "--record-key",
        "id",
    ]));
    assert_ne!(again.code, 0);
    assert!(
        again.err.contains("CONFLICT") && again.err.contains("a table already exists"),
        "{}",
        again.err
    );
    assert_eq!(
        std::fs::read(root.join("orders/.hoodie/hoodie.properties")).unwrap(),
        before
    );

    // Columns from a Hudi base file (its meta columns left out), then that file's rows written.
    let source = common::table_path(COW);
    let parquet = some_parquet(&source).expect("a base file");
    let txns = root.join("txns").to_string_lossy().into_owned();
    let r = run(&args(&[
        "create",
        &txns,
        "--schema-from",
        &parquet.to_string_lossy(),
        "--record-key",
        "txn_id",
        "--partition-by",
        "region",
        "--ordering",
        "txn_ts",
        "--option",
        "hoodie.datasource.write.hive_style_partitioning=true",
    ]));
    assert_eq!(r.code, 0, "{}", r.err);
    let r = run(&args(&[
        "write",
        &txns,
        "--input",
        &parquet.to_string_lossy(),
        "--json",
    ]));
    assert_eq!(r.code, 0, "{}", r.err);
    let written: Value = serde_json::from_str(&r.out).unwrap();
    let inserted = written["records"]["inserted"].as_u64().unwrap();
    assert!(inserted > 0);
    let rows = jsonl(&run(&args(&["read", &txns])).out);
    assert_eq!(rows.len() as u64, inserted);
    assert!(rows.iter().all(|r| r["_hoodie_partition_path"]
        .as_str()
        .unwrap()
        .starts_with("region=")));
    let columns: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let source_rows = jsonl(&run(&args(&["read", &source.to_string_lossy()])).out);
    let source_columns: Vec<&str> = source_rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        columns, source_columns,
        "the same columns in the same order"
    );
}

/// `write --add-columns`: an Arrow file's extra column joins the schema; without the flag it
/// is refused, and JSON lines (untyped) cannot add one.
#[test]
fn write_adds_columns_from_typed_input_only_when_asked() {
    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
    let root = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_add_columns");
    let _ = std::fs::remove_dir_all(&root);
    let table = root.join("t").to_string_lossy().into_owned();
    let r = run(&args(&[
        "create",
        &table,
        "--columns",
        "id BIGINT NOT NULL, ts BIGINT, note STRING",
        "--record-key",
        "id",
    ]));
    assert_eq!(r.code, 0, "{}", r.err);
    let wider = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        ("ts", Arc::new(Int64Array::from(vec![1, 1]))),
        ("note", Arc::new(StringArray::from(vec!["a", "b"]))),
        ("score", Arc::new(Float64Array::from(vec![0.5, 1.5]))),
    ])
    .unwrap();
    let input = root.join("wider.arrow");
    let mut w = arrow_ipc::writer::FileWriter::try_new(
        std::fs::File::create(&input).unwrap(),
        &wider.schema(),
    )
    .unwrap();
    w.write(&wider).unwrap();
    w.finish().unwrap();
    let input = input.to_string_lossy().into_owned();
    let refused = run(&args(&["write", &table, "--input", &input]));
    assert!(
        refused.err.contains("INVALID_INPUT") && refused.err.contains("add-columns"),
        "{}",
        refused.err
    );
    let jsonl_input = root.join("wider.jsonl");
    std::fs::write(
        &jsonl_input,
        "{\"id\":3,\"ts\":1,\"note\":\"c\",\"score\":2.5}\n",
    )
    .unwrap();
    let untyped = run(&args(&[
        "write",
        &table,
        "--input",
        &jsonl_input.to_string_lossy(),
        "--add-columns",
    ]));
    assert!(
        untyped.err.contains("INVALID_ARGUMENT") && untyped.err.contains("Parquet or Arrow"),
        "{}",
        untyped.err
    );
    let r = run(&args(&[
        "write",
        &table,
        "--input",
        &input,
        "--add-columns",
    ]));
    assert_eq!(r.code, 0, "{}", r.err);
    let rows = jsonl(&run(&args(&["read", &table])).out);
    let scores: Vec<f64> = rows.iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert_eq!(scores.len(), 2);
    assert!(scores.contains(&0.5) && scores.contains(&1.5), "{rows:?}");
    // The column is the table's now: JSON lines may set it.
    let r = run(&args(&[
        "write",
        &table,
        "--input",
        &jsonl_input.to_string_lossy(),
    ]));
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(jsonl(&run(&args(&["read", &table])).out).len(), 3);
}

/// `clean`: nothing due on a young table; after writes with cleaning off, `clean --json`
/// deletes the old slices and reports them; `write --json` reports the automatic clean.
#[test]
fn clean_reports_what_it_deleted() {
    let (root, t, r) = create_small("cli_clean", "t", &[]);
    assert_eq!(r.code, 0, "{}", r.err);
    let input = root.join("rows.jsonl");
    let write = |n: u32, extra: &[&str]| {
        std::fs::write(
            &input,
            format!("{{\"id\":1,\"ts\":{n},\"note\":\"n{n}\"}}\n"),
        )
        .unwrap();
        let mut a = args(&["write", &t, "--input", &input.to_string_lossy(), "--json"]);
        a.extend(args(extra));
        let r = run(&a);
        assert_eq!(r.code, 0, "{}", r.err);
        serde_json::from_str::<Value>(&r.out).unwrap()
    };
    for n in 0..4 {
        write(n, &["--option", "hoodie.clean.automatic=false"]);
    }
    let r = run(&args(&["clean", &t]));
    assert_eq!((r.code, r.out.trim()), (0, "nothing to clean"), "{}", r.err);
    let keep = ["--option", "hoodie.clean.commits.retained=2"];
    let mut a = args(&["clean", &t, "--json"]);
    a.extend(args(&keep));
    let r = run(&a);
    assert_eq!(r.code, 0, "{}", r.err);
    let done: Value = serde_json::from_str(&r.out).unwrap();
    assert_eq!(done.as_array().unwrap().len(), 1, "{done}");
    assert_eq!(done[0]["table"], "data");
    assert_eq!(done[0]["files_deleted"], 1, "{done}");
    assert!(done[0]["bytes_freed"].as_u64().unwrap() > 0);
    assert!(done[0]["io"]["requests"].as_u64().unwrap() > 0);
    let w = write(4, &keep);
    assert_eq!(w["services"]["clean"][0]["files_deleted"], 1, "{w}");
    assert!(w["services"].get("errors").is_none(), "{w}");
    let rows = jsonl(&run(&args(&["read", &t, "--format", "jsonl"])).out);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["note"], "n4");
}

/// `compact`: a plan written and left (`--schedule-only`), executed by `--instant`, then
/// nothing left; a write's inline compaction in its JSON; a Copy-On-Write table refused.
#[test]
fn compact_schedules_executes_and_reports() {
    let root = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_compact");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let t = root.join("events").to_string_lossy().into_owned();
    let create = |table: &str, kind: &str| {
        run(&args(&[
            "create",
            table,
            "--columns",
            "id BIGINT NOT NULL, ts BIGINT, region STRING",
            "--record-key",
            "id",
            "--partition-by",
            "region",
            "--ordering",
            "ts",
            "--type",
            kind,
        ]))
    };
    assert_eq!(create(&t, "mor").code, 0);
    let write = |n: i64, extra: &[&str]| {
        let input = root.join(format!("in{n}.jsonl"));
        let rows: String = (0..4)
            .map(|k| {
                let id = (n + k) % 6;
                let region = if id % 2 == 0 { "eu" } else { "us" };
                format!("{{\"id\":{id},\"ts\":{n},\"region\":\"{region}\"}}\n")
            })
            .collect();
        std::fs::write(&input, rows).unwrap();
        let mut a = args(&["write", &t, "--input", &input.to_string_lossy(), "--json"]);
        a.extend(extra.iter().map(|s| s.to_string()));
        let r = run(&a);
        assert_eq!(r.code, 0, "{}", r.err);
        serde_json::from_str::<Value>(&r.out).unwrap()
    };
    for n in 0..3 {
        write(n, &["--option", "hoodie.compact.inline=false"]);
    }
    let before = jsonl(&run(&args(&["read", &t])).out);
    let scheduled = run(&args(&["compact", &t, "--schedule-only", "--json"]));
    assert_eq!(scheduled.code, 0, "{}", scheduled.err);
    let s: Value = serde_json::from_str(&scheduled.out).unwrap();
    let instant = s["scheduled"].as_str().expect("a plan").to_string();
    assert_eq!(s["completed"], serde_json::json!([]));
    let executed = run(&args(&["compact", &t, "--instant", &instant]));
    assert_eq!(executed.code, 0, "{}", executed.err);
    assert!(
        executed.out.starts_with(&format!("compaction {instant} ")),
        "{}",
        executed.out
    );
    let strip = |rows: Vec<Value>| -> Vec<Value> {
        let mut rows: Vec<Value> = rows
            .into_iter()
            .map(|mut r| {
                r.as_object_mut().unwrap().remove("_hoodie_file_name");
                r
            })
            .collect();
        rows.sort_by_key(|r| r.to_string());
        rows
    };
    assert_eq!(
        strip(jsonl(&run(&args(&["read", &t])).out)),
        strip(before),
        "the same rows after the compaction"
    );
    let nothing = run(&args(&["compact", &t]));
    assert!(
        nothing.out.starts_with("nothing to compact: "),
        "{}",
        nothing.out
    );
    let again = run(&args(&["compact", &t, "--instant", &instant]));
    assert!(
        again.code != 0 && again.err.contains("INVALID_ARGUMENT"),
        "{}",
        again.err
    );
    // Inline, at the fifth delta commit since that compaction.
    let reports: Vec<Value> = (3..8).map(|n| write(n, &[])).collect();
    let compacted: Vec<bool> = reports
        .iter()
        .map(|r| r["services"]["compaction"]["completed"][0]["instant"].is_string())
        .collect();
    assert_eq!(compacted, [false, false, false, false, true]);
    let cow = root.join("cow").to_string_lossy().into_owned();
    assert_eq!(create(&cow, "cow").code, 0);
    let refused = run(&args(&["compact", &cow]));
    assert!(refused.err.contains("UNSUPPORTED"), "{}", refused.err);
}

/// `cluster`: a plan written and left (`--schedule-only`), executed by `--instant` (the same
/// rows, one file group a partition), `--json` reporting it; a write's inline clustering in
/// its JSON.
#[test]
fn cluster_schedules_executes_and_reports() {
    let root = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_cluster");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let t = root.join("events").to_string_lossy().into_owned();
    let created = run(&args(&[
        "create",
        &t,
        "--columns",
        "id BIGINT NOT NULL, ts BIGINT, region STRING",
        "--record-key",
        "id",
        "--partition-by",
        "region",
    ]));
    assert_eq!(created.code, 0, "{}", created.err);
    let write = |n: i64, extra: &[&str]| {
        let input = root.join(format!("in{n}.jsonl"));
        let rows: String = (0..2)
            .map(|k| {
                let id = n * 2 + k;
                let region = if id % 2 == 0 { "eu" } else { "us" };
                format!("{{\"id\":{id},\"ts\":{n},\"region\":\"{region}\"}}\n")
            })
            .collect();
        std::fs::write(&input, rows).unwrap();
        let mut a = args(&["write", &t, "--input", &input.to_string_lossy(), "--json"]);
        a.extend(["--option", "hoodie.parquet.small.file.limit=0"].map(String::from));
        a.extend(extra.iter().map(|s| s.to_string()));
        let r = run(&a);
        assert_eq!(r.code, 0, "{}", r.err);
        serde_json::from_str::<Value>(&r.out).unwrap()
    };
    for n in 0..3 {
        write(n, &[]);
    }
    let before = jsonl(&run(&args(&["read", &t])).out);
    let scheduled = run(&args(&["cluster", &t, "--schedule-only", "--json"]));
    assert_eq!(scheduled.code, 0, "{}", scheduled.err);
    let s: Value = serde_json::from_str(&scheduled.out).unwrap();
    let instant = s["scheduled"].as_str().expect("a plan").to_string();
    let executed = run(&args(&["cluster", &t, "--instant", &instant, "--json"]));
    assert_eq!(executed.code, 0, "{}", executed.err);
    let e: Value = serde_json::from_str(&executed.out).unwrap();
    let done = &e["completed"][0];
    assert_eq!(done["instant"], instant.as_str(), "{e}");
    assert_eq!(done["groups"], 2, "{e}");
    assert_eq!(done["file_groups_replaced"].as_array().unwrap().len(), 6);
    let strip = |rows: Vec<Value>| -> Vec<Value> {
        let mut rows: Vec<Value> = rows
            .into_iter()
            .map(|mut r| {
                r.as_object_mut().unwrap().remove("_hoodie_file_name");
                r
            })
            .collect();
        rows.sort_by_key(|r| r.to_string());
        rows
    };
    assert_eq!(
        strip(jsonl(&run(&args(&["read", &t])).out)),
        strip(before),
        "the same rows after the clustering"
    );
    let text = run(&args(&["cluster", &t, "--instant", &instant]));
    assert!(text.err.contains("INVALID_ARGUMENT"), "{}", text.err);
    let inline = write(
        3,
        &[
            "--option",
            "hoodie.clustering.inline=true",
            "--option",
            "hoodie.clustering.inline.max.commits=1",
        ],
    );
    assert!(
        inline["services"]["clustering"]["completed"][0]["instant"].is_string(),
        "{inline}"
    );
}
