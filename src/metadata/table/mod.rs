//! The metadata table read as Hudi reads it (docs/hudi-format.md §8.1–8.3, §8.5): a MOR table
//! under `.hoodie/metadata` with its own timeline, whose partitions are sharded into file
//! groups of an HFile base file plus log files of HFILE_DATA and DELETE blocks.
//!
//! Only blocks of *valid* instants count (Java `getValidInstantTimestamps`): completed data
//! instants, metadata delta commits not pending on the data table (async indexer, log
//! compaction), metadata rollbacks and the `00000000000000…` initialization commits. Rolled
//! back data instants are not added: from table version 8 on, a rollback deletes the
//! metadata log files of the instant it rolls back, so there is nothing left to cancel.
//!
//! A key's versions are merged in order — base file, then log blocks in log order — with
//! the rules of [`super::merge`]; a DELETE block removes the key.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::future::try_join_all;

use super::keys::{file_group_index, partition_id, ALL_PARTITIONS_KEY, NON_PARTITIONED_ID};
use super::log_blocks::{Block, Content};
use super::lookup::{Lookup, Records};
use super::merge::live_files;
use super::records::{MetadataPayload, RecordDecoder};
use super::sync::{check_config, check_in_sync, orphans, valid_instants, visibility};
use crate::error::{HudiError, Result};
use crate::file_group::view::{self, DataFile};
use crate::file_group::FileSlice;
use crate::hfile::{ChecksumReport, HFileReader};
use crate::meta_client::MetaClient;
use crate::storage::{join, ObjectMeta, Storage};
use crate::timeline::Visibility;

mod compaction;
mod slices;

pub use compaction::Compacted;

/// The metadata table's base path, relative to the data table's.
pub const METADATA_DIR: &str = ".hoodie/metadata";

/// MDT partition names.
pub const FILES: &str = "files";
pub const COLUMN_STATS: &str = "column_stats";
pub const PARTITION_STATS: &str = "partition_stats";
pub const RECORD_INDEX: &str = "record_index";

/// Blocks of an MDT base file closer than this are fetched in one request: a record-index
/// lookup of a few keys per file group touches blocks spread over the file, and on object
/// storage a request costs more than reading a few hundred KiB (Hudi writes 1 MiB blocks,
/// ~250 KiB compressed).
const BLOCK_GAP: u64 = 512 * 1024;

/// Prefix of the metadata table's initialization instants.
pub(super) const INIT_INSTANT_PREFIX: &str = "00000000000000";

type BaseFile = (HFileReader, Arc<RecordDecoder>);

pub struct MetadataTable {
    /// The metadata table's config and timeline.
    mdt: MetaClient,
    /// The data table's storage: metadata files are read by their path from the data
    /// table's root, so requests count there and errors name `.hoodie/metadata/…`.
    storage: Arc<dyn Storage>,
    /// §8.3: instants whose metadata blocks count.
    valid: HashSet<String>,
    /// Completed metadata instants whose files count: valid delta commits and compactions.
    visibility: Visibility,
    /// Partitions the data table declares complete (`hoodie.table.metadata.partitions`).
    available: Vec<String>,
    /// Valid metadata delta commits the data timeline does not have as completed.
    orphans: Vec<String>,
    /// Which listing of the data timeline it was checked against and answers for
    /// ([`MetaClient::listed_timeline`]).
    data_listing: u64,
    /// MDT partition directory listings fetched with the open: shards are built from them;
    /// a delta commit takes them for its log-file choice ([`MetadataTable::listed_shards`]).
    listings: Mutex<HashMap<String, Vec<ObjectMeta>>>,
    shards: Mutex<HashMap<String, Arc<Vec<FileSlice>>>>,
    /// The secondary indexes' definitions, once read.
    pub(super) secondary_defs: Mutex<Option<Arc<Vec<super::secondary::SecondaryIndexDef>>>>,
    bases: Mutex<HashMap<String, BaseFile>>,
    logs: Mutex<HashMap<String, Arc<Vec<Block>>>>,
    decoders: Mutex<HashMap<String, Arc<RecordDecoder>>>,
}

