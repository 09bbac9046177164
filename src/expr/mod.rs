//! Filters: `column op value` predicates combined with AND / OR, and their evaluation
//! against three things a planner and reader meet:
//! - rows of a `RecordBatch` (exact, SQL semantics: null never matches),
//! - partition values (one row per partition; columns that are not partition columns are
//!   "unknown" and never prune),
//! - statistics (min / max / null count per file or row group): "may any row match?".
//!
//! Literals arrive as text and are cast to the column's Arrow type, so comparisons are
//! typed (decimals, dates, timestamps compare as values, not strings).

mod parse;
pub mod stats;

use std::fmt;

use crate::compare::{compare as cmp_with, Cmp};
use arrow_arith::boolean::{and_kleene, not, or_kleene};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, Scalar, StringArray};
use arrow_schema::DataType;
use serde::{Deserialize, Serialize};

pub use parse::parse_filter;

use crate::error::{HudiError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    #[serde(rename = "=")]
    Eq,
    #[serde(rename = "!=")]
    Ne,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "in")]
    In,
    #[serde(rename = "not in")]
    NotIn,
    #[serde(rename = "is null")]
    IsNull,
    #[serde(rename = "is not null")]
    IsNotNull,
}

impl Op {
    pub fn parse(s: &str) -> Option<Op> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "=" | "==" | "eq" => Op::Eq,
            "!=" | "<>" | "ne" => Op::Ne,
            "<" | "lt" => Op::Lt,
            "<=" | "le" => Op::Le,
            ">" | "gt" => Op::Gt,
            ">=" | "ge" => Op::Ge,
            "in" => Op::In,
            "not in" => Op::NotIn,
            "is null" => Op::IsNull,
            "is not null" => Op::IsNotNull,
            _ => return None,
        })
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::In => "in",
            Op::NotIn => "not in",
            Op::IsNull => "is null",
            Op::IsNotNull => "is not null",
        }
    }
}

/// One comparison of a column with literal text values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Predicate {
    pub column: String,
    pub op: Op,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Expr {
    Pred(Predicate),
    And(Vec<Expr>),
    Or(Vec<Expr>),
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.op {
            Op::IsNull | Op::IsNotNull => write!(f, "{} {}", self.column, self.op.as_str()),
            Op::In | Op::NotIn => write!(
                f,
                "{} {} ({})",
                self.column,
                self.op.as_str(),
                self.values.join(", ")
            ),
            _ => write!(
                f,
                "{} {} {}",
                self.column,
                self.op.as_str(),
                self.values.first().map(String::as_str).unwrap_or("")
            ),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |f: &mut fmt::Formatter<'_>, parts: &[Expr], sep: &str| {
            let s: Vec<String> = parts.iter().map(|p| format!("({p})")).collect();
            write!(f, "{}", s.join(sep))
        };
        match self {
            Expr::Pred(p) => write!(f, "{p}"),
            Expr::And(parts) => join(f, parts, " and "),
            Expr::Or(parts) => join(f, parts, " or "),
        }
    }
}

impl Expr {
    pub fn pred(column: &str, op: Op, values: &[&str]) -> Expr {
        Expr::Pred(Predicate {
            column: column.into(),
            op,
            values: values.iter().map(|v| v.to_string()).collect(),
        })
    }

