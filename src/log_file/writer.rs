//! Serializing blocks exactly as Java's `HoodieLogFormatWriter.appendBlocks` does (docs:
//! docs/hudi-format.md §5.1, §5.4). A log file is these blocks concatenated.

use super::block::{BlockMetadata, BlockType, HeaderKey};
use super::data::encode_avro_block;
use super::delete::{encode_delete_block, DeleteRecord};
use super::format::{FRAMING_BYTES, LOG_FORMAT_VERSION, MAGIC};
use crate::error::{HudiError, Result};

/// One whole block: magic, lengths, version, type, header, content, footer.
pub fn encode_block(
    block_type: BlockType,
    header: &BlockMetadata,
    content: &[u8],
    footer: &BlockMetadata,
) -> Result<Vec<u8>> {
    let header = encode_metadata(header);
    let footer = encode_metadata(footer);
    let total = FRAMING_BYTES as usize + header.len() + content.len() + footer.len();
    // Java computes the block length as an int.
    let block_len = i32::try_from(total - 14)
        .map_err(|_| HudiError::invalid("log block larger than 2 GiB"))? as i64;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&block_len.to_be_bytes());
    out.extend_from_slice(&LOG_FORMAT_VERSION.to_be_bytes());
    out.extend_from_slice(&block_type.ordinal().to_be_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&(content.len() as i64).to_be_bytes());
    out.extend_from_slice(content);
    out.extend_from_slice(&footer);
    out.extend_from_slice(&(block_len + MAGIC.len() as i64).to_be_bytes());
    Ok(out)
}

/// `int count | repeat(int key ordinal | int len | UTF-8 value)`, in the map's order.
pub fn encode_metadata(meta: &BlockMetadata) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(meta.len() as i32).to_be_bytes());
    for (key, value) in meta.entries() {
        out.extend_from_slice(&key.ordinal().to_be_bytes());
        out.extend_from_slice(&(value.len() as i32).to_be_bytes());
        out.extend_from_slice(value.as_bytes());
    }
    out
}

/// An Avro data block of `records` (Avro binary datums of `schema`) written by `instant`.
pub fn avro_data_block<'a>(
    instant: &str,
    schema: &str,
    records: impl ExactSizeIterator<Item = &'a [u8]>,
) -> Result<Vec<u8>> {
    avro_block(BlockType::AvroData, instant, schema, records)
}

/// An Avro data block of `count` records that `records` appends to the buffer it is given
/// (each `int length | datum`): the same
/// bytes as [`avro_data_block`], built in one buffer (no copy of the records or the
/// content). `capacity` is a guess at the block's size, to spare regrowing it.
pub fn avro_data_block_in_place(
    instant: &str,
    schema: &str,
    count: usize,
    capacity: usize,
    records: impl FnOnce(&mut Vec<u8>) -> Result<()>,
) -> Result<Vec<u8>> {
    let header = BlockMetadata::new()
        .with(HeaderKey::InstantTime, instant)
        .with(HeaderKey::Schema, schema);
    let header = encode_metadata(&header);
    let footer = encode_metadata(&BlockMetadata::new());
    let count =
        i32::try_from(count).map_err(|_| HudiError::invalid("log block of over 2^31 records"))?;
    let mut out =
        Vec::with_capacity(FRAMING_BYTES as usize + header.len() + footer.len() + capacity);
    out.extend_from_slice(MAGIC);
    let block_len_at = out.len();
    out.extend_from_slice(&0i64.to_be_bytes());
    out.extend_from_slice(&LOG_FORMAT_VERSION.to_be_bytes());
    out.extend_from_slice(&BlockType::AvroData.ordinal().to_be_bytes());
    out.extend_from_slice(&header);
    let content_len_at = out.len();
    out.extend_from_slice(&0i64.to_be_bytes());
    let content_at = out.len();
    out.extend_from_slice(&super::data::AVRO_BLOCK_VERSION.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    records(&mut out)?;
    let content_len = (out.len() - content_at) as i64;
    out.extend_from_slice(&footer);
    let total = out.len() + 8;
    // Java computes the block length as an int.
    let block_len = i32::try_from(total - 14)
        .map_err(|_| HudiError::invalid("log block larger than 2 GiB"))? as i64;
    out[block_len_at..block_len_at + 8].copy_from_slice(&block_len.to_be_bytes());
    out[content_len_at..content_len_at + 8].copy_from_slice(&content_len.to_be_bytes());
    out.extend_from_slice(&(block_len + MAGIC.len() as i64).to_be_bytes());
    Ok(out)
}

/// A CDC data block: change records (Avro binary datums of the CDC schema `schema`), laid
/// out as an Avro data block.
pub fn cdc_data_block<'a>(
    instant: &str,
    schema: &str,
    records: impl ExactSizeIterator<Item = &'a [u8]>,
) -> Result<Vec<u8>> {
    avro_block(BlockType::CdcData, instant, schema, records)
}

fn avro_block<'a>(
    block_type: BlockType,
    instant: &str,
    schema: &str,
    records: impl ExactSizeIterator<Item = &'a [u8]>,
) -> Result<Vec<u8>> {
    let header = BlockMetadata::new()
        .with(HeaderKey::InstantTime, instant)
        .with(HeaderKey::Schema, schema);
    let content = encode_avro_block(records);
    encode_block(block_type, &header, &content, &BlockMetadata::new())
}

/// A delete block; data-table delete blocks carry the table schema, MDT ones none.
pub fn delete_block(
    instant: &str,
    schema: Option<&str>,
    records: &[DeleteRecord],
) -> Result<Vec<u8>> {
    let mut header = BlockMetadata::new().with(HeaderKey::InstantTime, instant);
    if let Some(s) = schema {
        header.insert(HeaderKey::Schema, s);
    }
    let content = encode_delete_block(records);
    encode_block(BlockType::Delete, &header, &content, &BlockMetadata::new())
}

/// A rollback command block voiding every block of `target` (header order as Java 0.x wrote
/// it in the fixtures, §5.1).
pub fn rollback_block(instant: &str, target: &str) -> Result<Vec<u8>> {
    let header = BlockMetadata::new()
        .with(HeaderKey::InstantTime, instant)
        .with(HeaderKey::CommandBlockType, "0")
        .with(HeaderKey::TargetInstantTime, target);
    encode_block(BlockType::Command, &header, &[], &BlockMetadata::new())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The 105-byte v6 rollback log file of docs/hudi-format.md §5.1.
    pub(crate) const ROLLBACK_HEX: &str = "234855444923\
        000000000000005b 00000001 00000000 00000003\
        00000000 00000011 3230323530313236303430393336353738\
        00000003 00000001 30\
        00000001 00000011 3230323530313236303430383236383738\
        0000000000000000 00000000 0000000000000061";

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn rollback_block_matches_the_documented_bytes() {
        let bytes = rollback_block("20250126040936578", "20250126040826878").unwrap();
        assert_eq!(bytes.len(), 105);
        assert_eq!(bytes, hex(ROLLBACK_HEX));
    }

    #[test]
    fn avro_block_in_place_is_the_same_bytes() {
        let records: [&[u8]; 3] = [b"ab", b"", b"xyz"];
        let expected = avro_data_block("20250101000000000", "{}", records.into_iter()).unwrap();
        for capacity in [0, 1 << 10] {
            let got = avro_data_block_in_place("20250101000000000", "{}", 3, capacity, |out| {
                for r in records {
                    out.extend_from_slice(&(r.len() as i32).to_be_bytes());
                    out.extend_from_slice(r);
                }
                Ok(())
            })
            .unwrap();
            assert_eq!(got, expected);
        }
    }
}
