//! Table schemas: the Avro schema Hudi records in commit metadata, as Arrow.
//!
//! Hudi's table schema is the writer schema of the newest completed commit
//! (`extraMetadata.schema`, without meta fields). Reads return the five `_hoodie_*` meta
//! columns first, then the data columns in schema order.

use std::sync::Arc;

use apache_avro::schema::{Schema as AvroSchema, UnionSchema};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

use crate::error::{HudiError, Result};

pub mod align;
pub mod evolution;
pub mod to_avro;

/// `schema` restricted to `columns`, in the schema's order.
pub fn project_by_name(schema: &Schema, columns: &[String]) -> SchemaRef {
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .filter(|f| columns.iter().any(|c| c == f.name()))
        .cloned()
        .collect();
    Arc::new(Schema::new(fields))
}

pub const META_COLUMNS: [&str; 5] = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
];

pub const COMMIT_TIME: &str = "_hoodie_commit_time";
pub const COMMIT_SEQNO: &str = "_hoodie_commit_seqno";
pub const RECORD_KEY: &str = "_hoodie_record_key";
pub const PARTITION_PATH: &str = "_hoodie_partition_path";
pub const FILE_NAME: &str = "_hoodie_file_name";
pub const OPERATION: &str = "_hoodie_operation";
pub const IS_DELETED: &str = "_hoodie_is_deleted";

pub fn is_meta_column(name: &str) -> bool {
    META_COLUMNS.contains(&name) || name == OPERATION
}

/// Parses an Avro schema JSON text and converts it to Arrow; `origin` names where it came from.
pub fn arrow_schema_from_avro_text(text: &str, origin: &str) -> Result<Schema> {
    let avro = crate::avro::parse_schema(text)
        .map_err(|e| HudiError::corrupt_by(origin, "bad Avro schema", e))?;
    avro_to_arrow(&avro).map_err(|e| e.in_file(origin))
}

pub fn avro_to_arrow(schema: &AvroSchema) -> Result<Schema> {
    match schema {
        AvroSchema::Record(r) => {
            let fields: Result<Vec<Field>> =
                r.fields.iter().map(|f| field(&f.name, &f.schema)).collect();
            Ok(Schema::new(fields?))
        }
        other => Err(crate::error::malformed(format!(
            "table schema is not a record: {other:?}"
        ))),
    }
}

fn field(name: &str, schema: &AvroSchema) -> Result<Field> {
    let (dt, nullable) = data_type(schema)?;
    Ok(Field::new(name, dt, nullable))
}

fn non_null_branch(u: &UnionSchema) -> Option<&AvroSchema> {
    let branches: Vec<&AvroSchema> = u
        .variants()
        .iter()
        .filter(|s| !matches!(s, AvroSchema::Null))
        .collect();
    (branches.len() == 1).then(|| branches[0])
}

