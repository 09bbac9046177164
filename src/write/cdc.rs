//! CDC log files of a table with `hoodie.table.cdc.enabled`, as Java's `HoodieCDCLogger`
//! writes them beside a rewritten base file (docs/hudi-services.md, "CDC"): one
//! `.<fileId>_<instant>.log.1_<token>.cdc` file per rewritten file group, one CDC data block
//! of change records in the schema the supplemental logging mode names, the images without
//! Hudi's meta fields. Log appends (Merge-On-Read) and new file groups write none: readers
//! infer their changes.

use apache_avro::schema::Schema as AvroSchema;
use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch, UInt32Array};
use bytes::Bytes;

use crate::config::TableConfig;
use crate::error::{malformed_by, HudiError, Result};
use crate::read::cdc::SupplementalMode;
use crate::schema::{COMMIT_TIME, RECORD_KEY};
use crate::storage::join;

/// The CDC schema of `OP_KEY_ONLY` (Java's `CDC_SCHEMA_OP_AND_RECORDKEY_STRING`).
const OP_KEY_ONLY_SCHEMA: &str = r#"{"type":"record","name":"Record","fields":[{"name":"op","type":["string","null"]},{"name":"record_key","type":["string","null"]}]}"#;

/// One changed record: its key and the rows before and after (indexes into the old and new
/// batches of the rewrite).
pub(crate) struct Change<'a> {
    pub op: &'static str,
    pub key: &'a str,
    pub before: Option<usize>,
    pub after: Option<usize>,
}

/// A CDC log file written beside a base file.
#[derive(Debug, Clone)]
pub(crate) struct CdcFile {
    /// Relative to the table.
    pub path: String,
    pub bytes: Bytes,
}

/// How a table's change records are written.
pub(crate) struct CdcWriter {
    mode: SupplementalMode,
    /// The CDC block's schema (the header's `SCHEMA`).
    schema: String,
    /// The images' record schema: the table's data schema, without meta fields.
    image: AvroSchema,
}

impl CdcWriter {
    /// `None` unless the table keeps a change feed.
    pub(crate) fn of(config: &TableConfig, data_schema: &str) -> Result<Option<CdcWriter>> {
        if !config.cdc_enabled {
            return Ok(None);
        }
        let mode = SupplementalMode::of(config)?;
        let without_meta = super::avro_rows::without_fields(
            data_schema,
            &crate::schema::META_COLUMNS.map(str::to_string),
        )?;
        let image_json: serde_json::Value = serde_json::from_str(&without_meta)
            .map_err(|e| HudiError::invalid(format!("the table's Avro schema: {e}")))?;
        crate::avro::names::install();
        let image = AvroSchema::parse(&image_json)
            .map_err(|e| HudiError::invalid(format!("the table's Avro schema: {e}")))?;
        let schema = match mode {
            SupplementalMode::OpKeyOnly => OP_KEY_ONLY_SCHEMA.to_string(),
            _ => cdc_schema(&image_json, mode == SupplementalMode::DataBeforeAfter),
        };
        Ok(Some(CdcWriter {
            mode,
            schema,
            image,
        }))
    }

