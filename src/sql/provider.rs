//! The table provider: a scan asks this engine's planner for the slices (filters and
//! projection pushed down), then reads them in DataFusion partitions, each a group of slices
//! the engine's own scan reads with its read-ahead and merging.

use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef as DfSchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Statistics};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr as DfExpr, TableProviderFilterPushDown, TableType};
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    ReplaceChildrenOptions, SendableRecordBatchStream,
};
use futures::StreamExt;
use serde::Serialize;

use super::ffi;
use super::filters::{translate, Pushed};
use super::stats::ScanStats;
use crate::error::{HudiError, Result};
use crate::expr::Expr;
use crate::read::{Plan, PlanStats, ReadOptions, Spawner};
use crate::storage::{IoSnapshot, Storage};
use crate::table::Table;

pub(super) fn df_error(e: HudiError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

/// What one scan of a table asked the engine and what its plan selected.
#[derive(Debug, Clone, Serialize)]
pub struct ScanReport {
    pub table: String,
    /// The filters pushed to the engine, in its syntax.
    pub filters: Vec<String>,
    pub columns: Vec<String>,
    pub limit: Option<usize>,
    /// DataFusion partitions the selected slices were read in.
    pub partitions: usize,
    pub stats: PlanStats,
    pub plan_io: IoSnapshot,
}

/// Opens a table location's storage: what a process that did not open the table (a
/// distributed engine's scheduler or executor) opens it with.
pub type Opener = Arc<dyn Fn(&str) -> Result<Arc<dyn Storage>> + Send + Sync>;

/// A table, open or opened on first use (where a plan arrives from another process: the
/// decoders of DataFusion's codecs cannot wait for a storage round trip).
pub struct TableHandle {
    location: String,
    opener: Option<Opener>,
    /// Whether the first open fetches the metadata table beside the table (to plan with it).
    prefetch_mdt: bool,
    cell: tokio::sync::OnceCell<Arc<Table>>,
}

impl fmt::Debug for TableHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TableHandle")
            .field("location", &self.location)
            .field("open", &self.cell.initialized())
            .finish()
    }
}

impl TableHandle {
    pub fn opened(table: Arc<Table>, location: &str) -> TableHandle {
        TableHandle {
            location: location.to_string(),
            opener: None,
            prefetch_mdt: false,
            cell: tokio::sync::OnceCell::new_with(Some(table)),
        }
    }

    /// The table at `location`, opened through `opener` when first needed.
    pub fn lazy(location: &str, opener: Opener, prefetch_mdt: bool) -> TableHandle {
        TableHandle {
            location: location.to_string(),
            opener: Some(opener),
            prefetch_mdt,
            cell: tokio::sync::OnceCell::new(),
        }
    }

    pub fn location(&self) -> &str {
        &self.location
    }

    /// The table if it has been opened.
    pub fn get(&self) -> Option<&Arc<Table>> {
        self.cell.get()
    }

    /// The table, opened now if it was not.
    pub async fn open(&self) -> Result<Arc<Table>> {
        let table = self.cell.get_or_try_init(|| async {
            let opener = (self.opener.as_ref())
                .ok_or_else(|| HudiError::invalid("a table handle without an opener"))?;
            let storage = opener(&self.location)?;
            let table = Table::open_with(storage, None, self.prefetch_mdt).await?;
            Ok::<_, HudiError>(Arc::new(table))
        });
        Ok(table.await?.clone())
    }
}

/// The plan node a table's scans take (a distributed engine may need them as one of its own
/// node types); by default the [`HudiScanExec`] itself.
pub type ScanShape = Arc<
    dyn Fn(Arc<HudiScanExec>) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> + Send + Sync,
>;

/// A Hudi table as a DataFusion table: the query type (snapshot, time travel, incremental,
/// read-optimized) is fixed when it is made; every scan plans with its own filters.
pub struct HudiTable {
    table: Arc<TableHandle>,
    shape: Option<ScanShape>,
    location: String,
    options: ReadOptions,
    schema: arrow_schema::SchemaRef,
    df_schema: DfSchemaRef,
    scans: Mutex<Vec<ScanReport>>,
}

impl fmt::Debug for HudiTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HudiTable")
            .field("location", &self.location)
            .field("query", &self.options.query)
            .finish()
    }
}