/// Arrow type of an Avro schema, and whether it is nullable.
pub fn data_type(schema: &AvroSchema) -> Result<(DataType, bool)> {
    Ok(match schema {
        AvroSchema::Union(u) => {
            let nullable = u.variants().iter().any(|s| matches!(s, AvroSchema::Null));
            match non_null_branch(u) {
                Some(inner) => (data_type(inner)?.0, nullable),
                None => {
                    return Err(HudiError::unsupported(
                        "Avro unions of several non-null types",
                    ))
                }
            }
        }
        AvroSchema::Null => (DataType::Null, true),
        AvroSchema::Boolean => (DataType::Boolean, false),
        AvroSchema::Int => (DataType::Int32, false),
        AvroSchema::Long => (DataType::Int64, false),
        AvroSchema::Float => (DataType::Float32, false),
        AvroSchema::Double => (DataType::Float64, false),
        AvroSchema::Bytes | AvroSchema::Fixed(_) => (DataType::Binary, false),
        AvroSchema::String | AvroSchema::Enum(_) | AvroSchema::Uuid(_) => (DataType::Utf8, false),
        AvroSchema::Decimal(d) => (decimal_type(d.precision, d.scale)?, false),
        AvroSchema::BigDecimal => (DataType::Utf8, false),
        AvroSchema::Date => (DataType::Date32, false),
        AvroSchema::TimeMillis => (DataType::Time32(TimeUnit::Millisecond), false),
        AvroSchema::TimeMicros => (DataType::Time64(TimeUnit::Microsecond), false),
        AvroSchema::TimestampMillis => (
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            false,
        ),
        AvroSchema::TimestampMicros => (
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        AvroSchema::TimestampNanos => (
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
            false,
        ),
        AvroSchema::LocalTimestampMillis => {
            (DataType::Timestamp(TimeUnit::Millisecond, None), false)
        }
        AvroSchema::LocalTimestampMicros => {
            (DataType::Timestamp(TimeUnit::Microsecond, None), false)
        }
        AvroSchema::LocalTimestampNanos => (DataType::Timestamp(TimeUnit::Nanosecond, None), false),
        AvroSchema::Duration(_) => (DataType::Binary, false),
        AvroSchema::Array(a) => {
            let (inner, nullable) = data_type(&a.items)?;
            (
                DataType::List(Arc::new(Field::new("element", inner, nullable))),
                false,
            )
        }
        AvroSchema::Map(m) => {
            let (value, nullable) = data_type(&m.types)?;
            let entries = Field::new(
                "key_value",
                DataType::Struct(Fields::from(vec![
                    Field::new("key", DataType::Utf8, false),
                    Field::new("value", value, nullable),
                ])),
                false,
            );
            (DataType::Map(Arc::new(entries), false), false)
        }
        AvroSchema::Record(r) => {
            let fields: Result<Vec<Field>> =
                r.fields.iter().map(|f| field(&f.name, &f.schema)).collect();
            (DataType::Struct(Fields::from(fields?)), false)
        }
        AvroSchema::Ref { name } => {
            return Err(HudiError::unsupported(format!(
                "recursive Avro type {name}"
            )))
        }
    })
}

fn decimal_type(precision: usize, scale: usize) -> Result<DataType> {
    let (p, s) = (u8::try_from(precision).ok(), i8::try_from(scale).ok());
    match (p, s) {
        (Some(p), Some(s)) if p <= 38 => Ok(DataType::Decimal128(p, s)),
        (Some(p), Some(s)) if p <= 76 => Ok(DataType::Decimal256(p, s)),
        _ => Err(HudiError::unsupported(format!(
            "decimal({precision},{scale})"
        ))),
    }
}

/// The read schema: meta columns (when the table has them), then data columns.
pub fn with_meta_columns(data: &Schema) -> SchemaRef {
    let mut fields: Vec<Field> = META_COLUMNS
        .iter()
        .map(|n| Field::new(*n, DataType::Utf8, true))
        .collect();
    fields.extend(
        data.fields()
            .iter()
            .filter(|f| !is_meta_column(f.name()))
            .map(|f| f.as_ref().clone()),
    );
    Arc::new(Schema::new(fields))
}

/// `data` with the partition columns a table does not store (`drop.partition.columns`)
/// appended, each as `field_for` types it: reads fill them from the partition path, writes
/// take them to make it.
pub fn with_partition_columns(
    data: &Schema,
    partition_fields: &[String],
    field_for: impl Fn(&str) -> Field,
) -> Schema {
    let mut fields: Vec<arrow_schema::FieldRef> = data.fields().iter().cloned().collect();
    for name in partition_fields {
        if data.field_with_name(name).is_err() {
            fields.push(Arc::new(field_for(name)));
        }
    }
    Schema::new_with_metadata(fields, data.metadata().clone())
}

/// A partition column as Java appends it to a read schema: a string
/// (TableSchemaResolver.appendPartitionColumns).
pub fn partition_column_as_string(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_hudi_schema() {
        let text = r#"{"type":"record","name":"r","fields":[
          {"name":"id","type":["null","string"],"default":null},
          {"name":"amount","type":["null",{"type":"fixed","name":"f","size":7,"logicalType":"decimal","precision":15,"scale":2}]},
          {"name":"ts","type":["null",{"type":"long","logicalType":"timestamp-micros"}]},
          {"name":"d","type":["null",{"type":"int","logicalType":"date"}]}]}"#;
        let s = arrow_schema_from_avro_text(text, "x").unwrap();
        assert_eq!(s.field(1).data_type(), &DataType::Decimal128(15, 2));
        assert!(s.field(0).is_nullable());
        assert_eq!(s.field(3).data_type(), &DataType::Date32);
    }
}