    /// The CDC log file of a rewrite of file group `file_id` at `instant`: `old` holds the
    /// rows before, `new` the rows written (both may carry meta columns; images leave them
    /// out). `None` when nothing changed.
    pub(crate) fn file(
        &self,
        (instant, partition, file_id): (&str, &str, &str),
        changes: &[Change<'_>],
        old: &RecordBatch,
        new: &RecordBatch,
    ) -> Result<Option<CdcFile>> {
        if changes.is_empty() {
            return Ok(None);
        }
        let images = |batch: &RecordBatch, rows: Vec<Option<usize>>| -> Result<Vec<Vec<u8>>> {
            if self.mode == SupplementalMode::OpKeyOnly {
                return Ok(Vec::new());
            }
            let wanted: Vec<u32> = rows.iter().flatten().map(|&r| r as u32).collect();
            let taken = arrow_select::take::take_record_batch(batch, &UInt32Array::from(wanted))
                .map_err(malformed_by)?;
            super::avro_rows::encode_rows(&self.image, &taken)
        };
        let mut before = images(old, changes.iter().map(|c| c.before).collect())?.into_iter();
        let mut after = match self.mode {
            SupplementalMode::DataBeforeAfter => {
                images(new, changes.iter().map(|c| c.after).collect())?
            }
            _ => Vec::new(),
        }
        .into_iter();
        let mut records = Vec::with_capacity(changes.len());
        for c in changes {
            let mut record = Vec::new();
            match self.mode {
                SupplementalMode::OpKeyOnly => {
                    // `["string","null"]`: the string is branch 0.
                    record.push(0);
                    avro_string(c.op, &mut record);
                    record.push(0);
                    avro_string(c.key, &mut record);
                }
                mode => {
                    nullable_string(Some(c.op), &mut record);
                    match mode {
                        SupplementalMode::DataBeforeAfter => {
                            nullable_string(Some(instant), &mut record)
                        }
                        _ => nullable_string(Some(c.key), &mut record),
                    }
                    nullable_image(c.before.and_then(|_| before.next()), &mut record);
                    if mode == SupplementalMode::DataBeforeAfter {
                        nullable_image(c.after.and_then(|_| after.next()), &mut record);
                    }
                }
            }
            records.push(record);
        }
        let bytes = crate::log_file::writer::cdc_data_block(
            instant,
            &self.schema,
            records.iter().map(Vec::as_slice),
        )?;
        let name = format!("{}.cdc", super::files::log_file_name(file_id, instant, 1));
        Ok(Some(CdcFile {
            path: join(partition, &name),
            bytes: Bytes::from(bytes),
        }))
    }
}

/// The CDC log file of file group `file_id` written at `instant`.
pub(crate) fn file_name(file_id: &str, instant: &str) -> String {
    format!("{}.cdc", super::files::log_file_name(file_id, instant, 1))
}

/// The changes of a compaction: rows of `merged` whose commit time differs from the base
/// file's row of the same key came from log files (`u`, or `i` for keys the base file lacks);
/// keys of the base file the merge dropped were deleted (`d`).
pub(crate) fn compacted(base: &RecordBatch, merged: &RecordBatch) -> Result<OwnedChanges> {
    let column = |b: &RecordBatch, name: &str| -> Result<arrow_array::StringArray> {
        let c = b.column_by_name(name).ok_or_else(|| {
            HudiError::unsupported(format!("a change feed of rows without `{name}`"))
        })?;
        let utf8 = arrow_cast::cast(c, &arrow_schema::DataType::Utf8).map_err(malformed_by)?;
        Ok(utf8.as_string::<i32>().clone())
    };
    let (base_keys, base_times) = (column(base, RECORD_KEY)?, column(base, COMMIT_TIME)?);
    let (keys, times) = (column(merged, RECORD_KEY)?, column(merged, COMMIT_TIME)?);
    let in_base: std::collections::HashMap<&str, usize> = (0..base_keys.len())
        .map(|i| (base_keys.value(i), i))
        .collect();
    let mut out = OwnedChanges::default();
    let mut kept = std::collections::HashSet::new();
    for i in 0..keys.len() {
        let key = keys.value(i);
        match in_base.get(key) {
            Some(&b) => {
                kept.insert(key);
                if base_times.value(b) != times.value(i) {
                    out.0.push(("u", key.to_string(), Some(b), Some(i)));
                }
            }
            None => out.0.push(("i", key.to_string(), None, Some(i))),
        }
    }
    for b in 0..base_keys.len() {
        if !kept.contains(base_keys.value(b)) {
            out.0
                .push(("d", base_keys.value(b).to_string(), Some(b), None));
        }
    }
    Ok(out)
}

/// Changes that own their keys.
#[derive(Default)]
pub(crate) struct OwnedChanges(Vec<(&'static str, String, Option<usize>, Option<usize>)>);

impl OwnedChanges {
    pub(crate) fn as_changes(&self) -> Vec<Change<'_>> {
        (self.0.iter())
            .map(|(op, key, before, after)| Change {
                op,
                key,
                before: *before,
                after: *after,
            })
            .collect()
    }
}

/// Java's `HoodieCDCUtils.createCDCSchema`: record `CDC` in the table's namespace, nullable
/// strings and images, the after image naming the record type the before image defines.
fn cdc_schema(image: &serde_json::Value, with_after: bool) -> String {
    use serde_json::json;
    let nullable = |t: serde_json::Value| json!({"type": ["null", t]});
    let field = |name: &str, t: serde_json::Value| json!({"name": name, "type": t["type"], "doc": "", "default": null});
    let mut fields = vec![field("op", nullable(json!("string")))];
    if with_after {
        fields.push(field("ts_ms", nullable(json!("string"))));
    } else {
        fields.push(field("record_key", nullable(json!("string"))));
    }
    fields.push(field("before", nullable(image.clone())));
    if with_after {
        let name = match image["namespace"].as_str() {
            Some(ns) => format!("{ns}.{}", image["name"].as_str().unwrap_or_default()),
            None => image["name"].as_str().unwrap_or_default().to_string(),
        };
        fields.push(field("after", nullable(json!(name))));
    }
    let mut schema = json!({"type": "record", "name": "CDC"});
    if let Some(ns) = image["namespace"].as_str() {
        schema["namespace"] = json!(ns);
    }
    schema["fields"] = serde_json::Value::Array(fields);
    schema.to_string()
}

fn zigzag(n: i64, out: &mut Vec<u8>) {
    let mut v = ((n << 1) ^ (n >> 63)) as u64;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn avro_string(s: &str, out: &mut Vec<u8>) {
    zigzag(s.len() as i64, out);
    out.extend_from_slice(s.as_bytes());
}

/// `["null","string"]`.
fn nullable_string(s: Option<&str>, out: &mut Vec<u8>) {
    match s {
        None => zigzag(0, out),
        Some(s) => {
            zigzag(1, out);
            avro_string(s, out);
        }
    }
}

/// `["null", record]` holding an already encoded record datum.
fn nullable_image(datum: Option<Vec<u8>>, out: &mut Vec<u8>) {
    match datum {
        None => zigzag(0, out),
        Some(d) => {
            zigzag(1, out);
            out.extend_from_slice(&d);
        }
    }
}
