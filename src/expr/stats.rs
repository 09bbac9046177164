//! "Can any row here match?" against min / max / null-count statistics of many containers
//! at once (row groups, files, partitions). Unknown always means "keep".

use crate::compare::{compare as cmp_with, Cmp};
use arrow_arith::boolean::{and_kleene, not, or_kleene};
use arrow_array::cast::AsArray;
use arrow_array::types::Float64Type;
use arrow_array::{Array, ArrayRef, BooleanArray, Float64Array, UInt64Array};
use arrow_schema::DataType;

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

/// Per container, the share of its rows `expr` is expected to match, from where its
/// literals fall between each column's minimum and maximum, as if values were spread evenly
/// (1 where the statistics cannot say: strings, `!=`, a missing bound). An estimate for
/// sizing work, never for pruning: a conjunction takes its smallest part (its columns may
/// be correlated), a disjunction the sum of its parts.
pub fn match_share(expr: &Expr, source: &dyn StatsSource) -> Vec<f64> {
    let n = source.containers();
    share(expr, source).unwrap_or_else(|| vec![1.0; n])
}

fn share(expr: &Expr, source: &dyn StatsSource) -> Option<Vec<f64>> {
    match expr {
        Expr::Pred(p) => pred_share(p, source),
        Expr::And(parts) => parts
            .iter()
            .filter_map(|e| share(e, source))
            .reduce(|a, b| a.iter().zip(b).map(|(a, b)| a.min(b)).collect()),
        Expr::Or(parts) => parts.iter().map(|e| share(e, source)).reduce(|a, b| {
            let (a, b) = (a?, b?);
            Some(a.iter().zip(b).map(|(a, b)| (a + b).min(1.0)).collect())
        })?,
    }
}

fn pred_share(p: &Predicate, source: &dyn StatsSource) -> Option<Vec<f64>> {
    let stats = source.column(&p.column)?;
    let ty = stats.min.data_type().clone();
    // Values one apart, so that `=` matches one value of the range.
    let integral = ty.is_integer() || ty == DataType::Date32;
    let (min, max) = (as_f64(&stats.min)?, as_f64(&stats.max)?);
    let value = |i: usize| -> Option<f64> {
        let v = literal(p.values.get(i)?, &ty, &p.column).ok()?.into_inner();
        let v = as_f64(&v)?;
        v.is_valid(0).then(|| v.value(0))
    };
    // The share of container i whose values `inside(lo, hi)` of [lo, hi] match.
    let each = |inside: &dyn Fn(f64, f64) -> f64| -> Vec<f64> {
        (0..min.len())
            .map(|i| match (min.is_valid(i), max.is_valid(i)) {
                (true, true) => {
                    let share = inside(min.value(i), max.value(i));
                    // NaN bounds say nothing.
                    if share.is_nan() {
                        1.0
                    } else {
                        share.clamp(0.0, 1.0)
                    }
                }
                _ => 1.0,
            })
            .collect()
    };
    let equal = |v: f64| {
        move |lo: f64, hi: f64| {
            if v < lo || v > hi {
                0.0
            } else if integral {
                1.0 / (hi - lo + 1.0)
            } else {
                1.0
            }
        }
    };
    // Of a range that is one value, all or nothing.
    let above = |v: f64, lo: f64, hi: f64| match hi > lo {
        true => (hi - v) / (hi - lo),
        false if v <= hi => 1.0,
        false => 0.0,
    };
    let below = |v: f64, lo: f64, hi: f64| match hi > lo {
        true => (v - lo) / (hi - lo),
        false if v >= lo => 1.0,
        false => 0.0,
    };
    Some(match p.op {
        Op::Eq => each(&equal(value(0)?)),
        Op::In => {
            let values: Vec<f64> = (0..p.values.len()).map(value).collect::<Option<_>>()?;
            each(&|lo, hi| values.iter().map(|v| equal(*v)(lo, hi)).sum())
        }
        Op::Gt | Op::Ge => {
            let v = value(0)?;
            each(&|lo, hi| above(v, lo, hi))
        }
        Op::Lt | Op::Le => {
            let v = value(0)?;
            each(&|lo, hi| below(v, lo, hi))
        }
        Op::Ne | Op::NotIn | Op::IsNull | Op::IsNotNull => return None,
    })
}

/// Numbers, dates and timestamps as `f64` (a timestamp in its own unit); `None` otherwise.
fn as_f64(a: &ArrayRef) -> Option<Float64Array> {
    if let Some(f) = plain_f64(a) {
        return Some(f);
    }
    // Decimals, rounded once as arrow-cast rounds them.
    let f = crate::cast::cast(a.as_ref(), &DataType::Float64, true).ok()?;
    Some(f.as_primitive::<Float64Type>().clone())
}

