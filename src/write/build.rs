//! Building a commit's files before any request: the base files and log files that carry
//! each file group's change, the record-index entries, the commit metadata and the metadata
//! table's delta (docs/hudi-format.md §10.2). Pure: rows and schemas in, bytes out.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::{RecordBatch, StringArray};
use arrow_schema::SchemaRef;
use bytes::Bytes;

use super::cdc::Change;
use super::commit::Inputs;
use super::files::{self, MetaFields};
use super::mdt::{FileEntry, MdtDelta, MdtPrefetch};
use super::plan::GroupChange;
use crate::base_file::writer::{BaseFileSpec, ColumnRange, WrittenBaseFile};
use crate::config::{TableConfig, TableType};
use crate::error::{malformed_by, HudiError, Result};
use crate::file_group::FileSlice;
use crate::log_file::delete::DeleteRecord;
use crate::merge::ordering::{compare_keys, key_of};
use crate::merge::MergeRule;
use crate::metadata::delta::{RecordIndexChange, SecondaryIndexChange};
use crate::schema::FILE_NAME;
use crate::storage::join;
use crate::timeline::metadata::OrderedMap;
use crate::timeline::{CommitMetadata, WriteStat};
use crate::value::Value;

/// A file to write and its write stat.
pub(crate) struct NewFile {
    pub path: String,
    pub bytes: Bytes,
    pub stat: WriteStat,
    pub marker: &'static str,
    /// Column ranges of the rows written (the metadata table's column stats).
    pub columns: Vec<ColumnRange>,
    /// The CDC log file written beside a rewritten base file (tables with a change feed).
    pub cdc: Option<super::cdc::CdcFile>,
}

/// The schemas a commit's files are written in.
pub(crate) struct FileSchemas {
    /// What the snapshot reads (rows of rewritten base files come in it).
    pub read: SchemaRef,
    /// Base files: meta columns always, partition columns unless the table drops them.
    pub base: SchemaRef,
    /// Log blocks: as the writer schema says.
    pub log: SchemaRef,
    /// The writer schema with meta fields, as text and parsed (every log file encodes its
    /// records with it).
    pub avro_with_meta: String,
    pub writer: std::sync::Arc<apache_avro::Schema>,
    /// The base files' Avro schema (`parquet.avro.schema`).
    pub base_avro: String,
    /// Change records of rewrites, when the table keeps a change feed.
    pub cdc: Option<super::cdc::CdcWriter>,
}

impl FileSchemas {
    pub fn new(config: &TableConfig, read: SchemaRef, avro_schema: &str) -> Result<FileSchemas> {
        let avro_with_meta = super::avro_rows::with_meta_fields(avro_schema)?;
        // Partition columns a table does not store stay out of base files. Java's writer
        // keeps them in log blocks when its schema has them (Merge-On-Read: it does;
        // Copy-On-Write: not), so log blocks follow the writer schema.
        let without_partition_columns = |leave_out: &dyn Fn(&str) -> bool| -> SchemaRef {
            let kept: Vec<arrow_schema::FieldRef> = (read.fields().iter())
                .filter(|f| !(config.partition_fields.contains(f.name()) && leave_out(f.name())))
                .cloned()
                .collect();
            Arc::new(arrow_schema::Schema::new_with_metadata(
                kept,
                read.metadata().clone(),
            ))
        };
        let (base, base_avro) = if config.drop_partition_columns {
            (
                without_partition_columns(&|_| true),
                super::avro_rows::without_fields(&avro_with_meta, &config.partition_fields)?,
            )
        } else {
            (read.clone(), avro_with_meta.clone())
        };
        let writer = crate::avro::parse_schema(&avro_with_meta)
            .map_err(|e| HudiError::invalid(format!("the table's Avro schema: {e}")))?;
        let log = without_partition_columns(&|name| match writer.as_ref() {
            apache_avro::Schema::Record(r) => !r.lookup.contains_key(name),
            _ => true,
        });
        // Files always carry the meta columns; reads of a table without meta fields do not.
        let with_meta = |schema: SchemaRef| {
            if config.populate_meta_fields {
                schema
            } else {
                crate::schema::align::nullable(&crate::schema::with_meta_columns(&schema))
            }
        };
        Ok(FileSchemas {
            base: with_meta(base),
            log: with_meta(log),
            read,
            avro_with_meta,
            writer,
            base_avro,
            cdc: super::cdc::CdcWriter::of(config, avro_schema)?,
        })
    }
}

