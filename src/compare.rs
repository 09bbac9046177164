//! A column compared with one value, for filters, statistics and partition values.
//!
//! arrow-ord's comparison kernels map a dictionary's results back with arrow's `take` on a
//! dynamic array, and that `take` links arrow's comparators for every type (run-end arrays)
//! into the read module. These kernels are typed and give arrow-ord's answers (floats in
//! total order, bytes compared as bytes, a null on either side null; the tests check them
//! type by type).

use std::cmp::Ordering;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, ArrowNativeTypeOp, ArrowPrimitiveType, BooleanArray, Datum, Scalar,
};
use arrow_buffer::BooleanBuffer;
use arrow_schema::{ArrowError, DataType, TimeUnit};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn holds(self, o: Ordering) -> bool {
        match self {
            Cmp::Eq => o == Ordering::Equal,
            Cmp::Ne => o != Ordering::Equal,
            Cmp::Lt => o == Ordering::Less,
            Cmp::Le => o != Ordering::Greater,
            Cmp::Gt => o == Ordering::Greater,
            Cmp::Ge => o != Ordering::Less,
        }
    }
}

/// `left op value` per row; null where the row or the value is null.
pub fn compare(
    left: &dyn Array,
    op: Cmp,
    value: &Scalar<ArrayRef>,
) -> Result<BooleanArray, ArrowError> {
    let (right, _) = value.get();
    if let Some(dict) = left.as_any_dictionary_opt() {
        let per_value = compare(dict.values().as_ref(), op, value)?;
        let keys = dict.normalized_keys();
        return Ok((0..left.len())
            .map(|i| {
                (left.is_valid(i) && per_value.is_valid(keys[i])).then(|| per_value.value(keys[i]))
            })
            .collect());
    }
    if left.data_type() != right.data_type() || right.len() != 1 {
        return Err(ArrowError::InvalidArgumentError(format!(
            "Invalid comparison operation: {} {op:?} {}",
            left.data_type(),
            right.data_type()
        )));
    }
    if right.is_null(0) {
        return Ok(BooleanArray::new_null(left.len()));
    }
    let values = ordered(left, right, op)?;
    Ok(BooleanArray::new(values, left.logical_nulls()))
}

/// `left IS DISTINCT FROM value`: never null; a null row differs from a value and not from
/// a null.
pub fn distinct(left: &dyn Array, value: &Scalar<ArrayRef>) -> Result<BooleanArray, ArrowError> {
    let (right, _) = value.get();
    if right.len() == 1 && right.is_null(0) {
        let nulls = left.logical_nulls();
        return Ok(BooleanArray::from(
            (0..left.len())
                .map(|i| nulls.as_ref().is_none_or(|n| n.is_valid(i)))
                .collect::<Vec<_>>(),
        ));
    }
    let ne = compare(left, Cmp::Ne, value)?;
    Ok(BooleanArray::from(
        (0..ne.len())
            .map(|i| ne.is_null(i) || ne.value(i))
            .collect::<Vec<_>>(),
    ))
}

