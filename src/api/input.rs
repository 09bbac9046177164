//! Rows handed to a write, decoded into Arrow against the table's schema: JSON lines (the
//! value encoding `read --format jsonl` prints), CSV with a header, Parquet, Arrow IPC.

use std::io::Cursor;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::Arc;

use arrow_array::RecordBatch;
#[cfg(not(target_arch = "wasm32"))]
use arrow_schema::SchemaRef;
#[cfg(not(target_arch = "wasm32"))]
use bytes::Bytes;

use crate::error::{HudiError, Result};
#[cfg(not(target_arch = "wasm32"))]
use crate::write::limits::InputLimits;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    Jsonl,
    Csv,
    Parquet,
    Arrow,
}

impl InputFormat {
    pub fn parse(s: &str) -> Result<InputFormat> {
        match s.to_ascii_lowercase().as_str() {
            "jsonl" | "json" | "ndjson" => Ok(InputFormat::Jsonl),
            "csv" => Ok(InputFormat::Csv),
            "parquet" => Ok(InputFormat::Parquet),
            "arrow" | "ipc" | "arrows" => Ok(InputFormat::Arrow),
            other => Err(HudiError::invalid(format!(
                "unknown input format {other:?} (jsonl, csv, parquet, arrow)"
            ))),
        }
    }

    /// From a file name's extension; JSON lines otherwise.
    pub fn of_path(path: &str) -> InputFormat {
        let ext = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
        match ext.as_str() {
            "csv" => InputFormat::Csv,
            "parquet" => InputFormat::Parquet,
            "arrow" | "arrows" | "ipc" | "feather" => InputFormat::Arrow,
            _ => InputFormat::Jsonl,
        }
    }
}

/// Decodes `bytes`; `schema` (the table's, meta columns included) types JSON and CSV
/// values. Parquet and Arrow carry their own types (checked when the write aligns them).
#[cfg(not(target_arch = "wasm32"))]
pub fn decode_rows(
    bytes: Bytes,
    format: InputFormat,
    schema: &SchemaRef,
    source: &str,
    limits: &InputLimits,
) -> Result<Vec<RecordBatch>> {
    let bad = |e: &dyn std::fmt::Display| HudiError::invalid_input(format!("{source}: {e}"));
    let schema = &offset_time_zones(schema);
    limits.check_input(bytes.len() as u64, source)?;
    match format {
        InputFormat::Jsonl => {
            let depth = crate::write::limits::json_depth_bound(schema);
            let lines = limits.check_lines(&bytes, Some(depth), source)?;
            // Binary is base64 text in `read --format jsonl`: read as text, decoded below.
            // The decoder reserves (4 × columns + 2) words a row up front, so many short lines
            // (hostile or not) get several batches, that reserve bounded by the input's size;
            // and it holds a batch's text again (its tape), so a batch is a bounded number of
            // rows, not the whole input twice (the write combines the batches once).
            let reserved_per_row = (4 * schema.fields().len() + 2) * 8;
            let batch_rows = lines
                .min((bytes.len() / reserved_per_row).max(1024))
                .min(JSON_BATCH_ROWS);
            let reader = arrow_json::ReaderBuilder::new(binary_as_text(schema))
                .with_strict_mode(true)
                .with_batch_size(batch_rows)
                .build(Cursor::new(bytes))
                .map_err(|e| bad(&e))?;
            let batches = reader
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| bad(&e))?;
            batches
                .iter()
                .map(|b| base64_columns(b, schema).map_err(|e| bad(&e)))
                .collect()
        }
        InputFormat::Csv => {
            let lines = limits.check_lines(&bytes, None, source)?;
            let header = csv_header(&bytes);
            let fields: Vec<_> = header
                .iter()
                .map(|name| {
                    schema
                        .field_with_name(name)
                        .cloned()
                        .map_err(|_| bad(&format!("column {name:?} is not in the table's schema")))
                })
                .collect::<Result<_>>()?;
            let columns = fields.len();
            let reader = arrow_csv::ReaderBuilder::new(Arc::new(arrow_schema::Schema::new(fields)))
                .with_header(true)
                // As for JSON: the decoder reserves a few words per row and column.
                .with_batch_size(lines.min((bytes.len() / ((columns + 1) * 16)).max(1024)))
                .build(Cursor::new(bytes))
                .map_err(|e| bad(&e))?;
            reader
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| bad(&e))
        }
        // Through the table files' checks: the crate alone panics on some damage.
        InputFormat::Parquet => {
            let batches = crate::base_file::decode_in_memory(bytes, source, "bad Parquet")
                .map_err(|e| match e {
                    HudiError::Corrupt { reason, .. } => bad(&reason),
                    other => other,
                })?;
            limits.check_batches(&batches, source)?;
            Ok(batches)
        }
        InputFormat::Arrow => {
            let batches = decode_arrow_ipc(&bytes).map_err(|e| bad(&e))?;
            limits.check_batches(&batches, source)?;
            Ok(batches)
        }
    }
}

