//! Queries: plan first (timeline → visible instants → file slices → pruning), then read
//! only what the plan selected. Every plan and read reports what it cost.
//!
//! Query types (Hudi's): `snapshot` (latest, or as of an instant = time travel),
//! `read_optimized` (base files only), `incremental` (records whose commit falls in
//! `(start, end]`; bounds are completion times for table versions 8+ and requested times
//! for version 6, as in Hudi 1.x).

pub mod align;
pub mod incremental;
pub mod parquet;
pub mod plan;
pub mod slice;

use arrow_array::{RecordBatch, StringArray};
use arrow_schema::SchemaRef;
use std::sync::Arc;

use futures::future::FutureExt;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};

pub use plan::{Plan, PlanStats};

use crate::error::{HudiError, Result};
use crate::expr::Expr;
use crate::file_group::FileSlice;
use crate::storage::IoSnapshot;
use crate::table::Table;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryType {
    #[default]
    Snapshot,
    ReadOptimized,
    Incremental,
}

impl QueryType {
    pub fn parse(s: &str) -> Result<QueryType> {
        match s.to_ascii_lowercase().replace('-', "_").as_str() {
            "snapshot" => Ok(QueryType::Snapshot),
            "read_optimized" | "ro" => Ok(QueryType::ReadOptimized),
            "incremental" | "incr" => Ok(QueryType::Incremental),
            other => Err(HudiError::invalid(format!(
                "unknown query type {other:?} (snapshot, read_optimized, incremental)"
            ))),
        }
    }
}

/// Everything a read can be asked: one bag shared by plan, read and stream.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    pub query: QueryType,
    /// Time travel: an instant (`yyyyMMddHHmmssSSS`) or ISO-8601 date/time.
    pub as_of: Option<String>,
    pub start: Option<String>,
    pub end: Option<String>,
    pub columns: Option<Vec<String>>,
    /// ANDed.
    pub filters: Vec<Expr>,
    pub limit: Option<usize>,
    /// Use the metadata table's indexes (column stats, partition stats, record index).
    pub data_skipping: bool,
    /// Use the metadata table's `files` partition instead of listing, when available.
    pub use_metadata_table: bool,
    pub batch_size: usize,
    /// How many files are read at once.
    pub concurrency: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            query: QueryType::Snapshot,
            as_of: None,
            start: None,
            end: None,
            columns: None,
            filters: Vec::new(),
            limit: None,
            data_skipping: true,
            use_metadata_table: true,
            batch_size: 8192,
            concurrency: 8,
        }
    }
}

impl ReadOptions {
    pub fn filter(&self) -> Option<Expr> {
        crate::expr::conjunction(&self.filters)
    }
}

/// Rows and what they cost.
#[derive(Debug, Clone)]
pub struct ReadResult {
    pub schema: SchemaRef,
    pub batches: Vec<RecordBatch>,
    pub plan: Plan,
    /// I/O of the data phase (the plan's own I/O is in `plan.io`).
    pub io: IoSnapshot,
}

impl ReadResult {
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }
}

/// Runs a task elsewhere — a thread pool natively. The core never spawns on its own (it
/// does no I/O and knows no runtime); a face that has threads hands one in.
pub trait Spawn: Send + Sync {
    fn spawn(&self, task: futures::future::BoxFuture<'static, ()>);
}

impl Table {
    /// Like [`Table::read_plan`], with each file slice read in a task of `spawner`, so slices
    /// decode and merge on several cores. At most `options.concurrency` slices run at once,
    /// each buffering at most two batches ahead.
    pub fn stream_parallel(
        self: &Arc<Self>,
        plan: Arc<Plan>,
        options: Arc<ReadOptions>,
        spawner: Arc<dyn Spawn>,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        let limit = options.limit.unwrap_or(usize::MAX);
        let mut seen = 0usize;
        let table = self.clone();
        let concurrency = options.concurrency.max(1);
        stream::iter(0..plan.file_slices.len())
            .map(move |i| {
                let (table, plan, options) = (table.clone(), plan.clone(), options.clone());
                let (mut tx, rx) = futures::channel::mpsc::channel(2);
                spawner.spawn(
                    async move {
                        let mut batches = table.slice_stream(&plan, &plan.file_slices[i], &options);
                        while let Some(b) = batches.next().await {
                            if futures::SinkExt::send(&mut tx, b).await.is_err() {
                                break;
                            }
                        }
                    }
                    .boxed(),
                );
                rx
            })
            .flatten_unordered(concurrency)
            .try_take_while(move |b| {
                let go = seen < limit;
                seen += b.num_rows();
                futures::future::ready(Ok(go))
            })
            .boxed()
    }

