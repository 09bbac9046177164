//! One commit: the change planned ([`super::plan`]), its files built ([`super::build`]),
//! then published in Hudi's order ([`super::publish`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::RecordBatch;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};

use super::build::{self, FileSchemas};
use super::plan::ChangePlan;
use super::publish::{self, Committer, Requested, Staged, ToPublish};
use super::{Ctx, Operation};
use crate::base_file::writer::BaseFileSpec;
use crate::config::TableType;
use crate::error::{HudiError, Result};
use crate::file_group::FileSlice;
use crate::merge::MergeRule;
use crate::read::{Plan, ReadOptions, Scan};
use crate::snapshot::Snapshot;
use crate::storage::Storage;

pub(crate) struct Inputs<'a> {
    pub input: &'a RecordBatch,
    pub avro_schema: &'a str,
    /// Tables whose schema evolved on read: what every commit carries forward.
    pub schema_on_read: Option<&'a SchemaOnRead>,
    pub plan: ChangePlan,
    pub operation: Operation,
    pub rule: MergeRule,
    pub base_file: BaseFileSpec,
    /// The snapshot the tagging read (latest slices).
    pub snapshot: Arc<Snapshot>,
    /// The schema rows are read and written in: the snapshot's, or the input's wider one.
    pub read_schema: arrow_schema::SchemaRef,
    /// The metadata table's reads, done beside tagging.
    pub mdt_prefetch: Option<super::mdt::MdtPrefetch>,
    pub instant: String,
    pub requested: &'a Requested,
    /// Marker files of completed commits, deleted beside the first writes.
    pub stale_markers: Vec<String>,
    /// How the commit point is reached: at once, or under the table lock by the caller.
    pub committer: Committer,
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
    /// Set when the commit point is the caller's ([`Committer::Optimistic`]).
    pub staged: Option<Staged>,
}

pub(crate) async fn commit(table: &Ctx<'_>, mut inputs: Inputs<'_>) -> Result<Outcome> {
    let client = table.client;
    let config = client.config();
    let storage: &Arc<dyn Storage> = client.storage();
    let mor = config.table_type == TableType::MergeOnRead;
    let mdt = if config.metadata_partitions.is_empty() {
        None
    } else {
        Some(table.metadata_table(&[]).await?)
    };
    // Completion times come later than every time on both timelines and the instant.
    let mut floor = publish::instant_floor(table).await?;
    let instant = inputs.instant.clone();
    floor.push(instant.clone());
    let snapshot = inputs.snapshot.clone();
    let schemas = FileSchemas::new(config, inputs.read_schema.clone(), inputs.avro_schema)?;
    let slices = build::slices_of(snapshot.latest_slices());

    // The rows of the groups a file rewrites (all of Copy-On-Write's): for a small input (the
    // edge's writes) in waves of at most REWRITE_WAVE_BYTES stored, the first beside the metadata
    // table's reads, so such a write keeps its one round trip; for a larger one, one group at a
    // time, since stored bytes say little of decoded size and the input already takes the room.
    // Secondary indexes need every changed group's values before the commit: then all up front.
    let with_secondary = (config.metadata_partitions.iter())
        .any(|p| p.starts_with(crate::metadata::secondary::SECONDARY_INDEX_PREFIX));
    let wanted: Vec<&FileSlice> = (inputs.plan.groups.iter())
        .filter(|(_, change)| !mor || change.rewrite || with_secondary)
        .filter_map(|(k, _)| slices.get(k).copied())
        .collect();
    let waves = match with_secondary {
        true => vec![wanted],
        false => {
            let small = inputs.input.get_array_memory_size() as u64 <= REWRITE_WAVE_MAX_INPUT;
            rewrite_waves(&wanted, if small { REWRITE_WAVE_BYTES } else { 0 })
        }
    };
    let read = |slice: FileSlice| {
        let at = (slice.partition.clone(), slice.file_id.clone());
        let plan = Plan::of_slices(&snapshot, vec![slice], schemas.read.clone());
        async move {
            let rows = slice_rows(table, plan).await?;
            Ok::<_, HudiError>((at, rows))
        }
    };
    let read_wave = |wave: &[&FileSlice]| {
        let wave: Vec<FileSlice> = wave.iter().map(|&s| s.clone()).collect();
        futures::stream::iter(wave)
            .map(read)
            .buffer_unordered(16)
            .try_collect::<HashMap<_, _>>()
    };
    let reads = read_wave(waves.first().map_or(&[][..], Vec::as_slice));
    // What the metadata table's delta commit reads, in the same round trips.
    let touched_early: BTreeSet<String> = (inputs.plan.groups.keys())
        .map(|(p, _)| p.clone())
        .chain(inputs.plan.inserts.keys().cloned())
        .chain(inputs.plan.bucket_inserts.keys().map(|(p, _)| p.clone()))
        .collect();
    let all_columns: Vec<String> = (schemas.read.fields().iter())
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

    let secondary = match &mdt_prefetch {
        Some(p) => {
            super::secondary::changes(&inputs, &existing, &schemas.read, config, &p.secondary)?
        }
        None => Vec::new(),
    };
    // Every file's bytes are built before the first request that changes storage; a group's
    // rows are let go once its file is.
    let mut changed = Vec::with_capacity(inputs.plan.groups.len());
    for (i, (at, change)) in inputs.plan.groups.iter().enumerate() {
        if !existing.contains_key(at) {
            let wave = waves
                .iter()
                .find(|w| (w.iter()).any(|s| (&s.partition, &s.file_id) == (&at.0, &at.1)));
            if let Some(wave) = wave {
                existing.extend(read_wave(wave).await?);
            }
        }
        let rows = existing.remove(at).unwrap_or_default();
        changed.push(build::group_file(
            &inputs, &schemas, &slices, at, change, rows, config, i,
        )?);
    }
    drop(existing);
    let built = build::build(&inputs, &schemas, changed, config)?;
    let mut outcome = Outcome {
        instant: instant.clone(),
        completion_time: String::new(),
        action: publish::write_action(config).to_string(),
        inserted: built.inserted,
        updated: built.updated,
        deleted: built.deleted,
        delete_missing: built.delete_missing,
        files_written: Vec::new(),
        mdt_partitions: Vec::new(),
        staged: None,
    };
    if built.files.is_empty() {
        // Only deletes of keys the table does not hold: no-ops, counted, no commit.
        inputs.requested.withdraw(storage.as_ref()).await;
        outcome.instant = String::new();
        outcome.action = "none".into();
        return Ok(outcome);
    }
    let touched_partitions: BTreeSet<String> = (built.files.iter())
        .filter_map(|f| f.stat.partition_path.clone())
        .collect();
    let new_partitions: Vec<String> = touched_partitions
        .into_iter()
        .filter(|p| !snapshot.latest_slices().any(|s| &s.partition == p))
        .collect();
    let metadata = build::commit_metadata(&inputs, &built.files);
    let delta = mdt_prefetch
        .map(|p| {
            let indexes = (built.record_index, secondary);
            build::mdt_delta(&p, config, &instant, &built.files, indexes)
        })
        .transpose()?;
    outcome.mdt_partitions = delta
        .as_ref()
        .map(|d| d.partitions.clone())
        .unwrap_or_default();
    let encoded = Bytes::from(crate::timeline::write::encode_commit_metadata(
        &metadata,
        config.version,
    )?);
    let mdt_instant = delta
        .as_ref()
        .map(|d| super::mdt::prepare(config, d, &instant))
        .transpose()?;
    let staged = publish::stage(
        table,
        ToPublish {
            instant: &instant,
            requested: inputs.requested,
            files: &built.files,
            new_partitions,
            encoded,
            mdt: mdt_instant,
            schema_on_read: inputs.schema_on_read,
            stale_markers: std::mem::take(&mut inputs.stale_markers),
            floor,
            touched: (inputs.plan.groups.keys().cloned())
                .chain(built.new_buckets)
                .collect(),
        },
        inputs.committer,
    )
    .await?;
    outcome.files_written = built.files.into_iter().map(|f| f.path).collect();
    match inputs.committer {
        Committer::SingleWriter => {
            outcome.completion_time = publish::complete(table, &staged, &[]).await?;
        }
        Committer::Optimistic => outcome.staged = Some(staged),
    }
    Ok(outcome)
}