impl HudiTable {
    /// The table read with `options` (query type, times; columns, filters and limit come
    /// from each scan). Its schema is that of a plan without filters.
    pub async fn new(table: Arc<Table>, location: &str, options: ReadOptions) -> Result<Self> {
        let mut base = options;
        base.columns = None;
        base.filters = Vec::new();
        base.limit = None;
        let plan = table.plan(&base).await?;
        let schema = plan.output_schema.clone();
        let df_schema = Arc::new(ffi::schema_into_df(&schema)?);
        Ok(HudiTable {
            table: Arc::new(TableHandle::opened(table, location)),
            shape: None,
            location: location.to_string(),
            options: base,
            schema,
            df_schema,
            scans: Mutex::new(Vec::new()),
        })
    }

    /// A table whose schema is known (it was planned elsewhere), opened at its first scan;
    /// its scans take `shape`.
    pub fn with_handle(
        table: Arc<TableHandle>,
        options: ReadOptions,
        df_schema: DfSchemaRef,
        shape: Option<ScanShape>,
    ) -> Result<Self> {
        let schema = Arc::new(ffi::schema_from_df_schema(&df_schema)?);
        Ok(HudiTable {
            location: table.location().to_string(),
            table,
            shape,
            options,
            schema,
            df_schema,
            scans: Mutex::new(Vec::new()),
        })
    }

    /// The table, once opened.
    pub fn table(&self) -> Option<&Arc<Table>> {
        self.table.get()
    }

    /// The read options every scan starts from (query type and times).
    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    pub fn location(&self) -> &str {
        &self.location
    }

    /// Every scan planned so far.
    pub fn scans(&self) -> Vec<ScanReport> {
        self.scans.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn pushed(&self, filters: &[DfExpr]) -> Vec<Expr> {
        (filters.iter())
            .filter_map(|f| match translate(f, &self.schema) {
                Pushed::Exact(e) | Pushed::Inexact(e) => Some(e),
                Pushed::Unsupported => None,
            })
            .collect()
    }
}

#[async_trait]
impl TableProvider for HudiTable {
    fn schema(&self) -> DfSchemaRef {
        self.df_schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&DfExpr],
    ) -> datafusion::common::Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match translate(f, &self.schema) {
                Pushed::Exact(_) => TableProviderFilterPushDown::Exact,
                Pushed::Inexact(_) => TableProviderFilterPushDown::Inexact,
                Pushed::Unsupported => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[DfExpr],
        limit: Option<usize>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        let indices: Vec<usize> = match projection {
            Some(p) => p.clone(),
            None => (0..self.schema.fields().len()).collect(),
        };
        let names: Vec<String> = (indices.iter())
            .map(|&i| self.schema.field(i).name().clone())
            .collect();
        // No column wanted (`COUNT(*)`): the rows of the first are read and only counted.
        let read = match names.is_empty() {
            true => (self.schema.fields().iter().take(1))
                .map(|f| f.name().clone())
                .collect(),
            false => names.clone(),
        };
        let mut options = self.options.clone();
        options.columns = Some(read);
        options.filters = self.pushed(filters);
        options.limit = limit;
        options.spawner = tokio::runtime::Handle::try_current().ok().map(|runtime| {
            Spawner::new(move |task| {
                runtime.spawn(task);
            })
        });
        let table = self.table.open().await.map_err(df_error)?;
        let plan = table.plan(&options).await.map_err(df_error)?;
        // Only a scan of whole slices asks for statistics: with a filter or a limit pushed
        // it returns fewer rows than the files hold, and the lookup would cost a selective
        // read more than an estimate gives (join order still has the on-disk bytes).
        let stats = match options.filters.is_empty() && limit.is_none() {
            true => {
                let read = options.columns.as_deref().unwrap_or_default();
                // Statistics only inform the optimizer: without them the scan still runs.
                ScanStats::load(&table, &plan, &names, read)
                    .await
                    .ok()
                    .flatten()
            }
            false => None,
        };
        let wanted = state.config().target_partitions().max(1);
        let groups = groups_of(&plan, wanted);
        let schema = Arc::new(self.df_schema.project(&indices)?);
        let report = ScanReport {
            table: self.location.clone(),
            filters: options.filters.iter().map(Expr::to_string).collect(),
            columns: names.clone(),
            limit,
            partitions: groups.len(),
            stats: plan.stats.clone(),
            plan_io: plan.io.clone(),
        };
        if let Ok(mut scans) = self.scans.lock() {
            scans.push(report.clone());
        }
        let summary = summary(&report, plan.query);
        let scan = Arc::new(HudiScanExec {
            table: self.table.clone(),
            plan: Arc::new(plan),
            options,
            properties: properties(&schema, groups.len()),
            groups,
            names,
            schema,
            summary,
            report: Some(report),
            stats,
            on_task: None,
        });
        match &self.shape {
            Some(shape) => shape(scan),
            None => Ok(scan),
        }
    }
}

