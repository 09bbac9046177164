//! Cells of a data block: `i32 keyLen | i32 valueLen | key | value | [tags] | [mvcc vlong]`,
//! key = `u16 rowLen | row | family | qualifier | i64 ts | u8 type`. Only the row matters to Hudi.

use std::ops::Range;

use bytes::Bytes;

use super::bytes_reader::ByteReader;
use super::index::row_range;
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
    let mut cells = Vec::new();
    let mut pos = 0;
    while pos < block.len() {
        let at = cell_at(block, pos, layout)?;
        cells.push(Cell {
            key: block.slice(at.row),
            value: block.slice(at.value),
        });
        pos = at.end;
    }
    Ok(cells)
}

/// Where one cell's row and value lie in a payload, and where the next cell starts.
pub(crate) struct CellAt {
    pub row: Range<usize>,
    pub value: Range<usize>,
    pub end: usize,
}

/// The cell starting at `pos` of `payload`.
pub(crate) fn cell_at(payload: &[u8], pos: usize, layout: CellLayout) -> Result<CellAt> {
    let mut r = ByteReader::new(&payload[pos..], "data block");
    let key_len = r.len_i32("key length")?;
    let value_len = r.len_i32("value length")?;
    let key = r.take_range(key_len)?;
    let value = r.take_range(value_len)?;
    if layout.tags {
        let tags_len = r.u16()? as usize;
        r.take(tags_len)?;
    }
    if layout.mvcc && r.hadoop_vlong()? < 0 {
        return Err(malformed("data block: negative MVCC timestamp"));
    }
    let row = row_range(&payload[pos + key.start..pos + key.end])?;
    Ok(CellAt {
        row: pos + key.start + row.start..pos + key.start + row.end,
        value: pos + value.start..pos + value.end,
        end: pos + r.pos(),
    })
}
