//! Avro datums straight to JSON, for instant files: the same JSON [`super::value_to_json`]
//! makes of apache-avro's values (unions collapse to their branch, bytes and fixed become
//! base64, enums their symbol), without building those values first, and with map entries
//! in the file's order. A plan is made once per writer schema and kept: every commit file
//! of a table carries the same schema, and parsing it costs more than decoding one file.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use apache_avro::schema::UuidSchema;
use apache_avro::Schema;
use base64::Engine;
use serde_json::{Map, Number, Value as J};

use super::binary::{
    read_bool, read_bytes, read_f32, read_f64, read_fixed, read_long, read_string,
    read_union_branch,
};
use super::decode::each_item;
use super::guard::Checked;
use super::to_arrow::{Names, MAX_DEPTH};
use super::KEPT_SCHEMAS;
use crate::error::{malformed, HudiError, Result};

/// How to turn one value of a schema into JSON.
pub(crate) enum ToJson {
    Null,
    Bool,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Fixed(usize),
    Enum(Vec<String>),
    Union(Vec<ToJson>),
    Array(Box<ToJson>),
    Map(Box<ToJson>),
    Record(Vec<(String, ToJson)>),
}

/// A writer schema checked ([`Checked`]) and planned for JSON.
pub(crate) struct JsonPlan {
    pub(crate) checked: Checked,
    root: ToJson,
}

impl JsonPlan {
    /// The plan of a schema's text, parsed once per process. `Ok(None)`: the schema holds a
    /// type this plan does not render (decimals, durations); decode through apache-avro.
    pub(crate) fn of_text(text: &str) -> Result<Option<Arc<JsonPlan>>> {
        static KEPT: OnceLock<Mutex<HashMap<String, Option<Arc<JsonPlan>>>>> = OnceLock::new();
        let kept = KEPT.get_or_init(Default::default);
        let lock = || kept.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(plan) = lock().get(text) {
            return Ok(plan.clone());
        }
        let schema = super::parse_schema(text)
            .map_err(|e| HudiError::corrupt_by("", "bad Avro container schema", e))?;
        let checked = Checked::new(&schema)?;
        let names = Names::of(&schema)?;
        let plan =
            ToJson::plan(&schema, &names, 0)?.map(|root| Arc::new(JsonPlan { checked, root }));
        let mut kept = lock();
        if kept.len() >= KEPT_SCHEMAS {
            kept.clear();
        }
        kept.insert(text.to_string(), plan.clone());
        Ok(plan)
    }

    /// One datum (checked first: every length it declares is backed by its bytes).
    pub(crate) fn decode(&self, buf: &mut &[u8]) -> Result<J> {
        self.checked.datum(buf)?;
        self.root.decode(buf)
    }
}

impl ToJson {
    fn plan(schema: &Schema, names: &Names, depth: usize) -> Result<Option<ToJson>> {
        if depth > MAX_DEPTH {
            return Err(HudiError::unsupported("recursive Avro types"));
        }
        let plan = |s: &Schema| ToJson::plan(s, names, depth + 1);
        let all = |parts: Vec<Option<ToJson>>| parts.into_iter().collect::<Option<Vec<_>>>();
        Ok(Some(match names.resolve(schema)? {
            Schema::Null => ToJson::Null,
            Schema::Boolean => ToJson::Bool,
            Schema::Int
            | Schema::Long
            | Schema::Date
            | Schema::TimeMillis
            | Schema::TimeMicros
            | Schema::TimestampMillis
            | Schema::TimestampMicros
            | Schema::TimestampNanos
            | Schema::LocalTimestampMillis
            | Schema::LocalTimestampMicros
            | Schema::LocalTimestampNanos => ToJson::Long,
            Schema::Float => ToJson::Float,
            Schema::Double => ToJson::Double,
            Schema::Bytes => ToJson::Bytes,
            Schema::String | Schema::Uuid(UuidSchema::String) => ToJson::String,
            Schema::Fixed(f) => ToJson::Fixed(f.size),
            Schema::Enum(e) => ToJson::Enum(e.symbols.clone()),
            Schema::Union(u) => {
                let branches = u.variants().iter().map(plan).collect::<Result<Vec<_>>>()?;
                match all(branches) {
                    Some(b) => ToJson::Union(b),
                    None => return Ok(None),
                }
            }
            Schema::Array(a) => match plan(&a.items)? {
                Some(item) => ToJson::Array(Box::new(item)),
                None => return Ok(None),
            },
            Schema::Map(m) => match plan(&m.types)? {
                Some(value) => ToJson::Map(Box::new(value)),
                None => return Ok(None),
            },
            Schema::Record(r) => {
                let mut fields = Vec::with_capacity(r.fields.len());
                for f in &r.fields {
                    match plan(&f.schema)? {
                        Some(p) => fields.push((f.name.clone(), p)),
                        None => return Ok(None),
                    }
                }
                ToJson::Record(fields)
            }
            // Decimals, durations, uuids in bytes: rare in instant files; apache-avro's path.
            _ => return Ok(None),
        }))
    }