fn ordered(left: &dyn Array, right: &dyn Array, op: Cmp) -> Result<BooleanBuffer, ArrowError> {
    use DataType as D;
    fn prim<T: ArrowPrimitiveType>(l: &dyn Array, r: &dyn Array, op: Cmp) -> BooleanBuffer {
        let v = r.as_primitive::<T>().value(0);
        let l = l.as_primitive::<T>().values();
        BooleanBuffer::collect_bool(l.len(), |i| op.holds(l[i].compare(v)))
    }
    fn bytes<'a>(n: usize, at: impl Fn(usize) -> &'a [u8], v: &[u8], op: Cmp) -> BooleanBuffer {
        BooleanBuffer::collect_bool(n, |i| op.holds(at(i).cmp(v)))
    }
    let n = left.len();
    Ok(match left.data_type() {
        D::Boolean => {
            let v = right.as_boolean().value(0);
            let l = left.as_boolean();
            BooleanBuffer::collect_bool(n, |i| op.holds(l.value(i).cmp(&v)))
        }
        D::Int8 => prim::<Int8Type>(left, right, op),
        D::Int16 => prim::<Int16Type>(left, right, op),
        D::Int32 => prim::<Int32Type>(left, right, op),
        D::Int64 => prim::<Int64Type>(left, right, op),
        D::UInt8 => prim::<UInt8Type>(left, right, op),
        D::UInt16 => prim::<UInt16Type>(left, right, op),
        D::UInt32 => prim::<UInt32Type>(left, right, op),
        D::UInt64 => prim::<UInt64Type>(left, right, op),
        D::Float32 => prim::<Float32Type>(left, right, op),
        D::Float64 => prim::<Float64Type>(left, right, op),
        D::Decimal128(_, _) => prim::<Decimal128Type>(left, right, op),
        D::Decimal256(_, _) => prim::<Decimal256Type>(left, right, op),
        D::Date32 => prim::<Date32Type>(left, right, op),
        D::Date64 => prim::<Date64Type>(left, right, op),
        D::Time32(TimeUnit::Second) => prim::<Time32SecondType>(left, right, op),
        D::Time32(TimeUnit::Millisecond) => prim::<Time32MillisecondType>(left, right, op),
        D::Time64(TimeUnit::Microsecond) => prim::<Time64MicrosecondType>(left, right, op),
        D::Time64(TimeUnit::Nanosecond) => prim::<Time64NanosecondType>(left, right, op),
        D::Timestamp(TimeUnit::Second, _) => prim::<TimestampSecondType>(left, right, op),
        D::Timestamp(TimeUnit::Millisecond, _) => prim::<TimestampMillisecondType>(left, right, op),
        D::Timestamp(TimeUnit::Microsecond, _) => prim::<TimestampMicrosecondType>(left, right, op),
        D::Timestamp(TimeUnit::Nanosecond, _) => prim::<TimestampNanosecondType>(left, right, op),
        D::Utf8 => {
            let (l, v) = (left.as_string::<i32>(), right.as_string::<i32>().value(0));
            bytes(n, |i| l.value(i).as_bytes(), v.as_bytes(), op)
        }
        D::LargeUtf8 => {
            let (l, v) = (left.as_string::<i64>(), right.as_string::<i64>().value(0));
            bytes(n, |i| l.value(i).as_bytes(), v.as_bytes(), op)
        }
        D::Utf8View => {
            let (l, v) = (left.as_string_view(), right.as_string_view().value(0));
            bytes(n, |i| l.value(i).as_bytes(), v.as_bytes(), op)
        }
        D::Binary => {
            let (l, v) = (left.as_binary::<i32>(), right.as_binary::<i32>().value(0));
            bytes(n, |i| l.value(i), v, op)
        }
        D::LargeBinary => {
            let (l, v) = (left.as_binary::<i64>(), right.as_binary::<i64>().value(0));
            bytes(n, |i| l.value(i), v, op)
        }
        D::BinaryView => {
            let (l, v) = (left.as_binary_view(), right.as_binary_view().value(0));
            bytes(n, |i| l.value(i), v, op)
        }
        D::FixedSizeBinary(_) => {
            let (l, v) = (
                left.as_fixed_size_binary(),
                right.as_fixed_size_binary().value(0),
            );
            bytes(n, |i| l.value(i), v, op)
        }
        other => {
            return Err(ArrowError::InvalidArgumentError(format!(
                "Invalid comparison operation: {other} {op:?} {other}"
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::*;
    use std::sync::Arc;

    /// Columns, each with values to compare it with.
    fn cases() -> Vec<(ArrayRef, Vec<ArrayRef>)> {
        fn with<A: Array + 'static>(column: A, values: Vec<A>) -> (ArrayRef, Vec<ArrayRef>) {
            let values = values
                .into_iter()
                .map(|v| Arc::new(v) as ArrayRef)
                .collect();
            (Arc::new(column), values)
        }
        let decimal = |v: Vec<Option<i128>>| {
            Decimal128Array::from(v)
                .with_precision_and_scale(10, 2)
                .unwrap()
        };
        let ts = |v: Vec<Option<i64>>| TimestampMicrosecondArray::from(v).with_timezone("UTC");
        vec![
            with(
                BooleanArray::from(vec![Some(true), None, Some(false)]),
                vec![
                    BooleanArray::from(vec![true]),
                    BooleanArray::from(vec![false]),
                    BooleanArray::from(vec![None]),
                ],
            ),
            with(
                Int32Array::from(vec![Some(1), None, Some(-5), Some(i32::MAX)]),
                vec![
                    Int32Array::from(vec![1]),
                    Int32Array::from(vec![0]),
                    Int32Array::from(vec![None]),
                ],
            ),
            with(
                Int64Array::from(vec![Some(1), None, Some(-5), Some(i64::MIN)]),
                vec![Int64Array::from(vec![-5]), Int64Array::from(vec![None])],
            ),
            with(
                UInt64Array::from(vec![Some(1), None, Some(u64::MAX)]),
                vec![
                    UInt64Array::from(vec![u64::MAX]),
                    UInt64Array::from(vec![None]),
                ],
            ),
            with(
                Float64Array::from(vec![
                    Some(0.0),
                    Some(-0.0),
                    Some(f64::NAN),
                    None,
                    Some(1.5),
                    Some(f64::NEG_INFINITY),
                ]),
                vec![
                    Float64Array::from(vec![0.0]),
                    Float64Array::from(vec![-0.0]),
                    Float64Array::from(vec![f64::NAN]),
                    Float64Array::from(vec![None]),
                ],
            ),
            with(
                Float32Array::from(vec![Some(0.0), Some(f32::NAN), None, Some(-2.5)]),
                vec![
                    Float32Array::from(vec![f32::NAN]),
                    Float32Array::from(vec![-2.5]),
                ],
            ),
            with(
                decimal(vec![Some(12345), None, Some(-1)]),
                vec![decimal(vec![Some(-1)]), decimal(vec![None])],
            ),
            with(
                Date32Array::from(vec![Some(19_885), None, Some(-1)]),
                vec![
                    Date32Array::from(vec![19_885]),
                    Date32Array::from(vec![None]),
                ],
            ),
            with(
                ts(vec![Some(1_718_064_000_000_000), None, Some(-1)]),
                vec![ts(vec![Some(0)]), ts(vec![None])],
            ),
            with(
                TimestampMillisecondArray::from(vec![Some(5), None]),
                vec![TimestampMillisecondArray::from(vec![5])],
            ),
            with(
                StringArray::from(vec![
                    Some("us-east"),
                    None,
                    Some(""),
                    Some("eu"),
                    Some("\u{e9}"),
                ]),
                vec![
                    StringArray::from(vec!["us-east"]),
                    StringArray::from(vec!["f"]),
                    StringArray::from(vec![Option::<&str>::None]),
                ],
            ),
            with(
                LargeStringArray::from(vec![Some("b"), None, Some("a")]),
                vec![LargeStringArray::from(vec!["a"])],
            ),
            with(
                BinaryArray::from(vec![Some(&b"ab"[..]), None, Some(&b"\xff"[..])]),
                vec![BinaryArray::from(vec![&b"ab"[..]])],
            ),
            with(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    vec![Some(b"ab"), None, Some(b"zz")].into_iter(),
                    2,
                )
                .unwrap(),
                vec![FixedSizeBinaryArray::try_from_iter(vec![b"ab"].into_iter()).unwrap()],
            ),
        ]
    }

    #[test]
    fn every_type_and_operator_answers_as_arrow_ord() {
        use arrow_ord::cmp;
        type Kernel = fn(&dyn Datum, &dyn Datum) -> Result<BooleanArray, ArrowError>;
        let ops: [(Cmp, Kernel); 6] = [
            (Cmp::Eq, cmp::eq),
            (Cmp::Ne, cmp::neq),
            (Cmp::Lt, cmp::lt),
            (Cmp::Le, cmp::lt_eq),
            (Cmp::Gt, cmp::gt),
            (Cmp::Ge, cmp::gt_eq),
        ];
        let dictionary: ArrayRef = Arc::new(
            vec![Some("a"), None, Some("b"), Some("a")]
                .into_iter()
                .collect::<DictionaryArray<Int32Type>>(),
        );
        let mut all = cases();
        all.push((
            dictionary,
            vec![Arc::new(StringArray::from(vec!["a"])) as ArrayRef],
        ));
        let mut checked = 0;
        for (column, values) in all {
            for value in values {
                let scalar = Scalar::new(value.clone());
                for (op, kernel) in ops {
                    let ours = compare(column.as_ref(), op, &scalar).unwrap();
                    let theirs = kernel(&column, &scalar).unwrap();
                    assert_eq!(ours, theirs, "{} {op:?} {value:?}", column.data_type());
                    checked += 1;
                }
                let ours = distinct(column.as_ref(), &scalar).unwrap();
                let theirs = cmp::distinct(&column, &scalar).unwrap();
                assert_eq!(ours, theirs, "{} distinct {value:?}", column.data_type());
            }
        }
        assert!(checked > 150, "{checked}");
    }

    #[test]
    fn unlike_types_are_an_error() {
        let column = Int32Array::from(vec![1]);
        let value = Scalar::new(Arc::new(Int64Array::from(vec![1])) as ArrayRef);
        assert!(compare(&column, Cmp::Eq, &value).is_err());
    }
}
