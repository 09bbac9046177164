//! Data block contents: Avro (`int version | int count | repeat(int len | datum)`, docs:
//! docs/hudi-format.md §5.5; CDC blocks share it) and Parquet (a whole Parquet file, §5.6).

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;

use crate::avro::decode::AvroToArrow;
use crate::error::{malformed, HudiError, Result};

/// Content version Java writes for Avro data blocks (all versions share the layout).
pub const AVRO_BLOCK_VERSION: i32 = 3;

/// The records of an Avro data block, as slices of the content.
#[derive(Debug, Clone)]
pub struct AvroRecords {
    pub version: i32,
    pub count: usize,
    body: Bytes,
}

impl AvroRecords {
    pub fn parse(content: Bytes) -> Result<AvroRecords> {
        if content.len() < 8 {
            return Err(malformed("Avro data block shorter than its 8-byte prefix"));
        }
        let version = be_i32(&content[0..4]);
        let count = be_i32(&content[4..8]);
        // Each record takes at least its 4-byte length.
        let count = usize::try_from(count)
            .ok()
            .filter(|n| *n <= (content.len() - 8) / 4)
            .ok_or_else(|| malformed(format!("record count {count} does not fit the block")))?;
        Ok(AvroRecords {
            version,
            count,
            body: content.slice(8..),
        })
    }

    /// Each record's Avro binary datum, zero-copy.
    pub fn iter(&self) -> impl Iterator<Item = Result<Bytes>> + '_ {
        let mut pos = 0usize;
        (0..self.count).map(move |i| {
            let rest = &self.body[pos.min(self.body.len())..];
            let len = rest
                .get(..4)
                .map(be_i32)
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| n + 4 <= rest.len())
                .ok_or_else(|| malformed(format!("record {i} of the Avro block is cut short")))?;
            let start = pos + 4;
            pos = start + len;
            Ok(self.body.slice(start..pos))
        })
    }
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Decodes an Avro data block into one batch of `target` (or of the writer schema's Arrow
/// form when `target` is `None`).
pub fn decode_avro_block(
    content: Bytes,
    writer_schema: &str,
    target: Option<SchemaRef>,
    path: &str,
) -> Result<RecordBatch> {
    let run = || -> Result<RecordBatch> {
        let schema = crate::avro::parse_schema(writer_schema)
            .map_err(|e| HudiError::corrupt_by("", "bad block schema", e))?;
        let records = AvroRecords::parse(content)?;
        let mut decoder = match target {
            Some(t) => AvroToArrow::new(&schema, t)?,
            None => AvroToArrow::for_writer(&schema)?,
        };
        // A declared count is only bounded by the block's size: reserve for a batch at most,
        // so a lying count cannot multiply memory by the number of columns.
        decoder.reserve(records.count.min(8192));
        for datum in records.iter() {
            decoder.append(&datum?)?;
        }
        decoder.finish()
    };
    run().map_err(|e| e.in_file(path))
}

/// Decodes the Parquet file embedded in a Parquet data block.
pub fn decode_parquet_block(content: Bytes, path: &str) -> Result<Vec<RecordBatch>> {
    crate::base_file::decode_in_memory(content, path, "bad Parquet data block")
}

/// Serializes Avro datums as Avro data block content.
pub fn encode_avro_block<'a>(records: impl ExactSizeIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&AVRO_BLOCK_VERSION.to_be_bytes());
    out.extend_from_slice(&(records.len() as i32).to_be_bytes());
    for r in records {
        out.extend_from_slice(&(r.len() as i32).to_be_bytes());
        out.extend_from_slice(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_slices() {
        let content = encode_avro_block([&b"ab"[..], b"", b"xyz"].into_iter());
        let recs = AvroRecords::parse(Bytes::from(content.clone())).unwrap();
        assert_eq!((recs.version, recs.count), (3, 3));
        let got: Vec<Bytes> = recs.iter().collect::<Result<_>>().unwrap();
        assert_eq!(got, vec![&b"ab"[..], b"", b"xyz"]);

        let cut = AvroRecords::parse(Bytes::from(content[..content.len() - 1].to_vec())).unwrap();
        assert!(cut.iter().nth(2).unwrap().is_err());
        assert!(AvroRecords::parse(Bytes::from_static(b"\0\0\0\x03")).is_err());
    }
}
