//! The metadata table read as Hudi reads it (docs: hudi-format §8.1–8.3, §8.5): a MOR table
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
use super::log_blocks::{self, Block, Content};
use super::lookup::{Fold, Lookup, Records};
use super::merge::{live_files, merge_payloads};
use super::records::{MetadataPayload, RecordDecoder, RecordValue, RECORD_INDEX_TYPE};
use super::sync::{check_config, check_in_sync, orphans, valid_instants, visibility};
use crate::error::{HudiError, Result};
use crate::file_group::view::{self, DataFile};
use crate::file_group::FileSlice;
use crate::hfile::{ChecksumReport, HFileReader, OpenOptions};
use crate::meta_client::MetaClient;
use crate::storage::{join, ObjectMeta, Storage};
use crate::timeline::Visibility;

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
            bases: Mutex::default(),
            logs: Mutex::default(),
            decoders: Mutex::default(),
        })
    }

    /// The listing of the data timeline it answers for.
    pub fn data_listing(&self) -> u64 {
        self.data_listing
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

    /// Every record of one slice merged in memory (the reference the streaming merge of
    /// [`Self::merge_slice_streaming`] is tested against).
    #[cfg(test)]
    pub(crate) async fn merge_slice(
        &self,
        slice: &FileSlice,
    ) -> Result<super::compact::MergedSlice> {
        let mut counts = super::compact::MergedSlice::default();
        let records = self
            .slice_records_counted(slice, Lookup::All, Some(&mut counts))
            .await?;
        if let Some(p) = records.problems.first() {
            return Err(HudiError::corrupt(
                mdt_path(&join(&slice.partition, &slice.file_id)),
                p.clone(),
            ));
        }
        counts.records = records.values;
        Ok(counts)
    }

    /// Every record of one slice merged, for compaction, handed to `emit` in key order
    /// with whether the base file held the key (a record that does not decode or merge is
    /// an error: a base file must not lose it silently). Memory stays bounded by the log
    /// files' records plus one run of about `run_bytes` of the base file (compressed) and
    /// one of its blocks inflated: the base HFile is sorted, so it is merged with the
    /// (sorted) log records as it streams.
    ///
    /// `output_schema`: the schema the new base file is written in, when its values are
    /// encoded as they were read (no file name filled in). Record-index values then come as
    /// their bytes where the file holding them has that schema too (base file, or log
    /// block): they carry no deletion flag, a newer version replaces an older one whole,
    /// and decoding and encoding the millions of them was most of a compaction's time.
    pub(crate) async fn merge_slice_streaming(
        &self,
        slice: &FileSlice,
        run_bytes: u64,
        output_schema: Option<&str>,
        mut emit: impl FnMut(&str, Compacted<'_>, bool) -> Result<()>,
    ) -> Result<super::compact::LogCounts> {
        let origin = mdt_path(&join(&slice.partition, &slice.file_id));
        let copy = output_schema.filter(|_| slice.partition == RECORD_INDEX);
        let kept = match copy {
            Some(schema) => Some(self.decoder_of(schema, &origin)?),
            None => None,
        };
        let logs = try_join_all(slice.log_files.iter().map(|l| {
            let path = mdt_path(&join(&slice.partition, &l.name));
            async move { log_blocks::read(self.storage.as_ref(), &path, l.size).await }
        }))
        .await?;
        let (log_versions, counts) = self.log_versions(&logs, copy).await?;
        drop(logs);
        let mut merge = SliceMerge {
            logs: log_versions.into_iter().peekable(),
            emit: &mut emit,
            origin: &origin,
            kept,
        };
        if let Some(b) = &slice.base_file {
            let (reader, decoder) = self
                .base(&mdt_path(&join(&slice.partition, &b.name)), b.size)
                .await?;
            let keep = copy.is_some() && reader.file_info().schema() == copy;
            // Versions of the current key (a base file should hold each key once; Hudi's
            // reader merges repeats, and so does this).
            let mut current: Option<(String, RecordValue)> = None;
            for run in reader.data_block_runs(run_bytes).await? {
                reader
                    .scan_run(&run, |cells| {
                        decoder.decode_or_keep_each(cells, keep, |key, value| {
                            let value = value.in_file(reader.path());
                            match current.take() {
                                Some((k, older)) if k == key => {
                                    let merged = merge.fold(&k, older, value);
                                    current = Some((k, merged));
                                }
                                Some((k, _)) if k > key => {
                                    return Err(HudiError::corrupt(
                                        reader.path(),
                                        format!("rows out of order: {key:?} after {k:?}"),
                                    ))
                                }
                                previous => {
                                    if let Some((k, v)) = previous {
                                        merge.base_record(k, v)?;
                                    }
                                    current = Some((key, value));
                                }
                            }
                            Ok(())
                        })
                    })
                    .await
                    .map_err(|e| e.in_file(reader.path()))?;
            }
            if let Some((k, v)) = current {
                merge.base_record(k, v)?;
            }
        }
        merge.rest()?;
        Ok(counts)
    }

    /// The blocks of a slice's log files that count, in log order: of valid instants, and
    /// not voided by a rollback block in any of the slice's log files.
    fn live_blocks<'a>(&self, logs: impl Iterator<Item = &'a [Block]>) -> Vec<&'a Block> {
        let blocks: Vec<&Block> = logs
            .flat_map(|l| l.iter())
            .filter(|b| b.instant.as_ref().is_none_or(|i| self.valid.contains(i)))
            .collect();
        let rolled_back: HashSet<&str> = blocks
            .iter()
            .filter_map(|b| match &b.content {
                Content::Rollback { target } => Some(target.as_str()),
                _ => None,
            })
            .collect();
        blocks
            .into_iter()
            .filter(|b| {
                !b.instant
                    .as_deref()
                    .is_some_and(|i| rolled_back.contains(i))
            })
            .collect()
    }

    /// The versions each key has in the valid, not rolled back blocks of a slice's log
    /// files (in log order), after the key's last delete.
    async fn log_versions(
        &self,
        logs: &[Vec<Block>],
        copy: Option<&str>,
    ) -> Result<(BTreeMap<String, LogVersions>, super::compact::LogCounts)> {
        let mut counts = super::compact::LogCounts::default();
        let blocks = self.live_blocks(logs.iter().map(|l| l.as_slice()));
        let mut out: BTreeMap<String, LogVersions> = BTreeMap::new();
        for block in blocks {
            counts.log_blocks += 1;
            match &block.content {
                Content::HFile { reader, schema } => {
                    let decoder = self.decoder(schema.as_deref(), reader)?;
                    let keep = copy.is_some()
                        && schema.as_deref().or_else(|| reader.file_info().schema()) == copy;
                    let cells = reader.scan_all().await?;
                    decoder
                        .decode_or_keep_each(&cells, keep, |key, value| {
                            counts.log_records += 1;
                            let version = value.in_file(reader.path());
                            out.entry(key).or_default().versions.push(version);
                            Ok(())
                        })
                        .map_err(|e| e.in_file(reader.path()))?;
                }
                Content::Delete(keys) => {
                    counts.log_records += keys.len() as u64;
                    for k in keys {
                        let v = out.entry(k.clone()).or_default();
                        v.deleted = true;
                        v.versions.clear();
                    }
                }
                Content::Rollback { .. } | Content::Other => {}
            }
        }
        Ok((out, counts))
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

    /// One shard's records for `lookup`: the base file's, then each valid log block's.
    async fn slice_records(&self, slice: &FileSlice, lookup: Lookup<'_>) -> Result<Records> {
        self.slice_records_counted(slice, lookup, None).await
    }

    async fn slice_records_counted(
        &self,
        slice: &FileSlice,
        lookup: Lookup<'_>,
        mut counts: Option<&mut super::compact::MergedSlice>,
    ) -> Result<Records> {
        let (base, logs) = self.open_slice(slice).await?;
        let mut fold = Fold::default();
        if let Some((reader, decoder)) = base {
            let decoded = decoder.decode_each(&lookup.cells(&reader).await?);
            if let (Some(c), Ok(d)) = (counts.as_deref_mut(), &decoded) {
                c.base_keys = d.iter().map(|(k, _)| k.clone()).collect();
            }
            fold.apply(
                decoded.map_err(|e| e.in_file(reader.path()))?,
                reader.path(),
            );
        }
        let blocks = self.live_blocks(logs.iter().map(|l| l.as_slice()));
        for block in blocks {
            if let Some(c) = counts.as_deref_mut() {
                c.log_blocks += 1;
            }
            match &block.content {
                Content::HFile { reader, schema } => {
                    let decoder = self.decoder(schema.as_deref(), reader)?;
                    let decoded = decoder.decode_each(&lookup.cells(reader).await?);
                    if let (Some(c), Ok(d)) = (counts.as_deref_mut(), &decoded) {
                        c.log_records += d.len() as u64;
                    }
                    fold.apply(
                        decoded.map_err(|e| e.in_file(reader.path()))?,
                        reader.path(),
                    );
                }
                Content::Delete(keys) => {
                    if let Some(c) = counts.as_deref_mut() {
                        c.log_records += keys.len() as u64;
                    }
                    keys.iter()
                        .filter(|k| lookup.matches(k))
                        .for_each(|k| fold.delete(k))
                }
                Content::Rollback { .. } | Content::Other => {}
            }
        }
        Ok(fold.into_records())
    }

    /// A shard's base HFile (opened: its tail read) and its log files' blocks, all at once.
    async fn open_slice(
        &self,
        slice: &FileSlice,
    ) -> Result<(Option<BaseFile>, Vec<Arc<Vec<Block>>>)> {
        let base = async {
            match &slice.base_file {
                Some(b) => self
                    .base(&mdt_path(&join(&slice.partition, &b.name)), b.size)
                    .await
                    .map(Some),
                None => Ok(None),
            }
        };
        let logs = try_join_all(
            slice
                .log_files
                .iter()
                .map(|l| self.log(mdt_path(&join(&slice.partition, &l.name)), l.size)),
        );
        futures::future::try_join(base, logs).await
    }

    /// Opens every shard of `partition` ahead of its lookups (base tails and log files,
    /// cached), so that a lookup issued once the data files are known needs only data blocks.
    pub async fn open_shards(&self, partition: &str) -> Result<()> {
        let shards = self.shards(partition).await?;
        try_join_all(shards.iter().map(|s| self.open_slice(s))).await?;
        Ok(())
    }

    /// An MDT base HFile, opened once (its size is known, so the tail is one ranged read).
    async fn base(&self, path: &str, size: u64) -> Result<BaseFile> {
        if let Some(b) = lock(&self.bases).get(path) {
            return Ok(b.clone());
        }
        let opts = OpenOptions {
            file_size: Some(size),
            ..OpenOptions::default()
        };
        let reader = HFileReader::open_with(self.storage.clone(), path, opts)
            .await?
            .with_coalesce_gap(BLOCK_GAP);
        let decoder = self.decoder(None, &reader)?;
        lock(&self.bases).insert(path.to_string(), (reader.clone(), decoder.clone()));
        Ok((reader, decoder))
    }

    /// A log file's blocks, read once.
    async fn log(&self, path: String, size: u64) -> Result<Arc<Vec<Block>>> {
        if let Some(b) = lock(&self.logs).get(&path) {
            return Ok(b.clone());
        }
        let blocks = Arc::new(log_blocks::read(self.storage.as_ref(), &path, size).await?);
        lock(&self.logs).insert(path, blocks.clone());
        Ok(blocks)
    }

    /// A decoder for a writer schema (a log block's `SCHEMA` header, else the HFile's own),
    /// shared by every file that carries the same schema. Errors name the file through
    /// `in_file`.
    fn decoder(&self, schema: Option<&str>, reader: &HFileReader) -> Result<Arc<RecordDecoder>> {
        let schema = schema
            .or_else(|| reader.file_info().schema())
            .ok_or_else(|| {
                HudiError::corrupt(
                    reader.path(),
                    "no metadata record schema (SCHEMA header or file info)",
                )
            })?;
        self.decoder_of(schema, reader.path())
    }

    /// [`Self::decoder`] of `schema`; errors name `file`.
    fn decoder_of(&self, schema: &str, file: &str) -> Result<Arc<RecordDecoder>> {
        if let Some(d) = lock(&self.decoders).get(schema) {
            return Ok(d.clone());
        }
        let decoder = Arc::new(RecordDecoder::new(schema, "").map_err(|e| e.in_file(file))?);
        lock(&self.decoders).insert(schema.to_string(), decoder.clone());
        Ok(decoder)
    }
}

