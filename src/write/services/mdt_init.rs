//! Building a table's missing metadata-table partitions, as Java's metadata writer does
//! before a write that enables them (docs/hudi-format.md §8.12): `files` from a listing,
//! `column_stats` and `partition_stats` from the latest slices' files, `record_index` from
//! every live key. Plans and bytes come from [`crate::metadata::init`].
//!
//! Each partition is one MDT delta commit (`00000000000000000`, `…001`, …). A partition
//! counts only once `hoodie.table.metadata.partitions` lists it, written last: a crash
//! before leaves a table every reader reads as before, and the next attempt clears the
//! partition's leftovers (the whole metadata table while `files` is not listed) and
//! builds it again.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::{self, StreamExt, TryStreamExt};
use serde::Serialize;

use crate::base_file::writer::{footer_column_ranges, record_column_ranges, ColumnRange};
use crate::config::{properties, PROPERTIES_FILE};
use crate::error::{HudiError, Result};
use crate::file_group::FileSlice;
use crate::meta_client::MetaClient;
use crate::metadata::config::MetadataConfig;
use crate::metadata::delta::widen_range;
use crate::metadata::init::{self, Contents, DataFile, LiveKey};
use crate::metadata::table::{COLUMN_STATS, METADATA_DIR, PARTITION_STATS, RECORD_INDEX};
use crate::metadata::MetadataCache;
use crate::read::{Plan, ReadOptions, Scan};
use crate::snapshot::{Request, Snapshot};
use crate::storage::{join, IoSnapshot, Purpose, PutMode, Storage, StorageExt};
use crate::timeline::write::encode_commit_metadata;
use crate::write::files;

/// What an initialisation built.
#[derive(Debug, Clone, Serialize)]
pub struct MdtInit {
    pub partitions: Vec<BuiltPartition>,
    /// Requests of the initialisation alone.
    pub io: IoSnapshot,
    pub elapsed_ms: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BuiltPartition {
    pub partition: String,
    pub instant: String,
    pub file_groups: usize,
    pub records: u64,
}

/// The partitions `settings` ask for, and those listed as being built, that the table (as
/// `client` last read it) lacks, in the order Java builds them.
pub fn missing(client: &MetaClient, settings: &MetadataConfig) -> Vec<&'static str> {
    let config = client.config();
    let building = |p: &&str| config.metadata_partitions_inflight.iter().any(|x| x == p);
    let wanted = if settings.asked() {
        settings.partitions(config.is_partitioned())
    } else {
        Vec::new()
    };
    init::BUILDABLE
        .into_iter()
        .filter(|p| wanted.contains(p) || building(p))
        .filter(|p| !config.metadata_partitions.iter().any(|x| x == p))
        .collect()
}

/// Builds the partitions `settings` want and the table lacks, reading the table afresh
/// first; `None` when nothing was missing. HFile blocks of `block_size` (Hudi's default
/// when `None`).
pub async fn initialize(
    client: &MetaClient,
    settings: &MetadataConfig,
    block_size: Option<usize>,
) -> Result<Option<MdtInit>> {
    let block_size = block_size.unwrap_or(crate::hfile::writer::DEFAULT_BLOCK_SIZE);
    let client = Arc::new(client.reopen().await?);
    let wanted = missing(&client, settings);
    if wanted.is_empty() {
        return Ok(None);
    }
    let config = client.config();
    if !matches!(config.version, 8 | 9) || config.timeline_layout_version != 2 {
        return Err(HudiError::unsupported_in(
            format!(
                "building a metadata table on table version {} (versions 8 and 9 are written)",
                config.version
            ),
            PROPERTIES_FILE,
        ));
    }
    let storage = client.storage().clone();
    let (io, started) = (client.io(), files::now_ms());
    let fresh = !config.metadata_files_available();
    // Leftovers of an attempt that did not finish: nothing reads them.
    if fresh {
        delete_tree(storage.as_ref(), METADATA_DIR).await?;
        create_metadata_table(&client).await?;
    } else {
        for p in &wanted {
            delete_tree(storage.as_ref(), &join(METADATA_DIR, p)).await?;
        }
    }
    let with_stats = wanted.contains(&COLUMN_STATS) || wanted.contains(&PARTITION_STATS);
    let columns = if with_stats || config.metadata_partitions.iter().any(|p| p == COLUMN_STATS) {
        Some(indexed_columns(&client, settings).await?)
    } else {
        None
    };
    let mut contents = read_contents(
        &client,
        columns.as_deref().filter(|_| with_stats),
        wanted.contains(&RECORD_INDEX),
    )
    .await?;
    let mut taken = mdt_instants(storage.as_ref()).await?;
    let mut built = Vec::new();
    for partition in wanted {
        let records = init::records(partition, &mut contents, config.timezone)?;
        let groups = settings.sizing.file_groups(partition, records.len() as u64);
        let instant = init::init_instant(&taken);
        taken.insert(instant.clone());
        let commit = init::build_partition(
            partition,
            &records,
            groups,
            &instant,
            files::now_ms(),
            block_size,
        )?;
        publish(&client, &commit).await?;
        let columns_of = columns.as_deref().unwrap_or_default();
        let index_defs = match init::index_definition(partition, columns_of) {
            Some(definition) => Some(write_index_definition(&client, partition, definition).await?),
            None => None,
        };
        complete_partition(storage.as_ref(), partition, index_defs.as_deref()).await?;
        built.push(BuiltPartition {
            partition: partition.to_string(),
            instant,
            file_groups: groups,
            records: records.len() as u64,
        });
    }
    Ok(Some(MdtInit {
        partitions: built,
        io: client.io().since(&io),
        elapsed_ms: (files::now_ms() - started).max(0),
    }))
}

