//! The blocks of one metadata-table log file that matter to a reader: HFILE_DATA (an inline
//! HFile of records), DELETE (record keys) and rollback COMMAND blocks (docs: hudi-format
//! §5.1–5.8). A minimal stand-in for `crate::log_file`: [`parse`] is the one seam to swap.
//!
//! Damage is an error, not a skipped block: dropping a block of the `files` partition would
//! silently lose files, and the caller can always fall back to listing.

use bytes::Bytes;

use crate::error::{HudiError, Result};
use crate::hfile::HFileReader;

const MAGIC: &[u8] = b"#HUDI#";
const COMMAND: i32 = 0;
const DELETE: i32 = 1;
const HFILE_DATA: i32 = 4;
const INSTANT_TIME: i32 = 0;
const TARGET_INSTANT_TIME: i32 = 1;
const SCHEMA: i32 = 2;
const COMMAND_TYPE: i32 = 3;

#[derive(Debug, Clone)]
pub(crate) enum Content {
    /// The inline HFile and the `SCHEMA` header its values were written with.
    HFile {
        reader: HFileReader,
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

/// Every block of a log file held in memory, in file order. `path` labels errors.
pub(crate) fn parse(bytes: &Bytes, path: &str) -> Result<Vec<Block>> {
    let mut blocks = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        let (block, next) = parse_block(bytes, pos).map_err(|reason| {
            HudiError::corrupt(path, format!("log block at offset {pos}: {reason}"))
        })?;
        blocks.push(decode(block, path)?);
        pos = next;
    }
    Ok(blocks)
}

/// The framing of one block: type, header and content, and where the next block starts.
struct Raw {
    block_type: i32,
    header: Vec<(i32, String)>,
    content: Bytes,
}

fn parse_block(bytes: &Bytes, start: usize) -> Result<(Raw, usize), String> {
    let mut r = Cursor { bytes, pos: start };
    if r.take(6)? != MAGIC {
        return Err("no #HUDI# magic".into());
    }
    let block_len = usize::try_from(r.i64()?).map_err(|_| "negative block length")?;
    let end = start
        .checked_add(14)
        .and_then(|s| s.checked_add(block_len))
        .filter(|&e| e <= bytes.len())
        .ok_or("block runs past the end of the file (truncated?)")?;
    if r.i32()? != 1 {
        return Err("log format version is not 1".into());
    }
    let block_type = r.i32()?;
    let header = r.metadata()?;
    let content_len = usize::try_from(r.i64()?).map_err(|_| "negative content length")?;
    let content = r.slice(content_len)?;
    if r.pos > end {
        return Err("content runs past the block".into());
    }
    Ok((
        Raw {
            block_type,
            header,
            content,
        },
        end,
    ))
}

fn decode(raw: Raw, path: &str) -> Result<Block> {
    let header = |key: i32| {
        raw.header
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    };
    let content = match raw.block_type {
        HFILE_DATA => Content::HFile {
            reader: HFileReader::from_bytes(raw.content.clone(), path)?,
            schema: header(SCHEMA),
        },
        DELETE => Content::Delete(
            delete_keys(&raw.content)
                .map_err(|reason| HudiError::corrupt(path, format!("delete block: {reason}")))?,
        ),
        COMMAND if header(COMMAND_TYPE).as_deref() == Some("0") => {
            match header(TARGET_INSTANT_TIME) {
                Some(target) => Content::Rollback { target },
                None => return Err(HudiError::corrupt(path, "rollback block without a target")),
            }
        }
        _ => Content::Other,
    };
    Ok(Block {
        instant: header(INSTANT_TIME),
        content,
    })
}

/// Record keys of a version-3 delete block: Avro `HoodieDeleteRecordList` (§5.7).
fn delete_keys(content: &Bytes) -> Result<Vec<String>, String> {
    let mut r = Cursor {
        bytes: content,
        pos: 0,
    };
    let version = r.i32()?;
    if version != 3 {
        return Err(format!("content version {version} (only 3 is read)"));
    }
    let len = usize::try_from(r.i32()?).map_err(|_| "negative length")?;
    let payload = r.slice(len)?;
    let mut a = Cursor {
        bytes: &payload,
        pos: 0,
    };
    let mut keys = Vec::new();
    loop {
        let mut n = a.varint()?;
        if n == 0 {
            return Ok(keys);
        }
        if n < 0 {
            n = n.checked_neg().ok_or("bad array block count")?;
            a.varint()?; // block size in bytes
        }
        for _ in 0..n {
            let key = a.optional_string()?;
            a.optional_string()?; // partition path
            a.skip_ordering_value()?;
            keys.extend(key);
        }
    }
}

struct Cursor<'a> {
    bytes: &'a Bytes,
    pos: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated: {n} bytes wanted at {}", self.pos))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn slice(&mut self, n: usize) -> Result<Bytes, String> {
        let start = self.pos;
        self.take(n)?;
        Ok(self.bytes.slice(start..self.pos))
    }

    fn i32(&mut self) -> Result<i32, String> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64(&mut self) -> Result<i64, String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(i64::from_be_bytes(a))
    }

    /// Header/footer map: `int count`, then `int key | int len | utf-8 value`.
    fn metadata(&mut self) -> Result<Vec<(i32, String)>, String> {
        let count = self.i32()?;
        let mut out = Vec::new();
        for _ in 0..count.max(0) {
            let key = self.i32()?;
            let len = usize::try_from(self.i32()?).map_err(|_| "negative header length")?;
            let value = String::from_utf8(self.take(len)?.to_vec())
                .map_err(|_| "header value is not UTF-8")?;
            out.push((key, value));
        }
        Ok(out)
    }

    /// Avro zig-zag varint.
    fn varint(&mut self) -> Result<i64, String> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok((v >> 1) as i64 ^ -((v & 1) as i64));
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    fn avro_bytes(&mut self) -> Result<&[u8], String> {
        let len = usize::try_from(self.varint()?).map_err(|_| "negative Avro length")?;
        self.take(len)
    }

    /// `union { null, string }`.
    fn optional_string(&mut self) -> Result<Option<String>, String> {
        match self.varint()? {
            0 => Ok(None),
            1 => String::from_utf8(self.avro_bytes()?.to_vec())
                .map(Some)
                .map_err(|_| "string is not UTF-8".into()),
            b => Err(format!(
                "union branch {b} where null or string was expected"
            )),
        }
    }

    /// `orderingVal`: a union of single-field wrapper records (branch order of §5.7).
    fn skip_ordering_value(&mut self) -> Result<(), String> {
        match self.varint()? {
            0 => Ok(()),
            1 => self.take(1).map(|_| ()),
            2 | 3 | 8 | 10 | 11 => self.varint().map(|_| ()),
            4 => self.take(4).map(|_| ()),
            5 => self.take(8).map(|_| ()),
            6 | 7 | 9 => self.avro_bytes().map(|_| ()),
            b => Err(format!("ordering value of union branch {b} is not read")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(block_type: i32, header: &[(i32, &str)], content: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend_from_slice(&1i32.to_be_bytes());
        body.extend_from_slice(&block_type.to_be_bytes());
        body.extend_from_slice(&(header.len() as i32).to_be_bytes());
        for (k, v) in header {
            body.extend_from_slice(&k.to_be_bytes());
            body.extend_from_slice(&(v.len() as i32).to_be_bytes());
            body.extend_from_slice(v.as_bytes());
        }
        body.extend_from_slice(&(content.len() as i64).to_be_bytes());
        body.extend_from_slice(content);
        body.extend_from_slice(&0i32.to_be_bytes());
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&((body.len() + 8) as i64).to_be_bytes());
        out.extend_from_slice(&body);
        out.extend_from_slice(&((body.len() + 14) as i64).to_be_bytes());
        out
    }

    #[test]
    fn reads_delete_and_rollback_blocks() {
        // §5.7 example: one key, IntWrapper(0) ordering value.
        let mut payload = vec![0x02, 0x02, 0x0e];
        payload.extend_from_slice(b"TXN-002");
        payload.extend_from_slice(&[0x02, 0x12]);
        payload.extend_from_slice(b"region=us");
        payload.extend_from_slice(&[0x04, 0x00, 0x00]);
        let mut content = 3i32.to_be_bytes().to_vec();
        content.extend_from_slice(&(payload.len() as i32).to_be_bytes());
        content.extend_from_slice(&payload);
        let mut file = block(DELETE, &[(INSTANT_TIME, "001")], &content);
        file.extend(block(
            COMMAND,
            &[
                (INSTANT_TIME, "003"),
                (TARGET_INSTANT_TIME, "002"),
                (3, "0"),
            ],
            &[],
        ));
        // The MDT init block: an empty delete list.
        file.extend(block(
            DELETE,
            &[(INSTANT_TIME, "000")],
            &[0, 0, 0, 3, 0, 0, 0, 1, 0],
        ));
        let blocks = parse(&Bytes::from(file.clone()), "x.log").unwrap();
        assert_eq!(blocks.len(), 3);
        assert!(matches!(&blocks[0].content, Content::Delete(k) if k == &["TXN-002"]));
        assert_eq!(blocks[0].instant.as_deref(), Some("001"));
        assert!(matches!(&blocks[1].content, Content::Rollback { target } if target == "002"));
        assert!(matches!(&blocks[2].content, Content::Delete(k) if k.is_empty()));

        for cut in [3, 20, file.len() - 1] {
            let err = parse(&Bytes::from(file[..cut].to_vec()), "x.log").unwrap_err();
            assert_eq!(err.code(), "CORRUPT", "{err}");
            assert_eq!(err.object(), Some("x.log"));
        }
    }
}
