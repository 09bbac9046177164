//! Sans-IO walk over `#HUDI#` block framing (docs/hudi-format.md §5.1, §5.10).
//!
//! [`Scanner`] parses blocks from whatever byte ranges it has been fed and answers
//! [`Step::Need`] with the range it is missing, so one parser serves a file fetched whole and
//! a large file walked with ranged reads.
//!
//! Corruption handling follows Java's `HoodieLogFileReader` (`readBlock`, `isBlockCorrupted`,
//! `createCorruptBlock`, `scanForNextAvailableBlockOffset`, `readMagic`):
//! * a block whose length field is missing, whose trailing total length disagrees with it, that
//!   runs past EOF, or that is not followed by `#HUDI#` (or by fewer than 6 bytes before EOF)
//!   becomes a CORRUPT block spanning from its magic to the next `#HUDI#` found after that
//!   magic (or EOF); scanning continues there. Note the last rule: garbage *after* a valid
//!   block makes that block corrupt.
//! * the check is always made (Java skips it on "write-transactional" object stores).
//! * a file that does not start with `#HUDI#` is an error (Java throws
//!   `CorruptedLogFileException` from `hasNext`); fewer than 6 trailing bytes end the file.
//! * once the framing checks out, anything wrong inside the block is an error, as in Java,
//!   where it throws: format version other than 1, a block type ordinal outside 0..=6 or the
//!   on-disk CORRUPT ordinal 2 (`checkArgument` / `HoodieNotSupportedException`), an unknown
//!   header key ordinal (array index out of bounds), lengths that do not add up.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::block::{BlockMetadata, BlockType, HeaderKey, LogBlock};
use crate::error::HudiError;

pub const MAGIC: &[u8; 6] = b"#HUDI#";
/// The only log format version current writers use (Java `HoodieLogFormatVersion`).
pub const LOG_FORMAT_VERSION: i32 = 1;

/// Bytes a block occupies besides header, content and footer: magic, block length, format
/// version, block type, content length, trailing total length.
pub const FRAMING_BYTES: u64 = 6 + 8 + 4 + 4 + 8 + 8;

/// Bytes fetched before a block's trailing length, so its footer comes in the same read.
const FOOTER_SLACK: u64 = 64;

/// What the scanner wants next.
#[derive(Debug)]
pub enum Step {
    Block(LogBlock),
    End,
    /// Feed these bytes (or a larger range starting at `start`), then call `next_step` again.
    Need(Range<u64>),
}

/// Why a parse step stopped early: missing bytes, or a real error.
enum Stop {
    Need(Range<u64>),
    Fail(HudiError),
}

impl From<HudiError> for Stop {
    fn from(e: HudiError) -> Self {
        Stop::Fail(e)
    }
}

type Parse<T> = std::result::Result<T, Stop>;

/// Fetched pieces of the file.
#[derive(Debug, Default)]
struct Chunks(Vec<(u64, Bytes)>);

impl Chunks {
    fn get(&self, r: Range<u64>) -> Parse<Bytes> {
        self.find(r.start, r.end - r.start)
            .map(|(start, b)| b.slice((r.start - start) as usize..(r.end - start) as usize))
            .ok_or(Stop::Need(r))
    }

    /// The longest fetched run at `pos`, if it has at least `min` bytes.
    fn from(&self, pos: u64, min: u64) -> Option<Bytes> {
        self.find(pos, min)
            .map(|(start, b)| b.slice((pos - start) as usize..))
    }

    fn find(&self, pos: u64, len: u64) -> Option<(u64, &Bytes)> {
        self.0
            .iter()
            .find(|(s, b)| *s <= pos && pos + len <= s + b.len() as u64)
            .map(|(s, b)| (*s, b))
    }

