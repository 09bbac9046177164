//! Every data page of a column chunk decompressed and its definition and repetition levels
//! walked before the crate decodes them. The crate's level decoder indexes past a bit-packed
//! run that claims more bytes than its page holds, and its plain byte-array decoder divides
//! by a page's value count: on a hostile file both panic, which in wasm aborts the module.
//! Walking only run headers costs a second decompression of each page, nothing per value.

use std::sync::Arc;

use bytes::{Buf, Bytes};
use parquet::basic::Encoding;
use parquet::column::page::{Page, PageReader};
use parquet::errors::ParquetError;
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::serialized_reader::SerializedPageReader;

/// A column chunk's bytes, addressed by their offsets in the file.
struct ChunkAt {
    start: u64,
    bytes: Bytes,
}

impl ChunkAt {
    fn range(&self, start: u64, len: usize) -> parquet::errors::Result<Bytes> {
        let from = start.checked_sub(self.start).map(|p| p as usize);
        let to = from.and_then(|f| f.checked_add(len));
        match (from, to) {
            (Some(from), Some(to)) if to <= self.bytes.len() => Ok(self.bytes.slice(from..to)),
            _ => Err(ParquetError::EOF(format!(
                "{len} bytes at {start} are outside the column chunk"
            ))),
        }
    }
}

