//! `hudi-edge ballista scheduler|executor`: the processes of a Ballista cluster, with this
//! engine's codecs. Ballista's own log lines (info and above) and one line per Hudi scan
//! partition an executor reads go to stderr.

use std::sync::Arc;

use super::args::BallistaRole;
use crate::error::{HudiError, Result};
use crate::sql::distributed::{run_executor, run_scheduler, ExecutorOptions};
use crate::sql::{HudiScanExec, Opener, TaskLog};

/// Ballista's `log` records, info and above, as `LEVEL target: message` lines.
struct StderrLog;

impl log::Log for StderrLog {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Info && metadata.target().starts_with("ballista")
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            eprintln!("{} {}: {}", record.level(), record.target(), record.args());
        }
    }

    fn flush(&self) {}
}

static LOG: StderrLog = StderrLog;

pub(super) async fn run(role: BallistaRole, opener: Opener) -> Result<()> {
    // Already set only if another logger came first; Ballista's lines then go there.
    if log::set_logger(&LOG).is_ok() {
        log::set_max_level(log::LevelFilter::Info);
    }
    match role {
        BallistaRole::Scheduler { bind } => {
            eprintln!("hudi-edge: Ballista scheduler on {bind}");
            run_scheduler(bind, opener).await
        }
        BallistaRole::Executor {
            scheduler,
            bind,
            grpc_port,
            slots,
            work_dir,
        } => {
            let (host, port) = scheduler
                .rsplit_once(':')
                .and_then(|(h, p)| Some((h.to_string(), p.parse::<u16>().ok()?)))
                .ok_or_else(|| {
                    HudiError::invalid(format!("--scheduler {scheduler:?} is not HOST:PORT"))
                })?;
            let work_dir = match work_dir {
                Some(dir) => dir,
                None => {
                    let dir = std::env::temp_dir()
                        .join(format!("hudi-edge-executor-{}", std::process::id()));
                    dir.to_string_lossy().into_owned()
                }
            };
            std::fs::create_dir_all(&work_dir).map_err(|e| HudiError::io(&work_dir, e))?;
            let slots = slots.unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
            });
            let on_task: TaskLog = Arc::new(|scan: &HudiScanExec, partition: usize| {
                let slices = scan.groups().get(partition).map_or(0, Vec::len);
                eprintln!(
                    "hudi-edge: scan {} partition {partition} ({slices} slices)",
                    scan.location()
                );
            });
            eprintln!("hudi-edge: Ballista executor on {bind} (tasks on port {grpc_port}), scheduler {host}:{port}");
            let options = ExecutorOptions {
                scheduler_host: host,
                scheduler_port: port,
                bind,
                grpc_port,
                slots,
                work_dir,
            };
            run_executor(options, opener, Some(on_task)).await
        }
    }
}