/// [`as_f64`] for the integer, float, date and timestamp columns, as arrow-cast's casts
/// to `Int64` and `Float64` give it, in one step per type.
fn plain_f64(a: &ArrayRef) -> Option<Float64Array> {
    use arrow_array::types::*;
    fn each<T: arrow_array::ArrowPrimitiveType>(
        a: &ArrayRef,
        f: impl Fn(T::Native) -> f64,
    ) -> Float64Array {
        a.as_primitive::<T>().unary(f)
    }
    use arrow_schema::TimeUnit::*;
    Some(match a.data_type() {
        DataType::Int8 => each::<Int8Type>(a, f64::from),
        DataType::Int16 => each::<Int16Type>(a, f64::from),
        DataType::Int32 => each::<Int32Type>(a, f64::from),
        DataType::Int64 => each::<Int64Type>(a, |v| v as f64),
        DataType::UInt8 => each::<UInt8Type>(a, f64::from),
        DataType::UInt16 => each::<UInt16Type>(a, f64::from),
        DataType::UInt32 => each::<UInt32Type>(a, f64::from),
        DataType::UInt64 => each::<UInt64Type>(a, |v| v as f64),
        DataType::Float32 => each::<Float32Type>(a, f64::from),
        DataType::Float64 => a.as_primitive::<Float64Type>().clone(),
        DataType::Date32 => each::<Date32Type>(a, f64::from),
        DataType::Date64 => each::<Date64Type>(a, |v| v as f64),
        DataType::Timestamp(Second, _) => each::<TimestampSecondType>(a, |v| v as f64),
        DataType::Timestamp(Millisecond, _) => each::<TimestampMillisecondType>(a, |v| v as f64),
        DataType::Timestamp(Microsecond, _) => each::<TimestampMicrosecondType>(a, |v| v as f64),
        DataType::Timestamp(Nanosecond, _) => each::<TimestampNanosecondType>(a, |v| v as f64),
        DataType::Time32(Second) => each::<Time32SecondType>(a, f64::from),
        DataType::Time32(Millisecond) => each::<Time32MillisecondType>(a, f64::from),
        DataType::Time64(Microsecond) => each::<Time64MicrosecondType>(a, |v| v as f64),
        DataType::Time64(Nanosecond) => each::<Time64NanosecondType>(a, |v| v as f64),
        _ => return None,
    })
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
            &cmp_with(&stats.min, Cmp::Le, v).ok()?,
            &cmp_with(&stats.max, Cmp::Ge, v).ok()?,
        )
        .ok()
    };
    match p.op {
        Op::Eq => in_range(&value(0)?),
        Op::Ne => {
            let v = value(0)?;
            let all_equal = and_kleene(
                &cmp_with(&stats.min, Cmp::Eq, &v).ok()?,
                &cmp_with(&stats.max, Cmp::Eq, &v).ok()?,
            )
            .ok()?;
            not(&all_equal).ok()
        }
        Op::Lt => cmp_with(&stats.min, Cmp::Lt, &value(0)?).ok(),
        Op::Le => cmp_with(&stats.min, Cmp::Le, &value(0)?).ok(),
        Op::Gt => cmp_with(&stats.max, Cmp::Gt, &value(0)?).ok(),
        Op::Ge => cmp_with(&stats.max, Cmp::Ge, &value(0)?).ok(),
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

    #[test]
    fn plain_f64_is_what_the_casts_give() {
        use arrow_array::*;
        let arrays: Vec<ArrayRef> = vec![
            Arc::new(Int8Array::from(vec![Some(i8::MIN), None, Some(i8::MAX)])),
            Arc::new(Int16Array::from(vec![i16::MIN, 0, i16::MAX])),
            Arc::new(Int32Array::from(vec![Some(i32::MIN), None, Some(i32::MAX)])),
            Arc::new(Int64Array::from(vec![i64::MIN, (1 << 53) + 1, i64::MAX])),
            Arc::new(UInt8Array::from(vec![0, u8::MAX])),
            Arc::new(UInt16Array::from(vec![0, u16::MAX])),
            Arc::new(UInt32Array::from(vec![0, u32::MAX])),
            Arc::new(UInt64Array::from(vec![0, u64::MAX])),
            Arc::new(Float32Array::from(vec![
                Some(f32::MIN),
                None,
                Some(f32::NAN),
                Some(0.1),
            ])),
            Arc::new(Float64Array::from(vec![Some(f64::MAX), None, Some(-0.0)])),
            Arc::new(Date32Array::from(vec![Some(-1), None, Some(19_885)])),
            Arc::new(Date64Array::from(vec![-86_400_000, 1_718_064_000_000])),
            Arc::new(TimestampSecondArray::from(vec![Some(-1), None, Some(1)])),
            Arc::new(TimestampMillisecondArray::from(vec![1_718_064_000_000])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![1_718_064_000_000_000]).with_timezone("UTC"),
            ),
            Arc::new(TimestampNanosecondArray::from(vec![i64::MAX, i64::MIN])),
            Arc::new(Time32MillisecondArray::from(vec![Some(1_000), None])),
            Arc::new(Time64MicrosecondArray::from(vec![86_399_999_999])),
        ];
        for a in &arrays {
            let numeric = if a.data_type().is_temporal() {
                arrow_cast::cast(a, &DataType::Int64).unwrap()
            } else {
                a.clone()
            };
            let cast = arrow_cast::cast(&numeric, &DataType::Float64).unwrap();
            let plain = plain_f64(a).expect("a plain type");
            let (c, p) = (cast.as_primitive::<Float64Type>(), &plain);
            assert_eq!(c.nulls(), p.nulls(), "{}", a.data_type());
            let bits =
                |x: &Float64Array| x.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(c), bits(p), "{}", a.data_type());
        }
        let decimal: ArrayRef = Arc::new(
            Decimal128Array::from(vec![150])
                .with_precision_and_scale(5, 2)
                .unwrap(),
        );
        assert!(plain_f64(&decimal).is_none());
        assert_eq!(as_f64(&decimal).unwrap().value(0), 1.5);
    }

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

    #[test]
    fn estimates_the_share_of_rows_in_range() {
        let share = |f: &str| {
            match_share(&parse_filter(f).unwrap(), &Two)
                .into_iter()
                .map(|v| (v * 1000.0).round() / 1000.0)
                .collect::<Vec<_>>()
        };
        assert_eq!(share("x > 7"), vec![0.222, 1.0, 1.0]);
        assert_eq!(share("x <= 12"), vec![1.0, 0.222, 1.0]);
        assert_eq!(
            share("x = 12"),
            vec![0.0, 0.1, 1.0],
            "integers: one value of ten"
        );
        assert_eq!(share("x in (1, 2)"), vec![0.2, 0.0, 1.0]);
        assert_eq!(share("x > 1 and x < 3"), vec![0.333, 0.0, 1.0]);
        assert_eq!(share("x > 7 or x < 1"), vec![0.333, 1.0, 1.0]);
        for unknown in ["y = 1", "x != 3", "x is null", "x > 7 or y = 1"] {
            assert_eq!(share(unknown), vec![1.0; 3], "{unknown}");
        }
        assert_eq!(share("x > 7 and y = 1"), vec![0.222, 1.0, 1.0]);
    }

    /// Dates, timestamps and decimals are placed between their bounds too.
    #[test]
    fn estimates_temporal_and_decimal_shares() {
        use arrow_array::{Date32Array, Decimal128Array, TimestampMicrosecondArray};
        struct Typed;
        impl StatsSource for Typed {
            fn containers(&self) -> usize {
                1
            }
            fn column(&self, name: &str) -> Option<ColumnStats> {
                let (min, max): (ArrayRef, ArrayRef) = match name {
                    // 2024-01-01 ..= 2024-01-10
                    "d" => (
                        Arc::new(Date32Array::from(vec![19723])),
                        Arc::new(Date32Array::from(vec![19732])),
                    ),
                    // 2024-01-01T00:00 .. 2024-01-01T10:00
                    "t" => (
                        Arc::new(
                            TimestampMicrosecondArray::from(vec![1_704_067_200_000_000])
                                .with_timezone("UTC"),
                        ),
                        Arc::new(
                            TimestampMicrosecondArray::from(vec![1_704_103_200_000_000])
                                .with_timezone("UTC"),
                        ),
                    ),
                    "nan" => (
                        Arc::new(arrow_array::Float64Array::from(vec![f64::NAN])),
                        Arc::new(arrow_array::Float64Array::from(vec![1.0])),
                    ),
                    // 0.00 .. 100.00
                    "m" => (
                        Arc::new(
                            Decimal128Array::from(vec![0])
                                .with_precision_and_scale(10, 2)
                                .ok()?,
                        ),
                        Arc::new(
                            Decimal128Array::from(vec![10000])
                                .with_precision_and_scale(10, 2)
                                .ok()?,
                        ),
                    ),
                    _ => return None,
                };
                Some(ColumnStats {
                    min,
                    max,
                    null_count: None,
                    row_count: None,
                })
            }
        }
        let share = |f: &str| match_share(&parse_filter(f).unwrap(), &Typed)[0];
        assert_eq!(share("nan > 0.5"), 1.0, "a NaN bound says nothing");
        assert!((share("d = '2024-01-05'") - 0.1).abs() < 1e-9);
        assert!((share("t >= '2024-01-01T09:00:00Z'") - 0.1).abs() < 1e-9);
        assert!((share("m > 99.9") - 0.001).abs() < 1e-9);
    }
}
