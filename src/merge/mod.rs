//! Merging a file slice — its base file and its log blocks — by record key, with Hudi's
//! rules (docs/hudi-format.md §6).
//!
//! As Java's file-group reader: the log blocks are scanned first, in log order, into a
//! buffer holding the winning version of every key they touch ([`LogRecordBuffer`]); then
//! base rows stream through batch by batch and each is kept, replaced by its log version,
//! or dropped (delete); finally the log records no base row claimed are emitted (inserts
//! that went to logs). Only one slice's log records are held at a time, and base rows are
//! never all in memory.
//!
//! Which version wins ([`MergeRule`]):
//! - `EVENT_TIME_ORDERING`: the greater ordering value; ties go to the later write. A
//!   delete without an ordering value (`IntWrapper(0)`, what Spark SQL writes) applies by
//!   commit time and beats anything before it; a delete with one loses only to a strictly
//!   greater value of the same type.
//! - `COMMIT_TIME_ORDERING`: the later write.
//! - Table version 6 with `OverwriteWithLatestAvroPayload` (0.x semantics): log versions
//!   combine by ordering value (`preCombine`), then the log version replaces the base row
//!   unconditionally (`combineAndGetUpdateValue`).
//!
//! A data record with `_hoodie_is_deleted = true` (or the table's custom delete marker) is a
//! delete carrying its ordering value.

mod buffer;
pub mod ordering;

pub use buffer::{LogRecordBuffer, LogScanStats};

use std::collections::HashSet;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray};
use arrow_schema::{DataType, SchemaRef};

use ordering::{compare_keys, OrderKey};

use crate::config::{MergeMode, TableConfig};
use crate::error::{HudiError, Result};
use crate::file_group::FileSlice;
use futures::stream::{BoxStream, StreamExt};

use crate::meta_client::MetaClient;
use crate::schema::{IS_DELETED, RECORD_KEY};
use crate::timeline::Visibility;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeRule {
    EventTime,
    CommitTime,
    /// v6 `OverwriteWithLatestAvroPayload`: event time among log versions, log over base.
    LegacyOverwrite,
}

