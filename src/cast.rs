//! Casts on the read path, narrowed to the type pairs reads need: Hudi's schema evolution
//! (a file's older type read as the table's), partition values and filter literals parsed from
//! text, statistics bounds, and values shown as text.
//!
//! arrow-cast's `cast` dispatches over every pair arrow knows in one function that fat LTO
//! cannot trim: with it, the read module carries the whole matrix (~1.4 MB raw). The kernels
//! here are typed, so only these pairs compile. Each gives what arrow-cast gives for the same
//! input (the tests check pair by pair); any other pair is an error naming both types.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    make_array, new_null_array, Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray,
    Decimal128Array, GenericListArray, MapArray, OffsetSizeTrait, PrimitiveArray, StringArray,
    StructArray,
};
use arrow_cast::display::{ArrayFormatter, FormatOptions};
use arrow_cast::parse::Parser;
use arrow_schema::{ArrowError, DataType, FieldRef, Fields, TimeUnit};

/// Casts `array` to `to`. Where a value does not fit or parse, `safe` makes it null;
/// otherwise the cast fails.
pub fn cast(array: &dyn Array, to: &DataType, safe: bool) -> Result<ArrayRef, ArrowError> {
    use DataType as D;
    let from = array.data_type();
    if from == to {
        return Ok(make_array(array.to_data()));
    }
    match (from, to) {
        (D::Null, _) => Ok(new_null_array(to, array.len())),
        (D::Dictionary(_, values), _) if values.as_ref() == &D::Utf8 => {
            // Unpacked by hand: arrow's `take` on a dynamic array links its comparators for
            // every type (run-end arrays) into the read module.
            let dict = array.as_any_dictionary();
            let words = dict.values().as_string::<i32>();
            let keys = dict.normalized_keys();
            let text: StringArray = (0..array.len())
                .map(|i| {
                    (!array.is_null(i) && words.is_valid(keys[i])).then(|| words.value(keys[i]))
                })
                .collect();
            cast(&text, to, safe)
        }
        (D::Utf8 | D::LargeUtf8, _) => from_string(array, to, safe),
        (_, D::Utf8) => to_string(array, safe),
        (D::Binary | D::LargeBinary, D::LargeUtf8) => Ok(Arc::new(
            to_string(array, safe)?
                .as_string::<i32>()
                .iter()
                .collect::<arrow_array::LargeStringArray>(),
        )),
        (D::Binary | D::LargeBinary | D::FixedSizeBinary(_), D::Binary | D::LargeBinary) => {
            let values: Vec<Option<&[u8]>> = match from {
                D::Binary => array.as_binary::<i32>().iter().collect(),
                D::LargeBinary => array.as_binary::<i64>().iter().collect(),
                _ => array.as_fixed_size_binary().iter().collect(),
            };
            Ok(match to {
                D::Binary => Arc::new(BinaryArray::from(values)),
                _ => Arc::new(arrow_array::LargeBinaryArray::from(values)),
            })
        }
        (D::Struct(from_fields), D::Struct(to_fields)) => {
            structs(array.as_struct(), from_fields, to_fields, safe)
        }
        (D::List(_), D::List(field)) => list::<i32>(array, field, safe),
        (D::LargeList(_), D::LargeList(field)) => list::<i64>(array, field, safe),
        (D::Map(_, _), D::Map(entries, sorted)) => {
            let map = array.as_map();
            let cast_entries = cast(map.entries(), entries.data_type(), safe)?;
            Ok(Arc::new(MapArray::try_new(
                entries.clone(),
                map.offsets().clone(),
                cast_entries.as_struct().clone(),
                map.nulls().cloned(),
                *sorted,
            )?))
        }
        (D::Decimal128(_, scale), D::Float64) => decimal_to_f64(array, *scale),
        (_, D::Decimal128(precision, scale)) => to_decimal(array, *precision, *scale, safe)
            .unwrap_or_else(|| Err(unsupported(from, to))),
        (D::Timestamp(unit, from_tz), D::Timestamp(to_unit, to_tz)) => {
            if from_tz.is_none() && to_tz.as_deref().is_some_and(|tz| !is_utc(tz)) {
                // A local time relabelled to a zone with an offset shifts the values.
                return Err(unsupported(from, to));
            }
            timestamp_units(array, *unit, *to_unit, to_tz.clone(), safe)
        }
        (D::Timestamp(..) | D::Date64 | D::Time64(_), D::Int64)
        | (D::Date32 | D::Time32(_), D::Int32)
        | (D::Int64, D::Timestamp(..) | D::Date64 | D::Time64(_))
        | (D::Int32, D::Date32 | D::Time32(_)) => {
            // The same values under another type, as arrow-cast reinterprets them.
            retyped(array, to)
        }
        (D::Time32(TimeUnit::Millisecond), D::Time64(TimeUnit::Microsecond)) => Ok(Arc::new(
            array
                .as_primitive::<Time32MillisecondType>()
                .unary::<_, Time64MicrosecondType>(|v| i64::from(v) * 1000),
        )),
        _ => numeric(array, to, safe).unwrap_or_else(|| Err(unsupported(from, to))),
    }
}