/// Rows the JSON decoder takes at a time.
#[cfg(not(target_arch = "wasm32"))]
const JSON_BATCH_ROWS: usize = 16 * 1024;

/// The JSON and CSV decoders know offsets, not zone names (no tz database): `UTC` as
/// `+00:00`; the write converts back to the table's type.
#[cfg(not(target_arch = "wasm32"))]
fn offset_time_zones(schema: &SchemaRef) -> SchemaRef {
    use arrow_schema::{DataType, Field};
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Timestamp(unit, Some(tz)) if tz.eq_ignore_ascii_case("UTC") => f
                .as_ref()
                .clone()
                .with_data_type(DataType::Timestamp(*unit, Some("+00:00".into()))),
            _ => f.as_ref().clone(),
        })
        .collect();
    Arc::new(arrow_schema::Schema::new(fields))
}

#[cfg(not(target_arch = "wasm32"))]
fn is_binary(t: &arrow_schema::DataType) -> bool {
    use arrow_schema::DataType::*;
    matches!(t, Binary | LargeBinary | FixedSizeBinary(_))
}

#[cfg(not(target_arch = "wasm32"))]
fn binary_as_text(schema: &SchemaRef) -> SchemaRef {
    let fields: Vec<arrow_schema::Field> = schema
        .fields()
        .iter()
        .map(|f| match is_binary(f.data_type()) {
            true => f
                .as_ref()
                .clone()
                .with_data_type(arrow_schema::DataType::Utf8),
            false => f.as_ref().clone(),
        })
        .collect();
    Arc::new(arrow_schema::Schema::new(fields))
}

/// Base64 text columns back to binary.
#[cfg(not(target_arch = "wasm32"))]
fn base64_columns(
    batch: &RecordBatch,
    schema: &SchemaRef,
) -> std::result::Result<RecordBatch, String> {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    use base64::Engine;
    let mut columns = batch.columns().to_vec();
    for (i, field) in schema.fields().iter().enumerate() {
        if !is_binary(field.data_type()) {
            continue;
        }
        let text = columns[i].as_string::<i32>();
        let mut values: Vec<Option<Vec<u8>>> = Vec::with_capacity(text.len());
        for (row, v) in text.iter().enumerate() {
            values.push(
                v.map(|s| {
                    base64::engine::general_purpose::STANDARD
                        .decode(s)
                        .map_err(|e| {
                            format!("row {row}, column {:?}: not base64: {e}", field.name())
                        })
                })
                .transpose()?,
            );
        }
        let binary = arrow_array::BinaryArray::from_iter(values);
        columns[i] = arrow_cast::cast(&binary, field.data_type()).map_err(|e| e.to_string())?;
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
}

/// A reader of Arrow IPC, file or stream format (what apache-arrow's `tableToIPC` makes).
fn ipc_reader(
    bytes: &[u8],
) -> std::result::Result<Box<dyn arrow_array::RecordBatchReader + '_>, String> {
    super::ipc::check_bounds(bytes)?;
    let cursor = Cursor::new(bytes);
    Ok(if bytes.starts_with(b"ARROW1") {
        Box::new(arrow_ipc::reader::FileReader::try_new(cursor, None).map_err(|e| e.to_string())?)
    } else {
        Box::new(arrow_ipc::reader::StreamReader::try_new(cursor, None).map_err(|e| e.to_string())?)
    })
}

/// The schema of Arrow IPC bytes (batches not needed).
pub fn arrow_ipc_schema(bytes: &[u8]) -> std::result::Result<arrow_schema::Schema, String> {
    Ok(ipc_reader(bytes)?.schema().as_ref().clone())
}