    pub async fn read(&self, options: &ReadOptions) -> Result<ReadResult> {
        let plan = self.plan(options).await?;
        let before = self.io();
        let batches: Vec<RecordBatch> = self.read_plan(&plan, options).try_collect().await?;
        let batches = apply_limit(batches, options.limit);
        Ok(ReadResult {
            schema: plan.output_schema.clone(),
            batches,
            io: self.io().since(&before),
            plan,
        })
    }

    /// Batches of a planned read: up to `options.concurrency` file slices are read at once,
    /// each one batch at a time, so memory stays bounded by a few slices' log records and a
    /// few batches. The stream ends early once `limit` rows came out.
    pub fn read_plan<'a>(
        &'a self,
        plan: &'a Plan,
        options: &'a ReadOptions,
    ) -> BoxStream<'a, Result<RecordBatch>> {
        let limit = options.limit.unwrap_or(usize::MAX);
        let mut seen = 0usize;
        stream::iter(plan.file_slices.iter())
            .map(move |slice| self.slice_stream(plan, slice, options))
            .flatten_unordered(options.concurrency.max(1))
            .try_take_while(move |b| {
                let go = seen < limit;
                seen += b.num_rows();
                futures::future::ready(Ok(go))
            })
            .boxed()
    }

    /// The rows of one file slice that the plan wants, aligned to the output schema, batch by batch.
    pub fn slice_stream<'a>(
        &'a self,
        plan: &'a Plan,
        slice: &'a FileSlice,
        options: &'a ReadOptions,
    ) -> BoxStream<'a, Result<RecordBatch>> {
        let filter = options.filter();
        let needed = plan.needed_columns(filter.as_ref());
        let schema = plan.read_schema_for(&needed);
        let source = async move {
            if plan.query == QueryType::ReadOptimized || slice.log_files.is_empty() {
                self.base_file_stream(slice, &needed, filter.as_ref(), options.batch_size)
                    .await
            } else {
                crate::merge::merged_slice_stream(self, plan, slice, &needed, options.batch_size)
                    .await
            }
        };
        let filter = options.filter();
        stream::once(source)
            .try_flatten()
            .and_then(move |batch| {
                let out = self.finish_batch(plan, slice, &schema, filter.as_ref(), batch);
                futures::future::ready(out)
            })
            .try_filter(|b| futures::future::ready(b.num_rows() > 0))
            .boxed()
    }

    /// All rows of one file slice (collected).
    pub async fn read_slice(
        &self,
        plan: &Plan,
        slice: &FileSlice,
        options: &ReadOptions,
    ) -> Result<Vec<RecordBatch>> {
        self.slice_stream(plan, slice, options).try_collect().await
    }

    /// Aligns a slice's batch to the schema, applies the filter and the incremental commit
    /// range, and projects the output columns.
    fn finish_batch(
        &self,
        plan: &Plan,
        slice: &FileSlice,
        schema: &arrow_schema::SchemaRef,
        filter: Option<&Expr>,
        batch: RecordBatch,
    ) -> Result<RecordBatch> {
        let batch = align::to_schema(&batch, schema, &slice.partition, self.config())?;
        let mut mask = match filter {
            Some(f) => Some(f.evaluate(&batch)?),
            None => None,
        };
        if let Some(commits) = &plan.incremental_commits {
            let in_range = commit_time_mask(&batch, commits)?;
            mask = Some(match mask {
                Some(m) => {
                    arrow_arith::boolean::and(&m, &in_range).map_err(crate::error::malformed)?
                }
                None => in_range,
            });
        }
        let batch = match mask {
            Some(m) => arrow_select::filter::filter_record_batch(&batch, &m)
                .map_err(crate::error::malformed)?,
            None => batch,
        };
        align::project(&batch, &plan.output_schema)
    }

    async fn base_file_stream(
        &self,
        slice: &FileSlice,
        needed: &[String],
        filter: Option<&Expr>,
        batch_size: usize,
    ) -> Result<BoxStream<'static, Result<RecordBatch>>> {
        let Some(path) = slice.base_path() else {
            return Ok(stream::empty().boxed());
        };
        let footer = self.footer(&path).await?;
        let row_groups = parquet::matching_row_groups(&footer, filter);
        parquet::stream_row_groups(
            self.storage().clone(),
            &path,
            footer,
            row_groups,
            Some(needed),
            batch_size,
        )
    }
}

