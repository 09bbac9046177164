//! Compacting the metadata table at the start of a write, after failed writes are rolled
//! back and before tagging (Java `HoodieBackedTableMetadataWriter.performTableServices`,
//! docs/hudi-format.md §8.2); or, for a write that defers its services, after it with them. Plans and bytes come from [`crate::metadata::compact`].
//!
//! Order: plan (`C.compaction.requested`), `C.compaction.inflight`, the base files, then
//! `C_<completion>.commit` written create-if-absent: the commit point. Until it exists
//! readers (ours, Java's, hudi-rs) ignore the new base files, so a crash leaves the MDT
//! readable; the next write completes the pending compaction from its plan.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use serde::Serialize;

use crate::error::{HudiError, Result};
use crate::metadata::compact::{self, Decision, Operation};
use crate::metadata::records::encode::RecordEncoder;
use crate::metadata::table::METADATA_DIR;
use crate::metadata::MetadataTable;
use crate::storage::{join, IoSnapshot, Purpose, PutMode, Storage, StorageExt};
use crate::timeline::write::{encode_avro_instant, encode_commit_metadata, InstantSchema};
use crate::write::publish::{all_times, time_after};
use crate::write::{files, Ctx, WriteConfig};

/// A metadata-table compaction this write ran first.
#[derive(Debug, Clone, Serialize)]
pub struct MdtCompaction {
    pub instant: String,
    pub completion_time: String,
    /// Whether it completed a compaction an earlier writer left pending.
    pub resumed: bool,
    /// New base files, relative to the base path.
    pub files_written: Vec<String>,
    /// Requests of the compaction alone (reads of the slices included).
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

/// Completes a pending MDT compaction, or compacts when due; `None` when nothing ran.
pub(crate) async fn compact_if_due(
    table: &Ctx<'_>,
    options: &WriteConfig,
) -> Result<Option<MdtCompaction>> {
    let client = table.client;
    let config = client.config();
    if config.metadata_partitions.is_empty() {
        return Ok(None);
    }
    let max = options.mdt_max_delta_commits;
    let block_size = options.hfile_block_size;
    let mdt = table.metadata_table(&[]).await?;
    let mdt_timeline = mdt.mdt_timeline();
    let (io, started) = (client.io(), files::now_ms());
    let mut done = match compact::decide(&client.timeline(), &mdt_timeline, max) {
        Decision::Skip(_) => return Ok(None),
        Decision::Complete(instant) => resume(table, &mdt, &instant, block_size).await?,
        Decision::Compact if defers_new(options) => return Ok(None),
        Decision::Compact => schedule_and_run(table, &mdt, block_size).await?,
    };
    done.io = client.io().since(&io);
    done.elapsed_ms = (files::now_ms() - started).max(0);
    Ok(Some(done))
}

/// Whether [`compact_if_due`] would compact (or finish a compaction) now.
pub(crate) async fn is_due(table: &Ctx<'_>, options: &WriteConfig) -> Result<bool> {
    let client = table.client;
    if client.config().metadata_partitions.is_empty() {
        return Ok(false);
    }
    let max = options.mdt_max_delta_commits;
    let mdt = table.metadata_table(&[]).await?;
    Ok(
        match compact::decide(&client.timeline(), &mdt.mdt_timeline(), max) {
            Decision::Skip(_) => false,
            Decision::Complete(_) => true,
            Decision::Compact => !defers_new(options),
        },
    )
}

/// A write that defers its services leaves a newly due compaction to them (the table reads
/// the same with one delta commit more); one left pending it still completes first.
fn defers_new(options: &WriteConfig) -> bool {
    options.defer_services
}

fn timeline_dir() -> String {
    join(METADATA_DIR, ".hoodie/timeline")
}

async fn schedule_and_run(
    table: &Ctx<'_>,
    mdt: &MetadataTable,
    block_size: usize,
) -> Result<MdtCompaction> {
    let storage = table.client.storage();
    let mut ops: Vec<Operation> = Vec::new();
    for p in &table.client.config().metadata_partitions {
        ops.extend(compact::operations(mdt.shards(p).await?.iter()));
    }
    let instant = time_after(table, &all_times(table, mdt))?;
    let plan = encode_avro_instant(InstantSchema::CompactionPlan, &compact::plan_json(&ops))?;
    // The schema and its encoder before the first request; the slices are merged one at a
    // time after the plan (a failure then leaves the plan pending, completed by the next
    // write, as Java's executor would).
    let schema = mdt.record_schema().await?;
    let enc = RecordEncoder::new(&schema)?;
    let dir = timeline_dir();
    storage
        .put(
            &join(&dir, &format!("{instant}.compaction.requested")),
            Bytes::from(plan),
            PutMode::Create,
        )
        .await?;
    storage
        .put(
            &join(&dir, &format!("{instant}.compaction.inflight")),
            Bytes::new(),
            PutMode::Create,
        )
        .await?;
    let written = write_base_files(table, mdt, &ops, &instant, &enc, &schema, block_size).await?;
    finish(table, mdt, &instant, written, &schema, false).await
}

/// Completes compaction `instant` from its plan (Java redoes a pending MDT compaction
/// before anything else; the base files are written again, overwriting a partial attempt).
async fn resume(
    table: &Ctx<'_>,
    mdt: &MetadataTable,
    instant: &str,
    block_size: usize,
) -> Result<MdtCompaction> {
    let storage = table.client.storage();
    let dir = timeline_dir();
    let requested = join(&dir, &format!("{instant}.compaction.requested"));
    let bytes = storage.get(&requested, Purpose::Other).await?;
    let plan = crate::timeline::metadata::decode_instant_file(&bytes, &requested)?;
    let planned = compact::plan_operations(&plan, &requested)?;
    // Sizes from the listing: the plan's files must all still be there.
    let mut sizes: HashMap<String, HashMap<String, u64>> = HashMap::new();
    let mut ops = Vec::with_capacity(planned.len());
    for (mut op, names) in planned {
        if !sizes.contains_key(&op.partition) {
            let listed = mdt.list_partition(&op.partition).await?;
            let m = listed
                .iter()
                .filter(|m| !m.is_dir)
                .map(|m| (m.name().to_string(), m.size))
                .collect();
            sizes.insert(op.partition.clone(), m);
        }
        let known = &sizes[&op.partition];
        let size_of = |n: &str| {
            known.get(n).copied().ok_or_else(|| {
                HudiError::corrupt(
                    &requested,
                    format!("planned file {}/{n} is missing", op.partition),
                )
            })
        };
        for n in &names {
            size_of(n)?;
        }
        if let Some((n, s)) = op.base_file.as_mut() {
            *s = size_of(n)?;
        }
        for (n, s) in op.log_files.iter_mut() {
            *s = size_of(n)?;
        }
        op.slice(METADATA_DIR)?;
        ops.push(op);
    }
    let schema = mdt.record_schema().await?;
    let enc = RecordEncoder::new(&schema)?;
    let inflight = join(&dir, &format!("{instant}.compaction.inflight"));
    if !mdt_timeline_has_inflight(mdt, instant) {
        match storage.put(&inflight, Bytes::new(), PutMode::Create).await {
            Ok(_) | Err(HudiError::Conflict { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let written = write_base_files(table, mdt, &ops, instant, &enc, &schema, block_size).await?;
    finish(table, mdt, instant, written, &schema, true).await
}

fn mdt_timeline_has_inflight(mdt: &MetadataTable, instant: &str) -> bool {
    mdt.mdt_timeline()
        .instants
        .iter()
        .any(|i| i.requested_time == instant && i.state == crate::timeline::State::Inflight)
}

/// Base-file bytes of a slice are read this many at a time (on disk).
const BASE_RUN_BYTES: u64 = 1024 * 1024;

/// The new base files written, with their write stats.
struct Written {
    files: Vec<String>,
    stats: Vec<crate::timeline::WriteStat>,
}

/// Merges each operation's slice into its new base file and writes it, one file group at a
/// time: a file group's bytes are freed once written, so memory stays at about two file
/// groups' new base files (one being written while the next is merged) plus a run of the
/// next's old one (a 1M-key record index held whole takes over 500 MiB). The files are
/// invisible until the commit in [`finish`]; overwritten, as a crashed attempt may have left
/// a file of the same name.
async fn write_base_files(
    table: &Ctx<'_>,
    mdt: &MetadataTable,
    ops: &[Operation],
    instant: &str,
    enc: &RecordEncoder,
    schema: &str,
    block_size: usize,
) -> Result<Written> {
    let storage: &Arc<dyn Storage> = table.client.storage();
    let mut written = Written {
        files: Vec::with_capacity(ops.len()),
        stats: Vec::with_capacity(ops.len()),
    };
    let put = |file: Option<(String, Bytes)>| async move {
        if let Some((path, bytes)) = file {
            storage.put(&path, bytes, PutMode::Overwrite).await?;
        }
        Ok::<_, HudiError>(())
    };
    let mut unwritten: Option<(String, Bytes)> = None;
    for (i, op) in ops.iter().enumerate() {
        let build = async {
            let slice = op.slice(METADATA_DIR)?;
            let name = compact::base_file_name(&op.file_id, &compact::write_token(i), instant);
            // Wall clock through chrono (std's Instant panics on wasm32-unknown-unknown).
            let started = files::now_ms();
            let mut builder = compact::BaseFileBuilder::new(enc, &name, started, block_size);
            let copies = builder.copies_values_of(schema);
            let counts = mdt
                .merge_slice_streaming(&slice, BASE_RUN_BYTES, copies, |key, record, from_base| {
                    builder.push_compacted(key, record, from_base)
                })
                .await?;
            let file = builder.finish(schema)?;
            let read_ms = (files::now_ms() - started).max(0);
            let rel = join(&op.partition, &name);
            let stat = compact::write_stat(op, &rel, &file, counts, read_ms);
            Ok::<_, HudiError>((join(METADATA_DIR, &rel), Bytes::from(file.bytes), stat))
        };
        // The previous file group's PUT overlaps this one's reads.
        let (previous, built) = futures::join!(put(unwritten.take()), build);
        previous?;
        let (path, bytes, stat) = built?;
        written.stats.push(stat);
        written.files.push(path.clone());
        unwritten = Some((path, bytes));
    }
    put(unwritten).await?;
    Ok(written)
}

async fn finish(
    table: &Ctx<'_>,
    mdt: &MetadataTable,
    instant: &str,
    written: Written,
    schema: &str,
    resumed: bool,
) -> Result<MdtCompaction> {
    let client = table.client;
    let storage: &Arc<dyn Storage> = client.storage();
    let metadata = compact::commit_metadata(written.stats, schema);
    let bytes = encode_commit_metadata(&metadata, client.config().version)?;
    let mut times = all_times(table, mdt);
    times.push(instant.to_string());
    let completion = time_after(table, &times)?;
    let done = join(&timeline_dir(), &format!("{instant}_{completion}.commit"));
    storage
        .put(&done, Bytes::from(bytes), PutMode::Create)
        .await?;
    Ok(MdtCompaction {
        instant: instant.to_string(),
        completion_time: completion,
        resumed,
        files_written: written.files,
        io: IoSnapshot::default(),
        elapsed_ms: 0,
    })
}