fn properties(schema: &DfSchemaRef, groups: usize) -> Arc<PlanProperties> {
    Arc::new(PlanProperties::new(
        EquivalenceProperties::new(schema.clone()),
        Partitioning::UnknownPartitioning(groups.max(1)),
        EmissionType::Incremental,
        Boundedness::Bounded,
    ))
}

/// What `EXPLAIN` shows of a scan: the filters pushed and what each pruning stage left.
fn summary(r: &ScanReport, query: crate::read::QueryType) -> String {
    let s = &r.stats;
    let mut out = format!(
        "table={}, query={:?}, filters=[{}], slices={}/{}, files={}/{} \
         (partition pruning {}, partition stats {}, column stats {}, record index {}, \
         footers {}), partitions={}",
        r.table,
        query,
        r.filters.join(", "),
        s.slices_selected,
        s.slices_total,
        s.files_selected,
        s.files_total,
        s.files_after_partition_pruning,
        opt(s.files_after_partition_stats),
        opt(s.files_after_column_stats),
        opt(s.files_after_record_index),
        s.files_after_file_stats,
        r.partitions,
    );
    if let Some(limit) = r.limit {
        out += &format!(", limit={limit}");
    }
    out
}

/// Called with each partition a scan decoded from another process starts reading.
pub type TaskLog = Arc<dyn Fn(&HudiScanExec, usize) + Send + Sync>;

/// The plan's slices in at most `n` groups of about equal bytes (largest first, each to the
/// lightest group), each group's slices in plan order.
fn groups_of(plan: &Plan, n: usize) -> Vec<Vec<usize>> {
    let slices = &plan.file_slices;
    let n = n.min(slices.len());
    if n == 0 {
        return Vec::new();
    }
    let size = |i: usize| slice_bytes(&slices[i]);
    let mut order: Vec<usize> = (0..slices.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(size(i)));
    let mut groups: Vec<(u64, Vec<usize>)> = vec![(0, Vec::new()); n];
    for i in order {
        let lightest = (0..n).min_by_key(|&g| groups[g].0).unwrap_or(0);
        groups[lightest].0 += size(i);
        groups[lightest].1.push(i);
    }
    groups
        .into_iter()
        .map(|(_, mut g)| {
            g.sort_unstable();
            g
        })
        .collect()
}

/// A slice's files as listed: base and log files.
fn slice_bytes(slice: &crate::file_group::FileSlice) -> u64 {
    slice.base_size().unwrap_or(0) + slice.log_files.iter().map(|l| l.size).sum::<u64>()
}

/// Reads one group of a plan's slices per DataFusion partition.
pub struct HudiScanExec {
    table: Arc<TableHandle>,
    plan: Arc<Plan>,
    /// The scan's options: columns, filters, limit, batch size and read-ahead.
    options: ReadOptions,
    groups: Vec<Vec<usize>>,
    /// The output columns, in order (none for a count).
    names: Vec<String>,
    schema: DfSchemaRef,
    /// `EXPLAIN`'s line, made where the scan was planned.
    summary: String,
    /// Where the scan was planned: what it asked and selected.
    report: Option<ScanReport>,
    stats: Option<ScanStats>,
    properties: Arc<PlanProperties>,
    on_task: Option<TaskLog>,
}

impl fmt::Debug for HudiScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HudiScanExec")
            .field("summary", &self.summary)
            .finish()
    }
}

/// The parts of a scan that cross to another process ([`HudiScanExec::from_parts`]).
pub struct ScanParts {
    pub plan: Plan,
    pub options: ReadOptions,
    pub groups: Vec<Vec<usize>>,
    pub names: Vec<String>,
    pub schema: DfSchemaRef,
    pub summary: String,
}

impl HudiScanExec {
    /// What the scan asked the planner and what it selected (where it was planned).
    pub fn report(&self) -> Option<&ScanReport> {
        self.report.as_ref()
    }

