//! DataFusion's extension codecs for Hudi tables and scans (feature `ballista`): what lets a
//! distributed engine ship a query's plans between processes.
//!
//! - The logical codec carries a [`HudiTable`] as its location and read options (the query
//!   type and times): the process that receives it (a scheduler) opens the table at its first
//!   scan and plans it there with this engine's planner.
//! - The physical codec carries a [`HudiScanExec`] as the plan that scan chose (the file slices,
//!   the visible instants, the schemas, the pushed filter) and its partitions' slices: an
//!   executor opens only the table's storage and properties and reads exactly those slices,
//!   planning nothing again.
//!
//! A table decoded by the logical codec plans its scans in the shape a Ballista scheduler can
//! split between tasks: a `DataSourceExec` over a file scan whose file groups are the scan's
//! partitions ([`HudiFileSource`]). The scheduler gives each task the file groups of its
//! partitions, and the physical codec ships only those groups' slices. (Ballista narrows a
//! stage's leaves to a task's partitions by their type; a leaf of another type would be read
//! whole by every task.)
//!
//! Every other node goes to the codecs these wrap (Ballista's, for its shuffle nodes). A Hudi
//! payload starts with a tag no protobuf message starts with; the rest is JSON (the plan's
//! bytes after it, [`crate::read::Plan::to_bytes`]).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use datafusion::arrow::datatypes::SchemaRef as DfSchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::object_store::ObjectStoreUrl;
use datafusion::datasource::physical_plan::{
    FileGroup, FileOpenFuture, FileOpener, FileScanConfig, FileScanConfigBuilder, FileSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, Extension, LogicalPlan, ScalarUDF, WindowUDF};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::{DisplayFormatType, ExecutionPlan};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use super::ffi;
use super::provider::{
    df_error, HudiScanExec, HudiTable, Opener, ScanParts, ScanShape, TableHandle, TaskLog,
};
use crate::error::HudiError;
use crate::expr::Expr;
use crate::read::{Plan, QueryType, ReadOptions};

/// `\0` then a name: a protobuf message never starts with a zero byte (no field 0).
const TABLE_TAG: &[u8] = b"\0hudi-edge.table.1\n";
const SCAN_TAG: &[u8] = b"\0hudi-edge.scan.1\n";

type DfResult<T> = datafusion::common::Result<T>;

fn codec_error(e: impl fmt::Display) -> DataFusionError {
    df_error(HudiError::invalid(format!("a shipped Hudi plan: {e}")))
}

/// The read options that travel: what a plan and a scan depend on (the spawner is the
/// receiving runtime's).
#[derive(Serialize, Deserialize)]
struct WireOptions {
    query: QueryType,
    as_of: Option<String>,
    start: Option<String>,
    end: Option<String>,
    columns: Option<Vec<String>>,
    filters: Vec<Expr>,
    limit: Option<usize>,
    data_skipping: bool,
    use_metadata_table: bool,
    batch_size: usize,
    concurrency: usize,
    read_ahead_bytes: u64,
}

impl From<&ReadOptions> for WireOptions {
    fn from(o: &ReadOptions) -> Self {
        WireOptions {
            query: o.query,
            as_of: o.as_of.clone(),
            start: o.start.clone(),
            end: o.end.clone(),
            columns: o.columns.clone(),
            filters: o.filters.clone(),
            limit: o.limit,
            data_skipping: o.data_skipping,
            use_metadata_table: o.use_metadata_table,
            batch_size: o.batch_size,
            concurrency: o.concurrency,
            read_ahead_bytes: o.read_ahead_bytes,
        }
    }
}

