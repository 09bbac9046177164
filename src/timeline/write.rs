//! Writing instant files as Hudi 1.x writes them: Avro container files for table versions
//! 8/9 (the writer schemas are the exact texts Java puts in the container header, so the
//! bytes match apart from the sync marker), pretty-printed JSON for v6 commit metadata, the
//! layout 1/2 file names, and new instant times.

use std::collections::HashMap;

use chrono::{DateTime, Local, NaiveDateTime, Utc};
use md5::{Digest, Md5};
use serde::Serialize;
use serde_json::{Map, Value};

use super::instant::{action, State};
use super::metadata::{
    CleanMetadata, CleanerPlan, CommitMetadata, RollbackMetadata, RollbackPlan, WriteStat,
};
use crate::config::TimelineTimezone;
use crate::error::{HudiError, Result};

/// The Avro records instant files hold. The schema texts are copied byte for byte from the
/// headers of instants written by Hudi 1.0.x / 1.1.1 (identical in both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstantSchema {
    CommitMetadata,
    ReplaceCommitMetadata,
    RequestedReplaceMetadata,
    RollbackPlan,
    RollbackMetadata,
    CompactionPlan,
    CleanerPlan,
    CleanMetadata,
}

impl InstantSchema {
    pub fn text(self) -> &'static str {
        match self {
            InstantSchema::CommitMetadata => include_str!("schemas/HoodieCommitMetadata.avsc"),
            InstantSchema::ReplaceCommitMetadata => {
                include_str!("schemas/HoodieReplaceCommitMetadata.avsc")
            }
            InstantSchema::RequestedReplaceMetadata => {
                include_str!("schemas/HoodieRequestedReplaceMetadata.avsc")
            }
            InstantSchema::RollbackPlan => include_str!("schemas/HoodieRollbackPlan.avsc"),
            InstantSchema::RollbackMetadata => include_str!("schemas/HoodieRollbackMetadata.avsc"),
            InstantSchema::CompactionPlan => include_str!("schemas/HoodieCompactionPlan.avsc"),
            InstantSchema::CleanerPlan => include_str!("schemas/HoodieCleanerPlan.avsc"),
            InstantSchema::CleanMetadata => include_str!("schemas/HoodieCleanMetadata.avsc"),
        }
    }
}

/// Commit / delta commit metadata: an Avro container for table versions 8+, Java's
/// pretty-printed JSON for 6 (and 7, which shares the layout).
pub fn encode_commit_metadata(meta: &CommitMetadata, table_version: u32) -> Result<Vec<u8>> {
    encode_commit_like(meta, table_version, InstantSchema::CommitMetadata)
}

/// Completed `replacecommit` metadata (`HoodieReplaceCommitMetadata` in v8+).
pub fn encode_replace_metadata(meta: &CommitMetadata, table_version: u32) -> Result<Vec<u8>> {
    encode_commit_like(meta, table_version, InstantSchema::ReplaceCommitMetadata)
}

fn encode_commit_like(
    meta: &CommitMetadata,
    table_version: u32,
    schema: InstantSchema,
) -> Result<Vec<u8>> {
    match table_version {
        8.. => encode_avro_instant(schema, &to_value(meta)?),
        6 | 7 => Ok(java_pretty_json(&commit_json_v6(
            meta,
            schema == InstantSchema::ReplaceCommitMetadata,
        )?)
        .into_bytes()),
        v => Err(HudiError::unsupported(format!(
            "writing instants of table version {v}"
        ))),
    }
}

/// `<t>.rollback.requested`. Rollback files are Avro in every table version.
pub fn encode_rollback_plan(plan: &RollbackPlan) -> Result<Vec<u8>> {
    encode_avro_instant(InstantSchema::RollbackPlan, &to_value(plan)?)
}

/// `<t>_<c>.rollback` (v8+) / `<t>.rollback` (v6). The `.rollback.inflight` between the two
/// is empty (0 bytes) in Java 1.x.
pub fn encode_rollback_metadata(meta: &RollbackMetadata) -> Result<Vec<u8>> {
    encode_avro_instant(InstantSchema::RollbackMetadata, &to_value(meta)?)
}

/// `<t>.clean.requested`. The `.clean.inflight` after it is empty (0 bytes) in Java 1.x.
pub fn encode_cleaner_plan(plan: &CleanerPlan) -> Result<Vec<u8>> {
    encode_avro_instant(InstantSchema::CleanerPlan, &to_value(plan)?)
}

