//! One commit: what changes in which file group, the files that carry it, and the requests
//! that publish it in Hudi's order (docs: hudi-format §10.3–§10.5).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::{RecordBatch, StringArray};
use arrow_schema::SchemaRef;
use bytes::Bytes;
use futures::{FutureExt, StreamExt, TryStreamExt};

use super::files::{self, MetaFields};
use super::{Ctx, KeyedRows, Operation, RecordCounts, Tagged};
use crate::base_file::writer::{BaseFileSpec, ColumnRange, WrittenBaseFile};
use crate::config::TableType;
use crate::error::{malformed_by, HudiError, Result};
use crate::file_group::FileSlice;
use crate::log_file::delete::DeleteRecord;
use crate::merge::ordering::{compare_keys, key_of};
use crate::merge::MergeRule;
use crate::metadata::delta::RecordIndexChange;
use crate::metadata::MetadataTable;
use crate::read::{ReadOptions, Scan};
use crate::schema::FILE_NAME;
use crate::storage::{join, PutMode, Storage};
use crate::timeline::metadata::OrderedMap;
use crate::timeline::{CommitMetadata, WriteStat};
use crate::value::Value;

/// A record a commit writes: (key, partition path the record keeps, input row).
pub(crate) type RowAt = (String, String, usize);

/// Changes to one existing file group.
#[derive(Debug, Default)]
pub(crate) struct GroupChange {
    pub updates: Vec<RowAt>,
    /// (key, partition path).
    pub deletes: Vec<(String, String)>,
    /// New keys put in this file group: Copy-On-Write small-file handling, or their bucket.
    pub inserts: Vec<RowAt>,
}

#[derive(Debug, Default)]
pub(crate) struct ChangePlan {
    pub groups: BTreeMap<(String, String), GroupChange>,
    /// Rows to insert, by partition: (key, partition, input row).
    pub inserts: BTreeMap<String, Vec<RowAt>>,
    /// Keys that move partition (deleted where they were, inserted where they go).
    pub moved: BTreeSet<String>,
    /// Bucket index: new keys of a bucket that has no file group in their partition yet,
    /// by (partition, bucket).
    pub bucket_inserts: BTreeMap<(String, u32), Vec<RowAt>>,
}

pub(crate) fn plan_changes(
    rows: &KeyedRows,
    tagged: &Tagged,
    operation: Operation,
    update_partition_path: bool,
    counts: &mut RecordCounts,
) -> ChangePlan {
    let mut plan = ChangePlan::default();
    for (key, partition, row) in &rows.rows {
        let location = tagged.locations.get(key);
        match (operation, location) {
            (Operation::Delete, Some(at)) => plan
                .groups
                .entry(at.clone())
                .or_default()
                .deletes
                .push((key.clone(), at.0.clone())),
            (Operation::Delete, None) => counts.delete_missing += 1,
            (_, Some(at)) if at.0 == *partition || !update_partition_path => plan
                .groups
                .entry(at.clone())
                .or_default()
                .updates
                .push((key.clone(), at.0.clone(), *row)),
            (_, Some(at)) => {
                // The key moves partition: deleted where it was, inserted where it goes.
                plan.moved.insert(key.clone());
                plan.groups
                    .entry(at.clone())
                    .or_default()
                    .deletes
                    .push((key.clone(), at.0.clone()));
                plan.inserts.entry(partition.clone()).or_default().push((
                    key.clone(),
                    partition.clone(),
                    *row,
                ));
            }
            (_, None) => plan.inserts.entry(partition.clone()).or_default().push((
                key.clone(),
                partition.clone(),
                *row,
            )),
        }
    }
    plan
}