impl From<WireOptions> for ReadOptions {
    fn from(o: WireOptions) -> Self {
        ReadOptions {
            query: o.query,
            as_of: o.as_of,
            start: o.start,
            end: o.end,
            columns: o.columns,
            filters: o.filters,
            limit: o.limit,
            data_skipping: o.data_skipping,
            use_metadata_table: o.use_metadata_table,
            batch_size: o.batch_size.max(1),
            concurrency: o.concurrency.max(1),
            read_ahead_bytes: o.read_ahead_bytes,
            spawner: None,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct WireTable {
    location: String,
    options: WireOptions,
}

#[derive(Serialize, Deserialize)]
struct WireScan {
    location: String,
    options: WireOptions,
    groups: Vec<Vec<usize>>,
    names: Vec<String>,
    /// The scan's output schema, an Arrow IPC stream header (base64).
    schema: String,
    summary: String,
}

/// `tag`, the header's length (u32, little-endian), the header, then `rest`.
fn frame(tag: &[u8], header: &impl Serialize, rest: &[u8], buf: &mut Vec<u8>) -> DfResult<()> {
    let header = serde_json::to_vec(header).map_err(codec_error)?;
    let len = u32::try_from(header.len()).map_err(codec_error)?;
    buf.extend_from_slice(tag);
    buf.extend_from_slice(&len.to_le_bytes());
    buf.extend_from_slice(&header);
    buf.extend_from_slice(rest);
    Ok(())
}

/// The header and the rest of a payload framed under `tag`; `None` when it is not one.
fn unframe<'a, T: for<'de> Deserialize<'de>>(
    tag: &[u8],
    buf: &'a [u8],
) -> Option<DfResult<(T, &'a [u8])>> {
    let body = buf.strip_prefix(tag)?;
    let parse = || {
        let (len, body) = body
            .split_first_chunk::<4>()
            .ok_or_else(|| codec_error("truncated"))?;
        let len = u32::from_le_bytes(*len) as usize;
        if body.len() < len {
            return Err(codec_error("truncated"));
        }
        let (header, rest) = body.split_at(len);
        let header = serde_json::from_slice(header).map_err(codec_error)?;
        Ok((header, rest))
    };
    Some(parse())
}

fn schema_text(schema: &DfSchemaRef) -> DfResult<String> {
    let schema = ffi::schema_from_df_schema(schema).map_err(df_error)?;
    crate::read::plan::wire::schema_bytes(&schema).map_err(df_error)
}

fn schema_of(text: &str) -> DfResult<DfSchemaRef> {
    let schema = crate::read::plan::wire::schema_of(text).map_err(df_error)?;
    Ok(Arc::new(ffi::schema_into_df(&schema).map_err(df_error)?))
}

/// The scan's partitions as a file scan's file groups: one group per partition, holding one
/// stand-in file named after the partition (no file is opened by that name: the source reads
/// the partition's slices).
pub struct HudiFileSource {
    scan: Arc<HudiScanExec>,
    table_schema: TableSchema,
    metrics: ExecutionPlanMetricsSet,
}

const GROUP_PREFIX: &str = "hudi-edge-partition-";

fn group_of(file: &PartitionedFile) -> DfResult<usize> {
    let name = file.object_meta.location.as_ref();
    (name.strip_prefix(GROUP_PREFIX))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| codec_error(format!("not a Hudi scan partition: {name:?}")))
}

/// [`ScanShape`] for tables a scheduler plans: scans as file scans Ballista can split.
pub fn file_scan_shape() -> ScanShape {
    Arc::new(|scan: Arc<HudiScanExec>| {
        // An empty scan keeps one (empty) partition, as the scan node does.
        let partitions = scan.groups().len().max(1);
        let groups = (0..partitions)
            .map(|i| {
                let file = PartitionedFile::new(format!("{GROUP_PREFIX}{i}"), 0);
                let stats = scan.statistics(Some(i));
                FileGroup::new(vec![file]).with_statistics(Arc::new(stats))
            })
            .collect();
        let source = HudiFileSource {
            table_schema: TableSchema::from(scan.schema()),
            metrics: ExecutionPlanMetricsSet::new(),
            scan: scan.clone(),
        };
        let config =
            FileScanConfigBuilder::new(ObjectStoreUrl::local_filesystem(), Arc::new(source))
                .with_file_groups(groups)
                .with_statistics(scan.statistics(None))
                .build();
        Ok(DataSourceExec::from_data_source(config) as Arc<dyn ExecutionPlan>)
    })
}

impl FileSource for HudiFileSource {
    fn create_file_opener(
        &self,
        _object_store: Arc<dyn datafusion::object_store::ObjectStore>,
        _base_config: &FileScanConfig,
        _partition: usize,
    ) -> DfResult<Arc<dyn FileOpener>> {
        Ok(Arc::new(HudiOpener(self.scan.clone())))
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, _batch_size: usize) -> Arc<dyn FileSource> {
        // The engine's scan sizes its own batches.
        Arc::new(HudiFileSource {
            scan: self.scan.clone(),
            table_schema: self.table_schema.clone(),
            metrics: self.metrics.clone(),
        })
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        "hudi"
    }

