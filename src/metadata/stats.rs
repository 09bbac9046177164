//! Metadata-table column statistics (`column_stats` per file, `partition_stats` per
//! partition) as the Arrow arrays [`crate::expr::stats::may_match`] evaluates: each bound is
//! converted to the type of the table column, so literals compare as typed values (decimals
//! by value, dates, timestamps in the column's unit).
//!
//! A bound that does not fit the column (a string for a long column, a decimal of another
//! scale that cannot be rescaled, …) makes that container's statistics unknown: unknown
//! never prunes. Bounds that must be rounded are widened (minimums down, maximums up).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::types::{
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    new_null_array, Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array,
    Float64Array, Int64Array, PrimitiveArray, StringArray, Time64MicrosecondArray, UInt64Array,
};
use arrow_schema::{DataType, Schema, TimeUnit};

use super::records::ColumnStats as MdtStats;
use crate::expr::stats::{ColumnStats, StatsSource};
use crate::value::Value;

/// Hudi `ValueType` ordinal of `timestamp-millis` bounds stored as plain longs (V2).
const TIMESTAMP_MILLIS: i32 = 15;

/// Statistics of `containers` files or partitions for some columns.
#[derive(Debug, Clone)]
pub struct StatsBatch {
    containers: usize,
    columns: HashMap<String, ColumnStats>,
    /// Containers whose statistics say they hold no row at all (`valueCount` 0, e.g. a
    /// delete-only log file): nothing in them can match.
    pub empty: Vec<bool>,
    /// Containers missing a usable record for some column (none, a tombstone, or bounds
    /// that do not fit the column).
    pub unknown: Vec<bool>,
    /// Bounds that could not be used, for plan notes.
    pub problems: Vec<String>,
}

impl StatsSource for StatsBatch {
    fn containers(&self) -> usize {
        self.containers
    }

    fn column(&self, name: &str) -> Option<ColumnStats> {
        self.columns.get(name).cloned()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Round {
    Down,
    Up,
}

impl StatsBatch {
    /// `stats(i, column)` is the record of container `i` for `column`, if any. Columns not in
    /// `schema` are left out (unknown).
    pub fn build<'a>(
        schema: &Schema,
        columns: &[&str],
        containers: usize,
        stats: impl Fn(usize, &str) -> Option<&'a MdtStats>,
    ) -> StatsBatch {
        let mut batch = StatsBatch {
            containers,
            columns: HashMap::new(),
            empty: vec![false; containers],
            unknown: vec![false; containers],
            problems: Vec::new(),
        };
        for column in columns {
            let Ok(field) = schema.field_with_name(column) else {
                continue;
            };
            let records: Vec<Option<&MdtStats>> = (0..containers)
                .map(|i| stats(i, column).filter(|s| !s.is_deleted))
                .collect();
            for (i, r) in records.iter().enumerate() {
                batch.empty[i] |= r.is_some_and(|s| s.value_count == Some(0));
                batch.unknown[i] |= r.is_none();
            }
            let converted = column_stats(
                &records,
                field.data_type(),
                &mut batch.unknown,
                &mut batch.problems,
            );
            batch.columns.insert(column.to_string(), converted);
        }
        batch
    }

    /// Without null counts: `IS NULL` then never prunes. For partitions: Hudi widens a
    /// partition's record with the files each commit writes, so a column added to the schema
    /// later has nulls in the partition's older files that no record counts.
    pub fn without_null_counts(mut self) -> StatsBatch {
        for stats in self.columns.values_mut() {
            stats.null_count = None;
        }
        self
    }
}

fn column_stats(
    records: &[Option<&MdtStats>],
    target: &DataType,
    unknown: &mut [bool],
    problems: &mut Vec<String>,
) -> ColumnStats {
    let mut mins = Vec::with_capacity(records.len());
    let mut maxs = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let (min, max) = match r {
            Some(s) => match bounds(s, target) {
                Ok(b) => b,
                Err(why) => {
                    unknown[i] = true;
                    problems.push(format!(
                        "column_stats of {} for column {}: {why}; statistics ignored",
                        s.file_name, s.column_name
                    ));
                    (None, None)
                }
            },
            None => (None, None),
        };
        mins.push(min);
        maxs.push(max);
    }
    let counts = |f: fn(&MdtStats) -> Option<i64>| -> UInt64Array {
        records
            .iter()
            .map(|r| r.and_then(f).and_then(|n| u64::try_from(n).ok()))
            .collect()
    };
    ColumnStats {
        min: concat(&mins, target),
        max: concat(&maxs, target),
        null_count: Some(counts(|s| s.null_count)),
        row_count: Some(counts(|s| s.value_count)),
    }
}

