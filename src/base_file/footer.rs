//! Reading a base file's footer from storage in as few round trips as its size allows: one
//! speculative tail read, and for a long footer (Hudi's bloom filter) its head and only the
//! parts its walk needs, fetched beside the tail when a sibling's footer length hints where
//! it starts; small files' data comes along. The footer is checked before it is decoded.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::file::metadata::{
    FileMetaData, KeyValue, ParquetMetaData, ParquetMetaDataBuilder, ParquetMetaDataReader,
    RowGroupMetaData,
};
use parquet::schema::types::SchemaDescPtr;

use super::{maps, parquet_err, thrift, Footer};
use crate::error::{HudiError, Result};
use crate::storage::{Purpose, RangedFile, Storage};

/// Bytes read speculatively from the end of a file: a footer without Hudi's bloom filter
/// (a few KB for tens of columns), or the last fields after the bloom filter.
pub const FOOTER_PREFETCH: u64 = 8 * 1024;
/// Bytes read from the start of a footer too long for the tail read (the schema and the row
/// groups come first), and at each offset a footer walk still needs.
pub(super) const FOOTER_HEAD: u64 = 8 * 1024;
/// Bytes before where a hinted footer would start that its head read fetches too.
const HEAD_SLACK: u64 = 2 * 1024;
/// Key-value metadata values at least this long that the reads above did not fetch are left
/// out of the footer (Hudi's ~430 KB bloom filter; reads never use it).
const UNFETCHED_VALUE: u64 = 4 * 1024;
/// Fetches a footer walk may ask for before the rest of the footer is fetched whole.
const FOOTER_FETCHES: usize = 8;
/// Data bytes read with a base file's footer when every column is read (see
/// [`data_with_footer`]).
const DATA_WITH_FOOTER: u64 = 1024 * 1024;
/// A base file's footer: the last [`FOOTER_PREFETCH`] bytes, and when the footer is longer,
/// its head and whatever else its walk needs, skipping key-value values not fetched.
pub async fn read_footer(storage: &dyn Storage, path: &str) -> Result<Footer> {
    read_footer_and_data(storage, path, None, 0, None).await
}

/// The `data_limit` of [`read_footer_and_data`] for a read of every column, or of some: a
/// small file's data whole comes with the footer's head, where its chunks would each cost a
/// round trip after it; a projection reads only its chunks.
pub fn data_with_footer(every_column: bool) -> u64 {
    if every_column {
        DATA_WITH_FOOTER
    } else {
        0
    }
}

/// [`read_footer`], and when the footer's head needs a request of its own and the data
/// before it is at most `data_limit` bytes, the data too in that request: a read of every
/// column saves the round trip its column chunks would take. A known `size` (listings and
/// the metadata table carry it) saves the `head` a store without suffix ranges would need.
///
/// `footer_len_hint`: the footer length of a file written alike. Hudi's writers put the same
/// bloom filter in every footer, so this file's footer likely starts that far from its
/// end, and its head (and the data before it) is fetched beside the tail, not after it.
pub async fn read_footer_and_data(
    storage: &dyn Storage,
    path: &str,
    size: Option<u64>,
    data_limit: u64,
    footer_len_hint: Option<u64>,
) -> Result<Footer> {
    let size = size.filter(|s| *s > 0);
    let (file, early) = open_with_hint(storage, path, size, data_limit, footer_len_hint).await?;
    let listed = size.is_some();
    let size = file.size();
    let meta_len = footer_len(file.held().1, size, listed, path)?;
    let data_end = size - meta_len - 8;
    let with_data = data_end <= data_limit;
    let (held_start, held) = file.held();
    let (footer, tail, data) = if held_start <= data_end {
        let at = (data_end - held_start) as usize;
        let footer = held.slice(at..held.len() - 8);
        // Keep the tail only when it holds column data too (small files); a footer alone is
        // already decoded, and a session keeps the footers of every file it read.
        let tail = if at > 0 { held.clone() } else { Bytes::new() };
        let mut data = data_prefix(early.as_ref(), data_end);
        if with_data && !data.is_empty() && (data.len() as u64) < data_end {
            // The footer was shorter than the hint: the rest of the data, as the read would.
            let rest = file
                .read_one(data.len() as u64..data_end, Purpose::ColumnChunk)
                .await?;
            data = Bytes::from([&data[..], &rest[..]].concat());
        }
        (footer, tail, data)
    } else {
        let (footer, data) =
            footer_by_parts(&file, data_end, meta_len, with_data, early, path).await?;
        (footer, Bytes::new(), data)
    };
    let metadata = decode_footer(&footer, data_end, path)?;
    let metadata = ArrowReaderMetadata::try_new(
        Arc::new(without_bloom_filters(metadata)),
        ArrowReaderOptions::new(),
    )
    .map_err(|e| parquet_err(path, e))?;
    let reading = maps::reading_metadata(&metadata, path)?;
    Ok(Footer {
        metadata,
        size,
        footer_len: meta_len,
        tail,
        data,
        reading,
    })
}

