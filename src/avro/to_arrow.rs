//! Avro schema → Arrow schema, the mapping the decoder produces natively.
//!
//! Nullable unions (`["null", T]`) become nullable fields; `[int, long]` becomes Int64 and
//! `[float, double]` Float64; any other multi-type union becomes a struct of nullable
//! `member0 … memberN` fields (Spark's convention). Enums become Utf8. Hudi's meta fields
//! (`_hoodie_commit_time` …) are `["null","string"]` and so map to nullable Utf8.

use std::collections::HashMap;
use std::sync::Arc;

use apache_avro::schema::{InnerDecimalSchema, Name, ResolvedSchema, UnionSchema, UuidSchema};
use apache_avro::Schema;
use arrow_schema::{DataType, Field, Fields, TimeUnit};

use crate::error::{HudiError, Result};

/// Deepest nesting followed; deeper means a recursive type, which Arrow cannot hold.
pub(crate) const MAX_DEPTH: usize = 64;

/// Named types of a schema, to follow `Schema::Ref`s.
pub(crate) struct Names<'s>(HashMap<Name, &'s Schema>);

impl<'s> Names<'s> {
    pub(crate) fn of(schema: &'s Schema) -> Result<Names<'s>> {
        let resolved = ResolvedSchema::new(schema)
            .map_err(|e| HudiError::unsupported(format!("Avro schema with bad references: {e}")))?;
        Ok(Names(resolved.get_names().clone()))
    }

    /// The schema itself, or the one a reference names.
    pub(crate) fn resolve(&self, schema: &'s Schema) -> Result<&'s Schema> {
        match schema {
            Schema::Ref { name } => self.0.get(name).copied().ok_or_else(|| {
                HudiError::unsupported(format!("unresolved Avro type {}", name.fullname(None)))
            }),
            s => Ok(s),
        }
    }
}

/// The Arrow schema of records written with `schema` (which must be an Avro record).
pub fn avro_schema_to_arrow(schema: &Schema) -> Result<arrow_schema::Schema> {
    let names = Names::of(schema)?;
    match names.resolve(schema)? {
        Schema::Record(r) => {
            let fields: Result<Vec<Field>> = r
                .fields
                .iter()
                .map(|f| avro_field(&f.name, &f.schema, &names, 0))
                .collect();
            Ok(arrow_schema::Schema::new(fields?))
        }
        other => Err(HudiError::unsupported(format!(
            "Avro top-level schema that is not a record: {other:?}"
        ))),
    }
}

pub(crate) fn avro_field(
    name: &str,
    schema: &Schema,
    names: &Names,
    depth: usize,
) -> Result<Field> {
    let (data_type, nullable) = arrow_type(schema, names, depth)?;
    Ok(Field::new(name, data_type, nullable))
}

/// The Arrow type of an Avro schema and whether its values can be null.
pub(crate) fn arrow_type(schema: &Schema, names: &Names, depth: usize) -> Result<(DataType, bool)> {
    if depth > MAX_DEPTH {
        return Err(HudiError::unsupported("recursive Avro types"));
    }
    let schema = names.resolve(schema)?;
    let t = match schema {
        Schema::Union(u) => return union_type(u, names, depth),
        Schema::Null => return Ok((DataType::Null, true)),
        Schema::Record(r) => {
            let fields: Result<Vec<Field>> = r
                .fields
                .iter()
                .map(|f| avro_field(&f.name, &f.schema, names, depth + 1))
                .collect();
            DataType::Struct(Fields::from(fields?))
        }
        Schema::Array(a) => {
            DataType::List(Arc::new(avro_field("item", &a.items, names, depth + 1)?))
        }
        Schema::Map(m) => map_type(avro_field("value", &m.types, names, depth + 1)?),
        leaf => leaf_type(leaf)?,
    };
    Ok((t, false))
}

pub(crate) fn map_type(value: Field) -> DataType {
    let entries = Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("key", DataType::Utf8, false),
            value,
        ])),
        false,
    );
    DataType::Map(Arc::new(entries), false)
}

