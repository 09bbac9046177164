//! Rows as Avro datums of the table's writer schema (the records of a log file's Avro data
//! block, docs/hudi-format.md §5.5), and the writer schema with Hudi's meta fields in front.

use std::collections::HashMap;

use apache_avro::schema::{Schema as AvroSchema, UnionSchema};
use apache_avro::types::Value as AvroValue;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};

use crate::error::{HudiError, Result};
use crate::schema::META_COLUMNS;

/// The data schema (Avro JSON) with the five meta fields first, as Java's
/// `HoodieAvroUtils.addMetadataFields` writes them: nullable strings, default null.
pub fn with_meta_fields(data_schema: &str) -> Result<String> {
    edit_fields(data_schema, |fields| {
        fields.retain(|f| {
            f.get("name")
                .and_then(serde_json::Value::as_str)
                .is_none_or(|n| !META_COLUMNS.contains(&n))
        });
        let meta = META_COLUMNS.iter().map(|name| {
            serde_json::json!({"name": name, "type": ["null", "string"], "doc": "", "default": null})
        });
        let rest = std::mem::take(fields);
        *fields = meta.chain(rest).collect();
    })
}

/// Record schema `schema` without its top-level fields named in `names`.
pub fn without_fields(schema: &str, names: &[String]) -> Result<String> {
    edit_fields(schema, |fields| {
        fields.retain(|f| {
            f.get("name")
                .and_then(serde_json::Value::as_str)
                .is_none_or(|n| !names.iter().any(|p| p == n))
        })
    })
}

/// The record schema `schema` with `edit` applied to its fields.
fn edit_fields(schema: &str, edit: impl FnOnce(&mut Vec<serde_json::Value>)) -> Result<String> {
    let mut schema: serde_json::Value = serde_json::from_str(schema)
        .map_err(|e| HudiError::invalid(format!("the table's Avro schema does not parse: {e}")))?;
    let fields = schema
        .get_mut("fields")
        .and_then(serde_json::Value::as_array_mut)
        .ok_or_else(|| HudiError::invalid("the table's Avro schema is not a record"))?;
    edit(fields);
    Ok(schema.to_string())
}

/// Encodes every row of `batch` (columns by name) as an Avro binary datum of `schema`.
pub fn encode_rows(schema: &AvroSchema, batch: &RecordBatch) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::with_capacity(batch.num_rows());
    each_datum(schema, batch, |writer, value, row| {
        out.push(
            writer
                .write_value_to_vec(value)
                .map_err(|e| HudiError::invalid_input(format!("row {row}: {e}")))?,
        );
        Ok(())
    })?;
    Ok(out)
}

/// Appends every row of `batch` to `out` as an Avro data block's content lays records out
/// (`int length | datum`), with no buffer per row.
pub fn encode_rows_into(schema: &AvroSchema, batch: &RecordBatch, out: &mut Vec<u8>) -> Result<()> {
    each_datum(schema, batch, |writer, value, row| {
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        writer
            .write_value(out, value)
            .map_err(|e| HudiError::invalid_input(format!("row {row}: {e}")))?;
        // The datum's length from the buffer (the encoder's count leaves out some values).
        let len = i32::try_from(out.len() - at - 4)
            .map_err(|_| HudiError::invalid_input(format!("row {row}: larger than 2 GiB")))?;
        out[at..at + 4].copy_from_slice(&len.to_be_bytes());
        Ok(())
    })
}

fn each_datum(
    schema: &AvroSchema,
    batch: &RecordBatch,
    mut datum: impl FnMut(
        &apache_avro::writer::datum::GenericDatumWriter<'_>,
        AvroValue,
        usize,
    ) -> Result<()>,
) -> Result<()> {
    let AvroSchema::Record(record) = schema else {
        return Err(HudiError::invalid(
            "the writer schema is not an Avro record",
        ));
    };
    let columns: Vec<Option<&dyn Array>> = record
        .fields
        .iter()
        .map(|f| batch.column_by_name(&f.name).map(|c| c.as_ref()))
        .collect();
    let writer = apache_avro::writer::datum::GenericDatumWriter::builder(schema)
        .build()
        .map_err(|e| HudiError::invalid(format!("the writer schema: {e}")))?;
    for row in 0..batch.num_rows() {
        let mut fields = Vec::with_capacity(record.fields.len());
        for (field, column) in record.fields.iter().zip(&columns) {
            let v = match column {
                Some(c) => to_avro(&field.schema, *c, row).map_err(|e| {
                    HudiError::invalid_input(format!("row {row}, column {:?}: {e}", field.name))
                })?,
                None => null_for(&field.schema).ok_or_else(|| {
                    HudiError::invalid_input(format!(
                        "row {row}: column {:?} is missing and not nullable",
                        field.name
                    ))
                })?,
            };
            fields.push((field.name.clone(), v));
        }
        datum(&writer, AvroValue::Record(fields), row)?;
    }
    Ok(())
}