/// A commit's files and what they count.
#[derive(Default)]
pub(crate) struct Built {
    pub files: Vec<NewFile>,
    pub record_index: Vec<RecordIndexChange>,
    /// New file groups of a bucket index: writers conflict over a bucket, not a file id.
    pub new_buckets: Vec<(String, String)>,
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
    pub delete_missing: u64,
}

/// The new file of one changed file group: a log file (Merge-On-Read) or its base file
/// rewritten with `existing`, its rows as they are (Copy-On-Write, or a Merge-On-Read group
/// rewritten to take new keys).
#[allow(clippy::too_many_arguments)]
pub(crate) fn group_file(
    inputs: &Inputs<'_>,
    schemas: &FileSchemas,
    slices: &HashMap<(String, String), &FileSlice>,
    (partition, file_id): &(String, String),
    change: &GroupChange,
    existing: Vec<RecordBatch>,
    config: &TableConfig,
    file_index: usize,
) -> Result<NewFile> {
    let instant = inputs.instant.as_str();
    let mor = config.table_type == TableType::MergeOnRead;
    let slice = slices
        .get(&(partition.clone(), file_id.clone()))
        .ok_or_else(|| {
            HudiError::corrupt(
                partition.clone(),
                format!("file group {file_id} vanished while writing"),
            )
        })?;
    if mor && !change.rewrite {
        return log_file(
            inputs,
            instant,
            file_index,
            slice,
            change,
            (&schemas.log, config.populate_meta_fields),
            (
                &schemas.avro_with_meta,
                &schemas.writer,
                schemas.cdc.is_some(),
            ),
        );
    }
    rewrite_base_file(
        inputs,
        instant,
        file_index,
        slice,
        change,
        (&schemas.read, &schemas.base),
        existing,
        (config, &schemas.base_avro, schemas.cdc.as_ref()),
    )
}

/// Every file of the commit: `changed`, the new files of the planned groups in their order
/// ([`group_file`]), and a base file per new file group.
pub(crate) fn build(
    inputs: &Inputs<'_>,
    schemas: &FileSchemas,
    changed: Vec<NewFile>,
    config: &TableConfig,
) -> Result<Built> {
    let instant = inputs.instant.as_str();
    let mut built = Built::default();
    let mut file_index = changed.len();
    for (file, change) in changed.into_iter().zip(inputs.plan.groups.values()) {
        built.updated += file.stat.num_update_writes.unwrap_or(0) as u64;
        built.inserted += change.inserts.len() as u64;
        built.deleted += file.stat.num_deletes.unwrap_or(0) as u64;
        built.delete_missing +=
            change.deletes.len() as u64 - file.stat.num_deletes.unwrap_or(0) as u64;
        built.files.push(file);
    }
    let entry = |key: &str, partition: &str, file_id: &str, deleted: bool| RecordIndexChange {
        record_key: key.to_string(),
        partition: partition.to_string(),
        file_id: file_id.to_string(),
        instant: instant.to_string(),
        deleted,
    };
    // Entries only for a table that keeps the record index: otherwise a few strings a row
    // held for nothing.
    let indexed =
        (config.metadata_partitions.iter()).any(|p| p == crate::metadata::table::RECORD_INDEX);
    for ((_, file_id), change) in inputs.plan.groups.iter().filter(|_| indexed) {
        built
            .record_index
            .extend((change.inserts.iter()).map(|(key, p, _)| entry(key, p, file_id, false)));
        built.record_index.extend(
            (change.deletes.iter())
                .filter(|(k, _)| !inputs.plan.moved.contains(k))
                .map(|(key, p)| entry(key, p, file_id, true)),
        );
    }
    let new_groups = (inputs.plan.inserts.iter().map(|(p, rows)| (p, None, rows))).chain(
        (inputs.plan.bucket_inserts.iter()).map(|((p, bucket), rows)| (p, Some(*bucket), rows)),
    );
    for (partition, bucket, rows) in new_groups {
        let file_id = match bucket {
            Some(b) => super::bucket::new_file_id(b)?,
            None => files::new_file_id()?,
        };
        if bucket.is_some() {
            built.new_buckets.push((partition.clone(), file_id.clone()));
        }
        if indexed {
            built.record_index.extend(
                rows.iter()
                    .map(|(key, p, _)| entry(key, p, &file_id, false)),
            );
        }
        let name = files::base_file_name(&file_id, instant);
        let batch = files::with_meta(
            inputs.input,
            rows,
            &MetaFields {
                instant,
                file_index,
                file_name: &name,
                first_seqno: 0,
                populated: config.populate_meta_fields,
            },
            &schemas.base,
        )?;
        let written = base_file_bytes(&batch, &schemas.base_avro, &inputs.base_file)?;
        let bytes = written.bytes;
        let n = rows.len() as i64;
        built.inserted += n as u64;
        built.files.push(NewFile {
            path: join(partition, &name),
            stat: WriteStat {
                file_id: Some(file_id),
                path: Some(join(partition, &name)),
                prev_commit: Some("null".into()),
                num_writes: Some(n),
                num_inserts: Some(n),
                num_update_writes: Some(0),
                num_deletes: Some(0),
                total_write_bytes: Some(bytes.len() as i64),
                total_write_errors: Some(0),
                partition_path: Some(partition.clone()),
                file_size_in_bytes: Some(bytes.len() as i64),
                ..WriteStat::default()
            },
            bytes,
            marker: "CREATE",
            columns: written.columns,
            cdc: None,
        });
        file_index += 1;
    }
    Ok(built)
}