/// `<t>_<c>.clean`.
pub fn encode_clean_metadata(meta: &CleanMetadata) -> Result<Vec<u8>> {
    encode_avro_instant(InstantSchema::CleanMetadata, &to_value(meta)?)
}

fn to_value<T: Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| HudiError::invalid(format!("instant content: {e}")))
}

/// One record as an Avro object container file the way Java's `DataFileWriter` lays it out
/// for instants: only `avro.schema` in the header (codec null), one block of one record.
/// The sync marker is derived from the content, so encoding the same value twice gives the
/// same bytes (a retried create then finds exactly its own object).
pub fn encode_avro_instant(schema: InstantSchema, value: &Value) -> Result<Vec<u8>> {
    let text = schema.text();
    let parsed: Value = serde_json::from_str(text)
        .map_err(|e| HudiError::invalid(format!("embedded schema: {e}")))?;
    let mut datum = Vec::new();
    let mut names = HashMap::new();
    write_datum(&parsed, value, &mut names, &mut datum, "")?;
    let sync: [u8; 16] = Md5::new()
        .chain_update(text.as_bytes())
        .chain_update(&datum)
        .finalize()
        .into();
    let mut out = Vec::with_capacity(datum.len() + text.len() + 64);
    out.extend_from_slice(crate::avro::container::MAGIC);
    write_long(&mut out, 1);
    write_str(&mut out, "avro.schema");
    write_str(&mut out, text);
    write_long(&mut out, 0);
    out.extend_from_slice(&sync);
    write_long(&mut out, 1);
    write_long(&mut out, datum.len() as i64);
    out.extend_from_slice(&datum);
    out.extend_from_slice(&sync);
    Ok(out)
}

fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn write_str(out: &mut Vec<u8>, s: &str) {
    write_long(out, s.len() as i64);
    out.extend_from_slice(s.as_bytes());
}

fn bad(at: &str, what: impl std::fmt::Display) -> HudiError {
    HudiError::invalid(format!(
        "cannot encode {}: {what}",
        if at.is_empty() { "record" } else { at }
    ))
}

/// Named types seen so far (a later mention by name refers to them).
type Names<'s> = HashMap<String, &'s Value>;

fn register<'s>(schema: &'s Value, names: &mut Names<'s>) {
    let Some(o) = schema.as_object() else { return };
    if let Some(name) = o.get("name").and_then(Value::as_str) {
        names.insert(name.to_string(), schema);
        if let Some(ns) = o.get("namespace").and_then(Value::as_str) {
            names.insert(format!("{ns}.{name}"), schema);
        }
    }
}

/// The type name of a schema: `"long"`, `{"type": "string", ...}` → `string`, records etc.
fn type_name(schema: &Value) -> Option<&str> {
    match schema {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("type").and_then(Value::as_str),
        _ => None,
    }
}

fn resolve<'s>(schema: &'s Value, names: &Names<'s>) -> &'s Value {
    match schema {
        Value::String(s) => names.get(s.as_str()).copied().unwrap_or(schema),
        _ => schema,
    }
}

/// Whether `v` can be written as `schema` (for picking a union branch).
fn accepts(schema: &Value, v: &Value, names: &Names<'_>) -> bool {
    match type_name(resolve(schema, names)) {
        Some("null") => v.is_null(),
        Some("boolean") => v.is_boolean(),
        Some("int") => v.as_i64().is_some_and(|n| i32::try_from(n).is_ok()),
        Some("long") => v.is_i64(),
        Some("float" | "double") => v.is_number(),
        Some("string" | "bytes" | "enum" | "fixed") => v.is_string(),
        Some("record" | "map") => v.is_object(),
        Some("array") => v.is_array(),
        _ => false,
    }
}