    /// Every column the expression reads.
    pub fn columns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit(&mut |p| out.push(p.column.as_str()));
        out.sort();
        out.dedup();
        out
    }

    fn visit<'a>(&'a self, f: &mut impl FnMut(&'a Predicate)) {
        match self {
            Expr::Pred(p) => f(p),
            Expr::And(parts) | Expr::Or(parts) => parts.iter().for_each(|e| e.visit(f)),
        }
    }

    /// The expression with the predicates on `columns` taken as unknown (true): `None` when
    /// nothing is left. Never narrower than `self`, so it may prune where `self` may.
    pub fn without_columns(&self, columns: &[String]) -> Option<Expr> {
        match self {
            Expr::Pred(p) => (!columns.contains(&p.column)).then(|| self.clone()),
            Expr::And(parts) => {
                let kept: Vec<Expr> = parts
                    .iter()
                    .filter_map(|e| e.without_columns(columns))
                    .collect();
                match kept.len() {
                    0 => None,
                    1 => kept.into_iter().next(),
                    _ => Some(Expr::And(kept)),
                }
            }
            Expr::Or(parts) => {
                let kept: Option<Vec<Expr>> =
                    parts.iter().map(|e| e.without_columns(columns)).collect();
                kept.map(Expr::Or)
            }
        }
    }

    /// Predicates that must all hold (the top-level AND), for index lookups.
    pub fn conjuncts(&self) -> Vec<&Predicate> {
        match self {
            Expr::Pred(p) => vec![p],
            Expr::And(parts) => parts.iter().flat_map(|e| e.conjuncts()).collect(),
            Expr::Or(_) => Vec::new(),
        }
    }

    /// Exact evaluation on rows: true where the row matches (null ⇒ false).
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        let known = self
            .evaluate_known(batch, true)?
            .expect("strict evaluation always knows");
        Ok(null_as_false(&known))
    }

    /// Evaluation where columns missing from `batch` are unknown; returns `None` when the
    /// whole expression is unknown. Unknown never excludes: callers keep such rows.
    pub fn evaluate_partial(&self, batch: &RecordBatch) -> Result<Option<BooleanArray>> {
        self.evaluate_known(batch, false)
    }

    fn evaluate_known(&self, batch: &RecordBatch, strict: bool) -> Result<Option<BooleanArray>> {
        match self {
            Expr::Pred(p) => match batch.column_by_name(&p.column) {
                Some(col) => Ok(Some(compare(col, p)?)),
                None if strict => Err(HudiError::invalid(format!(
                    "unknown column {:?} in filter {p}",
                    p.column
                ))),
                None => Ok(None),
            },
            Expr::And(parts) => {
                let mut acc: Option<BooleanArray> = None;
                for part in parts {
                    if let Some(v) = part.evaluate_known(batch, strict)? {
                        acc = Some(match acc {
                            Some(a) => and_kleene(&a, &v).map_err(crate::error::malformed_by)?,
                            None => v,
                        });
                    }
                }
                Ok(acc)
            }
            Expr::Or(parts) => {
                let mut acc: Option<BooleanArray> = None;
                for part in parts {
                    match part.evaluate_known(batch, strict)? {
                        None => return Ok(None),
                        Some(v) => {
                            acc = Some(match acc {
                                Some(a) => or_kleene(&a, &v).map_err(crate::error::malformed_by)?,
                                None => v,
                            })
                        }
                    }
                }
                Ok(acc)
            }
        }
    }
}

/// ANDs a list of filters into one expression (`None` when empty).
pub fn conjunction(filters: &[Expr]) -> Option<Expr> {
    match filters.len() {
        0 => None,
        1 => Some(filters[0].clone()),
        _ => Some(Expr::And(filters.to_vec())),
    }
}

pub fn null_as_false(a: &BooleanArray) -> BooleanArray {
    match a.nulls() {
        None => a.clone(),
        Some(_) => a.iter().map(|v| Some(v.unwrap_or(false))).collect(),
    }
}

/// Casts a literal to `target`; a value that does not parse is a clear error naming it.
pub fn literal(value: &str, target: &DataType, column: &str) -> Result<Scalar<ArrayRef>> {
    let cast = match target {
        DataType::Boolean => {
            let b = match value.trim().to_ascii_lowercase().as_str() {
                "true" | "1" => true,
                "false" | "0" => false,
                _ => {
                    return Err(HudiError::invalid(format!(
                        "{value:?} is not a boolean (column {column})"
                    )))
                }
            };
            std::sync::Arc::new(BooleanArray::from(vec![b])) as ArrayRef
        }
        DataType::Dictionary(_, v) => return literal(value, v, column),
        _ => crate::cast::cast(&StringArray::from(vec![value]), target, false).map_err(|e| {
            HudiError::invalid(format!(
                "{value:?} is not a valid {target} for column {column}: {e}"
            ))
        })?,
    };
    Ok(Scalar::new(cast))
}