/// The commit metadata of `files`: their write stats by partition, the writer schema (and
/// the column ids of a table whose schema evolved on read), the operation.
pub(crate) fn commit_metadata(inputs: &Inputs<'_>, files: &[NewFile]) -> CommitMetadata {
    let mut metadata = CommitMetadata {
        partition_to_write_stats: Some(OrderedMap::new()),
        compacted: Some(false),
        extra_metadata: Some(
            std::iter::once(("schema".to_string(), Some(inputs.avro_schema.to_string())))
                .chain(inputs.schema_on_read.map(|s| {
                    (
                        crate::schema::evolution::LATEST_SCHEMA_KEY.to_string(),
                        Some(s.latest_schema.clone()),
                    )
                }))
                .collect(),
        ),
        operation_type: Some(inputs.operation.java_name().to_string()),
        ..CommitMetadata::default()
    };
    for f in files {
        let partition = f.stat.partition_path.clone().unwrap_or_default();
        if let Some(m) = metadata.partition_to_write_stats.as_mut() {
            m.entry(partition)
                .or_insert_with(|| Some(Vec::new()))
                .get_or_insert_with(Vec::new)
                .push(f.stat.clone());
        }
    }
    metadata
}

/// The metadata table's delta for `files` and the record and secondary indexes' changes.
pub(crate) fn mdt_delta(
    prefetch: &MdtPrefetch,
    config: &TableConfig,
    instant: &str,
    files: &[NewFile],
    (record_index, secondary): (Vec<RecordIndexChange>, Vec<SecondaryIndexChange>),
) -> Result<MdtDelta> {
    // Each file with the CDC log file beside it (its size only: no column statistics).
    let written: Vec<(&str, u64, &[ColumnRange])> = files
        .iter()
        .flat_map(|f| {
            std::iter::once((f.path.as_str(), f.bytes.len() as u64, f.columns.as_slice()))
                .chain((f.cdc.iter()).map(|c| (c.path.as_str(), c.bytes.len() as u64, &[][..])))
        })
        .collect();
    let names: Vec<(String, String)> = written
        .iter()
        .map(|(path, _, _)| {
            let (p, n) = path.rsplit_once('/').unwrap_or(("", path));
            (p.to_string(), n.to_string())
        })
        .collect();
    let entries: Vec<FileEntry<'_>> = written
        .iter()
        .zip(&names)
        .map(|((_, size, columns), (p, n))| FileEntry {
            partition: p,
            file_name: n,
            size: *size,
            columns,
        })
        .collect();
    super::mdt::build(prefetch, config, instant, &entries, record_index, secondary)
}

