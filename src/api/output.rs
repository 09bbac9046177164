//! Rows out of the engine as text: JSON lines and CSV with Hudi-friendly value encodings
//! (decimals as strings with their scale, dates `YYYY-MM-DD`, timestamps ISO-8601 with
//! microseconds and `Z` when UTC-adjusted, binary as base64, maps as objects), and Arrow
//! IPC streams.

use std::io::Write;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, SchemaRef, TimeUnit};
use base64::Engine;
use chrono::{DateTime, NaiveDate};
use serde_json::{Map, Value};

use crate::error::{HudiError, Result};

fn out_err(e: impl std::fmt::Display) -> HudiError {
    HudiError::io("<output>", e)
}

/// How values that JSON has no type for are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JsonStyle {
    /// Binary as lowercase hex instead of base64.
    pub hex_binary: bool,
    /// Maps as `[[key, value], ...]` instead of objects.
    pub map_pairs: bool,
    /// Timestamp fraction digits by unit (ms: 3, us: 6) instead of always microseconds.
    pub fraction_by_unit: bool,
}

impl JsonStyle {
    /// The encoding of the shared fixtures' expected outputs (and of hudi-rs-based oracles).
    pub const ORACLE: JsonStyle = JsonStyle {
        hex_binary: true,
        map_pairs: true,
        fraction_by_unit: true,
    };
}

/// One JSON object per row, columns in schema order.
pub fn rows_as_json(batch: &RecordBatch) -> Vec<Map<String, Value>> {
    rows_as_json_with(batch, JsonStyle::default())
}

pub fn rows_as_json_with(batch: &RecordBatch, style: JsonStyle) -> Vec<Map<String, Value>> {
    let schema = batch.schema();
    (0..batch.num_rows())
        .map(|row| {
            schema
                .fields()
                .iter()
                .zip(batch.columns())
                .map(|(f, col)| (f.name().clone(), value_json_with(col.as_ref(), row, style)))
                .collect()
        })
        .collect()
}

pub fn write_jsonl(batches: &[RecordBatch], out: &mut dyn Write) -> Result<()> {
    for b in batches {
        for row in rows_as_json(b) {
            serde_json::to_writer(&mut *out, &row).map_err(out_err)?;
            out.write_all(b"\n").map_err(out_err)?;
        }
    }
    Ok(())
}

pub fn write_csv(schema: &SchemaRef, batches: &[RecordBatch], out: &mut dyn Write) -> Result<()> {
    let header: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| csv_field(f.name()))
        .collect();
    writeln!(out, "{}", header.join(",")).map_err(out_err)?;
    for b in batches {
        for row in 0..b.num_rows() {
            let cells: Vec<String> = b
                .columns()
                .iter()
                .map(|c| match value_json(c.as_ref(), row) {
                    Value::Null => String::new(),
                    Value::String(s) => csv_field(&s),
                    other => csv_field(&other.to_string()),
                })
                .collect();
            writeln!(out, "{}", cells.join(",")).map_err(out_err)?;
        }
    }
    Ok(())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn write_arrow_ipc(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    out: &mut dyn Write,
) -> Result<()> {
    let mut w = ArrowIpcWriter::new(schema, out)?;
    for b in batches {
        w.write(b)?;
    }
    w.finish()
}

/// An Arrow IPC stream written batch by batch as the batches arrive.
pub struct ArrowIpcWriter<W: Write>(arrow_ipc::writer::StreamWriter<W>);

impl<W: Write> ArrowIpcWriter<W> {
    pub fn new(schema: &SchemaRef, out: W) -> Result<Self> {
        Ok(ArrowIpcWriter(
            arrow_ipc::writer::StreamWriter::try_new(out, schema).map_err(out_err)?,
        ))
    }

    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.0.write(batch).map_err(out_err)
    }

    /// The end-of-stream marker.
    pub fn finish(&mut self) -> Result<()> {
        self.0.finish().map_err(out_err)
    }
}

/// An Arrow IPC stream written piece by piece: the schema message, then each batch's message,
/// then the end marker, each lent as soon as it is written (so a caller can hand it on and
/// drop the batch instead of holding the whole result twice). One buffer serves every piece:
/// a new one per batch would regrow by doubling each time, raising wasm's high-water mark.
pub struct IpcPieces {
    writer: arrow_ipc::writer::StreamWriter<Vec<u8>>,
}

