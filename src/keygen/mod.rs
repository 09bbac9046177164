//! Partition paths and record keys as Hudi's key generators write them (§9): turning a
//! partition path back into typed partition values, and deriving keys when meta fields
//! are not populated.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::{new_null_array, Array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};

use crate::config::{KeyGeneratorType, TableConfig};
use crate::error::Result;

mod value;
pub use value::value_string;

pub const HIVE_DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// Raw (string) partition values parsed from a partition path, by field. `None` when the
/// path does not encode field values directly (timestamp key generators format a date).
pub fn partition_values(path: &str, config: &TableConfig) -> Option<Vec<(String, Option<String>)>> {
    if !config.is_partitioned() {
        return Some(Vec::new());
    }
    if !values_in_path(config) {
        return None;
    }
    let segments: Vec<&str> = if path.is_empty() {
        Vec::new()
    } else {
        path.split('/').collect()
    };
    if segments.len() != config.partition_fields.len() {
        return None;
    }
    let mut out = Vec::with_capacity(segments.len());
    for (field, segment) in config.partition_fields.iter().zip(segments) {
        let raw = if config.hive_style_partitioning {
            match segment.split_once('=') {
                Some((name, v)) if name == field => v,
                _ => return None,
            }
        } else {
            segment
        };
        let value = if config.url_encode_partitions {
            unescape_path_name(raw)
        } else {
            raw.to_string()
        };
        out.push((
            field.clone(),
            (value != HIVE_DEFAULT_PARTITION).then_some(value),
        ));
    }
    Some(out)
}

/// Whether the key generator writes partition values into paths as they are (simple,
/// complex), so a path can be read back into them.
pub fn values_in_path(config: &TableConfig) -> bool {
    !matches!(
        config.key_generator,
        KeyGeneratorType::Timestamp | KeyGeneratorType::Custom
    )
}

/// Hive's `unescapePathName`: `%XX` back to the character.
pub fn unescape_path_name(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One row per partition with the partition columns typed as the table schema says, for
/// evaluating filters on partitions. Values that do not parse as the column type are null
/// (and so never prune). Returns `None` when the layout does not expose values.
pub fn partition_batch(
    paths: &[&str],
    config: &TableConfig,
    table_schema: &Schema,
) -> Result<Option<RecordBatch>> {
    if !config.is_partitioned() || paths.is_empty() {
        return Ok(None);
    }
    let mut columns: BTreeMap<&str, Vec<Option<String>>> = BTreeMap::new();
    for path in paths {
        let Some(values) = partition_values(path, config) else {
            return Ok(None);
        };
        for (i, (_, v)) in values.into_iter().enumerate() {
            columns
                .entry(config.partition_fields[i].as_str())
                .or_default()
                .push(v);
        }
    }
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for name in &config.partition_fields {
        let raw = StringArray::from(columns.remove(name.as_str()).unwrap_or_default());
        let target = table_schema
            .field_with_name(name)
            .map(|f| f.data_type().clone())
            .unwrap_or(DataType::Utf8);
        let typed = cast_lenient(&raw, &target);
        fields.push(Field::new(name, typed.data_type().clone(), true));
        arrays.push(typed);
    }
    Ok(Some(
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
            .map_err(crate::error::malformed_by)?,
    ))
}

/// Casts strings to `target`, turning unparseable values into nulls.
pub fn cast_lenient(values: &StringArray, target: &DataType) -> ArrayRef {
    if target == &DataType::Utf8 {
        return Arc::new(values.clone());
    }
    crate::cast::cast(values, target, true).unwrap_or_else(|_| new_null_array(target, values.len()))
}

/// A record key from its fields' values: the value for one key field, `f1:v1,f2:v2` for
/// several or under the complex key generator (`kind`).
pub fn record_key_from_values(
    fields: &[String],
    values: &[Option<String>],
    kind: KeyGeneratorType,
) -> String {
    if fields.len() == 1 && kind != KeyGeneratorType::Complex {
        return values.first().cloned().flatten().unwrap_or_default();
    }
    fields
        .iter()
        .zip(values)
        .map(|(f, v)| match v {
            None => format!("{f}:__null__"),
            Some(v) if v.is_empty() => format!("{f}:__empty__"),
            Some(v) => format!("{f}:{v}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(extra: &str) -> TableConfig {
        TableConfig::parse(
            &format!("hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=9\n{extra}"),
            "p",
        )
        .unwrap()
    }

    #[test]
    fn parses_hive_and_plain_paths() {
        let c = cfg("hoodie.table.partition.fields=byteField,shortField\nhoodie.datasource.write.hive_style_partitioning=true\nhoodie.table.keygenerator.type=COMPLEX\n");
        let v = partition_values("byteField=10/shortField=300", &c).unwrap();
        assert_eq!(v[1], ("shortField".to_string(), Some("300".to_string())));
        let p = cfg("hoodie.table.partition.fields=region\nhoodie.datasource.write.partitionpath.urlencode=true\nhoodie.table.keygenerator.type=SIMPLE\n");
        assert_eq!(
            partition_values("a%2Fb", &p).unwrap()[0].1.as_deref(),
            Some("a/b")
        );
        assert_eq!(
            partition_values(HIVE_DEFAULT_PARTITION, &p).unwrap()[0].1,
            None
        );
    }
}
