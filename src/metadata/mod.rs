//! The metadata table (`.hoodie/metadata`): files, column_stats, partition_stats,
//! record_index and secondary indexes (docs/hudi-format.md §8).
//!
//! [`keys`] computes record keys and their file groups, [`records`] decodes the Avro values
//! stored in MDT HFiles (base files and log blocks) into typed records, and [`merge`]
//! combines the versions of one key in commit order. [`table::MetadataTable`] reads the
//! metadata table as a Hudi table of its own (timeline, valid instants, sharded file
//! groups, base HFile + log blocks) and answers key, prefix and full lookups;
//! [`skipping`] turns its indexes into pruning decisions, with [`stats`] converting
//! statistics to typed Arrow arrays.

pub mod compact;
pub mod config;
pub mod delta;
pub mod init;
pub mod keys;
mod log_blocks;
pub mod lookup;
pub mod merge;
pub mod records;
pub mod secondary;
pub mod skipping;
pub mod stats;
mod sync;
pub mod table;

#[cfg(test)]
mod damage_tests;
#[cfg(test)]
mod delta_tests;
#[cfg(test)]
mod tests;

pub use lookup::{Lookup, Records};
pub use records::{
    BloomFilterEntry, ColumnStats, FilesEntry, MetadataPayload, MetadataRecord, RecordDecoder,
    RecordIndexEntry, SecondaryIndexEntry,
};
pub use skipping::Verdicts;
pub use table::MetadataTable;

use std::sync::{Arc, Mutex};

use crate::error::{HudiError, Result};
use crate::meta_client::MetaClient;

/// A table's metadata table, opened on first use and kept once it opened fine. An
/// `UNSUPPORTED` answer is kept too (every plan need not pay for finding out again); other
/// failures (network, a missing file) are retried next time.
#[derive(Debug, Default)]
pub struct MetadataCache {
    opened: Mutex<Option<Arc<MetadataTable>>>,
    unsupported: Mutex<Option<(String, Option<String>)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl MetadataCache {
    /// Forgets the opened metadata table (its timeline changed); the next `get` reopens it.
    pub fn clear(&self) {
        *lock(&self.opened) = None;
    }

    /// The metadata table opened last, however old (no request).
    pub fn cached(&self) -> Option<Arc<MetadataTable>> {
        lock(&self.opened).clone()
    }

    /// The metadata table of `data`; the first open also lists the MDT partitions in
    /// `prefetch`, in the same round trip. One opened against an earlier listing of the data
    /// timeline is opened again: it may not know commits the handle now shows.
    pub async fn get(&self, data: &MetaClient, prefetch: &[&str]) -> Result<Arc<MetadataTable>> {
        let (_, listing) = data.listed_timeline();
        if let Some(m) = lock(&self.opened).clone() {
            if m.data_listing() == listing {
                return Ok(m);
            }
        }
        if let Some((what, path)) = lock(&self.unsupported).clone() {
            return Err(HudiError::Unsupported { what, path });
        }
        match MetadataTable::open(data, prefetch).await {
            Ok(m) => {
                let m = Arc::new(m);
                *lock(&self.opened) = Some(m.clone());
                Ok(m)
            }
            Err(e) => {
                if let HudiError::Unsupported { what, path } = &e {
                    *lock(&self.unsupported) = Some((what.clone(), path.clone()));
                }
                Err(e)
            }
        }
    }
}
