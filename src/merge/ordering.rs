//! Ordering values (the "precombine" / ordering fields) in one comparable form, whether they
//! come from a data record's columns or from a delete record's Avro wrapper.

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};

use crate::log_file::OrderingValue;

#[derive(Debug, Clone, PartialEq)]
pub enum OrderVal {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Decimal { unscaled: i128, scale: i8 },
}

/// Values of all ordering fields of one record (Hudi 1.1 allows several).
pub type OrderKey = Vec<OrderVal>;

fn rescale(v: i128, from: i8, to: i8) -> Option<i128> {
    v.checked_mul(10i128.checked_pow((to - from) as u32)?)
}

impl OrderVal {
    /// `None` when the two are of different kinds: Java compares values of one class only,
    /// and Hudi lets the newer record win then.
    pub fn compare(&self, other: &OrderVal) -> Option<Ordering> {
        use OrderVal::*;
        Some(match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Less,
            (_, Null) => Ordering::Greater,
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            (Float(a), Float(b)) => a.total_cmp(b),
            (Int(a), Float(b)) => (*a as f64).total_cmp(b),
            (Float(a), Int(b)) => a.total_cmp(&(*b as f64)),
            (Str(a), Str(b)) => a.cmp(b),
            (Bytes(a), Bytes(b)) => a.cmp(b),
            (
                Decimal {
                    unscaled: a,
                    scale: sa,
                },
                Decimal {
                    unscaled: b,
                    scale: sb,
                },
            ) => {
                let s = (*sa).max(*sb);
                match (rescale(*a, *sa, s), rescale(*b, *sb, s)) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    _ => (*a as f64 / 10f64.powi(*sa as i32))
                        .total_cmp(&(*b as f64 / 10f64.powi(*sb as i32))),
                }
            }
            _ => return None,
        })
    }

    pub fn from_array(array: &dyn Array, row: usize) -> OrderVal {
        if array.is_null(row) {
            return OrderVal::Null;
        }
        match array.data_type() {
            DataType::Boolean => OrderVal::Bool(array.as_boolean().value(row)),
            DataType::Int8 => OrderVal::Int(array.as_primitive::<Int8Type>().value(row) as i64),
            DataType::Int16 => OrderVal::Int(array.as_primitive::<Int16Type>().value(row) as i64),
            DataType::Int32 => OrderVal::Int(array.as_primitive::<Int32Type>().value(row) as i64),
            DataType::Int64 => OrderVal::Int(array.as_primitive::<Int64Type>().value(row)),
            DataType::UInt8 => OrderVal::Int(array.as_primitive::<UInt8Type>().value(row) as i64),
            DataType::UInt16 => OrderVal::Int(array.as_primitive::<UInt16Type>().value(row) as i64),
            DataType::UInt32 => OrderVal::Int(array.as_primitive::<UInt32Type>().value(row) as i64),
            DataType::UInt64 => OrderVal::Int(array.as_primitive::<UInt64Type>().value(row) as i64),
            DataType::Float32 => {
                OrderVal::Float(array.as_primitive::<Float32Type>().value(row) as f64)
            }
            DataType::Float64 => OrderVal::Float(array.as_primitive::<Float64Type>().value(row)),
            DataType::Date32 => OrderVal::Int(array.as_primitive::<Date32Type>().value(row) as i64),
            DataType::Timestamp(TimeUnit::Second, _) => {
                OrderVal::Int(array.as_primitive::<TimestampSecondType>().value(row))
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                OrderVal::Int(array.as_primitive::<TimestampMillisecondType>().value(row))
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                OrderVal::Int(array.as_primitive::<TimestampMicrosecondType>().value(row))
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                OrderVal::Int(array.as_primitive::<TimestampNanosecondType>().value(row))
            }
            DataType::Decimal128(_, s) => OrderVal::Decimal {
                unscaled: array.as_primitive::<Decimal128Type>().value(row),
                scale: *s,
            },
            DataType::Utf8 => OrderVal::Str(array.as_string::<i32>().value(row).to_string()),
            DataType::LargeUtf8 => OrderVal::Str(array.as_string::<i64>().value(row).to_string()),
            DataType::Binary => OrderVal::Bytes(array.as_binary::<i32>().value(row).to_vec()),
            _ => OrderVal::Null,
        }
    }

    pub fn from_delete(v: &OrderingValue) -> OrderKey {
        let one = |v: &OrderingValue| match v {
            OrderingValue::None => OrderVal::Null,
            OrderingValue::Bool(b) => OrderVal::Bool(*b),
            OrderingValue::Int(i) | OrderingValue::Date(i) => OrderVal::Int(*i as i64),
            OrderingValue::Long(l)
            | OrderingValue::TimeMicros(l)
            | OrderingValue::TimestampMicros(l) => OrderVal::Int(*l),
            OrderingValue::Float(f) => OrderVal::Float(*f as f64),
            OrderingValue::Double(d) => OrderVal::Float(*d),
            OrderingValue::Bytes(b) => OrderVal::Bytes(b.clone()),
            OrderingValue::String(s) => OrderVal::Str(s.clone()),
            OrderingValue::Decimal(d) => OrderVal::Decimal {
                unscaled: *d,
                scale: crate::log_file::delete::DECIMAL_WRAPPER_SCALE,
            },
            OrderingValue::Array(_) => OrderVal::Null,
        };
        match v {
            OrderingValue::Array(items) => items.iter().map(one).collect(),
            other => vec![one(other)],
        }
    }
}

/// Field-by-field comparison; `None` when some pair is of different kinds.
pub fn compare_keys(a: &OrderKey, b: &OrderKey) -> Option<Ordering> {
    for (x, y) in a.iter().zip(b) {
        match x.compare(y)? {
            Ordering::Equal => continue,
            other => return Some(other),
        }
    }
    Some(a.len().cmp(&b.len()))
}

/// Ordering key of `row` from the ordering columns.
pub fn key_of(columns: &[ArrayRef], row: usize) -> OrderKey {
    columns
        .iter()
        .map(|c| OrderVal::from_array(c.as_ref(), row))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_like_hudi() {
        assert_eq!(
            OrderVal::Int(3).compare(&OrderVal::Int(2)),
            Some(Ordering::Greater)
        );
        assert_eq!(
            OrderVal::Null.compare(&OrderVal::Int(2)),
            Some(Ordering::Less)
        );
        assert_eq!(OrderVal::Str("a".into()).compare(&OrderVal::Int(2)), None);
        let d = |u, s| OrderVal::Decimal {
            unscaled: u,
            scale: s,
        };
        assert_eq!(
            d(150, 2).compare(&d(1_500_000_000_000_000, 15)),
            Some(Ordering::Equal)
        );
    }
}
