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
    match well_formed_cell_at(payload, pos, layout) {
        Some(at) => Ok(at),
        None => checked_cell_at(payload, pos, layout),
    }
}

/// [`cell_at`] for a whole, well-formed cell with a one-byte MVCC timestamp; `None` for
/// anything else, which [`checked_cell_at`] then reads or names. A point lookup walks half a
/// record-index block (thousands of cells) per key, so this is the hot loop of an upsert.
#[inline]
pub(crate) fn well_formed_cell_at(
    payload: &[u8],
    pos: usize,
    layout: CellLayout,
) -> Option<CellAt> {
    let be = |at: usize, n: usize| -> Option<usize> {
        let bytes = payload.get(at..at.checked_add(n)?)?;
        Some(bytes.iter().fold(0usize, |v, &b| v << 8 | b as usize))
    };
    let (key_len, value_len) = (be(pos, 4)?, be(pos + 4, 4)?);
    // Lengths are signed ints: the top bit set is a negative length.
    if key_len > i32::MAX as usize || value_len > i32::MAX as usize {
        return None;
    }
    let key_start = pos + 8;
    let value_start = key_start.checked_add(key_len)?;
    let mut end = value_start.checked_add(value_len)?;
    if layout.tags {
        end = end.checked_add(2)?.checked_add(be(end, 2)?)?;
    }
    if layout.mvcc {
        // One byte holds 0..=127; a longer or negative vlong takes the checked path.
        if *payload.get(end)? >= 0x80 {
            return None;
        }
        end += 1;
    }
    let row_len = be(key_start, 2)?;
    if end > payload.len() || row_len + 2 > key_len {
        return None;
    }
    Some(CellAt {
        row: key_start + 2..key_start + 2 + row_len,
        value: value_start..value_start + value_len,
        end,
    })
}

/// Every check of a cell, with what was wrong named.
fn checked_cell_at(payload: &[u8], pos: usize, layout: CellLayout) -> Result<CellAt> {
    let mut r = ByteReader::new(payload.get(pos..).unwrap_or_default(), "data block");
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One cell: `i32 keyLen | i32 valueLen | key (u16 rowLen | row | rest) | value | tags | mvcc`.
    fn cell(row: &[u8], value: &[u8], tags: Option<&[u8]>, mvcc: &[u8]) -> Vec<u8> {
        let mut key = (row.len() as u16).to_be_bytes().to_vec();
        key.extend_from_slice(row);
        key.extend_from_slice(b"f\0\0\0\0\0\0\0\0\x04");
        let mut out = (key.len() as i32).to_be_bytes().to_vec();
        out.extend_from_slice(&(value.len() as i32).to_be_bytes());
        out.extend_from_slice(&key);
        out.extend_from_slice(value);
        if let Some(tags) = tags {
            out.extend_from_slice(&(tags.len() as u16).to_be_bytes());
            out.extend_from_slice(tags);
        }
        out.extend_from_slice(mvcc);
        out
    }

    fn outcome(
        r: Result<CellAt>,
    ) -> std::result::Result<(Range<usize>, Range<usize>, usize), String> {
        r.map(|at| (at.row, at.value, at.end))
            .map_err(|e| e.to_string())
    }

    /// The quick path answers exactly as the checked one wherever it answers, and leaves to
    /// it every cell it does not take: cut short, damaged at any byte, or with a long or
    /// negative MVCC timestamp.
    #[test]
    fn well_formed_cells_read_as_every_check_reads_them() {
        let layouts = [(false, false), (true, false), (false, true), (true, true)];
        for (tags, mvcc) in layouts {
            let layout = CellLayout { tags, mvcc };
            for stamp in [
                &[0u8][..],
                &[0x7f],
                &[0x8f, 1],
                &[0x88, 1, 2, 3, 4, 5, 6, 7, 8],
                &[0xff],
                &[0x90],
            ] {
                let mut payload = cell(
                    b"key-1",
                    b"value",
                    tags.then_some(&b"tg"[..]),
                    if mvcc { stamp } else { &[] },
                );
                payload.extend(cell(
                    b"key-22",
                    b"",
                    tags.then_some(&b""[..]),
                    if mvcc { &[0] } else { &[] },
                ));
                let mut damaged = vec![payload.clone()];
                damaged.extend((0..payload.len()).map(|n| payload[..n].to_vec()));
                for at in 0..payload.len() {
                    for byte in [0x00, 0x7f, 0x80, 0xff] {
                        let mut p = payload.clone();
                        p[at] = byte;
                        damaged.push(p);
                    }
                }
                for p in &damaged {
                    for pos in [0, payload.len() / 2] {
                        let checked = outcome(checked_cell_at(p, pos, layout));
                        if let Some(at) = well_formed_cell_at(p, pos, layout) {
                            assert_eq!(Ok((at.row, at.value, at.end)), checked, "{p:?} at {pos}");
                        }
                        assert_eq!(outcome(cell_at(p, pos, layout)), checked);
                    }
                }
                let first = well_formed_cell_at(&payload, 0, layout);
                let one_byte_stamp = !mvcc || stamp[0] < 0x80;
                assert_eq!(first.is_some(), one_byte_stamp, "{stamp:?} {layout:?}");
            }
        }
    }
}
