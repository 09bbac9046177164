//! Reading one shard (file slice) of the metadata table: its base HFile and log files,
//! opened once per table handle, and the records a lookup finds in them in merge order.

use std::collections::HashSet;
use std::sync::Arc;

use futures::future::try_join_all;

use super::{lock, mdt_path, BaseFile, MetadataTable, BLOCK_GAP};
use crate::error::{HudiError, Result};
use crate::file_group::FileSlice;
use crate::hfile::{HFileReader, OpenOptions};
use crate::metadata::compact::MergedSlice;
use crate::metadata::log_blocks::{self, Block, Content};
use crate::metadata::lookup::{Fold, Lookup, Records};
use crate::metadata::records::RecordDecoder;
use crate::storage::join;

impl MetadataTable {
    /// The blocks of a slice's log files that count, in log order: of valid instants, and
    /// not voided by a rollback block in any of the slice's log files.
    pub(super) fn live_blocks<'a>(
        &self,
        logs: impl Iterator<Item = &'a [Block]>,
    ) -> Vec<&'a Block> {
        let blocks: Vec<&Block> = logs
            .flat_map(|l| l.iter())
            .filter(|b| b.instant.as_ref().is_none_or(|i| self.valid.contains(i)))
            .collect();
        let rolled_back: HashSet<&str> = blocks
            .iter()
            .filter_map(|b| match &b.content {
                Content::Rollback { target } => Some(target.as_str()),
                _ => None,
            })
            .collect();
        blocks
            .into_iter()
            .filter(|b| {
                !b.instant
                    .as_deref()
                    .is_some_and(|i| rolled_back.contains(i))
            })
            .collect()
    }

    /// One shard's records for `lookup`: the base file's, then each valid log block's.
    pub(super) async fn slice_records(
        &self,
        slice: &FileSlice,
        lookup: Lookup<'_>,
    ) -> Result<Records> {
        self.slice_records_counted(slice, lookup, None).await
    }

    pub(super) async fn slice_records_counted(
        &self,
        slice: &FileSlice,
        lookup: Lookup<'_>,
        mut counts: Option<&mut MergedSlice>,
    ) -> Result<Records> {
        let (base, logs) = self.open_slice(slice).await?;
        let mut fold = Fold::default();
        if let Some((reader, decoder)) = base {
            let decoded = decoder.decode_each(&lookup.cells(&reader).await?);
            if let (Some(c), Ok(d)) = (counts.as_deref_mut(), &decoded) {
                c.base_keys = d.iter().map(|(k, _)| k.clone()).collect();
            }
            fold.apply(
                decoded.map_err(|e| e.in_file(reader.path()))?,
                reader.path(),
            );
        }
        let blocks = self.live_blocks(logs.iter().map(|l| l.as_slice()));
        for block in blocks {
            if let Some(c) = counts.as_deref_mut() {
                c.log_blocks += 1;
            }
            match &block.content {
                Content::HFile { reader, schema } => {
                    let decoder = self.decoder(schema.as_deref(), reader)?;
                    let decoded = decoder.decode_each(&lookup.cells(reader).await?);
                    if let (Some(c), Ok(d)) = (counts.as_deref_mut(), &decoded) {
                        c.log_records += d.len() as u64;
                    }
                    fold.apply(
                        decoded.map_err(|e| e.in_file(reader.path()))?,
                        reader.path(),
                    );
                }
                Content::Delete(keys) => {
                    if let Some(c) = counts.as_deref_mut() {
                        c.log_records += keys.len() as u64;
                    }
                    keys.iter()
                        .filter(|k| lookup.matches(k))
                        .for_each(|k| fold.delete(k))
                }
                Content::Rollback { .. } | Content::Other => {}
            }
        }
        Ok(fold.into_records())
    }

    /// A shard's base HFile (opened: its tail read) and its log files' blocks, all at once.
    async fn open_slice(
        &self,
        slice: &FileSlice,
    ) -> Result<(Option<BaseFile>, Vec<Arc<Vec<Block>>>)> {
        let base = async {
            match &slice.base_file {
                Some(b) => self
                    .base(&mdt_path(&join(&slice.partition, &b.name)), b.size)
                    .await
                    .map(Some),
                None => Ok(None),
            }
        };
        let logs = try_join_all(
            slice
                .log_files
                .iter()
                .map(|l| self.log(mdt_path(&join(&slice.partition, &l.name)), l.size)),
        );
        futures::future::try_join(base, logs).await
    }

    /// Opens every shard of `partition` ahead of its lookups (base tails and log files,
    /// cached), so that a lookup issued once the data files are known needs only data blocks.
    pub async fn open_shards(&self, partition: &str) -> Result<()> {
        let shards = self.shards(partition).await?;
        try_join_all(shards.iter().map(|s| self.open_slice(s))).await?;
        Ok(())
    }

    /// An MDT base HFile, opened once (its size is known, so the tail is one ranged read).
    pub(super) async fn base(&self, path: &str, size: u64) -> Result<BaseFile> {
        if let Some(b) = lock(&self.bases).get(path) {
            return Ok(b.clone());
        }
        let opts = OpenOptions {
            file_size: Some(size),
            ..OpenOptions::default()
        };
        let reader = HFileReader::open_with(self.storage.clone(), path, opts)
            .await?
            .with_coalesce_gap(BLOCK_GAP);
        let decoder = self.decoder(None, &reader)?;
        lock(&self.bases).insert(path.to_string(), (reader.clone(), decoder.clone()));
        Ok((reader, decoder))
    }

    /// A log file's blocks, read once.
    pub(super) async fn log(&self, path: String, size: u64) -> Result<Arc<Vec<Block>>> {
        if let Some(b) = lock(&self.logs).get(&path) {
            return Ok(b.clone());
        }
        let blocks = Arc::new(log_blocks::read(self.storage.as_ref(), &path, size).await?);
        lock(&self.logs).insert(path, blocks.clone());
        Ok(blocks)
    }

    /// A decoder for a writer schema (a log block's `SCHEMA` header, else the HFile's own),
    /// shared by every file that carries the same schema. Errors name the file through
    /// `in_file`.
    pub(super) fn decoder(
        &self,
        schema: Option<&str>,
        reader: &HFileReader,
    ) -> Result<Arc<RecordDecoder>> {
        let schema = schema
            .or_else(|| reader.file_info().schema())
            .ok_or_else(|| {
                HudiError::corrupt(
                    reader.path(),
                    "no metadata record schema (SCHEMA header or file info)",
                )
            })?;
        self.decoder_of(schema, reader.path())
    }

    /// [`Self::decoder`] of `schema`; errors name `file`.
    pub(super) fn decoder_of(&self, schema: &str, file: &str) -> Result<Arc<RecordDecoder>> {
        if let Some(d) = lock(&self.decoders).get(schema) {
            return Ok(d.clone());
        }
        let decoder = Arc::new(RecordDecoder::new(schema, "").map_err(|e| e.in_file(file))?);
        lock(&self.decoders).insert(schema.to_string(), decoder.clone());
        Ok(decoder)
    }
}
