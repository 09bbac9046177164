//! Before and after images as the JSON strings Spark's change-feed query returns
//! (docs/hudi-services.md, "CDC"). Spark renders them two ways, and both are kept:
//!
//! * [`spark_json`]: rows read from base and log files go through Spark's Jackson converter
//!   — compact, null fields left out, dates as days, timestamps as microseconds, decimals as
//!   the bean Jackson makes of Spark's `Decimal` (`{"zero":false}`), doubles as Java prints them.
//! * [`avro_json`]: images stored in CDC log files go through Avro's `GenericData.toString`
//!   — `", "` and `": "` separators, nulls kept, decimals as their bytes.

use std::collections::HashMap;
use std::fmt::Write;

use crate::avro::binary::i128_to_be_min;
use crate::timeline::write::quote;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, StructArray};
use arrow_schema::{DataType, TimeUnit};

/// Row `row` of `columns` as Spark's Jackson converter writes it.
pub fn spark_json(columns: &StructArray, row: usize) -> String {
    let mut out = String::new();
    spark_struct(columns, row, &mut out);
    out
}

/// Row `row` of a struct column as Avro's `GenericData.toString` writes the record;
/// `fixed` names the record's decimal fields stored as Avro `fixed` (and their sizes), whose
/// bytes print as a list of signed numbers rather than a `{"bytes": …}` string.
pub fn avro_json(record: &StructArray, row: usize, fixed: &HashMap<String, usize>) -> String {
    let mut out = String::new();
    if record.is_null(row) {
        out.push_str("null");
        return out;
    }
    out.push('{');
    for (i, (field, column)) in record.fields().iter().zip(record.columns()).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        quote(field.name(), &mut out);
        out.push_str(": ");
        match fixed.get(field.name()) {
            Some(&size) if !column.is_null(row) => avro_fixed(column.as_ref(), row, size, &mut out),
            _ => avro_value(column.as_ref(), row, &mut out),
        }
    }
    out.push('}');
    out
}

/// The decimal fields of an Avro record schema stored as `fixed`, with their sizes.
pub fn fixed_decimals(record: &serde_json::Value) -> HashMap<String, usize> {
    let fields = record.get("fields").and_then(|f| f.as_array());
    let mut out = HashMap::new();
    for field in fields.into_iter().flatten() {
        let types = match &field["type"] {
            serde_json::Value::Array(branches) => branches.clone(),
            t => vec![t.clone()],
        };
        for t in types {
            if t["type"] == "fixed" && t["logicalType"] == "decimal" {
                if let (Some(name), Some(size)) = (field["name"].as_str(), t["size"].as_u64()) {
                    out.insert(name.to_string(), size as usize);
                }
            }
        }
    }
    out
}

/// A decimal as `GenericData.toString` prints a `fixed`: its signed bytes, big-endian.
fn avro_fixed(a: &dyn Array, row: usize, size: usize, out: &mut String) {
    let bytes: Vec<u8> = match a.data_type() {
        DataType::Decimal128(..) => a
            .as_primitive::<Decimal128Type>()
            .value(row)
            .to_be_bytes()
            .to_vec(),
        DataType::Decimal256(..) => a
            .as_primitive::<Decimal256Type>()
            .value(row)
            .to_be_bytes()
            .to_vec(),
        _ => return avro_value(a, row, out),
    };
    let tail = &bytes[bytes.len().saturating_sub(size)..];
    out.push('[');
    for (i, b) in tail.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push(out, *b as i8);
    }
    out.push(']');
}

fn spark_struct(s: &StructArray, row: usize, out: &mut String) {
    out.push('{');
    let mut first = true;
    for (field, column) in s.fields().iter().zip(s.columns()) {
        if column.is_null(row) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        quote(field.name(), out);
        out.push(':');
        spark_value(column.as_ref(), row, out);
    }
    out.push('}');
}