/// The same buffers under another type (a reinterpretation, or a time zone relabelled).
fn retyped(array: &dyn Array, to: &DataType) -> Result<ArrayRef, ArrowError> {
    Ok(make_array(
        array
            .to_data()
            .into_builder()
            .data_type(to.clone())
            .build()?,
    ))
}

/// How many of `unit` make a second.
pub fn ticks_per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

fn unsupported(from: &DataType, to: &DataType) -> ArrowError {
    ArrowError::CastError(format!("Casting from {from} to {to} not supported"))
}

fn is_utc(tz: &str) -> bool {
    matches!(tz, "UTC" | "utc" | "+00:00" | "Z" | "+00" | "+0000")
}

/// Integers and floats to a wider or equal type; integers to a narrower one where they fit.
fn numeric(array: &dyn Array, to: &DataType, safe: bool) -> Option<Result<ArrayRef, ArrowError>> {
    use DataType as D;
    fn widen<F: ArrowPrimitiveType, T: ArrowPrimitiveType>(
        array: &dyn Array,
        f: impl Fn(F::Native) -> T::Native,
    ) -> Result<ArrayRef, ArrowError> {
        Ok(Arc::new(array.as_primitive::<F>().unary::<_, T>(f)))
    }
    fn narrow<F: ArrowPrimitiveType, T: ArrowPrimitiveType>(
        array: &dyn Array,
        safe: bool,
        f: impl Fn(F::Native) -> Option<T::Native>,
    ) -> Result<ArrayRef, ArrowError> {
        let a = array.as_primitive::<F>();
        if safe {
            return Ok(Arc::new(a.unary_opt::<_, T>(f)));
        }
        Ok(Arc::new(a.try_unary::<_, T, _>(|v| {
            f(v).ok_or_else(|| {
                ArrowError::CastError(format!("Can't cast value {v:?} to type {}", T::DATA_TYPE))
            })
        })?))
    }
    Some(match (array.data_type(), to) {
        (D::Int8, D::Int16) => widen::<Int8Type, Int16Type>(array, i16::from),
        (D::Int8, D::Int32) => widen::<Int8Type, Int32Type>(array, i32::from),
        (D::Int16, D::Int32) => widen::<Int16Type, Int32Type>(array, i32::from),
        (D::Int8, D::Int64) => widen::<Int8Type, Int64Type>(array, i64::from),
        (D::Int16, D::Int64) => widen::<Int16Type, Int64Type>(array, i64::from),
        (D::Int32, D::Int64) => widen::<Int32Type, Int64Type>(array, i64::from),
        (D::UInt8, D::Int64) => widen::<UInt8Type, Int64Type>(array, i64::from),
        (D::UInt16, D::Int64) => widen::<UInt16Type, Int64Type>(array, i64::from),
        (D::UInt32, D::Int64) => widen::<UInt32Type, Int64Type>(array, i64::from),
        (D::Int8, D::Float32) => widen::<Int8Type, Float32Type>(array, f32::from),
        (D::Int16, D::Float32) => widen::<Int16Type, Float32Type>(array, f32::from),
        (D::Int32, D::Float32) => widen::<Int32Type, Float32Type>(array, |v| v as f32),
        (D::Int64, D::Float32) => widen::<Int64Type, Float32Type>(array, |v| v as f32),
        (D::Int8, D::Float64) => widen::<Int8Type, Float64Type>(array, f64::from),
        (D::Int16, D::Float64) => widen::<Int16Type, Float64Type>(array, f64::from),
        (D::Int32, D::Float64) => widen::<Int32Type, Float64Type>(array, f64::from),
        (D::Int64, D::Float64) => widen::<Int64Type, Float64Type>(array, |v| v as f64),
        (D::Float32, D::Float64) => widen::<Float32Type, Float64Type>(array, f64::from),
        (D::Int64, D::Int32) => narrow::<Int64Type, Int32Type>(array, safe, |v| v.try_into().ok()),
        (D::Int64, D::Int16) => narrow::<Int64Type, Int16Type>(array, safe, |v| v.try_into().ok()),
        (D::Int64, D::Int8) => narrow::<Int64Type, Int8Type>(array, safe, |v| v.try_into().ok()),
        (D::Int32, D::Int16) => narrow::<Int32Type, Int16Type>(array, safe, |v| v.try_into().ok()),
        (D::Int32, D::Int8) => narrow::<Int32Type, Int8Type>(array, safe, |v| v.try_into().ok()),
        (D::Float64, D::Float32) => widen::<Float64Type, Float32Type>(array, |v| v as f32),
        _ => return None,
    })
}

