//! The fixture expectations (tests/data/fixtures/expected/*.json) as a list of reads with
//! the full rows each must return, and the other facts a reader must reproduce (timeline,
//! latest file slices, commit metadata). Disagreements with the oracle are allowed only
//! where tests/data/oracle_allowances.json says so; tests/js/fixture_checks.mjs reads the
//! same file and derives the same list for the wasm build.

use std::collections::BTreeSet;

use hudi_edge::expr::{Expr, Op};
use hudi_edge::read::{QueryType, ReadOptions};
use hudi_edge::Table;
use serde_json::Value;

use super::{oracle_rows, record_key};

pub fn allowances() -> Value {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oracle_allowances.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("allowances")).expect("json")
}

/// The allowance `rule` when it applies to fixture `name` and read `read`.
pub fn allowance<'a>(
    spec: &'a Value,
    rule: &str,
    name: &str,
    exp: &Value,
    read: &str,
) -> Option<&'a Value> {
    spec["allowances"].as_array()?.iter().find(|a| {
        a["rule"] == rule
            && a["reads"]
                .as_array()
                .is_some_and(|r| r.iter().any(|x| x == read))
            && applies(a, name, exp)
    })
}

fn applies(a: &Value, name: &str, exp: &Value) -> bool {
    if let Some(list) = a["fixtures"].as_array() {
        return list.iter().any(|f| f == name);
    }
    if let Some(v) = a["table_version_at_least"].as_u64() {
        return exp["table"]["table_version"].as_u64().unwrap_or(0) >= v;
    }
    if let Some(v) = a["populate_meta_fields"].as_bool() {
        return exp["table"]["populate_meta_fields"]
            .as_bool()
            .unwrap_or(true)
            == v;
    }
    false
}

