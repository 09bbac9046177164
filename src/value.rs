//! One value type for what Hudi stores in its Avro wrapper unions (`BooleanWrapper` …
//! `ArrayWrapper` of `HoodieMetadata.avsc` and `HoodieDeleteRecordList.avsc`): a record's
//! ordering value in the merge (read from an Arrow column), a delete record's ordering value,
//! and a column-statistics bound of the metadata table.

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};

/// A value of one wrapper branch. Values of different kinds compare only where Hudi's do
/// (see [`Value::compare`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Value {
    /// No value: a null ordering value, or a null element of an array.
    Null,
    Boolean(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Bytes(Vec<u8>),
    String(String),
    /// Days since the epoch (`DateWrapper`).
    Date(i32),
    /// `unscaled × 10^-scale`, of a `decimal(precision, scale)` column or wrapper.
    Decimal {
        unscaled: i128,
        precision: u8,
        scale: i8,
    },
    TimeMicros(i64),
    TimestampMicros(i64),
    /// Days since the epoch (`LocalDateWrapper`, found inside arrays).
    LocalDate(i32),
    /// Several values (Hudi 1.1 `ArrayWrapper`, e.g. multi-field ordering); elements are
    /// never arrays.
    Array(Vec<Value>),
}

impl Value {
    /// Hudi's order of two values: null lowest; integers of any width, dates and times by
    /// their number; an integer against a float as floats; decimals by value; strings by
    /// UTF-8 bytes; arrays element by element, then by length. `None` when the kinds differ
    /// otherwise: Java compares values of one class only, and Hudi lets the newer record win.
    pub fn compare(&self, other: &Value) -> Option<Ordering> {
        self.compare_by(other, str::cmp)
    }

    /// [`Value::compare`] with strings by UTF-16 units, Java's `String.compareTo`, which
    /// orders the bounds of the metadata table's statistics.
    pub fn compare_utf16(&self, other: &Value) -> Option<Ordering> {
        self.compare_by(other, |a, b| a.encode_utf16().cmp(b.encode_utf16()))
    }