/// Integers, floats and decimals to `Decimal128(precision, scale)`.
fn to_decimal(
    array: &dyn Array,
    precision: u8,
    scale: i8,
    safe: bool,
) -> Option<Result<ArrayRef, ArrowError>> {
    use DataType as D;
    fn each<F: ArrowPrimitiveType>(
        array: &dyn Array,
        precision: u8,
        scale: i8,
        safe: bool,
        f: impl Fn(F::Native) -> Option<i128>,
    ) -> Result<ArrayRef, ArrowError> {
        arrow_array::types::validate_decimal_precision_and_scale::<Decimal128Type>(
            precision, scale,
        )?;
        let a = array.as_primitive::<F>();
        let fits = |v: F::Native| {
            f(v).filter(|d| Decimal128Type::is_valid_decimal_precision(*d, precision))
        };
        let out: Decimal128Array = if safe {
            a.unary_opt::<_, Decimal128Type>(fits)
        } else {
            a.try_unary::<_, Decimal128Type, _>(|v| {
                fits(v).ok_or_else(|| {
                    ArrowError::CastError(format!(
                        "Cannot cast to Decimal128({precision}, {scale}). Overflowing on {v:?}"
                    ))
                })
            })?
        };
        Ok(Arc::new(out.with_precision_and_scale(precision, scale)?))
    }
    if scale < 0 {
        return None;
    }
    let mul = 10_i128.checked_pow(scale as u32)?;
    let int = move |v: i128| v.checked_mul(mul);
    Some(match array.data_type() {
        D::Int8 => each::<Int8Type>(array, precision, scale, safe, move |v| int(v.into())),
        D::Int16 => each::<Int16Type>(array, precision, scale, safe, move |v| int(v.into())),
        D::Int32 => each::<Int32Type>(array, precision, scale, safe, move |v| int(v.into())),
        D::Int64 => each::<Int64Type>(array, precision, scale, safe, move |v| int(v.into())),
        D::Float32 => each::<Float32Type>(array, precision, scale, safe, move |v| {
            arrow_cast::cast::float_to_decimal_opt::<Decimal128Type>(f64::from(v), 38, scale)
        }),
        D::Float64 => each::<Float64Type>(array, precision, scale, safe, move |v| {
            arrow_cast::cast::float_to_decimal_opt::<Decimal128Type>(v, 38, scale)
        }),
        D::Decimal128(from_precision, from_scale) => {
            let (fp, fs) = (*from_precision, *from_scale);
            each::<Decimal128Type>(array, precision, scale, safe, move |v| {
                arrow_cast::cast::rescale_decimal::<Decimal128Type, Decimal128Type>(
                    v, fp, fs, 38, scale,
                )
            })
        }
        _ => return None,
    })
}

/// As arrow-cast rounds a decimal to `f64`: once.
fn decimal_to_f64(array: &dyn Array, scale: i8) -> Result<ArrayRef, ArrowError> {
    let f = |x: i128| x as f64;
    Ok(Arc::new(
        array
            .as_primitive::<Decimal128Type>()
            .unary::<_, Float64Type>(|x| {
                arrow_cast::cast::single_decimal_to_float_lossy::<Decimal128Type, _>(
                    &f,
                    x,
                    scale.into(),
                )
            }),
    ))
}

