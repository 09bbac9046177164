//! The engine-facing API: read one file slice given its base file and log files, as an
//! engine that planned elsewhere (or hudi-rs' file group reader users) would — the same
//! merge, filters and schema handling as a table read, without planning.

use std::sync::Arc;

use arrow_array::RecordBatch;
use futures::TryStreamExt;

use super::{Plan, PlanStats, QueryType, ReadOptions};
use crate::error::{HudiError, Result};
use crate::file_group::{BaseFile, FileSlice, LogFile};
use crate::table::Table;

impl Table {
    /// Reads the slice made of `base_file` (optional) and `log_files` (names inside
    /// `partition`), as of `options.as_of` (latest when absent).
    pub async fn read_file_slice(
        &self,
        partition: &str,
        base_file: Option<&str>,
        log_files: &[&str],
        options: &ReadOptions,
    ) -> Result<Vec<RecordBatch>> {
        let base = base_file
            .map(|n| {
                BaseFile::parse(n, 0)
                    .ok_or_else(|| HudiError::invalid(format!("{n:?} is not a base file name")))
            })
            .transpose()?;
        let mut logs: Vec<LogFile> = log_files
            .iter()
            .map(|n| {
                LogFile::parse(n, 0)
                    .ok_or_else(|| HudiError::invalid(format!("{n:?} is not a log file name")))
            })
            .collect::<Result<_>>()?;
        let timeline = self.timeline();
        let as_of = options
            .as_of
            .as_deref()
            .map(|t| super::plan::resolve_time(t, self.config().timezone))
            .transpose()?;
        let visibility = timeline.visibility_as_of(as_of.as_deref());
        for l in &mut logs {
            l.completion_time = visibility.completion_of(&l.instant).flatten();
        }
        logs.sort_by(|a, b| a.log_order(b));
        let file_id = base
            .as_ref()
            .map(|b| b.file_id.clone())
            .or_else(|| logs.first().map(|l| l.file_id.clone()));
        let Some(file_id) = file_id else {
            return Ok(Vec::new());
        };
        let slice = FileSlice {
            partition: partition.to_string(),
            file_id,
            base_instant: base.as_ref().map(|b| b.instant.clone()).unwrap_or_default(),
            base_file: base,
            log_files: logs,
        };
        let read_schema = self.read_schema(&visibility).await?;
        let output_schema = match &options.columns {
            Some(cols) => Arc::new(
                read_schema
                    .project(
                        &cols
                            .iter()
                            .map(|c| {
                                read_schema.index_of(c).map_err(|_| {
                                    HudiError::invalid(format!("unknown column {c:?}"))
                                })
                            })
                            .collect::<Result<Vec<_>>>()?,
                    )
                    .map_err(crate::error::malformed)?,
            ),
            None => read_schema.clone(),
        };
        let plan = Plan {
            query: if options.query == QueryType::ReadOptimized {
                QueryType::ReadOptimized
            } else {
                QueryType::Snapshot
            },
            as_of,
            start: None,
            end: None,
            file_slices: vec![slice.clone()],
            stats: PlanStats {
                planning_source: "caller".into(),
                ..Default::default()
            },
            io: Default::default(),
            incremental_commits: None,
            read_schema,
            output_schema,
            visibility,
        };
        self.slice_stream(&plan, &slice, options)
            .try_collect()
            .await
    }
}