    fn compare_by(&self, other: &Value, strings: fn(&str, &str) -> Ordering) -> Option<Ordering> {
        use Value::*;
        Some(match (self, other) {
            // The merge's usual case, ahead of the widening below.
            (Long(a), Long(b)) => a.cmp(b),
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Less,
            (_, Null) => Ordering::Greater,
            (Boolean(a), Boolean(b)) => a.cmp(b),
            (String(a), String(b)) => strings(a, b),
            (Bytes(a), Bytes(b)) => a.cmp(b),
            (
                Decimal {
                    unscaled: a,
                    scale: sa,
                    ..
                },
                Decimal {
                    unscaled: b,
                    scale: sb,
                    ..
                },
            ) => compare_decimals(*a, *sa, *b, *sb),
            (Array(a), Array(b)) => {
                for (x, y) in a.iter().zip(b) {
                    match x.compare_by(y, strings)? {
                        Ordering::Equal => continue,
                        o => return Some(o),
                    }
                }
                a.len().cmp(&b.len())
            }
            _ => match (self.as_i64(), other.as_i64()) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => self.as_f64()?.total_cmp(&other.as_f64()?),
            },
        })
    }

    /// The number of an integer, date or time.
    #[inline]
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) | Value::Date(v) | Value::LocalDate(v) => Some(i64::from(*v)),
            Value::Long(v) | Value::TimeMicros(v) | Value::TimestampMicros(v) => Some(*v),
            _ => None,
        }
    }

    /// A float, or an integer, date or time as one.
    #[inline]
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(v) => Some(f64::from(*v)),
            Value::Double(v) => Some(*v),
            other => other.as_i64().map(|v| v as f64),
        }
    }

    /// The value of `array` at `row`: Arrow types by their Avro wrapper, timestamps other
    /// than microseconds by their raw number (they compare as numbers anyway); types without a
    /// wrapper are null.
    pub fn from_array(array: &dyn Array, row: usize) -> Value {
        if array.is_null(row) {
            return Value::Null;
        }
        match array.data_type() {
            DataType::Boolean => Value::Boolean(array.as_boolean().value(row)),
            DataType::Int8 => Value::Int(array.as_primitive::<Int8Type>().value(row).into()),
            DataType::Int16 => Value::Int(array.as_primitive::<Int16Type>().value(row).into()),
            DataType::Int32 => Value::Int(array.as_primitive::<Int32Type>().value(row)),
            DataType::Int64 => Value::Long(array.as_primitive::<Int64Type>().value(row)),
            DataType::UInt8 => Value::Int(array.as_primitive::<UInt8Type>().value(row).into()),
            DataType::UInt16 => Value::Int(array.as_primitive::<UInt16Type>().value(row).into()),
            DataType::UInt32 => Value::Long(array.as_primitive::<UInt32Type>().value(row).into()),
            DataType::UInt64 => Value::Long(array.as_primitive::<UInt64Type>().value(row) as i64),
            DataType::Float32 => Value::Float(array.as_primitive::<Float32Type>().value(row)),
            DataType::Float64 => Value::Double(array.as_primitive::<Float64Type>().value(row)),
            DataType::Date32 => Value::Date(array.as_primitive::<Date32Type>().value(row)),
            DataType::Timestamp(TimeUnit::Second, _) => {
                Value::Long(array.as_primitive::<TimestampSecondType>().value(row))
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                Value::Long(array.as_primitive::<TimestampMillisecondType>().value(row))
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                Value::TimestampMicros(array.as_primitive::<TimestampMicrosecondType>().value(row))
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                Value::Long(array.as_primitive::<TimestampNanosecondType>().value(row))
            }
            DataType::Decimal128(precision, scale) => Value::Decimal {
                unscaled: array.as_primitive::<Decimal128Type>().value(row),
                precision: *precision,
                scale: *scale,
            },
            DataType::Utf8 => Value::String(array.as_string::<i32>().value(row).to_string()),
            DataType::LargeUtf8 => Value::String(array.as_string::<i64>().value(row).to_string()),
            DataType::Binary => Value::Bytes(array.as_binary::<i32>().value(row).to_vec()),
            _ => Value::Null,
        }
    }

    /// Whether this is the "no ordering value" default (`IntWrapper(0)` or null) that makes a
    /// delete apply by commit order (docs/hudi-format.md §6.5). An array is default when all its
    /// values are [unverified against Java].
    pub fn is_natural_order(&self) -> bool {
        match self {
            Value::Null | Value::Int(0) => true,
            Value::Array(items) => items.iter().all(Self::is_natural_order),
            _ => false,
        }
    }
}

/// Scales the one with fewer fraction digits up; on overflow its sign decides.
fn compare_decimals(x: i128, sx: i8, y: i128, sy: i8) -> Ordering {
    let (up, other, flip) = if sx < sy { (x, y, false) } else { (y, x, true) };
    let scaled = 10i128
        .checked_pow(u32::from(sx.abs_diff(sy)))
        .and_then(|p| up.checked_mul(p));
    let o = match scaled {
        Some(s) => s.cmp(&other),
        None if up == 0 => 0.cmp(&other),
        None => up.signum().cmp(&0),
    };
    if flip {
        o.reverse()
    } else {
        o
    }
}

