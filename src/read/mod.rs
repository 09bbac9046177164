//! Queries: plan first (timeline → visible instants → file slices → pruning), then read
//! only what the plan selected. Every plan and read reports what it cost.
//!
//! Query types (Hudi's): `snapshot` (latest, or as of an instant = time travel),
//! `read_optimized` (base files only), `incremental` (records whose commit falls in
//! `(start, end]`; bounds are completion times for table versions 8+ and requested times
//! for version 6, as in Hudi 1.x).

pub mod cdc;
pub mod incremental;
pub mod plan;
pub mod scan;
mod slice;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use serde::{Deserialize, Serialize};

pub use plan::{plan, Plan, PlanStats};
pub use scan::{Scan, ScanProgress, Spawner};

use crate::error::{HudiError, Result};
use crate::expr::Expr;
use crate::storage::IoSnapshot;

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
    /// How many file slices are read at once; more while small (`read_ahead_bytes`).
    pub concurrency: usize,
    /// Slices beyond `concurrency` start early while the base files being read alone (their
    /// sizes, an upper bound of what they fetch) stay within this, up to 64 and no more than
    /// the store sends at once; 0: never. Where column statistics expect few of a file's rows
    /// to match and footers' lengths are known, its fetched bytes and that share of its rows
    /// count instead, up to 128. Slices merged with log files never start early (a merge
    /// holds its records decoded), nor any under a `limit`.
    pub read_ahead_bytes: u64,
    /// Where each file slice is read and decoded; `None` reads them all on the caller's
    /// task (wasm has one thread).
    pub spawner: Option<scan::Spawner>,
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
            read_ahead_bytes: 32 * 1024 * 1024,
            spawner: None,
        }
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