/// A key's versions in a slice's log files: whether a delete dropped what came before,
/// and the versions after the last delete.
#[derive(Default)]
struct LogVersions {
    deleted: bool,
    versions: Vec<RecordValue>,
}

/// A record of a compacted file group, for its new base file.
pub enum Compacted<'a> {
    /// The key's versions merged.
    Merged(&'a MetadataPayload),
    /// A record-index value as it was stored (the newest version of its key), in the new
    /// file's schema.
    Unchanged(&'a [u8]),
}

/// The merge of a sorted base file with a slice's log versions, record by record.
struct SliceMerge<'a, E> {
    logs: std::iter::Peekable<std::collections::btree_map::IntoIter<String, LogVersions>>,
    emit: &'a mut E,
    origin: &'a str,
    /// Decodes kept values (they all have the output schema).
    kept: Option<Arc<RecordDecoder>>,
}

impl<E: FnMut(&str, Compacted<'_>, bool) -> Result<()>> SliceMerge<'_, E> {
    /// A base file's key (its versions merged): log-only keys before it go first.
    fn base_record(&mut self, key: String, base: RecordValue) -> Result<()> {
        while let Some((k, _)) = self.logs.peek() {
            if *k >= key {
                break;
            }
            let (k, v) = self.logs.next().expect("peeked");
            self.resolve(&k, None, Some(v))?;
        }
        let log = match self.logs.peek() {
            Some((k, _)) if *k == key => self.logs.next().map(|(_, v)| v),
            _ => None,
        };
        self.resolve(&key, Some(base), log)
    }

    /// The log-only keys after the base file's last.
    fn rest(&mut self) -> Result<()> {
        while let Some((k, v)) = self.logs.next() {
            self.resolve(&k, None, Some(v))?;
        }
        Ok(())
    }

    /// Folds a key's versions in merge order (as [`Fold`] does for lookups) and emits the
    /// result; a delete without later versions emits nothing.
    fn resolve(
        &mut self,
        key: &str,
        base: Option<RecordValue>,
        log: Option<LogVersions>,
    ) -> Result<()> {
        let from_base = base.is_some();
        let mut state = base;
        if let Some(log) = log {
            if log.deleted {
                state = None;
            }
            for newer in log.versions {
                state = Some(match state {
                    Some(older) => self.fold(key, older, newer),
                    None => newer,
                });
            }
        }
        match state {
            None => Ok(()),
            Some(RecordValue::Kept(value)) => {
                (self.emit)(key, Compacted::Unchanged(&value), from_base)
            }
            Some(RecordValue::Decoded(Ok(p))) => (self.emit)(key, Compacted::Merged(&p), from_base),
            Some(RecordValue::Decoded(Err(e))) => {
                Err(HudiError::corrupt(self.origin, format!("key {key:?}: {e}")))
            }
        }
    }

    /// `newer` merged onto `older` ([`merge_payloads`]); a version that failed spoils the
    /// key until a delete. Two kept record-index values need no decoding: the newer wins.
    fn fold(&self, key: &str, older: RecordValue, newer: RecordValue) -> RecordValue {
        use RecordValue::{Decoded, Kept};
        let record_index =
            |v: &[u8]| self.kept.as_ref().and_then(|d| d.record_type(v)) == Some(RECORD_INDEX_TYPE);
        match (older, newer) {
            (Decoded(Err(e)), _) => Decoded(Err(e)),
            (Kept(o), Kept(n)) if record_index(&o) && record_index(&n) => Kept(n),
            (older, newer) => Decoded(self.decoded(key, older).and_then(|o| {
                self.decoded(key, newer)
                    .and_then(|n| merge_payloads(&o, &n))
            })),
        }
    }

    fn decoded(&self, key: &str, value: RecordValue) -> Result<MetadataPayload> {
        match (value, &self.kept) {
            (RecordValue::Decoded(p), _) => p,
            (RecordValue::Kept(bytes), Some(d)) => d
                .decode(key, &bytes)
                .map(|r| r.payload)
                .map_err(|e| e.in_file(self.origin)),
            (RecordValue::Kept(_), None) => Err(HudiError::corrupt(
                self.origin,
                format!("key {key:?}: a kept value without its schema"),
            )),
        }
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
