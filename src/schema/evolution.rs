//! Schema evolution on read (`hoodie.schema.on.read.enable`): Hudi's InternalSchema gives
//! every column an id, and `ALTER TABLE … RENAME / DROP COLUMN` change names without
//! rewriting files. Readers match a file's columns by id, through the schema version the file
//! was written under: the newest version of the history (`.hoodie/.schema/*.schemacommit`)
//! not newer than the file's instant (Java: `InternalSchemaCache.searchSchemaAndCache`,
//! `InternalSchemaMerger`). Matching by name would read a renamed column as nulls, and a
//! dropped column's values under a new column of the same name. Sans-IO: the caller fetches
//! the JSON.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Field, Schema, SchemaRef};
use serde_json::Value;

use crate::error::{HudiError, Result};

/// The `extraMetadata` key of a commit written with schema evolution on read.
pub const LATEST_SCHEMA_KEY: &str = "latest_schema";
/// Where the history of InternalSchema versions lives.
pub use crate::config::layout::SCHEMA_HISTORY_DIR as HISTORY_DIR;

/// The requested time of the write a history file (`path`, in any state:
/// `<t>.schemacommit.requested`, `<t>.schemacommit.inflight`, `<t>_<completion>.schemacommit`)
/// belongs to, and whether it is the completed one; `None` for other files.
pub fn history_file_instant(path: &str) -> Option<(&str, bool)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if !name.contains(".schemacommit") {
        return None;
    }
    let instant = name.split(['_', '.']).next()?;
    Some((instant, name.ends_with(".schemacommit")))
}

/// One InternalSchema version: top-level columns by id, and each column's nested shape
/// (names and ids of nested fields), which this reader does not map.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SchemaVersion {
    pub version_id: u64,
    columns: Vec<(i64, String, Value)>,
}

impl SchemaVersion {
    pub fn parse(json: &Value, origin: &str) -> Result<SchemaVersion> {
        let bad = |what: &str| HudiError::corrupt(origin, format!("InternalSchema: {what}"));
        let version_id = match json.get("version_id") {
            Some(Value::Number(n)) => n.as_u64().ok_or_else(|| bad("version_id"))?,
            Some(Value::String(s)) => s.parse().map_err(|_| bad("version_id"))?,
            _ => return Err(bad("no version_id")),
        };
        let fields = json
            .get("fields")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("no fields"))?;
        let mut columns = Vec::with_capacity(fields.len());
        for f in fields {
            let id = f
                .get("id")
                .and_then(Value::as_i64)
                .ok_or_else(|| bad("a field without id"))?;
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("a field without name"))?;
            columns.push((
                id,
                name.to_string(),
                f.get("type").cloned().unwrap_or(Value::Null),
            ));
        }
        Ok(SchemaVersion {
            version_id,
            columns,
        })
    }

    fn by_id(&self, id: i64) -> Option<&(i64, String, Value)> {
        self.columns.iter().find(|(i, _, _)| *i == id)
    }
}

/// The schema a read sees and every version files may have been written under.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SchemaEvolution {
    query: SchemaVersion,
    /// Oldest first.
    history: Vec<SchemaVersion>,
}

impl SchemaEvolution {
    /// `latest_schema` of the commit the read's schema comes from, and the history file's
    /// text (`{"schemas": [...]}`), if the table has one.
    pub fn new(
        latest_schema: &str,
        latest_origin: &str,
        history: Option<(&[u8], &str)>,
    ) -> Result<SchemaEvolution> {
        let json: Value = serde_json::from_str(latest_schema)
            .map_err(|e| HudiError::corrupt(latest_origin, format!("latest_schema: {e}")))?;
        let query = SchemaVersion::parse(&json, latest_origin)?;
        let mut versions = Vec::new();
        if let Some((bytes, origin)) = history {
            let json: Value = serde_json::from_slice(bytes)
                .map_err(|e| HudiError::corrupt(origin, format!("schema history: {e}")))?;
            let schemas = json
                .get("schemas")
                .and_then(Value::as_array)
                .ok_or_else(|| HudiError::corrupt(origin, "schema history without schemas"))?;
            for s in schemas {
                versions.push(SchemaVersion::parse(s, origin)?);
            }
        }
        if !versions.iter().any(|v| v.version_id == query.version_id) {
            versions.push(query.clone());
        }
        versions.sort_by_key(|v| v.version_id);
        Ok(SchemaEvolution {
            query,
            history: versions,
        })
    }

