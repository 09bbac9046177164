//! The write configs this writer honours, typed: every `hoodie.*` key it reads, with its
//! default, parsed once when a write starts (before any request). An unknown value of a known
//! key is `INVALID_ARGUMENT` naming the key and what it accepts; keys this writer does not read
//! are ignored, as Java ignores configs no component reads (so one option map can serve this
//! engine and a Spark job alike). Settings a table's writers keep outside `hoodie.properties`
//! (bucket index, small-file sizes, base-file codec and bloom filter) are read from the write's
//! options first, then from `hoodie.properties`.

use std::collections::BTreeMap;

use crate::base_file::writer::{BaseFileSpec, BloomSpec};
use crate::config::TableConfig;
use crate::error::{HudiError, Result};
use crate::metadata::config::MetadataConfig;
use crate::timeline::archive::ArchivalConfig;

use super::services::archive::ArchivalSettings;

use super::lock::{self, Concurrency};
use super::{Operation, WriteOptions};

/// One honoured key: its name, Java's default (as text) and what it does.
pub struct Setting {
    pub key: &'static str,
    pub default: &'static str,
    pub doc: &'static str,
}

pub const INDEX_TYPE: &str = "hoodie.index.type";
pub const BUCKET_ENGINE: &str = "hoodie.index.bucket.engine";
pub const BUCKET_COUNT: &str = "hoodie.bucket.index.num.buckets";
pub const BUCKET_HASH_FIELD: &str = "hoodie.bucket.index.hash.field";
pub const RECORD_INDEX_UPDATE_PARTITION: &str = "hoodie.record.index.update.partition.path";
pub const BLOOM_UPDATE_PARTITION: &str = "hoodie.bloom.index.update.partition.path";
pub const SMALL_FILE_LIMIT: &str = "hoodie.parquet.small.file.limit";
pub const MAX_FILE_SIZE: &str = "hoodie.parquet.max.file.size";
pub const RECORD_SIZE_ESTIMATE: &str = "hoodie.copyonwrite.record.size.estimate";
pub const COMPRESSION_CODEC: &str = "hoodie.parquet.compression.codec";
pub const BLOOM_TYPE: &str = "hoodie.bloom.index.filter.type";
pub const BLOOM_ENTRIES: &str = "hoodie.index.bloom.num_entries";
pub const BLOOM_FPP: &str = "hoodie.index.bloom.fpp";
pub const BLOOM_MAX_ENTRIES: &str = "hoodie.bloom.index.filter.dynamic.max.entries";
pub const MDT_MAX_DELTA_COMMITS: &str = crate::metadata::compact::MAX_DELTA_COMMITS_KEY;
pub const HFILE_BLOCK_SIZE: &str = "hoodie.hfile.block.size";
use super::services::clustering as cluster;
use super::services::compaction as compact;

