//! Merging a file slice: base rows plus log records, with Hudi's ordering rules (§6).

use arrow_array::RecordBatch;

use crate::error::{HudiError, Result};
use crate::file_group::FileSlice;
use crate::read::Plan;
use crate::table::Table;

/// Reads a slice with log files: its base file and log blocks merged by record key.
pub async fn read_merged_slice(
    _table: &Table,
    _plan: &Plan,
    slice: &FileSlice,
    _batch_size: usize,
) -> Result<Vec<RecordBatch>> {
    Err(HudiError::unsupported(format!(
        "merging log files (slice {} in {:?})",
        slice.file_id, slice.partition
    )))
}
