//! Every page of a column chunk checked before the crate decodes it: its header walked, its
//! definition and repetition levels' runs checked against their bytes, and a page of no
//! values holding no bytes. The crate's level decoder indexes past a bit-packed run that
//! claims more bytes than its page holds, and its plain byte-array decoder divides by a
//! page's value count: on a hostile file both panic, which in wasm aborts the module.
//! Levels lead a page, so for gzip and zstd (and uncompressed pages) only that prefix is
//! inflated; other codecs' pages are decompressed once more whole.

use std::io::Read;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use parquet::basic::{Compression, Encoding};
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

/// Checks the pages of `column`, whose bytes (`column.byte_range()`) are `chunk`.
pub(super) fn check_pages(
    chunk: Bytes,
    column: &ColumnChunkMetaData,
    rows: usize,
) -> Result<(), String> {
    let descr = column.column_descr();
    let (max_def, max_rep) = (descr.max_def_level(), descr.max_rep_level());
    let codec = match column.compression() {
        Compression::UNCOMPRESSED => Codec::None,
        Compression::GZIP(_) => Codec::Gzip,
        Compression::ZSTD(_) => Codec::Zstd,
        _ => {
            super::thrift::check_pages(&chunk)?;
            return check_decompressed(chunk, column, rows, max_def, max_rep);
        }
    };
    let mut index = 0;
    super::thrift::walk_pages(&chunk, |fields, body| {
        let checked = check_header(fields, body, codec, max_def, max_rep);
        index += 1;
        checked.map_err(|e| format!("page {}: {e}", index - 1))
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Codec {
    None,
    Gzip,
    Zstd,
}

// `PageType` and `Encoding` as the Thrift header numbers them.
const DATA_PAGE: i64 = 0;
const DICTIONARY_PAGE: i64 = 2;
const DATA_PAGE_V2: i64 = 3;
const RLE: i64 = 3;
const BIT_PACKED: i64 = 4;

/// One page from its header fields and its stored body (`PageHeader` fields: 1 type, 2
/// uncompressed size; the v1 data page header is field 5, the dictionary's 7, v2's 8).
fn check_header(
    fields: &super::thrift::PageFields,
    body: &[u8],
    codec: Codec,
    max_def: i16,
    max_rep: i16,
) -> Result<(), String> {
    let count = |key| {
        let n = fields.get(key).unwrap_or(0);
        usize::try_from(n).map_err(|_| format!("a count of {n}"))
    };
    let uncompressed = count((0, 2))?;
    // What the crate hands its decoders: the body as stored, or inflated to the size the
    // header gives (the crate checks it).
    let size = |compressed: bool| match codec {
        Codec::None => body.len(),
        _ if !compressed => body.len(),
        _ => uncompressed,
    };
    // A header without its type is read by the crate as type 0, a v1 data page.
    match fields.get((0, 1)).unwrap_or(DATA_PAGE) {
        DATA_PAGE => {
            let values = count((5, 1))?;
            if values == 0 && size(true) > 0 {
                return Err(format!("no values, yet {} bytes", size(true)));
            }
            let mut page = Prefix::new(codec, body, size(true));
            let mut at = 0;
            if max_rep > 0 {
                let encoding = fields.get((5, 4)).unwrap_or(RLE);
                at = levels_v1(&mut page, at, encoding, max_rep, values, "repetition")?;
            }
            if max_def > 0 {
                let encoding = fields.get((5, 3)).unwrap_or(RLE);
                levels_v1(&mut page, at, encoding, max_def, values, "definition")?;
            }
            Ok(())
        }
        DATA_PAGE_V2 => {
            let (values, nulls) = (count((8, 1))?, count((8, 2))?);
            let (def, rep) = (count((8, 5))?, count((8, 6))?);
            let size = size(fields.get((8, 7)) != Some(0));
            let counts = V2 {
                values,
                nulls,
                def,
                rep,
            };
            check_v2(body, counts, size, max_def, max_rep)
        }
        DICTIONARY_PAGE if count((7, 1))? == 0 && size(true) > 0 => Err(format!(
            "a dictionary of no values, yet {} bytes",
            size(true)
        )),
        _ => Ok(()),
    }
}

/// A v2 data page's counts: values (nulls included), nulls, and the bytes of its
/// definition and repetition levels.
struct V2 {
    values: usize,
    nulls: usize,
    def: usize,
    rep: usize,
}

/// A v2 data page: its levels lead the body uncompressed; `size` is the page as the crate
/// hands it to its decoders (levels, then the values inflated).
fn check_v2(body: &[u8], n: V2, size: usize, max_def: i16, max_rep: i16) -> Result<(), String> {
    if n.nulls > n.values {
        return Err(format!("{} nulls among {} values", n.nulls, n.values));
    }
    let levels = n.rep.checked_add(n.def).filter(|l| *l <= body.len());
    let levels = levels.ok_or_else(|| {
        format!(
            "{} + {} bytes of levels in a page of {}",
            n.rep,
            n.def,
            body.len()
        )
    })?;
    if max_rep > 0 {
        runs(&body[..n.rep], bit_width(max_rep), "repetition")?;
    }
    if max_def > 0 {
        runs(&body[n.rep..levels], bit_width(max_def), "definition")?;
    }
    if n.values == n.nulls && size > levels {
        return Err(format!(
            "every value is null, yet {} bytes of values",
            size - levels
        ));
    }
    Ok(())
}

/// The leading bytes of a page, inflated only as far as asked (never past `size`).
struct Prefix<'a> {
    stored: &'a [u8],
    reader: Option<Box<dyn Read + 'a>>,
    inflated: Vec<u8>,
    size: usize,
}

impl<'a> Prefix<'a> {
    fn new(codec: Codec, stored: &'a [u8], size: usize) -> Self {
        let reader: Option<Box<dyn Read + 'a>> = match codec {
            Codec::None => None,
            Codec::Gzip => Some(Box::new(flate2::read::MultiGzDecoder::new(stored))),
            Codec::Zstd => zstd::stream::read::Decoder::with_buffer(stored)
                .ok()
                .map(|d| Box::new(d) as Box<dyn Read>),
        };
        Prefix {
            stored,
            reader,
            inflated: Vec::new(),
            size,
        }
    }

    /// The page's first `n` bytes, or all of it when shorter.
    fn first(&mut self, n: usize) -> Result<&[u8], String> {
        let n = n.min(self.size);
        let Some(reader) = self.reader.as_mut() else {
            return Ok(&self.stored[..n.min(self.stored.len())]);
        };
        if self.inflated.len() < n {
            let want = (n - self.inflated.len()) as u64;
            (reader.take(want).read_to_end(&mut self.inflated))
                .map_err(|e| format!("decompressing: {e}"))?;
        }
        Ok(&self.inflated[..n.min(self.inflated.len())])
    }
}

/// A v1 page's levels at `at`: RLE (a 4-byte length, then runs) or the old bit-packed
/// encoding (`values` levels, packed). Returns where they end.
fn levels_v1(
    page: &mut Prefix,
    at: usize,
    encoding: i64,
    max: i16,
    values: usize,
    what: &str,
) -> Result<usize, String> {
    let width = bit_width(max);
    let past = || format!("{what} levels run past the page");
    let (start, len) = match encoding {
        RLE => {
            let head = page.first(at + 4)?;
            let head = head.get(at..at + 4).ok_or_else(past)?;
            let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
            (at + 4, len)
        }
        BIT_PACKED => (at, values.checked_mul(width).ok_or_else(past)?.div_ceil(8)),
        other => return Err(format!("{what} levels in encoding {other}")),
    };
    let end = start.checked_add(len).ok_or_else(past)?;
    let data = page.first(end)?;
    let data = data.get(start..end).ok_or_else(past)?;
    if encoding == RLE {
        runs(data, width, what)?;
    }
    Ok(end)
}

/// The pages of a codec read whole, decompressed as the crate does it.
fn check_decompressed(
    chunk: Bytes,
    column: &ColumnChunkMetaData,
    rows: usize,
    max_def: i16,
    max_rep: i16,
) -> Result<(), String> {
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
            let mut page = Prefix::new(Codec::None, buf, buf.len());
            let mut at = 0;
            if max_rep > 0 {
                let encoding = thrift_encoding(*rep_level_encoding);
                at = levels_v1(&mut page, at, encoding, max_rep, values, "repetition")?;
            }
            if max_def > 0 {
                let encoding = thrift_encoding(*def_level_encoding);
                levels_v1(&mut page, at, encoding, max_def, values, "definition")?;
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
            let counts = V2 {
                values: *num_values as usize,
                nulls: *num_nulls as usize,
                def: *def_levels_byte_len as usize,
                rep: *rep_levels_byte_len as usize,
            };
            check_v2(buf, counts, buf.len(), max_def, max_rep)
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

/// A level encoding as the Thrift header numbers it (others are refused as levels).
fn thrift_encoding(encoding: Encoding) -> i64 {
    #[expect(deprecated)]
    match encoding {
        Encoding::RLE => RLE,
        Encoding::BIT_PACKED => BIT_PACKED,
        _ => -1,
    }
}

/// Bits a level of at most `max` takes.
fn bit_width(max: i16) -> usize {
    (16 - max.leading_zeros()) as usize
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

    #[test]
    fn levels_are_read_from_an_inflated_prefix() {
        use std::io::Write;
        // Definition levels of 3 bytes: one bit-packed group (1 byte), then a run claiming
        // two groups with one byte left; then values the check never inflates.
        let bad: Vec<u8> = [&[3, 0, 0, 0, 0b11, 0xff, 0b101][..], &[7; 4096]].concat();
        let good: Vec<u8> = [&[2, 0, 0, 0, 0b11, 0xff][..], &[7; 4096]].concat();
        let gzip = |raw: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(raw).unwrap();
            e.finish().unwrap()
        };
        let zstd = |raw: &[u8]| zstd::bulk::compress(raw, 3).unwrap();
        for (codec, pack) in [
            (Codec::Gzip, &gzip as &dyn Fn(&[u8]) -> Vec<u8>),
            (Codec::Zstd, &zstd),
        ] {
            let stored = pack(&bad);
            let mut page = Prefix::new(codec, &stored, bad.len());
            let e = levels_v1(&mut page, 0, RLE, 1, 8, "definition").unwrap_err();
            assert!(e.contains("runs past them"), "{e}");
            assert!(page.inflated.len() < 64, "inflated {}", page.inflated.len());
            let stored = pack(&good);
            let mut page = Prefix::new(codec, &stored, good.len());
            assert_eq!(levels_v1(&mut page, 0, RLE, 1, 8, "definition"), Ok(6));
            // A length past the page's size.
            let mut page = Prefix::new(codec, &stored, 5);
            assert!(levels_v1(&mut page, 0, RLE, 1, 8, "definition").is_err());
        }
    }
}
