//! Reading a log file's blocks over [`Storage`]: small files in one request, large files by
//! ranged reads of the block framing, with contents left in storage until asked for.

use std::ops::Range;

use bytes::Bytes;

use super::block::{BlockType, LogBlock};
use super::format::{Scanner, Step};
use crate::error::{HudiError, Result};
use crate::storage::Storage;

/// How [`read_log_file_with`] fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogReadOptions {
    /// Files up to this size are fetched whole, in one request.
    pub whole_file_threshold: u64,
    /// Minimum size of each ranged read when walking a larger file; a block header (with its
    /// schema) and the next block's framing usually fit in one.
    pub read_ahead: u64,
}

impl Default for LogReadOptions {
    fn default() -> Self {
        LogReadOptions {
            whole_file_threshold: 8 << 20,
            read_ahead: 64 << 10,
        }
    }
}

/// The blocks of one log file, in file order.
#[derive(Debug, Clone)]
pub struct LogFileBlocks {
    pub path: String,
    pub size: u64,
    pub blocks: Vec<LogBlock>,
}

impl LogFileBlocks {
    pub fn corrupt_block_count(&self) -> usize {
        self.blocks.iter().filter(|b| b.is_corrupt()).count()
    }

    /// Blocks that are not corrupt (readers skip corrupt ones, hudi-format §6.4).
    pub fn valid_blocks(&self) -> impl Iterator<Item = &LogBlock> {
        self.blocks.iter().filter(|b| !b.is_corrupt())
    }

    pub fn of_type(&self, t: BlockType) -> impl Iterator<Item = &LogBlock> {
        self.blocks.iter().filter(move |b| b.block_type == t)
    }
}

/// Reads the block structure of `path`. `size` (from a listing) saves a request on large files.
pub async fn read_log_file(
    storage: &dyn Storage,
    path: &str,
    size: Option<u64>,
) -> Result<LogFileBlocks> {
    read_log_file_with(storage, path, size, LogReadOptions::default()).await
}

pub async fn read_log_file_with(
    storage: &dyn Storage,
    path: &str,
    size: Option<u64>,
    opts: LogReadOptions,
) -> Result<LogFileBlocks> {
    let mut scanner = open(storage, path, size, &opts).await?;
    let mut blocks = Vec::new();
    loop {
        match scanner.next()? {
            Step::Block(b) => blocks.push(b),
            Step::End => break,
            Step::Need(r) => {
                let r = widen(r, opts.read_ahead, scanner.size());
                let bytes = fetch(storage, path, r.clone()).await?;
                scanner.feed(r.start, bytes);
            }
        }
    }
    Ok(LogFileBlocks {
        path: path.to_string(),
        size: scanner.size(),
        blocks,
    })
}

/// A scanner primed with the whole file when it is small, or knowing the size when it is not.
async fn open(
    storage: &dyn Storage,
    path: &str,
    size: Option<u64>,
    opts: &LogReadOptions,
) -> Result<Scanner> {
    let threshold = opts.whole_file_threshold;
    let (size, first) = match size {
        Some(s) if s <= threshold => {
            let all = storage.get(path).await?;
            (all.len() as u64, Some(all))
        }
        Some(s) => (s, None),
        None => {
            // One request answers for small files; a full window means "large".
            let head = storage.get_range(path, 0..threshold + 1).await?;
            if head.len() as u64 <= threshold {
                (head.len() as u64, Some(head))
            } else {
                (storage.head(path).await?.size, Some(head))
            }
        }
    };
    let mut scanner = Scanner::new(path, size);
    if let Some(bytes) = first {
        scanner.feed(0, bytes);
    }
    Ok(scanner)
}

fn widen(r: Range<u64>, read_ahead: u64, size: u64) -> Range<u64> {
    r.start..r.end.max(r.start + read_ahead).min(size)
}

async fn fetch(storage: &dyn Storage, path: &str, r: Range<u64>) -> Result<Bytes> {
    let bytes = storage.get_range(path, r.clone()).await?;
    if (bytes.len() as u64) < r.end - r.start {
        return Err(HudiError::corrupt(
            path,
            format!("file shorter than its listed size (read {r:?})"),
        ));
    }
    Ok(bytes)
}
