//! A scan's statistics for DataFusion's optimizer (answering `COUNT(*)`, `MIN`, `MAX` without a
//! read; join order), from the metadata table's `column_stats` of the files its plan selected.
//!
//! Asked for by scans without a pushed filter or limit. `Exact` only where the files are
//! exactly what the scan returns: every selected slice a base file alone (or a read-optimized
//! read), not incremental, every file with a record. Otherwise `Inexact`: log files count
//! updates again and keep deleted rows' bounds, and an incremental read returns only the
//! rows of its commits. Bounds are exact only for types whose records convert without rounding
//! (integers, strings, booleans, dates): a decimal or timestamp of another scale or unit is
//! widened, and float records leave out NaN.

use arrow_array::Array;
use arrow_schema::DataType;
use datafusion::arrow::datatypes::SchemaRef as DfSchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, ScalarValue, Statistics};

use super::ffi;
use crate::error::Result;
use crate::expr::stats::StatsSource;
use crate::metadata::skipping::FileStats;
use crate::metadata::table::COLUMN_STATS;
use crate::read::{Plan, QueryType};
use crate::table::Table;

/// One column's statistics per file, in DataFusion's arrays.
#[derive(Debug)]
struct ColumnFiles {
    min: datafusion::arrow::array::ArrayRef,
    max: datafusion::arrow::array::ArrayRef,
    nulls: Vec<Option<u64>>,
    values: Vec<Option<u64>>,
    /// Files without a usable record for the column.
    unknown: Vec<bool>,
    exact_bounds: bool,
}

/// What the metadata table says of a scan's files, ready to sum over any group of slices.
#[derive(Debug)]
pub(super) struct ScanStats {
    /// Each file: its slice and whether it is the base file.
    files: Vec<(usize, bool)>,
    /// Rows of each file, from any column's record.
    rows: Vec<Option<u64>>,
    /// The scan's output columns, `None` where the metadata table has nothing for one.
    columns: Vec<Option<ColumnFiles>>,
    /// Whether the files are exactly the rows the scan returns (see the module's note).
    whole: bool,
    /// Log files are not read.
    read_optimized: bool,
}

impl ScanStats {
    /// The `column_stats` of the plan's files for `names` (the output columns) and `read`
    /// (what the scan reads: a count reads one column). `None` where the plan did not come
    /// from a metadata table with column statistics.
    pub(super) async fn load(
        table: &Table,
        plan: &Plan,
        names: &[String],
        read: &[String],
    ) -> Result<Option<ScanStats>> {
        if plan.stats.planning_source != "metadata_table" || plan.file_slices.is_empty() {
            return Ok(None);
        }
        let mdt = table.metadata_table(&[]).await?;
        if !mdt.has_partition(COLUMN_STATS) {
            return Ok(None);
        }
        let mut wanted: Vec<&str> = names.iter().chain(read).map(String::as_str).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let schema = &plan.output_schema;
        let found = mdt.file_stats(&plan.file_slices, &wanted, schema).await?;
        // Partition columns show the partition path's values, which no file record holds.
        let partition_fields = &table.config().partition_fields;
        let columns = (names.iter())
            .map(|n| match partition_fields.contains(n) {
                true => Ok(None),
                false => column_files(&found, n, schema),
            })
            .collect::<Result<Vec<_>>>()?;
        let mut rows = vec![None; found.files.len()];
        for (name, batch) in &found.columns {
            let Some(counts) = batch.column(name).and_then(|c| c.row_count) else {
                continue;
            };
            for (f, n) in rows.iter_mut().enumerate() {
                if n.is_none() && !batch.unknown[f] && counts.is_valid(f) {
                    *n = Some(counts.value(f));
                }
            }
        }
        let read_optimized = plan.query == QueryType::ReadOptimized;
        let base_only = read_optimized || plan.file_slices.iter().all(|s| s.log_files.is_empty());
        Ok(Some(ScanStats {
            files: found.files,
            rows,
            columns,
            whole: base_only && plan.query != QueryType::Incremental,
            read_optimized,
        }))
    }