    fn i32_at(&self, pos: u64) -> Parse<i32> {
        let b = self.get(pos..pos + 4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64_at(&self, pos: u64) -> Parse<i64> {
        let b = self.get(pos..pos + 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(&b);
        Ok(i64::from_be_bytes(a))
    }

    /// Forgets chunks that end before `pos`: the walk never goes back.
    fn drop_before(&mut self, pos: u64) {
        self.0.retain(|(s, b)| s + b.len() as u64 > pos);
    }
}

/// A corrupt region whose end is still being searched for.
#[derive(Debug, Clone, Copy)]
struct CorruptScan {
    block_start: u64,
    search_from: u64,
}

/// Walks the blocks of one log file of known size.
#[derive(Debug)]
pub struct Scanner {
    path: Arc<str>,
    size: u64,
    pos: u64,
    chunks: Chunks,
    scan: Option<CorruptScan>,
}

impl Scanner {
    pub fn new(path: impl Into<Arc<str>>, size: u64) -> Self {
        Scanner {
            path: path.into(),
            size,
            pos: 0,
            chunks: Chunks::default(),
            scan: None,
        }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// Adds fetched bytes starting at file offset `start` (clamped to the file size).
    pub fn feed(&mut self, start: u64, bytes: Bytes) {
        // On wasm32 more than 4 GiB of room is still more than any chunk: saturate, never wrap.
        let room = usize::try_from(self.size.saturating_sub(start)).unwrap_or(usize::MAX);
        let bytes = if bytes.len() > room {
            bytes.slice(..room)
        } else {
            bytes
        };
        if !bytes.is_empty() {
            self.chunks.0.push((start, bytes));
        }
    }

    /// Parses the next block, or says which bytes it needs first.
    pub fn next_step(&mut self) -> crate::Result<Step> {
        match self.step() {
            Ok(step) => Ok(step),
            Err(Stop::Need(r)) => Ok(Step::Need(r)),
            Err(Stop::Fail(e)) => Err(e),
        }
    }

    fn step(&mut self) -> Parse<Step> {
        if let Some(scan) = self.scan {
            let block = self.finish_corrupt_scan(scan)?;
            return Ok(self.advance(block));
        }
        let p = self.pos;
        if p + MAGIC.len() as u64 > self.size {
            return Ok(Step::End);
        }
        if self.chunks.get(p..p + 6)?.as_ref() != MAGIC {
            return Err(self
                .fail(p, "no #HUDI# magic at the start of a block")
                .into());
        }
        let block = match self.framed_block_size(p)? {
            Some(size) => self.parse_block(p, size)?,
            None => {
                let scan = CorruptScan {
                    block_start: p,
                    search_from: p + 6,
                };
                self.scan = Some(scan);
                self.finish_corrupt_scan(scan)?
            }
        };
        Ok(self.advance(block))
    }

    fn advance(&mut self, block: LogBlock) -> Step {
        self.scan = None;
        self.pos = block.offset + block.len;
        self.chunks.drop_before(self.pos);
        Step::Block(block)
    }

    /// `blockLength` after the framing checks of Java `isBlockCorrupted`; `None` = corrupt.
    fn framed_block_size(&self, p: u64) -> Parse<Option<u64>> {
        let c = p + 14;
        if c > self.size {
            return Ok(None);
        }
        // Java reads the long and narrows it to an int. A negative size cannot frame a block
        // (Java would seek backwards and fail later); it is treated as corrupt here.
        let block_size = self.chunks.i64_at(p + 6)? as i32 as i64;
        let Ok(trailer) = u64::try_from(c as i64 + block_size - 8) else {
            return Ok(None);
        };
        if block_size < 0 || trailer + 8 > self.size {
            return Ok(None);
        }
        // Ask for the footer (almost always empty) together with the trailing length.
        self.chunks
            .get(trailer.saturating_sub(FOOTER_SLACK).max(c)..trailer + 8)?;
        if self
            .chunks
            .i64_at(trailer)?
            .wrapping_sub(MAGIC.len() as i64)
            != block_size
        {
            return Ok(None);
        }
        let end = trailer + 8;
        if end + 6 <= self.size && self.chunks.get(end..end + 6)?.as_ref() != MAGIC {
            return Ok(None);
        }
        Ok(Some(end - c))
    }

    /// Reads version, type, header, content length, footer of a block whose framing is sound.
    fn parse_block(&self, p: u64, block_size: u64) -> Parse<LogBlock> {
        let end = p + 14 + block_size;
        let mut at = Cursor {
            pos: p + 14,
            limit: end - 8,
            chunks: &self.chunks,
        };
        let version = at.i32().map_err(|s| self.interior(p, s))?;
        if version != LOG_FORMAT_VERSION {
            return Err(self
                .unsupported(p, format!("log format version {version}"))
                .into());
        }
        let ordinal = at.i32().map_err(|s| self.interior(p, s))?;
        let block_type = match BlockType::from_ordinal(ordinal) {
            Some(t) if t != BlockType::Corrupt => t,
            _ => {
                return Err(self
                    .unsupported(p, format!("log block type {ordinal}"))
                    .into())
            }
        };
        let header = self.metadata(p, &mut at)?;
        let content_len = at.i64().map_err(|s| self.interior(p, s))? as i32;
        let content_len = u64::try_from(content_len)
            .map_err(|_| self.fail(p, format!("negative content length {content_len}")))?;
        let content_range = at.skip(content_len).map_err(|s| self.interior(p, s))?;
        let footer = self.metadata(p, &mut at)?;
        if at.pos != at.limit {
            return Err(self
                .fail(
                    p,
                    "header, content and footer do not add up to the block length",
                )
                .into());
        }
        Ok(LogBlock {
            block_type,
            offset: p,
            len: end - p,
            header,
            footer,
            content: self.content(content_range.clone()),
            content_range,
            path: self.path.clone(),
        })
    }

    fn metadata(&self, p: u64, at: &mut Cursor) -> Parse<BlockMetadata> {
        let mut meta = BlockMetadata::new();
        // Java loops `while (count > 0)`: a negative count reads as empty.
        let count = at.i32().map_err(|s| self.interior(p, s))?;
        for _ in 0..count.max(0) {
            let ordinal = at.i32().map_err(|s| self.interior(p, s))?;
            let len = at.i32().map_err(|s| self.interior(p, s))?;
            let key = HeaderKey::from_ordinal(ordinal)
                .ok_or_else(|| self.unsupported(p, format!("log block header key {ordinal}")))?;
            let len = u64::try_from(len)
                .map_err(|_| self.fail(p, format!("negative header value length {len}")))?;
            let range = at.skip(len).map_err(|s| self.interior(p, s))?;
            let value = self.chunks.get(range)?;
            meta.insert(key, String::from_utf8_lossy(&value));
        }
        Ok(meta)
    }

    fn content(&self, range: Range<u64>) -> Option<Bytes> {
        self.chunks.get(range).ok()
    }

    /// Finds the next `#HUDI#` after a corrupt block's magic and builds the CORRUPT block.
    fn finish_corrupt_scan(&mut self, mut scan: CorruptScan) -> Parse<LogBlock> {
        const SCAN_WINDOW: u64 = 1 << 20;
        let next = loop {
            let from = scan.search_from;
            if from + 6 > self.size {
                break self.size;
            }
            let Some(run) = self.chunks.from(from, 6) else {
                self.scan = Some(scan);
                return Err(Stop::Need(from..self.size.min(from + SCAN_WINDOW)));
            };
            if let Some(i) = run.windows(6).position(|w| w == MAGIC) {
                break from + i as u64;
            }
            scan.search_from = from + run.len() as u64 - 5;
        };
        let p = scan.block_start;
        let content_range = p + 6..next;
        Ok(LogBlock {
            block_type: BlockType::Corrupt,
            offset: p,
            len: next - p,
            header: BlockMetadata::new(),
            footer: BlockMetadata::new(),
            content: self.content(content_range.clone()),
            content_range,
            path: self.path.clone(),
        })
    }

    /// Missing bytes stay a `Need`; running past the block's end is corruption.
    fn interior(&self, p: u64, stop: Stop) -> Stop {
        match stop {
            Stop::Need(r) => Stop::Need(r),
            Stop::Fail(_) => self
                .fail(p, "block fields run past its trailing length")
                .into(),
        }
    }

    fn fail(&self, p: u64, reason: impl std::fmt::Display) -> HudiError {
        HudiError::corrupt(
            self.path.as_ref(),
            format!("log block at offset {p}: {reason}"),
        )
    }

    fn unsupported(&self, p: u64, what: String) -> HudiError {
        HudiError::unsupported_in(
            format!("{what} (log block at offset {p})"),
            self.path.as_ref(),
        )
    }
}

/// Sequential reads inside one block, bounded by the block's trailing length field.
struct Cursor<'a> {
    pos: u64,
    limit: u64,
    chunks: &'a Chunks,
}

impl Cursor<'_> {
    fn skip(&mut self, n: u64) -> Parse<Range<u64>> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.limit)
            .ok_or(Stop::Fail(crate::error::malformed("overrun")))?;
        let r = self.pos..end;
        self.pos = end;
        Ok(r)
    }

    fn i32(&mut self) -> Parse<i32> {
        let r = self.skip(4)?;
        self.chunks.i32_at(r.start)
    }

    fn i64(&mut self) -> Parse<i64> {
        let r = self.skip(8)?;
        self.chunks.i64_at(r.start)
    }
}

/// Parses a log file held entirely in memory.
pub fn parse_log_bytes(path: &str, bytes: Bytes) -> crate::Result<Vec<LogBlock>> {
    let mut scanner = Scanner::new(path, bytes.len() as u64);
    scanner.feed(0, bytes);
    let mut blocks = Vec::new();
    loop {
        match scanner.next_step()? {
            Step::Block(b) => blocks.push(b),
            Step::End => return Ok(blocks),
            Step::Need(r) => {
                return Err(HudiError::corrupt(
                    path,
                    format!("scanner asked for {r:?} of an in-memory file"),
                ))
            }
        }
    }
}