fn timestamp_units(
    array: &dyn Array,
    from: TimeUnit,
    to: TimeUnit,
    tz: Option<Arc<str>>,
    safe: bool,
) -> Result<ArrayRef, ArrowError> {
    let values = retyped(array, &DataType::Int64)?;
    let values = rescale_time(values.as_primitive::<Int64Type>(), from, to, safe)?;
    retyped(&values, &DataType::Timestamp(to, tz))
}

fn rescale_time(
    values: &PrimitiveArray<Int64Type>,
    from: TimeUnit,
    to: TimeUnit,
    safe: bool,
) -> Result<PrimitiveArray<Int64Type>, ArrowError> {
    let (from, to) = (ticks_per_second(from), ticks_per_second(to));
    Ok(if from >= to {
        let div = from / to;
        values.unary::<_, Int64Type>(|v| v / div)
    } else {
        let mul = to / from;
        if safe {
            values.unary_opt::<_, Int64Type>(|v| v.checked_mul(mul))
        } else {
            values.try_unary::<_, Int64Type, _>(|v| {
                v.checked_mul(mul).ok_or_else(|| {
                    ArrowError::ComputeError(format!("Overflow happened on: {v:?} * {mul:?}"))
                })
            })?
        }
    })
}

/// Values as arrow-cast shows them as text (its display formatters); bytes as UTF-8.
fn to_string(array: &dyn Array, safe: bool) -> Result<ArrayRef, ArrowError> {
    use DataType as D;
    match array.data_type() {
        D::Binary | D::LargeBinary => {
            let bytes: Vec<Option<&[u8]>> = match array.data_type() {
                D::Binary => array.as_binary::<i32>().iter().collect(),
                _ => array.as_binary::<i64>().iter().collect(),
            };
            let text = bytes
                .into_iter()
                .map(|b| match b.map(std::str::from_utf8) {
                    None => Ok(None),
                    Some(Ok(s)) => Ok(Some(s)),
                    Some(Err(_)) if safe => Ok(None),
                    Some(Err(e)) => Err(ArrowError::CastError(format!(
                        "Cannot cast binary to string: {e}"
                    ))),
                })
                .collect::<Result<StringArray, ArrowError>>()?;
            Ok(Arc::new(text))
        }
        t if t.is_primitive() || t == &D::Boolean => {
            let zero_offset;
            let array = match array.data_type() {
                D::Timestamp(unit, Some(tz)) if is_utc(tz) && tz.as_ref() != "+00:00" => {
                    let utc = D::Timestamp(*unit, Some("+00:00".into()));
                    zero_offset = retyped(array, &utc)?;
                    zero_offset.as_ref()
                }
                _ => array,
            };
            let formatter = ArrayFormatter::try_new(array, &FormatOptions::default())?;
            let mut out = arrow_array::builder::StringBuilder::new();
            let mut text = String::new();
            for i in 0..array.len() {
                if array.is_null(i) {
                    out.append_null();
                } else {
                    text.clear();
                    formatter.value(i).write(&mut text)?;
                    out.append_value(&text);
                }
            }
            Ok(Arc::new(out.finish()))
        }
        other => Err(unsupported(other, &D::Utf8)),
    }
}