pub(crate) fn slices_of<'a>(
    slices: impl Iterator<Item = &'a FileSlice>,
) -> HashMap<(String, String), &'a FileSlice> {
    slices
        .map(|s| ((s.partition.clone(), s.file_id.clone()), s))
        .collect()
}

/// Rows a log block encodes at a time.
const LOG_CHUNK_ROWS: usize = 4096;

/// MOR: a log file with the updates (Avro data block) and deletes (delete block).
pub(crate) fn log_file(
    inputs: &Inputs<'_>,
    instant: &str,
    file_index: usize,
    slice: &FileSlice,
    change: &GroupChange,
    (file_schema, populated): (&SchemaRef, bool),
    (avro_with_meta, schema, keeps_change_feed): (&str, &apache_avro::Schema, bool),
) -> Result<NewFile> {
    let name = files::log_file_name(&slice.file_id, instant, 1);
    let path = join(&slice.partition, &name);
    let mut bytes = Vec::new();
    let mut columns = Vec::new();
    // New keys of a bucket-index group are appended with the updates (Java's bucket index
    // indexes log files).
    let count = change.updates.len() + change.inserts.len();
    if count > 0 {
        // The rows with their meta fields a chunk at a time, encoded straight into the
        // block: neither the group's rows nor their records are held whole.
        let mut ranges = crate::base_file::writer::RecordColumnRanges::default();
        let chunks =
            (change.updates.chunks(LOG_CHUNK_ROWS)).chain(change.inserts.chunks(LOG_CHUNK_ROWS));
        let encode = |out: &mut Vec<u8>| {
            let (start, mut first_seqno) = (out.len(), 0);
            for rows in chunks {
                let batch = files::with_meta(
                    inputs.input,
                    rows,
                    &MetaFields {
                        instant,
                        file_index,
                        file_name: &slice.file_id,
                        first_seqno,
                        populated,
                    },
                    file_schema,
                )?;
                super::avro_rows::encode_rows_into(schema, &batch, out)?;
                // Column stats of the log file's records, as Java's append handle collects them.
                ranges.add(&batch);
                first_seqno += rows.len();
                if first_seqno == rows.len() && first_seqno < count {
                    // Room for the rest at the first chunk's bytes per row.
                    out.reserve((out.len() - start) / first_seqno * (count - first_seqno) * 9 / 8);
                }
            }
            Ok(())
        };
        let mut block = crate::log_file::writer::avro_data_block_in_place(
            instant,
            avro_with_meta,
            count,
            0,
            encode,
        )?;
        block.shrink_to_fit();
        bytes = block;
        columns = ranges.finish();
    }
    if !change.deletes.is_empty() {
        let records: Vec<DeleteRecord> = change
            .deletes
            .iter()
            .map(|(k, p)| DeleteRecord {
                record_key: Some(k.clone()),
                partition_path: Some(p.clone()),
                // No ordering value: the delete applies by commit time (as Spark SQL's).
                ordering: Value::Int(0),
            })
            .collect();
        bytes.extend(crate::log_file::writer::delete_block(
            instant,
            Some(avro_with_meta),
            &records,
        )?);
    }
    let size = bytes.len() as i64;
    let updates = change.updates.len() as i64;
    let inserts = change.inserts.len() as i64;
    let deletes = change.deletes.len() as i64;
    // A table with a change feed names the slice the log file joins (its base file and
    // earlier log files, its base instant), as Spark's writer does there: change-feed readers
    // merge the new log file with that slice to find what changed.
    let (prev_commit, base_file, log_files) = match keeps_change_feed {
        true => (
            slice.base_instant.clone(),
            (slice.base_file.as_ref()).map_or_else(String::new, |b| b.name.clone()),
            (slice.log_files.iter().map(|l| l.name.clone()))
                .chain(std::iter::once(name.clone()))
                .collect(),
        ),
        false => (instant.to_string(), String::new(), vec![name.clone()]),
    };
    Ok(NewFile {
        path: path.clone(),
        bytes: Bytes::from(bytes),
        // As Spark 1.1 writes a log append (without a change feed: `prevCommit` the delta
        // commit itself, `baseFile` empty). The file joins whichever slice its completion time falls in
        // (after a pending compaction's instant: the slice that compaction starts).
        stat: WriteStat {
            file_id: Some(slice.file_id.clone()),
            path: Some(path),
            prev_commit: Some(prev_commit),
            num_writes: Some(updates + inserts + deletes),
            num_deletes: Some(deletes),
            num_update_writes: Some(updates),
            num_inserts: Some(inserts),
            total_write_bytes: Some(size),
            total_write_errors: Some(0),
            partition_path: Some(slice.partition.clone()),
            total_log_records: Some(updates + inserts + deletes),
            total_log_blocks: Some((updates + inserts > 0) as i64 + (deletes > 0) as i64),
            file_size_in_bytes: Some(size),
            log_version: Some(1),
            log_offset: Some(0),
            base_file: Some(base_file),
            log_files: Some(log_files),
            ..WriteStat::default()
        },
        marker: "APPEND",
        columns,
        cdc: None,
    })
}

