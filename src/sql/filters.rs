//! DataFusion filters as this engine's: what `read::plan` prunes partitions, files and row
//! groups by, and what the scan then applies to every row. A filter the engine expresses
//! exactly is `Exact` (the scan returns only matching rows, so DataFusion drops its own
//! filter); a prefix `LIKE` becomes a range that prunes but admits more rows (`Inexact`,
//! DataFusion filters again); anything else is `Unsupported` and stays with DataFusion.
//!
//! A literal is taken only when its type is the column's (DataFusion's type coercion has run
//! by then: `id = 7` on a BIGINT column carries an Int64), so the engine's typed comparison
//! is the one DataFusion would make.

use arrow_schema::{DataType, Schema};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Between, BinaryExpr, Expr as DfExpr, Like, Operator};

use crate::expr::{Expr, Op, Predicate};

/// What the engine makes of one DataFusion filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Pushed {
    /// The engine returns exactly the rows matching it.
    Exact(Expr),
    /// The engine prunes by this wider filter; DataFusion must filter again.
    Inexact(Expr),
    Unsupported,
}

pub fn translate(filter: &DfExpr, schema: &Schema) -> Pushed {
    if let Some(e) = exact(filter, schema) {
        return Pushed::Exact(e);
    }
    match filter {
        DfExpr::Like(like) => {
            prefix_range(like, schema).map_or(Pushed::Unsupported, Pushed::Inexact)
        }
        _ => Pushed::Unsupported,
    }
}

/// The filter as an engine expression with the same rows, if it has one.
fn exact(filter: &DfExpr, schema: &Schema) -> Option<Expr> {
    match filter {
        DfExpr::BinaryExpr(BinaryExpr { left, op, right }) => match op {
            Operator::And | Operator::Or => {
                let parts = vec![exact(left, schema)?, exact(right, schema)?];
                Some(match op {
                    Operator::And => Expr::And(parts),
                    _ => Expr::Or(parts),
                })
            }
            _ => comparison(left, *op, right, schema),
        },
        DfExpr::IsNull(e) => Some(pred(column(e, schema)?.0, Op::IsNull, vec![])),
        DfExpr::IsNotNull(e) => Some(pred(column(e, schema)?.0, Op::IsNotNull, vec![])),
        DfExpr::InList(list) => {
            let (name, ty) = column(&list.expr, schema)?;
            let values = (list.list.iter())
                .map(|v| literal(v, ty))
                .collect::<Option<Vec<_>>>()?;
            let op = if list.negated { Op::NotIn } else { Op::In };
            Some(pred(name, op, values))
        }
        DfExpr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => {
            let (name, ty) = column(expr, schema)?;
            let (low, high) = (literal(low, ty)?, literal(high, ty)?);
            Some(match negated {
                false => Expr::And(vec![
                    pred(name, Op::Ge, vec![low]),
                    pred(name, Op::Le, vec![high]),
                ]),
                true => Expr::Or(vec![
                    pred(name, Op::Lt, vec![low]),
                    pred(name, Op::Gt, vec![high]),
                ]),
            })
        }
        _ => None,
    }
}

/// `column op literal`, either way round.
fn comparison(left: &DfExpr, op: Operator, right: &DfExpr, schema: &Schema) -> Option<Expr> {
    let op = match op {
        Operator::Eq => Op::Eq,
        Operator::NotEq => Op::Ne,
        Operator::Lt => Op::Lt,
        Operator::LtEq => Op::Le,
        Operator::Gt => Op::Gt,
        Operator::GtEq => Op::Ge,
        _ => return None,
    };
    if let Some((name, ty)) = column(left, schema) {
        return Some(pred(name, op, vec![literal(right, ty)?]));
    }
    let (name, ty) = column(right, schema)?;
    let flipped = match op {
        Op::Lt => Op::Gt,
        Op::Le => Op::Ge,
        Op::Gt => Op::Lt,
        Op::Ge => Op::Le,
        other => other,
    };
    Some(pred(name, flipped, vec![literal(left, ty)?]))
}

/// `column LIKE 'prefix%'` as `column >= 'prefix' AND column < 'prefiy'`.
fn prefix_range(like: &Like, schema: &Schema) -> Option<Expr> {
    if like.negated || like.case_insensitive || like.escape_char.is_some() {
        return None;
    }
    let (name, ty) = column(&like.expr, schema)?;
    let DfExpr::Literal(ScalarValue::Utf8(Some(pattern)), _) = like.pattern.as_ref() else {
        return None;
    };
    let prefix = pattern.strip_suffix('%')?;
    if !matches!(ty, DataType::Utf8) || prefix.is_empty() || prefix.contains(['%', '_', '\\']) {
        return None;
    }
    let mut upper: Vec<char> = prefix.chars().collect();
    let last = upper.pop()?;
    upper.push(char::from_u32(last as u32 + 1)?);
    Some(Expr::And(vec![
        pred(name, Op::Ge, vec![prefix.to_string()]),
        pred(name, Op::Lt, vec![upper.into_iter().collect()]),
    ]))
}