/// Text parsed as arrow-cast parses it.
fn from_string(array: &dyn Array, to: &DataType, safe: bool) -> Result<ArrayRef, ArrowError> {
    use DataType as D;
    let text: StringArray = match array.data_type() {
        D::LargeUtf8 => array.as_string::<i64>().iter().collect(),
        _ => array.as_string::<i32>().clone(),
    };
    let fail = |v: &str, what: &dyn std::fmt::Display| {
        ArrowError::CastError(format!("Cannot cast string '{v}' to value of {what} type"))
    };
    fn parsed<P: Parser>(
        text: &StringArray,
        safe: bool,
        fail: &dyn Fn(&str, &dyn std::fmt::Display) -> ArrowError,
    ) -> Result<ArrayRef, ArrowError> {
        let out: PrimitiveArray<P> = text
            .iter()
            .map(|v| match v {
                None => Ok(None),
                Some(s) => match P::parse(s) {
                    Some(p) => Ok(Some(p)),
                    None if safe => Ok(None),
                    None => Err(fail(s, &P::DATA_TYPE)),
                },
            })
            .collect::<Result<_, _>>()?;
        Ok(Arc::new(out))
    }
    match to {
        D::Utf8 => Ok(Arc::new(text)),
        D::LargeUtf8 => Ok(Arc::new(
            text.iter().collect::<arrow_array::LargeStringArray>(),
        )),
        D::LargeBinary => Ok(Arc::new(arrow_array::LargeBinaryArray::from(
            text.iter()
                .map(|v| v.map(str::as_bytes))
                .collect::<Vec<_>>(),
        ))),
        D::Binary => Ok(Arc::new(BinaryArray::from(
            text.iter()
                .map(|v| v.map(str::as_bytes))
                .collect::<Vec<_>>(),
        ))),
        D::Boolean => {
            let out: BooleanArray = text
                .iter()
                .map(|v| match v {
                    None => Ok(None),
                    Some(s) => match parse_bool(s) {
                        Some(b) => Ok(Some(b)),
                        None if safe => Ok(None),
                        None => Err(fail(s, &D::Boolean)),
                    },
                })
                .collect::<Result<_, _>>()?;
            Ok(Arc::new(out))
        }
        D::Decimal128(precision, scale) => {
            arrow_array::types::validate_decimal_precision_and_scale::<Decimal128Type>(
                *precision, *scale,
            )?;
            let out: Decimal128Array = text
                .iter()
                .map(|v| match v {
                    None => Ok(None),
                    Some(s) => {
                        match arrow_cast::parse::parse_decimal::<Decimal128Type>(
                            s, *precision, *scale,
                        ) {
                            Ok(d) => Ok(Some(d)),
                            Err(_) if safe => Ok(None),
                            Err(_) => Err(fail(s, &to)),
                        }
                    }
                })
                .collect::<Result<_, _>>()?;
            Ok(Arc::new(out.with_precision_and_scale(*precision, *scale)?))
        }
        D::Timestamp(unit, tz) => {
            // Without chrono-tz arrow parses only offsets; UTC is the offset zero.
            let zone: arrow_array::timezone::Tz = match tz.as_deref() {
                Some(tz) if !is_utc(tz) => tz.parse()?,
                _ => "+00:00".parse()?,
            };
            let ts = |f: &dyn Fn(chrono::NaiveDateTime) -> Option<i64>| {
                text.iter()
                    .map(|v| match v {
                        None => Ok(None),
                        Some(s) => {
                            match arrow_cast::parse::string_to_datetime(&zone, s)
                                .ok()
                                .and_then(|t| f(t.naive_utc()))
                            {
                                Some(n) => Ok(Some(n)),
                                None if safe => Ok(None),
                                None => Err(fail(s, &to)),
                            }
                        }
                    })
                    .collect::<Result<PrimitiveArray<Int64Type>, _>>()
            };
            let values = match unit {
                TimeUnit::Second => ts(&|t| TimestampSecondType::from_naive_datetime(t, None)),
                TimeUnit::Millisecond => {
                    ts(&|t| TimestampMillisecondType::from_naive_datetime(t, None))
                }
                TimeUnit::Microsecond => {
                    ts(&|t| TimestampMicrosecondType::from_naive_datetime(t, None))
                }
                TimeUnit::Nanosecond => {
                    ts(&|t| TimestampNanosecondType::from_naive_datetime(t, None))
                }
            }?;
            retyped(&values, to)
        }
        _ => {
            // Each type parsed by its own `Parser`, as arrow-cast's string cast does.
            macro_rules! by_parser {
                ($($variant:ident => $parser:ty),*) => {
                    match to {
                        $(D::$variant => parsed::<$parser>(&text, safe, &fail),)*
                        _ => Err(unsupported(array.data_type(), to)),
                    }
                };
            }
            by_parser!(Int8 => Int8Type, Int16 => Int16Type, Int32 => Int32Type,
                Int64 => Int64Type, UInt8 => UInt8Type, UInt16 => UInt16Type,
                UInt32 => UInt32Type, UInt64 => UInt64Type, Float32 => Float32Type,
                Float64 => Float64Type, Date32 => Date32Type, Date64 => Date64Type)
        }
    }
}