/// Every row of a slice as of the snapshot, with meta columns (`plan` reads the one slice).
async fn slice_rows(table: &Ctx<'_>, plan: Plan) -> Result<Vec<RecordBatch>> {
    let mut scan = Scan::new(
        table.client.clone(),
        Arc::new(plan),
        &ReadOptions::default(),
    );
    Scan::collect(&mut scan).await
}

/// Stored bytes of the groups a small write reads concurrently to rewrite them.
const REWRITE_WAVE_BYTES: u64 = 8 << 20;
/// The largest input (decoded) whose rewrites are read in waves.
const REWRITE_WAVE_MAX_INPUT: u64 = 1 << 20;

/// `groups` in order, cut into runs of at most `budget` stored bytes; a group whose size is
/// unknown (0) or larger goes alone.
fn rewrite_waves<'a>(groups: &[&'a FileSlice], budget: u64) -> Vec<Vec<&'a FileSlice>> {
    let mut waves: Vec<Vec<&FileSlice>> = Vec::new();
    let mut bytes = 0u64;
    for &slice in groups {
        let size = match slice.total_size() {
            0 => u64::MAX,
            n => n,
        };
        match waves.last_mut() {
            Some(wave) if bytes.saturating_add(size) <= budget => wave.push(slice),
            _ => {
                waves.push(vec![slice]);
                bytes = 0;
            }
        }
        bytes = bytes.saturating_add(size);
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file_group::BaseFile;

    fn slice(size: u64) -> FileSlice {
        let name = "f1_0-1-0_20240101000000000.parquet";
        FileSlice {
            partition: String::new(),
            file_id: "f1".into(),
            base_instant: "20240101000000000".into(),
            base_file: BaseFile::parse(name, size),
            log_files: Vec::new(),
        }
    }

    #[test]
    fn rewrites_are_read_in_waves_of_bounded_size() {
        let quarter = REWRITE_WAVE_BYTES / 4;
        let groups: Vec<FileSlice> = [1, 2, 2, 0, 5, 1, 1].map(|q| slice(q * quarter)).to_vec();
        let refs: Vec<&FileSlice> = groups.iter().collect();
        let sizes = |budget| -> Vec<Vec<u64>> {
            (rewrite_waves(&refs, budget).iter())
                .map(|w| w.iter().map(|s| s.total_size() / quarter).collect())
                .collect()
        };
        let waves = [vec![1, 2], vec![2], vec![0], vec![5], vec![1, 1]];
        assert_eq!(sizes(REWRITE_WAVE_BYTES), waves);
        // A larger input: one group at a time.
        assert_eq!(sizes(0).len(), groups.len());
    }
}
