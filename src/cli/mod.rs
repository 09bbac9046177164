//! The native command line: `hudi-edge timeline | read | plan | info | file-groups | commit`.
//! Thin: it parses arguments, opens a table through a storage chosen by URL, and prints.

use std::io::Write;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::api::input::{decode_rows, InputFormat};
use crate::api::output;
use crate::api::wire;
use crate::api::{storage_for, Host, RemoteOptions};
use crate::error::{HudiError, Result};
use crate::expr::parse_filter;
use crate::read::{QueryType, ReadOptions};
use crate::storage::Storage;
use crate::table::Table;

#[derive(Parser)]
#[command(
    name = "hudi-edge",
    version,
    about = "Read Apache Hudi tables: timeline, plans, rows"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Add this many milliseconds to every storage request (to see what request counts
    /// cost against a remote object store).
    #[arg(long, global = true, value_name = "MS")]
    latency_ms: Option<u64>,
    #[command(flatten)]
    remote: RemoteArgs,
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
enum Command {
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
    /// Create an empty table (table version 9; `hoodie.properties`, written if absent). It has
    /// no metadata table until a writer that enables one (Spark by default) builds it.
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

#[derive(Args, Clone)]
struct QueryArgs {
    #[arg(long, default_value = "snapshot")]
    query: String,
    #[arg(long)]
    as_of: Option<String>,
    #[arg(long)]
    start: Option<String>,
    #[arg(long)]
    end: Option<String>,
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

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Jsonl,
    Csv,
    Arrow,
    /// JSON lines in the fixtures' expected-output encoding (tests).
    #[value(hide = true)]
    OracleJsonl,
}

impl QueryArgs {
    fn options(&self) -> Result<ReadOptions> {
        Ok(ReadOptions {
            query: QueryType::parse(&self.query)?,
            as_of: self.as_of.clone(),
            start: self.start.clone(),
            end: self.end.clone(),
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
            ..ReadOptions::default()
        })
    }
}

impl RemoteArgs {
    /// The flags, with S3 credentials from the usual AWS variables.
    fn options(&self) -> Result<RemoteOptions> {
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

pub fn main() -> i32 {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return 1;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error[{}]: {e}", e.code());
            if e.code() == "INVALID_ARGUMENT" {
                2
            } else {
                1
            }
        }
    }
}

/// Standard output without its line buffering (a duplicate of the descriptor).
#[cfg(unix)]
fn raw_stdout() -> Result<Box<dyn Write>> {
    use std::os::fd::AsFd;
    let fd = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| HudiError::io("<stdout>", e))?;
    Ok(Box::new(std::fs::File::from(fd)))
}

#[cfg(not(unix))]
fn raw_stdout() -> Result<Box<dyn Write>> {
    Ok(Box::new(std::io::stdout()))
}

fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| HudiError::io("<stdout>", e))?;
    writeln!(out).map_err(|e| HudiError::io("<stdout>", e))
}

