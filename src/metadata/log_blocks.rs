//! The blocks of one metadata-table log file that matter to a reader, read with
//! [`crate::log_file`]: HFILE_DATA (an inline HFile of records), DELETE (record keys) and
//! rollback COMMAND blocks (docs/hudi-format.md §5.1–5.8).
//!
//! A corrupt block is an error here, not a skipped block: dropping a block of the `files`
//! partition would silently lose files, and the planner can always fall back to listing.

use futures::future::try_join_all;

use crate::error::{HudiError, Result};
use crate::hfile::HFileReader;
use crate::log_file::{read_log_file_with, BlockType, LogBlock, LogReadOptions};
use crate::storage::{Purpose, Storage};

#[derive(Debug, Clone)]
pub(crate) enum Content {
    /// The inline HFile and the `SCHEMA` header its values were written with.
    HFile {
        reader: Box<HFileReader>,
        schema: Option<String>,
    },
    /// Record keys to delete.
    Delete(Vec<String>),
    /// Blocks written by `target` are void (in any log file of the slice).
    Rollback { target: String },
    /// Block types an MDT reader does not need.
    Other,
}

#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub instant: Option<String>,
    pub content: Content,
}

/// Every block of the log file `path` (of `size` bytes), in file order, with the contents a
/// reader needs fetched (small files come whole in one request).
pub(crate) async fn read(storage: &dyn Storage, path: &str, size: u64) -> Result<Vec<Block>> {
    let opts = LogReadOptions {
        purpose: Purpose::MdtDataBlock,
        ..Default::default()
    };
    let file = read_log_file_with(storage, path, Some(size), opts).await?;
    if let Some(bad) = file.blocks.iter().find(|b| b.is_corrupt()) {
        return Err(HudiError::corrupt(
            path,
            format!("corrupt log block at offset {}", bad.offset),
        ));
    }
    try_join_all(file.blocks.iter().map(|b| decode(storage, b))).await
}

async fn decode(storage: &dyn Storage, b: &LogBlock) -> Result<Block> {
    let content = match b.block_type {
        BlockType::HFileData => Content::HFile {
            reader: Box::new(HFileReader::from_bytes(
                b.content(storage).await?,
                b.path(),
            )?),
            schema: b.schema().map(str::to_string),
        },
        BlockType::Delete => Content::Delete(
            b.delete_records(storage)
                .await?
                .into_iter()
                .filter_map(|r| r.record_key)
                .collect(),
        ),
        BlockType::Command => match b.rollback_target() {
            Some(target) => Content::Rollback {
                target: target.to_string(),
            },
            None => Content::Other,
        },
        _ => Content::Other,
    };
    Ok(Block {
        instant: b.instant_time().map(str::to_string),
        content,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log_file::{writer, DeleteRecord};
    use crate::storage::memory::MemoryStorage;
    use crate::value::Value;

    #[test]
    fn reads_delete_and_rollback_blocks_and_rejects_damage() {
        let delete = DeleteRecord {
            record_key: Some("TXN-002".into()),
            partition_path: Some("record_index".into()),
            ordering: Value::Int(0),
        };
        let mut file = writer::delete_block("001", None, &[delete]).unwrap();
        file.extend(writer::rollback_block("003", "002").unwrap());
        let mut damaged = file.clone();
        damaged.extend_from_slice(b"#HUDI#garbage");
        let mem = MemoryStorage::new();
        mem.insert("ok.log", file.clone(), None);
        mem.insert("bad.log", damaged.clone(), None);
        futures::executor::block_on(async {
            let ok = read(&mem, "ok.log", file.len() as u64).await.unwrap();
            assert_eq!(ok.len(), 2);
            assert_eq!(ok[0].instant.as_deref(), Some("001"));
            assert!(matches!(&ok[0].content, Content::Delete(k) if k == &["TXN-002"]));
            assert!(matches!(&ok[1].content, Content::Rollback { target } if target == "002"));
            let err = read(&mem, "bad.log", damaged.len() as u64)
                .await
                .unwrap_err();
            assert_eq!(err.code(), "CORRUPT", "{err}");
            assert_eq!(err.object(), Some("bad.log"));
        });
    }
}