    fn decode(&self, buf: &mut &[u8]) -> Result<J> {
        let base64 = |b: &[u8]| J::String(base64::engine::general_purpose::STANDARD.encode(b));
        let number = |f: f64| Number::from_f64(f).map(J::Number).unwrap_or(J::Null);
        Ok(match self {
            ToJson::Null => J::Null,
            ToJson::Bool => J::Bool(read_bool(buf)?),
            ToJson::Long => J::from(read_long(buf)?),
            ToJson::Float => number(read_f32(buf)? as f64),
            ToJson::Double => number(read_f64(buf)?),
            ToJson::Bytes => base64(read_bytes(buf)?),
            ToJson::Fixed(n) => base64(read_fixed(buf, *n)?),
            ToJson::String => J::String(read_string(buf)?.to_string()),
            ToJson::Enum(symbols) => {
                let i = read_long(buf)?;
                let symbol = usize::try_from(i)
                    .ok()
                    .and_then(|i| symbols.get(i))
                    .ok_or_else(|| malformed(format!("bad Avro enum index {i}")))?;
                J::String(symbol.clone())
            }
            ToJson::Union(branches) => read_union_branch(buf, branches)?.decode(buf)?,
            ToJson::Array(item) => {
                let mut out = Vec::new();
                each_item(buf, |buf| {
                    out.push(item.decode(buf)?);
                    Ok(())
                })?;
                J::Array(out)
            }
            ToJson::Map(value) => {
                let mut out = Map::new();
                each_item(buf, |buf| {
                    let key = read_string(buf)?.to_string();
                    out.insert(key, value.decode(buf)?);
                    Ok(())
                })?;
                J::Object(out)
            }
            ToJson::Record(fields) => {
                let mut out = Map::with_capacity(fields.len());
                for (name, field) in fields {
                    out.insert(name.clone(), field.decode(buf)?);
                }
                J::Object(out)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::avro::container::{read_json, read_values, MAGIC};
    use crate::log_file::test_util::fixture_zips;

    /// Every Avro instant file of every fixture (Spark-written, versions 8 and 9, data and
    /// metadata timelines) decodes to the same JSON both ways.
    #[test]
    fn fixture_instants_decode_as_apache_avro_values_do() {
        let mut files = 0;
        for (name, path) in fixture_zips() {
            let mut zip = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
            for i in 0..zip.len() {
                let mut entry = zip.by_index(i).unwrap();
                let entry_name = entry.name().unwrap().to_string();
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes).unwrap();
                if !bytes.starts_with(MAGIC) || !entry_name.contains("/.hoodie/") {
                    continue;
                }
                let direct = read_json(&bytes).unwrap();
                let through_values: Vec<J> = read_values(&bytes)
                    .unwrap()
                    .into_iter()
                    .map(crate::avro::value_to_json)
                    .collect();
                assert_eq!(direct, through_values, "{name}: {entry_name}");
                files += 1;
            }
        }
        assert!(
            files > 100,
            "only {files} Avro instant files in the fixtures"
        );
    }

    #[test]
    fn a_truncated_datum_is_an_error_not_a_panic() {
        let text = r#"{"type":"record","name":"r","fields":[{"name":"m","type":{"type":"map","values":"string"}}]}"#;
        let plan = JsonPlan::of_text(text).unwrap().unwrap();
        // One block of 3 entries, then nothing.
        let mut datum: &[u8] = &[6, 2, b'k'];
        assert!(plan.decode(&mut datum).is_err());
    }

    #[test]
    fn decimals_are_left_to_apache_avro() {
        let text = r#"{"type":"record","name":"r","fields":[{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}}]}"#;
        assert!(JsonPlan::of_text(text).unwrap().is_none());
    }
}
