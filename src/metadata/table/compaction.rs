//! A shard merged whole for compaction: the sorted base HFile streamed against the log
//! files' versions of each key, so memory stays bounded by the log records and one run of
//! the base file.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::try_join_all;

use super::{mdt_path, MetadataTable, RECORD_INDEX};
use crate::error::{HudiError, Result};
use crate::file_group::FileSlice;
use crate::metadata::compact::LogCounts;
use crate::metadata::log_blocks::{self, Block, Content};
use crate::metadata::merge::merge_payloads;
use crate::metadata::records::{MetadataPayload, RecordDecoder, RecordValue, RECORD_INDEX_TYPE};
use crate::storage::join;

impl MetadataTable {
    /// Every record of one slice merged in memory (the reference the streaming merge of
    /// [`Self::merge_slice_streaming`] is tested against).
    #[cfg(test)]
    pub(crate) async fn merge_slice(
        &self,
        slice: &FileSlice,
    ) -> Result<crate::metadata::compact::MergedSlice> {
        let mut counts = crate::metadata::compact::MergedSlice::default();
        let records = self
            .slice_records_counted(
                slice,
                crate::metadata::lookup::Lookup::All,
                Some(&mut counts),
            )
            .await?;
        if let Some(p) = records.problems.first() {
            return Err(HudiError::corrupt(
                mdt_path(&join(&slice.partition, &slice.file_id)),
                p.clone(),
            ));
        }
        counts.records = records.values;
        Ok(counts)
    }

