//! Secondary indexes (docs/hudi-format.md §8.10): their definitions in the table's index
//! definition file, the text a column value is keyed by, and the record keys an index
//! holds for a set of values.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};

use super::keys::{
    escape_secondary, secondary_index_shard_key, split_secondary_index_key, SECONDARY_SEPARATOR,
};
use super::records::MetadataPayload;
use super::table::MetadataTable;
use crate::error::{HudiError, Result};
use crate::storage::StorageExt;

/// MDT partitions of secondary indexes are named `secondary_index_<index name>`.
pub const SECONDARY_INDEX_PREFIX: &str = "secondary_index_";
/// MDT partitions of expression indexes.
pub const EXPRESSION_INDEX_PREFIX: &str = "expr_index_";

/// One secondary index as the index definition file declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecondaryIndexDef {
    /// MDT partition, `secondary_index_<name>`.
    pub partition: String,
    /// The indexed column.
    pub column: String,
    /// Index version V1 shards by the whole key; V2 by `<value>$`.
    pub v1: bool,
}

impl SecondaryIndexDef {
    /// The key hashed to pick the file group of `<value>$<record key>`.
    pub fn shard_key(&self, value: Option<&str>, full_key: &str) -> String {
        match self.v1 {
            true => full_key.to_string(),
            false => secondary_index_shard_key(value),
        }
    }
}

/// The secondary indexes among `partitions` (the complete MDT partitions of a table at
/// `table_version`), from the parsed index definition file at `path`. An index this engine
/// cannot keep exactly (not a plain column, or undeclared) is refused by name. A definition
/// without a version has its table version's: V1 before version 9.
pub fn secondary_index_defs(
    defs: Option<&serde_json::Value>,
    partitions: &[String],
    path: &str,
    table_version: u32,
) -> Result<Vec<SecondaryIndexDef>> {
    let mut out = Vec::new();
    for p in partitions
        .iter()
        .filter(|p| p.starts_with(SECONDARY_INDEX_PREFIX))
    {
        let def = defs.and_then(|d| d.pointer(&format!("/indexDefinitions/{p}")));
        let Some(def) = def else {
            return Err(HudiError::corrupt(
                path,
                format!("no definition of the secondary index {p} the metadata table holds"),
            ));
        };
        let text = |k: &str| def.get(k).and_then(serde_json::Value::as_str).unwrap_or("");
        let fields: Vec<&str> = (def
            .get("sourceFields")
            .and_then(serde_json::Value::as_array))
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
        let function = text("indexFunction");
        let column = match fields.as_slice() {
            [c] if text("indexType") == "secondary_index"
                && matches!(function, "" | "identity") =>
            {
                c.to_string()
            }
            _ => {
                return Err(HudiError::unsupported_in(
                    format!(
                    "secondary index {p} (type {:?}, function {function:?}, fields {fields:?}): \
                         only identity indexes of one column are kept",
                    text("indexType")
                ),
                    path,
                ))
            }
        };
        out.push(SecondaryIndexDef {
            partition: p.clone(),
            column,
            v1: match text("version") {
                "" => table_version < 9,
                v => v.eq_ignore_ascii_case("V1"),
            },
        });
    }
    Ok(out)
}

/// The text a secondary index keys the value at `row` by, as Java's writer renders the
/// stored value: strings as they are, integers, dates (days since the epoch) and
/// timestamps (their stored number) in decimal, booleans as `true`/`false`; `None` for
/// null. Other types are refused: their Java text is not pinned down here.
pub fn secondary_value(array: &dyn Array, row: usize, column: &str) -> Result<Option<String>> {
    if array.is_null(row) {
        return Ok(None);
    }
    let n = |v: i64| Ok(Some(v.to_string()));
    match array.data_type() {
        DataType::Utf8 => Ok(Some(array.as_string::<i32>().value(row).to_string())),
        DataType::LargeUtf8 => Ok(Some(array.as_string::<i64>().value(row).to_string())),
        DataType::Boolean => Ok(Some(array.as_boolean().value(row).to_string())),
        DataType::Int8 => n(array.as_primitive::<Int8Type>().value(row).into()),
        DataType::Int16 => n(array.as_primitive::<Int16Type>().value(row).into()),
        DataType::Int32 => n(array.as_primitive::<Int32Type>().value(row).into()),
        DataType::Int64 => n(array.as_primitive::<Int64Type>().value(row)),
        DataType::Date32 => n(array.as_primitive::<Date32Type>().value(row).into()),
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            n(array.as_primitive::<TimestampMillisecondType>().value(row))
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            n(array.as_primitive::<TimestampMicrosecondType>().value(row))
        }
        other => Err(HudiError::unsupported(format!(
            "a secondary index on column {column} of type {other}"
        ))),
    }
}

