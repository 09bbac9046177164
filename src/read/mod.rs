//! Queries: plan first (timeline → visible instants → file slices → pruning), then read
//! only what the plan selected. Every plan and read reports what it cost.
//!
//! Query types (Hudi's): `snapshot` (latest, or as of an instant = time travel),
//! `read_optimized` (base files only), `incremental` (records whose commit falls in
//! `(start, end]`; bounds are completion times for table versions 8+ and requested times
//! for version 6, as in Hudi 1.x).

pub mod align;
pub mod options;
pub mod parquet;
pub mod plan;

use arrow_array::{RecordBatch, StringArray};
use arrow_schema::SchemaRef;
use futures::stream::{self, StreamExt, TryStreamExt};
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

impl Table {
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

    /// Batches of a planned read, file slices read `options.concurrency` at a time. The
    /// stream ends early once `limit` rows came out.
    pub fn read_plan<'a>(
        &'a self,
        plan: &'a Plan,
        options: &'a ReadOptions,
    ) -> impl futures::Stream<Item = Result<RecordBatch>> + 'a {
        let limit = options.limit.unwrap_or(usize::MAX);
        let mut seen = 0usize;
        stream::iter(plan.file_slices.iter())
            .map(move |slice| self.read_slice(plan, slice, options))
            .buffered(options.concurrency.max(1))
            .map_ok(|batches| stream::iter(batches.into_iter().map(Ok)))
            .try_flatten()
            .try_take_while(move |b| {
                let go = seen < limit;
                seen += b.num_rows();
                futures::future::ready(Ok(go))
            })
    }

    /// All rows of one file slice that the plan wants, aligned to the output schema.
    pub async fn read_slice(
        &self,
        plan: &Plan,
        slice: &FileSlice,
        options: &ReadOptions,
    ) -> Result<Vec<RecordBatch>> {
        let filter = options.filter();
        let needed = plan.needed_columns(filter.as_ref());
        let merged = if plan.query == QueryType::ReadOptimized || slice.log_files.is_empty() {
            self.read_base_file(slice, &needed, filter.as_ref(), options.batch_size)
                .await?
        } else {
            crate::merge::read_merged_slice(self, plan, slice, &needed, options.batch_size).await?
        };
        let mut out = Vec::with_capacity(merged.len());
        for batch in merged {
            let batch = align::to_schema(
                &batch,
                &plan.read_schema_for(&needed),
                &slice.partition,
                self.config(),
            )?;
            let mut mask = match &filter {
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
            if batch.num_rows() > 0 {
                out.push(align::project(&batch, &plan.output_schema)?);
            }
        }
        Ok(out)
    }

    async fn read_base_file(
        &self,
        slice: &FileSlice,
        needed: &[String],
        filter: Option<&Expr>,
        batch_size: usize,
    ) -> Result<Vec<RecordBatch>> {
        let Some(path) = slice.base_path() else {
            return Ok(Vec::new());
        };
        let footer = self.footer(&path).await?;
        let row_groups = parquet::matching_row_groups(&footer, filter);
        parquet::read_row_groups(
            self.storage().clone(),
            &path,
            footer,
            row_groups,
            Some(needed),
            batch_size,
        )
        .await
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