/// `--option KEY=VALUE` flags as a map.
fn option_map(options: Vec<String>) -> Result<std::collections::BTreeMap<String, String>> {
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

async fn run(cli: Cli) -> Result<()> {
    let latency = cli.latency_ms.map(std::time::Duration::from_millis);
    let remote = cli.remote.options()?;
    let storage_at = |location: &str| storage_for(location, &remote, Host::default());
    let storage_of = |location: &str| {
        storage_at(location).map(|s| match latency {
            Some(d) => Arc::new(crate::storage::latency::Latency::new(s, d)) as Arc<dyn Storage>,
            None => s,
        })
    };
    let open = |location: &str| {
        let storage = storage_of(location);
        async move { Table::open(storage?).await }
    };
    // A query planned from the metadata table has it fetched beside the open.
    let open_to_query = |location: &str, options: &ReadOptions| {
        let (storage, prefetch) = (storage_of(location), options.use_metadata_table);
        async move { Table::open_with(storage?, None, prefetch).await }
    };
    match cli.command {
        Command::Timeline {
            table,
            json,
            archived,
        } => {
            let t = open(&table).await?;
            let timeline = if archived {
                t.load_history().await?
            } else {
                t.timeline()
            };
            if json {
                print_json(&wire::Timeline {
                    table: t.config().name.clone(),
                    instants: timeline.instants.iter().map(wire::Instant::from).collect(),
                })
            } else {
                let mut out = std::io::stdout().lock();
                let w = |e: std::io::Error| HudiError::io("<stdout>", e);
                writeln!(
                    out,
                    "{:<17}  {:<17}  {:<13}  {:<10}  note",
                    "requested", "completed", "action", "state"
                )
                .map_err(w)?;
                for i in &timeline.instants {
                    let note = match (&i.plan_action, i.archived) {
                        (Some(p), _) => format!("requested as {p}"),
                        (None, true) => "archived".to_string(),
                        _ => String::new(),
                    };
                    writeln!(
                        out,
                        "{:<17}  {:<17}  {:<13}  {:<10}  {}",
                        i.requested_time,
                        i.completion_time.as_deref().unwrap_or("-"),
                        i.action,
                        i.state.as_str(),
                        note
                    )
                    .map_err(w)?;
                }
                Ok(())
            }
        }
        Command::Read {
            table,
            query,
            format,
            stats,
        } => {
            let options = query.options()?;
            let t = Arc::new(open_to_query(&table, &options).await?);
            let plan = Arc::new(t.plan(&options).await?);
            let mut scan = t.scan(plan.clone(), &options);
            let schema = scan.schema();
            let stdout_err = |e| HudiError::io("<stdout>", e);
            let mut rows = 0;
            if format == Format::Arrow {
                // Each batch is written as it arrives (decoding goes on meanwhile), straight to
                // the descriptor: stdout's line buffering would scan the binary for newlines.
                let mut out = std::io::BufWriter::with_capacity(1 << 20, raw_stdout()?);
                let mut ipc = output::ArrowIpcWriter::new(&schema, &mut out)?;
                while let Some(b) = scan.next().await {
                    let b = b?;
                    rows += b.num_rows();
                    ipc.write(&b)?;
                }
                ipc.finish()?;
                out.flush().map_err(stdout_err)?;
            } else {
                let mut batches = Vec::new();
                while let Some(b) = scan.next().await {
                    batches.push(b?);
                }
                rows = batches.iter().map(|b| b.num_rows()).sum();
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                match format {
                    Format::Jsonl => output::write_jsonl(&batches, &mut out)?,
                    Format::OracleJsonl => {
                        for b in &batches {
                            for row in output::rows_as_json_with(b, output::JsonStyle::ORACLE) {
                                serde_json::to_writer(&mut out, &row)
                                    .map_err(|e| HudiError::io("<stdout>", e))?;
                                writeln!(out).map_err(stdout_err)?;
                            }
                        }
                    }
                    Format::Csv => output::write_csv(&schema, &batches, &mut out)?,
                    Format::Arrow => unreachable!("written above"),
                }
                out.flush().map_err(stdout_err)?;
            }
            let read_io = scan.io();
            if stats {
                let report = wire::ReadStats {
                    rows,
                    stats: plan.stats.clone(),
                    plan_io: plan.io.clone(),
                    read_io: read_io.clone(),
                    total_io: t.io(),
                };
                eprintln!("{}", serde_json::to_string(&report).unwrap_or_default());
            }
            Ok(())
        }
        Command::Plan {
            table,
            query,
            json: _,
        } => {
            let options = query.options()?;
            let t = open_to_query(&table, &options).await?;
            let plan = t.plan(&options).await?;
            print_json(&wire::Plan::from(&plan))
        }
        Command::Info { table, json: _ } => {
            let t = open(&table).await?;
            print_json(t.config())
        }
        Command::FileGroups {
            table,
            as_of,
            json: _,
        } => {
            let t = open(&table).await?;
            let view = t.file_system_view(as_of.as_deref()).await?;
            print_json(&view)
        }
        Command::Commit { table, instant } => {
            let t = open(&table).await?;
            let timeline = t.load_history().await?;
            let i = timeline.get(&instant).ok_or_else(|| HudiError::NotFound {
                path: format!("instant {instant} on the timeline of {table}"),
            })?;
            let content = t.instant_content(i).await?;
            print_json(&wire::InstantContent {
                instant: i.into(),
                content,
            })
        }
        Command::Write {
            table,
            operation,
            input,
            input_format,
            options,
            commit_retries,
            add_columns,
            json,
        } => {
            let operation = crate::write::Operation::parse(&operation)?;
            let format = match input_format {
                Some(f) => InputFormat::parse(&f)?,
                None => InputFormat::of_path(&input),
            };
            if add_columns && matches!(format, InputFormat::Jsonl | InputFormat::Csv) {
                return Err(HudiError::invalid(
                    "--add-columns takes the new columns' types from the input: give it \
                     Parquet or Arrow (JSON lines and CSV do not say them)",
                ));
            }
            let mut write_options = crate::write::WriteOptions::new(operation);
            write_options.commit_retries = commit_retries;
            write_options.add_columns = add_columns;
            write_options.options = option_map(options)?;
            let bytes = if input == "-" {
                let mut buf = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
                    .map_err(|e| HudiError::io("<stdin>", e))?;
                buf
            } else {
                std::fs::read(&input).map_err(|e| HudiError::io(&input, e))?
            };
            let t = open(&table).await?;
            // The metadata table opens (cached for the write) beside the schema's read.
            let open_mdt = async {
                if t.client().config().metadata_partitions.is_empty() {
                    Ok(())
                } else {
                    t.metadata_table(&[]).await.map(drop)
                }
            };
            let visibility = t.timeline().visibility_as_of(None);
            let (schema, ()) =
                futures::future::try_join(t.client().table_schema(&visibility), open_mdt).await?;
            let batches = decode_rows(bytes.into(), format, &schema, &input)?;
            let result = t.write(&batches, &write_options).await?;
            if json {
                print_json(&result)
            } else {
                println!(
                    "{} {} {}: {} inserted, {} updated, {} deleted ({} deletes of missing keys), {} files",
                    result.action,
                    result.instant,
                    result.completion_time,
                    result.records.inserted,
                    result.records.updated,
                    result.records.deleted,
                    result.records.delete_missing,
                    result.files_written.len()
                );
                Ok(())
            }
        }
        Command::Create {
            table,
            columns,
            schema_from,
            table_type,
            name,
            record_key,
            partition_by,
            ordering,
            options,
        } => {
            let schema = match schema_from {
                None => None,
                Some(file) => {
                    let bytes = std::fs::read(&file).map_err(|e| HudiError::io(&file, e))?;
                    Some(match InputFormat::of_path(&file) {
                        InputFormat::Parquet => crate::base_file::schema_in_memory(&bytes, &file)?
                            .as_ref()
                            .clone(),
                        _ => crate::api::input::arrow_ipc_schema(&bytes)
                            .map_err(|e| HudiError::invalid_input(format!("{file}: {e}")))?,
                    })
                }
            };
            let spec = crate::api::create::TableSpec {
                name,
                table_type: Some(table_type),
                columns,
                schema,
                record_key,
                partition_by,
                ordering_fields: ordering,
                options: option_map(options)?,
            };
            let new = spec.new_table(&table)?;
            let t = Table::create(storage_of(&table)?, &new).await?;
            let config = t.client().config();
            println!(
                "created {} ({:?}, table version {}) at {}",
                config.name, config.table_type, config.version, table
            );
            Ok(())
        }
        Command::Lock {
            table,
            options,
            hold_ms,
        } => {
            let mut map = option_map(options)?;
            use crate::write::lock;
            map.entry(lock::CONCURRENCY_MODE.into())
                .or_insert_with(|| "optimistic_concurrency_control".into());
            map.entry(lock::LOCK_PROVIDER.into())
                .or_insert_with(|| lock::STORAGE_LOCK_PROVIDER.into());
            let lock::Concurrency::Optimistic(config) = lock::concurrency(&map)? else {
                return Err(HudiError::invalid(
                    "the lock needs a multi-writer concurrency mode",
                ));
            };
            let mut storage = storage_at(&table)?;
            if let Some(d) = latency {
                storage = Arc::new(crate::storage::latency::Latency::new(storage, d));
            }
            let counted = crate::storage::Instrumented::new(storage);
            let table_lock = lock::TableLock::new(&counted, config)?;
            let step = |from: &crate::storage::IoSnapshot, started: std::time::Instant| {
                let io = counted.stats().snapshot().since(from);
                serde_json::json!({
                    "requests": io.requests,
                    "round_trips": io.round_trips,
                    "ms": started.elapsed().as_secs_f64() * 1000.0,
                })
            };
            let (before, started) = (counted.stats().snapshot(), std::time::Instant::now());
            table_lock.acquire().await?;
            let acquire = step(&before, started);
            if hold_ms > 0 {
                table_lock
                    .run(async {
                        crate::write::sleep(std::time::Duration::from_millis(hold_ms)).await;
                        Ok(())
                    })
                    .await?;
            }
            let (before, started) = (counted.stats().snapshot(), std::time::Instant::now());
            table_lock.release().await?;
            let release = step(&before, started);
            print_json(&serde_json::json!({
                "owner": table_lock.owner(),
                "acquire": acquire,
                "release": release,
            }))
        }
        Command::Manifest { table, output } => {
            let storage = storage_at(&table)?;
            let manifest = write_manifest(storage, output.as_deref()).await?;
            eprintln!(
                "manifest: {} files in {} folders, latest instant {}",
                manifest.num_files(),
                manifest.dirs.len(),
                manifest.latest_instant.as_deref().unwrap_or("-")
            );
            Ok(())
        }
    }
}

/// Lists the whole table (which must be on a store that can list) and writes the manifest
/// into it, or to `output`.
pub async fn write_manifest(
    storage: Arc<dyn Storage>,
    output: Option<&str>,
) -> Result<crate::storage::listing::Manifest> {
    use crate::storage::listing::{Manifest, MANIFEST_PATH};
    let table = Table::open(storage.clone()).await?;
    let files = storage.list("", true).await?;
    let mut manifest = Manifest::from_files(&files);
    manifest.table = Some(table.config().name.clone());
    manifest.table_version = Some(table.config().version);
    manifest.created_at =
        Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    manifest.latest_instant = table
        .timeline()
        .completed()
        .last()
        .map(|i| i.requested_time.clone());
    let bytes = manifest.to_json();
    match output {
        Some("-") => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)
                .map_err(|e| HudiError::io("<stdout>", e))?;
            writeln!(out).map_err(|e| HudiError::io("<stdout>", e))?;
        }
        Some(path) => std::fs::write(path, &bytes).map_err(|e| HudiError::io(path, e))?,
        None => {
            storage
                .put(
                    MANIFEST_PATH,
                    bytes::Bytes::from(bytes),
                    crate::storage::PutMode::Overwrite,
                )
                .await?;
        }
    }
    Ok(manifest)
}