    fn fmt_extra(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, ", {}", self.scan.summary())
    }

    /// The partitions are the planner's groups of slices; a stand-in file has no byte range.
    fn supports_repartitioning(&self) -> bool {
        false
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }
}

impl HudiFileSource {
    /// The scan whose partitions the file groups stand for.
    pub fn scan(&self) -> &Arc<HudiScanExec> {
        &self.scan
    }
}

/// Reads the partition a stand-in file names.
struct HudiOpener(Arc<HudiScanExec>);

impl FileOpener for HudiOpener {
    fn open(&self, file: PartitionedFile) -> DfResult<FileOpenFuture> {
        let stream = self.0.stream(group_of(&file)?);
        Ok(Box::pin(async move { Ok(stream.boxed()) }))
    }
}

/// The Hudi scan a file scan of [`HudiFileSource`] stands for, reading only the partitions
/// its file groups name (the ones a task was given), and its row limit.
type Shipped<'a> = (&'a HudiScanExec, Vec<Vec<usize>>, Option<usize>);

fn scan_of_file_scan(node: &dyn ExecutionPlan) -> Option<DfResult<Shipped<'_>>> {
    let exec = node.downcast_ref::<DataSourceExec>()?;
    let config = exec.data_source().as_ref() as &dyn std::any::Any;
    let config = config.downcast_ref::<FileScanConfig>()?;
    let source = config.file_source().as_ref() as &dyn std::any::Any;
    let source = source.downcast_ref::<HudiFileSource>()?;
    let scan = source.scan.as_ref();
    let groups = (config.file_groups.iter())
        .flat_map(|g| g.iter())
        .map(|file| {
            let i = group_of(file)?;
            Ok(scan.groups().get(i).cloned().unwrap_or_default())
        })
        .collect::<DfResult<Vec<_>>>();
    Some(groups.map(|g| (scan, g, config.limit)))
}

/// Table handles by location, shared by the scans a process decodes: a table's storage and
/// properties are opened once a minute at most, not once per task.
struct Handles {
    opener: Opener,
    open: Mutex<HashMap<String, (Instant, Arc<TableHandle>)>>,
}

/// How long a decoded scan reuses an opened table (its properties; the slices come with
/// each plan).
const HANDLE_TTL: Duration = Duration::from_secs(60);

impl Handles {
    fn get(&self, location: &str) -> Arc<TableHandle> {
        let fresh = || Arc::new(TableHandle::lazy(location, self.opener.clone(), false));
        let Ok(mut open) = self.open.lock() else {
            return fresh();
        };
        let now = Instant::now();
        open.retain(|_, (at, _)| now.duration_since(*at) < HANDLE_TTL);
        let (_, handle) = open
            .entry(location.to_string())
            .or_insert_with(|| (now, fresh()));
        handle.clone()
    }
}

/// Functions (UDFs, UDAFs, UDWFs) are the inner codec's business in both codecs: Hudi adds
/// none, and the defaults of the codec traits would refuse every one.
macro_rules! functions_from_inner {
    () => {
        fn try_decode_udf(&self, name: &str, buf: &[u8]) -> DfResult<Arc<ScalarUDF>> {
            self.inner.try_decode_udf(name, buf)
        }

        fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> DfResult<()> {
            self.inner.try_encode_udf(node, buf)
        }

        fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> DfResult<Arc<AggregateUDF>> {
            self.inner.try_decode_udaf(name, buf)
        }

        fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> DfResult<()> {
            self.inner.try_encode_udaf(node, buf)
        }

        fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> DfResult<Arc<WindowUDF>> {
            self.inner.try_decode_udwf(name, buf)
        }

        fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> DfResult<()> {
            self.inner.try_encode_udwf(node, buf)
        }
    };
}