    /// The statistics of the slices `slices` (all when `None`), in `schema` (the output's).
    pub(super) fn statistics(&self, slices: Option<&[usize]>, schema: &DfSchemaRef) -> Statistics {
        let files: Vec<usize> = (0..self.files.len())
            .filter(|&f| slices.is_none_or(|s| s.contains(&self.files[f].0)))
            .filter(|&f| self.files[f].1 || !self.read_optimized)
            .collect();
        let rows: Option<u64> = files.iter().map(|&f| self.rows[f]).sum();
        let num_rows = match rows.and_then(|r| usize::try_from(r).ok()) {
            Some(r) => precision(self.whole, r),
            None => Precision::Absent,
        };
        let mut stats = Statistics::new_unknown(schema).with_num_rows(num_rows);
        for (out, column) in stats.column_statistics.iter_mut().zip(&self.columns) {
            if let Some(c) = column {
                *out = c.statistics(&files, self.whole);
            }
        }
        stats
    }
}

fn column_files(
    found: &FileStats,
    name: &str,
    schema: &arrow_schema::Schema,
) -> Result<Option<ColumnFiles>> {
    let Some((_, batch)) = found.columns.iter().find(|(c, _)| c == name) else {
        return Ok(None);
    };
    let Some(stats) = batch.column(name) else {
        return Ok(None);
    };
    let data_type = schema.field_with_name(name).map(|f| f.data_type().clone());
    let exact_bounds = data_type.is_ok_and(|t| {
        t.is_integer()
            || matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
            || matches!(t, DataType::Boolean | DataType::Date32)
    });
    let count = |counts: &Option<arrow_array::UInt64Array>, f: usize| {
        let counts = counts.as_ref()?;
        counts.is_valid(f).then(|| counts.value(f))
    };
    let nulls = (0..batch.containers())
        .map(|f| count(&stats.null_count, f))
        .collect();
    let values = (0..batch.containers())
        .map(|f| count(&stats.row_count, f))
        .collect();
    Ok(Some(ColumnFiles {
        min: ffi::array_into_df(stats.min)?,
        max: ffi::array_into_df(stats.max)?,
        nulls,
        values,
        unknown: batch.unknown.clone(),
        exact_bounds,
    }))
}

impl ColumnFiles {
    fn statistics(&self, files: &[usize], whole: bool) -> ColumnStatistics {
        let mut out = ColumnStatistics::new_unknown();
        if files.iter().any(|&f| self.unknown[f]) {
            return out;
        }
        let nulls: Option<u64> = files.iter().map(|&f| self.nulls[f]).sum();
        if let Some(n) = nulls.and_then(|n| usize::try_from(n).ok()) {
            out.null_count = precision(whole, n);
        }
        let exact = whole && self.exact_bounds;
        let bound = |array: &datafusion::arrow::array::ArrayRef, keep: std::cmp::Ordering| {
            let mut best: Option<ScalarValue> = None;
            for &f in files {
                let Ok(v) = ScalarValue::try_from_array(array, f) else {
                    return Precision::Absent;
                };
                if v.is_null() {
                    // No bound: fine where the file's values are all null, unknown otherwise
                    // (a writer may leave out statistics of long values).
                    match self.nulls[f].is_some() && self.nulls[f] == self.values[f] {
                        true => continue,
                        false => return Precision::Absent,
                    }
                }
                match &best {
                    Some(b) if v.partial_cmp(b) != Some(keep) => {}
                    _ => best = Some(v),
                }
            }
            best.map_or(Precision::Absent, |v| precision(exact, v))
        };
        out.min_value = bound(&self.min, std::cmp::Ordering::Less);
        out.max_value = bound(&self.max, std::cmp::Ordering::Greater);
        out
    }
}

fn precision<T: std::fmt::Debug + Clone + PartialEq + Eq + PartialOrd>(
    exact: bool,
    v: T,
) -> Precision<T> {
    match exact {
        true => Precision::Exact(v),
        false => Precision::Inexact(v),
    }
}