fn commit_time_mask(
    batch: &RecordBatch,
    commits: &std::collections::HashSet<String>,
) -> Result<arrow_array::BooleanArray> {
    let col = batch
        .column_by_name(crate::schema::COMMIT_TIME)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| {
            HudiError::unsupported("incremental queries on tables without _hoodie_commit_time")
        })?;
    Ok(col
        .iter()
        .map(|v| Some(v.is_some_and(|t| commits.contains(t))))
        .collect())
}

fn apply_limit(batches: Vec<RecordBatch>, limit: Option<usize>) -> Vec<RecordBatch> {
    let Some(limit) = limit else { return batches };
    let mut left = limit;
    let mut out = Vec::new();
    for b in batches {
        if left == 0 {
            break;
        }
        let take = b.num_rows().min(left);
        left -= take;
        out.push(if take == b.num_rows() {
            b
        } else {
            b.slice(0, take)
        });
    }
    out
}

/// Progress of a scan: the table's requests/bytes since the scan started, data files (base
/// and log) of the file slices done / total.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct ScanProgress {
    pub requests: u64,
    pub bytes: u64,
    pub files_done: usize,
    pub files_total: usize,
}

/// The rows of a plan, batch by batch, with the limit applied.
pub struct Scan {
    schema: SchemaRef,
    table: Arc<Table>,
    start: IoSnapshot,
    /// Each slice's batches and its number of data files.
    slices: BoxStream<'static, Result<(Vec<RecordBatch>, usize)>>,
    ready: std::collections::VecDeque<RecordBatch>,
    files_done: usize,
    files_total: usize,
    left: usize,
}

impl Scan {
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    pub fn progress(&self) -> ScanProgress {
        let io = self.table.io().since(&self.start);
        ScanProgress {
            requests: io.requests,
            bytes: io.bytes,
            files_done: self.files_done,
            files_total: self.files_total,
        }
    }

    pub async fn next(&mut self) -> Option<Result<RecordBatch>> {
        while self.left > 0 {
            if let Some(b) = self.ready.pop_front() {
                let take = b.num_rows().min(self.left);
                self.left -= take;
                return Some(Ok(if take == b.num_rows() {
                    b
                } else {
                    b.slice(0, take)
                }));
            }
            match self.slices.next().await? {
                Ok((batches, files)) => {
                    self.files_done += files;
                    self.ready.extend(batches);
                }
                Err(e) => {
                    self.left = 0;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}

/// Reads `plan`'s file slices, `options.concurrency` at a time, in plan order.
pub fn scan(table: Arc<Table>, plan: Arc<Plan>, options: &ReadOptions) -> Scan {
    let left = options.limit.unwrap_or(usize::MAX);
    let options = Arc::new(options.clone());
    let concurrency = options.concurrency.max(1);
    let base_only = plan.query == QueryType::ReadOptimized;
    let files = move |s: &FileSlice| {
        let logs = if base_only { 0 } else { s.log_files.len() };
        s.base_file.iter().count() + logs
    };
    let (t, p) = (table.clone(), plan.clone());
    let slices = stream::iter(0..plan.file_slices.len())
        .map(move |i| {
            let (t, p, o) = (t.clone(), p.clone(), options.clone());
            async move {
                let slice = &p.file_slices[i];
                let batches = t.read_slice(&p, slice, &o).await?;
                Ok((batches, files(slice)))
            }
        })
        .buffered(concurrency)
        .boxed();
    Scan {
        schema: plan.output_schema.clone(),
        start: table.io(),
        table,
        slices,
        ready: Default::default(),
        files_done: 0,
        files_total: plan.file_slices.iter().map(files).sum(),
        left,
    }
}