fn write_datum<'s>(
    schema: &'s Value,
    v: &Value,
    names: &mut Names<'s>,
    out: &mut Vec<u8>,
    at: &str,
) -> Result<()> {
    if let Value::Array(branches) = schema {
        // Named types defined inside a branch are registered when written; a branch that is
        // never taken cannot be referred to by a value we write either.
        let index = branches
            .iter()
            .position(|b| accepts(b, v, names))
            .ok_or_else(|| bad(at, format!("no branch of {schema} takes {v}")))?;
        write_long(out, index as i64);
        return write_datum(&branches[index], v, names, out, at);
    }
    let schema = resolve(schema, names);
    let ty = type_name(schema).ok_or_else(|| bad(at, format!("schema {schema}")))?;
    match ty {
        "null" if v.is_null() => Ok(()),
        "boolean" => {
            let b = v.as_bool().ok_or_else(|| bad(at, "not a boolean"))?;
            out.push(b as u8);
            Ok(())
        }
        "int" => {
            let n = v
                .as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .ok_or_else(|| bad(at, format!("{v} is not an int")))?;
            write_long(out, n as i64);
            Ok(())
        }
        "long" => {
            let n = v
                .as_i64()
                .ok_or_else(|| bad(at, format!("{v} is not a long")))?;
            write_long(out, n);
            Ok(())
        }
        "float" => {
            let f = v.as_f64().ok_or_else(|| bad(at, "not a number"))?;
            out.extend_from_slice(&(f as f32).to_le_bytes());
            Ok(())
        }
        "double" => {
            let f = v.as_f64().ok_or_else(|| bad(at, "not a number"))?;
            out.extend_from_slice(&f.to_le_bytes());
            Ok(())
        }
        "string" => {
            write_str(out, v.as_str().ok_or_else(|| bad(at, "not a string"))?);
            Ok(())
        }
        "bytes" => {
            use base64::Engine;
            // The decoder gives bytes as base64 text.
            let b = v
                .as_str()
                .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
                .ok_or_else(|| bad(at, "bytes not given as base64"))?;
            write_long(out, b.len() as i64);
            out.extend_from_slice(&b);
            Ok(())
        }
        "enum" => {
            register(schema, names);
            let s = v.as_str().ok_or_else(|| bad(at, "not a string"))?;
            let index = schema
                .get("symbols")
                .and_then(Value::as_array)
                .and_then(|syms| syms.iter().position(|x| x.as_str() == Some(s)))
                .ok_or_else(|| bad(at, format!("{s:?} is not a symbol")))?;
            write_long(out, index as i64);
            Ok(())
        }
        "array" => {
            let items = v.as_array().ok_or_else(|| bad(at, "not an array"))?;
            let item_schema = schema
                .get("items")
                .ok_or_else(|| bad(at, "array without items"))?;
            if !items.is_empty() {
                write_long(out, items.len() as i64);
                for (i, item) in items.iter().enumerate() {
                    write_datum(item_schema, item, names, out, &format!("{at}[{i}]"))?;
                }
            }
            write_long(out, 0);
            Ok(())
        }
        "map" => {
            let entries = v.as_object().ok_or_else(|| bad(at, "not a map"))?;
            let value_schema = schema
                .get("values")
                .ok_or_else(|| bad(at, "map without values"))?;
            if !entries.is_empty() {
                write_long(out, entries.len() as i64);
                for (k, item) in entries {
                    write_str(out, k);
                    write_datum(value_schema, item, names, out, &format!("{at}[{k:?}]"))?;
                }
            }
            write_long(out, 0);
            Ok(())
        }
        "record" => {
            register(schema, names);
            let empty = Map::new();
            let given = match v {
                Value::Object(o) => o,
                Value::Null => &empty,
                _ => return Err(bad(at, "not a record")),
            };
            let fields = schema
                .get("fields")
                .and_then(Value::as_array)
                .ok_or_else(|| bad(at, "record without fields"))?;
            for f in fields {
                let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
                let ty = f.get("type").ok_or_else(|| bad(at, "field without type"))?;
                let here = if at.is_empty() {
                    name.to_string()
                } else {
                    format!("{at}.{name}")
                };
                // An absent field takes its default (Java's builders do the same).
                let value = match given.get(name) {
                    Some(x) => x,
                    None => f.get("default").unwrap_or(&Value::Null),
                };
                write_datum(ty, value, names, out, &here)?;
            }
            Ok(())
        }
        other => Err(bad(at, format!("{v} as {other}"))),
    }
}

// ---- v6 JSON

