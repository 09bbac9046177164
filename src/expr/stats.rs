//! "Can any row here match?" against min / max / null-count statistics of many containers
//! at once (row groups, files, partitions). Unknown always means "keep".

use arrow_arith::boolean::{and_kleene, not, or_kleene};
use arrow_array::{Array, ArrayRef, BooleanArray, UInt64Array};
use arrow_ord::cmp;

use super::{literal, Expr, Op, Predicate};

/// Statistics of one column across `n` containers; each array has `n` entries.
#[derive(Debug, Clone)]
pub struct ColumnStats {
    pub min: ArrayRef,
    pub max: ArrayRef,
    pub null_count: Option<UInt64Array>,
    pub row_count: Option<UInt64Array>,
}

pub trait StatsSource {
    fn containers(&self) -> usize;
    fn column(&self, name: &str) -> Option<ColumnStats>;
}

/// One flag per container: false only when the statistics prove no row can match.
pub fn may_match(expr: &Expr, source: &dyn StatsSource) -> Vec<bool> {
    let n = source.containers();
    match eval(expr, source) {
        Some(mask) => (0..n).map(|i| mask.is_null(i) || mask.value(i)).collect(),
        None => vec![true; n],
    }
}

fn eval(expr: &Expr, source: &dyn StatsSource) -> Option<BooleanArray> {
    match expr {
        Expr::Pred(p) => eval_pred(p, source),
        Expr::And(parts) => parts
            .iter()
            .filter_map(|e| eval(e, source))
            .reduce(|a, b| and_kleene(&a, &b).unwrap_or(a)),
        Expr::Or(parts) => {
            let mut acc: Option<BooleanArray> = None;
            for part in parts {
                let v = eval(part, source)?;
                acc = Some(match acc {
                    Some(a) => or_kleene(&a, &v).ok()?,
                    None => v,
                });
            }
            acc
        }
    }
}

fn eval_pred(p: &Predicate, source: &dyn StatsSource) -> Option<BooleanArray> {
    let stats = source.column(&p.column)?;
    let value = |i: usize| -> Option<_> {
        literal(p.values.get(i)?, stats.min.data_type(), &p.column).ok()
    };
    let in_range = |v: &arrow_array::Scalar<ArrayRef>| -> Option<BooleanArray> {
        and_kleene(
            &cmp::lt_eq(&stats.min, v).ok()?,
            &cmp::gt_eq(&stats.max, v).ok()?,
        )
        .ok()
    };
    match p.op {
        Op::Eq => in_range(&value(0)?),
        Op::Ne => {
            let v = value(0)?;
            let all_equal = and_kleene(
                &cmp::eq(&stats.min, &v).ok()?,
                &cmp::eq(&stats.max, &v).ok()?,
            )
            .ok()?;
            not(&all_equal).ok()
        }
        Op::Lt => cmp::lt(&stats.min, &value(0)?).ok(),
        Op::Le => cmp::lt_eq(&stats.min, &value(0)?).ok(),
        Op::Gt => cmp::gt(&stats.max, &value(0)?).ok(),
        Op::Ge => cmp::gt_eq(&stats.max, &value(0)?).ok(),
        Op::In => {
            let mut acc: Option<BooleanArray> = None;
            for i in 0..p.values.len() {
                let m = in_range(&value(i)?)?;
                acc = Some(match acc {
                    Some(a) => or_kleene(&a, &m).ok()?,
                    None => m,
                });
            }
            acc
        }
        Op::NotIn => None,
        Op::IsNull => Some(stats.null_count?.iter().map(|c| c.map(|c| c > 0)).collect()),
        Op::IsNotNull => {
            let (nulls, rows) = (stats.null_count?, stats.row_count?);
            Some(
                nulls
                    .iter()
                    .zip(rows.iter())
                    .map(|(n, r)| Some(n? < r?))
                    .collect(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse_filter;
    use arrow_array::Int64Array;
    use std::sync::Arc;

    struct Two;
    impl StatsSource for Two {
        fn containers(&self) -> usize {
            3
        }
        fn column(&self, name: &str) -> Option<ColumnStats> {
            (name == "x").then(|| ColumnStats {
                min: Arc::new(Int64Array::from(vec![Some(0), Some(10), None])),
                max: Arc::new(Int64Array::from(vec![Some(9), Some(19), None])),
                null_count: Some(UInt64Array::from(vec![0, 2, 5])),
                row_count: Some(UInt64Array::from(vec![10, 10, 5])),
            })
        }
    }

    #[test]
    fn prunes_by_range() {
        let m = |f: &str| may_match(&parse_filter(f).unwrap(), &Two);
        assert_eq!(m("x = 12"), vec![false, true, true]);
        assert_eq!(m("x > 9"), vec![false, true, true]);
        assert_eq!(m("x in (1, 30)"), vec![true, false, true]);
        assert_eq!(m("x is null"), vec![false, true, true]);
        assert_eq!(m("x is not null"), vec![true, true, false]);
        assert_eq!(m("y = 1 or x = 12"), vec![true, true, true]);
        assert_eq!(m("y = 1 and x = 12"), vec![false, true, true]);
    }
}