impl IpcPieces {
    /// The writer and the schema message.
    pub fn new(schema: &SchemaRef) -> Result<(IpcPieces, Vec<u8>)> {
        let mut writer =
            arrow_ipc::writer::StreamWriter::try_new(Vec::new(), schema).map_err(out_err)?;
        let head = std::mem::take(writer.get_mut());
        Ok((IpcPieces { writer }, head))
    }

    /// The message of one batch, valid until the next call.
    pub fn batch(&mut self, batch: &RecordBatch) -> Result<&[u8]> {
        self.writer.get_mut().clear();
        self.writer.write(batch).map_err(out_err)?;
        Ok(self.writer.get_ref())
    }

    /// The end-of-stream marker.
    pub fn finish(mut self) -> Result<Vec<u8>> {
        self.writer.get_mut().clear();
        self.writer.finish().map_err(out_err)?;
        Ok(std::mem::take(self.writer.get_mut()))
    }
}

/// Arrow IPC stream bytes (what the JS face hands to apache-arrow).
pub fn arrow_ipc_bytes(schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    write_arrow_ipc(schema, batches, &mut buf)?;
    Ok(buf)
}

/// JSON has no NaN or infinities: they are text, spelled as Java, Spark and JS spell them
/// (Rust's own "inf" reads back as NaN in JS's `Number()`).
fn float(v: f64) -> Value {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or_else(|| {
            let text = match v {
                f64::INFINITY => "Infinity",
                f64::NEG_INFINITY => "-Infinity",
                _ => "NaN",
            };
            Value::String(text.into())
        })
}

fn timestamp(value: i64, unit: &TimeUnit, utc: bool, by_unit: bool) -> Value {
    let (secs, nanos) = match unit {
        TimeUnit::Second => (value, 0),
        TimeUnit::Millisecond => (value.div_euclid(1_000), value.rem_euclid(1_000) * 1_000_000),
        TimeUnit::Microsecond => (
            value.div_euclid(1_000_000),
            value.rem_euclid(1_000_000) * 1_000,
        ),
        TimeUnit::Nanosecond => (
            value.div_euclid(1_000_000_000),
            value.rem_euclid(1_000_000_000),
        ),
    };
    match DateTime::from_timestamp(secs, nanos as u32) {
        Some(dt) => {
            let fraction = match (unit, by_unit) {
                (TimeUnit::Nanosecond, _) => "%.9f",
                (TimeUnit::Second, true) => "",
                (TimeUnit::Millisecond, true) => "%.3f",
                _ => "%.6f",
            };
            let text = dt
                .naive_utc()
                .format(&format!("%Y-%m-%dT%H:%M:%S{fraction}"))
                .to_string();
            Value::String(if utc { format!("{text}Z") } else { text })
        }
        None => Value::from(value),
    }
}

fn decimal(unscaled: String, scale: i8) -> Value {
    let negative = unscaled.starts_with('-');
    let digits = unscaled.trim_start_matches('-');
    if scale <= 0 {
        let zeros = "0".repeat((-scale) as usize);
        return Value::String(format!(
            "{}{digits}{zeros}",
            if negative { "-" } else { "" }
        ));
    }
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    Value::String(format!("{}{int}.{frac}", if negative { "-" } else { "" }))
}

/// The JSON value of one cell.
pub fn value_json(array: &dyn Array, row: usize) -> Value {
    value_json_with(array, row, JsonStyle::default())
}