/// Java `String.hashCode`: `31·h + c` over UTF-16 code units, wrapping (shard routing in
/// the metadata table, `HashMap` order in HFile file info).
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(u as i32))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Decimal128Array, Int32Array, StringArray};
    use std::sync::Arc;
    use Value as V;

    fn dec(unscaled: i128, scale: i8) -> Value {
        V::Decimal {
            unscaled,
            precision: 38,
            scale,
        }
    }

    #[test]
    fn compares_like_hudi() {
        let cmp = |a: &V, b: &V| a.compare(b);
        assert_eq!(cmp(&V::Long(3), &V::Int(2)), Some(Ordering::Greater));
        assert_eq!(cmp(&V::Null, &V::Int(2)), Some(Ordering::Less));
        assert_eq!(cmp(&V::String("a".into()), &V::Int(2)), None);
        assert_eq!(cmp(&V::Boolean(true), &V::Int(1)), None);
        assert_eq!(cmp(&V::Date(5), &V::Long(5)), Some(Ordering::Equal));
        assert_eq!(cmp(&V::Double(2.5), &V::Long(2)), Some(Ordering::Greater));
        assert_eq!(cmp(&V::Float(1.5), &V::Double(1.5)), Some(Ordering::Equal));
        assert_eq!(
            cmp(&dec(150, 2), &dec(1_500_000_000_000_000, 15)),
            Some(Ordering::Equal)
        );
        assert_eq!(cmp(&dec(-1, 0), &dec(5, 3)), Some(Ordering::Less));
        assert_eq!(cmp(&dec(7, 0), &dec(6999, 3)), Some(Ordering::Greater));
        // Rescaling overflows: the sign decides.
        assert_eq!(
            cmp(&dec(i128::MAX, 0), &dec(1, 30)),
            Some(Ordering::Greater)
        );
        assert_eq!(cmp(&dec(0, 0), &dec(-1, 39)), Some(Ordering::Greater));
        assert_eq!(
            cmp(&V::Bytes(vec![0x80]), &V::Bytes(vec![0x01])),
            Some(Ordering::Greater)
        );
        let arr = V::Array;
        assert_eq!(
            cmp(
                &arr(vec![V::Int(1), V::Null]),
                &arr(vec![V::Int(1), V::Int(0)])
            ),
            Some(Ordering::Less)
        );
        assert_eq!(
            cmp(&arr(vec![V::Int(1)]), &arr(vec![V::Int(1), V::Int(0)])),
            Some(Ordering::Less)
        );
        assert_eq!(
            cmp(&arr(vec![V::Int(1)]), &arr(vec![V::Boolean(true)])),
            None
        );
    }

    #[test]
    fn string_orders() {
        // U+FF5E sorts before U+1F600 in UTF-8 but after its high surrogate (0xD83D) in UTF-16.
        let (a, b) = (V::String("～".into()), V::String("😀".into()));
        assert_eq!(a.compare(&b), Some(Ordering::Less));
        assert_eq!(a.compare_utf16(&b), Some(Ordering::Greater));
        let (x, y) = (V::Array(vec![a]), V::Array(vec![b]));
        assert_eq!(x.compare_utf16(&y), Some(Ordering::Greater));
    }

    #[test]
    fn from_arrow_cells() {
        let ints: ArrayRef = Arc::new(Int32Array::from(vec![Some(7), None]));
        assert_eq!(V::from_array(&ints, 0), V::Int(7));
        assert_eq!(V::from_array(&ints, 1), V::Null);
        let strings: ArrayRef = Arc::new(StringArray::from(vec!["x"]));
        assert_eq!(V::from_array(&strings, 0), V::String("x".into()));
        let decimals = Decimal128Array::from(vec![1234])
            .with_precision_and_scale(10, 2)
            .unwrap();
        assert_eq!(
            V::from_array(&decimals, 0),
            V::Decimal {
                unscaled: 1234,
                precision: 10,
                scale: 2
            }
        );
    }

    #[test]
    fn natural_order_and_size() {
        assert!(V::Int(0).is_natural_order() && V::Null.is_natural_order());
        assert!(V::Array(vec![V::Null, V::Int(0)]).is_natural_order());
        assert!(!V::Long(0).is_natural_order());
        // The merge keeps one per record version: no larger than the i128 it holds needs.
        assert!(std::mem::size_of::<Value>() <= 32);
    }
}