fn pred(column: &str, op: Op, values: Vec<String>) -> Expr {
    Expr::Pred(Predicate {
        column: column.to_string(),
        op,
        values,
    })
}

/// A column of the table (unqualified or qualified by the table), with its type.
fn column<'a>(e: &DfExpr, schema: &'a Schema) -> Option<(&'a str, &'a DataType)> {
    let DfExpr::Column(c) = e else { return None };
    let field = schema.field_with_name(&c.name).ok()?;
    Some((field.name().as_str(), field.data_type()))
}

/// A literal of exactly the column's type, as the engine's text form (which it casts back
/// to that type without loss).
fn literal(e: &DfExpr, ty: &DataType) -> Option<String> {
    let DfExpr::Literal(value, _) = e else {
        return None;
    };
    Some(match (value, ty) {
        (ScalarValue::Boolean(Some(v)), DataType::Boolean) => v.to_string(),
        (ScalarValue::Int8(Some(v)), DataType::Int8) => v.to_string(),
        (ScalarValue::Int16(Some(v)), DataType::Int16) => v.to_string(),
        (ScalarValue::Int32(Some(v)), DataType::Int32) => v.to_string(),
        (ScalarValue::Int64(Some(v)), DataType::Int64) => v.to_string(),
        (ScalarValue::UInt8(Some(v)), DataType::UInt8) => v.to_string(),
        (ScalarValue::UInt16(Some(v)), DataType::UInt16) => v.to_string(),
        (ScalarValue::UInt32(Some(v)), DataType::UInt32) => v.to_string(),
        (ScalarValue::UInt64(Some(v)), DataType::UInt64) => v.to_string(),
        // Rust prints the shortest text that parses back to the same float.
        (ScalarValue::Float32(Some(v)), DataType::Float32) if v.is_finite() => v.to_string(),
        (ScalarValue::Float64(Some(v)), DataType::Float64) if v.is_finite() => v.to_string(),
        (ScalarValue::Utf8(Some(v)), DataType::Utf8) => v.clone(),
        (ScalarValue::LargeUtf8(Some(v)), DataType::LargeUtf8) => v.clone(),
        (ScalarValue::Decimal128(Some(v), p, s), DataType::Decimal128(tp, ts))
            if p == tp && s == ts =>
        {
            decimal_text(*v, *s)?
        }
        (ScalarValue::Date32(Some(days)), DataType::Date32) => {
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
            epoch
                .checked_add_signed(chrono::Duration::days(i64::from(*days)))?
                .format("%Y-%m-%d")
                .to_string()
        }
        _ => return None,
    })
}

fn decimal_text(unscaled: i128, scale: i8) -> Option<String> {
    if scale <= 0 {
        return None;
    }
    let digits = unscaled.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    Some(format!("{sign}{int}.{frac}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::Field;
    use datafusion::logical_expr::{col, lit};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("region", DataType::Utf8, true),
            Field::new("amount", DataType::Decimal128(12, 2), true),
            Field::new("score", DataType::Float64, true),
        ])
    }

    fn shown(p: Pushed) -> String {
        match p {
            Pushed::Exact(e) => format!("exact {e}"),
            Pushed::Inexact(e) => format!("inexact {e}"),
            Pushed::Unsupported => "unsupported".into(),
        }
    }

    #[test]
    fn filters_translate_where_the_engine_is_exact() {
        let s = schema();
        let t = |e: DfExpr| shown(translate(&e, &s));
        assert_eq!(t(col("id").eq(lit(7i64))), "exact id = 7");
        assert_eq!(t(lit(7i64).lt(col("id"))), "exact id > 7");
        assert_eq!(
            t(col("region").eq(lit("us")).or(col("id").gt_eq(lit(3i64)))),
            "exact (region = us) or (id >= 3)"
        );
        assert_eq!(
            t(col("id").between(lit(1i64), lit(5i64))),
            "exact (id >= 1) and (id <= 5)"
        );
        assert_eq!(
            t(col("id").in_list(vec![lit(1i64), lit(2i64)], true)),
            "exact id not in (1, 2)"
        );
        assert_eq!(t(col("region").is_null()), "exact region is null");
        let amount = DfExpr::Literal(ScalarValue::Decimal128(Some(-5), 12, 2), None);
        assert_eq!(t(col("amount").gt(amount)), "exact amount > -0.05");
        assert_eq!(t(col("score").lt(lit(0.1f64))), "exact score < 0.1");
        assert_eq!(
            t(col("region").like(lit("us-e%"))),
            "inexact (region >= us-e) and (region < us-f)"
        );
        // Another type than the column's, a function, an unknown column: DataFusion's.
        assert_eq!(t(col("id").eq(lit(7i32))), "unsupported");
        assert_eq!(t(col("region").like(lit("%us"))), "unsupported");
        assert_eq!(t(col("nope").eq(lit(1i64))), "unsupported");
        assert_eq!(
            t(col("region")
                .eq(lit("us"))
                .or(col("region").like(lit("e%")))),
            "unsupported"
        );
    }
}
