//! The command line's arguments (clap) and their conversion to the core's options.

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::api::RemoteOptions;
use crate::error::{HudiError, Result};
use crate::expr::parse_filter;
use crate::read::{QueryType, ReadOptions};

#[derive(Parser)]
#[command(
    name = "hudi-edge",
    version,
    about = "Read Apache Hudi tables: timeline, plans, rows"
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
    /// Add this many milliseconds to every storage request (to see what request counts
    /// cost against a remote object store).
    #[arg(long, global = true, value_name = "MS")]
    pub(super) latency_ms: Option<u64>,
    #[command(flatten)]
    pub(super) remote: RemoteArgs,
}

/// How to reach remote tables (`http(s)://...`, `s3://bucket/prefix`). S3 credentials come
/// from the usual AWS variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_ENDPOINT_URL`).
#[derive(Args, Clone, Debug, Default)]
pub struct RemoteArgs {
    /// S3 endpoint (MinIO, R2, a local S3 server ...).
    #[arg(long, global = true, value_name = "URL")]
    pub endpoint: Option<String>,
    #[arg(long, global = true)]
    pub region: Option<String>,
    /// Unsigned S3 requests (public buckets).
    #[arg(long, global = true)]
    pub anonymous: bool,
    /// S3 addressing: `endpoint/bucket/key` instead of `bucket.endpoint/key`.
    #[arg(long, global = true)]
    pub path_style: bool,
    /// How to list an http(s) table: auto (manifest, else JSON autoindex), s3, autoindex, manifest.
    #[arg(long, global = true, default_value = "auto")]
    pub listing: String,
    /// Extra HTTP header `Name: value` for http(s) tables (repeatable).
    #[arg(long = "header", global = true, value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Retries of a failed request (429, 5xx, network errors), with exponential backoff.
    #[arg(long, global = true, default_value_t = crate::storage::http::DEFAULT_RETRIES)]
    pub retries: u32,
    /// Requests in flight at once.
    #[arg(long, global = true, default_value_t = crate::storage::http::DEFAULT_CONCURRENCY)]
    pub concurrency: usize,
}

