//! Shared by the metadata-table tests (tests/metadata_table*.rs): the `*_meta` fixtures, read
//! options, plans as comparable values, and the filters evaluated on the expected JSON rows.

use std::collections::BTreeSet;

use hudi_edge::expr::{parse_filter, Expr, Op, Predicate};
use hudi_edge::read::{Plan, ReadOptions};
use hudi_edge::Table;
use serde_json::Value;

use super::oracle_rows;

pub const COW: &str = "sample_table/cow/v9_txns_simple_meta";
pub const MOR: &str = "sample_table/mor/avro/v9_txns_simple_meta";
pub const NONPART: &str = "sample_table/cow/v9_txns_nonpart_meta";
pub const TRIPS_V8: &str = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d";
pub const ALL: [&str; 4] = [COW, MOR, NONPART, TRIPS_V8];

pub fn options(filters: &[&str]) -> ReadOptions {
    ReadOptions {
        filters: filters.iter().map(|f| parse_filter(f).unwrap()).collect(),
        ..Default::default()
    }
}

pub fn without_skipping(mut o: ReadOptions) -> ReadOptions {
    o.data_skipping = false;
    o
}

pub fn without_metadata(mut o: ReadOptions) -> ReadOptions {
    o.use_metadata_table = false;
    o
}

/// Planned file groups as `partition/file id`.
pub fn groups(plan: &Plan) -> BTreeSet<String> {
    plan.file_slices
        .iter()
        .map(|s| format!("{}/{}", s.partition, s.file_id))
        .collect()
}

/// Everything a plan says about its slices, to compare two plans.
pub fn slices(plan: &Plan) -> Vec<(String, String, Option<String>, Vec<String>)> {
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

pub async fn read_rows(table: &Table, opts: &ReadOptions, keys: &[String]) -> Vec<Value> {
    let r = table
        .read(opts)
        .await
        .unwrap_or_else(|e| panic!("read {opts:?}: {e}"));
    oracle_rows(&r.batches, keys)
}

// --- the filter, evaluated on expected JSON rows (SQL semantics: null never matches) ---

pub fn compare(row: &Value, literal: &str) -> Option<std::cmp::Ordering> {
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

pub fn row_matches(row: &Value, e: &Expr) -> bool {
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

pub fn expected_rows(rows: &Value, filters: &[&str]) -> Vec<Value> {
    let exprs: Vec<Expr> = filters.iter().map(|f| parse_filter(f).unwrap()).collect();
    rows.as_array()
        .unwrap()
        .iter()
        .filter(|r| exprs.iter().all(|e| row_matches(r, e)))
        .cloned()
        .collect()
}

/// `partition/file id` of a snapshot row.
pub fn group_of(row: &Value) -> String {
    let name = row["_hoodie_file_name"].as_str().unwrap();
    let id = name.split('_').next().unwrap();
    format!("{}/{id}", row["_hoodie_partition_path"].as_str().unwrap())
}

/// The file groups whose rows' min/max (and null counts) admit the filter — what exact
/// file-level statistics prune to when every row of a file is live (copy-on-write, or
/// merge-on-read slices without log files).
pub fn groups_by_statistics(rows: &Value, filter: &str) -> BTreeSet<String> {
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

pub fn stats_admit(rows: &[&Value], e: &Expr) -> bool {
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
pub fn range_admits(values: &[&Value], p: &Predicate) -> bool {
    let row = |v: &Value| serde_json::json!({ p.column.as_str(): v });
    values
        .iter()
        .any(|v| row_matches(&row(v), &Expr::Pred(p.clone())))
}
