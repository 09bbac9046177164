//! The bytes of what a commit writes: rows with their meta fields, base files, log files,
//! partition metadata, instant times.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt32Array};
use arrow_schema::SchemaRef;
use chrono::Utc;

use crate::error::{malformed_by, HudiError, Result};
use crate::schema::{COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY};

/// The write token in file names (`<task partition>-<stage>-<attempt>` in Spark); one task.
pub const WRITE_TOKEN: &str = "0-0-0";

/// A new file group id as Java makes them: a random UUID and the file index `-0`.
pub fn new_file_id() -> Result<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| HudiError::io("random source", e))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}-0",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

pub fn base_file_name(file_id: &str, instant: &str) -> String {
    format!("{file_id}_{WRITE_TOKEN}_{instant}.parquet")
}

pub fn log_file_name(file_id: &str, instant: &str, version: u32) -> String {
    format!(".{file_id}_{instant}.log.{version}_{WRITE_TOKEN}")
}

/// Meta fields for rows of one file, in front of the data columns: the table's read schema.
pub struct MetaFields<'a> {
    pub instant: &'a str,
    /// Distinguishes files of one commit in the sequence numbers.
    pub file_index: usize,
    pub file_name: &'a str,
    /// The sequence number of the first row (a file's rows may come in several batches).
    pub first_seqno: usize,
    /// `hoodie.populate.meta.fields`: when false the meta columns are written null (Java
    /// keeps them in the file schema).
    pub populated: bool,
}

/// `rows` of `input` (data columns) with meta fields, as `schema` (meta + data columns).
pub fn with_meta(
    input: &RecordBatch,
    rows: &[(String, String, usize)],
    meta: &MetaFields<'_>,
    schema: &SchemaRef,
) -> Result<RecordBatch> {
    let indices = UInt32Array::from_iter_values(rows.iter().map(|(_, _, r)| *r as u32));
    let n = rows.len();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for field in schema.fields() {
        let name = field.name().as_str();
        if !meta.populated && crate::schema::META_COLUMNS.contains(&name) {
            columns.push(arrow_array::new_null_array(field.data_type(), n));
            continue;
        }
        let column: ArrayRef = match name {
            COMMIT_TIME => Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                meta.instant,
                n,
            ))),
            COMMIT_SEQNO => Arc::new(StringArray::from_iter_values(
                (meta.first_seqno..meta.first_seqno + n)
                    .map(|i| format!("{}_{}_{}", meta.instant, meta.file_index, i)),
            )),
            RECORD_KEY => Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(k, _, _)| k.as_str()),
            )),
            PARTITION_PATH => Arc::new(StringArray::from_iter_values(
                rows.iter().map(|(_, p, _)| p.as_str()),
            )),
            FILE_NAME => Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                meta.file_name,
                n,
            ))),
            name => {
                let column = input.column_by_name(name).ok_or_else(|| {
                    HudiError::invalid_input(format!("column {name:?} is missing"))
                })?;
                arrow_select::take::take(column.as_ref(), &indices, None).map_err(malformed_by)?
            }
        };
        columns.push(column);
    }
    RecordBatch::try_new(schema.clone(), columns).map_err(malformed_by)
}

/// `.hoodie_partition_metadata` of a new partition (Java `HoodiePartitionMetadata`, a
/// properties file).
pub fn partition_metadata(instant: &str, partition: &str) -> Vec<u8> {
    let depth = if partition.is_empty() {
        0
    } else {
        partition.split('/').count()
    };
    let now = Utc::now().format("%a %b %d %H:%M:%S UTC %Y");
    format!("#partition metadata\n#{now}\ncommitTime={instant}\npartitionDepth={depth}\n")
        .into_bytes()
}

/// The current time in epoch milliseconds. Natively `HUDI_EDGE_CLOCK_SKEW_MS` shifts this
/// writer's clock (the multi-writer tests run writers whose clocks are seconds apart).
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis() + clock_skew_ms()
}

#[cfg(not(target_arch = "wasm32"))]
fn clock_skew_ms() -> i64 {
    static SKEW: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *SKEW.get_or_init(|| {
        std::env::var("HUDI_EDGE_CLOCK_SKEW_MS")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    })
}

#[cfg(target_arch = "wasm32")]
fn clock_skew_ms() -> i64 {
    0
}
