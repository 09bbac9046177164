//! The log side of a merge: a slice's log blocks scanned in log order into the winning
//! version of every key they touch (rolled-back, uncommitted and compacted blocks skipped),
//! then base batches merged against it and the log-only records emitted.

use std::collections::HashSet;
use std::sync::Arc;

use hashbrown::HashMap;

use arrow_array::{Array, RecordBatch};

use super::ordering::{key_of, OrderKey};
use super::{newer_wins, Kind, MergeColumns, MergeRule, Version};
use crate::error::{HudiError, Result};
use crate::log_file::{BlockType, LogBlock, LogFileBlocks};
use crate::meta_client::MetaClient;
use crate::schema::evolution::{FileColumns, SchemaEvolution};
use crate::timeline::{compare_instant_times, Visibility};

/// Counts of what a slice's logs held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LogScanStats {
    pub log_files: usize,
    pub blocks: usize,
    pub corrupt_blocks: usize,
    pub rolled_back_blocks: usize,
    pub skipped_blocks: usize,
    pub records: usize,
    pub deletes: usize,
    /// Base rows a log version replaced, and base rows a log delete dropped (compaction
    /// reports them).
    pub base_updated: usize,
    pub base_deleted: usize,
    /// Log records no base row held (inserts into log files), emitted after the base rows.
    pub log_only: usize,
}

/// The winning log version of every key the slice's logs touch.
pub struct LogRecordBuffer {
    rule: MergeRule,
    columns: MergeColumns,
    batches: Vec<RecordBatch>,
    versions: HashMap<String, Version>,
    pub stats: LogScanStats,
    /// Column ids (schema evolution on read): blocks map their columns through them.
    pub evolution: Option<Arc<SchemaEvolution>>,
}

impl LogRecordBuffer {
    pub fn new(rule: MergeRule, columns: MergeColumns) -> Self {
        LogRecordBuffer {
            rule,
            columns,
            batches: Vec::new(),
            versions: HashMap::new(),
            stats: LogScanStats::default(),
            evolution: None,
        }
    }

    fn offer(&mut self, key: &str, v: Version) {
        match self.versions.get_mut(key) {
            Some(old) => {
                if newer_wins(self.rule, old, &v) {
                    *old = v;
                }
            }
            None => {
                self.versions.insert(key.to_string(), v);
            }
        }
    }

    /// Adds a data batch (already in the merge schema), rows in write order.
    pub fn add_data(&mut self, batch: RecordBatch) -> Result<()> {
        let keys = self.columns.keys(&batch)?;
        let ordering = self.columns.ordering_columns(&batch);
        let deleted = self.columns.delete_flags(&batch);
        let at = self.batches.len() as u32;
        for row in 0..keys.len() {
            let Some(key) = keys.get(row) else { continue };
            let is_delete = deleted
                .as_ref()
                .is_some_and(|d| d.is_valid(row) && d.value(row));
            let kind = if is_delete {
                Kind::OrderedDelete
            } else {
                Kind::Data
            };
            self.stats.records += 1;
            self.offer(
                key,
                Version {
                    at: (at, row as u32),
                    order: key_of(&ordering, row),
                    kind,
                },
            );
        }
        self.batches.push(batch);
        Ok(())
    }

    pub fn add_deletes(&mut self, deletes: &[crate::log_file::DeleteRecord]) {
        for d in deletes {
            let Some(key) = &d.record_key else { continue };
            self.stats.deletes += 1;
            let kind = if d.ordering.is_natural_order() {
                Kind::CommitTimeDelete
            } else {
                Kind::OrderedDelete
            };
            self.offer(
                key,
                Version {
                    at: (u32::MAX, 0),
                    order: OrderKey::of_delete(&d.ordering),
                    kind,
                },
            );
        }
    }

    pub fn is_empty(&self) -> bool {
        self.versions.is_empty()
    }

    /// Scans the blocks of a slice's log files (in log order) into the buffer.
    pub async fn scan(
        &mut self,
        client: &MetaClient,
        logs: &[LogFileBlocks],
        visibility: &Visibility,
    ) -> Result<()> {
        // A command written after the instant the read is as of is not applied (as in Hudi).
        let as_of = visibility.reads_as_of();
        let rolled_back: HashSet<&str> = logs
            .iter()
            .flat_map(|l| l.valid_blocks())
            .filter(|b| b.block_type == BlockType::Command)
            .filter(|b| {
                let after = b.instant_time().zip(as_of);
                !after.is_some_and(|(t, u)| compare_instant_times(t, u).is_gt())
            })
            .filter_map(|b| b.rollback_target())
            .collect();
        let compacted: HashSet<String> = logs
            .iter()
            .flat_map(|l| l.valid_blocks())
            .filter(|b| b.instant_time().is_some_and(|t| visibility.is_committed(t)))
            .flat_map(|b| b.compacted_block_times().into_iter().map(str::to_string))
            .collect();
        self.stats.log_files += logs.len();
        for log in logs {
            let corrupt = log.corrupt_block_count();
            if corrupt > 0 {
                // Skipped as Hudi skips them, but never silently.
                client.warn(format!(
                    "{}: {corrupt} corrupt log block(s) skipped, as Hudi does",
                    log.path
                ));
            }
            self.stats.corrupt_blocks += corrupt;
            for block in log.valid_blocks() {
                self.stats.blocks += 1;
                let Some(instant) = block.instant_time() else {
                    return Err(HudiError::corrupt(
                        block.path(),
                        format!("log block at offset {} has no instant time", block.offset),
                    ));
                };
                if block.block_type == BlockType::Command {
                    continue;
                }
                if rolled_back.contains(instant) {
                    self.stats.rolled_back_blocks += 1;
                    continue;
                }
                if !visibility.is_committed(instant)
                    || (compacted.contains(instant) && block.compacted_block_times().is_empty())
                {
                    self.stats.skipped_blocks += 1;
                    continue;
                }
                self.add_block(client, block).await?;
            }
        }
        Ok(())
    }