pub fn key_fields(exp: &Value) -> Vec<String> {
    exp["table"]["record_key_fields"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

pub enum Want {
    /// Exactly these rows (sorted as the oracle sorts); `int64_as_string` columns may hold an
    /// integer where the oracle has its text (D4).
    Rows {
        rows: Vec<Value>,
        int64_as_string: Vec<String>,
    },
    Error {
        code: String,
        message_contains: Option<String>,
    },
}

pub struct ExpectedRead {
    pub what: String,
    pub options: ReadOptions,
    pub want: Want,
}

fn error_of(a: &Value) -> Want {
    Want::Error {
        code: a["error"]["code"].as_str().unwrap().to_string(),
        message_contains: a["error"]["message_contains"].as_str().map(str::to_string),
    }
}

fn rows_of(v: &Value) -> Vec<Value> {
    v.as_array().expect("rows").clone()
}

fn pair_of(row: &Value, keys: &[String]) -> (String, String) {
    let m = row.as_object().unwrap();
    let partition = m
        .get("_hoodie_partition_path")
        .and_then(Value::as_str)
        .unwrap_or("");
    (record_key(m, keys), partition.to_string())
}

fn pairs_of(v: &Value) -> BTreeSet<(String, String)> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p[0].as_str().unwrap().to_string(),
                p[1].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Every read the expected file of `name` pins down, with its full rows.
pub fn expected_reads(spec: &Value, name: &str, exp: &Value) -> Vec<ExpectedRead> {
    let keys = key_fields(exp);
    let mut out = Vec::new();
    let lenient = |read: &str| -> Vec<String> {
        allowance(spec, "int64_read_as_string", name, exp, read)
            .and_then(|a| a["columns"][name].as_array())
            .map(|c| c.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };
    let rows = |rows: Vec<Value>, read: &str| Want::Rows {
        rows,
        int64_as_string: lenient(read),
    };

    out.push(ExpectedRead {
        what: "snapshot".into(),
        options: ReadOptions::default(),
        want: rows(rows_of(&exp["snapshot"]["rows"]), "snapshot"),
    });
    for tt in exp["time_travel"].as_array().into_iter().flatten() {
        let as_of = tt["as_of"].as_str().unwrap().to_string();
        out.push(ExpectedRead {
            what: format!("time travel as of {as_of}"),
            options: ReadOptions {
                as_of: Some(as_of),
                ..Default::default()
            },
            want: rows(rows_of(&tt["rows"]), "time_travel"),
        });
    }

    // Incremental rows: the oracle lists keys only; the rows are the ones time travel to the
    // range's end shows with a commit time inside the range (checked against its keys).
    let by_completion = allowance(
        spec,
        "incremental_by_completion_time",
        name,
        exp,
        "incremental",
    )
    .is_some();
    let ranges = if by_completion {
        &exp["incremental_by_completion_time"]
    } else {
        &exp["incremental"]
    };
    let refused = allowance(
        spec,
        "incremental_refused_without_meta_fields",
        name,
        exp,
        "incremental",
    );
    let completed: Vec<(String, String)> = exp["timeline_folder"]["completed"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let requested = c["instant_time"].as_str().unwrap().to_string();
            let bound = if by_completion {
                c["completion_time"].as_str().unwrap().to_string()
            } else {
                requested.clone()
            };
            (requested, bound)
        })
        .collect();
    for r in ranges.as_array().into_iter().flatten() {
        let start = r["start"].as_str().unwrap().to_string();
        let end = r["end"].as_str().map(str::to_string);
        let options = ReadOptions {
            query: QueryType::Incremental,
            start: Some(start.clone()),
            end: end.clone(),
            ..Default::default()
        };
        let what = format!("incremental ({start}, {end:?}]");
        if let Some(a) = refused {
            out.push(ExpectedRead {
                what,
                options,
                want: error_of(a),
            });
            continue;
        }
        let before_end = |bound: &str| end.as_deref().is_none_or(|e| bound <= e);
        let in_range: BTreeSet<&str> = completed
            .iter()
            .filter(|(_, b)| b.as_str() > start.as_str() && before_end(b))
            .map(|(i, _)| i.as_str())
            .collect();
        let source = match &end {
            None => rows_of(&exp["snapshot"]["rows"]),
            Some(_) => {
                let visible: BTreeSet<&str> = completed
                    .iter()
                    .filter(|(_, b)| before_end(b))
                    .map(|(i, _)| i.as_str())
                    .collect();
                exp["time_travel"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|t| visible.contains(t["as_of"].as_str().unwrap()))
                    .max_by_key(|t| t["as_of"].as_str().unwrap().to_string())
                    .map(|t| rows_of(&t["rows"]))
                    .unwrap_or_default()
            }
        };
        let want: Vec<Value> = source
            .into_iter()
            .filter(|row| {
                row["_hoodie_commit_time"]
                    .as_str()
                    .is_some_and(|t| in_range.contains(t))
            })
            .collect();
        let derived: BTreeSet<(String, String)> = want.iter().map(|w| pair_of(w, &keys)).collect();
        assert_eq!(
            derived,
            pairs_of(&r["keys_with_partition"]),
            "{name} {what}: rows derived from time travel disagree with the oracle's keys"
        );
        out.push(ExpectedRead {
            what,
            options,
            want: rows(want, "incremental"),
        });
    }

    if let Some(ro) = exp.get("read_optimized").filter(|v| !v.is_null()) {
        out.push(ExpectedRead {
            what: "read-optimized".into(),
            options: ReadOptions {
                query: QueryType::ReadOptimized,
                ..Default::default()
            },
            want: rows(rows_of(&ro["rows"]), "read_optimized"),
        });
    }

    for f in exp["filters"].as_array().into_iter().flatten() {
        let filters: Vec<Expr> = f["filters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let op = Op::parse(t[1].as_str().unwrap()).unwrap();
                Expr::pred(t[0].as_str().unwrap(), op, &[t[2].as_str().unwrap()])
            })
            .collect();
        let what = format!("filter {}", f["filters"]);
        let want = if f["matches_python_filter_of_snapshot"] == true {
            rows_of(&f["rows"])
        } else {
            assert!(
                allowance(spec, "filter_rows_from_snapshot", name, exp, "filter").is_some(),
                "{name} {what}: the oracle's rows disagree with its own filter and no allowance explains it"
            );
            let wanted = pairs_of(&f["python_filter_of_snapshot_keys"]);
            rows_of(&exp["snapshot"]["rows"])
                .into_iter()
                .filter(|r| wanted.contains(&pair_of(r, &keys)))
                .collect()
        };
        out.push(ExpectedRead {
            what,
            options: ReadOptions {
                filters,
                ..Default::default()
            },
            want: rows(want, "filter"),
        });
    }
    out
}

/// `got` equals `want` row for row, value for value.
pub fn assert_rows(what: &str, got: &[Value], want: &[Value], int64_as_string: &[String]) {
    assert_eq!(got.len(), want.len(), "{what}: row count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let mut g = g.clone();
        for col in int64_as_string {
            if let (Some(Value::Number(n)), Some(Value::String(text))) =
                (g.get(col.as_str()), w.get(col.as_str()))
            {
                if n.is_i64() && &n.to_string() == text {
                    g[col.as_str()] = Value::String(text.clone());
                }
            }
        }
        assert_eq!(&g, w, "{what}: row {i} differs");
    }
}

/// Runs every expected read of `name` on `table`.
pub async fn check_reads(spec: &Value, name: &str, exp: &Value, table: &Table) {
    let keys = key_fields(exp);
    for read in expected_reads(spec, name, exp) {
        let what = format!("{name} {}", read.what);
        let result = table.read(&read.options).await;
        match read.want {
            Want::Rows {
                rows,
                int64_as_string,
            } => {
                let got = result.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_rows(
                    &what,
                    &oracle_rows(&got.batches, &keys),
                    &rows,
                    &int64_as_string,
                );
            }
            Want::Error {
                code,
                message_contains,
            } => {
                let err = result.err().unwrap_or_else(|| panic!("{what}: must fail"));
                assert_eq!(err.code(), code, "{what}: {err}");
                if let Some(m) = message_contains {
                    assert!(err.to_string().contains(&m), "{what}: {err}");
                }
            }
        }
    }
}

/// The latest file slices as the oracle lists them: (partition, file id, base file, logs).
pub fn expected_file_slices(exp: &Value) -> Vec<(String, String, String, Vec<String>)> {
    let mut out: Vec<_> = exp["snapshot_file_slices"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let text = |k: &str| s[k].as_str().unwrap_or("").to_string();
            let mut logs: Vec<String> = s["log_file_names"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|l| l.as_str().unwrap().to_string())
                .collect();
            logs.sort();
            (
                text("partition_path"),
                text("file_id"),
                text("base_file_name"),
                logs,
            )
        })
        .collect();
    out.sort();
    out
}

