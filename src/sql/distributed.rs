//! SQL over Hudi tables across processes, on Ballista (feature `ballista`): a scheduler and
//! executors that know this engine's codecs ([`super::codec`]), and sessions that submit
//! their queries to a scheduler.
//!
//! A query's path: the session plans it logically (tables named as in a local session) and
//! sends the plan to the scheduler; the scheduler opens each Hudi table, plans its scans with
//! this engine's planner and splits the physical plan into stages; executors run the stages'
//! tasks, each reading the file slices of one scan partition exactly as the scheduler's plan
//! chose them, and exchange the rows between stages.

use std::net::SocketAddr;
use std::sync::Arc;

use ballista_core::config::TaskSchedulingPolicy;
use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::{SchedulerConfig, TaskDistributionPolicy};
use ballista_scheduler::scheduler_process::start_server;
use datafusion::prelude::SessionConfig;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::PhysicalExtensionCodec;

use super::codec::{HudiLogicalCodec, HudiPhysicalCodec};
use super::provider::{Opener, TaskLog};
use crate::error::{HudiError, Result};

fn ballista_error(e: impl std::fmt::Display) -> HudiError {
    HudiError::invalid(format!("Ballista: {e}"))
}

/// Ballista's codecs with Hudi tables and scans added.
pub fn codecs(
    opener: Opener,
    on_task: Option<TaskLog>,
) -> (
    Arc<dyn LogicalExtensionCodec>,
    Arc<dyn PhysicalExtensionCodec>,
) {
    let logical = HudiLogicalCodec::new(
        Arc::new(BallistaLogicalExtensionCodec::default()),
        opener.clone(),
    );
    let physical = HudiPhysicalCodec::new(
        Arc::new(BallistaPhysicalExtensionCodec::default()),
        opener,
        on_task,
    );
    (Arc::new(logical), Arc::new(physical))
}

/// A session's configuration for a cluster: the codecs its plans are sent with.
pub(super) fn client_config(config: SessionConfig, opener: Opener) -> SessionConfig {
    let (logical, physical) = codecs(opener, None);
    config
        .with_ballista_logical_extension_codec(logical)
        .with_ballista_physical_extension_codec(physical)
}

/// Runs a scheduler on `bind` until the process ends. Tables open with `opener`. Tasks go
/// round-robin to the executors (a scan's partitions spread over all of them), pushed as
/// soon as a stage is ready.
pub async fn run_scheduler(bind: SocketAddr, opener: Opener) -> Result<()> {
    let (logical, physical) = codecs(opener, None);
    let mut config = SchedulerConfig {
        bind_host: bind.ip().to_string(),
        external_host: bind.ip().to_string(),
        bind_port: bind.port(),
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        ..SchedulerConfig::default()
    };
    config = config
        .with_scheduler_policy(TaskSchedulingPolicy::PushStaged)
        .with_task_distribution(TaskDistributionPolicy::RoundRobin);
    let cluster = BallistaCluster::new_from_config(&config)
        .await
        .map_err(ballista_error)?;
    start_server(cluster, bind, Arc::new(config))
        .await
        .map_err(ballista_error)
}

/// Where an executor listens, and whom it serves.
#[derive(Debug, Clone)]
pub struct ExecutorOptions {
    pub scheduler_host: String,
    pub scheduler_port: u16,
    /// The address executors and the client fetch results from (Arrow Flight).
    pub bind: SocketAddr,
    /// Where the scheduler pushes tasks (gRPC).
    pub grpc_port: u16,
    /// Tasks run at once.
    pub slots: usize,
    /// Shuffle files.
    pub work_dir: String,
}

/// Runs an executor until the process ends; `on_task` hears of each Hudi scan partition
/// it starts reading.
pub async fn run_executor(
    options: ExecutorOptions,
    opener: Opener,
    on_task: Option<TaskLog>,
) -> Result<()> {
    let (logical, physical) = codecs(opener, on_task);
    let host = options.bind.ip().to_string();
    let config = ExecutorProcessConfig {
        bind_host: host.clone(),
        external_host: Some(host),
        port: options.bind.port(),
        grpc_port: options.grpc_port,
        scheduler_host: options.scheduler_host,
        scheduler_port: options.scheduler_port,
        vcores: options.slots.max(1),
        task_scheduling_policy: TaskSchedulingPolicy::PushStaged,
        work_dir: Some(options.work_dir),
        print_thread_info: false,
        override_logical_codec: Some(logical),
        override_physical_codec: Some(physical),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config))
        .await
        .map_err(ballista_error)
}