pub fn value_json_with(array: &dyn Array, row: usize, style: JsonStyle) -> Value {
    let value_json = |a: &dyn Array, r: usize| value_json_with(a, r, style);
    let list =
        |a: &dyn Array| Value::Array((0..a.len()).map(|i| value_json_with(a, i, style)).collect());
    let b64 = |b: &[u8]| binary(b, style);
    let timestamp =
        |v: i64, unit: &TimeUnit, utc: bool| timestamp(v, unit, utc, style.fraction_by_unit);
    if array.is_null(row) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(array.as_boolean().value(row)),
        DataType::Int8 => Value::from(array.as_primitive::<Int8Type>().value(row)),
        DataType::Int16 => Value::from(array.as_primitive::<Int16Type>().value(row)),
        DataType::Int32 => Value::from(array.as_primitive::<Int32Type>().value(row)),
        DataType::Int64 => Value::from(array.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Value::from(array.as_primitive::<UInt8Type>().value(row)),
        DataType::UInt16 => Value::from(array.as_primitive::<UInt16Type>().value(row)),
        DataType::UInt32 => Value::from(array.as_primitive::<UInt32Type>().value(row)),
        DataType::UInt64 => Value::from(array.as_primitive::<UInt64Type>().value(row)),
        DataType::Float16 => float(array.as_primitive::<Float16Type>().value(row).to_f64()),
        DataType::Float32 => float(array.as_primitive::<Float32Type>().value(row) as f64),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(row)),
        DataType::Decimal128(_, s) => decimal(
            array
                .as_primitive::<Decimal128Type>()
                .value(row)
                .to_string(),
            *s,
        ),
        DataType::Decimal256(_, s) => decimal(
            array
                .as_primitive::<Decimal256Type>()
                .value(row)
                .to_string(),
            *s,
        ),
        DataType::Date32 => {
            let days = array.as_primitive::<Date32Type>().value(row);
            match NaiveDate::from_num_days_from_ce_opt(days + 719_163) {
                Some(d) => Value::String(d.format("%Y-%m-%d").to_string()),
                None => Value::from(days),
            }
        }
        DataType::Date64 => timestamp(
            array.as_primitive::<Date64Type>().value(row),
            &TimeUnit::Millisecond,
            false,
        ),
        DataType::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row)
                }
                TimeUnit::Microsecond => {
                    array.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
            };
            timestamp(v, unit, tz.is_some())
        }
        DataType::Time32(TimeUnit::Millisecond) => {
            Value::from(array.as_primitive::<Time32MillisecondType>().value(row))
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            Value::from(array.as_primitive::<Time64MicrosecondType>().value(row))
        }
        DataType::Utf8 => Value::String(array.as_string::<i32>().value(row).to_string()),
        DataType::LargeUtf8 => Value::String(array.as_string::<i64>().value(row).to_string()),
        DataType::Utf8View => Value::String(array.as_string_view().value(row).to_string()),
        DataType::Binary => b64(array.as_binary::<i32>().value(row)),
        DataType::LargeBinary => b64(array.as_binary::<i64>().value(row)),
        DataType::BinaryView => b64(array.as_binary_view().value(row)),
        DataType::FixedSizeBinary(_) => b64(array.as_fixed_size_binary().value(row)),
        DataType::Struct(fields) => {
            let s = array.as_struct();
            Value::Object(
                fields
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| (f.name().clone(), value_json(c.as_ref(), row)))
                    .collect(),
            )
        }
        DataType::List(_) => list(array.as_list::<i32>().value(row).as_ref()),
        DataType::LargeList(_) => list(array.as_list::<i64>().value(row).as_ref()),
        DataType::FixedSizeList(_, _) => list(array.as_fixed_size_list().value(row).as_ref()),
        DataType::Map(_, _) if style.map_pairs => {
            let entries = array.as_map().value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            Value::Array(
                (0..entries.len())
                    .map(|i| {
                        Value::Array(vec![
                            value_json(keys.as_ref(), i),
                            value_json(values.as_ref(), i),
                        ])
                    })
                    .collect(),
            )
        }
        DataType::Map(_, _) => {
            let entries = array.as_map().value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            Value::Object(
                (0..entries.len())
                    .map(|i| {
                        let k = match value_json(keys.as_ref(), i) {
                            Value::String(s) => s,
                            other => other.to_string(),
                        };
                        (k, value_json(values.as_ref(), i))
                    })
                    .collect(),
            )
        }
        DataType::Dictionary(_, _) => {
            let typed = crate::cast::cast(array.slice(row, 1).as_ref(), &DataType::Utf8, true);
            typed
                .map(|a| value_json(a.as_ref(), 0))
                .unwrap_or(Value::Null)
        }
        other => Value::String(format!("<{other}>")),
    }
}

fn binary(bytes: &[u8], style: JsonStyle) -> Value {
    if style.hex_binary {
        Value::String(bytes.iter().map(|b| format!("{b:02x}")).collect())
    } else {
        Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_floats_are_spelled_as_java_and_js_do() {
        let spelled: Vec<Value> = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1.5]
            .map(float)
            .into();
        assert_eq!(
            spelled,
            [
                Value::String("NaN".into()),
                Value::String("Infinity".into()),
                Value::String("-Infinity".into()),
                serde_json::json!(1.5)
            ]
        );
    }

    #[test]
    fn formats_decimals_and_times() {
        assert_eq!(decimal("125000".into(), 2), Value::String("1250.00".into()));
        assert_eq!(decimal("-5".into(), 2), Value::String("-0.05".into()));
        assert_eq!(
            timestamp(1_705_336_200_000_000, &TimeUnit::Microsecond, true, false),
            Value::String("2024-01-15T16:30:00.000000Z".into())
        );
    }
}