    /// The version a file written at `instant` was written under: the newest not newer.
    fn version_at(&self, instant: &str) -> &SchemaVersion {
        let at: Option<u64> = instant
            .get(..17.min(instant.len()))
            .and_then(|s| s.parse().ok());
        let at = at.map(|t| {
            // Versions carry 17-digit instants; older 14-digit ones compare in milliseconds.
            if instant.len() == 14 {
                t * 1000
            } else {
                t
            }
        });
        match at {
            Some(t) => self
                .history
                .iter()
                .rev()
                .find(|v| v.version_id <= t)
                .unwrap_or(&self.query),
            None => &self.query,
        }
    }

    /// How the columns of a file written at `instant` map to the read's; `None` when their
    /// names match the read's (nothing to do). Nested fields renamed or dropped since are
    /// refused: their values would come out wrong.
    pub fn file_columns(&self, instant: &str, path: &str) -> Result<Option<Arc<FileColumns>>> {
        let file = self.version_at(instant);
        if file.columns == self.query.columns {
            return Ok(None);
        }
        let mut to_file = HashMap::new();
        for (id, name, shape) in &self.query.columns {
            let source = match file.by_id(*id) {
                Some((_, file_name, file_shape)) => {
                    if nested_names(file_shape) != nested_names(shape) {
                        return Err(HudiError::unsupported_in(
                            format!(
                                "column {name}: its nested fields were renamed or dropped since this file \
                                 was written (schema version {}); hudi-edge maps top-level columns only",
                                file.version_id
                            ),
                            path,
                        ));
                    }
                    Some(file_name.clone())
                }
                None => None,
            };
            if source.as_deref() != Some(name.as_str()) {
                to_file.insert(name.clone(), source);
            }
        }
        if to_file.is_empty() {
            return Ok(None);
        }
        Ok(Some(Arc::new(FileColumns { to_file })))
    }

    /// Columns whose name has not meant the same column throughout the history: statistics
    /// recorded under that name may describe another column, so they prune nothing.
    pub fn unstable_columns(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (id, name, _) in &self.query.columns {
            let moved = self
                .history
                .iter()
                .any(|v| v.columns.iter().any(|(i, n, _)| (i == id) != (n == name)));
            if moved {
                out.push(name.clone());
            }
        }
        out
    }
}

/// Names of nested fields (ids aside, which only the nested mapping would need).
fn nested_names(shape: &Value) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, prefix: &str, out: &mut Vec<String>) {
        let Value::Object(m) = v else {
            return;
        };
        if let Some(fields) = m.get("fields").and_then(Value::as_array) {
            for f in fields {
                let name = f.get("name").and_then(Value::as_str).unwrap_or("");
                let path = format!("{prefix}.{name}");
                out.push(path.clone());
                if let Some(t) = f.get("type") {
                    walk(t, &path, out);
                }
            }
        }
        for k in ["element", "key", "value"] {
            if let Some(t) = m.get(k) {
                walk(t, &format!("{prefix}.{k}"), out);
            }
        }
    }
    walk(shape, "", &mut out);
    out
}

/// One file's columns under the read's names: where they differ, the file's name for a
/// read column (`None`: the file does not hold it, even if a column of that name is there).
#[derive(Debug, Clone)]
pub struct FileColumns {
    to_file: HashMap<String, Option<String>>,
}

impl FileColumns {
    /// The file's names of the read's columns `names`, without those the file lacks.
    pub fn file_names(&self, names: &[String]) -> Vec<String> {
        names
            .iter()
            .filter_map(|n| match self.to_file.get(n) {
                Some(source) => source.clone(),
                None => Some(n.clone()),
            })
            .collect()
    }