/// Struct fields matched as arrow-cast matches them: in order when the names line up, by
/// name when every target field has a source, else by position.
fn structs(
    array: &StructArray,
    from: &Fields,
    to: &Fields,
    safe: bool,
) -> Result<ArrayRef, ArrowError> {
    let in_order = from.len() == to.len()
        && from
            .iter()
            .zip(to.iter())
            .all(|(a, b)| a.name() == b.name());
    let by_name = !in_order && to.iter().all(|t| from.iter().any(|f| f.name() == t.name()));
    let columns = if by_name {
        to.iter()
            .map(|t| {
                let i = from
                    .iter()
                    .position(|f| f.name() == t.name())
                    .unwrap_or_default();
                cast(array.column(i).as_ref(), t.data_type(), safe)
            })
            .collect::<Result<Vec<_>, _>>()?
    } else {
        array
            .columns()
            .iter()
            .zip(to.iter())
            .map(|(c, t)| cast(c.as_ref(), t.data_type(), safe))
            .collect::<Result<Vec<_>, _>>()?
    };
    Ok(Arc::new(StructArray::try_new(
        to.clone(),
        columns,
        array.nulls().cloned(),
    )?))
}

fn list<O: OffsetSizeTrait>(
    array: &dyn Array,
    field: &FieldRef,
    safe: bool,
) -> Result<ArrayRef, ArrowError> {
    let list = array.as_list::<O>();
    let values = cast(list.values().as_ref(), field.data_type(), safe)?;
    Ok(Arc::new(GenericListArray::<O>::try_new(
        field.clone(),
        list.offsets().clone(),
        values,
        list.nulls().cloned(),
    )?))
}