/// Arrow type of a non-nested, non-union Avro schema.
pub(crate) fn leaf_type(schema: &Schema) -> Result<DataType> {
    let utc = || Some(Arc::<str>::from("UTC"));
    Ok(match schema {
        Schema::Null => DataType::Null,
        Schema::Boolean => DataType::Boolean,
        Schema::Int => DataType::Int32,
        Schema::Long => DataType::Int64,
        Schema::Float => DataType::Float32,
        Schema::Double => DataType::Float64,
        Schema::Bytes | Schema::Uuid(UuidSchema::Bytes) => DataType::Binary,
        Schema::String | Schema::Enum(_) | Schema::Uuid(UuidSchema::String) => DataType::Utf8,
        Schema::Fixed(f) | Schema::Uuid(UuidSchema::Fixed(f)) => fixed_type(f.size)?,
        Schema::Decimal(d) => decimal_type(d.precision, d.scale)?,
        Schema::Date => DataType::Date32,
        Schema::TimeMillis => DataType::Time32(TimeUnit::Millisecond),
        Schema::TimeMicros => DataType::Time64(TimeUnit::Microsecond),
        Schema::TimestampMillis => DataType::Timestamp(TimeUnit::Millisecond, utc()),
        Schema::TimestampMicros => DataType::Timestamp(TimeUnit::Microsecond, utc()),
        Schema::TimestampNanos => DataType::Timestamp(TimeUnit::Nanosecond, utc()),
        Schema::LocalTimestampMillis => DataType::Timestamp(TimeUnit::Millisecond, None),
        Schema::LocalTimestampMicros => DataType::Timestamp(TimeUnit::Microsecond, None),
        Schema::LocalTimestampNanos => DataType::Timestamp(TimeUnit::Nanosecond, None),
        other => {
            return Err(HudiError::unsupported(format!(
                "Avro type {} in a data block",
                kind_name(other)
            )))
        }
    })
}

fn fixed_type(size: usize) -> Result<DataType> {
    i32::try_from(size)
        .map(DataType::FixedSizeBinary)
        .map_err(|_| HudiError::unsupported(format!("Avro fixed of size {size}")))
}

pub(crate) fn decimal_type(precision: usize, scale: usize) -> Result<DataType> {
    match (u8::try_from(precision), i8::try_from(scale)) {
        (Ok(p), Ok(s)) if (1..=38).contains(&p) && s as u8 <= p => Ok(DataType::Decimal128(p, s)),
        _ => Err(HudiError::unsupported(format!(
            "Avro decimal({precision}, {scale}) (more than 38 digits)"
        ))),
    }
}

/// Whether a decimal's inner type is `fixed`, and its size.
pub(crate) fn decimal_fixed_size(inner: &InnerDecimalSchema) -> Option<usize> {
    match inner {
        InnerDecimalSchema::Bytes => None,
        InnerDecimalSchema::Fixed(f) => Some(f.size),
    }
}