/// Copy-On-Write small-file handling, as Java's upsert partitioner does it: new keys first
/// fill the partition's base files smaller than `hoodie.parquet.small.file.limit` (up to
/// `hoodie.parquet.max.file.size`, at an estimated record size), smallest first; only the
/// rest start new file groups. Without it every small commit would add a file group.
pub(crate) fn pack_small_files(
    plan: &mut ChangePlan,
    slices: &[FileSlice],
    options: &super::WriteConfig,
    average_record_bytes: Option<u64>,
) {
    let (small, max) = (options.small_file_limit, options.max_file_size);
    let record = average_record_bytes
        .filter(|b| *b > 0)
        .unwrap_or(options.record_size_estimate)
        .max(1);
    if small == 0 {
        return;
    }
    for (partition, rows) in plan.inserts.iter_mut() {
        let mut candidates: Vec<(u64, &FileSlice)> = slices
            .iter()
            .filter(|s| &s.partition == partition && s.log_files.is_empty())
            .filter_map(|s| s.base_file.as_ref().map(|b| (b.size, s)))
            .filter(|(size, _)| *size < small)
            .collect();
        candidates.sort_by_key(|(size, s)| (*size, s.file_id.clone()));
        for (size, slice) in candidates {
            if rows.is_empty() {
                break;
            }
            let room = (max.saturating_sub(size) / record) as usize;
            let take = room.min(rows.len());
            if take == 0 {
                continue;
            }
            let packed: Vec<_> = rows.drain(..take).collect();
            plan.groups
                .entry((partition.clone(), slice.file_id.clone()))
                .or_default()
                .inserts
                .extend(packed);
        }
    }
    plan.inserts.retain(|_, rows| !rows.is_empty());
}

/// Java's record size estimate: bytes per record of the latest commit that wrote enough
/// (more than 70% of the small-file limit) to judge by; `None` falls back to the
/// configured estimate.
pub(crate) async fn average_record_bytes(
    client: &Arc<crate::meta_client::MetaClient>,
) -> Result<Option<u64>> {
    let timeline = client.timeline();
    // One round for all ten (the loop used to fetch them one after another).
    let recent: Vec<_> = timeline.completed_writes().rev().take(10).collect();
    for meta in client.commit_metadata_of(&recent).await? {
        let totals = meta.totals();
        if totals.bytes_written as f64 > 0.7 * 104_857_600.0 && totals.num_writes > 0 {
            return Ok(Some(
                (totals.bytes_written as u64).div_ceil(totals.num_writes as u64),
            ));
        }
    }
    Ok(None)
}

pub(crate) struct Inputs<'a> {
    pub input: &'a RecordBatch,
    pub avro_schema: &'a str,
    /// Tables whose schema evolved on read: what every commit carries forward.
    pub schema_on_read: Option<&'a SchemaOnRead>,
    pub plan: ChangePlan,
    pub operation: Operation,
    pub rule: MergeRule,
    pub base_file: BaseFileSpec,
    /// The snapshot the tagging read (latest slices, read schema).
    pub snapshot: Arc<crate::read::Plan>,
    /// The metadata table's reads, done beside tagging.
    pub mdt_prefetch: Option<super::mdt::MdtPrefetch>,
    pub instant: String,
    pub requested: &'a Requested,
    /// Marker files of completed commits, deleted beside the first writes.
    pub stale_markers: Vec<String>,
    /// Stop before the commit point: the completed instants (and their times) are written
    /// by [`publish`] under the table lock (multi-writer).
    pub defer_publish: bool,
}

/// Column ids of a table whose schema evolved on read, carried by each commit as Java's
/// writer does: the current InternalSchema as the commit's `latest_schema`, and the whole
/// history again in `.hoodie/.schema/` under the commit's instant (unchanged: this writer
/// never changes the schema of such a table).
#[derive(Clone, Debug)]
pub(crate) struct SchemaOnRead {
    pub latest_schema: String,
    pub history: Bytes,
}

/// A commit written up to its commit point: what [`publish`] needs to complete it.
pub(crate) struct Staged {
    mdt: Option<super::mdt::MdtInstant>,
    completed_prefix: String,
    action: String,
    encoded: Bytes,
    floor: Vec<String>,
    /// Existing file groups this commit changes (its new ones have fresh ids).
    pub touched: BTreeSet<(String, String)>,
}

/// Completes a staged commit: the metadata table's delta commit, then the data commit,
/// each at a time later than `seen` (every time on both timelines as listed under the lock)
/// and everything the commit saw before. Returns the completion time.
pub(crate) async fn publish(table: &Ctx<'_>, staged: &Staged, seen: &[String]) -> Result<String> {
    let storage = table.client.storage().as_ref();
    let mut floor = staged.floor.clone();
    floor.extend(seen.iter().cloned());
    if let Some(m) = &staged.mdt {
        let t = time_after(table, &floor)?;
        floor.push(t.clone());
        let (path, bytes) = m.completed(&t);
        storage.put(&path, bytes, PutMode::Create).await?;
    }
    let completion = time_after(table, &floor)?;
    let completed = format!("{}_{completion}.{}", staged.completed_prefix, staged.action);
    storage
        .put(&completed, staged.encoded.clone(), PutMode::Create)
        .await?;
    Ok(completion)
}