fn compare(col: &ArrayRef, p: &Predicate) -> Result<BooleanArray> {
    let err = |e: arrow_schema::ArrowError| HudiError::invalid(format!("cannot evaluate {p}: {e}"));
    let one = |v: &str| literal(v, col.data_type(), &p.column);
    let first = || {
        p.values
            .first()
            .ok_or_else(|| HudiError::invalid(format!("filter {p} needs a value")))
    };
    Ok(match p.op {
        Op::Eq => cmp_with(col, Cmp::Eq, &one(first()?)?).map_err(err)?,
        Op::Ne => cmp_with(col, Cmp::Ne, &one(first()?)?).map_err(err)?,
        Op::Lt => cmp_with(col, Cmp::Lt, &one(first()?)?).map_err(err)?,
        Op::Le => cmp_with(col, Cmp::Le, &one(first()?)?).map_err(err)?,
        Op::Gt => cmp_with(col, Cmp::Gt, &one(first()?)?).map_err(err)?,
        Op::Ge => cmp_with(col, Cmp::Ge, &one(first()?)?).map_err(err)?,
        Op::In | Op::NotIn => {
            let mut acc = BooleanArray::from(vec![false; col.len()]);
            for v in &p.values {
                let m = cmp_with(col, Cmp::Eq, &one(v)?).map_err(err)?;
                acc = or_kleene(&acc, &m).map_err(err)?;
            }
            if p.op == Op::NotIn {
                not(&acc).map_err(err)?
            } else {
                acc
            }
        }
        Op::IsNull => arrow_arith::boolean::is_null(col).map_err(err)?,
        Op::IsNotNull => arrow_arith::boolean::is_not_null(col).map_err(err)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Decimal128Array, Int64Array};
    use arrow_schema::{Field, Schema};

    #[test]
    fn literals_parse_as_arrow_casts_them() {
        let opts = arrow_cast::CastOptions {
            safe: false,
            ..Default::default()
        };
        let types = [
            DataType::Int8,
            DataType::Int16,
            DataType::Int32,
            DataType::Int64,
            DataType::UInt8,
            DataType::UInt16,
            DataType::UInt32,
            DataType::UInt64,
            DataType::Float32,
            DataType::Float64,
            DataType::Date32,
            DataType::Date64,
            DataType::Utf8,
        ];
        let values = [
            "0",
            "-1",
            "+7",
            "127",
            "128",
            "-129",
            "255",
            "256",
            "65536",
            "4294967296",
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551616",
            " 5",
            "5 ",
            "1.5",
            "-0.0",
            "1e3",
            "NaN",
            "inf",
            "-Infinity",
            "0x10",
            "",
            "abc",
            "2024-06-11",
            "2024-6-1",
            "2024-06-11T10:00:00",
            "2024-13-01",
            "1970-01-01",
            "-1e-400",
        ];
        for target in &types {
            for value in values {
                let text = StringArray::from(vec![value]);
                let cast = arrow_cast::cast_with_options(&text, target, &opts);
                let plain = crate::cast::cast(&text, target, false);
                match (cast, plain) {
                    (Ok(c), Ok(p)) => assert_eq!(c.to_data(), p.to_data(), "{value:?} as {target}"),
                    (Err(c), Err(p)) => {
                        assert_eq!(c.to_string(), p.to_string(), "{value:?} as {target}")
                    }
                    (c, p) => panic!("{value:?} as {target}: cast {c:?}, plain {p:?}"),
                }
            }
        }
    }

    #[test]
    fn without_columns_never_narrows() {
        let parse = |t: &str| crate::expr::parse_filter(t).unwrap();
        let drop = |t: &str| {
            parse(t)
                .without_columns(&["region".into()])
                .map(|e| e.to_string())
        };
        assert_eq!(drop("region = eu and id > 3"), Some("id > 3".into()));
        assert_eq!(drop("region = eu"), None);
        // A disjunction with a dropped branch may match anything.
        assert_eq!(drop("region = eu or id > 3"), None);
        assert_eq!(
            drop("(id > 3 or id < 1) and region = eu"),
            Some(parse("id > 3 or id < 1").to_string())
        );
    }
    use std::sync::Arc;

    #[test]
    fn typed_comparisons() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, true),
            Field::new("d", DataType::Decimal128(10, 2), true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![Some(1), Some(10), None])),
                Arc::new(
                    Decimal128Array::from(vec![Some(125000), Some(50), Some(7)])
                        .with_precision_and_scale(10, 2)
                        .unwrap(),
                ),
            ],
        )
        .unwrap();
        let e = parse_filter("n >= 2").unwrap();
        assert_eq!(
            e.evaluate(&batch).unwrap(),
            BooleanArray::from(vec![false, true, false])
        );
        let e = parse_filter("d > 100.5").unwrap();
        assert_eq!(
            e.evaluate(&batch).unwrap(),
            BooleanArray::from(vec![true, false, false])
        );
        let e = parse_filter("n is null or d = 0.50").unwrap();
        assert_eq!(
            e.evaluate(&batch).unwrap(),
            BooleanArray::from(vec![false, true, true])
        );
        assert!(parse_filter("n = abc").unwrap().evaluate(&batch).is_err());
    }

    #[test]
    fn utc_timestamp_literals() {
        let t = DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into()));
        let lit = literal("2024-01-15T10:30:00Z", &t, "ts")
            .unwrap()
            .into_inner();
        assert_eq!(lit.data_type(), &t);
        let v = lit
            .as_any()
            .downcast_ref::<arrow_array::TimestampMicrosecondArray>()
            .unwrap()
            .value(0);
        assert_eq!(v, 1_705_314_600_000_000);
    }
}