type Bounds = (Option<ArrayRef>, Option<ArrayRef>);

/// Min and max of one record as one-element arrays of `target` (`None` = no bound).
fn bounds(s: &MdtStats, target: &DataType) -> Result<Bounds, String> {
    let ordinal = s.value_type.as_ref().map(|(o, _)| *o);
    let one = |v: &Option<Value>, round| {
        v.as_ref()
            .map(|v| bound(v, ordinal, target, round))
            .transpose()
    };
    Ok((one(&s.min, Round::Down)?, one(&s.max, Round::Up)?))
}

/// A null bound is unknown, so concatenation fills gaps with nulls of the column's type.
fn concat(values: &[Option<ArrayRef>], target: &DataType) -> ArrayRef {
    let null = new_null_array(target, 1);
    let parts: Vec<&dyn Array> = values
        .iter()
        .map(|v| v.as_deref().unwrap_or(null.as_ref()))
        .collect();
    if parts.is_empty() {
        return new_null_array(target, 0);
    }
    arrow_select::concat::concat(&parts).unwrap_or_else(|_| new_null_array(target, values.len()))
}

/// One bound as a one-element array of `target`; values that overflow the column's type
/// become null (unknown) through a safe cast.
fn bound(
    v: &Value,
    ordinal: Option<i32>,
    target: &DataType,
    round: Round,
) -> Result<ArrayRef, String> {
    use DataType as D;
    use Value as S;
    let array: ArrayRef = match (target, v) {
        (D::Utf8 | D::LargeUtf8 | D::Utf8View, S::String(s)) => {
            Arc::new(StringArray::from(vec![s.as_str()]))
        }
        (D::Boolean, S::Boolean(b)) => Arc::new(BooleanArray::from(vec![*b])),
        (t, S::Int(_) | S::Long(_)) if t.is_integer() => {
            Arc::new(Int64Array::from(vec![v.as_i64()]))
        }
        (D::Float32 | D::Float64, S::Float(_) | S::Double(_) | S::Int(_) | S::Long(_)) => {
            Arc::new(Float64Array::from(vec![v.as_f64()]))
        }
        (
            D::Decimal128(_, scale),
            S::Decimal {
                unscaled,
                scale: from,
                ..
            },
        ) => {
            let value = rescale(*unscaled, *from, *scale, round)?;
            Arc::new(
                Decimal128Array::from(vec![value])
                    .with_precision_and_scale(38, *scale)
                    .map_err(|e| e.to_string())?,
            )
        }
        (D::Date32, S::Date(d) | S::LocalDate(d) | S::Int(d)) => {
            Arc::new(Date32Array::from(vec![*d]))
        }
        (D::Timestamp(unit, tz), S::TimestampMicros(us)) => {
            timestamp(*us, TimeUnit::Microsecond, *unit, tz, round)?
        }
        (D::Timestamp(unit, tz), S::Long(ms)) if ordinal == Some(TIMESTAMP_MILLIS) => {
            timestamp(*ms, TimeUnit::Millisecond, *unit, tz, round)?
        }
        (D::Time64(TimeUnit::Microsecond), S::TimeMicros(t)) => {
            Arc::new(Time64MicrosecondArray::from(vec![*t]))
        }
        (D::Binary | D::LargeBinary, S::Bytes(b)) => {
            Arc::new(BinaryArray::from(vec![b.as_slice()]))
        }
        _ => {
            return Err(format!(
                "a {} bound does not fit a {target} column",
                kind(v)
            ))
        }
    };
    crate::cast::cast(array.as_ref(), target, true).map_err(|e| e.to_string())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Boolean(_) => "boolean",
        Value::Int(_) => "int",
        Value::Long(_) => "long",
        Value::Float(_) => "float",
        Value::Double(_) => "double",
        Value::Bytes(_) => "bytes",
        Value::String(_) => "string",
        Value::Date(_) | Value::LocalDate(_) => "date",
        Value::Decimal { .. } => "decimal",
        Value::TimeMicros(_) => "time",
        Value::TimestampMicros(_) => "timestamp",
        Value::Array(_) => "array",
        Value::Null => "null",
    }
}