/// Every key this writer reads (the lock's and the key generator's included), for docs and
/// `--help`. The lock's keys are checked by [`lock::concurrency`], in Java's order and words.
pub const SETTINGS: &[Setting] = &[
    Setting { key: lock::CONCURRENCY_MODE, default: "SINGLE_WRITER", doc: "SINGLE_WRITER or OPTIMISTIC_CONCURRENCY_CONTROL (with the storage-based lock)" },
    Setting { key: lock::LOCK_PROVIDER, default: "", doc: "must name Hudi's StorageBasedLockProvider under optimistic concurrency" },
    Setting { key: lock::VALIDITY_TIMEOUT_SECS, default: "300", doc: "how long a held lock stays valid without renewal" },
    Setting { key: lock::RENEW_INTERVAL_SECS, default: "30", doc: "how often a held lock is renewed (older name: hoodie.write.lock.storage.heartbeat.poll.secs)" },
    Setting { key: lock::WAIT_TIME_MS, default: "60000", doc: "how long acquiring the lock keeps trying" },
    Setting { key: lock::RETRY_WAIT_MS, default: "1000", doc: "wait between tries to acquire the lock" },
    Setting { key: lock::CLIENT_HEARTBEAT_INTERVAL_MS, default: "60000", doc: "how often a write touches its heartbeat file" },
    Setting { key: lock::CLIENT_HEARTBEAT_MISSES, default: "2", doc: "heartbeats missed before a pending write counts as failed" },
    Setting { key: lock::FAILED_WRITES_POLICY, default: "EAGER", doc: "EAGER rolls failed writes back before writing; LAZY (implied by multi-writer) only those whose heartbeat expired" },
    Setting { key: INDEX_TYPE, default: "", doc: "BLOOM, GLOBAL_BLOOM, SIMPLE, GLOBAL_SIMPLE, BUCKET, RECORD_INDEX, INMEMORY, HBASE, FLINK_STATE: GLOBAL_* and RECORD_INDEX make keys unique across partitions, BUCKET writes a bucket-index table; unset, the record index decides when the table has one" },
    Setting { key: BUCKET_ENGINE, default: "SIMPLE", doc: "bucket index engine: SIMPLE (CONSISTENT_HASHING is refused)" },
    Setting { key: BUCKET_COUNT, default: "", doc: "buckets per partition of a bucket-index table" },
    Setting { key: BUCKET_HASH_FIELD, default: "the record key fields", doc: "record key fields the bucket hash reads" },
    Setting { key: RECORD_INDEX_UPDATE_PARTITION, default: "false", doc: "an update whose partition changed moves the key (delete + insert) instead of updating it in place" },
    Setting { key: BLOOM_UPDATE_PARTITION, default: "false", doc: "the same, under the name the bloom and simple indexes use" },
    Setting { key: SMALL_FILE_LIMIT, default: "104857600", doc: "Copy-On-Write base files below this size take new keys (0 turns it off)" },
    Setting { key: MAX_FILE_SIZE, default: "125829120", doc: "how far a small base file is filled" },
    Setting { key: RECORD_SIZE_ESTIMATE, default: "1024", doc: "bytes per record when no earlier commit tells" },
    Setting { key: COMPRESSION_CODEC, default: "gzip", doc: "base-file codec: gzip, snappy, zstd, uncompressed" },
    Setting { key: BLOOM_TYPE, default: "DYNAMIC_V0", doc: "base-file bloom filter: SIMPLE or DYNAMIC_V0" },
    Setting { key: BLOOM_ENTRIES, default: "60000", doc: "bloom filter entries" },
    Setting { key: BLOOM_FPP, default: "0.000000001", doc: "bloom filter false-positive rate" },
    Setting { key: BLOOM_MAX_ENTRIES, default: "100000", doc: "largest dynamic bloom filter" },
    Setting { key: MDT_MAX_DELTA_COMMITS, default: "10", doc: "metadata-table delta commits before it is compacted" },
    Setting { key: HFILE_BLOCK_SIZE, default: "1048576", doc: "data block size of the metadata table's HFiles (4096 to 67108864)" },
    Setting { key: compact::INLINE, default: "true", doc: "Merge-On-Read: after each commit, finish pending compactions and compact when the trigger says (Spark's datasource default for batch writes; false leaves compaction to another job)" },
    Setting { key: compact::ASYNC, default: "", doc: "given (either value) without hoodie.compact.inline, compaction is left to another job, as Spark's datasource writer leaves it" },
    Setting { key: compact::SCHEDULE_INLINE, default: "false", doc: "after each commit, write a compaction plan when due without executing it (for a later run, or Spark's, to execute)" },
    Setting { key: compact::MAX_DELTA_COMMITS, default: "5", doc: "delta commits since the last compaction that trigger one" },
    Setting { key: compact::MAX_DELTA_SECONDS, default: "3600", doc: "seconds since the last compaction that trigger one (TIME_ELAPSED and the NUM_*_TIME strategies)" },
    Setting { key: compact::TRIGGER_STRATEGY, default: "NUM_COMMITS", doc: "NUM_COMMITS, NUM_COMMITS_AFTER_LAST_REQUEST, TIME_ELAPSED, NUM_OR_TIME, NUM_AND_TIME" },
    Setting { key: compact::STRATEGY, default: "LogFileSizeBasedCompactionStrategy", doc: "LogFileSizeBasedCompactionStrategy (largest logs first, bounded by the target IO) or UnBoundedCompactionStrategy (every slice with logs)" },
    Setting { key: compact::TARGET_IO, default: "512000", doc: "MiB a plan reads and writes at most (the operation that reaches it included)" },
    Setting { key: super::limits::MAX_ROW_BYTES, default: "2097152", doc: "longest input row (a JSON or CSV line, or a row's values); longer rows are INVALID_INPUT naming the row" },
    Setting { key: super::limits::MAX_INPUT_BYTES, default: "16777216 in wasm, 4294967296 natively", doc: "largest input one write takes (as handed over, before decoding)" },
    Setting { key: super::limits::MAX_OBJECTS_BYTES, default: "6291456", doc: "JS package: largest input given as plain objects, as the Arrow they convert to (the conversion holds about 6 times that in JS); larger ones are INVALID_INPUT before the engine sees them" },
    Setting { key: compact::LOG_SIZE_THRESHOLD, default: "0", doc: "slices with fewer log bytes are not compacted" },
    Setting { key: cluster::INLINE, default: "false", doc: "after each commit, finish pending clusterings and cluster when hoodie.clustering.inline.max.commits commits completed since the last one" },
    Setting { key: cluster::SCHEDULE_INLINE, default: "false", doc: "after each commit, write a clustering plan when due without executing it (for a later run, or Spark's, to execute)" },
    Setting { key: cluster::ASYNC, default: "false", doc: "as hoodie.clustering.schedule.inline here: plans are written for another job to execute" },
    Setting { key: cluster::INLINE_MAX_COMMITS, default: "4", doc: "commits since the last clustering that trigger an inline one" },
    Setting { key: cluster::ASYNC_MAX_COMMITS, default: "4", doc: "commits since the last clustering that trigger a scheduled-only one" },
    Setting { key: cluster::SMALL_FILE_LIMIT, default: "314572800", doc: "file slices whose base file is smaller are clustered" },
    Setting { key: cluster::TARGET_FILE_MAX_BYTES, default: "1073741824", doc: "a group is written as ceil(its bytes / this) new file groups" },
    Setting { key: cluster::MAX_BYTES_PER_GROUP, default: "2147483648", doc: "bytes of the slices one clustering group rewrites at most" },
    Setting { key: cluster::MAX_NUM_GROUPS, default: "30", doc: "clustering groups one plan holds at most" },
    Setting { key: cluster::SORT_COLUMNS, default: "", doc: "comma-separated columns the clustered rows are sorted by" },
    Setting { key: cluster::SINGLE_GROUP, default: "true", doc: "a partition's single small file slice is clustered alone" },
    Setting { key: cluster::PRESERVE_METADATA, default: "true", doc: "clustered records keep their _hoodie_commit_time and _hoodie_commit_seqno" },
];