    pub fn location(&self) -> &str {
        self.table.location()
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    pub fn options(&self) -> &ReadOptions {
        &self.options
    }

    /// The slices (indices into the plan's) each partition reads.
    pub fn groups(&self) -> &[Vec<usize>] {
        &self.groups
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// A scan planned elsewhere, reading `table` (opened at its first partition).
    pub fn from_parts(
        table: Arc<TableHandle>,
        parts: ScanParts,
        on_task: Option<TaskLog>,
    ) -> Result<HudiScanExec> {
        let slices = parts.plan.file_slices.len();
        if let Some(bad) = parts.groups.iter().flatten().find(|&&i| i >= slices) {
            return Err(HudiError::invalid(format!(
                "a shipped scan names slice {bad} of {slices}"
            )));
        }
        Ok(HudiScanExec {
            table,
            properties: properties(&parts.schema, parts.groups.len()),
            plan: Arc::new(parts.plan),
            options: parts.options,
            groups: parts.groups,
            names: parts.names,
            schema: parts.schema,
            summary: parts.summary,
            report: None,
            stats: None,
            on_task,
        })
    }

    /// What the scan tells DataFusion's optimizer: rows, and each output column's bounds
    /// and nulls, of the slices in `group` (all when `None`).
    pub fn statistics(&self, group: Option<usize>) -> Statistics {
        let slices = group.map(|g| self.groups.get(g).map_or(&[][..], Vec::as_slice));
        let bytes = match slices {
            Some(g) => self.bytes_of(g),
            None => self.groups.iter().map(|g| self.bytes_of(g)).sum(),
        };
        let mut stats = match &self.stats {
            Some(s) => s.statistics(slices, &self.schema),
            None => Statistics::new_unknown(&self.schema),
        };
        if slices.is_some_and(|g| g.is_empty()) || self.groups.is_empty() {
            stats.num_rows = Precision::Exact(0);
        }
        // On-disk (compressed) bytes: a lower bound of the decoded size, for join ordering.
        stats.total_byte_size = Precision::Inexact(bytes);
        stats
    }

    fn bytes_of(&self, group: &[usize]) -> usize {
        let slices = &self.plan.file_slices;
        let bytes: u64 = group.iter().map(|&i| slice_bytes(&slices[i])).sum();
        usize::try_from(bytes).unwrap_or(usize::MAX)
    }
}

impl DisplayAs for HudiScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "HudiScanExec: {}", self.summary)
    }
}

fn opt(n: Option<usize>) -> String {
    n.map_or("-".into(), |n| n.to_string())
}

impl ExecutionPlan for HudiScanExec {
    fn name(&self) -> &str {
        "HudiScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> datafusion::common::Result<TreeNodeRecursion>,
    ) -> datafusion::common::Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> datafusion::common::Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> datafusion::common::Result<SendableRecordBatchStream> {
        Ok(self.stream(partition))
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> datafusion::common::Result<Arc<Statistics>> {
        Ok(Arc::new(self.statistics(args.partition())))
    }
}

impl HudiScanExec {
    /// The rows of partition `partition` (a group of the plan's slices).
    pub fn stream(&self, partition: usize) -> SendableRecordBatchStream {
        let schema = self.schema.clone();
        let Some(group) = self.groups.get(partition) else {
            // A plan without slices still has one (empty) partition.
            let empty = futures::stream::empty();
            return Box::pin(RecordBatchStreamAdapter::new(schema, empty));
        };
        if let Some(log) = &self.on_task {
            log(self, partition);
        }
        let mut plan = Plan::clone(&self.plan);
        plan.file_slices = (group.iter())
            .filter_map(|&i| self.plan.file_slices.get(i).cloned())
            .collect();
        let plan = Arc::new(plan);
        let mut options = self.options.clone();
        if options.spawner.is_none() {
            // A scan decoded in another process brings no spawner: this runtime's.
            options.spawner = tokio::runtime::Handle::try_current().ok().map(|runtime| {
                Spawner::new(move |task| {
                    runtime.spawn(task);
                })
            });
        }
        let handle = self.table.clone();
        let names = self.names.clone();
        let out = schema.clone();
        // The table opens here when the scan came from another process (a no-op otherwise).
        let batches = futures::stream::once(async move {
            let table = handle.open().await?;
            Ok::<_, HudiError>(table.scan(plan, &options))
        })
        .flat_map(|scan| match scan {
            Ok(scan) => scan.boxed(),
            Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
        })
        .map(move |batch| {
            let batch = batch.and_then(|b| project(b, &names))?;
            ffi::batch_into_df(batch, &out)
        });
        let batches = batches.map(|b| b.map_err(df_error));
        Box::pin(RecordBatchStreamAdapter::new(schema, batches))
    }
}

/// The batch's columns `names`, in that order (none: only its row count).
fn project(batch: arrow_array::RecordBatch, names: &[String]) -> Result<arrow_array::RecordBatch> {
    let schema = batch.schema();
    let indices = (names.iter())
        .map(|n| {
            schema
                .index_of(n)
                .map_err(|_| HudiError::invalid(format!("the scan returned no column {n:?}")))
        })
        .collect::<Result<Vec<_>>>()?;
    if indices.is_empty() {
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        let empty = Arc::new(arrow_schema::Schema::empty());
        return arrow_array::RecordBatch::try_new_with_options(empty, vec![], &options)
            .map_err(crate::error::malformed_by);
    }
    batch.project(&indices).map_err(crate::error::malformed_by)
}
