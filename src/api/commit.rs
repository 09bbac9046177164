//! `instant()`'s answer: what one instant wrote, summed up from its metadata as Hudi wrote
//! it (JSON, or Avro as JSON from the archive, where values may be wrapped as
//! `{"string": ...}`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};
#[cfg(target_arch = "wasm32")]
use tsify_next::Tsify;

use super::wire::Instant;

/// One file an instant wrote.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct WrittenFile {
    pub partition: String,
    pub file_id: String,
    /// Relative to the base path.
    pub path: String,
    #[cfg_attr(target_arch = "wasm32", tsify(type = "\"base\" | \"log\""))]
    pub kind: String,
    pub bytes: i64,
    pub inserts: i64,
    pub updates: i64,
    pub deletes: i64,
    pub writes: i64,
    pub prev_commit: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct ReplacedFileGroup {
    pub partition: String,
    pub file_id: String,
}

/// A field of the writer's (Avro) schema.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct SchemaField {
    pub name: String,
    pub r#type: String,
    pub nullable: bool,
}

/// One instant's metadata: files written, record counts, bytes, replaced file groups, schema.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(Tsify), serde(rename_all = "camelCase"))]
pub struct CommitDetail {
    pub instant: Instant,
    pub operation: Option<String>,
    pub partitions: Vec<String>,
    pub files: Vec<WrittenFile>,
    pub inserts: i64,
    pub updates: i64,
    pub deletes: i64,
    pub writes: i64,
    pub bytes: i64,
    pub replaced_file_groups: Vec<ReplacedFileGroup>,
    pub schema: Option<Vec<SchemaField>>,
    pub extra_metadata: BTreeMap<String, String>,
    /// The content as Hudi wrote it (commit metadata, clean / rollback / compaction plans ...).
    #[cfg_attr(target_arch = "wasm32", tsify(type = "unknown"))]
    pub raw: Value,
}

/// Avro-as-JSON wraps values in their type: `{"string": "x"}` → `"x"`.
fn unwrap(v: &Value) -> &Value {
    match v {
        Value::Object(m) if m.len() == 1 => match m.iter().next() {
            Some((k, inner))
                if matches!(
                    k.as_str(),
                    "string" | "long" | "int" | "array" | "map" | "boolean"
                ) =>
            {
                inner
            }
            _ => v,
        },
        _ => v,
    }
}

fn field<'a>(o: &'a Value, k: &str) -> Option<&'a Value> {
    o.get(k).map(unwrap).filter(|v| !v.is_null())
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn num(v: Option<&Value>) -> i64 {
    match v.map(unwrap) {
        Some(Value::Number(n)) => n
            .as_i64()
            .unwrap_or_else(|| n.as_f64().unwrap_or(0.0) as i64),
        Some(Value::String(s)) => s.trim().parse::<f64>().map_or(0, |f| f as i64),
        _ => 0,
    }
}

fn entries(v: Option<&Value>) -> impl Iterator<Item = (&String, &Value)> {
    v.and_then(Value::as_object)
        .into_iter()
        .flat_map(Map::iter)
        .map(|(k, v)| (k, unwrap(v)))
}

fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

fn is_log(path: &str) -> bool {
    path.match_indices(".log.")
        .any(|(i, _)| path[i + 5..].starts_with(|c: char| c.is_ascii_digit()))
}

/// An Avro type as one line: `string`, `decimal(10,2)`, `array<long>`, `struct<a: int>`.
fn avro_type(t: &Value) -> String {
    match t {
        Value::String(s) => s.clone(),
        Value::Array(union) => {
            let rest: Vec<String> = union
                .iter()
                .filter(|x| *x != "null")
                .map(avro_type)
                .collect();
            rest.join(" | ")
        }
        Value::Object(o) => {
            let get = |k: &str| o.get(k).unwrap_or(&Value::Null);
            match (
                o.get("logicalType").and_then(Value::as_str),
                get("type").as_str(),
            ) {
                (Some("decimal"), _) => format!(
                    "decimal({},{})",
                    text(get("precision")),
                    o.get("scale").map_or("0".into(), text)
                ),
                (Some(logical), _) => logical.to_string(),
                (None, Some("array")) => format!("array<{}>", avro_type(get("items"))),
                (None, Some("map")) => format!("map<string, {}>", avro_type(get("values"))),
                (None, Some("record")) => {
                    let fields: Vec<String> = items(get("fields"))
                        .map(|f| format!("{}: {}", text(&f["name"]), avro_type(&f["type"])))
                        .collect();
                    format!("struct<{}>", fields.join(", "))
                }
                (None, Some("enum")) => "enum".into(),
                _ => avro_type(get("type")),
            }
        }
        other => text(other),
    }
}