/// Java's `HoodieCommitMetadata.toJsonString`: its bean order, primitives as 0 when unset.
fn commit_json_v6(meta: &CommitMetadata, replace: bool) -> Result<Value> {
    let mut top = Map::new();
    let mut parts = Map::new();
    for (p, stats) in meta.partition_to_write_stats.iter().flatten() {
        let list = stats
            .iter()
            .flatten()
            .map(write_stat_json_v6)
            .collect::<Result<Vec<_>>>()?;
        parts.insert(p.clone(), Value::Array(list));
    }
    top.insert("partitionToWriteStats".into(), Value::Object(parts));
    top.insert(
        "compacted".into(),
        Value::Bool(meta.compacted.unwrap_or(false)),
    );
    top.insert(
        "extraMetadata".into(),
        to_value(&meta.extra_metadata.clone().unwrap_or_default())?,
    );
    top.insert("operationType".into(), to_value(&meta.operation_type)?);
    if replace || meta.partition_to_replace_file_ids.is_some() {
        top.insert(
            "partitionToReplaceFileIds".into(),
            to_value(
                &meta
                    .partition_to_replace_file_ids
                    .clone()
                    .unwrap_or_default(),
            )?,
        );
    }
    for (k, v) in &meta.other {
        top.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Ok(Value::Object(top))
}

fn write_stat_json_v6(s: &WriteStat) -> Result<Value> {
    let mut o = Map::new();
    let text = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
    let long = |v: Option<i64>| Value::from(v.unwrap_or(0));
    let boxed = |v: Option<i64>| v.map_or(Value::Null, Value::from);
    o.insert("fileId".into(), text(&s.file_id));
    o.insert("path".into(), text(&s.path));
    o.insert("cdcStats".into(), to_value(&s.cdc_stats)?);
    o.insert("prevCommit".into(), text(&s.prev_commit));
    o.insert("numWrites".into(), long(s.num_writes));
    o.insert("numDeletes".into(), long(s.num_deletes));
    o.insert("numUpdateWrites".into(), long(s.num_update_writes));
    o.insert("numInserts".into(), long(s.num_inserts));
    o.insert("totalWriteBytes".into(), long(s.total_write_bytes));
    o.insert("totalWriteErrors".into(), long(s.total_write_errors));
    o.insert("tempPath".into(), text(&s.temp_path));
    o.insert("partitionPath".into(), text(&s.partition_path));
    o.insert("totalLogRecords".into(), long(s.total_log_records));
    o.insert(
        "totalLogFilesCompacted".into(),
        long(s.total_log_files_compacted),
    );
    o.insert(
        "totalLogSizeCompacted".into(),
        long(s.total_log_size_compacted),
    );
    o.insert(
        "totalUpdatedRecordsCompacted".into(),
        long(s.total_updated_records_compacted),
    );
    o.insert("totalLogBlocks".into(), long(s.total_log_blocks));
    o.insert(
        "totalCorruptLogBlock".into(),
        long(s.total_corrupt_log_block),
    );
    o.insert("totalRollbackBlocks".into(), long(s.total_rollback_blocks));
    o.insert("fileSizeInBytes".into(), long(s.file_size_in_bytes));
    o.insert("minEventTime".into(), boxed(s.min_event_time));
    o.insert("maxEventTime".into(), boxed(s.max_event_time));
    // Java's bean order, not the Avro one.
    let runtime = s.runtime_stats.as_ref().map_or(Value::Null, |r| {
        serde_json::json!({
            "totalScanTime": r.total_scan_time.unwrap_or(0),
            "totalUpsertTime": r.total_upsert_time.unwrap_or(0),
            "totalCreateTime": r.total_create_time.unwrap_or(0),
        })
    });
    o.insert("runtimeStats".into(), runtime);
    // Fields of 1.x stats the 0.x JSON did not have: only when set.
    for (k, v) in [
        ("totalLogFiles", s.total_log_files),
        ("totalLogReadTimeMs", s.total_log_read_time_ms),
        ("numUpdates", s.num_updates),
    ] {
        if let Some(v) = v {
            o.insert(k.into(), Value::from(v));
        }
    }
    if let Some(p) = &s.prev_base_file {
        o.insert("prevBaseFile".into(), Value::String(p.clone()));
    }
    // Log writes are `HoodieDeltaWriteStat`s, which add these.
    let delta = s.log_version.is_some()
        || s.log_offset.is_some()
        || s.base_file.is_some()
        || s.log_files.is_some();
    if delta {
        o.insert("logVersion".into(), long(s.log_version));
        o.insert("logOffset".into(), long(s.log_offset));
        o.insert("baseFile".into(), text(&s.base_file));
        o.insert(
            "logFiles".into(),
            to_value(&s.log_files.clone().unwrap_or_default())?,
        );
    }
    for (k, v) in &s.other {
        o.entry(k.clone()).or_insert_with(|| v.clone());
    }
    Ok(Value::Object(o))
}

/// Jackson's default pretty printer: objects one entry a line indented by two spaces per
/// level, `"key" : value`, arrays inline (`[ a, b ]`), empty containers `{ }` / `[ ]`.
pub fn java_pretty_json(v: &Value) -> String {
    let mut out = String::new();
    pretty(v, 0, &mut out);
    out
}

fn pretty(v: &Value, level: usize, out: &mut String) {
    match v {
        Value::Object(o) if o.is_empty() => out.push_str("{ }"),
        Value::Object(o) => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&"  ".repeat(level + 1));
                quote(k, out);
                out.push_str(" : ");
                pretty(x, level + 1, out);
            }
            out.push('\n');
            out.push_str(&"  ".repeat(level));
            out.push('}');
        }
        Value::Array(a) if a.is_empty() => out.push_str("[ ]"),
        Value::Array(a) => {
            out.push_str("[ ");
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                pretty(x, level, out);
            }
            out.push_str(" ]");
        }
        Value::String(s) => quote(s, out),
        other => out.push_str(&other.to_string()),
    }
}