/// The requested instant file: written beside tagging (as Java requests an instant before
/// tagging) or as the commit's first request, and withdrawn when the write fails before
/// anything else was written.
pub(crate) struct Requested {
    path: String,
    early: bool,
    /// 0: not written; 1: written, nothing after it; 2: later requests went out.
    state: std::sync::atomic::AtomicU8,
}

impl Requested {
    pub fn new(config: &crate::config::TableConfig, instant: &str, early: bool) -> Requested {
        let action = if config.table_type == TableType::MergeOnRead {
            "deltacommit"
        } else {
            "commit"
        };
        Requested {
            path: join(
                &config.timeline_dir,
                &format!("{instant}.{action}.requested"),
            ),
            early,
            state: Default::default(),
        }
    }

    pub async fn put_early(&self, storage: &dyn Storage) -> Result<()> {
        if self.early {
            self.put(storage).await?;
        }
        Ok(())
    }

    async fn put(&self, storage: &dyn Storage) -> Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        if self.state.load(SeqCst) == 0 {
            storage
                .put(&self.path, Bytes::new(), PutMode::Create)
                .await?;
            self.state.store(1, SeqCst);
        }
        Ok(())
    }

    fn advance(&self) {
        self.state.store(2, std::sync::atomic::Ordering::SeqCst);
    }

    /// Deletes the requested file if nothing followed it (best effort: a write that cannot
    /// delete it leaves a requested-only instant, which the next write rolls back).
    pub async fn withdraw(&self, storage: &dyn Storage) {
        if self.state.load(std::sync::atomic::Ordering::SeqCst) == 1 {
            let _ = storage.delete(&self.path).await;
        }
    }
}

/// Runs `requests` together and answers with the first failure only once every one has
/// finished: a write that returns leaves nothing of its own in flight (a local put on the
/// blocking pool would otherwise land after the caller's next read, rollback or retry).
pub(crate) async fn settle_all<T>(
    requests: impl IntoIterator<Item = impl std::future::Future<Output = Result<T>>>,
) -> Result<Vec<T>> {
    futures::future::join_all(requests)
        .await
        .into_iter()
        .collect()
}

/// A new instant time, later than every time on the data and metadata timelines.
pub(crate) async fn new_instant(table: &Ctx<'_>) -> Result<String> {
    time_after(table, &instant_floor(table).await?)
}

/// Every requested and completion time on the data and metadata timelines.
async fn instant_floor(table: &Ctx<'_>) -> Result<Vec<String>> {
    if table.client.config().metadata_partitions.is_empty() {
        return Ok(data_times(table));
    }
    Ok(all_times(table, &*table.metadata_table(&[]).await?))
}

/// Every requested and completion time on both timelines (a new time goes after them).
pub(crate) fn all_times(table: &Ctx<'_>, mdt: &MetadataTable) -> Vec<String> {
    let mut out = mdt.timeline_times();
    out.extend(data_times(table));
    out
}

fn data_times(table: &Ctx<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for i in &table.client.timeline().instants {
        out.push(i.requested_time.clone());
        out.extend(i.completion_time.clone());
    }
    out
}

/// A time now, later than every one of `times`.
pub(crate) fn time_after(table: &Ctx<'_>, times: &[String]) -> Result<String> {
    let refs: Vec<&str> = times.iter().map(String::as_str).collect();
    crate::timeline::write::new_instant_time(files::now_ms(), table.client.config().timezone, &refs)
}

pub(crate) struct Outcome {
    pub instant: String,
    pub completion_time: String,
    pub action: String,
    pub inserted: u64,
    pub updated: u64,
    pub deleted: u64,
    pub delete_missing: u64,
    pub files_written: Vec<String>,
    pub mdt_partitions: Vec<String>,
    /// Set when the commit point was deferred ([`Inputs::defer_publish`]).
    pub staged: Option<Staged>,
}

/// A file to write and its write stat.
struct NewFile {
    path: String,
    bytes: Bytes,
    stat: WriteStat,
    marker: &'static str,
    /// Column ranges of the rows written (the metadata table's column stats).
    columns: Vec<ColumnRange>,
}