    /// `target` with each column named as the file names it (columns the file lacks get a
    /// name no file has): decode with this, then [`Self::renamed_back`].
    pub fn file_side(&self, target: &SchemaRef) -> SchemaRef {
        let fields: Vec<Field> = target
            .fields()
            .iter()
            .map(|f| match self.to_file.get(f.name()) {
                Some(Some(source)) => f.as_ref().clone().with_name(source),
                Some(None) => f
                    .as_ref()
                    .clone()
                    .with_name(format!("\u{1}absent {}", f.name())),
                None => f.as_ref().clone(),
            })
            .collect();
        Arc::new(Schema::new_with_metadata(fields, target.metadata().clone()))
    }

    /// A batch decoded in [`Self::file_side`]`(target)`, in `target`'s names.
    pub fn renamed_back(batch: RecordBatch, target: &SchemaRef) -> Result<RecordBatch> {
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        RecordBatch::try_new_with_options(target.clone(), batch.columns().to_vec(), &options)
            .map_err(crate::error::malformed_by)
    }

    /// A batch read from the file, its columns renamed to the read's names; file columns
    /// that are no read column (dropped, or a name since given to another column) removed.
    pub fn to_read_names(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let mut fields = Vec::new();
        let mut columns = Vec::new();
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            let file_name = field.name();
            let read_name = self
                .to_file
                .iter()
                .find(|(_, source)| source.as_deref() == Some(file_name.as_str()))
                .map(|(read, _)| read.clone());
            let name = match read_name {
                Some(read) => read,
                // A read column of this name that maps elsewhere: not this one.
                None if self.to_file.contains_key(file_name) => continue,
                None => file_name.clone(),
            };
            fields.push(field.as_ref().clone().with_name(name));
            columns.push(column.clone());
        }
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)
            .map_err(crate::error::malformed_by)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, StringArray};
    use arrow_schema::DataType;

    fn version(id: u64, cols: &[(i64, &str)]) -> String {
        let fields: Vec<Value> = cols
            .iter()
            .map(|(i, n)| serde_json::json!({"id": i, "name": n, "optional": true, "type": "string"}))
            .collect();
        serde_json::json!({"version_id": id, "max_column_id": 9, "type": "record", "fields": fields})
            .to_string()
    }

    /// Renamed `name` → `title` at 200, dropped `price` at 300, added a new `price` at 400.
    fn evolution() -> SchemaEvolution {
        let v0 = version(0, &[(1, "id"), (2, "name"), (3, "price")]);
        let v200 = version(200, &[(1, "id"), (2, "title"), (3, "price")]);
        let v300 = version(300, &[(1, "id"), (2, "title")]);
        let v400 = version(400, &[(1, "id"), (2, "title"), (4, "price")]);
        let history = format!("{{\"schemas\": [{v400}, {v300}, {v200}, {v0}]}}");
        SchemaEvolution::new(&v400, "commit", Some((history.as_bytes(), "history"))).unwrap()
    }

    #[test]
    fn maps_by_id_through_the_files_version() {
        let e = evolution();
        // Written at 100 (version 0): `title` is its `name`; its `price` is another column.
        let old = e.file_columns("100", "f").unwrap().expect("a mapping");
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            old.file_names(&names(&["id", "title", "price"])),
            names(&["id", "name"])
        );
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int32, true),
                Field::new("name", DataType::Utf8, true),
                Field::new("price", DataType::Utf8, true),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(StringArray::from(vec!["a"])),
                Arc::new(StringArray::from(vec!["old price"])),
            ],
        )
        .unwrap();
        let read = old.to_read_names(&batch).unwrap();
        let schema = read.schema();
        let got: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(got, ["id", "title"]);
        // Written at 450: the current version, names as they are.
        assert!(e.file_columns("450", "f").unwrap().is_none());
        assert_eq!(e.unstable_columns(), names(&["title", "price"]));
    }

    #[test]
    fn decodes_under_the_files_names() {
        let e = evolution();
        let old = e.file_columns("250", "f").unwrap().expect("a mapping");
        let target: SchemaRef = Arc::new(Schema::new(vec![
            Field::new("title", DataType::Utf8, true),
            Field::new("price", DataType::Utf8, true),
        ]));
        let side = old.file_side(&target);
        assert_eq!(side.field(0).name(), "title");
        assert!(
            side.field(1).name().starts_with('\u{1}'),
            "written at 250, its price is another column"
        );
    }
}