/// Hudi's index types (Java's `HoodieIndex.IndexType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexType {
    Bloom,
    GlobalBloom,
    Simple,
    GlobalSimple,
    Bucket,
    RecordIndex,
    InMemory,
    HBase,
    FlinkState,
}

const INDEX_TYPES: &[(&str, IndexType)] = &[
    ("BLOOM", IndexType::Bloom),
    ("GLOBAL_BLOOM", IndexType::GlobalBloom),
    ("SIMPLE", IndexType::Simple),
    ("GLOBAL_SIMPLE", IndexType::GlobalSimple),
    ("BUCKET", IndexType::Bucket),
    ("RECORD_INDEX", IndexType::RecordIndex),
    ("INMEMORY", IndexType::InMemory),
    ("HBASE", IndexType::HBase),
    ("FLINK_STATE", IndexType::FlinkState),
];

impl IndexType {
    /// Whether keys are unique across partitions under this index.
    pub fn is_global(self) -> bool {
        matches!(
            self,
            IndexType::GlobalBloom | IndexType::GlobalSimple | IndexType::RecordIndex
        )
    }
}

/// The bucket index settings as given (checked against the table's file groups by
/// [`super::bucket::layout`], which knows them).
#[derive(Debug, Clone, Default)]
pub struct BucketSettings {
    /// `CONSISTENT_HASHING` (refused where the table is bucketed); `SIMPLE` otherwise.
    pub consistent_hashing: bool,
    pub count: Option<u32>,
    pub hash_fields: Option<Vec<String>>,
}