#[derive(Subcommand)]
pub(super) enum Command {
    /// Instants with requested time, completion time, action and state.
    Timeline {
        table: String,
        #[arg(long)]
        json: bool,
        /// Also load instants from the v6 archive / v8+ LSM history.
        #[arg(long)]
        archived: bool,
    },
    /// Rows of a query.
    Read {
        table: String,
        #[command(flatten)]
        query: QueryArgs,
        #[arg(long, value_enum, default_value_t = Format::Jsonl)]
        format: Format,
        /// Print what the read cost (plan + data I/O) as JSON on stderr.
        #[arg(long)]
        stats: bool,
    },
    /// Rows of SQL over Hudi tables (DataFusion; the engine plans and reads each scan).
    /// Tables: `--table NAME=LOCATION`, `hudi."LOCATION"` in the query, or
    /// `CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '…' [OPTIONS ('as_of' '…')]` before it.
    #[cfg(feature = "datafusion")]
    Sql {
        /// Statements separated by `;`; the rows of the last one are printed.
        sql: String,
        /// `NAME=LOCATION`: the table at LOCATION as NAME (repeatable).
        #[arg(long = "table", value_name = "NAME=LOCATION")]
        tables: Vec<String>,
        /// How `--table` and `hudi."…"` tables are read.
        #[command(flatten)]
        kind: QueryTypeArgs,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Print DataFusion's physical plan (pushed filters, slices selected) instead of rows.
        #[arg(long)]
        explain: bool,
        /// Print what each table's scans selected and cost as JSON on stderr.
        #[arg(long)]
        stats: bool,
        /// Run the query on the Ballista cluster whose scheduler is at this address
        /// (`hudi-edge ballista scheduler`): it plans the scans, its executors read them.
        #[cfg(feature = "ballista")]
        #[arg(long, value_name = "df://HOST:PORT")]
        cluster: Option<String>,
    },
    /// SQL across processes (Ballista): a scheduler, or an executor serving one. Both open
    /// tables as every command does (the remote options apply).
    #[cfg(feature = "ballista")]
    Ballista {
        #[command(subcommand)]
        role: BallistaRole,
    },
    /// Which file slices a query would read, and why.
    Plan {
        table: String,
        #[command(flatten)]
        query: QueryArgs,
        #[arg(long)]
        json: bool,
    },
    /// Table properties and layout.
    Info {
        table: String,
        #[arg(long)]
        json: bool,
    },
    /// Partitions, file groups and slices.
    FileGroups {
        table: String,
        #[arg(long)]
        as_of: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Metadata of one instant.
    Commit { table: String, instant: String },
    /// Commit rows as one upsert, insert or delete (table versions 8 and 9).
    Write {
        table: String,
        #[arg(long, default_value = "upsert")]
        operation: String,
        /// Rows to write (`-` = stdin).
        #[arg(long, value_name = "FILE")]
        input: String,
        /// jsonl, csv, parquet or arrow; by default from the file's extension (jsonl otherwise).
        #[arg(long)]
        input_format: Option<String>,
        /// A Hudi write config `KEY=VALUE` (repeatable), e.g. `hoodie.index.type=GLOBAL_SIMPLE`.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Multi-writer (`hoodie.write.concurrency.mode=optimistic_concurrency_control`):
        /// how many times a commit that lost a conflict is tried again on the new snapshot.
        #[arg(long, default_value_t = 0)]
        commit_retries: u32,
        /// Add the input's columns the table lacks to its schema (nullable, after the
        /// others) instead of refusing them; their types come from a Parquet or Arrow input.
        #[arg(long)]
        add_columns: bool,
        /// Print what was committed as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Create an empty table (table version 9; `hoodie.properties`, written if absent) with a
    /// metadata table as Spark 1.1 builds one: `files`, `column_stats`, and `partition_stats`
    /// when partitioned; `hoodie.metadata.*` options choose others (or none).
    Create {
        table: String,
        /// The columns as Spark SQL: `id BIGINT NOT NULL, region STRING, amount DECIMAL(12,2)`.
        #[arg(
            long,
            required_unless_present = "schema_from",
            conflicts_with = "schema_from"
        )]
        columns: Option<String>,
        /// Take the columns from a Parquet or Arrow IPC file's schema.
        #[arg(long, value_name = "FILE")]
        schema_from: Option<String>,
        /// COPY_ON_WRITE (cow) or MERGE_ON_READ (mor).
        #[arg(long = "type", default_value = "COPY_ON_WRITE")]
        table_type: String,
        /// `hoodie.table.name`; by default the location's last path segment.
        #[arg(long)]
        name: Option<String>,
        #[arg(long, value_delimiter = ',', required = true)]
        record_key: Vec<String>,
        #[arg(long, value_delimiter = ',')]
        partition_by: Vec<String>,
        /// Ordering (precombine) fields: the larger value wins a merge (event-time ordering).
        #[arg(long, value_delimiter = ',')]
        ordering: Vec<String>,
        /// A table config `KEY=VALUE` (repeatable), e.g. `hoodie.datasource.write.hive_style_partitioning=true`.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
    },
    /// Build the metadata-table partitions the table lacks (Spark's defaults, or those named),
    /// from a listing, the latest slices' files and their keys, as Java's metadata writer
    /// initialises them.
    Index {
        table: String,
        /// files, column_stats (with partition_stats when partitioned), record_index.
        #[arg(long, value_delimiter = ',')]
        partitions: Vec<String>,
        /// Build a secondary index on this column (as Spark's `CREATE INDEX`; needs the
        /// record index), after the partitions asked for.
        #[arg(long, value_name = "COLUMN")]
        secondary: Option<String>,
        /// The secondary index's name (its partition is `secondary_index_<NAME>`); default
        /// `<COLUMN>_idx`.
        #[arg(long, value_name = "NAME", requires = "secondary")]
        index_name: Option<String>,
        /// `hoodie.metadata.*` settings and lock configs `KEY=VALUE` (repeatable).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Print what was built as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Move old instants of the timeline (and the metadata table's) to the LSM history, as
    /// Java's archiver does after each commit: `hoodie.keep.min.commits` /
    /// `hoodie.keep.max.commits`, never past what the cleaner, a pending instant, compaction
    /// or the metadata table still needs.
    Archive {
        table: String,
        /// Hudi write configs `KEY=VALUE` (repeatable): archival, cleaner and lock settings.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Print what was archived as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Cluster the table: execute pending clustering plans, then schedule one over the small
    /// file slices (`hoodie.clustering.plan.strategy.*`) and execute it
    Cluster {
        table: String,
        /// Write the plan (`<t>.clustering.requested`) and leave it for a later run.
        #[arg(long, conflicts_with = "instant")]
        schedule_only: bool,
        /// Execute this pending clustering only.
        #[arg(long, value_name = "T")]
        instant: Option<String>,
        /// Write configs `KEY=VALUE` (repeatable): `hoodie.clustering.*`, the lock's.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Print what was done as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Compact a Merge-On-Read table: execute pending compaction plans, then schedule one
    /// over every file slice with log files and execute it.
    Compact {
        table: String,
        /// Write the plan (`<t>.compaction.requested`) and leave it for a later run.
        #[arg(long, conflicts_with = "instant")]
        schedule_only: bool,
        /// Execute this pending compaction only.
        #[arg(long, value_name = "T")]
        instant: Option<String>,
        /// Write configs `KEY=VALUE` (repeatable): `hoodie.compaction.*`, the lock's.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Print what was done as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Clean the table as Apache Hudi 1.1 does: finish a pending clean, or plan one when due
    /// (`hoodie.clean.policy`, `hoodie.clean.commits.retained`, …) and delete the old file
    /// slices it names; then the metadata table's own clean when due.
    Clean {
        table: String,
        /// `hoodie.clean.*` settings and lock configs `KEY=VALUE` (repeatable).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Print what was cleaned as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Take the table's storage-based lock (`.hoodie/.locks/table_lock.json`, Hudi's
    /// RFC-91 lock) and release it, reporting the requests and time of each step; with
    /// `--hold-ms` it is held (and renewed) that long in between.
    Lock {
        table: String,
        /// Hudi lock configs `KEY=VALUE` (validity, renew interval, wait times).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        #[arg(long, default_value_t = 0)]
        hold_ms: u64,
    },
    /// The table's health from its timeline, listings and instant files (no data read):
    /// small files, log backlog, pending and failed writes, cleaning and archival lag, the
    /// storage lock, the metadata table, write activity, and findings naming their fix.
    Health {
        table: String,
        /// Write configs `KEY=VALUE` (repeatable) the table's writers use: the thresholds
        /// and services the report judges by (Java's defaults otherwise).
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        /// Run the table service that fixes each finding that names one, then report again.
        #[arg(long)]
        fix: bool,
        #[arg(long)]
        json: bool,
        /// Print what the report cost as JSON on stderr: `health_io` (the report), `total_io`
        /// (everything since the open, fixes included).
        #[arg(long)]
        stats: bool,
    },
    /// Every Hudi table under a folder or prefix (`s3://bucket/prefix`, a local folder),
    /// with its findings; nothing inside a table is searched.
    Tables {
        location: String,
        /// Folders below the location searched at most.
        #[arg(long, default_value_t = crate::health::discover::DiscoverOptions::default().max_depth)]
        max_depth: usize,
        /// Folder listings at most.
        #[arg(long, default_value_t = crate::health::discover::DiscoverOptions::default().max_listings)]
        max_listings: usize,
        /// Objects and folders seen at most.
        #[arg(long, default_value_t = crate::health::discover::DiscoverOptions::default().max_objects)]
        max_objects: usize,
        /// Only find the tables: no health report of each.
        #[arg(long)]
        no_health: bool,
        /// Write configs `KEY=VALUE` (repeatable) the health reports judge by.
        #[arg(long = "option", value_name = "KEY=VALUE")]
        options: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Write `.hoodie/hudi-edge-manifest.json`: every file of the table with its size, so
    /// hosts without a list API (static sites, CDNs, nginx) can serve it. Rewrite it after
    /// each commit.
    Manifest {
        table: String,
        /// Write here instead of into the table (`-` = stdout).
        #[arg(long, value_name = "FILE")]
        output: Option<String>,
    },
}

/// Which rows of the table a query sees: its type and times.
#[derive(Args, Clone)]
pub(super) struct QueryTypeArgs {
    /// snapshot, read_optimized, incremental, or cdc (the change feed; not in `sql`).
    #[arg(long, default_value = "snapshot")]
    query: String,
    /// Time travel: the table as of this instant.
    #[arg(long)]
    as_of: Option<String>,
    /// Incremental and cdc: commits after this instant.
    #[arg(long)]
    start: Option<String>,
    /// Incremental and cdc: commits up to this instant.
    #[arg(long)]
    end: Option<String>,
}

impl QueryTypeArgs {
    /// `--query cdc`: the change feed, not a read of records.
    pub(super) fn change_feed(&self) -> Option<(Option<&str>, Option<&str>)> {
        self.query
            .eq_ignore_ascii_case("cdc")
            .then_some((self.start.as_deref(), self.end.as_deref()))
    }

    /// The options of `sql`, which refuses the change feed.
    #[cfg(feature = "datafusion")]
    pub(super) fn sql_options(&self) -> Result<ReadOptions> {
        crate::sql::query_type(&self.query)?;
        self.options()
    }

    pub(super) fn options(&self) -> Result<ReadOptions> {
        Ok(ReadOptions {
            query: QueryType::parse(&self.query)?,
            as_of: self.as_of.clone(),
            start: self.start.clone(),
            end: self.end.clone(),
            ..ReadOptions::default()
        })
    }
}

#[derive(Args, Clone)]
pub(super) struct QueryArgs {
    #[command(flatten)]
    kind: QueryTypeArgs,
    /// Comma-separated column names.
    #[arg(long)]
    columns: Option<String>,
    /// `col op value`; repeat to AND several.
    #[arg(long = "filter")]
    filters: Vec<String>,
    #[arg(long)]
    limit: Option<usize>,
    /// Turn off metadata-table data skipping (column stats, partition stats, record index).
    #[arg(long)]
    no_data_skipping: bool,
    /// Plan by listing storage even when the metadata table could plan.
    #[arg(long)]
    no_metadata_table: bool,
    /// File slices beyond the first 8 start early while the sizes of those being read stay
    /// within this many bytes (0: never).
    #[arg(long, default_value_t = ReadOptions::default().read_ahead_bytes)]
    read_ahead_bytes: u64,
}

#[cfg(feature = "ballista")]
#[derive(Subcommand)]
pub(super) enum BallistaRole {
    /// Plans queries sent with `sql --cluster` (each Hudi scan with this engine's planner)
    /// and hands their tasks to executors.
    Scheduler {
        #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:50050")]
        bind: std::net::SocketAddr,
    },
    /// Runs the tasks a scheduler hands it: Hudi scans read the slices the scheduler planned.
    Executor {
        /// The scheduler's `HOST:PORT`.
        #[arg(long, default_value = "127.0.0.1:50050")]
        scheduler: String,
        /// Where results and shuffles are fetched (Arrow Flight).
        #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:50051")]
        bind: std::net::SocketAddr,
        /// Where the scheduler pushes tasks (gRPC).
        #[arg(long, default_value_t = 50052)]
        grpc_port: u16,
        /// Tasks run at once (default: the machine's cores).
        #[arg(long)]
        slots: Option<usize>,
        /// Shuffle files (default: a new folder under the system's temporary folder).
        #[arg(long)]
        work_dir: Option<String>,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
    Jsonl,
    Csv,
    Arrow,
    /// A text table with a header.
    Table,
    /// JSON lines in the fixtures' expected-output encoding (tests).
    #[value(hide = true)]
    OracleJsonl,
}

impl QueryArgs {
    pub(super) fn change_feed(&self) -> Option<(Option<&str>, Option<&str>)> {
        self.kind.change_feed()
    }

    pub(super) fn options(&self) -> Result<ReadOptions> {
        Ok(ReadOptions {
            columns: self.columns.as_ref().map(|c| {
                c.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            }),
            filters: self
                .filters
                .iter()
                .map(|f| parse_filter(f))
                .collect::<Result<_>>()?,
            limit: self.limit,
            data_skipping: !self.no_data_skipping,
            use_metadata_table: !self.no_metadata_table,
            read_ahead_bytes: self.read_ahead_bytes,
            // Slices decode on the runtime's worker threads: every core, not one.
            spawner: tokio::runtime::Handle::try_current().ok().map(|runtime| {
                crate::read::Spawner::new(move |task| {
                    runtime.spawn(task);
                })
            }),
            ..self.kind.options()?
        })
    }
}

impl RemoteArgs {
    /// The flags, with S3 credentials from the usual AWS variables.
    pub(super) fn options(&self) -> Result<RemoteOptions> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let headers = self
            .headers
            .iter()
            .map(|h| {
                h.split_once(':')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .ok_or_else(|| {
                        HudiError::invalid(format!("--header {h:?} is not `Name: value`"))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(RemoteOptions {
            headers: Some(headers),
            s3: Some(crate::storage::s3::S3Options {
                region: self
                    .region
                    .clone()
                    .or_else(|| env("AWS_REGION"))
                    .or_else(|| env("AWS_DEFAULT_REGION")),
                endpoint: self
                    .endpoint
                    .clone()
                    .or_else(|| env("AWS_ENDPOINT_URL_S3"))
                    .or_else(|| env("AWS_ENDPOINT_URL")),
                access_key_id: env("AWS_ACCESS_KEY_ID"),
                secret_access_key: env("AWS_SECRET_ACCESS_KEY"),
                session_token: env("AWS_SESSION_TOKEN"),
                force_path_style: self.path_style.then_some(true),
                anonymous: self.anonymous,
            }),
            listing: Some(self.listing.clone()),
            concurrency: Some(self.concurrency),
            retries: Some(self.retries),
        })
    }
}

/// `--option KEY=VALUE` flags as a map.
pub(super) fn option_map(
    options: Vec<String>,
) -> Result<std::collections::BTreeMap<String, String>> {
    options
        .iter()
        .map(|kv| {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| HudiError::invalid(format!("--option {kv:?} is not KEY=VALUE")))?;
            Ok((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}
