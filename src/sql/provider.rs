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
use crate::storage::IoSnapshot;
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

/// A Hudi table as a DataFusion table: the query type (snapshot, time travel, incremental,
/// read-optimized) is fixed when it is made; every scan plans with its own filters.
pub struct HudiTable {
    table: Arc<Table>,
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
            table,
            location: location.to_string(),
            options: base,
            schema,
            df_schema,
            scans: Mutex::new(Vec::new()),
        })
    }

    pub fn table(&self) -> &Arc<Table> {
        &self.table
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
        let plan = self.table.plan(&options).await.map_err(df_error)?;
        // Only a scan of whole slices asks for statistics: with a filter or a limit pushed
        // it returns fewer rows than the files hold, and the lookup would cost a selective
        // read more than an estimate gives (join order still has the on-disk bytes).
        let stats = match options.filters.is_empty() && limit.is_none() {
            true => {
                let read = options.columns.as_deref().unwrap_or_default();
                // Statistics only inform the optimizer: without them the scan still runs.
                ScanStats::load(&self.table, &plan, &names, read)
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
        let properties = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(groups.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        Ok(Arc::new(HudiScanExec {
            table: self.table.clone(),
            plan: Arc::new(plan),
            options,
            groups,
            names,
            schema,
            report,
            stats,
            properties: Arc::new(properties),
        }))
    }
}

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
#[derive(Debug)]
pub struct HudiScanExec {
    table: Arc<Table>,
    plan: Arc<Plan>,
    options: ReadOptions,
    groups: Vec<Vec<usize>>,
    /// The output columns, in order (none for a count).
    names: Vec<String>,
    schema: DfSchemaRef,
    report: ScanReport,
    stats: Option<ScanStats>,
    properties: Arc<PlanProperties>,
}

impl HudiScanExec {
    pub fn report(&self) -> &ScanReport {
        &self.report
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
        let r = &self.report;
        let s = &r.stats;
        write!(
            f,
            "HudiScanExec: table={}, query={:?}, filters=[{}], slices={}/{}, files={}/{} \
             (partition pruning {}, partition stats {}, column stats {}, record index {}, \
             footers {}), partitions={}",
            r.table,
            self.plan.query,
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
        )?;
        if let Some(limit) = r.limit {
            write!(f, ", limit={limit}")?;
        }
        Ok(())
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
        let schema = self.schema.clone();
        let Some(group) = self.groups.get(partition) else {
            // A plan without slices still has one (empty) partition.
            let empty = futures::stream::empty();
            return Ok(Box::pin(RecordBatchStreamAdapter::new(schema, empty)));
        };
        let mut plan = Plan::clone(&self.plan);
        plan.file_slices = group
            .iter()
            .map(|&i| self.plan.file_slices[i].clone())
            .collect();
        let scan = self.table.scan(Arc::new(plan), &self.options);
        let names = self.names.clone();
        let out = schema.clone();
        let batches = scan.map(move |batch| {
            let batch = batch.and_then(|b| project(b, &names))?;
            ffi::batch_into_df(batch, &out)
        });
        let batches = batches.map(|b| b.map_err(df_error));
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
    }

    fn statistics_from_inputs(
        &self,
        _input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> datafusion::common::Result<Arc<Statistics>> {
        Ok(Arc::new(self.statistics(args.partition())))
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