pub(crate) async fn commit(table: &Ctx<'_>, mut inputs: Inputs<'_>) -> Result<Outcome> {
    let client = table.client;
    let config = client.config();
    let storage: &Arc<dyn Storage> = client.storage();
    let mor = config.table_type == TableType::MergeOnRead;
    let action = if mor { "deltacommit" } else { "commit" };

    let mdt = if config.metadata_partitions.is_empty() {
        None
    } else {
        Some(table.metadata_table(&[]).await?)
    };
    // Completion times come later than every time on both timelines and the instant.
    let mut floor = instant_floor(table).await?;
    let instant = inputs.instant.clone();
    floor.push(instant.clone());
    let requested = inputs.requested;
    let stale_markers = std::mem::take(&mut inputs.stale_markers);

    let tagged_plan = inputs.snapshot.clone();
    let read_schema = tagged_plan.read_schema.clone();
    let avro_with_meta = super::avro_rows::with_meta_fields(inputs.avro_schema)?;
    // Partition columns a table does not store stay out of base files. Java's writer keeps
    // them in log blocks when its schema has them (Merge-On-Read: it does; Copy-On-Write:
    // not), so log blocks follow the writer schema.
    let without_partition_columns = |leave_out: &dyn Fn(&str) -> bool| -> SchemaRef {
        let kept: Vec<arrow_schema::FieldRef> = (read_schema.fields().iter())
            .filter(|f| !(config.partition_fields.contains(f.name()) && leave_out(f.name())))
            .cloned()
            .collect();
        Arc::new(arrow_schema::Schema::new_with_metadata(
            kept,
            read_schema.metadata().clone(),
        ))
    };
    let (base_schema, base_avro) = if config.drop_partition_columns {
        (
            without_partition_columns(&|_| true),
            super::avro_rows::without_fields(&avro_with_meta, &config.partition_fields)?,
        )
    } else {
        (read_schema.clone(), avro_with_meta.clone())
    };
    // Parsed once: every log file of the commit encodes its records with it.
    let writer_schema = apache_avro::Schema::parse_str(&avro_with_meta)
        .map_err(|e| HudiError::invalid(format!("the table's Avro schema: {e}")))?;
    let log_schema = without_partition_columns(&|name| match &writer_schema {
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
    let (file_schema, log_schema) = (with_meta(base_schema), with_meta(log_schema));
    let mut counts = Outcome {
        instant: instant.clone(),
        completion_time: String::new(),
        action: action.to_string(),
        inserted: 0,
        updated: 0,
        deleted: 0,
        delete_missing: 0,
        files_written: Vec::new(),
        mdt_partitions: Vec::new(),
        staged: None,
    };

    // Every file's bytes are built before the first request that changes storage.
    let mut new_files: Vec<NewFile> = Vec::new();
    let mut file_index = 0usize;
    let slices = slices_of(&tagged_plan.file_slices);
    // Copy-On-Write: the rows of every rewritten group, read concurrently (one round trip
    // for all of them, not one per group).
    let reads = async {
        if mor {
            return Ok(HashMap::new());
        }
        let wanted: Vec<&FileSlice> = inputs
            .plan
            .groups
            .keys()
            .filter_map(|k| slices.get(k).copied())
            .collect();
        futures::stream::iter(wanted)
            .map(|slice| {
                let plan = tagged_plan.clone();
                async move {
                    let rows = slice_rows(table, &plan, slice).await?;
                    Ok::<_, HudiError>(((slice.partition.clone(), slice.file_id.clone()), rows))
                }
            })
            .buffer_unordered(16)
            .try_collect::<HashMap<_, _>>()
            .await
    };
    // What the metadata table's delta commit reads, in the same round trips.
    let touched_early: BTreeSet<String> = inputs
        .plan
        .groups
        .keys()
        .map(|(p, _)| p.clone())
        .chain(inputs.plan.inserts.keys().cloned())
        .chain(inputs.plan.bucket_inserts.keys().map(|(p, _)| p.clone()))
        .collect();
    let all_columns: Vec<String> = read_schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let early = inputs.mdt_prefetch.take();
    let mdt_reads = async {
        match (&mdt, early) {
            (Some(m), Some(mut p)) => {
                p.top_up(m, &touched_early, &all_columns).await?;
                Ok(Some(p))
            }
            (Some(m), None) => super::mdt::prefetch(
                storage.as_ref(),
                m,
                config,
                &touched_early,
                Some(&all_columns),
            )
            .await
            .map(Some),
            (None, _) => Ok(None),
        }
    };
    let (mut existing, mdt_prefetch) = futures::future::try_join(reads, mdt_reads).await?;
    for ((partition, file_id), change) in &inputs.plan.groups {
        let slice = slices
            .get(&(partition.clone(), file_id.clone()))
            .ok_or_else(|| {
                HudiError::corrupt(
                    partition.clone(),
                    format!("file group {file_id} vanished while writing"),
                )
            })?;
        let file = if mor {
            log_file(
                &inputs,
                &instant,
                file_index,
                slice,
                change,
                (&log_schema, config.populate_meta_fields),
                (&avro_with_meta, &writer_schema),
            )?
        } else {
            let rows = existing
                .remove(&(partition.clone(), file_id.clone()))
                .unwrap_or_default();
            rewrite_base_file(
                &inputs,
                &instant,
                file_index,
                slice,
                change,
                (&read_schema, &file_schema),
                rows,
                (config, &base_avro),
            )?
        };
        counts.updated += file.stat.num_update_writes.unwrap_or(0) as u64;
        counts.inserted += change.inserts.len() as u64;
        counts.deleted += file.stat.num_deletes.unwrap_or(0) as u64;
        counts.delete_missing +=
            change.deletes.len() as u64 - file.stat.num_deletes.unwrap_or(0) as u64;
        new_files.push(file);
        file_index += 1;
    }
    let entry = |key: &str, partition: &str, file_id: &str, deleted: bool| RecordIndexChange {
        record_key: key.to_string(),
        partition: partition.to_string(),
        file_id: file_id.to_string(),
        instant: instant.clone(),
        deleted,
    };
    let mut record_index: Vec<RecordIndexChange> = Vec::new();
    for ((_, file_id), change) in &inputs.plan.groups {
        record_index.extend(
            change
                .inserts
                .iter()
                .map(|(key, p, _)| entry(key, p, file_id, false)),
        );
        record_index.extend(
            change
                .deletes
                .iter()
                .filter(|(k, _)| !inputs.plan.moved.contains(k))
                .map(|(key, p)| entry(key, p, file_id, true)),
        );
    }
    let new_groups = (inputs.plan.inserts.iter().map(|(p, rows)| (p, None, rows))).chain(
        (inputs.plan.bucket_inserts.iter()).map(|((p, bucket), rows)| (p, Some(*bucket), rows)),
    );
    // Several writers conflict over a bucket, not a file id: two could each start it.
    let mut new_buckets: Vec<(String, String)> = Vec::new();
    for (partition, bucket, rows) in new_groups {
        let file_id = match bucket {
            Some(b) => super::bucket::new_file_id(b)?,
            None => files::new_file_id()?,
        };
        if bucket.is_some() {
            new_buckets.push((partition.clone(), file_id.clone()));
        }
        record_index.extend(
            rows.iter()
                .map(|(key, p, _)| entry(key, p, &file_id, false)),
        );
        let name = files::base_file_name(&file_id, &instant);
        let batch = files::with_meta(
            inputs.input,
            rows,
            &MetaFields {
                instant: &instant,
                file_index,
                file_name: &name,
                populated: config.populate_meta_fields,
            },
            &file_schema,
        )?;
        let written = base_file_bytes(&batch, &base_avro, &inputs.base_file)?;
        let bytes = written.bytes;
        let n = rows.len() as i64;
        counts.inserted += n as u64;
        new_files.push(NewFile {
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
        });
        file_index += 1;
    }
    if new_files.is_empty() {
        // Only deletes of keys the table does not hold: no-ops, counted, no commit.
        requested.withdraw(storage.as_ref()).await;
        counts.instant = String::new();
        counts.action = "none".into();
        return Ok(counts);
    }
    let touched_partitions: BTreeSet<String> = new_files
        .iter()
        .filter_map(|f| f.stat.partition_path.clone())
        .collect();
    let new_partitions: Vec<&String> = touched_partitions
        .iter()
        .filter(|p| !tagged_plan.file_slices.iter().any(|s| &s.partition == *p))
        .collect();

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
    for f in &new_files {
        let partition = f.stat.partition_path.clone().unwrap_or_default();
        if let Some(m) = metadata.partition_to_write_stats.as_mut() {
            m.entry(partition)
                .or_insert_with(|| Some(Vec::new()))
                .get_or_insert_with(Vec::new)
                .push(f.stat.clone());
        }
    }

    let delta = match &mdt_prefetch {
        None => None,
        Some(prefetch) => {
            let names: Vec<(String, String)> = new_files
                .iter()
                .map(|f| {
                    let (p, n) = f.path.rsplit_once('/').unwrap_or(("", &f.path));
                    (p.to_string(), n.to_string())
                })
                .collect();
            let entries: Vec<super::mdt::FileEntry<'_>> = new_files
                .iter()
                .zip(&names)
                .map(|(f, (p, n))| super::mdt::FileEntry {
                    partition: p,
                    file_name: n,
                    size: f.bytes.len() as u64,
                    columns: &f.columns,
                })
                .collect();
            Some(super::mdt::build(
                prefetch,
                config,
                &instant,
                &entries,
                record_index,
            )?)
        }
    };
    counts.mdt_partitions = delta
        .as_ref()
        .map(|d| d.partitions.clone())
        .unwrap_or_default();

    // Publish, in Hudi's order.
    let timeline_dir = &config.timeline_dir;
    let inflight = if mor {
        join(timeline_dir, &format!("{instant}.deltacommit.inflight"))
    } else {
        join(timeline_dir, &format!("{instant}.inflight"))
    };
    requested.put(storage.as_ref()).await?;
    // Java writes the inflight with the plan's stats; ours are final already.
    let encoded = Bytes::from(crate::timeline::write::encode_commit_metadata(
        &metadata,
        config.version,
    )?);
    let mdt_instant = delta
        .as_ref()
        .map(|d| super::mdt::prepare(config, d, &instant))
        .transpose()?;
    // Markers (and new partitions' metadata, and the metadata table's requested instant)
    // in one round before any data file; then the data files with the metadata table's
    // inflight instant and log files in the next. Nothing here is visible to readers until
    // the completed instants.
    // Timeline-server markers (Java's default layout under Spark): every marker as a line
    // of one `MARKERS0` file, beside `MARKERS.type`; two puts and two deletes whatever the
    // number of files, not one of each per file.
    let marker_dir = format!(".hoodie/.temp/{instant}");
    let marker_lines: String = new_files
        .iter()
        .map(|f| format!("{}.marker.{}\n", f.path, f.marker))
        .collect();
    let markers: Vec<(String, Bytes)> = vec![
        (
            format!("{marker_dir}/MARKERS.type"),
            Bytes::from_static(b"TIMELINE_SERVER_BASED"),
        ),
        (format!("{marker_dir}/MARKERS0"), Bytes::from(marker_lines)),
    ];
    let partition_files: Vec<(String, Bytes)> = new_partitions
        .iter()
        .map(|p| {
            (
                join(p, ".hoodie_partition_metadata"),
                Bytes::from(files::partition_metadata(&instant, p)),
            )
        })
        .collect();
    let marker_puts = markers.iter().map(|(m, bytes)| {
        storage
            .put(m, bytes.clone(), PutMode::Create)
            .map(|r| r.map(drop))
            .boxed()
    });
    let partition_puts = partition_files.iter().map(|(path, bytes)| {
        async move {
            // Another writer may have created the partition meanwhile: same content.
            match storage.put(path, bytes.clone(), PutMode::Create).await {
                Ok(_) | Err(HudiError::Conflict { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        }
        .boxed()
    });
    let mdt_request = mdt_instant
        .iter()
        .map(|m| m.request(storage.as_ref()).boxed());
    // The inflight instant goes with them: a crash that leaves markers without it is rolled
    // back as a requested-only instant (its marker directory goes with it).
    let inflight_put = std::iter::once(
        storage
            .put(&inflight, encoded.clone(), PutMode::Create)
            .map(|r| r.map(drop))
            .boxed(),
    );
    // Earlier commits' markers go with this round (bookkeeping: a failure to delete one
    // is not a failed commit).
    let stale_deletes = stale_markers.iter().map(|m| {
        storage
            .delete(m)
            .map(|r| match r {
                Ok(()) | Err(HudiError::NotFound { .. }) => Ok(()),
                Err(HudiError::Io { .. }) => Ok(()),
                Err(e) => Err(e),
            })
            .boxed()
    });
    requested.advance();
    settle_all(
        inflight_put
            .chain(marker_puts)
            .chain(partition_puts)
            .chain(mdt_request)
            .chain(stale_deletes),
    )
    .await?;
    // The metadata table's delta commit completes before the data commit (§10.4); it can
    // go with the data files and its own log files, because a metadata delta commit
    // counts only once the data table completes the same instant (§8.3): until then
    // every reader leaves it out, and a rollback removes it as it would an inflight one.
    let defer = inputs.defer_publish;
    let mdt_completion = time_after(table, &floor)?;
    let mdt_completed = if defer {
        None
    } else {
        floor.push(mdt_completion.clone());
        mdt_instant.as_ref().map(|m| m.completed(&mdt_completion))
    };
    // The history goes with the data files: Java writes it before the commit completes,
    // and readers skip it until then.
    let history_files = match inputs.schema_on_read {
        Some(s) => {
            let at = time_after(table, &floor)?;
            floor.push(at.clone());
            let dir = crate::schema::evolution::HISTORY_DIR;
            vec![
                (
                    format!("{dir}{instant}.schemacommit.requested"),
                    Bytes::new(),
                ),
                (
                    format!("{dir}{instant}.schemacommit.inflight"),
                    Bytes::new(),
                ),
                (
                    format!("{dir}{instant}_{at}.schemacommit"),
                    s.history.clone(),
                ),
            ]
        }
        None => Vec::new(),
    };
    let data_puts = new_files
        .iter()
        .map(|f| (f.path.as_str(), f.bytes.clone()))
        .chain(history_files.iter().map(|(p, b)| (p.as_str(), b.clone())))
        .chain(mdt_instant.iter().flat_map(|m| m.pending_puts()))
        .chain(mdt_completed.iter().map(|(p, b)| (p.as_str(), b.clone())));
    settle_all(data_puts.map(|(path, bytes)| storage.put(path, bytes, PutMode::Create))).await?;
    counts.files_written = new_files.into_iter().map(|f| f.path).collect();
    if defer {
        counts.staged = Some(Staged {
            mdt: mdt_instant,
            completed_prefix: join(timeline_dir, &instant),
            action: action.to_string(),
            encoded,
            floor,
            touched: inputs
                .plan
                .groups
                .keys()
                .cloned()
                .chain(new_buckets)
                .collect(),
        });
        return Ok(counts);
    }
    still_ours(table, &instant).await?;
    let completion = time_after(table, &floor)?;
    let completed = join(timeline_dir, &format!("{instant}_{completion}.{action}"));
    storage.put(&completed, encoded, PutMode::Create).await?;
    counts.completion_time = completion;
    Ok(counts)
}

/// Hudi's single writer is alone by contract. Were another writer to run anyway, it would
/// roll this write back as a failed one, deleting its files, and completing it then would
/// leave a commit naming deleted files. So the timeline is listed once more before the
/// commit point: this instant's inflight gone, or a rollback newer than it, is a CONFLICT.
/// (It narrows the race to this one request; several writers take the lock instead.)
async fn still_ours(table: &Ctx<'_>, instant: &str) -> Result<()> {
    let listed = super::rollback::list_timeline(table.client).await?;
    let listing = super::rollback::Listing::of_timeline(table.client.config(), &listed);
    let rollback = listing.rollback_after(instant);
    let why = match (listing.is_inflight(instant), rollback) {
        (_, Some(r)) => format!(
            "another writer's rollback {r} started while this write ran (a single-writer \
             table has one writer at a time; several need Hudi's multi-writer settings)"
        ),
        (false, None) => "this write's inflight instant is gone: another writer rolled it \
             back (a single-writer table has one writer at a time)"
            .to_string(),
        (true, None) => return Ok(()),
    };
    Err(HudiError::Conflict {
        path: rollback.unwrap_or(instant).to_string(),
        detail: why,
    })
}

fn slices_of(slices: &[FileSlice]) -> HashMap<(String, String), &FileSlice> {
    slices
        .iter()
        .map(|s| ((s.partition.clone(), s.file_id.clone()), s))
        .collect()
}

/// Every row of a slice as of the snapshot, with meta columns.
async fn slice_rows(
    table: &Ctx<'_>,
    plan: &crate::read::Plan,
    slice: &FileSlice,
) -> Result<Vec<RecordBatch>> {
    let mut one = plan.clone();
    one.file_slices = vec![slice.clone()];
    one.filter = None;
    one.output_schema = one.read_schema.clone();
    one.partition_values_from_path = false;
    let mut scan = Scan::new(table.client.clone(), Arc::new(one), &ReadOptions::default());
    Scan::collect(&mut scan).await
}

/// MOR: a log file with the updates (Avro data block) and deletes (delete block).
fn log_file(
    inputs: &Inputs<'_>,
    instant: &str,
    file_index: usize,
    slice: &FileSlice,
    change: &GroupChange,
    (file_schema, populated): (&SchemaRef, bool),
    (avro_with_meta, schema): (&str, &apache_avro::Schema),
) -> Result<NewFile> {
    let name = files::log_file_name(&slice.file_id, instant, 1);
    let path = join(&slice.partition, &name);
    let mut bytes = Vec::new();
    let mut columns = Vec::new();
    // New keys of a bucket-index group are appended with the updates (Java's bucket index
    // indexes log files).
    let written: Vec<RowAt> = (change.updates.iter())
        .chain(&change.inserts)
        .cloned()
        .collect();
    if !written.is_empty() {
        let batch = files::with_meta(
            inputs.input,
            &written,
            &MetaFields {
                instant,
                file_index,
                file_name: &slice.file_id,
                populated,
            },
            file_schema,
        )?;
        let records = super::avro_rows::encode_rows(schema, &batch)?;
        // Column stats of the log file's records, as Java's append handle collects them.
        columns = crate::base_file::writer::record_column_ranges(&batch);
        bytes.extend(crate::log_file::writer::avro_data_block(
            instant,
            avro_with_meta,
            records.iter().map(Vec::as_slice),
        )?);
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
    Ok(NewFile {
        path: path.clone(),
        bytes: Bytes::from(bytes),
        stat: WriteStat {
            file_id: Some(slice.file_id.clone()),
            path: Some(path),
            prev_commit: Some(slice.base_instant.clone()),
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
            base_file: Some(
                slice
                    .base_file
                    .as_ref()
                    .map(|b| b.name.clone())
                    .unwrap_or_default(),
            ),
            log_files: Some(vec![name]),
            ..WriteStat::default()
        },
        marker: "APPEND",
        columns,
    })
}

/// COW: the file group's rows merged with the changes, as a new base file of the same group.
#[allow(clippy::too_many_arguments)]
fn rewrite_base_file(
    inputs: &Inputs<'_>,
    instant: &str,
    file_index: usize,
    slice: &FileSlice,
    change: &GroupChange,
    (read_schema, file_schema): (&SchemaRef, &SchemaRef),
    existing: Vec<RecordBatch>,
    (config, avro_with_meta): (&crate::config::TableConfig, &str),
) -> Result<NewFile> {
    let name = files::base_file_name(&slice.file_id, instant);
    let path = join(&slice.partition, &name);
    let old = arrow_select::concat::concat_batches(read_schema, &existing).map_err(malformed_by)?;
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
    let (mut num_deletes, mut num_updates) = (0i64, 0i64);
    for (row, key) in keys.iter().enumerate() {
        let key = key.as_str();
        if deletes.contains(key) {
            num_deletes += 1;
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
                replaced.push(update.clone());
                continue;
            }
        }
        kept.push(row as u32);
    }
    // Keys tagged here but not in the rows (a stale index): written as updates all the same.
    for update in updates.into_values() {
        replaced.push(update.clone());
    }
    replaced.extend(change.inserts.iter().cloned());
    let kept_rows =
        arrow_select::take::take_record_batch(&old, &arrow_array::UInt32Array::from(kept))
            .map_err(malformed_by)?;
    let kept_rows = if config.populate_meta_fields {
        set_column(&kept_rows, FILE_NAME, &name)?
    } else {
        kept_rows
    };
    // By name: the meta columns a read without meta fields left out come in null, and
    // partition columns a table does not store go.
    let kept_rows =
        crate::schema::align::to_schema(&kept_rows, file_schema, &slice.partition, config)?;
    let new_rows = files::with_meta(
        inputs.input,
        &replaced,
        &MetaFields {
            instant,
            file_index,
            file_name: &name,
            populated: config.populate_meta_fields,
        },
        file_schema,
    )?;
    let batch = arrow_select::concat::concat_batches(file_schema, &[kept_rows, new_rows])
        .map_err(malformed_by)?;
    let written = base_file_bytes(&batch, avro_with_meta, &inputs.base_file)?;
    let bytes = written.bytes;
    let size = bytes.len() as i64;
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
            ..WriteStat::default()
        },
        bytes,
        marker: "MERGE",
        columns: written.columns,
    })
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
fn base_file_bytes(
    batch: &RecordBatch,
    avro_with_meta: &str,
    spec: &BaseFileSpec,
) -> Result<WrittenBaseFile> {
    let mut spec = spec.clone();
    spec.avro_schema = avro_with_meta.to_string();
    crate::base_file::writer::write_base_file(batch, &spec)
}