/// The file with its tail held, and what the hint lets the same round trip fetch beside
/// it: `(offset, bytes)` where the footer's head (and, with data, all before it) likely is.
async fn open_with_hint<'a>(
    storage: &'a dyn Storage,
    path: &str,
    size: Option<u64>,
    data_limit: u64,
    footer_len_hint: Option<u64>,
) -> Result<(RangedFile<&'a dyn Storage>, Option<(u64, Bytes)>)> {
    let purpose = Purpose::Footer;
    let window = match (size, footer_len_hint) {
        (Some(size), Some(len)) => head_window(size, len, data_limit),
        _ => None,
    };
    let Some((size, window)) = size.zip(window) else {
        let file = RangedFile::open_tail(storage, path, FOOTER_PREFETCH, size, purpose).await?;
        return Ok((file, None));
    };
    // Mostly column chunks when the window starts at 0: counted as such.
    let window_purpose = if window.start == 0 {
        Purpose::ColumnChunk
    } else {
        purpose
    };
    if window.end + FOOTER_PREFETCH >= size {
        // The window and the tail touch: one read from the window's start.
        let n = size - window.start;
        let file = RangedFile::open_tail(storage, path, n, Some(size), window_purpose).await?;
        return Ok((file, None));
    }
    let start = window.start;
    let (file, early) = futures::join!(
        RangedFile::open_tail(storage, path, FOOTER_PREFETCH, Some(size), purpose),
        crate::storage::ranged::read_exact_one(storage, path, window, window_purpose),
    );
    Ok((file?, Some((start, early?))))
}

/// The data bytes a hinted read fetched from the file's start (all or some of those before
/// `data_end`): column chunks inside them need no request of their own.
fn data_prefix(early: Option<&(u64, Bytes)>, data_end: u64) -> Bytes {
    match early {
        Some((0, bytes)) => bytes.slice(..bytes.len().min(data_end as usize)),
        _ => Bytes::new(),
    }
}

/// Whether a footer of `footer_len` bytes (and its 8-byte trailer) fits the tail read: no
/// bloom filter (hudi-rs writes none), so nothing in the file is skipped by reading it.
pub fn fits_tail(footer_len: u64) -> bool {
    footer_len + 8 <= FOOTER_PREFETCH
}

/// Where a file of `size` bytes whose footer is likely `footer_len` long has its footer's
/// head, from 0 when the data before it is at most `data_limit` bytes. A footer that fits
/// the tail read has no head to fetch apart: the whole file when it is at most
/// `data_limit` (its data then comes with the footer, not a round trip after it), else
/// `None`, where a hint would save nothing but risk a whole file.
fn head_window(size: u64, footer_len: u64, data_limit: u64) -> Option<Range<u64>> {
    if fits_tail(footer_len) {
        return (size <= data_limit).then_some(0..size);
    }
    let data_end = size.checked_sub(footer_len + 8)?;
    let end = (data_end + FOOTER_HEAD).min(size);
    // A footer a little longer than the guess starts a little earlier.
    let start = if data_end <= data_limit {
        0
    } else {
        data_end.saturating_sub(HEAD_SLACK)
    };
    Some(start..end)
}

/// The footer of `meta_len` bytes at `data_end`, of which `file` holds the end: its walk
/// fetches the head and what else it needs, and big values it did not need stay unfetched.
/// `with_data`: the head's request starts where the data held so far ends (the file's
/// start at first); the data comes back too. `early` is what the hint fetched already.
async fn footer_by_parts(
    file: &RangedFile<&dyn Storage>,
    data_end: u64,
    meta_len: u64,
    with_data: bool,
    early: Option<(u64, Bytes)>,
    path: &str,
) -> Result<(Bytes, Bytes)> {
    let (held_start, held) = file.held();
    let mut windows = vec![(
        (held_start - data_end) as usize,
        held.slice(..held.len() - 8),
    )];
    let mut data = data_prefix(early.as_ref(), data_end);
    if let Some((start, bytes)) = early {
        let end = start + bytes.len() as u64;
        if end > data_end {
            let from = start.max(data_end);
            let footer_part = bytes.slice((from - start) as usize..);
            windows.push(((from - data_end) as usize, footer_part));
            windows.sort_by_key(|(s, _)| *s);
        }
    }
    for _ in 0..FOOTER_FETCHES {
        let views: Vec<(usize, &[u8])> = windows.iter().map(|(s, b)| (*s, &b[..])).collect();
        let needed = thrift::trim_footer(&views, meta_len as usize, UNFETCHED_VALUE)
            .map_err(|e| HudiError::corrupt(path, format!("bad footer: {e}")))?;
        let at = match needed {
            thrift::Trimmed::Footer(footer) => return Ok((Bytes::from(footer), data)),
            thrift::Trimmed::Needs(at) => at as u64,
        };
        let next = windows.iter().map(|(s, _)| *s as u64).filter(|s| *s > at);
        let end = next.min().unwrap_or(meta_len).min(at + FOOTER_HEAD);
        let bytes = if with_data && at == 0 && (data.len() as u64) < data_end {
            // Mostly column chunks: counted as such.
            let from = data.len() as u64;
            let rest = file
                .read_one(from..data_end + end, Purpose::ColumnChunk)
                .await?;
            let split = (data_end - from) as usize;
            data = if data.is_empty() {
                rest.slice(..split)
            } else {
                Bytes::from([&data[..], &rest[..split]].concat())
            };
            rest.slice(split..)
        } else {
            file.read_one(data_end + at..data_end + end, Purpose::Footer)
                .await?
        };
        let i = windows.partition_point(|(s, _)| (*s as u64) < at);
        windows.insert(i, (at as usize, bytes));
    }
    let footer = file
        .read_one(data_end..data_end + meta_len, Purpose::Footer)
        .await?;
    Ok((footer, data))
}

