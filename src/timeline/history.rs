//! Instants that left the active timeline: the v6 archive (`.hoodie/archived/`, Hudi log
//! files of `HoodieArchivedMetaEntry` records) and the v8+ LSM history
//! (`.hoodie/timeline/history/`, Parquet files named by a manifest).

use crate::config::TableConfig;
use crate::error::Result;
use crate::storage::Storage;

use super::Instant;

/// Archived instants with their content. Filled in by the archive and LSM readers.
pub async fn load(
    _storage: &dyn Storage,
    _config: &TableConfig,
) -> Result<Vec<(Instant, Option<serde_json::Value>)>> {
    Ok(Vec::new())
}