fn spark_value(a: &dyn Array, row: usize, out: &mut String) {
    if a.is_null(row) {
        out.push_str("null");
        return;
    }
    match a.data_type() {
        DataType::Decimal128(..) => {
            let zero = a.as_primitive::<Decimal128Type>().value(row) == 0;
            let _ = write!(out, "{{\"zero\":{zero}}}");
        }
        DataType::Decimal256(..) => {
            let zero = a.as_primitive::<Decimal256Type>().value(row) == arrow_buffer::i256::ZERO;
            let _ = write!(out, "{{\"zero\":{zero}}}");
        }
        DataType::Binary | DataType::LargeBinary | DataType::FixedSizeBinary(_) => {
            let bytes = binary(a, row);
            quote(&base64(&bytes), out);
        }
        DataType::Struct(_) => spark_struct(a.as_struct(), row, out),
        DataType::List(_) | DataType::LargeList(_) => {
            let items = list_item(a, row);
            out.push('[');
            for i in 0..items.len() {
                if i > 0 {
                    out.push(',');
                }
                spark_value(items.as_ref(), i, out);
            }
            out.push(']');
        }
        DataType::Map(..) => {
            let map = a.as_map();
            let entries = map.value(row);
            out.push('{');
            let mut first = true;
            for i in 0..entries.len() {
                if entries.column(1).is_null(i) {
                    continue;
                }
                if !first {
                    out.push(',');
                }
                first = false;
                quote(&map_key(entries.column(0).as_ref(), i), out);
                out.push(':');
                spark_value(entries.column(1).as_ref(), i, out);
            }
            out.push('}');
        }
        _ => scalar(a, row, out),
    }
}

fn avro_value(a: &dyn Array, row: usize, out: &mut String) {
    if a.is_null(row) {
        out.push_str("null");
        return;
    }
    match a.data_type() {
        DataType::Struct(_) => {
            let s = a.as_struct();
            out.push('{');
            for (i, (field, column)) in s.fields().iter().zip(s.columns()).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                quote(field.name(), out);
                out.push_str(": ");
                avro_value(column.as_ref(), row, out);
            }
            out.push('}');
        }
        DataType::List(_) | DataType::LargeList(_) => {
            let items = list_item(a, row);
            out.push('[');
            for i in 0..items.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                avro_value(items.as_ref(), i, out);
            }
            out.push(']');
        }
        DataType::Map(..) => {
            let map = a.as_map();
            let entries = map.value(row);
            out.push('{');
            for i in 0..entries.len() {
                if i > 0 {
                    out.push_str(", ");
                }
                quote(&map_key(entries.column(0).as_ref(), i), out);
                out.push_str(": ");
                avro_value(entries.column(1).as_ref(), i, out);
            }
            out.push('}');
        }
        DataType::Decimal128(..) | DataType::Decimal256(..) => {
            // Avro keeps a decimal as its big-endian two's-complement bytes.
            let bytes = match a.data_type() {
                DataType::Decimal128(..) => {
                    i128_to_be_min(a.as_primitive::<Decimal128Type>().value(row))
                }
                _ => {
                    let v = a.as_primitive::<Decimal256Type>().value(row);
                    match v.to_i128() {
                        Some(small) => i128_to_be_min(small),
                        None => v.to_be_bytes().to_vec(),
                    }
                }
            };
            avro_bytes(&bytes, out);
        }
        DataType::Binary | DataType::LargeBinary | DataType::FixedSizeBinary(_) => {
            avro_bytes(&binary(a, row), out);
        }
        DataType::Float32 | DataType::Float64 => {
            // GenericData writes non-finite numbers bare, finite ones as Java prints them.
            let v = match a.data_type() {
                DataType::Float32 => a.as_primitive::<Float32Type>().value(row) as f64,
                _ => a.as_primitive::<Float64Type>().value(row),
            };
            match v {
                v if v.is_nan() => out.push_str("NaN"),
                v if v.is_infinite() && v > 0.0 => out.push_str("Infinity"),
                v if v.is_infinite() => out.push_str("-Infinity"),
                _ => scalar(a, row, out),
            }
        }
        _ => scalar(a, row, out),
    }
}