/// The footer's length, from the last 8 bytes of `tail`, checked against the file's `size`.
/// `listed`: the size came from the plan (listing or `files` partition), not from the store.
pub(crate) fn footer_len(tail: &[u8], size: u64, listed: bool, path: &str) -> Result<u64> {
    if size < 12 || tail.len() < 8 {
        return Err(HudiError::corrupt(
            path,
            format!("too small to be Parquet ({size} bytes)"),
        ));
    }
    let end = &tail[tail.len() - 8..];
    if &end[4..] != b"PAR1" {
        let why = if listed {
            format!("missing PAR1 footer magic at the {size} bytes the table lists for it (truncated, replaced or not Parquet)")
        } else {
            "missing PAR1 footer magic (truncated or not Parquet)".to_string()
        };
        return Err(HudiError::corrupt(path, why));
    }
    let meta_len = u32::from_le_bytes([end[0], end[1], end[2], end[3]]) as u64;
    if meta_len + 8 > size {
        return Err(HudiError::corrupt(
            path,
            format!("footer length {meta_len} exceeds file size {size}"),
        ));
    }
    Ok(meta_len)
}

/// Decodes footer bytes (without the length and magic) once [`thrift::check_footer`]
/// passed, and checks the column chunks against the `data_end` the footer starts at.
pub(super) fn decode_footer(footer: &[u8], data_end: u64, path: &str) -> Result<ParquetMetaData> {
    thrift::check_footer(footer)
        .map_err(|e| HudiError::corrupt(path, format!("bad footer: {e}")))?;
    let metadata =
        ParquetMetaDataReader::decode_metadata(footer).map_err(|e| parquet_err(path, e))?;
    check_column_chunks(&metadata, data_end, path)?;
    Ok(metadata)
}

/// Refuses a footer whose column chunks do not lie between the file's start and the footer
/// (`data_end`): the `parquet` crate asserts on negative offsets and readers slice by them.
fn check_column_chunks(metadata: &ParquetMetaData, data_end: u64, path: &str) -> Result<()> {
    for (g, group) in metadata.row_groups().iter().enumerate() {
        for c in group.columns() {
            let start = c.dictionary_page_offset().unwrap_or(c.data_page_offset());
            let len = c.compressed_size();
            let end = u64::try_from(start)
                .ok()
                .zip(u64::try_from(len).ok())
                .and_then(|(s, l)| s.checked_add(l))
                .filter(|e| *e <= data_end && c.data_page_offset() >= 0);
            if end.is_none() {
                return Err(HudiError::corrupt(
                    path,
                    format!(
                        "column chunk {} of row group {g} at offset {start}, {len} bytes, lies \
                         outside the file's {data_end} data bytes",
                        c.column_path()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Hudi writes its record-key bloom filter (hundreds of KB) into the footer's key-value
/// metadata. Reads never use it, and footers stay cached: drop it.
fn without_bloom_filters(metadata: ParquetMetaData) -> ParquetMetaData {
    let is_bloom = |kv: &KeyValue| kv.key.ends_with(".bloomfilter");
    let file = metadata.file_metadata();
    let Some(pairs) = file.key_value_metadata() else {
        return metadata;
    };
    if !pairs.iter().any(is_bloom) {
        return metadata;
    }
    let kept: Vec<KeyValue> = pairs.iter().filter(|kv| !is_bloom(kv)).cloned().collect();
    let groups = metadata.row_groups().to_vec();
    rebuilt(&metadata, kept, file.schema_descr_ptr(), groups)
}

/// `metadata` with other key-value pairs, schema and row groups.
pub(super) fn rebuilt(
    metadata: &ParquetMetaData,
    pairs: Vec<KeyValue>,
    schema: SchemaDescPtr,
    row_groups: Vec<RowGroupMetaData>,
) -> ParquetMetaData {
    let file = metadata.file_metadata();
    let file = FileMetaData::new(
        file.version(),
        file.num_rows(),
        file.created_by().map(str::to_string),
        Some(pairs),
        schema,
        file.column_orders().cloned(),
    );
    ParquetMetaDataBuilder::new(file)
        .set_row_groups(row_groups)
        .build()
}
