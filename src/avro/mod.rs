//! Avro helpers: binary primitives ([`binary`]), the Avro→Arrow schema mapping
//! ([`to_arrow`]) and fast datum decoder ([`decode`]) for log data blocks, and turning
//! decoded Avro values into JSON (instant files, archived entries).

pub mod binary;
pub mod container;
pub mod decode;
pub mod guard;
mod json;
pub mod names;
pub mod to_arrow;

#[cfg(test)]
mod decode_tests;

pub use decode::AvroToArrow;
pub use to_arrow::avro_schema_to_arrow;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use apache_avro::types::Value;
use apache_avro::Schema;
use base64::Engine;

/// Most schema texts a process keeps parsed (a table's few writer schemas, the metadata
/// table's record schema, the timeline's).
pub(crate) const KEPT_SCHEMAS: usize = 16;

/// `text` parsed, once per process while it is among the last [`KEPT_SCHEMAS`]: every HFile
/// and log block of a metadata table, every archive block and commit file carries the same
/// schema, and parsing it cost more than the lookup that needed it. Names are checked by
/// [`names`], installed before the first parse.
pub fn parse_schema(text: &str) -> std::result::Result<Arc<Schema>, apache_avro::Error> {
    static KEPT: OnceLock<Mutex<HashMap<String, Arc<Schema>>>> = OnceLock::new();
    let kept = KEPT.get_or_init(Default::default);
    let lock = || kept.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(schema) = lock().get(text) {
        return Ok(schema.clone());
    }
    names::install();
    let schema = Arc::new(Schema::parse_str(text)?);
    let mut kept = lock();
    if kept.len() >= KEPT_SCHEMAS {
        kept.clear();
    }
    kept.insert(text.to_string(), schema.clone());
    Ok(schema)
}

/// Unions collapse to their branch; bytes become base64 text; enums their symbol.
pub fn value_to_json(v: Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Null => J::Null,
        Value::Boolean(b) => J::Bool(b),
        Value::Int(i) | Value::Date(i) | Value::TimeMillis(i) => J::from(i),
        Value::Long(l)
        | Value::TimeMicros(l)
        | Value::TimestampMillis(l)
        | Value::TimestampMicros(l)
        | Value::TimestampNanos(l)
        | Value::LocalTimestampMillis(l)
        | Value::LocalTimestampMicros(l)
        | Value::LocalTimestampNanos(l) => J::from(l),
        Value::Float(f) => serde_json::Number::from_f64(f as f64)
            .map(J::Number)
            .unwrap_or(J::Null),
        Value::Double(f) => serde_json::Number::from_f64(f)
            .map(J::Number)
            .unwrap_or(J::Null),
        Value::Bytes(b) | Value::Fixed(_, b) => {
            J::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        Value::String(s) | Value::Enum(_, s) => J::String(s),
        Value::Uuid(u) => J::String(u.to_string()),
        Value::Union(_, inner) => value_to_json(*inner),
        Value::Array(items) => J::Array(items.into_iter().map(value_to_json).collect()),
        Value::Map(m) => J::Object(m.into_iter().map(|(k, v)| (k, value_to_json(v))).collect()),
        Value::Record(fields) => J::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, value_to_json(v)))
                .collect(),
        ),
        other => J::String(format!("{other:?}")),
    }
}

#[cfg(test)]
mod parse_schema_tests {
    use super::*;

    /// A text parses once while kept; a bad one is an error each time, never kept; past
    /// [`KEPT_SCHEMAS`] texts the oldest are parsed again, to the same schema.
    #[test]
    fn a_schema_text_is_parsed_once_while_kept() {
        let text = |i: usize| {
            format!(
                r#"{{"type":"record","name":"KeptTest{i}","fields":[{{"name":"a","type":"long"}}]}}"#
            )
        };
        let first = parse_schema(&text(0)).unwrap();
        // Other tests parse too, and may evict it between two calls: not ten times in a row.
        let kept = (0..10).any(|_| {
            let a = parse_schema(&text(0)).unwrap();
            Arc::ptr_eq(&a, &parse_schema(&text(0)).unwrap())
        });
        assert!(kept);
        for _ in 0..2 {
            let err = parse_schema(r#"{"type":"record","name":"bad name!","fields":[]}"#);
            assert!(err.is_err());
        }
        for i in 1..=KEPT_SCHEMAS * 2 {
            parse_schema(&text(i)).unwrap();
        }
        let again = parse_schema(&text(0)).unwrap();
        assert_eq!(*again, *first);
    }
}