fn null_for(schema: &AvroSchema) -> Option<AvroValue> {
    match schema {
        AvroSchema::Union(u) => {
            null_branch(u).map(|i| AvroValue::Union(i as u32, Box::new(AvroValue::Null)))
        }
        AvroSchema::Null => Some(AvroValue::Null),
        _ => None,
    }
}

fn null_branch(u: &UnionSchema) -> Option<usize> {
    u.variants()
        .iter()
        .position(|s| matches!(s, AvroSchema::Null))
}

fn to_avro(
    schema: &AvroSchema,
    array: &dyn Array,
    row: usize,
) -> std::result::Result<AvroValue, String> {
    if let AvroSchema::Union(u) = schema {
        if array.is_null(row) {
            return null_for(schema).ok_or_else(|| "null in a non-nullable field".to_string());
        }
        let (i, inner) = u
            .variants()
            .iter()
            .enumerate()
            .find(|(_, s)| !matches!(s, AvroSchema::Null))
            .ok_or("a union with no non-null branch")?;
        return Ok(AvroValue::Union(
            i as u32,
            Box::new(to_avro(inner, array, row)?),
        ));
    }
    if array.is_null(row) {
        return Err("null in a non-nullable field".into());
    }
    let wrong = || {
        format!(
            "an Arrow {} value for Avro {:?}",
            array.data_type(),
            schema_name(schema)
        )
    };
    Ok(match schema {
        AvroSchema::Null => AvroValue::Null,
        AvroSchema::Boolean => {
            AvroValue::Boolean(array.as_boolean_opt().ok_or_else(wrong)?.value(row))
        }
        AvroSchema::Int => AvroValue::Int(int_of(array, row).ok_or_else(wrong)? as i32),
        AvroSchema::Long => AvroValue::Long(int_of(array, row).ok_or_else(wrong)?),
        AvroSchema::Float => AvroValue::Float(match array.data_type() {
            DataType::Float32 => array.as_primitive::<Float32Type>().value(row),
            _ => return Err(wrong()),
        }),
        AvroSchema::Double => AvroValue::Double(match array.data_type() {
            DataType::Float64 => array.as_primitive::<Float64Type>().value(row),
            DataType::Float32 => array.as_primitive::<Float32Type>().value(row) as f64,
            _ => return Err(wrong()),
        }),
        AvroSchema::String | AvroSchema::Uuid(_) => {
            AvroValue::String(string_of(array, row).ok_or_else(wrong)?)
        }
        AvroSchema::Enum(e) => {
            let s = string_of(array, row).ok_or_else(wrong)?;
            let i = e
                .symbols
                .iter()
                .position(|x| *x == s)
                .ok_or_else(|| format!("{s:?} is not a symbol of the enum"))?;
            AvroValue::Enum(i as u32, s)
        }
        AvroSchema::Bytes => AvroValue::Bytes(bytes_of(array, row).ok_or_else(wrong)?),
        AvroSchema::Fixed(f) => {
            let b = bytes_of(array, row).ok_or_else(wrong)?;
            if b.len() != f.size {
                return Err(format!("{} bytes for a fixed({})", b.len(), f.size));
            }
            AvroValue::Fixed(f.size, b)
        }
        AvroSchema::Decimal(d) => {
            let (unscaled, scale) = match array.data_type() {
                DataType::Decimal128(_, s) => {
                    (array.as_primitive::<Decimal128Type>().value(row), *s)
                }
                _ => return Err(wrong()),
            };
            if scale as usize != d.scale {
                return Err(format!(
                    "decimal scale {scale} where the table has {}",
                    d.scale
                ));
            }
            let size = match &d.inner {
                apache_avro::schema::InnerDecimalSchema::Fixed(f) => Some(f.size),
                apache_avro::schema::InnerDecimalSchema::Bytes => None,
            };
            let bytes =
                decimal_bytes(unscaled, size).ok_or("decimal too wide for its fixed size")?;
            AvroValue::Decimal(apache_avro::Decimal::from(bytes))
        }
        AvroSchema::Date => AvroValue::Date(match array.data_type() {
            DataType::Date32 => array.as_primitive::<Date32Type>().value(row),
            _ => return Err(wrong()),
        }),
        AvroSchema::TimestampMicros | AvroSchema::LocalTimestampMicros => {
            let v = timestamp_as(array, row, TimeUnit::Microsecond).ok_or_else(wrong)?;
            if matches!(schema, AvroSchema::TimestampMicros) {
                AvroValue::TimestampMicros(v)
            } else {
                AvroValue::LocalTimestampMicros(v)
            }
        }
        AvroSchema::TimestampMillis | AvroSchema::LocalTimestampMillis => {
            let v = timestamp_as(array, row, TimeUnit::Millisecond).ok_or_else(wrong)?;
            if matches!(schema, AvroSchema::TimestampMillis) {
                AvroValue::TimestampMillis(v)
            } else {
                AvroValue::LocalTimestampMillis(v)
            }
        }
        AvroSchema::TimeMillis => AvroValue::TimeMillis(match array.data_type() {
            DataType::Time32(TimeUnit::Millisecond) => {
                array.as_primitive::<Time32MillisecondType>().value(row)
            }
            _ => return Err(wrong()),
        }),
        AvroSchema::TimeMicros => AvroValue::TimeMicros(match array.data_type() {
            DataType::Time64(TimeUnit::Microsecond) => {
                array.as_primitive::<Time64MicrosecondType>().value(row)
            }
            _ => return Err(wrong()),
        }),
        AvroSchema::Record(r) => {
            let s = array.as_struct_opt().ok_or_else(wrong)?;
            let mut fields = Vec::with_capacity(r.fields.len());
            for f in &r.fields {
                let v = match s.column_by_name(&f.name) {
                    Some(c) => to_avro(&f.schema, c.as_ref(), row)?,
                    None => {
                        null_for(&f.schema).ok_or_else(|| format!("missing field {:?}", f.name))?
                    }
                };
                fields.push((f.name.clone(), v));
            }
            AvroValue::Record(fields)
        }
        AvroSchema::Array(a) => {
            let list = match array.data_type() {
                DataType::List(_) => array.as_list::<i32>().value(row),
                DataType::LargeList(_) => array.as_list::<i64>().value(row),
                _ => return Err(wrong()),
            };
            let items = (0..list.len())
                .map(|i| to_avro(&a.items, list.as_ref(), i))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            AvroValue::Array(items)
        }
        AvroSchema::Map(m) => {
            let map = array.as_map_opt().ok_or_else(wrong)?;
            let entries = map.value(row);
            let (keys, values) = (entries.column(0), entries.column(1));
            let mut out = HashMap::with_capacity(entries.len());
            for i in 0..entries.len() {
                let k = string_of(keys.as_ref(), i).ok_or("a map key that is not a string")?;
                out.insert(k, to_avro(&m.types, values.as_ref(), i)?);
            }
            AvroValue::Map(out)
        }
        other => return Err(format!("Avro type {:?} is not written", schema_name(other))),
    })
}

