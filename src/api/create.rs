//! A new table as the faces describe it (the CLI's flags, the package's `create` spec).

use std::collections::BTreeMap;

use arrow_schema::Schema;
use serde::Deserialize;

use crate::config::TableType;
use crate::error::{HudiError, Result};
use crate::write::create::NewTable;

/// What a new table is: its columns, keys and layout (Hudi's table configs).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify_next::Tsify))]
pub struct TableSpec {
    /// `hoodie.table.name`; by default the location's last path segment.
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub name: Option<String>,
    /// `COPY_ON_WRITE` / `cow` (the default) or `MERGE_ON_READ` / `mor`.
    #[serde(rename = "type")]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub table_type: Option<String>,
    /// The columns as a Spark SQL column list (or `schema`).
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    pub columns: Option<String>,
    /// The columns as Arrow, set by the face that decoded them.
    #[serde(skip)]
    pub schema: Option<Schema>,
    pub record_key: Vec<String>,
    #[serde(default)]
    pub partition_by: Vec<String>,
    /// Hudi's ordering (precombine) fields: the larger value wins a merge.
    #[serde(default)]
    pub ordering_fields: Vec<String>,
    /// Table configs by their Java names (`hoodie.*`).
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(type = "Record<string, string>"))]
    pub options: BTreeMap<String, String>,
}

impl TableSpec {
    /// The table to create at `location`.
    pub fn new_table(self, location: &str) -> Result<NewTable> {
        let schema =
            match (self.schema, &self.columns) {
                // Columns of data in hand (a file, rows read back): without Hudi's meta columns.
                (Some(s), None) => Schema::new(
                    s.fields()
                        .iter()
                        .filter(|f| !crate::schema::is_meta_column(f.name()))
                        .cloned()
                        .collect::<Vec<_>>(),
                ),
                (None, Some(ddl)) => crate::schema::to_avro::schema_from_ddl(ddl)?,
                _ => return Err(HudiError::invalid(
                    "a new table needs its columns: a Spark SQL column list or an Arrow schema \
                     (one of them)",
                )),
            };
        let table_type = match self
            .table_type
            .as_deref()
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            None | Some("COW" | "COPY_ON_WRITE") => TableType::CopyOnWrite,
            Some("MOR" | "MERGE_ON_READ") => TableType::MergeOnRead,
            Some(other) => {
                return Err(HudiError::invalid(format!(
                    "table type {other}: COPY_ON_WRITE (cow) or MERGE_ON_READ (mor)"
                )))
            }
        };
        let name = self.name.unwrap_or_else(|| {
            let path = location.split(['?', '#']).next().unwrap_or_default();
            path.trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string()
        });
        let names = |v: Vec<String>| -> Vec<String> {
            v.iter()
                .flat_map(|s| s.split(','))
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        Ok(NewTable {
            name,
            table_type,
            schema,
            record_key_fields: names(self.record_key),
            partition_fields: names(self.partition_by),
            ordering_fields: names(self.ordering_fields),
            options: self.options,
        })
    }
}