impl MergeRule {
    pub fn of(config: &TableConfig) -> Result<MergeRule> {
        let payload = config
            .payload_class
            .as_deref()
            .map(|p| p.rsplit('.').next().unwrap_or(p));
        let has_ordering = !config.ordering_fields.is_empty();
        let rule = match (config.merge_mode, payload) {
            (_, Some("OverwriteWithLatestAvroPayload")) if config.version < 8 => MergeRule::LegacyOverwrite,
            (MergeMode::EventTimeOrdering, _) => MergeRule::EventTime,
            (MergeMode::CommitTimeOrdering, _) => MergeRule::CommitTime,
            (MergeMode::Custom, Some("DefaultHoodieRecordPayload" | "EventTimeAvroPayload")) => MergeRule::EventTime,
            (MergeMode::Custom, Some("OverwriteWithLatestAvroPayload")) => MergeRule::CommitTime,
            (MergeMode::Custom, other) => {
                return Err(HudiError::unsupported(format!(
                    "custom record merging (payload {}, strategy {}); supported: event-time and commit-time ordering, \
                     DefaultHoodieRecordPayload, EventTimeAvroPayload, OverwriteWithLatestAvroPayload",
                    other.unwrap_or("none"),
                    config.merge_strategy_id.as_deref().unwrap_or("none")
                )))
            }
        };
        // Event-time ordering needs an ordering field; without one Hudi orders by commit.
        Ok(if rule == MergeRule::EventTime && !has_ordering {
            MergeRule::CommitTime
        } else {
            rule
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Data,
    /// Applies by commit order (no ordering value).
    CommitTimeDelete,
    /// Carries an ordering value (delete record with one, or `_hoodie_is_deleted`).
    OrderedDelete,
}

#[derive(Debug, Clone)]
struct Version {
    /// (log batch, row) for data records.
    at: (u32, u32),
    order: OrderKey,
    kind: Kind,
}

/// Whether `new` (written later) replaces `old`.
fn newer_wins(rule: MergeRule, old: &Version, new: &Version) -> bool {
    if rule == MergeRule::CommitTime
        || new.kind == Kind::CommitTimeDelete
        || old.kind == Kind::CommitTimeDelete
    {
        return true;
    }
    compare_keys(&new.order, &old.order).is_none_or(|o| o.is_ge())
}

/// What a merge needs to know about the columns.
#[derive(Debug, Clone)]
pub struct MergeColumns {
    pub schema: SchemaRef,
    pub ordering: Vec<String>,
    pub key_fields: Vec<String>,
    key_generator: crate::config::KeyGeneratorType,
    delete_marker: Option<(String, String)>,
}

impl MergeColumns {
    pub fn new(schema: SchemaRef, config: &TableConfig) -> MergeColumns {
        let marker = match (
            config.property("hoodie.record.merge.property.hoodie.payload.delete.field"),
            config.property("hoodie.record.merge.property.hoodie.payload.delete.marker"),
        ) {
            (Some(f), Some(m)) if !f.is_empty() => Some((f.to_string(), m.to_string())),
            _ => None,
        };
        MergeColumns {
            schema,
            ordering: config.ordering_fields.clone(),
            key_fields: config.record_key_fields.clone(),
            key_generator: config.key_generator,
            delete_marker: marker,
        }
    }

    /// Columns a merge reads besides what the query wants.
    pub fn extra_columns(config: &TableConfig) -> Vec<String> {
        let mut cols: Vec<String> = config.ordering_fields.clone();
        cols.push(IS_DELETED.to_string());
        if config.populate_meta_fields {
            cols.push(RECORD_KEY.to_string());
        } else {
            cols.extend(config.record_key_fields.iter().cloned());
        }
        if let Some(f) = config.property("hoodie.record.merge.property.hoodie.payload.delete.field")
        {
            cols.push(f.to_string());
        }
        cols
    }

    fn ordering_columns(&self, batch: &RecordBatch) -> Vec<ArrayRef> {
        self.ordering
            .iter()
            .filter_map(|f| batch.column_by_name(f).cloned())
            .collect()
    }

    /// Record keys of a batch: `_hoodie_record_key`, or derived from the key fields when
    /// meta fields are not populated.
    pub fn keys(&self, batch: &RecordBatch) -> Result<Keys> {
        if let Some(col) = batch.column_by_name(RECORD_KEY) {
            if let Some(s) = col.as_any().downcast_ref::<StringArray>() {
                if s.null_count() < s.len() || self.key_fields.is_empty() {
                    return Ok(Keys::Column(s.clone()));
                }
            }
        }
        let cols: Vec<ArrayRef> =
            self.key_fields
                .iter()
                .map(|f| {
                    batch.column_by_name(f).cloned().ok_or_else(|| {
                        HudiError::invalid(format!("record key field {f} is missing"))
                    })
                })
                .collect::<Result<_>>()?;
        // As the key generator printed them when the log blocks' delete keys were written.
        let mut keys = Vec::with_capacity(batch.num_rows());
        for row in 0..batch.num_rows() {
            let values: Vec<Option<String>> = cols
                .iter()
                .zip(&self.key_fields)
                .map(|(c, f)| {
                    crate::keygen::value_string(c.as_ref(), row)
                        .map_err(|what| HudiError::invalid(format!("record key field {f}: {what}")))
                })
                .collect::<Result<_>>()?;
            keys.push(Some(crate::keygen::record_key_from_values(
                &self.key_fields,
                &values,
                self.key_generator,
            )));
        }
        Ok(Keys::Derived(keys))
    }

    /// Rows that are deletes by content: `_hoodie_is_deleted` or the custom marker.
    fn delete_flags(&self, batch: &RecordBatch) -> Option<BooleanArray> {
        let mut flags: Option<BooleanArray> = batch
            .column_by_name(IS_DELETED)
            .and_then(|c| c.as_any().downcast_ref::<BooleanArray>().cloned());
        if let Some((field, marker)) = &self.delete_marker {
            if let Some(col) = batch.column_by_name(field) {
                if let Ok(text) = crate::cast::cast(col.as_ref(), &DataType::Utf8, true) {
                    let m: BooleanArray = text
                        .as_string::<i32>()
                        .iter()
                        .map(|v| Some(v == Some(marker.as_str())))
                        .collect();
                    flags = Some(match flags {
                        Some(f) => arrow_arith::boolean::or_kleene(&f, &m).unwrap_or(m),
                        None => m,
                    });
                }
            }
        }
        flags
    }
}

/// The record keys of a batch, borrowed from the key column when there is one.
pub enum Keys {
    Column(StringArray),
    Derived(Vec<Option<String>>),
}

impl Keys {
    pub fn len(&self) -> usize {
        match self {
            Keys::Column(c) => c.len(),
            Keys::Derived(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, row: usize) -> Option<&str> {
        match self {
            Keys::Column(c) => c.is_valid(row).then(|| c.value(row)),
            Keys::Derived(v) => v[row].as_deref(),
        }
    }
}

/// A slice with log files, merged: its log blocks are scanned into a buffer, then base
/// batches stream through it one at a time, then the log-only records follow. `needed`
/// columns come out, typed as in `read_schema`; `visibility` says which instants count.
#[allow(clippy::too_many_arguments)]
pub async fn merged_slice_stream(
    client: &MetaClient,
    read_schema: &SchemaRef,
    visibility: &Visibility,
    slice: &FileSlice,
    needed: &[String],
    batch_size: usize,
    evolution: Option<std::sync::Arc<crate::schema::evolution::SchemaEvolution>>,
    base_commits: Option<&HashSet<String>>,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let open = OpenSlice::open(
        client,
        read_schema,
        visibility,
        slice,
        needed,
        batch_size,
        evolution,
    )
    .await?;
    let base_commits = base_commits.map(|c| std::sync::Arc::new(c.clone()));
    let OpenSlice { buffer, base, rows } = open;
    enum Phase {
        Base(
            Box<LogRecordBuffer>,
            BoxStream<'static, Result<RecordBatch>>,
        ),
        Rest(std::vec::IntoIter<RecordBatch>),
    }
    let merged = futures::stream::unfold(Some(Phase::Base(buffer, base)), move |phase| {
        let (rows, base_commits) = (rows.clone(), base_commits.clone());
        async move {
            match phase? {
                Phase::Base(mut buffer, mut base) => match base.next().await {
                    Some(Ok(b)) => {
                        let out = rows
                            .align(&b, base_commits.as_deref())
                            .and_then(|a| buffer.merge_base(&a));
                        Some((out, Some(Phase::Base(buffer, base))))
                    }
                    Some(Err(e)) => Some((Err(e), None)),
                    None => match buffer.remaining(batch_size) {
                        Ok(rest) => {
                            let mut rest = rest.into_iter();
                            rest.next().map(|b| (Ok(b), Some(Phase::Rest(rest))))
                        }
                        Err(e) => Some((Err(e), None)),
                    },
                },
                Phase::Rest(mut rest) => rest.next().map(|b| (Ok(b), Some(Phase::Rest(rest)))),
            }
        }
    });
    Ok(merged.boxed())
}

/// Every row of a slice merged, at once, with what the merge read and did (compaction's
/// write stats): all of `read_schema`'s columns.
pub async fn merged_slice_counted(
    client: &MetaClient,
    read_schema: &SchemaRef,
    visibility: &Visibility,
    slice: &FileSlice,
    batch_size: usize,
    evolution: Option<std::sync::Arc<crate::schema::evolution::SchemaEvolution>>,
) -> Result<(Vec<RecordBatch>, LogScanStats)> {
    let every: Vec<String> = (read_schema.fields().iter())
        .map(|f| f.name().clone())
        .collect();
    let open = OpenSlice::open(
        client,
        read_schema,
        visibility,
        slice,
        &every,
        batch_size,
        evolution,
    )
    .await?;
    let OpenSlice {
        mut buffer,
        mut base,
        rows,
    } = open;
    let mut out = Vec::new();
    while let Some(b) = base.next().await {
        out.push(buffer.merge_base(&rows.align(&b?, None)?)?);
    }
    let mut stats = buffer.stats;
    let rest = buffer.remaining(batch_size)?;
    stats.log_only = rest.iter().map(|b| b.num_rows()).sum();
    out.extend(rest);
    Ok((out, stats))
}

/// A slice opened for merging: its log blocks scanned into the buffer, its base file's
/// batches ready to stream through it.
struct OpenSlice {
    buffer: Box<LogRecordBuffer>,
    base: BoxStream<'static, Result<RecordBatch>>,
    rows: BaseRows,
}

/// How base batches become the merge's rows.
#[derive(Clone)]
struct BaseRows {
    schema: SchemaRef,
    partition: String,
    config: TableConfig,
}

impl BaseRows {
    /// A base batch in the merge schema, keeping only rows `base_commits` wrote when given.
    fn align(
        &self,
        b: &RecordBatch,
        base_commits: Option<&HashSet<String>>,
    ) -> Result<RecordBatch> {
        let a = crate::schema::align::to_schema(b, &self.schema, &self.partition, &self.config)?;
        match base_commits {
            Some(commits) => {
                let mask = commit_time_mask(&a, commits)?;
                arrow_select::filter::filter_record_batch(&a, &mask)
                    .map_err(crate::error::malformed_by)
            }
            None => Ok(a),
        }
    }
}

impl OpenSlice {
    async fn open(
        client: &MetaClient,
        read_schema: &SchemaRef,
        visibility: &Visibility,
        slice: &FileSlice,
        needed: &[String],
        batch_size: usize,
        evolution: Option<std::sync::Arc<crate::schema::evolution::SchemaEvolution>>,
    ) -> Result<OpenSlice> {
        let config = client.config();
        let rule = MergeRule::of(config)?;
        let mut columns: Vec<String> = needed.to_vec();
        columns.extend(MergeColumns::extra_columns(config));
        let schema = crate::schema::project_by_name(read_schema, &columns);
        let storage = client.storage();
        let log_paths: Vec<(String, u64)> = slice
            .log_files
            .iter()
            .map(|l| (crate::storage::join(&slice.partition, &l.name), l.size))
            .collect();
        let logs = futures::future::try_join_all(log_paths.iter().map(|(path, size)| {
            crate::log_file::read_log_file(storage.as_ref(), path, (*size > 0).then_some(*size))
        }));
        // The base file's footer (with a small file's data) is read beside the log files: it
        // does not depend on them, and waiting would cost a round trip.
        let base_path = slice.base_path();
        let every_column = schema.fields().len() == read_schema.fields().len();
        let footer = async {
            match &base_path {
                Some(path) => {
                    let limit = crate::base_file::data_with_footer(every_column);
                    client
                        .footer_and_data(path, slice.base_size(), limit)
                        .await
                        .map(Some)
                }
                None => Ok(None),
            }
        };
        let (logs, footer) = futures::future::try_join(logs, footer).await?;
        let mut buffer = LogRecordBuffer::new(rule, MergeColumns::new(schema.clone(), config));
        buffer.evolution = evolution.clone();
        buffer.scan(client, &logs, visibility).await?;

        let base = match (base_path, footer, &slice.base_file) {
            (Some(path), Some(footer), Some(base)) => {
                let row_groups: Vec<usize> = (0..footer.parquet().num_row_groups()).collect();
                let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
                let columns = match &evolution {
                    Some(e) => e.file_columns(&base.instant, &path)?,
                    None => None,
                };
                crate::base_file::stream_row_groups_as(
                    storage.clone(),
                    &path,
                    footer,
                    row_groups,
                    &names,
                    batch_size,
                    columns,
                )?
            }
            _ => futures::stream::empty().boxed(),
        };
        Ok(OpenSlice {
            buffer: Box::new(buffer),
            base,
            rows: BaseRows {
                schema,
                partition: slice.partition.clone(),
                config: config.clone(),
            },
        })
    }
}

/// Rows a commit of `commits` wrote, by `_hoodie_commit_time`.
pub(crate) fn commit_time_mask(
    batch: &RecordBatch,
    commits: &HashSet<String>,
) -> Result<BooleanArray> {
    let col = batch
        .column_by_name(crate::schema::COMMIT_TIME)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| {
            HudiError::unsupported("incremental queries on tables without _hoodie_commit_time")
        })?;
    Ok(col
        .iter()
        .map(|v| Some(v.is_some_and(|t| commits.contains(t))))
        .collect())
}