fn schema_name(s: &AvroSchema) -> String {
    format!("{:?}", apache_avro::schema::SchemaKind::from(s))
}

fn int_of(array: &dyn Array, row: usize) -> Option<i64> {
    Some(match array.data_type() {
        DataType::Int8 => array.as_primitive::<Int8Type>().value(row) as i64,
        DataType::Int16 => array.as_primitive::<Int16Type>().value(row) as i64,
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row) as i64,
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row),
        _ => return None,
    })
}

fn string_of(array: &dyn Array, row: usize) -> Option<String> {
    Some(match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(row).to_string(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(row).to_string(),
        DataType::Utf8View => array.as_string_view().value(row).to_string(),
        _ => return None,
    })
}

fn bytes_of(array: &dyn Array, row: usize) -> Option<Vec<u8>> {
    Some(match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().value(row).to_vec(),
        DataType::LargeBinary => array.as_binary::<i64>().value(row).to_vec(),
        DataType::BinaryView => array.as_binary_view().value(row).to_vec(),
        DataType::FixedSizeBinary(_) => array.as_fixed_size_binary().value(row).to_vec(),
        _ => return None,
    })
}

fn timestamp_as(array: &dyn Array, row: usize, unit: TimeUnit) -> Option<i64> {
    let (v, from) = match array.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => (
            array.as_primitive::<TimestampSecondType>().value(row),
            1_000_000,
        ),
        DataType::Timestamp(TimeUnit::Millisecond, _) => (
            array.as_primitive::<TimestampMillisecondType>().value(row),
            1_000,
        ),
        DataType::Timestamp(TimeUnit::Microsecond, _) => (
            array.as_primitive::<TimestampMicrosecondType>().value(row),
            1,
        ),
        _ => return None,
    };
    let micros = v.checked_mul(from)?;
    Some(match unit {
        TimeUnit::Millisecond => micros.div_euclid(1_000),
        _ => micros,
    })
}