/// Jackson's escaping: `"`, `\`, the usual short escapes, other controls as `\u00XX`.
pub(crate) fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

// ---- names and times

/// The file name of an instant in a state. Layout 2 (v8+) completed instants carry their
/// completion time (`<t>_<c>.<action>`); without one the layout 1 (v6) name comes out. A
/// pending `commit` is inflight as plain `<t>.inflight` in both layouts, and a completed
/// compaction / clustering / log compaction is named by the action it completes as.
pub fn instant_file_name(
    time: &str,
    action_name: &str,
    state: State,
    completion: Option<&str>,
) -> String {
    match state {
        State::Requested => format!("{time}.{action_name}.requested"),
        State::Inflight if action_name == action::COMMIT => format!("{time}.inflight"),
        State::Inflight => format!("{time}.{action_name}.inflight"),
        State::Completed => {
            let done = action::completed_as(action_name);
            match completion {
                Some(c) => format!("{time}_{c}.{done}"),
                None => format!("{time}.{done}"),
            }
        }
    }
}

const INSTANT_FORMAT: &str = "%Y%m%d%H%M%S%3f";

/// A new instant time (`yyyyMMddHHmmssSSS`) for wall-clock `now_ms` in the timeline's zone
/// (`hoodie.table.timeline.timezone`; Java's default is the writer's local zone), made
/// strictly greater than every time in `after` (requested and completion times already on
/// the timeline) by taking the greatest of them plus 1 ms when the clock is not ahead —
/// Java's `max(now, last + 1)`.
pub fn new_instant_time(now_ms: i64, tz: TimelineTimezone, after: &[&str]) -> Result<String> {
    let now = DateTime::<Utc>::from_timestamp_millis(now_ms)
        .ok_or_else(|| HudiError::invalid(format!("clock reading {now_ms} ms")))?;
    let mut t = match tz {
        TimelineTimezone::Utc => now.format(INSTANT_FORMAT).to_string(),
        TimelineTimezone::Local => now.with_timezone(&Local).format(INSTANT_FORMAT).to_string(),
    };
    let mut latest: Option<String> = None;
    for a in after {
        // 14-digit times compare as if ending in 999 (Java); MDT times with a suffix past
        // 17 digits are above their first 17 digits, so the new time must be above those.
        let norm = match a.len() {
            14 => format!("{a}999"),
            n if n > 17 => a.get(..17).unwrap_or_default().to_string(),
            _ => a.to_string(),
        };
        if norm.len() != 17 || !norm.bytes().all(|b| b.is_ascii_digit()) {
            return Err(HudiError::invalid(format!("{a:?} is not an instant time")));
        }
        if latest.as_ref().is_none_or(|l| norm > *l) {
            latest = Some(norm);
        }
    }
    if let Some(l) = latest {
        if t <= l {
            let parsed = NaiveDateTime::parse_from_str(&l, INSTANT_FORMAT)
                .map_err(|_| HudiError::invalid(format!("{l:?} is not an instant time")))?;
            let next = parsed
                .checked_add_signed(chrono::Duration::milliseconds(1))
                .ok_or_else(|| HudiError::invalid(format!("no instant time after {l}")))?;
            t = next.format(INSTANT_FORMAT).to_string();
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests;