    /// How a data block's columns map to the read's (schema evolution on read), by the
    /// instant that wrote it.
    fn file_columns(&self, block: &LogBlock) -> Result<Option<Arc<FileColumns>>> {
        match (&self.evolution, block.instant_time()) {
            (Some(e), Some(instant)) => e.file_columns(instant, block.path()),
            _ => Ok(None),
        }
    }

    async fn add_block(&mut self, client: &MetaClient, block: &LogBlock) -> Result<()> {
        if block.is_partial() {
            return Err(HudiError::unsupported_in(
                "partial-update log blocks (IS_PARTIAL)",
                block.path(),
            ));
        }
        let storage = client.storage().as_ref();
        match block.block_type {
            BlockType::AvroData => {
                let target = self.columns.schema.clone();
                let batch = match self.file_columns(block)? {
                    Some(c) => FileColumns::renamed_back(
                        block
                            .avro_batch(storage, Some(c.file_side(&target)))
                            .await?,
                        &target,
                    )?,
                    None => block.avro_batch(storage, Some(target)).await?,
                };
                self.add_data(batch)
            }
            BlockType::ParquetData => {
                let columns = self.file_columns(block)?;
                for b in block.parquet_batches(storage).await? {
                    let b = match &columns {
                        Some(c) => c.to_read_names(&b)?,
                        None => b,
                    };
                    let aligned = crate::schema::align::to_schema(
                        &b,
                        &self.columns.schema,
                        "",
                        client.config(),
                    )?;
                    self.add_data(aligned)?;
                }
                Ok(())
            }
            BlockType::Delete => {
                let deletes = block.delete_records(storage).await?;
                self.add_deletes(&deletes);
                Ok(())
            }
            BlockType::CdcData => Ok(()),
            BlockType::HFileData => Err(HudiError::unsupported_in(
                "HFile data blocks in a data table",
                block.path(),
            )),
            BlockType::Command | BlockType::Corrupt => Ok(()),
        }
    }

    /// Merges one base batch (in the merge schema) with the buffer, consuming matched keys.
    pub fn merge_base(&mut self, base: &RecordBatch) -> Result<RecordBatch> {
        if self.versions.is_empty() {
            return Ok(base.clone());
        }
        let keys = self.columns.keys(base)?;
        let ordering = self.columns.ordering_columns(base);
        // Source 0 is the base batch, source i + 1 the i-th log batch.
        let mut picks: Vec<(usize, usize)> = Vec::with_capacity(base.num_rows());
        for row in 0..keys.len() {
            let log = keys.get(row).and_then(|k| self.versions.remove(k));
            match log {
                None => picks.push((0, row)),
                Some(v) => {
                    let base_version = Version {
                        at: (0, 0),
                        order: key_of(&ordering, row),
                        kind: Kind::Data,
                    };
                    let log_wins = match self.rule {
                        MergeRule::CommitTime | MergeRule::LegacyOverwrite => true,
                        MergeRule::EventTime => newer_wins(self.rule, &base_version, &v),
                    };
                    match (log_wins, v.kind) {
                        (false, _) => picks.push((0, row)),
                        (true, Kind::Data) => {
                            self.stats.base_updated += 1;
                            picks.push((v.at.0 as usize + 1, v.at.1 as usize))
                        }
                        (true, _) => self.stats.base_deleted += 1,
                    }
                }
            }
        }
        self.assemble(Some(base), &picks)
    }

    /// Records only the logs hold (inserts into logs), minus deletes, in batches of `batch_size`.
    pub fn remaining(mut self, batch_size: usize) -> Result<Vec<RecordBatch>> {
        let mut picks: Vec<(usize, usize)> = self
            .versions
            .drain()
            .filter(|(_, v)| v.kind == Kind::Data)
            .map(|(_, v)| (v.at.0 as usize + 1, v.at.1 as usize))
            .collect();
        picks.sort_unstable();
        picks
            .chunks(batch_size.max(1))
            .map(|chunk| self.assemble(None, chunk))
            .collect()
    }

    fn assemble(
        &self,
        base: Option<&RecordBatch>,
        picks: &[(usize, usize)],
    ) -> Result<RecordBatch> {
        let schema = &self.columns.schema;
        let empty;
        let base = match base {
            Some(b) => b,
            None => {
                empty = RecordBatch::new_empty(schema.clone());
                &empty
            }
        };
        if picks.len() == base.num_rows() && picks.iter().enumerate().all(|(i, p)| *p == (0, i)) {
            return Ok(base.clone());
        }
        let mut columns = Vec::with_capacity(schema.fields().len());
        for i in 0..schema.fields().len() {
            let mut sources: Vec<&dyn Array> = Vec::with_capacity(self.batches.len() + 1);
            sources.push(base.column(i).as_ref());
            sources.extend(self.batches.iter().map(|b| b.column(i).as_ref()));
            columns.push(
                arrow_select::interleave::interleave(&sources, picks)
                    .map_err(crate::error::malformed_by)?,
            );
        }
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(picks.len()));
        RecordBatch::try_new_with_options(schema.clone(), columns, &options)
            .map_err(crate::error::malformed_by)
    }
}