/// Big-endian two's complement, sign-extended to `size` bytes (minimal when `None`).
fn decimal_bytes(unscaled: i128, size: Option<usize>) -> Option<Vec<u8>> {
    let full = unscaled.to_be_bytes();
    let minimal = crate::avro::binary::i128_to_be_min(unscaled);
    match size {
        None => Some(minimal),
        Some(n) if n >= minimal.len() => {
            if n >= 16 {
                let fill = if unscaled < 0 { 0xff } else { 0 };
                let mut v = vec![fill; n - 16];
                v.extend_from_slice(&full);
                Some(v)
            } else {
                Some(full[16 - n..].to_vec())
            }
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_fields_go_first() {
        let s = with_meta_fields(
            r#"{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}"#,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        let names: Vec<&str> = v["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "_hoodie_commit_time",
                "_hoodie_commit_seqno",
                "_hoodie_record_key",
                "_hoodie_partition_path",
                "_hoodie_file_name",
                "a"
            ]
        );
    }

    #[test]
    fn decimals_sign_extend() {
        assert_eq!(decimal_bytes(-1, Some(3)).unwrap(), vec![0xff, 0xff, 0xff]);
        assert_eq!(
            decimal_bytes(125000, Some(7)).unwrap(),
            vec![0, 0, 0, 0, 0x01, 0xe8, 0x48]
        );
        assert!(decimal_bytes(i64::MAX as i128, Some(2)).is_none());
        // `bytes` decimals: the fewest bytes, as Java's `BigInteger.toByteArray` gives them.
        assert_eq!(decimal_bytes(-1, None).unwrap(), vec![0xff]);
        assert_eq!(decimal_bytes(0, None).unwrap(), vec![0]);
        assert_eq!(decimal_bytes(128, None).unwrap(), vec![0, 0x80]);
        assert_eq!(decimal_bytes(-129, None).unwrap(), vec![0xff, 0x7f]);
    }

    #[test]
    fn records_in_place_are_the_records_with_their_lengths() {
        use arrow_array::{ArrayRef, Int64Array, StringArray};
        use std::sync::Arc;
        let schema = AvroSchema::parse_str(
            r#"{"type":"record","name":"r","fields":[
                {"name":"s","type":["null","string"]},{"name":"n","type":["null","long"]}]}"#,
        )
        .unwrap();
        let batch = RecordBatch::try_from_iter([
            (
                "s",
                Arc::new(StringArray::from(vec![Some("a"), None, Some("xyz")])) as ArrayRef,
            ),
            (
                "n",
                Arc::new(Int64Array::from(vec![None, Some(7), Some(-300)])) as ArrayRef,
            ),
        ])
        .unwrap();
        let mut expected = Vec::new();
        for r in encode_rows(&schema, &batch).unwrap() {
            expected.extend_from_slice(&(r.len() as i32).to_be_bytes());
            expected.extend_from_slice(&r);
        }
        let mut got = vec![9];
        encode_rows_into(&schema, &batch, &mut got).unwrap();
        assert_eq!(got[1..], expected[..]);
    }
}