async fn delete_tree(storage: &dyn Storage, dir: &str) -> Result<()> {
    let listed = match storage.list(dir, true).await {
        Ok(l) => l,
        Err(HudiError::NotFound { .. }) => return Ok(()),
        Err(e) => return Err(e),
    };
    stream::iter(listed.into_iter().filter(|m| !m.is_dir))
        .map(|m| async move {
            match storage.delete(&m.path).await {
                Ok(()) | Err(HudiError::NotFound { .. }) => Ok(()),
                Err(e) => Err(e),
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await
        .map(drop)
}

/// The metadata table's properties and folders (Java's `initializeMetaClient`).
async fn create_metadata_table(client: &MetaClient) -> Result<()> {
    let storage = client.storage();
    let config = client.config();
    let folders = [
        ".hoodie/timeline/",
        ".hoodie/timeline/history/",
        ".hoodie/.temp/",
        ".hoodie/.aux/",
    ];
    let paths: Vec<String> = folders.iter().map(|f| join(METADATA_DIR, f)).collect();
    futures::future::try_join_all(
        (paths.iter()).map(|path| storage.put(path, Bytes::new(), PutMode::Overwrite)),
    )
    .await?;
    let comment = format!("Properties saved on {}", chrono::Utc::now().to_rfc3339());
    let text = init::properties_text(&config.name, config.version, &comment);
    storage
        .put(
            &join(METADATA_DIR, PROPERTIES_FILE),
            Bytes::from(text),
            PutMode::Overwrite,
        )
        .await
        .map(drop)
}

/// The columns the statistics cover: the table's index definition when it has one, else
/// the settings' choice over the table's columns.
async fn indexed_columns(client: &MetaClient, settings: &MetadataConfig) -> Result<Vec<String>> {
    let config = client.config();
    if let Some(defined) =
        crate::write::mdt::indexed_columns(client.storage().as_ref(), config).await?
    {
        return Ok(defined);
    }
    let visibility = client.timeline().visibility_as_of(None);
    let schema = crate::snapshot::schema::table_schema(client, &visibility).await?;
    let data: Vec<String> = schema
        .fields()
        .iter()
        .filter(|f| !crate::schema::is_meta_column(f.name()) && !f.data_type().is_nested())
        .map(|f| f.name().clone())
        .collect();
    let meta: &[&str] = if config.populate_meta_fields {
        &[
            crate::schema::COMMIT_TIME,
            crate::schema::PARTITION_PATH,
            crate::schema::RECORD_KEY,
        ]
    } else {
        &[]
    };
    settings.indexed_columns(meta, &data)
}

/// Records `partition`'s index definition in the table's index definitions file (created
/// when absent, others kept); answers its path.
async fn write_index_definition(
    client: &MetaClient,
    partition: &str,
    definition: serde_json::Value,
) -> Result<String> {
    let storage = client.storage();
    let path = client
        .config()
        .property("hoodie.table.index.defs.path")
        .unwrap_or(crate::config::layout::INDEX_DEFS_FILE)
        .to_string();
    let existing = match storage.get(&path, Purpose::Other).await {
        Ok(b) => Some(b),
        Err(HudiError::NotFound { .. }) => None,
        Err(e) => return Err(e),
    };
    let text = init::with_index_definition(existing.as_deref(), partition, definition, &path)?;
    storage
        .put(&path, Bytes::from(text), PutMode::Overwrite)
        .await?;
    Ok(path)
}

/// The table's files and keys as of its latest completed instant, read through the
/// snapshot reader: the listing for `files`; for the statistics, each latest slice's base
/// file footer and each of its log files' rows; the live keys for the record index.
async fn read_contents(
    client: &Arc<MetaClient>,
    columns: Option<&[String]>,
    with_keys: bool,
) -> Result<Contents> {
    let timeline = client.timeline();
    let completed: HashSet<&str> = timeline
        .instants
        .iter()
        .filter(|i| i.is_completed())
        .map(|i| i.requested_time.as_str())
        .collect();
    let listed = crate::snapshot::listing::list_data_files(client).await?;
    let mut partitions = BTreeSet::new();
    let mut data_files = Vec::new();
    for (partition, meta) in &listed {
        let name = meta.name();
        let instant = if let Some(b) = crate::file_group::BaseFile::parse(name, meta.size) {
            b.instant
        } else if let Some(l) = crate::file_group::LogFile::parse(name, meta.size) {
            l.instant
        } else {
            continue;
        };
        // Files of pending or failed writes are not the table's.
        if !completed.contains(instant.as_str()) {
            continue;
        }
        partitions.insert(partition.clone());
        data_files.push(DataFile {
            partition: partition.clone(),
            name: name.to_string(),
            size: meta.size,
            columns: Vec::new(),
        });
    }
    let mut contents = Contents {
        partitions: partitions.into_iter().collect(),
        files: data_files,
        keys: Vec::new(),
    };
    if columns.is_none() && !with_keys {
        return Ok(contents);
    }
    let cache = MetadataCache::default();
    let request = Request::latest(client);
    let snapshot = Arc::new(Box::pin(Snapshot::load(client, &cache, request)).await?);
    if let Some(columns) = columns {
        let ranges = stream::iter(snapshot.latest_slices())
            .map(|slice| slice_ranges(client, &snapshot, slice, columns))
            .buffer_unordered(8)
            .try_collect::<Vec<_>>()
            .await?;
        let by_file: BTreeMap<(String, String), Vec<ColumnRange>> =
            ranges.into_iter().flatten().collect();
        for f in &mut contents.files {
            if let Some(r) = by_file.get(&(f.partition.clone(), f.name.clone())) {
                f.columns = r.clone();
            }
        }
    }
    if with_keys {
        let keys = stream::iter(snapshot.latest_slices())
            .map(|slice| {
                let client = client.clone();
                let snapshot = snapshot.clone();
                async move {
                    let keys = crate::write::tag::slice_keys(client, &snapshot, slice).await?;
                    Ok::<_, HudiError>(
                        keys.into_iter()
                            .map(|key| LiveKey {
                                key,
                                partition: slice.partition.clone(),
                                file_id: slice.file_id.clone(),
                                instant: slice.base_instant.clone(),
                            })
                            .collect::<Vec<_>>(),
                    )
                }
            })
            .buffer_unordered(8)
            .try_collect::<Vec<_>>()
            .await?;
        contents.keys = keys.into_iter().flatten().collect();
    }
    Ok(contents)
}

/// Column ranges of a slice's files, by (partition, file name): the base file's from its
/// footer, each log file's from its rows.
async fn slice_ranges(
    client: &Arc<MetaClient>,
    snapshot: &Snapshot,
    slice: &FileSlice,
    columns: &[String],
) -> Result<Vec<((String, String), Vec<ColumnRange>)>> {
    let wanted = |r: &ColumnRange| columns.contains(&r.column);
    let mut out = Vec::new();
    if let (Some(path), Some(base)) = (slice.base_path(), &slice.base_file) {
        let footer = client.footer(&path, Some(base.size)).await?;
        let ranges = footer_column_ranges(footer.parquet(), &path)?;
        out.push((
            (slice.partition.clone(), base.name.clone()),
            ranges.into_iter().filter(wanted).collect(),
        ));
    }
    let options = ReadOptions {
        columns: Some(
            (snapshot.schema.fields().iter())
                .map(|f| f.name().clone())
                .filter(|n| columns.contains(n))
                .collect(),
        ),
        ..ReadOptions::default()
    };
    for log in &slice.log_files {
        let log_only = FileSlice {
            base_file: None,
            log_files: vec![log.clone()],
            ..slice.clone()
        };
        let mut one = Plan::of_slices(snapshot, vec![log_only], snapshot.schema.clone());
        // Statistics of the values every reader sees.
        one.partition_values_from_path = true;
        let mut scan = Scan::new(client.clone(), Arc::new(one), &options);
        let mut acc: BTreeMap<String, ColumnRange> = BTreeMap::new();
        while let Some(batch) = scan.next().await {
            for r in record_column_ranges(&batch?) {
                acc.entry(r.column.clone())
                    .and_modify(|a| widen_range(a, &r))
                    .or_insert(r);
            }
        }
        out.push((
            (slice.partition.clone(), log.name.clone()),
            acc.into_values().filter(wanted).collect(),
        ));
    }
    Ok(out)
}

/// Requested times on the metadata table's timeline.
async fn mdt_instants(storage: &dyn Storage) -> Result<BTreeSet<String>> {
    let dir = join(METADATA_DIR, ".hoodie/timeline");
    let listed = match storage.list(&dir, false).await {
        Ok(l) => l,
        Err(HudiError::NotFound { .. }) => Vec::new(),
        Err(e) => return Err(e),
    };
    Ok(listed
        .iter()
        .filter_map(|m| crate::timeline::instant::parse_instant_file_name(m.name()))
        .map(|f| f.requested_time)
        .collect())
}

/// The partition's delta commit: requested, inflight, its files, completed.
async fn publish(client: &MetaClient, commit: &init::PartitionCommit) -> Result<()> {
    let storage = client.storage();
    let timeline = join(METADATA_DIR, ".hoodie/timeline");
    let at = |suffix: &str| join(&timeline, &format!("{}{suffix}", commit.instant));
    storage
        .put(&at(".deltacommit.requested"), Bytes::new(), PutMode::Create)
        .await?;
    storage
        .put(&at(".deltacommit.inflight"), Bytes::new(), PutMode::Create)
        .await?;
    let partition_dir = join(METADATA_DIR, &commit.partition);
    let marker = join(&partition_dir, crate::config::layout::PARTITION_METADATA);
    let marker_bytes = files::partition_metadata(&commit.instant, &commit.partition);
    let mut puts = vec![(marker, Bytes::from(marker_bytes))];
    for (path, bytes) in &commit.files {
        puts.push((join(METADATA_DIR, path), Bytes::from(bytes.clone())));
    }
    crate::write::publish::settle_all(
        puts.iter()
            .map(|(p, b)| storage.put(p, b.clone(), PutMode::Overwrite)),
    )
    .await?;
    let completion = crate::timeline::write::new_instant_time(
        files::now_ms(),
        client.config().timezone,
        &[commit.instant.as_str()],
    )?;
    let bytes = encode_commit_metadata(&commit.metadata, client.config().version)?;
    storage
        .put(
            &join(
                &timeline,
                &format!("{}_{completion}.deltacommit", commit.instant),
            ),
            Bytes::from(bytes),
            PutMode::Create,
        )
        .await
        .map(drop)
}

/// Lists `partition` as completed in the data table's properties, through Java's backup
/// protocol (a reader finding no properties reads the backup).
async fn complete_partition(
    storage: &dyn Storage,
    partition: &str,
    index_defs: Option<&str>,
) -> Result<()> {
    let current = storage.get(PROPERTIES_FILE, Purpose::Properties).await?;
    let text = std::str::from_utf8(&current)
        .map_err(|_| HudiError::corrupt(PROPERTIES_FILE, "not UTF-8 text"))?;
    let updated = init::with_completed_partition(&properties::parse(text), partition, index_defs);
    let comment = format!("Updated at {}", chrono::Utc::now().to_rfc3339());
    let new_text = properties::store(
        &comment,
        updated.iter().map(|(k, v)| (k.as_str(), v.as_str())),
    );
    let backup = crate::config::layout::PROPERTIES_BACKUP;
    storage
        .put(backup, current.clone(), PutMode::Overwrite)
        .await?;
    storage
        .put(PROPERTIES_FILE, Bytes::from(new_text), PutMode::Overwrite)
        .await?;
    match storage.delete(backup).await {
        Ok(()) | Err(HudiError::NotFound { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Builds the secondary index `secondary_index_<name>` on `column` the way Spark's
/// `CREATE INDEX name ON t (column)` leaves it: its definition in the index definitions
/// file, one MDT delta commit of `<value>$<record key>` entries over file groups sized as
/// the record index's (sharded by `<value>$`, index version V2), then the partition listed
/// complete in `hoodie.table.metadata.partitions` — last, so that a crash before leaves a
/// table every reader reads as before and the next attempt builds it again. `None` when the
/// table already has it.
pub async fn initialize_secondary(
    client: &MetaClient,
    column: &str,
    name: &str,
    block_size: Option<usize>,
) -> Result<Option<MdtInit>> {
    use crate::metadata::secondary::{secondary_value, SECONDARY_INDEX_PREFIX};
    let block_size = block_size.unwrap_or(crate::hfile::writer::DEFAULT_BLOCK_SIZE);
    let client = Arc::new(client.reopen().await?);
    let config = client.config();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(HudiError::invalid(format!(
            "secondary index name {name:?}: letters, digits and _ only"
        )));
    }
    let partition = format!("{SECONDARY_INDEX_PREFIX}{name}");
    if config.metadata_partitions.contains(&partition) {
        return Ok(None);
    }
    let refuse = |what: String| Err(HudiError::unsupported_in(what, PROPERTIES_FILE));
    if !matches!(config.version, 8 | 9) || config.timeline_layout_version != 2 {
        return refuse(format!(
            "building a secondary index on table version {}",
            config.version
        ));
    }
    // Entries name record keys; readers find their file groups through the record index.
    if !config.metadata_partitions.iter().any(|p| p == RECORD_INDEX) || !config.populate_meta_fields
    {
        return refuse(
            "a secondary index on a table without a record index (build it first: \
             --partitions record_index)"
                .into(),
        );
    }
    let visibility = client.timeline().visibility_as_of(None);
    let schema = crate::snapshot::schema::table_schema(&client, &visibility).await?;
    if schema.field_with_name(column).is_err() || crate::schema::is_meta_column(column) {
        return Err(HudiError::invalid(format!(
            "no column {column:?} to index (table columns: {})",
            (schema.fields().iter())
                .map(|f| f.name().as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let storage = client.storage().clone();
    let (io, started) = (client.io(), files::now_ms());
    delete_tree(storage.as_ref(), &join(METADATA_DIR, &partition)).await?;

    // Every live row's record key and value, from the latest snapshot.
    let cache = MetadataCache::default();
    let options = ReadOptions {
        columns: Some(vec![
            crate::schema::RECORD_KEY.to_string(),
            column.to_string(),
        ]),
        data_skipping: false,
        ..ReadOptions::default()
    };
    let plan = Arc::new(Box::pin(crate::read::plan(&client, &cache, &options)).await?);
    let mut scan = Scan::new(client.clone(), plan, &options);
    let mut records = BTreeMap::new();
    let mut shard_keys = BTreeMap::new();
    while let Some(batch) = scan.next().await {
        let batch = batch?;
        let (Some(keys), Some(values)) = (
            batch.column_by_name(crate::schema::RECORD_KEY),
            batch.column_by_name(column),
        ) else {
            return Err(HudiError::invalid(
                "the snapshot read lacks the key or the column",
            ));
        };
        let keys = keys
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .ok_or_else(|| HudiError::invalid("_hoodie_record_key is not a string column"))?;
        for row in 0..batch.num_rows() {
            let value = secondary_value(values.as_ref(), row, column)?;
            let key =
                crate::metadata::keys::secondary_index_key(value.as_deref(), Some(keys.value(row)));
            let shard = crate::metadata::keys::secondary_index_shard_key(value.as_deref());
            shard_keys.insert(key.clone(), shard);
            let entry = crate::metadata::SecondaryIndexEntry { is_deleted: false };
            records.insert(key, crate::metadata::MetadataPayload::SecondaryIndex(entry));
        }
    }
    let sizing = crate::metadata::init::Sizing::default();
    let groups = sizing.file_groups(RECORD_INDEX, records.len() as u64);
    let mut taken = mdt_instants(storage.as_ref()).await?;
    let instant = init::init_instant(&taken);
    taken.insert(instant.clone());
    let commit = init::build_partition_sharded(
        &partition,
        &records,
        groups,
        &instant,
        files::now_ms(),
        block_size,
        &|key| {
            shard_keys
                .get(key)
                .cloned()
                .unwrap_or_else(|| key.to_string())
        },
    )?;
    publish(&client, &commit).await?;
    let definition = serde_json::json!({
        "indexName": partition,
        "indexType": "secondary_index",
        "indexFunction": "identity",
        "sourceFields": [column],
        "indexOptions": {},
        "version": "V2",
    });
    let defs = write_index_definition(&client, &partition, definition).await?;
    complete_partition(storage.as_ref(), &partition, Some(&defs)).await?;
    Ok(Some(MdtInit {
        partitions: vec![BuiltPartition {
            partition,
            instant,
            file_groups: groups,
            records: records.len() as u64,
        }],
        io: client.io().since(&io),
        elapsed_ms: (files::now_ms() - started).max(0),
    }))
}