/// Carries [`HudiTable`]s; everything else goes to `inner`.
pub struct HudiLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
    opener: Opener,
}

impl fmt::Debug for HudiLogicalCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HudiLogicalCodec")
    }
}

impl HudiLogicalCodec {
    /// Decoded tables open their locations with `opener`.
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>, opener: Opener) -> Self {
        HudiLogicalCodec { inner, opener }
    }
}

impl LogicalExtensionCodec for HudiLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> DfResult<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> DfResult<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: DfSchemaRef,
        ctx: &TaskContext,
    ) -> DfResult<Arc<dyn TableProvider>> {
        let Some(wire) = unframe::<WireTable>(TABLE_TAG, buf) else {
            return self
                .inner
                .try_decode_table_provider(buf, table_ref, schema, ctx);
        };
        let (wire, _) = wire?;
        let options = ReadOptions::from(wire.options);
        let handle = TableHandle::lazy(
            &wire.location,
            self.opener.clone(),
            options.use_metadata_table,
        );
        let shape = Some(file_scan_shape());
        let table = HudiTable::with_handle(Arc::new(handle), options, schema, shape);
        Ok(Arc::new(table.map_err(df_error)?))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> DfResult<()> {
        let Some(table) = node.downcast_ref::<HudiTable>() else {
            return self.inner.try_encode_table_provider(table_ref, node, buf);
        };
        let wire = WireTable {
            location: table.location().to_string(),
            options: WireOptions::from(table.options()),
        };
        frame(TABLE_TAG, &wire, &[], buf)
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> DfResult<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> DfResult<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    functions_from_inner!();
}

/// Carries [`HudiScanExec`]s with their planned slices; everything else goes to `inner`.
pub struct HudiPhysicalCodec {
    inner: Arc<dyn PhysicalExtensionCodec>,
    handles: Handles,
    on_task: Option<TaskLog>,
}

impl fmt::Debug for HudiPhysicalCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HudiPhysicalCodec")
    }
}

impl HudiPhysicalCodec {
    /// Decoded scans open their tables with `opener`, and call `on_task` (if any) with each
    /// partition they start reading.
    pub fn new(
        inner: Arc<dyn PhysicalExtensionCodec>,
        opener: Opener,
        on_task: Option<TaskLog>,
    ) -> Self {
        HudiPhysicalCodec {
            inner,
            handles: Handles {
                opener,
                open: Mutex::new(HashMap::new()),
            },
            on_task,
        }
    }
}

impl PhysicalExtensionCodec for HudiPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let Some(wire) = unframe::<WireScan>(SCAN_TAG, buf) else {
            return self.inner.try_decode(buf, inputs, ctx, proto_converter);
        };
        let (wire, plan) = wire?;
        let parts = ScanParts {
            plan: Plan::from_bytes(plan).map_err(df_error)?,
            options: ReadOptions::from(wire.options),
            groups: wire.groups,
            names: wire.names,
            schema: schema_of(&wire.schema)?,
            summary: wire.summary,
        };
        let table = self.handles.get(&wire.location);
        let scan = HudiScanExec::from_parts(table, parts, self.on_task.clone());
        Ok(Arc::new(scan.map_err(df_error)?))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DfResult<()> {
        let (scan, groups, limit) = match scan_of_file_scan(node.as_ref()) {
            Some(found) => found?,
            None => match node.downcast_ref::<HudiScanExec>() {
                Some(scan) => (scan, scan.groups().to_vec(), None),
                None => return self.inner.try_encode(node, buf, proto_converter),
            },
        };
        let mut options = WireOptions::from(scan.options());
        options.limit = match (options.limit, limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let wire = WireScan {
            location: scan.location().to_string(),
            options,
            groups,
            names: scan.names().to_vec(),
            schema: schema_text(&scan.schema())?,
            summary: scan.summary().to_string(),
        };
        let plan = scan.plan().to_bytes().map_err(df_error)?;
        frame(SCAN_TAG, &wire, &plan, buf)
    }

    functions_from_inner!();
}