/// `v` with `from` fraction digits as a value with `to`, rounded outward when digits drop.
fn rescale(v: i128, from: i8, to: i8, round: Round) -> Result<i128, String> {
    let overflow = || format!("decimal {v} (scale {from}) does not fit scale {to}");
    let p = 10i128
        .checked_pow(from.abs_diff(to).into())
        .ok_or_else(overflow)?;
    if to >= from {
        return v.checked_mul(p).ok_or_else(overflow);
    }
    Ok(match round {
        Round::Down => v.div_euclid(p),
        Round::Up => -(-v).div_euclid(p),
    })
}

/// An instant in `from` units as a one-element timestamp array of `to` units.
fn timestamp(
    v: i64,
    from: TimeUnit,
    to: TimeUnit,
    tz: &Option<Arc<str>>,
    round: Round,
) -> Result<ArrayRef, String> {
    let (f, t) = (
        crate::cast::ticks_per_second(from),
        crate::cast::ticks_per_second(to),
    );
    let value = if t >= f {
        v.checked_mul(t / f).ok_or("timestamp out of range")?
    } else {
        let p = f / t;
        match round {
            Round::Down => v.div_euclid(p),
            Round::Up => v.div_euclid(p) + i64::from(v.rem_euclid(p) != 0),
        }
    };
    fn array<T: arrow_array::types::ArrowTimestampType>(v: i64, tz: &Option<Arc<str>>) -> ArrayRef {
        Arc::new(PrimitiveArray::<T>::from_iter_values([v]).with_timezone_opt(tz.clone()))
    }
    Ok(match to {
        TimeUnit::Second => array::<TimestampSecondType>(value, tz),
        TimeUnit::Millisecond => array::<TimestampMillisecondType>(value, tz),
        TimeUnit::Microsecond => array::<TimestampMicrosecondType>(value, tz),
        TimeUnit::Nanosecond => array::<TimestampNanosecondType>(value, tz),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse_filter;
    use crate::expr::stats::may_match;
    use arrow_schema::Field;

    #[test]
    fn narrowed_bounds_are_what_a_safe_cast_gives() {
        let safe = arrow_cast::CastOptions {
            safe: true,
            ..Default::default()
        };
        let decimal = |v: i128| -> ArrayRef {
            Arc::new(
                Decimal128Array::from(vec![v])
                    .with_precision_and_scale(38, 2)
                    .unwrap(),
            )
        };
        let cases: Vec<(ArrayRef, Vec<DataType>)> = vec![
            (
                Arc::new(Int64Array::from(vec![5])),
                vec![
                    DataType::Int64,
                    DataType::Int32,
                    DataType::Int16,
                    DataType::Int8,
                ],
            ),
            (
                Arc::new(Int64Array::from(vec![i64::from(i32::MAX) + 1])),
                vec![DataType::Int32, DataType::Int16, DataType::Int8],
            ),
            (
                Arc::new(Int64Array::from(vec![-129])),
                vec![DataType::Int16, DataType::Int8],
            ),
            (
                Arc::new(Float64Array::from(vec![0.1])),
                vec![DataType::Float64, DataType::Float32],
            ),
            (
                Arc::new(Float64Array::from(vec![f64::MAX])),
                vec![DataType::Float32],
            ),
            (
                decimal(12_345),
                vec![
                    DataType::Decimal128(38, 2),
                    DataType::Decimal128(5, 2),
                    DataType::Decimal128(4, 2),
                ],
            ),
            (
                decimal(-99_999),
                vec![DataType::Decimal128(5, 2), DataType::Decimal128(4, 2)],
            ),
            (Arc::new(StringArray::from(vec!["a"])), vec![DataType::Utf8]),
            (
                Arc::new(Date32Array::from(vec![19_885])),
                vec![DataType::Date32],
            ),
        ];
        for (array, targets) in cases {
            for target in targets {
                let cast = arrow_cast::cast_with_options(&array, &target, &safe).unwrap();
                let narrowed = crate::cast::cast(array.as_ref(), &target, true).unwrap();
                assert_eq!(
                    cast.to_data(),
                    narrowed.to_data(),
                    "{:?} as {target}",
                    array
                );
            }
        }
    }

    fn rec(column: &str, min: Value, max: Value, vt: Option<i32>) -> MdtStats {
        MdtStats {
            file_name: "f".into(),
            column_name: column.into(),
            min: Some(min),
            max: Some(max),
            null_count: Some(0),
            value_count: Some(3),
            total_size: None,
            total_uncompressed_size: None,
            is_deleted: false,
            is_tight_bound: false,
            value_type: vt.map(|o| (o, None)),
        }
    }

    fn dec(unscaled: i128, scale: i8) -> Value {
        Value::Decimal {
            unscaled,
            precision: 15,
            scale,
        }
    }

    #[test]
    fn typed_bounds_prune() {
        let schema = Schema::new(vec![
            Field::new("amount", DataType::Decimal128(15, 2), true),
            Field::new("d", DataType::Date32, true),
            Field::new(
                "ts",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            Field::new(
                "ms",
                DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                true,
            ),
            Field::new("n", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
        ]);
        let files = [
            vec![
                rec("amount", dec(125000, 2), dec(500000, 2), Some(10)),
                rec("d", Value::Date(19737), Value::Date(19737), Some(12)),
                rec(
                    "ts",
                    Value::TimestampMicros(1_705_314_600_000_000),
                    Value::TimestampMicros(1_705_314_600_000_000),
                    Some(16),
                ),
                // Micros that are not whole milliseconds round outward.
                rec(
                    "ms",
                    Value::TimestampMicros(1_500),
                    Value::TimestampMicros(2_500),
                    None,
                ),
                rec("n", Value::Long(1), Value::Long(9), None),
                rec(
                    "s",
                    Value::String("b".into()),
                    Value::String("d".into()),
                    Some(7),
                ),
            ],
            vec![
                // A decimal of scale 3 rescales to the column's 2.
                rec("amount", dec(5, 3), dec(89999, 3), Some(10)),
                // A string bound for a date column is unknown.
                rec(
                    "d",
                    Value::String("x".into()),
                    Value::String("y".into()),
                    None,
                ),
                rec(
                    "ts",
                    Value::TimestampMicros(0),
                    Value::TimestampMicros(1),
                    Some(16),
                ),
                rec(
                    "ms",
                    Value::Long(10),
                    Value::Long(20),
                    Some(TIMESTAMP_MILLIS),
                ),
                rec("n", Value::Long(i64::MAX), Value::Long(i64::MAX), None),
                rec(
                    "s",
                    Value::String("x".into()),
                    Value::String("z".into()),
                    Some(7),
                ),
            ],
        ];
        let cols = ["amount", "d", "ts", "ms", "n", "s", "missing"];
        let batch = StatsBatch::build(&schema, &cols, 2, |i, c| {
            files[i].iter().find(|r| r.column_name == c)
        });
        assert_eq!(batch.problems.len(), 1, "{:?}", batch.problems);
        let m = |f: &str| may_match(&parse_filter(f).unwrap(), &batch);
        assert_eq!(m("amount > 1000"), vec![true, false]);
        assert_eq!(m("amount = 89.99"), vec![false, true]);
        assert_eq!(m("amount < 0.01"), vec![false, true]);
        assert_eq!(m("d = 2024-01-15"), vec![true, true]);
        assert_eq!(m("d = 2024-01-16"), vec![false, true]);
        assert_eq!(m("ts >= 2024-01-15T10:30:00Z"), vec![true, false]);
        assert_eq!(m("ms = 1970-01-01T00:00:00.001Z"), vec![true, false]);
        assert_eq!(m("ms = 1970-01-01T00:00:00.003Z"), vec![true, false]);
        assert_eq!(m("ms = 1970-01-01T00:00:00.004Z"), vec![false, false]);
        assert_eq!(m("ms = 1970-01-01T00:00:00.015Z"), vec![false, true]);
        // An i64::MAX bound overflows Int32: unknown.
        assert_eq!(m("n = 5"), vec![true, true]);
        assert_eq!(m("n = 10"), vec![false, true]);
        assert_eq!(m("s in (a, c)"), vec![true, false]);
        assert_eq!(m("s = y or amount > 4000"), vec![true, true]);
        assert_eq!(m("s = y and amount > 4000"), vec![false, false]);
        assert_eq!(m("missing = 1"), vec![true, true]);
        assert_eq!(batch.empty, vec![false, false]);
        assert_eq!(batch.unknown, vec![false, true]);
    }

    #[test]
    fn rescaling_rounds_outward() {
        assert_eq!(rescale(12345, 3, 2, Round::Down), Ok(1234));
        assert_eq!(rescale(12345, 3, 2, Round::Up), Ok(1235));
        assert_eq!(rescale(-12345, 3, 2, Round::Down), Ok(-1235));
        assert_eq!(rescale(-12345, 3, 2, Round::Up), Ok(-1234));
        assert_eq!(rescale(12, 0, 2, Round::Up), Ok(1200));
        assert!(rescale(i128::MAX, 0, 2, Round::Up).is_err());
    }
}