    /// Every record of one slice merged, for compaction, handed to `emit` in key order
    /// with whether the base file held the key (a record that does not decode or merge is
    /// an error: a base file must not lose it silently). Memory stays bounded by the log
    /// files' records plus one run of about `run_bytes` of the base file (compressed) and
    /// one of its blocks inflated: the base HFile is sorted, so it is merged with the
    /// (sorted) log records as it streams.
    ///
    /// `output_schema`: the schema the new base file is written in, when its values are
    /// encoded as they were read (no file name filled in). Record-index values then come as
    /// their bytes where the file holding them has that schema too (base file, or log
    /// block): they carry no deletion flag, a newer version replaces an older one whole,
    /// and decoding and encoding the millions of them was most of a compaction's time.
    pub(crate) async fn merge_slice_streaming(
        &self,
        slice: &FileSlice,
        run_bytes: u64,
        output_schema: Option<&str>,
        mut emit: impl FnMut(&str, Compacted<'_>, bool) -> Result<()>,
    ) -> Result<LogCounts> {
        let origin = mdt_path(&join(&slice.partition, &slice.file_id));
        let copy = output_schema.filter(|_| slice.partition == RECORD_INDEX);
        let kept = match copy {
            Some(schema) => Some(self.decoder_of(schema, &origin)?),
            None => None,
        };
        let logs = try_join_all(slice.log_files.iter().map(|l| {
            let path = mdt_path(&join(&slice.partition, &l.name));
            async move { log_blocks::read(self.storage.as_ref(), &path, l.size).await }
        }))
        .await?;
        let (log_versions, counts) = self.log_versions(&logs, copy).await?;
        drop(logs);
        let mut merge = SliceMerge {
            logs: log_versions.into_iter().peekable(),
            emit: &mut emit,
            origin: &origin,
            kept,
        };
        if let Some(b) = &slice.base_file {
            let (reader, decoder) = self
                .base(&mdt_path(&join(&slice.partition, &b.name)), b.size)
                .await?;
            let keep = copy.is_some() && reader.file_info().schema() == copy;
            // Versions of the current key (a base file should hold each key once; Hudi's
            // reader merges repeats, and so does this).
            let mut current: Option<(String, RecordValue)> = None;
            for run in reader.data_block_runs(run_bytes).await? {
                reader
                    .scan_run(&run, |cells| {
                        decoder.decode_or_keep_each(cells, keep, |key, value| {
                            let value = value.in_file(reader.path());
                            match current.take() {
                                Some((k, older)) if k == key => {
                                    let merged = merge.fold(&k, older, value);
                                    current = Some((k, merged));
                                }
                                Some((k, _)) if k > key => {
                                    return Err(HudiError::corrupt(
                                        reader.path(),
                                        format!("rows out of order: {key:?} after {k:?}"),
                                    ))
                                }
                                previous => {
                                    if let Some((k, v)) = previous {
                                        merge.base_record(k, v)?;
                                    }
                                    current = Some((key, value));
                                }
                            }
                            Ok(())
                        })
                    })
                    .await
                    .map_err(|e| e.in_file(reader.path()))?;
            }
            if let Some((k, v)) = current {
                merge.base_record(k, v)?;
            }
        }
        merge.rest()?;
        Ok(counts)
    }

    /// The versions each key has in the valid, not rolled back blocks of a slice's log
    /// files (in log order), after the key's last delete.
    async fn log_versions(
        &self,
        logs: &[Vec<Block>],
        copy: Option<&str>,
    ) -> Result<(BTreeMap<String, LogVersions>, LogCounts)> {
        let mut counts = LogCounts::default();
        let blocks = self.live_blocks(logs.iter().map(|l| l.as_slice()));
        let mut out: BTreeMap<String, LogVersions> = BTreeMap::new();
        for block in blocks {
            counts.log_blocks += 1;
            match &block.content {
                Content::HFile { reader, schema } => {
                    let decoder = self.decoder(schema.as_deref(), reader)?;
                    let keep = copy.is_some()
                        && schema.as_deref().or_else(|| reader.file_info().schema()) == copy;
                    let cells = reader.scan_all().await?;
                    decoder
                        .decode_or_keep_each(&cells, keep, |key, value| {
                            counts.log_records += 1;
                            let version = value.in_file(reader.path());
                            out.entry(key).or_default().versions.push(version);
                            Ok(())
                        })
                        .map_err(|e| e.in_file(reader.path()))?;
                }
                Content::Delete(keys) => {
                    counts.log_records += keys.len() as u64;
                    for k in keys {
                        let v = out.entry(k.clone()).or_default();
                        v.deleted = true;
                        v.versions.clear();
                    }
                }
                Content::Rollback { .. } | Content::Other => {}
            }
        }
        Ok((out, counts))
    }
}

/// A key's versions in a slice's log files: whether a delete dropped what came before,
/// and the versions after the last delete.
#[derive(Default)]
struct LogVersions {
    deleted: bool,
    versions: Vec<RecordValue>,
}

/// A record of a compacted file group, for its new base file.
pub enum Compacted<'a> {
    /// The key's versions merged.
    Merged(&'a MetadataPayload),
    /// A record-index value as it was stored (the newest version of its key), in the new
    /// file's schema.
    Unchanged(&'a [u8]),
}

/// The merge of a sorted base file with a slice's log versions, record by record.
struct SliceMerge<'a, E> {
    logs: std::iter::Peekable<std::collections::btree_map::IntoIter<String, LogVersions>>,
    emit: &'a mut E,
    origin: &'a str,
    /// Decodes kept values (they all have the output schema).
    kept: Option<Arc<RecordDecoder>>,
}

impl<E: FnMut(&str, Compacted<'_>, bool) -> Result<()>> SliceMerge<'_, E> {
    /// A base file's key (its versions merged): log-only keys before it go first.
    fn base_record(&mut self, key: String, base: RecordValue) -> Result<()> {
        while let Some((k, _)) = self.logs.peek() {
            if *k >= key {
                break;
            }
            let (k, v) = self.logs.next().expect("peeked");
            self.resolve(&k, None, Some(v))?;
        }
        let log = match self.logs.peek() {
            Some((k, _)) if *k == key => self.logs.next().map(|(_, v)| v),
            _ => None,
        };
        self.resolve(&key, Some(base), log)
    }

    /// The log-only keys after the base file's last.
    fn rest(&mut self) -> Result<()> {
        while let Some((k, v)) = self.logs.next() {
            self.resolve(&k, None, Some(v))?;
        }
        Ok(())
    }

    /// Folds a key's versions in merge order (as [`Fold`] does for lookups) and emits the
    /// result; a delete without later versions emits nothing.
    fn resolve(
        &mut self,
        key: &str,
        base: Option<RecordValue>,
        log: Option<LogVersions>,
    ) -> Result<()> {
        let from_base = base.is_some();
        let mut state = base;
        if let Some(log) = log {
            if log.deleted {
                state = None;
            }
            for newer in log.versions {
                state = Some(match state {
                    Some(older) => self.fold(key, older, newer),
                    None => newer,
                });
            }
        }
        match state {
            None => Ok(()),
            Some(RecordValue::Kept(value)) => {
                (self.emit)(key, Compacted::Unchanged(&value), from_base)
            }
            Some(RecordValue::Decoded(Ok(p))) => (self.emit)(key, Compacted::Merged(&p), from_base),
            Some(RecordValue::Decoded(Err(e))) => {
                Err(HudiError::corrupt(self.origin, format!("key {key:?}: {e}")))
            }
        }
    }

    /// `newer` merged onto `older` ([`merge_payloads`]); a version that failed spoils the
    /// key until a delete. Two kept record-index values need no decoding: the newer wins.
    fn fold(&self, key: &str, older: RecordValue, newer: RecordValue) -> RecordValue {
        use RecordValue::{Decoded, Kept};
        let record_index =
            |v: &[u8]| self.kept.as_ref().and_then(|d| d.record_type(v)) == Some(RECORD_INDEX_TYPE);
        match (older, newer) {
            (Decoded(Err(e)), _) => Decoded(Err(e)),
            (Kept(o), Kept(n)) if record_index(&o) && record_index(&n) => Kept(n),
            (older, newer) => Decoded(
                self.decoded(key, older)
                    .and_then(|o| self.decoded(key, newer).and_then(|n| merge_payloads(o, &n))),
            ),
        }
    }

    fn decoded(&self, key: &str, value: RecordValue) -> Result<MetadataPayload> {
        match (value, &self.kept) {
            (RecordValue::Decoded(p), _) => p,
            (RecordValue::Kept(bytes), Some(d)) => d
                .decode(key, &bytes)
                .map(|r| r.payload)
                .map_err(|e| e.in_file(self.origin)),
            (RecordValue::Kept(_), None) => Err(HudiError::corrupt(
                self.origin,
                format!("key {key:?}: a kept value without its schema"),
            )),
        }
    }
}
