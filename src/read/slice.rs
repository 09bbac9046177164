//! Reading one planned file slice: its base file alone (row groups the filter may match),
//! or merged with its log files; then aligned to the read schema, filtered (the query's
//! filter and, for incremental queries, the commit range) and projected to the output.

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};

use super::{Plan, QueryType};
use crate::error::Result;
use crate::file_group::FileSlice;
use crate::meta_client::MetaClient;
use crate::schema::align;

/// What every slice of one plan shares.
pub(super) struct SliceReader {
    client: Arc<MetaClient>,
    plan: Arc<Plan>,
    /// Columns read from files: the output, the filter's and the commit time if incremental.
    needed: Vec<String>,
    /// The read schema restricted to `needed`.
    schema: SchemaRef,
    batch_size: usize,
    /// What Parquet row-group statistics may prune by (see [`super::plan::stats_filter`]).
    row_group_filter: Option<crate::expr::Expr>,
}

impl SliceReader {
    pub(super) fn new(client: Arc<MetaClient>, plan: Arc<Plan>, batch_size: usize) -> Self {
        let needed = plan.needed_columns();
        let schema = crate::schema::project_by_name(&plan.read_schema, &needed);
        let row_group_filter = match plan.partition_values_from_path {
            true => {
                (plan.filter.as_ref()).and_then(|f| super::plan::stats_filter(f, client.config()))
            }
            false => plan.filter.clone(),
        };
        let unstable = (plan.evolution.as_ref()).map(|e| e.unstable_columns());
        let row_group_filter = match unstable {
            Some(columns) if !columns.is_empty() => {
                row_group_filter.and_then(|f| f.without_columns(&columns))
            }
            _ => row_group_filter,
        };
        SliceReader {
            client,
            plan,
            needed,
            schema,
            batch_size,
            row_group_filter,
        }
    }

    /// The rows of slice `index` that the plan wants, batch by batch.
    pub(super) fn batches(
        self: &Arc<Self>,
        index: usize,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        let this = self.clone();
        let source = async move {
            let slice = &this.plan.file_slices[index];
            if this.plan.query == QueryType::ReadOptimized || slice.log_files.is_empty() {
                this.base_file(slice).await
            } else {
                crate::merge::merged_slice_stream(
                    &this.client,
                    &this.plan.read_schema,
                    &this.plan.visibility,
                    slice,
                    &this.needed,
                    this.batch_size,
                    this.plan.evolution.clone(),
                    (this.plan.incremental_commits.as_ref())
                        .filter(|_| this.plan.base_records_in_range),
                )
                .await
            }
        };
        let this = self.clone();
        stream::once(source)
            .try_flatten()
            .and_then(move |batch| futures::future::ready(this.finish(index, batch)))
            .try_filter(|b| futures::future::ready(b.num_rows() > 0))
            .boxed()
    }

    async fn base_file(
        &self,
        slice: &FileSlice,
    ) -> Result<BoxStream<'static, Result<RecordBatch>>> {
        let (Some(path), Some(base)) = (slice.base_path(), slice.base_file.as_ref()) else {
            return Ok(stream::empty().boxed());
        };
        let columns = match &self.plan.evolution {
            Some(e) => e.file_columns(&base.instant, &path)?,
            None => None,
        };
        let every_column = self.needed.len() == self.plan.read_schema.fields().len();
        let data_limit = crate::base_file::data_with_footer(every_column);
        let footer = self
            .client
            .footer_and_data(&path, slice.base_size(), data_limit)
            .await?;
        let row_groups =
            crate::base_file::matching_row_groups(&footer, self.row_group_filter.as_ref());
        crate::base_file::stream_row_groups_as(
            self.client.storage().clone(),
            &path,
            footer,
            row_groups,
            &self.needed,
            self.batch_size,
            columns,
        )
    }

    /// Aligns a slice's batch to the schema, applies the filter and the incremental commit
    /// range, and projects the output columns.
    fn finish(&self, index: usize, batch: RecordBatch) -> Result<RecordBatch> {
        let partition = &self.plan.file_slices[index].partition;
        let mut batch = align::to_schema(&batch, &self.schema, partition, self.client.config())?;
        if self.plan.partition_values_from_path {
            batch = align::partition_values_from_path(&batch, partition, self.client.config())?;
        }
        let mut mask = match &self.plan.filter {
            Some(f) => Some(f.evaluate(&batch)?),
            None => None,
        };
        if let Some(commits) = &self.plan.incremental_commits {
            let in_range = crate::merge::commit_time_mask(&batch, commits)?;
            mask = Some(match mask {
                Some(m) => {
                    arrow_arith::boolean::and(&m, &in_range).map_err(crate::error::malformed_by)?
                }
                None => in_range,
            });
        }
        let batch = match mask {
            Some(m) => arrow_select::filter::filter_record_batch(&batch, &m)
                .map_err(crate::error::malformed_by)?,
            None => batch,
        };
        align::project(&batch, &self.plan.output_schema)
    }
}