/// COW: the file group's rows merged with the changes, as a new base file of the same group.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rewrite_base_file(
    inputs: &Inputs<'_>,
    instant: &str,
    file_index: usize,
    slice: &FileSlice,
    change: &GroupChange,
    (read_schema, file_schema): (&SchemaRef, &SchemaRef),
    existing: Vec<RecordBatch>,
    (config, avro_with_meta, cdc): (
        &crate::config::TableConfig,
        &str,
        Option<&super::cdc::CdcWriter>,
    ),
) -> Result<NewFile> {
    let name = files::base_file_name(&slice.file_id, instant);
    let path = join(&slice.partition, &name);
    let old = one_batch(read_schema, existing)?;
    let deletes: BTreeSet<&str> = change.deletes.iter().map(|(k, _)| k.as_str()).collect();
    let mut updates: HashMap<&str, &(String, String, usize)> =
        change.updates.iter().map(|u| (u.0.as_str(), u)).collect();
    let keys = super::key::stored_keys(&old, config, &path)?;

    let ordering_old: Vec<_> = config
        .ordering_fields
        .iter()
        .filter_map(|f| old.column_by_name(f).cloned())
        .collect();
    let ordering_new: Vec<_> = config
        .ordering_fields
        .iter()
        .filter_map(|f| inputs.input.column_by_name(f).cloned())
        .collect();
    let by_event_time = inputs.rule == MergeRule::EventTime
        && ordering_old.len() == config.ordering_fields.len()
        && ordering_new.len() == config.ordering_fields.len();

    let mut kept: Vec<u32> = Vec::new();
    let mut replaced: Vec<(String, String, usize)> = Vec::new();
    // Change records: `after` indexes `replaced` (the new rows, in order).
    let mut changes: Vec<Change<'_>> = Vec::new();
    let (mut num_deletes, mut num_updates) = (0i64, 0i64);
    for (row, key) in keys.iter().enumerate() {
        let key = key.as_str();
        if deletes.contains(key) {
            num_deletes += 1;
            changes.push(Change {
                op: "d",
                key,
                before: Some(row),
                after: None,
            });
            continue;
        }
        if let Some(update) = updates.remove(key) {
            num_updates += 1;
            let incoming_loses = by_event_time
                && compare_keys(
                    &key_of(&ordering_new, update.2),
                    &key_of(&ordering_old, row),
                )
                .is_some_and(|o| o.is_lt());
            if !incoming_loses {
                changes.push(Change {
                    op: "u",
                    key,
                    before: Some(row),
                    after: Some(replaced.len()),
                });
                replaced.push(update.clone());
                continue;
            }
        }
        kept.push(row as u32);
    }
    // Keys tagged here but not in the rows (a stale index): written as updates all the same.
    for update in updates.into_values().chain(change.inserts.iter()) {
        changes.push(Change {
            op: "i",
            key: update.0.as_str(),
            before: None,
            after: Some(replaced.len()),
        });
        replaced.push(update.clone());
    }
    let kept_rows =
        arrow_select::take::take_record_batch(&old, &arrow_array::UInt32Array::from(kept))
            .map_err(malformed_by)?;
    let kept_rows = in_base_file(&kept_rows, &name, &slice.partition, file_schema, config)?;
    let new_rows = files::with_meta(
        inputs.input,
        &replaced,
        &MetaFields {
            instant,
            file_index,
            file_name: &name,
            first_seqno: 0,
            populated: config.populate_meta_fields,
        },
        file_schema,
    )?;
    let cdc = match cdc {
        Some(w) => w.file(
            (instant, &slice.partition, &slice.file_id),
            &changes,
            &old,
            &new_rows,
        )?,
        None => None,
    };
    // The group's rows as read are not needed past here: freed before the file's batch.
    drop(changes);
    drop(keys);
    drop(old);
    let batch = one_batch(file_schema, vec![kept_rows, new_rows])?;
    let written = base_file_bytes(&batch, avro_with_meta, &inputs.base_file)?;
    let bytes = written.bytes;
    let size = bytes.len() as i64;
    let cdc_stats = cdc.as_ref().map(|f| {
        std::iter::once((f.path.clone(), f.bytes.len() as i64)).collect::<OrderedMap<i64>>()
    });
    Ok(NewFile {
        path: path.clone(),
        stat: WriteStat {
            file_id: Some(slice.file_id.clone()),
            path: Some(path),
            prev_commit: Some(slice.base_instant.clone()),
            num_writes: Some(batch.num_rows() as i64),
            num_deletes: Some(num_deletes),
            num_update_writes: Some(num_updates),
            num_inserts: Some(change.inserts.len() as i64),
            total_write_bytes: Some(size),
            total_write_errors: Some(0),
            partition_path: Some(slice.partition.clone()),
            file_size_in_bytes: Some(size),
            cdc_stats,
            ..WriteStat::default()
        },
        bytes,
        marker: "MERGE",
        columns: written.columns,
        cdc,
    })
}