/// The batches of Arrow IPC bytes.
pub fn decode_arrow_ipc(bytes: &[u8]) -> std::result::Result<Vec<RecordBatch>, String> {
    ipc_reader(bytes)?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

#[cfg(not(target_arch = "wasm32"))]
fn csv_header(bytes: &[u8]) -> Vec<String> {
    let line = bytes.split(|b| *b == b'\n').next().unwrap_or(&[]);
    String::from_utf8_lossy(line)
        .trim_end_matches('\r')
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .collect()
}

/// Rows as JavaScript hands them over (apache-arrow's `tableFromJSON`: numbers as Float64,
/// strings dictionary-encoded, binary as the base64 text `rows()` gives) in the table's
/// types where no value changes. Other columns pass as they are: the write checks them.
pub fn js_types(
    batches: Vec<RecordBatch>,
    table: &arrow_schema::Schema,
) -> Result<Vec<RecordBatch>> {
    batches
        .into_iter()
        .map(|batch| {
            let schema = batch.schema();
            let mut fields = Vec::with_capacity(schema.fields().len());
            let mut columns = Vec::with_capacity(schema.fields().len());
            for (field, column) in schema.fields().iter().zip(batch.columns()) {
                let column = match table.field_with_name(field.name()) {
                    Ok(to) => js_column(column, to.data_type()).map_err(|e| {
                        HudiError::invalid_input(format!("column {:?}: {e}", field.name()))
                    })?,
                    Err(_) => column.clone(),
                };
                fields.push(
                    field
                        .as_ref()
                        .clone()
                        .with_data_type(column.data_type().clone()),
                );
                columns.push(column);
            }
            let schema = std::sync::Arc::new(arrow_schema::Schema::new(fields));
            RecordBatch::try_new(schema, columns)
                .map_err(|e| HudiError::invalid_input(e.to_string()))
        })
        .collect()
}

/// JavaScript's `Number.MAX_SAFE_INTEGER` (2^53 − 1): past it a double stands for many integers.
pub(crate) const JS_MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

fn js_column(
    column: &arrow_array::ArrayRef,
    to: &arrow_schema::DataType,
) -> std::result::Result<arrow_array::ArrayRef, String> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Float64Type;
    use arrow_array::Array;
    use arrow_schema::DataType::*;
    let cast = |c: &dyn Array, t: &arrow_schema::DataType| {
        arrow_cast::cast(c, t).map_err(|e| e.to_string())
    };
    let mut column = column.clone();
    // Dictionaries unpack without changing a value.
    if let Dictionary(_, value) = column.data_type() {
        let value = value.as_ref().clone();
        column = cast(&column, &value)?;
    }
    match (column.data_type(), to) {
        (Float64, Int8 | Int16 | Int32 | Int64) => {
            // JS numbers are doubles: whole ones in range are the integers meant.
            let values = column.as_primitive::<Float64Type>();
            let ints = cast(values, to)?;
            for row in 0..values.len() {
                let v = values.value(row);
                if values.is_valid(row) && (v.fract() != 0.0 || ints.is_null(row)) {
                    return Err(format!("row {row}: {v} is not a {to} value"));
                }
                // JSON.parse already rounded 9007199254740993: which integer was meant is lost.
                if values.is_valid(row) && v.abs() > JS_MAX_SAFE_INTEGER as f64 {
                    return Err(format!(
                        "row {row}: {v} is beyond JavaScript's safe integers: pass it as a bigint or a string"
                    ));
                }
            }
            Ok(ints)
        }
        // What `Math.fround` / a Float32Array does to a JS number.
        (Float64, Float32) => cast(&column, to),
        // A JS number is the decimal its shortest text spells (what JSON.parse read, exactly
        // for up to 15 significant digits); that text then converts as a decimal string does.
        // Scaling the double instead would turn 1.005 into 1.00 at scale 2 (it is 1.00499…).
        (Float64, Decimal128(_, _) | Decimal256(_, _)) => {
            let values = column.as_primitive::<Float64Type>();
            let text: arrow_array::StringArray =
                values.iter().map(|v| v.map(|v| v.to_string())).collect();
            let decimals = cast(&text, to)?;
            match (0..values.len()).find(|&r| values.is_valid(r) && decimals.is_null(r)) {
                Some(row) => Err(format!(
                    "row {row}: {} is not a {to} value",
                    values.value(row)
                )),
                None => Ok(decimals),
            }
        }
        // ISO text and `Date`s (naive milliseconds): no tz database here, so `UTC` is
        // `+00:00`; the write relabels it. Unparsable text is an error, not a null.
        (Utf8 | Timestamp(_, _), Timestamp(unit, Some(tz))) if tz.eq_ignore_ascii_case("UTC") => {
            let options = arrow_cast::CastOptions {
                safe: false,
                ..Default::default()
            };
            arrow_cast::cast_with_options(
                &column,
                &Timestamp(*unit, Some("+00:00".into())),
                &options,
            )
            .map_err(|e| e.to_string())
        }
        (Utf8, Binary | LargeBinary) => {
            use base64::Engine;
            let text = column.as_string::<i32>();
            let mut bytes = Vec::with_capacity(text.len());
            for (row, v) in text.iter().enumerate() {
                bytes.push(
                    v.map(|s| base64::engine::general_purpose::STANDARD.decode(s))
                        .transpose()
                        .map_err(|e| format!("row {row}: not base64: {e}"))?,
                );
            }
            cast(&arrow_array::BinaryArray::from_iter(bytes), to)
        }
        _ => Ok(column),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{
        Array, ArrayRef, BinaryArray, DictionaryArray, Float64Array, Int64Array, StringArray,
    };
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(columns).unwrap()
    }

    /// Parquet input goes through the table files' checks: a damaged map column (the fuzz
    /// finding that panicked the crate's map reader) is `INVALID_INPUT` naming the input.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn parquet_input_is_checked_as_table_files_are() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fuzz");
        let read = |file: &str| {
            let bytes = std::fs::read(format!("{dir}/{file}")).unwrap();
            let schema = Arc::new(Schema::empty());
            decode_rows(
                bytes.into(),
                InputFormat::Parquet,
                &schema,
                "in.parquet",
                &Default::default(),
            )
        };
        let rows: usize = read("corpus/parquet_footer/v6_base.parquet")
            .unwrap()
            .iter()
            .map(RecordBatch::num_rows)
            .sum();
        assert!(rows > 0);
        let e = read("regressions/parquet_footer/map_inner_error_unwrapped.parquet").unwrap_err();
        assert_eq!(e.code(), "INVALID_INPUT", "{e}");
        assert!(e.to_string().contains("in.parquet"), "{e}");
    }

    #[test]
    fn js_types_become_the_tables_where_no_value_changes() {
        let table = Schema::new(vec![
            Field::new("id", DataType::Utf8, true),
            Field::new("n", DataType::Int64, true),
            Field::new("f", DataType::Float32, true),
            Field::new("b", DataType::Binary, true),
        ]);
        let dict: DictionaryArray<arrow_array::types::Int32Type> =
            vec!["a", "b", "a"].into_iter().collect();
        let input = batch(vec![
            ("id", Arc::new(dict) as ArrayRef),
            (
                "n",
                Arc::new(Float64Array::from(vec![Some(1.0), None, Some(-3e15)])),
            ),
            ("f", Arc::new(Float64Array::from(vec![0.5, 1.0, 2.0]))),
            (
                "b",
                Arc::new(StringArray::from(vec![Some("AAE="), None, Some("")])),
            ),
            ("other", Arc::new(Float64Array::from(vec![1.5, 2.0, 3.0]))),
        ]);
        let out = js_types(vec![input], &table).unwrap().remove(0);
        let types: Vec<DataType> = out
            .columns()
            .iter()
            .map(|c| c.data_type().clone())
            .collect();
        assert_eq!(
            types,
            [
                DataType::Utf8,
                DataType::Int64,
                DataType::Float32,
                DataType::Binary,
                DataType::Float64
            ]
        );
        let n = out.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(
            n.iter().collect::<Vec<_>>(),
            [Some(1), None, Some(-3_000_000_000_000_000)]
        );
        let b = out
            .column(3)
            .as_any()
            .downcast_ref::<BinaryArray>()
            .unwrap();
        assert_eq!(b.value(0), [0, 1]);
        assert!(b.is_null(1));

        let bad = |values: Vec<f64>| {
            let input = batch(vec![(
                "n",
                Arc::new(Float64Array::from(values)) as ArrayRef,
            )]);
            js_types(vec![input], &table).unwrap_err()
        };
        for e in [
            bad(vec![1.0, 2.5]),
            bad(vec![1e300]),
            bad(vec![f64::NAN]),
            bad(vec![1.0, 9_007_199_254_740_992.0]),
        ] {
            assert_eq!(e.code(), "INVALID_INPUT");
            assert!(e.to_string().contains("column \"n\": row"), "{e}");
        }
    }

    /// JSON numbers for decimal columns (what an edge job POSTs): the decimal the number's
    /// shortest text spells, rounded half-up to the scale as a decimal string is.
    #[test]
    fn js_numbers_become_the_decimals_they_spell() {
        use arrow_array::Decimal128Array;
        let to = DataType::Decimal128(15, 2);
        let table = Schema::new(vec![Field::new("amount", to.clone(), true)]);
        let values = vec![
            Some(1.005),
            Some(0.29),
            Some(4500.5),
            None,
            Some(-123456789012.34),
        ];
        let input = batch(vec![(
            "amount",
            Arc::new(Float64Array::from(values)) as ArrayRef,
        )]);
        let out = js_types(vec![input], &table).unwrap().remove(0);
        let decimals = out
            .column(0)
            .as_any()
            .downcast_ref::<Decimal128Array>()
            .unwrap();
        assert_eq!(
            decimals.iter().collect::<Vec<_>>(),
            [
                Some(101),
                Some(29),
                Some(450050),
                None,
                Some(-12345678901234)
            ]
        );
        for v in [f64::NAN, f64::INFINITY, 1e13] {
            let input = batch(vec![(
                "amount",
                Arc::new(Float64Array::from(vec![1.0, v])) as ArrayRef,
            )]);
            let e = js_types(vec![input], &table).unwrap_err();
            assert!(e.to_string().contains("column \"amount\": row 1"), "{e}");
        }
    }
}