/// How a multi-branch union is represented.
pub(crate) enum UnionShape<'s> {
    /// Only `null`.
    Null,
    /// One non-null branch (maybe next to `null`).
    Single(&'s Schema),
    /// `int`/`long` branches read as Int64, or `float`/`double` as Float64.
    Numeric(DataType),
    /// Any other mix: a struct with one member per non-null branch.
    Members(Vec<&'s Schema>),
}

pub(crate) fn union_shape<'s>(u: &'s UnionSchema, names: &Names<'s>) -> Result<UnionShape<'s>> {
    let mut branches = Vec::new();
    for v in u.variants() {
        let v = names.resolve(v)?;
        if !matches!(v, Schema::Null) {
            branches.push(v);
        }
    }
    let all = |f: fn(&Schema) -> bool| branches.iter().all(|b| f(b));
    Ok(match branches.len() {
        0 => UnionShape::Null,
        1 => UnionShape::Single(branches[0]),
        _ if all(|b| matches!(b, Schema::Int | Schema::Long)) => {
            UnionShape::Numeric(DataType::Int64)
        }
        _ if all(|b| matches!(b, Schema::Float | Schema::Double)) => {
            UnionShape::Numeric(DataType::Float64)
        }
        _ => UnionShape::Members(branches),
    })
}

fn union_type(u: &UnionSchema, names: &Names, depth: usize) -> Result<(DataType, bool)> {
    let nullable = u.variants().iter().any(|v| matches!(v, Schema::Null));
    let t = match union_shape(u, names)? {
        UnionShape::Null => return Ok((DataType::Null, true)),
        UnionShape::Single(s) => {
            return arrow_type(s, names, depth + 1).map(|(t, n)| (t, n || nullable))
        }
        UnionShape::Numeric(t) => t,
        UnionShape::Members(branches) => {
            let fields: Result<Vec<Field>> = branches
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let (t, _) = arrow_type(b, names, depth + 1)?;
                    Ok(Field::new(format!("member{i}"), t, true))
                })
                .collect();
            DataType::Struct(Fields::from(fields?))
        }
    };
    Ok((t, nullable))
}

pub(crate) fn kind_name(s: &Schema) -> String {
    let text = format!("{s:?}");
    text.split(['(', ' ', '{'])
        .next()
        .unwrap_or("?")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_a_hudi_schema() {
        let schema = Schema::parse_str(
            r#"{"type":"record","name":"r","fields":[
              {"name":"_hoodie_commit_time","type":["null","string"],"default":null},
              {"name":"id","type":"int"},
              {"name":"amount","type":["null",{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}]},
              {"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},
              {"name":"lts","type":{"type":"long","logicalType":"local-timestamp-millis"}},
              {"name":"d","type":{"type":"int","logicalType":"date"}},
              {"name":"e","type":{"type":"enum","name":"E","symbols":["A","B"]}},
              {"name":"tags","type":{"type":"array","items":["null","string"]}},
              {"name":"props","type":{"type":"map","values":"long"}},
              {"name":"n","type":["int","long"]},
              {"name":"u","type":["null","int","string"]},
              {"name":"again","type":["null","E"]}
            ]}"#,
        )
        .unwrap();
        let s = avro_schema_to_arrow(&schema).unwrap();
        let f = |n: &str| s.field_with_name(n).unwrap().clone();
        assert_eq!(
            f("_hoodie_commit_time"),
            Field::new("_hoodie_commit_time", DataType::Utf8, true)
        );
        assert_eq!(f("id"), Field::new("id", DataType::Int32, false));
        assert_eq!(f("amount").data_type(), &DataType::Decimal128(10, 2));
        assert!(f("amount").is_nullable());
        assert_eq!(
            f("ts").data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(
            f("lts").data_type(),
            &DataType::Timestamp(TimeUnit::Millisecond, None)
        );
        assert_eq!(f("d").data_type(), &DataType::Date32);
        assert_eq!(f("e").data_type(), &DataType::Utf8);
        assert_eq!(
            f("tags").data_type(),
            &DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
        );
        assert!(matches!(f("props").data_type(), DataType::Map(..)));
        assert_eq!(f("n").data_type(), &DataType::Int64);
        let DataType::Struct(members) = f("u").data_type().clone() else {
            panic!()
        };
        assert_eq!(members.len(), 2);
        assert_eq!(f("again").data_type(), &DataType::Utf8);
    }

    #[test]
    fn rejects_non_records_and_recursion() {
        assert!(avro_schema_to_arrow(&Schema::Int).is_err());
        let list = Schema::parse_str(
            r#"{"type":"record","name":"node","fields":[{"name":"next","type":["null","node"]}]}"#,
        )
        .unwrap();
        assert_eq!(
            avro_schema_to_arrow(&list).unwrap_err().code(),
            "UNSUPPORTED"
        );
    }
}