/// The index text of a filter literal on a column of type `ty` (what [`secondary_value`]
/// gives for that value); `None` when it cannot be said exactly.
pub fn literal_value(literal: &str, ty: &DataType) -> Option<String> {
    match ty {
        DataType::Utf8 | DataType::LargeUtf8 => Some(literal.to_string()),
        DataType::Boolean => match literal.trim().to_ascii_lowercase().as_str() {
            "true" => Some("true".into()),
            "false" => Some("false".into()),
            _ => None,
        },
        t if t.is_integer() => literal.trim().parse::<i64>().ok().map(|v| v.to_string()),
        DataType::Date32 => {
            let day = chrono::NaiveDate::parse_from_str(literal.trim(), "%Y-%m-%d").ok()?;
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1)?;
            Some((day - epoch).num_days().to_string())
        }
        _ => None,
    }
}

impl MetadataTable {
    /// Whether the data table lists a secondary index as complete.
    pub fn has_secondary_indexes(&self) -> bool {
        (self.available_partitions().iter()).any(|p| p.starts_with(SECONDARY_INDEX_PREFIX))
    }

    /// The secondary indexes the data table's MDT holds complete, from the index definition
    /// file at `defs_path` (no request when there are none; read once per handle).
    pub async fn secondary_indexes(&self, defs_path: &str) -> Result<Arc<Vec<SecondaryIndexDef>>> {
        let cached = self.secondary_defs.lock().ok().and_then(|c| c.clone());
        if let Some(defs) = cached {
            return Ok(defs);
        }
        let partitions: Vec<String> = (self.available_partitions().iter())
            .filter(|p| p.starts_with(SECONDARY_INDEX_PREFIX))
            .cloned()
            .collect();
        if partitions.is_empty() {
            return Ok(Arc::default());
        }
        let bytes = self
            .data_storage()
            .get(defs_path, crate::storage::Purpose::Other)
            .await?;
        let json: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| HudiError::corrupt_by(defs_path, "bad JSON", e))?;
        let version = self.table_version();
        let defs = Arc::new(secondary_index_defs(
            Some(&json),
            &partitions,
            defs_path,
            version,
        )?);
        if let Ok(mut c) = self.secondary_defs.lock() {
            *c = Some(defs.clone());
        }
        Ok(defs)
    }

    /// The record keys `def` holds for any of `values` (`None` = null), sorted. Entries
    /// marked deleted are left out.
    pub async fn secondary_keys(
        &self,
        def: &SecondaryIndexDef,
        values: &[Option<String>],
    ) -> Result<Vec<String>> {
        let prefixes: Vec<(String, String)> = values
            .iter()
            .map(|v| {
                let prefix = format!("{}{SECONDARY_SEPARATOR}", escape_secondary(v.as_deref()));
                // V1 shards by the whole key, unknown here: every shard is asked.
                let shard = def.shard_key(v.as_deref(), &prefix);
                (prefix, shard)
            })
            .collect();
        let records = if def.v1 {
            let p: Vec<String> = prefixes.into_iter().map(|(p, _)| p).collect();
            self.lookup(&def.partition, super::Lookup::Prefixes(&p))
                .await?
        } else {
            self.lookup_prefixes_routed(&def.partition, &prefixes)
                .await?
        };
        if let Some(p) = records.problems.first() {
            return Err(HudiError::corrupt(def.partition.clone(), p.clone()));
        }
        let mut keys = Vec::new();
        for (k, payload) in &records.values {
            match payload {
                MetadataPayload::SecondaryIndex(e) if e.is_deleted => {}
                MetadataPayload::SecondaryIndex(_) => {
                    // A prefix of an escaped value ending in `$` cannot match a longer value.
                    if let Some((_, Some(key))) = split_secondary_index_key(k) {
                        keys.push(key);
                    }
                }
                other => {
                    return Err(HudiError::corrupt(
                        def.partition.clone(),
                        format!("record {k:?} is not a secondary-index entry: {other:?}"),
                    ))
                }
            }
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_key_like_values() {
        assert_eq!(
            literal_value("2024-01-21", &DataType::Date32).as_deref(),
            Some("19743")
        );
        assert_eq!(literal_value(" 7 ", &DataType::Int64).as_deref(), Some("7"));
        assert_eq!(literal_value("x", &DataType::Float64), None);
        let defs = serde_json::json!({"indexDefinitions": {
            "secondary_index_a": {"indexType": "secondary_index", "indexFunction": "identity",
                                  "sourceFields": ["a"], "version": "V2"},
            "secondary_index_b": {"indexType": "secondary_index", "indexFunction": "upper",
                                  "sourceFields": ["b"], "version": "V2"}}});
        let got = secondary_index_defs(
            Some(&defs),
            &["files".into(), "secondary_index_a".into()],
            "i",
            9,
        )
        .unwrap();
        assert_eq!(got[0].column, "a");
        assert!(!got[0].v1);
        let err =
            secondary_index_defs(Some(&defs), &["secondary_index_b".into()], "i", 9).unwrap_err();
        assert!(err.to_string().contains("secondary_index_b"), "{err}");
        assert!(secondary_index_defs(None, &["secondary_index_c".into()], "i", 9).is_err());
    }
}