/// The fields of an Avro schema (JSON text); `None` when it does not parse.
fn schema_fields(avro: &str) -> Option<Vec<SchemaField>> {
    let s: Value = serde_json::from_str(avro).ok()?;
    Some(
        items(&s["fields"])
            .map(|f| SchemaField {
                name: text(&f["name"]),
                r#type: avro_type(&f["type"]),
                nullable: items(&f["type"]).any(|x| x == "null"),
            })
            .collect(),
    )
}

impl CommitDetail {
    pub fn new(mut instant: Instant, content: Option<Value>) -> Self {
        let raw = content.unwrap_or(Value::Null);
        let mut files = Vec::new();
        for (partition, list) in entries(field(&raw, "partitionToWriteStats")) {
            for s in items(list) {
                let path = field(s, "path").map(text).unwrap_or_default();
                files.push(WrittenFile {
                    partition: partition.clone(),
                    file_id: field(s, "fileId").map(text).unwrap_or_default(),
                    kind: if is_log(&path) { "log" } else { "base" }.into(),
                    path,
                    bytes: num(s
                        .get("totalWriteBytes")
                        .filter(|v| !v.is_null())
                        .or(s.get("fileSizeInBytes"))),
                    inserts: num(s.get("numInserts")),
                    updates: num(s.get("numUpdateWrites")),
                    deletes: num(s.get("numDeletes")),
                    writes: num(s.get("numWrites")),
                    prev_commit: field(s, "prevCommit")
                        .map(text)
                        .filter(|p| !p.is_empty() && p != "null"),
                });
            }
        }
        let mut replaced = Vec::new();
        for (partition, ids) in entries(field(&raw, "partitionToReplaceFileIds")) {
            for id in items(ids) {
                replaced.push(ReplacedFileGroup {
                    partition: partition.clone(),
                    file_id: text(id),
                });
            }
        }
        let extra: BTreeMap<String, String> = entries(field(&raw, "extraMetadata"))
            .map(|(k, v)| (k.clone(), text(v)))
            .collect();
        let operation = field(&raw, "operationType")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(op) = operation.as_deref().filter(|op| *op != "UNKNOWN") {
            instant.operation = Some(op.to_string());
        }
        let mut partitions: Vec<String> = Vec::new();
        for p in files
            .iter()
            .map(|f| &f.partition)
            .chain(replaced.iter().map(|r| &r.partition))
        {
            if !partitions.contains(p) {
                partitions.push(p.clone());
            }
        }
        let sum = |f: fn(&WrittenFile) -> i64| files.iter().map(f).sum();
        CommitDetail {
            instant,
            operation,
            partitions,
            inserts: sum(|f| f.inserts),
            updates: sum(|f| f.updates),
            deletes: sum(|f| f.deletes),
            writes: sum(|f| f.writes),
            bytes: sum(|f| f.bytes),
            files,
            replaced_file_groups: replaced,
            schema: extra.get("schema").and_then(|s| schema_fields(s)),
            extra_metadata: extra,
            raw,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_write_stats_and_unwraps_avro_values() {
        let content = serde_json::json!({
            "partitionToWriteStats": {"p=1": [
                {"fileId": "f1", "path": "p=1/f1_0_1.parquet", "numInserts": 3, "numWrites": 3,
                 "totalWriteBytes": 100, "prevCommit": "null"},
                {"fileId": {"string": "f1"}, "path": "p=1/.f1_1.log.1_0", "numUpdateWrites": {"long": 2},
                 "numWrites": "2", "fileSizeInBytes": 50, "prevCommit": "1"}
            ]},
            "extraMetadata": {"schema": "{\"type\":\"record\",\"fields\":[{\"name\":\"a\",\"type\":[\"null\",{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":10,\"scale\":2}]}]}"},
            "operationType": "UPSERT"
        });
        let i = Instant {
            requested_time: "1".into(),
            completion_time: None,
            action: "commit".into(),
            requested_action: "commit".into(),
            state: "completed".into(),
            completion_time_source: None,
            archived: false,
            file: String::new(),
            operation: None,
        };
        let d = CommitDetail::new(i, Some(content));
        assert_eq!(d.instant.operation.as_deref(), Some("UPSERT"));
        assert_eq!((d.inserts, d.updates, d.writes, d.bytes), (3, 2, 5, 150));
        assert_eq!(d.files[1].kind, "log");
        assert_eq!(d.files[0].prev_commit, None);
        assert_eq!(d.files[1].file_id, "f1");
        let schema = d.schema.unwrap();
        assert_eq!(schema[0].r#type, "decimal(10,2)");
        assert!(schema[0].nullable);
    }
}