impl Length for ChunkAt {
    fn len(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
}

impl ChunkReader for ChunkAt {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let rest = self.len().saturating_sub(start) as usize;
        Ok(self.range(start, rest)?.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.range(start, length)
    }
}

/// Checks the data pages of `column`, whose bytes (`column.byte_range()`) are `chunk`.
pub(super) fn check_levels(
    chunk: Bytes,
    column: &ColumnChunkMetaData,
    rows: usize,
) -> Result<(), String> {
    let descr = column.column_descr();
    let (max_def, max_rep) = (descr.max_def_level(), descr.max_rep_level());
    let reader = ChunkAt {
        start: column.byte_range().0,
        bytes: chunk,
    };
    let mut pages = SerializedPageReader::new(Arc::new(reader), column, rows, None)
        .map_err(|e| e.to_string())?;
    let mut index = 0;
    while let Some(page) = pages.get_next_page().map_err(|e| e.to_string())? {
        check_page(&page, max_def, max_rep).map_err(|e| format!("page {index}: {e}"))?;
        index += 1;
    }
    Ok(())
}

fn check_page(page: &Page, max_def: i16, max_rep: i16) -> Result<(), String> {
    match page {
        Page::DataPage {
            buf,
            num_values,
            def_level_encoding,
            rep_level_encoding,
            ..
        } => {
            if *num_values == 0 && !buf.is_empty() {
                return Err(format!("no values, yet {} bytes", buf.len()));
            }
            let values = *num_values as usize;
            let mut at = 0;
            if max_rep > 0 {
                at = levels_v1(buf, at, *rep_level_encoding, max_rep, values, "repetition")?;
            }
            if max_def > 0 {
                levels_v1(buf, at, *def_level_encoding, max_def, values, "definition")?;
            }
            Ok(())
        }
        Page::DataPageV2 {
            buf,
            num_values,
            num_nulls,
            def_levels_byte_len,
            rep_levels_byte_len,
            ..
        } => {
            if num_nulls > num_values {
                return Err(format!("{num_nulls} nulls among {num_values} values"));
            }
            let rep = *rep_levels_byte_len as usize;
            let def = *def_levels_byte_len as usize;
            let levels = rep.checked_add(def).filter(|n| *n <= buf.len());
            let levels = levels.ok_or_else(|| {
                format!("{rep} + {def} bytes of levels in a page of {}", buf.len())
            })?;
            if max_rep > 0 {
                runs(&buf[..rep], bit_width(max_rep), "repetition")?;
            }
            if max_def > 0 {
                runs(&buf[rep..levels], bit_width(max_def), "definition")?;
            }
            if num_values == num_nulls && buf.len() > levels {
                return Err(format!(
                    "every value is null, yet {} bytes of values",
                    buf.len() - levels
                ));
            }
            Ok(())
        }
        Page::DictionaryPage {
            buf, num_values, ..
        } if *num_values == 0 && !buf.is_empty() => Err(format!(
            "a dictionary of no values, yet {} bytes",
            buf.len()
        )),
        Page::DictionaryPage { .. } => Ok(()),
    }
}

/// Bits a level of at most `max` takes.
fn bit_width(max: i16) -> usize {
    (16 - max.leading_zeros()) as usize
}

/// A v1 page's levels at `at`: RLE (a 4-byte length, then runs) or the old bit-packed
/// encoding (`values` levels, packed). Returns where they end.
fn levels_v1(
    buf: &[u8],
    at: usize,
    encoding: Encoding,
    max: i16,
    values: usize,
    what: &str,
) -> Result<usize, String> {
    let width = bit_width(max);
    let past = || format!("{what} levels run past the page");
    #[expect(deprecated)]
    let (start, len) = match encoding {
        Encoding::RLE => {
            let head = buf.get(at..at + 4).ok_or_else(past)?;
            let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
            (at + 4, len)
        }
        Encoding::BIT_PACKED => (at, values.checked_mul(width).ok_or_else(past)?.div_ceil(8)),
        other => return Err(format!("{what} levels in encoding {other}")),
    };
    let end = start.checked_add(len).filter(|e| *e <= buf.len());
    let end = end.ok_or_else(past)?;
    if encoding == Encoding::RLE {
        runs(&buf[start..end], width, what)?;
    }
    Ok(end)
}

/// The runs of an RLE / bit-packing hybrid of `width`-bit values: each run's bytes must be
/// within `data`.
fn runs(data: &[u8], width: usize, what: &str) -> Result<(), String> {
    let mut pos = 0;
    while pos < data.len() {
        let (header, read) = varint(&data[pos..])
            .ok_or_else(|| format!("{what} levels: a bad run header at byte {pos}"))?;
        pos += read;
        let bytes = if header & 1 == 1 {
            // Bit-packed: groups of 8 values, `width` bytes each.
            (header >> 1).checked_mul(width as u64)
        } else {
            // Repeated: the value in whole bytes.
            Some(width.div_ceil(8) as u64)
        };
        let end = bytes
            .and_then(|b| (pos as u64).checked_add(b))
            .filter(|e| *e <= data.len() as u64);
        pos = end.ok_or_else(|| format!("{what} levels: a run at byte {pos} runs past them"))?
            as usize;
    }
    Ok(())
}

/// An unsigned LEB128 of at most 10 bytes, and its length.
fn varint(data: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, byte) in data.iter().take(10).enumerate() {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_must_fit_their_bytes() {
        // A bit-packed run of one group (8 one-bit values: 1 byte), then a repeated run.
        runs(&[0b11, 0xff, 0b1000, 1], 1, "definition").unwrap();
        // Two groups claimed, one byte there.
        let e = runs(&[0b101, 0xff], 1, "definition").unwrap_err();
        assert!(e.contains("runs past"), "{e}");
        // A header that never ends.
        assert!(runs(&[0x80, 0x80], 1, "definition").is_err());
        // A repeated run without its value.
        assert!(runs(&[0b10], 1, "definition").is_err());
    }

    #[test]
    fn pages_with_no_values_hold_no_bytes() {
        let page = |buf: &'static [u8], num_values| Page::DataPage {
            buf: Bytes::from_static(buf),
            num_values,
            encoding: Encoding::PLAIN,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        assert!(check_page(&page(b"\x01\x00\x00\x00x", 0), 0, 0).is_err());
        check_page(&page(b"", 0), 0, 0).unwrap();
        // Definition levels whose length runs past the page.
        let e = check_page(&page(b"\x09\x00\x00\x00\x02", 1), 1, 0).unwrap_err();
        assert!(e.contains("run past the page"), "{e}");
        check_page(&page(b"\x02\x00\x00\x00\x02\x01abcd", 1), 1, 0).unwrap();
    }
}