/// The words arrow-cast's string cast takes for booleans.
fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().trim() {
        "t" | "tr" | "tru" | "true" | "y" | "ye" | "yes" | "on" | "1" => Some(true),
        "f" | "fa" | "fal" | "fals" | "false" | "n" | "no" | "of" | "off" | "0" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::*;
    use arrow_schema::Field;

    fn inputs() -> Vec<ArrayRef> {
        let text = vec![
            Some("12"),
            None,
            Some("abc"),
            Some("-3.75"),
            Some("2024-06-11"),
            Some("2024-06-11T10:00:00Z"),
            Some("2024-06-11 10:00:00.123456"),
            Some("true"),
            Some("1e3"),
            Some(" 7 "),
            Some("99999999999999999999"),
            Some("0.125"),
        ];
        let ts = vec![
            Some(1_718_064_000_123_i64),
            None,
            Some(-1),
            Some(i64::MAX / 10),
        ];
        let struct_of = |a: ArrayRef, b: ArrayRef| -> ArrayRef {
            Arc::new(StructArray::from(vec![
                (Arc::new(Field::new("a", a.data_type().clone(), true)), a),
                (Arc::new(Field::new("b", b.data_type().clone(), true)), b),
            ]))
        };
        let list_of = |name: &str| -> ArrayRef {
            let values = Int32Array::from(vec![Some(1), None, Some(3), Some(4)]);
            Arc::new(ListArray::new(
                Arc::new(Field::new(name, DataType::Int32, true)),
                arrow_buffer::OffsetBuffer::new(vec![0, 2, 2, 4].into()),
                Arc::new(values),
                Some(vec![true, false, true].into()),
            ))
        };
        vec![
            Arc::new(NullArray::new(3)),
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
            Arc::new(Int8Array::from(vec![Some(-128), None, Some(127), Some(0)])),
            Arc::new(Int16Array::from(vec![Some(-300), None, Some(32767)])),
            Arc::new(Int32Array::from(vec![
                Some(i32::MIN),
                None,
                Some(12345),
                Some(-7),
            ])),
            Arc::new(Int64Array::from(vec![
                Some(i64::MAX),
                None,
                Some(-5),
                Some(3_000_000_000),
                Some(1 << 60),
            ])),
            Arc::new(UInt8Array::from(vec![Some(255), None])),
            Arc::new(UInt16Array::from(vec![Some(65535), None])),
            Arc::new(UInt32Array::from(vec![Some(u32::MAX), None])),
            Arc::new(Float32Array::from(vec![
                Some(1.5),
                None,
                Some(-0.0),
                Some(f32::NAN),
                Some(f32::MAX),
                Some(12.345),
            ])),
            Arc::new(Float64Array::from(vec![
                Some(1e300),
                None,
                Some(-2.5),
                Some(0.125),
                Some(f64::INFINITY),
                Some(123.456_789),
            ])),
            Arc::new(
                Decimal128Array::from(vec![Some(12345), None, Some(-99_999_999), Some(5)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(
                Decimal128Array::from(vec![Some(i128::MAX / 10_000), None, Some(-1)])
                    .with_precision_and_scale(38, 10)
                    .unwrap(),
            ),
            Arc::new(StringArray::from(text.clone())),
            Arc::new(LargeStringArray::from(text)),
            Arc::new(BinaryArray::from(vec![
                Some(&b"abc"[..]),
                None,
                Some(&b"\xff\xfe"[..]),
            ])),
            Arc::new(BinaryArray::from(vec![Some(&b"abc"[..]), None])),
            Arc::new(LargeBinaryArray::from(vec![Some(&b"abc"[..]), None])),
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    vec![Some(b"abc"), None].into_iter(),
                    3,
                )
                .unwrap(),
            ),
            Arc::new(Date32Array::from(vec![Some(19_885), None, Some(-1)])),
            Arc::new(Date64Array::from(vec![Some(1_718_064_000_000), None])),
            Arc::new(TimestampSecondArray::from(ts.clone())),
            Arc::new(TimestampMillisecondArray::from(ts.clone())),
            Arc::new(TimestampMicrosecondArray::from(ts.clone()).with_timezone("+00:00")),
            Arc::new(TimestampMicrosecondArray::from(ts.clone()).with_timezone("UTC")),
            Arc::new(TimestampNanosecondArray::from(ts.clone())),
            Arc::new(TimestampMillisecondArray::from(ts).with_timezone("+00:00")),
            Arc::new(Time32MillisecondArray::from(vec![Some(1_000), None])),
            Arc::new(Time64MicrosecondArray::from(vec![Some(1_000_000), None])),
            struct_of(
                Arc::new(Int32Array::from(vec![Some(1), None])),
                Arc::new(StringArray::from(vec![Some("x"), Some("y")])),
            ),
            list_of("element"),
            list_of("array"),
            Arc::new(
                vec![Some("a"), None, Some("12"), Some("a")]
                    .into_iter()
                    .collect::<DictionaryArray<Int32Type>>(),
            ),
        ]
    }

    fn targets() -> Vec<DataType> {
        use DataType as D;
        let item = |name: &str, t: DataType| Arc::new(Field::new(name, t, true));
        vec![
            D::Boolean,
            D::Int8,
            D::Int16,
            D::Int32,
            D::Int64,
            D::UInt32,
            D::Float32,
            D::Float64,
            D::Decimal128(5, 2),
            D::Decimal128(12, 0),
            D::Decimal128(38, 4),
            D::Decimal128(20, 12),
            D::Utf8,
            D::LargeUtf8,
            D::Binary,
            D::LargeBinary,
            D::Date32,
            D::Date64,
            D::Timestamp(TimeUnit::Millisecond, None),
            D::Timestamp(TimeUnit::Microsecond, None),
            D::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
            D::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            D::Timestamp(TimeUnit::Nanosecond, Some("+00:00".into())),
            D::Time64(TimeUnit::Microsecond),
            D::Struct(
                vec![
                    Field::new("a", D::Int64, true),
                    Field::new("b", D::Utf8, true),
                ]
                .into(),
            ),
            D::Struct(
                vec![
                    Field::new("b", D::Utf8, true),
                    Field::new("a", D::Float64, true),
                ]
                .into(),
            ),
            D::List(item("element", D::Int32)),
            D::List(item("element", D::Int64)),
            D::List(item("array", D::Float64)),
        ]
    }

    /// Every pair this cast takes gives what arrow-cast gives, values and nulls, in both
    /// modes; where it fails, arrow-cast fails too (or is the one lenient case below).
    #[test]
    fn every_pair_it_takes_matches_arrow_cast() {
        let mut taken = 0;
        for array in inputs() {
            for to in targets() {
                for safe in [true, false] {
                    let opts = arrow_cast::CastOptions {
                        safe,
                        ..Default::default()
                    };
                    let ours = cast(array.as_ref(), &to, safe);
                    let mut theirs = arrow_cast::cast_with_options(&array, &to, &opts);
                    if theirs
                        .as_ref()
                        .is_err_and(|e| e.to_string().contains("chrono-tz"))
                    {
                        // Without chrono-tz arrow-cast knows UTC only as +00:00; this cast
                        // takes both, and labels the result as asked.
                        let zero = relabel(&array, &plus_zero(array.data_type()));
                        theirs = arrow_cast::cast_with_options(&zero, &plus_zero(&to), &opts)
                            .map(|b| relabel(&b, &to));
                    }
                    let pair = format!("{} -> {to} (safe {safe})", array.data_type());
                    match (ours, theirs) {
                        (Ok(a), Ok(b)) => {
                            taken += 1;
                            assert_eq!(a.data_type(), b.data_type(), "{pair}");
                            assert_eq!(a.to_data(), b.to_data(), "{pair}: {a:?} vs {b:?}");
                        }
                        (Err(e), _) if e.to_string().contains("not supported") => {}
                        (Err(_), Err(_)) => taken += 1,
                        (Ok(a), Err(e)) => panic!("{pair}: ours {a:?}, arrow-cast: {e}"),
                        (Err(e), Ok(b)) => panic!("{pair}: ours failed ({e}), arrow-cast {b:?}"),
                    }
                }
            }
        }
        assert!(taken > 300, "only {taken} pairs compared");
    }

    fn plus_zero(t: &DataType) -> DataType {
        match t {
            DataType::Timestamp(u, Some(tz)) if tz.as_ref() == "UTC" => {
                DataType::Timestamp(*u, Some("+00:00".into()))
            }
            other => other.clone(),
        }
    }

    fn relabel(a: &ArrayRef, t: &DataType) -> ArrayRef {
        match (a.data_type(), t) {
            (DataType::Timestamp(..), DataType::Timestamp(..)) => make_array(
                a.to_data()
                    .into_builder()
                    .data_type(t.clone())
                    .build()
                    .unwrap(),
            ),
            _ => a.clone(),
        }
    }

    /// What reads rely on: Hudi's type promotions and the engine's own conversions.
    #[test]
    fn the_pairs_reads_need_are_taken() {
        use DataType as D;
        let ts = |u, tz: Option<&str>| D::Timestamp(u, tz.map(Into::into));
        let needed = [
            (D::Int32, D::Int64),
            (D::Int32, D::Float32),
            (D::Int32, D::Float64),
            (D::Int64, D::Float64),
            (D::Float32, D::Float64),
            (D::Int32, D::Decimal128(12, 2)),
            (D::Int64, D::Decimal128(38, 0)),
            (D::Float64, D::Decimal128(10, 3)),
            (D::Decimal128(10, 2), D::Decimal128(12, 4)),
            (D::Decimal128(10, 2), D::Float64),
            (D::Utf8, D::Binary),
            (D::Utf8, D::LargeBinary),
            (D::Binary, D::LargeUtf8),
            (D::FixedSizeBinary(4), D::Binary),
            (D::Int32, D::Int16),
            (
                D::Time32(TimeUnit::Millisecond),
                D::Time64(TimeUnit::Microsecond),
            ),
            (D::Binary, D::Utf8),
            (D::Utf8, D::Int32),
            (D::Utf8, D::Date32),
            (D::Utf8, D::Decimal128(10, 2)),
            (D::Utf8, ts(TimeUnit::Microsecond, Some("UTC"))),
            (D::Int64, D::Utf8),
            (D::Date32, D::Utf8),
            (D::Decimal128(10, 2), D::Utf8),
            (
                ts(TimeUnit::Nanosecond, None),
                ts(TimeUnit::Microsecond, Some("UTC")),
            ),
            (
                ts(TimeUnit::Millisecond, Some("+00:00")),
                ts(TimeUnit::Microsecond, Some("UTC")),
            ),
            (ts(TimeUnit::Microsecond, Some("UTC")), D::Int64),
        ];
        for (from, to) in needed {
            let array = new_null_array(&from, 2);
            assert!(cast(array.as_ref(), &to, false).is_ok(), "{from} -> {to}");
        }
    }

    #[test]
    fn a_pair_outside_the_set_is_a_clear_error() {
        let a = Int32Array::from(vec![1]);
        let e = cast(
            &a,
            &DataType::Interval(arrow_schema::IntervalUnit::DayTime),
            true,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("Int32") && e.contains("Interval"), "{e}");
    }

    #[test]
    fn text_becomes_a_utc_timestamp() {
        let a = StringArray::from(vec!["2024-06-11T10:00:00Z", "2024-06-11 10:00:00"]);
        let to = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let out = cast(&a, &to, false).unwrap();
        let ts = out.as_primitive::<TimestampMicrosecondType>();
        assert_eq!(
            ts.values().as_ref(),
            &[1_718_100_000_000_000, 1_718_100_000_000_000]
        );
        assert_eq!(out.data_type(), &to);
    }
}