/// One write's settings, parsed once.
#[derive(Debug, Clone)]
pub struct WriteConfig {
    pub operation: Operation,
    pub commit_retries: u32,
    pub add_columns: bool,
    pub defer_services: bool,
    pub concurrency: Concurrency,
    /// LAZY failed-writes policy (explicit, or implied by a multi-writer mode).
    pub lazy_rollback: bool,
    pub index_type: Option<IndexType>,
    pub bucket: BucketSettings,
    pub update_partition_path: bool,
    pub small_file_limit: u64,
    pub max_file_size: u64,
    pub record_size_estimate: u64,
    pub base_file: BaseFileSpec,
    pub mdt_max_delta_commits: usize,
    pub hfile_block_size: usize,
    /// The metadata table asked for (built where missing only when the options ask).
    pub metadata: MetadataConfig,
    pub archival: ArchivalSettings,
    /// Merge-On-Read compaction after the commit, or on request.
    pub compaction: compact::CompactionConfig,
    /// Cleaning after the commit (`hoodie.clean.*`).
    pub clean: crate::clean::CleanConfig,
    /// Clustering after the commit, or on request (`hoodie.clustering.*`).
    pub clustering: cluster::ClusteringConfig,
    /// Bounds on the input (row and input sizes).
    pub input: super::limits::InputLimits,
}

impl WriteConfig {
    /// Parses `options` for a write into `table`; refuses unknown values of known keys.
    pub fn new(options: &WriteOptions, table: &TableConfig) -> Result<WriteConfig> {
        let given = &options.options;
        let values = Values { given, table };
        let concurrency = lock::concurrency(given)?;
        let lazy_rollback = lazy_rollback(given, &concurrency)?;
        let index_type = match values.kept(INDEX_TYPE) {
            None => None,
            Some(v) => Some(
                INDEX_TYPES
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(v))
                    .map(|(_, t)| *t)
                    .ok_or_else(|| {
                        let names: Vec<&str> = INDEX_TYPES.iter().map(|(n, _)| *n).collect();
                        one_of(INDEX_TYPE, v, &names.join(", "))
                    })?,
            ),
        };
        let bucket = bucket_settings(&values)?;
        let update_partition_path = match flag(&values, RECORD_INDEX_UPDATE_PARTITION)? {
            Some(b) => b,
            None => flag(&values, BLOOM_UPDATE_PARTITION)?.unwrap_or(false),
        };
        let bytes = |k: &str, default: u64| -> Result<u64> {
            values.kept(k).map_or(Ok(default), |v| {
                v.parse::<u64>()
                    .map_err(|_| invalid(k, v, "a number of bytes"))
            })
        };
        let whole = |k: &str, default: usize, range: std::ops::RangeInclusive<usize>| {
            values.own(k).map_or(Ok(default), |v| {
                v.parse::<usize>()
                    .ok()
                    .filter(|n| range.contains(n))
                    .ok_or_else(|| {
                        invalid(
                            k,
                            v,
                            &format!("a whole number from {} to {}", range.start(), range.end()),
                        )
                    })
            })
        };
        let compaction = compact::CompactionConfig::parse(given)?;
        let clean = crate::clean::CleanConfig::parse(given)?;
        let mdt_max_delta_commits = whole(
            MDT_MAX_DELTA_COMMITS,
            crate::metadata::compact::DEFAULT_MAX_DELTA_COMMITS,
            1..=usize::MAX,
        )?;
        Ok(WriteConfig {
            operation: options.operation,
            commit_retries: options.commit_retries,
            add_columns: options.add_columns,
            defer_services: options.defer_services,
            concurrency,
            lazy_rollback,
            index_type,
            bucket,
            update_partition_path,
            small_file_limit: bytes(SMALL_FILE_LIMIT, 104_857_600)?,
            max_file_size: bytes(MAX_FILE_SIZE, 125_829_120)?,
            record_size_estimate: bytes(RECORD_SIZE_ESTIMATE, 1024)?.max(1),
            base_file: base_file_spec(table, &values)?,
            mdt_max_delta_commits,
            metadata: MetadataConfig::parse(given)?,
            archival: ArchivalSettings {
                config: ArchivalConfig::parse(given)?,
                compaction_delta_commits: compaction.delta_commits_trigger(),
                clean: clean.clone(),
                mdt_compaction_delta_commits: mdt_max_delta_commits,
            },
            compaction,
            clean,
            clustering: cluster::ClusteringConfig::parse(given)?,
            input: super::limits::InputLimits::of(given)?,
            hfile_block_size: whole(
                HFILE_BLOCK_SIZE,
                crate::hfile::writer::DEFAULT_BLOCK_SIZE,
                4096..=(64 << 20),
            )?,
        })
    }
}

/// A setting's value: the write's own, or (`kept`) the table's where its writers keep it.
struct Values<'a> {
    given: &'a BTreeMap<String, String>,
    table: &'a TableConfig,
}

