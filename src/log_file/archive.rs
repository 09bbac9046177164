//! The v6 archived timeline (docs: hudi-format §2.5): `.hoodie/archived/.commits_.archive.N_<token>`
//! files are log files whose Avro data blocks hold `HoodieArchivedMetaEntry` records (Java
//! `HoodieArchivedMetaEntry.avsc`). Each record is decoded with the block's own schema.

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value;
use bytes::Bytes;

use super::block::BlockType;
use super::data::AvroRecords;
use super::reader::read_log_file;
use crate::avro::value_to_json;
use crate::error::{malformed, HudiError, Result};
use crate::storage::Storage;

/// One archived instant.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ArchivedInstant {
    pub commit_time: String,
    pub action_type: String,
    /// `REQUESTED` / `INFLIGHT` / `COMPLETED` when the archiver recorded it (0.x did for
    /// pending plans), else `None`.
    pub action_state: Option<String>,
    /// The action's metadata record (commit, clean, rollback, plan …) as JSON, or null.
    pub metadata: serde_json::Value,
}

/// Metadata fields of `HoodieArchivedMetaEntry`, most specific first per action.
const METADATA_FIELDS: [&str; 10] = [
    "hoodieCommitMetadata",
    "hoodieReplaceCommitMetadata",
    "hoodieRequestedReplaceMetadata",
    "hoodieCleanMetadata",
    "hoodieCleanerPlan",
    "hoodieRollbackMetadata",
    "hoodieSavePointMetadata",
    "hoodieCompactionPlan",
    "hoodieCompactionMetadata",
    "hoodieRestoreMetadata",
];

fn preferred_fields(action: &str) -> &'static [&'static str] {
    match action {
        "commit" | "deltacommit" => &["hoodieCommitMetadata"],
        "replacecommit" | "clustering" => &[
            "hoodieReplaceCommitMetadata",
            "hoodieRequestedReplaceMetadata",
        ],
        "clean" => &["hoodieCleanMetadata", "hoodieCleanerPlan"],
        "rollback" => &["hoodieRollbackMetadata"],
        "savepoint" => &["hoodieSavePointMetadata"],
        "compaction" | "logcompaction" => &["hoodieCompactionPlan", "hoodieCommitMetadata"],
        _ => &[],
    }
}

/// Reads every archived instant of one archive file, in file order. Corrupt blocks are
/// skipped as for any log file.
pub async fn read_archive_file(
    storage: &dyn Storage,
    path: &str,
    size: Option<u64>,
) -> Result<Vec<ArchivedInstant>> {
    let file = read_log_file(storage, path, size).await?;
    let mut out = Vec::new();
    for block in file.of_type(BlockType::AvroData) {
        let schema = block
            .schema()
            .ok_or_else(|| HudiError::corrupt(path, "archive block without a schema"))?;
        out.extend(decode_archive_block(
            block.content(storage).await?,
            schema,
            path,
        )?);
    }
    Ok(out)
}

/// Decodes one Avro data block of archived entries.
pub fn decode_archive_block(
    content: Bytes,
    writer_schema: &str,
    path: &str,
) -> Result<Vec<ArchivedInstant>> {
    let run = || -> Result<Vec<ArchivedInstant>> {
        let schema = apache_avro::Schema::parse_str(writer_schema)
            .map_err(|e| malformed(format!("bad archive block schema: {e}")))?;
        let reader = GenericDatumReader::builder(&schema)
            .build()
            .map_err(|e| malformed(format!("bad archive block schema: {e}")))?;
        let records = AvroRecords::parse(content)?;
        records
            .iter()
            .map(|datum| {
                let value = reader
                    .read_value(&mut &datum?[..])
                    .map_err(|e| malformed(format!("bad archived entry: {e}")))?;
                archived_instant(value)
            })
            .collect()
    };
    run().map_err(|e| e.in_file(path))
}

fn archived_instant(value: Value) -> Result<ArchivedInstant> {
    let serde_json::Value::Object(mut entry) = value_to_json(value) else {
        return Err(malformed("archived entry is not a record"));
    };
    let mut text = |k: &str| match entry.remove(k) {
        Some(serde_json::Value::String(s)) => Some(s),
        _ => None,
    };
    let commit_time =
        text("commitTime").ok_or_else(|| malformed("archived entry without commitTime"))?;
    let action_type =
        text("actionType").ok_or_else(|| malformed("archived entry without actionType"))?;
    let action_state = text("actionState");
    let metadata = preferred_fields(&action_type)
        .iter()
        .chain(METADATA_FIELDS.iter())
        .find_map(|k| entry.get(*k).filter(|v| !v.is_null()).cloned())
        .unwrap_or(serde_json::Value::Null);
    Ok(ArchivedInstant {
        commit_time,
        action_type,
        action_state,
        metadata,
    })
}
