//! The native command line: `hudi-edge timeline | read | plan | info | file-groups | commit`.
//! Thin: it parses arguments ([`args`]), opens a table through a storage chosen by URL,
//! makes one call into the core per command, and prints ([`print`]).

mod args;
#[cfg(feature = "ballista")]
mod ballista;
mod print;

use std::sync::Arc;

use clap::Parser;

pub use args::RemoteArgs;
use args::{option_map, Cli, Command};

use crate::api::input::{decode_rows, InputFormat};
use crate::api::wire;
use crate::api::{storage_for, Host};
use crate::error::{HudiError, Result};
use crate::read::ReadOptions;
use crate::storage::Storage;
use crate::table::Table;

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

/// The bytes of `--input` (`-` = stdin).
fn read_input(input: &str) -> Result<Vec<u8>> {
    if input == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .map_err(|e| HudiError::io("<stdin>", e))?;
        Ok(buf)
    } else {
        std::fs::read(input).map_err(|e| HudiError::io(input, e))
    }
}

async fn run(cli: Cli) -> Result<()> {
    let latency = cli.latency_ms.map(std::time::Duration::from_millis);
    let remote = cli.remote.options()?;
    let storage_at = |location: &str| storage_for(location, &remote, Host::default());
    // Owns its options: SQL opens tables from inside DataFusion.
    let storage_of = {
        let remote = remote.clone();
        move |location: &str| {
            storage_for(location, &remote, Host::default()).map(|s| match latency {
                Some(d) => {
                    Arc::new(crate::storage::latency::Latency::new(s, d)) as Arc<dyn Storage>
                }
                None => s,
            })
        }
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
            print::timeline(&t.config().name, &timeline, json)
        }
        Command::Read {
            table,
            query,
            format,
            stats,
        } => {
            if let Some((start, end)) = query.change_feed() {
                let t = open(&table).await?;
                let feed = t.changes(start, end).await?;
                print::batches(&feed.schema, &feed.batches, format)?;
                if stats {
                    let report = wire::ChangeStats::from(&feed);
                    eprintln!("{}", serde_json::to_string(&report).unwrap_or_default());
                }
                return Ok(());
            }
            let options = query.options()?;
            let t = Arc::new(open_to_query(&table, &options).await?);
            let plan = Arc::new(t.plan(&options).await?);
            let mut scan = t.scan(plan.clone(), &options);
            let rows = print::rows(&mut scan, format).await?;
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
        #[cfg(feature = "datafusion")]
        Command::Sql {
            sql,
            tables,
            kind,
            format,
            explain,
            stats,
            #[cfg(feature = "ballista")]
            cluster,
        } => {
            let opener: crate::sql::Opener = Arc::new(storage_of.clone());
            #[cfg(feature = "ballista")]
            let session = match cluster {
                Some(url) => {
                    crate::sql::SqlSession::remote(&url, opener, kind.sql_options()?).await?
                }
                None => crate::sql::SqlSession::new(opener, kind.sql_options()?)?,
            };
            #[cfg(not(feature = "ballista"))]
            let session = crate::sql::SqlSession::new(opener, kind.sql_options()?)?;
            for named in &tables {
                let (name, location) = named.split_once('=').ok_or_else(|| {
                    HudiError::invalid(format!("--table {named:?} is not NAME=LOCATION"))
                })?;
                session.register(name.trim(), location.trim()).await?;
            }
            let rows = if explain {
                println!("{}", session.explain(&sql).await?);
                None
            } else {
                let result = session.run(&sql).await?;
                print::batches(&result.schema, &result.batches, format)?;
                Some(result.batches.iter().map(|b| b.num_rows()).sum::<usize>())
            };
            if stats {
                let report = serde_json::json!({ "rows": rows, "tables": session.report() });
                eprintln!("{}", serde_json::to_string(&report).unwrap_or_default());
            }
            Ok(())
        }
        #[cfg(feature = "ballista")]
        Command::Ballista { role } => ballista::run(role, Arc::new(storage_of)).await,
        Command::Plan {
            table,
            query,
            json: _,
        } => {
            if let Some((start, end)) = query.change_feed() {
                let t = open(&table).await?;
                let plan = t.plan_changes(start, end).await?;
                return print::json(&wire::ChangePlan::from(&plan));
            }
            let options = query.options()?;
            let t = open_to_query(&table, &options).await?;
            let plan = t.plan(&options).await?;
            print::json(&wire::Plan::from(&plan))
        }
        Command::Info { table, json: _ } => {
            let t = open(&table).await?;
            print::json(t.config())
        }
        Command::FileGroups {
            table,
            as_of,
            json: _,
        } => {
            let t = open(&table).await?;
            let view = t.file_system_view(as_of.as_deref()).await?;
            print::json(&view)
        }
        Command::Commit { table, instant } => {
            let t = open(&table).await?;
            let timeline = t.load_history().await?;
            let i = timeline.get(&instant).ok_or_else(|| HudiError::NotFound {
                path: format!("instant {instant} on the timeline of {table}"),
            })?;
            let content = t.instant_content(i).await?;
            print::json(&wire::InstantContent {
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
            let limits = crate::write::limits::InputLimits::of(&write_options.options)?;
            if let Ok(meta) = std::fs::metadata(&input) {
                limits.check_input(meta.len(), &input)?;
            }
            let bytes = read_input(&input)?;
            let t = open(&table).await?;
            let decode = |schema: &_| decode_rows(bytes.into(), format, schema, &input, &limits);
            let result = t.write_input(decode, &write_options).await?;
            print::write_result(&result, json)
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
        Command::Index {
            table,
            partitions,
            secondary,
            index_name,
            options,
            json,
        } => {
            let map = option_map(options)?;
            let t = Table::open(storage_of(&table)?).await?;
            // Only a secondary index asked for: nothing else is built.
            let mut built = match secondary.is_some() && partitions.is_empty() {
                true => None,
                false => t.index(&partitions, &map).await?,
            };
            if let Some(column) = &secondary {
                let t = Table::open(storage_of(&table)?).await?;
                let name = index_name.unwrap_or_else(|| format!("{column}_idx"));
                if let Some(s) = t.index_secondary(column, &name, &map).await? {
                    built = Some(match built {
                        Some(mut b) => {
                            b.partitions.extend(s.partitions);
                            b.elapsed_ms += s.elapsed_ms;
                            b
                        }
                        None => s,
                    });
                }
            }
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&built).unwrap_or_default()
                );
                return Ok(());
            }
            match built {
                None => {
                    println!("nothing to build: the metadata table has every partition asked for")
                }
                Some(b) => {
                    for p in &b.partitions {
                        println!(
                            "{}: {} records in {} file groups (instant {})",
                            p.partition, p.records, p.file_groups, p.instant
                        );
                    }
                    println!("{} requests, {} ms", b.io.requests, b.elapsed_ms);
                }
            }
            Ok(())
        }
        Command::Clean {
            table,
            options,
            json,
        } => {
            let map = option_map(options)?;
            let t = Table::open(storage_of(&table)?).await?;
            let done = t.clean_reporting_rollbacks(&map).await?;
            if !json {
                for r in &done.rolled_back {
                    println!(
                        "rolled back failed write {} ({}): {} files deleted",
                        r.instant,
                        r.action,
                        r.files_deleted.len()
                    );
                }
                if done.cleans.is_empty() {
                    println!("nothing to clean");
                }
            }
            print::cleans(&done.cleans, json)
        }
        Command::Archive {
            table,
            options,
            json,
        } => {
            let map = option_map(options)?;
            let t = Table::open(storage_of(&table)?).await?;
            let done = t.archive(&map).await?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&done).unwrap_or_default()
                );
                return Ok(());
            }
            for (which, part) in [
                ("timeline", &done.data_table),
                ("metadata-table timeline", &done.metadata_table),
            ] {
                match part {
                    None => println!("{which}: nothing to archive"),
                    Some(a) => println!(
                        "{which}: {} instants ({} .. {}) to {}{}, {} files deleted",
                        a.instants.len(),
                        a.instants.first().map_or("", String::as_str),
                        a.instants.last().map_or("", String::as_str),
                        a.history_file,
                        if a.merged_into.is_empty() {
                            String::new()
                        } else {
                            format!(" (merged into {})", a.merged_into.join(", "))
                        },
                        a.files_deleted
                    ),
                }
            }
            println!("{} requests, {} ms", done.io.requests, done.elapsed_ms);
            Ok(())
        }
        Command::Compact {
            table,
            schedule_only,
            instant,
            options,
            json,
        } => {
            let map = option_map(options)?;
            let t = Table::open(storage_of(&table)?).await?;
            let request = crate::write::CompactRequest {
                schedule_only,
                instant,
            };
            let report = t.compact(&request, &map).await?;
            if json {
                return print::json(&report);
            }
            if report.completed.is_empty() && report.scheduled.is_none() {
                println!(
                    "nothing to compact: {}",
                    report.not_scheduled.as_deref().unwrap_or("no plan")
                );
            }
            print::compaction(&report);
            Ok(())
        }
        Command::Cluster {
            table,
            schedule_only,
            instant,
            options,
            json,
        } => {
            let map = option_map(options)?;
            let t = Table::open(storage_of(&table)?).await?;
            let request = crate::write::ClusterRequest {
                schedule_only,
                instant,
            };
            let report = t.cluster(&request, &map).await?;
            if json {
                return print::json(&report);
            }
            if report.completed.is_empty() && report.scheduled.is_none() {
                println!(
                    "nothing to cluster: {}",
                    report.not_scheduled.as_deref().unwrap_or("no plan")
                );
            }
            print::clustering(&report);
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
            print::json(&serde_json::json!({
                "owner": table_lock.owner(),
                "acquire": acquire,
                "release": release,
            }))
        }
        Command::Health {
            table,
            options,
            fix,
            json,
            stats,
        } => {
            let map = option_map(options)?;
            let t = open(&table).await?;
            let report = t.health(&map, now_ms()).await?;
            let printed = if !fix {
                print::health(&report, json)
            } else {
                let fixes = t.fix(&report, &map).await?;
                let after = t.reopen().await?.health(&map, now_ms()).await?;
                if json {
                    print::json(&serde_json::json!({
                        "before": report,
                        "fixes": fixes,
                        "after": after,
                    }))
                } else {
                    print::fixes(&fixes)?;
                    print::health(&after, false)
                }
            };
            if stats {
                let cost = serde_json::json!({ "health_io": report.io, "total_io": t.io() });
                eprintln!("{cost}");
            }
            printed
        }
        Command::Tables {
            location,
            max_depth,
            max_listings,
            max_objects,
            no_health,
            options,
            json,
        } => {
            let opts = crate::health::discover::DiscoverOptions {
                max_depth,
                max_listings,
                max_objects,
                health: !no_health,
                options: option_map(options)?,
                now_ms: now_ms(),
                ..Default::default()
            };
            let found = crate::health::discover::discover(storage_of(&location)?, &opts).await?;
            print::discovery(&found, json)
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
    use crate::storage::listing::MANIFEST_PATH;
    let table = Table::open(storage.clone()).await?;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let manifest = table.manifest(now).await?;
    let bytes = manifest.to_json();
    match output {
        Some("-") => {
            print::bytes(&bytes)?;
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

/// The wall clock (epoch ms) reports count ages from.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