impl std::fmt::Debug for MetadataTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetadataTable")
            .field("location", &self.mdt.storage().location())
            .field("orphans", &self.orphans)
            .field("available", &self.available)
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl MetadataTable {
    /// Opens the metadata table of `data` and checks that it can answer for the data table's
    /// latest commit. Its config and timeline come in one round trip, together with the
    /// listings of the MDT partitions in `prefetch` (which do not depend on them).
    pub async fn open(data: &MetaClient, prefetch: &[&str]) -> Result<MetadataTable> {
        let opened = Box::pin(Self::open_once(data, prefetch)).await;
        // What the data table's open prefetched was listed beside its timeline, not after
        // it, so it may miss the newest commit: then the store is asked again.
        if data.end_mdt_prefetch() && opened.is_err() {
            return Box::pin(Self::open_once(data, prefetch)).await;
        }
        opened
    }

    async fn open_once(data: &MetaClient, prefetch: &[&str]) -> Result<MetadataTable> {
        let config = data.config();
        if config.version < 8 {
            return Err(HudiError::unsupported(format!(
                "the metadata table of a table version {} (0.x layout)",
                config.version
            )));
        }
        if !config.metadata_files_available() {
            return Err(HudiError::unsupported(
                "a metadata table without a complete `files` partition",
            ));
        }
        let storage = data.storage().clone();
        if !storage.capabilities().lists_dot_files {
            // Its partitions are mostly log files, which such a listing never shows.
            return Err(HudiError::unsupported(
                "a metadata table on a host whose listing hides dot-files (its log files); \
                 write a listing manifest (.hoodie/hudi-edge-manifest.json) or use an S3 listing",
            ));
        }
        // The data timeline is taken before the metadata table's is listed: a data commit
        // completes after its metadata delta commit, so any commit it shows is in that
        // listing. Taken after, a refresh of the handle's timeline meanwhile (a write on it)
        // could show a commit newer than the listing and the table would look behind.
        let (data_timeline, data_listing) = data.listed_timeline();
        let wanted: Vec<&str> = prefetch
            .iter()
            .copied()
            .filter(|p| config.metadata_partitions.iter().any(|a| a == p))
            .collect();
        let (mdt, listings) = futures::join!(
            MetaClient::open_nested(data, METADATA_DIR),
            try_join_all(wanted.iter().map(|p| {
                let dir = mdt_path(p);
                let storage = storage.clone();
                async move { storage.list(&dir, false).await }
            })),
        );
        let mdt = mdt?;
        let listings = wanted
            .iter()
            .map(|p| p.to_string())
            .zip(listings?)
            .collect();
        check_config(mdt.config())?;
        let mdt_timeline = mdt.timeline();
        check_in_sync(&data_timeline, &mdt_timeline)?;
        let valid = valid_instants(&data_timeline, &mdt_timeline);
        Ok(MetadataTable {
            data_listing,
            orphans: orphans(&data_timeline, &mdt_timeline),
            storage,
            visibility: visibility(&mdt_timeline, &valid),
            valid,
            available: config.metadata_partitions.clone(),
            mdt,
            listings: Mutex::new(listings),
            shards: Mutex::default(),
            secondary_defs: Mutex::default(),
            bases: Mutex::default(),
            logs: Mutex::default(),
            decoders: Mutex::default(),
        })
    }

    /// The listing of the data timeline it answers for.
    pub fn data_listing(&self) -> u64 {
        self.data_listing
    }

    /// The MDT partitions the data table declares complete.
    pub fn available_partitions(&self) -> &[String] {
        &self.available
    }

    /// The metadata table's table version (the data table's).
    pub fn table_version(&self) -> u32 {
        self.mdt.config().version
    }

    /// The data table's storage (the metadata table lives under it).
    pub fn data_storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// Whether the data table declares an MDT partition complete.
    pub fn has_partition(&self, partition: &str) -> bool {
        self.available.iter().any(|p| p == partition)
    }

    /// Metadata delta commits (not initializations) with no completed data instant of the
    /// same time: a data write that failed after its metadata commit, or a damaged data
    /// timeline. Their files are listed, and the data timeline leaves them out.
    pub fn orphan_instants(&self) -> &[String] {
        &self.orphans
    }

    /// Every requested and completion time on the metadata table's timeline (a new data
    /// instant must be later than all of them).
    pub fn timeline_times(&self) -> Vec<String> {
        self.mdt
            .timeline()
            .instants
            .iter()
            .flat_map(|i| {
                std::iter::once(i.requested_time.clone()).chain(i.completion_time.clone())
            })
            .collect()
    }

    /// The latest valid metadata instant (requested time).
    pub fn latest_instant(&self) -> Option<String> {
        self.visibility.instants().max().map(str::to_string)
    }

    /// Data-table partition paths (`""` when non-partitioned), sorted.
    pub async fn all_partitions(&self) -> Result<Vec<String>> {
        let keys = [ALL_PARTITIONS_KEY.to_string()];
        let records = self.exact(FILES, Lookup::Keys(&keys)).await?;
        let mut out: Vec<String> = match records.get(ALL_PARTITIONS_KEY) {
            Some(MetadataPayload::AllPartitions(list)) => {
                live_files(list).map(|e| data_partition(&e.name)).collect()
            }
            Some(other) => return Err(self.unexpected(FILES, ALL_PARTITIONS_KEY, other)),
            None => Vec::new(),
        };
        out.sort();
        Ok(out)
    }

    /// The files of `partitions` the `files` partition lists (committed or not: the
    /// file-system view decides).
    pub async fn files(&self, partitions: &[String]) -> Result<Vec<DataFile>> {
        let keys: Vec<String> = partitions
            .iter()
            .map(|p| partition_id(p).to_string())
            .collect();
        let records = self.exact(FILES, Lookup::Keys(&keys)).await?;
        let origin = join(METADATA_DIR, FILES);
        let mut out = Vec::new();
        for (partition, key) in partitions.iter().zip(&keys) {
            match records.get(key) {
                Some(MetadataPayload::Files(list)) => {
                    let partition = crate::storage::path::within_table(partition, &origin)?;
                    for e in live_files(list) {
                        out.push(DataFile {
                            partition: partition.clone(),
                            name: crate::storage::path::plain_name(&e.name, &origin)?.to_string(),
                            size: u64::try_from(e.size).unwrap_or(0),
                        });
                    }
                }
                Some(other) => return Err(self.unexpected(FILES, key, other)),
                None => {}
            }
        }
        Ok(out)
    }

    /// Merged records of one MDT partition for `lookup`; keys are routed to their shard,
    /// prefixes and full scans ask every shard. Shards are read concurrently.
    pub async fn lookup(&self, partition: &str, lookup: Lookup<'_>) -> Result<Records> {
        let shards = self.shards(partition).await?;
        let n = shards.len();
        let routed: Vec<Vec<String>> = match lookup {
            Lookup::Keys(keys) => {
                let mut by_shard = vec![Vec::new(); n];
                for k in keys {
                    by_shard[file_group_index(k, n)].push(k.clone());
                }
                by_shard
            }
            _ => Vec::new(),
        };
        let jobs = shards.iter().enumerate().filter_map(|(i, slice)| {
            let l = match lookup {
                Lookup::Keys(_) if routed[i].is_empty() => return None,
                Lookup::Keys(_) => Lookup::Keys(&routed[i]),
                other => other,
            };
            Some(self.slice_records(slice, l))
        });
        let mut out = Records::default();
        for r in try_join_all(jobs).await? {
            out.values.extend(r.values);
            out.problems.extend(r.problems);
        }
        Ok(out)
    }

    /// Merged records whose key starts with one of `prefixes`, each prefix asked only of the
    /// shard its `(prefix, shard key)` pair hashes to (a V2 secondary index puts every key
    /// of one value in the shard of `<value>$`).
    pub async fn lookup_prefixes_routed(
        &self,
        partition: &str,
        prefixes: &[(String, String)],
    ) -> Result<Records> {
        let shards = self.shards(partition).await?;
        let n = shards.len();
        let mut by_shard = vec![Vec::new(); n];
        for (prefix, shard_key) in prefixes {
            by_shard[file_group_index(shard_key, n)].push(prefix.clone());
        }
        let jobs = (shards.iter().zip(&by_shard))
            .filter(|(_, p)| !p.is_empty())
            .map(|(slice, p)| self.slice_records(slice, Lookup::Prefixes(p)));
        let mut out = Records::default();
        for r in try_join_all(jobs).await? {
            out.values.extend(r.values);
            out.problems.extend(r.problems);
        }
        Ok(out)
    }

    /// A lookup whose every key must be right (the `files` partition): problems are errors.
    async fn exact(
        &self,
        partition: &str,
        lookup: Lookup<'_>,
    ) -> Result<BTreeMap<String, MetadataPayload>> {
        let records = self.lookup(partition, lookup).await?;
        match records.problems.first() {
            Some(p) => Err(HudiError::corrupt(join(METADATA_DIR, partition), p.clone())),
            None => Ok(records.values),
        }
    }

    fn unexpected(&self, partition: &str, key: &str, payload: &MetadataPayload) -> HudiError {
        HudiError::corrupt(
            join(METADATA_DIR, partition),
            format!("record {key:?} is not a files record: {payload:?}"),
        )
    }

    /// The latest file slice of each file group of an MDT partition, by shard index.
    pub async fn shards(&self, partition: &str) -> Result<Arc<Vec<FileSlice>>> {
        if let Some(s) = lock(&self.shards).get(partition) {
            return Ok(s.clone());
        }
        self.check_partition(partition)?;
        let listed = self.partition_listing(partition, false).await?;
        self.shards_of(partition, &listed)
    }

    /// The listing of an MDT partition fetched with the open (`take`n out of the table, or
    /// copied), else a fresh one.
    async fn partition_listing(&self, partition: &str, take: bool) -> Result<Vec<ObjectMeta>> {
        let prefetched = match take {
            true => lock(&self.listings).remove(partition),
            false => lock(&self.listings).get(partition).cloned(),
        };
        match prefetched {
            Some(l) => Ok(l),
            None => self.storage.list(&mdt_path(partition), false).await,
        }
    }

    /// An MDT partition's directory listing — the one fetched with the open (taken), else a
    /// fresh one — and its shards (built from that listing unless known already): what a
    /// delta commit needs to choose its log files, in one listing.
    pub async fn listed_shards(
        &self,
        partition: &str,
    ) -> Result<(Arc<Vec<FileSlice>>, Vec<ObjectMeta>)> {
        self.check_partition(partition)?;
        let listed = self.partition_listing(partition, true).await?;
        Ok((self.shards_of(partition, &listed)?, listed))
    }

    fn check_partition(&self, partition: &str) -> Result<()> {
        if self.has_partition(partition) {
            return Ok(());
        }
        Err(HudiError::unsupported(format!(
            "metadata partition {partition} (not in hoodie.table.metadata.partitions)"
        )))
    }

    /// The shards of `partition` from its listing `listed` (unless known already).
    fn shards_of(&self, partition: &str, listed: &[ObjectMeta]) -> Result<Arc<Vec<FileSlice>>> {
        if let Some(s) = lock(&self.shards).get(partition) {
            return Ok(s.clone());
        }
        let files = listed.iter().filter(|m| !m.is_dir).map(|m| DataFile {
            partition: partition.to_string(),
            name: m.name().to_string(),
            size: m.size,
        });
        let fs_view = view::build(files, &self.visibility, self.mdt.config(), &HashSet::new());
        let slices = by_shard(fs_view.latest_slices().cloned().collect(), partition)?;
        let slices = Arc::new(slices);
        lock(&self.shards).insert(partition.to_string(), slices.clone());
        Ok(slices)
    }

    /// Every file of an MDT partition directory, committed or not (a writer picks log
    /// versions that do not collide with any of them).
    pub async fn list_partition(&self, partition: &str) -> Result<Vec<ObjectMeta>> {
        self.storage.list(&mdt_path(partition), false).await
    }

    /// The `HoodieMetadataRecord` writer schema the table's MDT files use: the newest
    /// HFILE_DATA block's `SCHEMA` header in the `files` partition, else its base file's
    /// file info (a writer must reuse it exactly, docs §10.4).
    pub async fn record_schema(&self) -> Result<String> {
        let shards = self.shards(FILES).await?;
        for slice in shards.iter() {
            for l in slice.log_files.iter().rev() {
                let blocks = self
                    .log(mdt_path(&join(&slice.partition, &l.name)), l.size)
                    .await?;
                for b in blocks.iter().rev() {
                    if let Content::HFile {
                        schema: Some(s), ..
                    } = &b.content
                    {
                        return Ok(s.clone());
                    }
                }
            }
            if let Some(b) = &slice.base_file {
                let path = mdt_path(&join(&slice.partition, &b.name));
                let (reader, _) = self.base(&path, b.size).await?;
                if let Some(s) = reader.file_info().schema() {
                    return Ok(s.to_string());
                }
            }
        }
        Err(HudiError::corrupt(
            join(METADATA_DIR, FILES),
            "no metadata record schema in any file",
        ))
    }

    /// What the block checksums of the metadata files read so far said.
    pub fn checksums(&self) -> ChecksumReport {
        let mut report = ChecksumReport::default();
        for (reader, _) in lock(&self.bases).values() {
            report.add(&reader.checksums());
        }
        for blocks in lock(&self.logs).values() {
            for b in blocks.iter() {
                if let Content::HFile { reader, .. } = &b.content {
                    report.add(&reader.checksums());
                }
            }
        }
        report
    }

    /// Plan notes on checksums that were not verified or did not match; each also goes to
    /// the io warnings (once a session). Such blocks are read, as Apache Hudi reads them.
    pub fn checksum_notes(&self) -> Vec<String> {
        let r = self.checksums();
        let mut notes = Vec::new();
        if r.stored_zeros > 0 {
            let what = "metadata table HFile blocks declare checksums but store zeros (hudi-rs 0.6 writes them so)";
            let why = "not verified, as Apache Hudi's HFile reader never verifies them";
            self.mdt.warn(format!("{what}: {why}"));
            notes.push(format!(
                "{what}, {} block(s) read so far: {why}",
                r.stored_zeros
            ));
        }
        if r.mismatched + r.unverifiable > 0 {
            let first = r.first_problem.unwrap_or_default();
            self.mdt.warn(format!(
                "metadata table HFile checksum not verified or wrong ({first}): read as Apache Hudi reads it"
            ));
            notes.push(format!(
                "{} metadata table HFile block(s) with wrong or uncheckable checksums (first: {first}): read as Apache Hudi reads them, with magic, sizes, decompression and key order checked",
                r.mismatched + r.unverifiable
            ));
        }
        notes
    }

    /// The timeline of the metadata table itself.
    pub fn mdt_timeline(&self) -> Arc<crate::timeline::Timeline> {
        self.mdt.timeline()
    }
}