/// Per commit of the oracle: (instant, action, operation, [writes, inserts, updates,
/// deletes], files written, replaced (partition, file id)).
pub type CommitFacts = (
    String,
    String,
    String,
    [i64; 4],
    Vec<String>,
    Vec<(String, String)>,
);

pub fn expected_commits(exp: &Value) -> Vec<CommitFacts> {
    exp["commit_metadata"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let t = &c["write_totals"];
            let n = |k: &str| t[k].as_i64().unwrap();
            let mut files: Vec<String> = c["files_written"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap().to_string())
                .collect();
            files.sort();
            let mut replaced: Vec<(String, String)> = c["replaced_file_ids"]
                .as_object()
                .into_iter()
                .flatten()
                .flat_map(|(p, ids)| {
                    ids.as_array()
                        .unwrap()
                        .iter()
                        .map(move |id| (p.clone(), id.as_str().unwrap().to_string()))
                })
                .collect();
            replaced.sort();
            (
                c["instant_time"].as_str().unwrap().to_string(),
                c["action"].as_str().unwrap().to_string(),
                c["operationType"].as_str().unwrap_or("").to_string(),
                [
                    n("numWrites"),
                    n("numInserts"),
                    n("numUpdateWrites"),
                    n("numDeletes"),
                ],
                files,
                replaced,
            )
        })
        .collect()
}
