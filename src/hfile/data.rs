//! Cells of a data block: `i32 keyLen | i32 valueLen | key | value | [tags] | [mvcc vlong]`,
//! key = `u16 rowLen | row | family | qualifier | i64 ts | u8 type`. Only the row matters to Hudi.

use bytes::Bytes;

use super::bytes_reader::ByteReader;
use super::index::row_of_key;
use crate::error::{malformed, Result};

/// One key/value pair: the row key and the value, both zero-copy slices of the block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub key: Bytes,
    pub value: Bytes,
}

/// What follows the value of each cell, from the file info.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CellLayout {
    /// `MAX_TAGS_LEN` present: a `u16` tags length and the tags follow the value.
    pub tags: bool,
    /// `KEY_VALUE_VERSION` = 1: an MVCC timestamp (Hadoop vlong) ends each cell.
    pub mvcc: bool,
}

/// Every cell of an uncompressed data block payload, in file order.
pub(crate) fn parse_cells(block: &Bytes, layout: CellLayout) -> Result<Vec<Cell>> {
    let mut r = ByteReader::new(block, "data block");
    let mut cells = Vec::new();
    while !r.is_empty() {
        let key_len = r.len_i32("key length")?;
        let value_len = r.len_i32("value length")?;
        let key = block.slice(r.take_range(key_len)?);
        let value = block.slice(r.take_range(value_len)?);
        if layout.tags {
            let tags_len = r.u16()? as usize;
            r.take(tags_len)?;
        }
        if layout.mvcc && r.hadoop_vlong()? < 0 {
            return Err(malformed("data block: negative MVCC timestamp"));
        }
        cells.push(Cell {
            key: row_of_key(&key)?,
            value,
        });
    }
    Ok(cells)
}