/// Whether failed writes are left to the cleaner, rolled back once their heartbeat expired
/// (`hoodie.cleaner.policy.failed.writes=LAZY`, implied by several writers), rather than
/// by the next write (EAGER, Hudi's single-writer default).
pub fn lazy_rollback(given: &BTreeMap<String, String>, concurrency: &Concurrency) -> Result<bool> {
    let policy = crate::config::option_value(given, lock::FAILED_WRITES_POLICY);
    let lazy = match policy.map(str::to_ascii_uppercase) {
        None => false,
        Some(p) if p == "EAGER" => false,
        Some(p) if p == "LAZY" => true,
        Some(p) if p == "NEVER" => {
            return Err(HudiError::unsupported(format!(
                "{}=NEVER (this writer rolls failed writes back, EAGER or LAZY)",
                lock::FAILED_WRITES_POLICY
            )))
        }
        Some(other) => return Err(one_of(lock::FAILED_WRITES_POLICY, &other, "EAGER, LAZY")),
    };
    Ok(lazy || *concurrency != Concurrency::SingleWriter)
}

impl<'a> Values<'a> {
    fn own(&self, key: &str) -> Option<&'a str> {
        crate::config::option_value(self.given, key)
    }

    fn kept(&self, key: &str) -> Option<&'a str> {
        self.own(key).or_else(|| {
            let v = self.table.property(key)?.trim();
            (!v.is_empty()).then_some(v)
        })
    }
}

fn invalid(key: &str, value: &str, accepted: &str) -> HudiError {
    HudiError::invalid(format!("{key}={value:?}: expected {accepted}"))
}

fn one_of(key: &str, value: &str, accepted: &str) -> HudiError {
    HudiError::invalid(format!("{key}={value:?}: expected one of {accepted}"))
}

fn flag(values: &Values<'_>, key: &str) -> Result<Option<bool>> {
    crate::config::option_flag(values.given, key)
}

fn bucket_settings(values: &Values<'_>) -> Result<BucketSettings> {
    let kept = |k: &str| values.kept(k);
    let consistent_hashing = match kept(BUCKET_ENGINE).map(str::to_ascii_uppercase) {
        None => false,
        Some(e) if e == "SIMPLE" => false,
        Some(e) if e == "CONSISTENT_HASHING" => true,
        Some(other) => return Err(one_of(BUCKET_ENGINE, &other, "SIMPLE, CONSISTENT_HASHING")),
    };
    let count = kept(BUCKET_COUNT)
        .map(|v| {
            v.parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| invalid(BUCKET_COUNT, v, "a positive number"))
        })
        .transpose()?;
    let hash_fields =
        kept(BUCKET_HASH_FIELD).map(|f| f.split(',').map(|s| s.trim().to_string()).collect());
    Ok(BucketSettings {
        consistent_hashing,
        count,
        hash_fields,
    })
}