/// `batches` as one, copied only when more than one has rows.
fn one_batch(schema: &SchemaRef, mut batches: Vec<RecordBatch>) -> Result<RecordBatch> {
    batches.retain(|b| b.num_rows() > 0);
    match batches.as_slice() {
        [one] if one.schema() == *schema => Ok(batches.remove(0)),
        _ => arrow_select::concat::concat_batches(schema, &batches).map_err(malformed_by),
    }
}

/// Rows read from the table (with their meta fields) as rows of base file `name`: their
/// `_hoodie_file_name` is the file's (Java's merge handles rewrite it; the other meta
/// fields stay), aligned by name to the base files' schema (the meta columns a read
/// without meta fields left out come in null, partition columns a table does not store go).
pub(crate) fn in_base_file(
    rows: &RecordBatch,
    name: &str,
    partition: &str,
    file_schema: &SchemaRef,
    config: &TableConfig,
) -> Result<RecordBatch> {
    let rows = if config.populate_meta_fields {
        set_column(rows, FILE_NAME, name)?
    } else {
        rows.clone()
    };
    crate::schema::align::to_schema(&rows, file_schema, partition, config)
}

fn set_column(batch: &RecordBatch, column: &str, value: &str) -> Result<RecordBatch> {
    let schema = batch.schema();
    let Some((i, _)) = schema.column_with_name(column) else {
        return Ok(batch.clone());
    };
    let mut columns = batch.columns().to_vec();
    columns[i] = Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
        value,
        batch.num_rows(),
    )));
    RecordBatch::try_new(schema, columns).map_err(malformed_by)
}

/// A Parquet base file with Hudi's footer keys (min/max record key, bloom filter).
pub(crate) fn base_file_bytes(
    batch: &RecordBatch,
    avro_with_meta: &str,
    spec: &BaseFileSpec,
) -> Result<WrittenBaseFile> {
    let mut spec = spec.clone();
    spec.avro_schema = avro_with_meta.to_string();
    crate::base_file::writer::write_base_file(batch, &spec)
}