/// Strings, numbers, booleans, dates and timestamps: written alike by both renderings.
fn scalar(a: &dyn Array, row: usize, out: &mut String) {
    match a.data_type() {
        DataType::Utf8 => quote(a.as_string::<i32>().value(row), out),
        DataType::LargeUtf8 => quote(a.as_string::<i64>().value(row), out),
        DataType::Utf8View => quote(a.as_string_view().value(row), out),
        DataType::Boolean => {
            let _ = write!(out, "{}", a.as_boolean().value(row));
        }
        DataType::Int8 => push(out, a.as_primitive::<Int8Type>().value(row)),
        DataType::Int16 => push(out, a.as_primitive::<Int16Type>().value(row)),
        DataType::Int32 => push(out, a.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => push(out, a.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => push(out, a.as_primitive::<UInt8Type>().value(row)),
        DataType::UInt16 => push(out, a.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt32 => push(out, a.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => push(out, a.as_primitive::<UInt64Type>().value(row)),
        DataType::Float32 => float(a.as_primitive::<Float32Type>().value(row) as f64, true, out),
        DataType::Float64 => float(a.as_primitive::<Float64Type>().value(row), false, out),
        DataType::Date32 => push(out, a.as_primitive::<Date32Type>().value(row)),
        DataType::Date64 => push(
            out,
            a.as_primitive::<Date64Type>()
                .value(row)
                .div_euclid(86_400_000),
        ),
        DataType::Timestamp(unit, _) => {
            let micros = match unit {
                TimeUnit::Second => a.as_primitive::<TimestampSecondType>().value(row) * 1_000_000,
                TimeUnit::Millisecond => {
                    a.as_primitive::<TimestampMillisecondType>().value(row) * 1_000
                }
                TimeUnit::Microsecond => a.as_primitive::<TimestampMicrosecondType>().value(row),
                TimeUnit::Nanosecond => {
                    a.as_primitive::<TimestampNanosecondType>().value(row) / 1_000
                }
            };
            push(out, micros)
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            push(out, a.as_primitive::<Time64MicrosecondType>().value(row))
        }
        DataType::Time32(TimeUnit::Millisecond) => {
            push(out, a.as_primitive::<Time32MillisecondType>().value(row))
        }
        _ => {
            // Types Hudi tables do not carry: their display form, quoted.
            let shown = arrow_cast::display::array_value_to_string(a, row).unwrap_or_default();
            quote(&shown, out)
        }
    }
}

fn push(out: &mut String, v: impl std::fmt::Display) {
    let _ = write!(out, "{v}");
}

fn binary(a: &dyn Array, row: usize) -> Vec<u8> {
    match a.data_type() {
        DataType::Binary => a.as_binary::<i32>().value(row).to_vec(),
        DataType::LargeBinary => a.as_binary::<i64>().value(row).to_vec(),
        _ => a.as_fixed_size_binary().value(row).to_vec(),
    }
}

fn list_item(a: &dyn Array, row: usize) -> arrow_array::ArrayRef {
    match a.data_type() {
        DataType::LargeList(_) => a.as_list::<i64>().value(row),
        _ => a.as_list::<i32>().value(row),
    }
}

fn map_key(keys: &dyn Array, i: usize) -> String {
    match keys.data_type() {
        DataType::Utf8 => keys.as_string::<i32>().value(i).to_string(),
        DataType::LargeUtf8 => keys.as_string::<i64>().value(i).to_string(),
        _ => arrow_cast::display::array_value_to_string(keys, i).unwrap_or_default(),
    }
}

/// `GenericData.toString` of bytes: `{"bytes": "…"}`, each byte as a character.
fn avro_bytes(bytes: &[u8], out: &mut String) {
    out.push_str("{\"bytes\": ");
    let text: String = bytes.iter().map(|&b| b as char).collect();
    quote(&text, out);
    out.push('}');
}

/// A float as Java's `Double.toString` / `Float.toString` prints it, as Jackson writes it
/// (non-finite values as strings).
fn float(v: f64, single: bool, out: &mut String) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
        return;
    }
    if v.is_infinite() {
        out.push_str(if v > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
        return;
    }
    out.push_str(&java_float_string(v, single));
}

/// Java's decimal form between 10^-3 and 10^7, "computerized" scientific form outside,
/// always with a digit after the point; the shortest digits that read back the same.
pub fn java_float_string(v: f64, single: bool) -> String {
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    let sci = if single {
        format!("{:e}", v as f32)
    } else {
        format!("{v:e}")
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if negative { "-" } else { "" };
    if (-3..7).contains(&exp) {
        let point = exp + 1;
        let (int, frac) = if point <= 0 {
            (
                "0".to_string(),
                format!("{}{digits}", "0".repeat((-point) as usize)),
            )
        } else if point as usize >= digits.len() {
            (
                format!("{digits}{}", "0".repeat(point as usize - digits.len())),
                String::new(),
            )
        } else {
            (
                digits[..point as usize].to_string(),
                digits[point as usize..].to_string(),
            )
        };
        let frac = if frac.is_empty() {
            "0".to_string()
        } else {
            frac
        };
        format!("{sign}{int}.{frac}")
    } else {
        let rest = if digits.len() > 1 { &digits[1..] } else { "0" };
        format!("{sign}{}.{rest}E{exp}", &digits[..1])
    }
}

/// Standard base64 with padding (Jackson's binary form).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_java_does() {
        let cases = [
            (13.0, "13.0"),
            (3.25, "3.25"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1e7, "1.0E7"),
            (1234567.5, "1234567.5"),
            (12345678.9, "1.23456789E7"),
            (-0.5, "-0.5"),
            (100.0, "100.0"),
        ];
        for (v, want) in cases {
            assert_eq!(java_float_string(v, false), want, "{v}");
        }
        assert_eq!(java_float_string(0.1f32 as f64, true), "0.1");
    }

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }
}