/// Base files as the table and write configs ask: codec and bloom filter settings by their
/// Java names, Java's defaults otherwise.
fn base_file_spec(table: &TableConfig, values: &Values<'_>) -> Result<BaseFileSpec> {
    let kept = |k: &str| values.kept(k);
    let number = |k: &str| -> Result<Option<f64>> {
        kept(k)
            .map(|v| v.parse::<f64>().map_err(|_| invalid(k, v, "a number")))
            .transpose()
    };
    let mut spec = BaseFileSpec::new(String::new());
    if let Some(codec) = kept(COMPRESSION_CODEC) {
        crate::base_file::writer::compression(codec)
            .map_err(|_| one_of(COMPRESSION_CODEC, codec, "gzip, snappy, zstd, uncompressed"))?;
        spec.compression = codec.to_string();
    }
    let mut bloom = BloomSpec::default();
    if let Some(kind) = kept(BLOOM_TYPE) {
        bloom.kind = crate::index::BloomType::from_code(kind)
            .ok_or_else(|| one_of(BLOOM_TYPE, kind, "SIMPLE, DYNAMIC_V0"))?;
    }
    if let Some(n) = number(BLOOM_ENTRIES)? {
        bloom.num_entries = n as usize;
    }
    if let Some(p) = number(BLOOM_FPP)? {
        bloom.fpp = p;
    }
    if let Some(n) = number(BLOOM_MAX_ENTRIES)? {
        bloom.max_entries = n as usize;
    }
    // Java fills the bloom filter and key range from the meta key column, so a table without
    // meta fields has neither.
    spec.bloom = table.populate_meta_fields.then_some(bloom);
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TableConfig {
        crate::config::TableConfig::parse(
            "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n",
            ".hoodie/hoodie.properties",
        )
        .unwrap()
    }

    fn options(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn parse(pairs: &[(&str, &str)]) -> Result<WriteConfig> {
        let mut o = WriteOptions::new(Operation::Upsert);
        o.options = options(pairs);
        WriteConfig::new(&o, &table())
    }

    #[test]
    fn defaults_are_javas() {
        let c = parse(&[]).unwrap();
        assert_eq!(c.concurrency, Concurrency::SingleWriter);
        assert!(!c.lazy_rollback);
        assert_eq!(c.index_type, None);
        assert_eq!(
            (c.small_file_limit, c.max_file_size),
            (104_857_600, 125_829_120)
        );
        assert_eq!(c.base_file.compression, "gzip");
        assert_eq!(c.mdt_max_delta_commits, 10);
    }

    #[test]
    fn unknown_values_of_known_keys_name_the_key_and_the_choices() {
        for (key, value, choice) in [
            (INDEX_TYPE, "NOPE", "RECORD_INDEX"),
            (lock::FAILED_WRITES_POLICY, "SOMETIMES", "LAZY"),
            (BLOOM_UPDATE_PARTITION, "yes", "true, false"),
            (COMPRESSION_CODEC, "lzma", "snappy"),
            (BLOOM_TYPE, "x", "DYNAMIC_V0"),
            (BUCKET_COUNT, "0", "positive"),
            (SMALL_FILE_LIMIT, "big", "bytes"),
            (HFILE_BLOCK_SIZE, "12", "4096"),
            (BUCKET_ENGINE, "ROUND_ROBIN", "CONSISTENT_HASHING"),
        ] {
            let e = parse(&[(key, value)]).unwrap_err();
            assert_eq!(e.code(), "INVALID_ARGUMENT", "{key}");
            let text = e.to_string();
            assert!(text.contains(key) && text.contains(choice), "{text}");
        }
    }

    #[test]
    fn lazy_rollback_is_asked_for_or_implied_by_several_writers() {
        let lazy = |pairs: &[(&str, &str)]| parse(pairs).unwrap().lazy_rollback;
        assert!(!lazy(&[(lock::FAILED_WRITES_POLICY, "EAGER")]));
        assert!(lazy(&[(lock::FAILED_WRITES_POLICY, "lazy")]));
        assert!(!lazy(&[(lock::CONCURRENCY_MODE, "single_writer")]));
        assert!(lazy(&[
            (lock::CONCURRENCY_MODE, "OPTIMISTIC_CONCURRENCY_CONTROL"),
            (lock::LOCK_PROVIDER, lock::STORAGE_LOCK_PROVIDER),
        ]));
    }

    #[test]
    fn the_docs_list_every_setting() {
        let docs = include_str!("../../docs/writing.md");
        let metadata = crate::metadata::config::SETTINGS.iter().map(|(k, _, _)| *k);
        let archival = crate::timeline::archive::SETTINGS
            .iter()
            .map(|(k, _, _)| *k);
        let clean = crate::clean::SETTINGS.iter().map(|(k, _, _)| *k);
        for key in SETTINGS
            .iter()
            .map(|s| s.key)
            .chain(metadata)
            .chain(archival)
            .chain(clean)
        {
            assert!(
                docs.contains(&format!("| `{key}` |")),
                "docs/writing.md lacks {key}"
            );
        }
    }

    #[test]
    fn typed_values() {
        let c = parse(&[
            (INDEX_TYPE, "global_simple"),
            (lock::FAILED_WRITES_POLICY, "lazy"),
            (RECORD_INDEX_UPDATE_PARTITION, "TRUE"),
            (BUCKET_COUNT, "4"),
            (BUCKET_HASH_FIELD, "a, b"),
            ("hoodie.not.read.here", "anything"),
        ])
        .unwrap();
        assert_eq!(c.index_type, Some(IndexType::GlobalSimple));
        assert!(c.index_type.unwrap().is_global() && c.lazy_rollback && c.update_partition_path);
        assert_eq!(c.bucket.count, Some(4));
        assert_eq!(c.bucket.hash_fields, Some(vec!["a".into(), "b".into()]));
    }
}