/// A path under the metadata table, from the data table's root.
fn mdt_path(path: &str) -> String {
    join(METADATA_DIR, path)
}

/// `.` (the non-partitioned table's key) back to `""`.
fn data_partition(key: &str) -> String {
    if key == NON_PARTITIONED_ID {
        String::new()
    } else {
        key.to_string()
    }
}

/// Orders a partition's slices by shard index (`col-stats-0001-0` → 1, Java
/// `getFileGroupIndexFromFileId`); the indexes must be exactly `0..n`.
fn by_shard(slices: Vec<FileSlice>, partition: &str) -> Result<Vec<FileSlice>> {
    let dir = join(METADATA_DIR, partition);
    let mut indexed = slices
        .into_iter()
        .map(|s| match shard_index(&s.file_id) {
            Some(i) => Ok((i, s)),
            None => Err(HudiError::corrupt(
                &dir,
                format!("file group id {:?} has no shard index", s.file_id),
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    indexed.sort_by_key(|(i, _)| *i);
    if indexed.is_empty() {
        return Err(HudiError::corrupt(&dir, "no committed file group"));
    }
    if let Some((pos, (i, _))) = indexed.iter().enumerate().find(|(pos, (i, _))| pos != i) {
        return Err(HudiError::corrupt(
            &dir,
            format!("file group {i} found where {pos} was expected (shards must be 0..n)"),
        ));
    }
    Ok(indexed.into_iter().map(|(_, s)| s).collect())
}

fn shard_index(file_id: &str) -> Option<usize> {
    let id = file_id.strip_suffix("-0").unwrap_or(file_id);
    id.rsplit('-').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_indexes() {
        assert_eq!(shard_index("col-stats-0001-0"), Some(1));
        assert_eq!(shard_index("record-index-0009-0"), Some(9));
        assert_eq!(shard_index("files-0000"), Some(0));
        assert_eq!(shard_index("secondary-index-merchant-idx-0003-0"), Some(3));
        assert_eq!(shard_index("files"), None);
    }
}
