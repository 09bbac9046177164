//! Parquet base files over [`Storage`]: the footer in one speculative tail read (which, for
//! small files, is the whole file), row groups pruned by statistics, then only the
//! projected column chunks, with adjacent ranges coalesced and fetched concurrently.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, UInt64Array};
use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt};
use futures::stream::{BoxStream, StreamExt};
use futures::TryStreamExt;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::errors::ParquetError;
use parquet::file::metadata::{
    FileMetaData, KeyValue, ParquetMetaData, ParquetMetaDataBuilder, ParquetMetaDataReader,
    RowGroupMetaData,
};
use parquet::schema::types::SchemaDescPtr;

use crate::error::{HudiError, Result};
use crate::expr::stats::{may_match, ColumnStats, StatsSource};
use crate::expr::Expr;
use crate::storage::{Purpose, RangedFile, Storage};

mod maps;
mod thrift;
pub mod writer;

/// Bytes read speculatively from the end of a file: a footer without Hudi's bloom filter
/// (a few KB for tens of columns), or the last fields after the bloom filter.
pub const FOOTER_PREFETCH: u64 = 8 * 1024;
/// Bytes read from the start of a footer too long for the tail read (the schema and the row
/// groups come first), and at each offset a footer walk still needs.
const FOOTER_HEAD: u64 = 8 * 1024;
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
/// Ranges closer than this are fetched as one request.
const COALESCE_GAP: u64 = 64 * 1024;

/// A parsed footer and the tail bytes that came with it (reused for data in that range).
#[derive(Debug, Clone)]
pub struct Footer {
    pub metadata: ArrowReaderMetadata,
    pub size: u64,
    /// The footer's length as the file's last 8 bytes say (the hint for its siblings).
    pub footer_len: u64,
    tail: Bytes,
    /// The file's bytes before the footer, or the first of them, when they came with it
    /// ([`read_footer_and_data`]).
    data: Bytes,
    /// What the crate reads the file with when it has map columns (see [`maps`]).
    reading: Option<ArrowReaderMetadata>,
}

impl Footer {
    pub fn parquet(&self) -> &Arc<ParquetMetaData> {
        self.metadata.metadata()
    }

    pub fn num_rows(&self) -> i64 {
        self.parquet().file_metadata().num_rows()
    }

    /// The footer alone, to keep for the session.
    pub fn without_data(&self) -> Footer {
        Footer {
            data: Bytes::new(),
            ..self.clone()
        }
    }

    /// Key/value metadata of the footer (e.g. `hoodie_min_record_key`).
    pub fn key_value(&self, key: &str) -> Option<&str> {
        self.parquet()
            .file_metadata()
            .key_value_metadata()?
            .iter()
            .find(|kv| kv.key == key)?
            .value
            .as_deref()
    }
}

fn parquet_err(path: &str, e: ParquetError) -> HudiError {
    match e {
        ParquetError::External(inner) => match inner.downcast::<HudiError>() {
            Ok(h) => *h,
            Err(other) => HudiError::corrupt(path, other),
        },
        other => HudiError::corrupt(path, format!("bad Parquet: {other}")),
    }
}

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

/// Where a file of `size` bytes whose footer is likely `footer_len` long has its footer's
/// head, from 0 when the data before it is at most `data_limit` bytes. `None` when a footer
/// that long fits the tail read: a hint would then save nothing but risk a whole file.
fn head_window(size: u64, footer_len: u64, data_limit: u64) -> Option<Range<u64>> {
    if footer_len + 8 <= FOOTER_PREFETCH {
        return None;
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
fn decode_footer(footer: &[u8], data_end: u64, path: &str) -> Result<ParquetMetaData> {
    thrift::check_footer(footer)
        .map_err(|e| HudiError::corrupt(path, format!("bad footer: {e}")))?;
    let metadata =
        ParquetMetaDataReader::decode_metadata(footer).map_err(|e| parquet_err(path, e))?;
    check_column_chunks(&metadata, data_end, path)?;
    Ok(metadata)
}

/// The footer of a Parquet file held in memory, checked, as the crate presents it.
fn footer_in_memory(file: &[u8], path: &str) -> Result<ArrowReaderMetadata> {
    let size = file.len() as u64;
    let meta_len = footer_len(file, size, false, path)?;
    let data_end = size - meta_len - 8;
    let metadata = decode_footer(&file[data_end as usize..file.len() - 8], data_end, path)?;
    ArrowReaderMetadata::try_new(Arc::new(metadata), ArrowReaderOptions::new())
        .map_err(|e| parquet_err(path, e))
}

/// The Arrow schema of a Parquet file held in memory, from its footer alone.
pub fn schema_in_memory(file: &[u8], path: &str) -> Result<arrow_schema::SchemaRef> {
    Ok(footer_in_memory(file, path)?.schema().clone())
}

/// Every row of a Parquet file held in memory (a log file's Parquet data block, an LSM
/// timeline file): its footer checked and its column chunks' pages walked first, as the
/// crate reads it without our reader; `what` says what the file was.
pub fn decode_in_memory(file: Bytes, path: &str, what: &str) -> Result<Vec<RecordBatch>> {
    let presented = footer_in_memory(&file, path)?;
    // Every chunk lies within the data (checked with the footer).
    for c in presented
        .metadata()
        .row_groups()
        .iter()
        .flat_map(|g| g.columns())
    {
        let (start, len) = c.byte_range();
        check_chunk(&file[start as usize..(start + len) as usize], path)?;
    }
    let reading = maps::reading_metadata(&presented, path)?;
    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(
        file,
        reading.unwrap_or_else(|| presented.clone()),
    )
    .build()
    .map_err(|e| HudiError::corrupt_by(path, what, e))?;
    reader
        .map(|b| {
            let b = b.map_err(|e| HudiError::corrupt_by(path, what, e))?;
            maps::present(b, presented.schema().fields(), path)
        })
        .collect()
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
fn rebuilt(
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

/// Parquet's async reader: column chunks through a [`RangedFile`] that holds the footer's
/// tail bytes.
struct StorageReader {
    file: RangedFile<Arc<dyn Storage>>,
    metadata: Arc<ParquetMetaData>,
    /// Every column chunk's byte range, to know a whole-chunk read in O(1).
    chunks: HashSet<(u64, u64)>,
    path: String,
}

impl StorageReader {
    fn new(file: RangedFile<Arc<dyn Storage>>, metadata: Arc<ParquetMetaData>, path: &str) -> Self {
        let chunks = metadata
            .row_groups()
            .iter()
            .flat_map(|g| g.columns().iter().map(|c| c.byte_range()))
            .map(|(start, len)| (start, start.saturating_add(len)))
            .collect();
        StorageReader {
            file,
            metadata,
            chunks,
            path: path.to_string(),
        }
    }

    /// Page headers of whole column chunks are walked before the crate decodes them (a
    /// read without a page index asks for whole chunks only).
    fn checked(&self, range: &Range<u64>, bytes: &Bytes) -> Result<()> {
        if self.chunks.contains(&(range.start, range.end)) {
            check_chunk(bytes, &self.path)
        } else {
            Ok(())
        }
    }
}

/// A column chunk's page headers, walked as [`thrift::check_pages`] does.
fn check_chunk(chunk: &[u8], path: &str) -> Result<()> {
    thrift::check_pages(chunk).map_err(|e| HudiError::corrupt(path, format!("bad page: {e}")))
}

impl AsyncFileReader for StorageReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        async move {
            let b = self
                .file
                .read_one(range.clone(), Purpose::ColumnChunk)
                .await;
            let b = b.and_then(|b| self.checked(&range, &b).map(|()| b));
            b.map_err(|e| ParquetError::External(Box::new(e)))
        }
        .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        async move {
            let b = self.file.read(&ranges, Purpose::ColumnChunk).await;
            let b = b.and_then(|b| {
                let checked = ranges.iter().zip(&b).map(|(r, b)| self.checked(r, b));
                checked.collect::<Result<()>>().map(|()| b)
            });
            b.map_err(|e| ParquetError::External(Box::new(e)))
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        let m = self.metadata.clone();
        async move { Ok(m) }.boxed()
    }
}

/// Row-group statistics of one file as a [`StatsSource`].
pub struct RowGroupStats<'a> {
    pub footer: &'a Footer,
    pub row_groups: Vec<usize>,
}

impl StatsSource for RowGroupStats<'_> {
    fn containers(&self) -> usize {
        self.row_groups.len()
    }

    fn column(&self, name: &str) -> Option<ColumnStats> {
        let schema = self.footer.metadata.schema();
        let parquet = self.footer.parquet();
        let conv =
            StatisticsConverter::try_new(name, schema, parquet.file_metadata().schema_descr())
                .ok()?;
        let groups = || self.row_groups.iter().map(|&i| parquet.row_group(i));
        let min: ArrayRef = conv.row_group_mins(groups()).ok()?;
        let max: ArrayRef = conv.row_group_maxes(groups()).ok()?;
        let null_count: Option<UInt64Array> = conv.row_group_null_counts(groups()).ok();
        let row_count = conv.row_group_row_counts(groups()).ok().flatten();
        Some(ColumnStats {
            min,
            max,
            null_count,
            row_count,
        })
    }
}

/// Row groups whose statistics allow a match.
pub fn matching_row_groups(footer: &Footer, filter: Option<&Expr>) -> Vec<usize> {
    let all: Vec<usize> = (0..footer.parquet().num_row_groups()).collect();
    let Some(filter) = filter else { return all };
    let stats = RowGroupStats {
        footer,
        row_groups: all.clone(),
    };
    all.into_iter()
        .zip(may_match(filter, &stats))
        .filter_map(|(i, keep)| keep.then_some(i))
        .collect()
}

/// [`stream_row_groups`] of the read's columns `names` from a file written under an older
/// schema version (schema evolution on read): read by the names the file gives them, then
/// renamed to the read's.
pub fn stream_row_groups_as(
    storage: Arc<dyn Storage>,
    path: &str,
    footer: Footer,
    row_groups: Vec<usize>,
    names: &[String],
    batch_size: usize,
    columns: Option<Arc<crate::schema::evolution::FileColumns>>,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    let Some(columns) = columns else {
        return stream_row_groups(storage, path, footer, row_groups, Some(names), batch_size);
    };
    let file_names = columns.file_names(names);
    let stream = stream_row_groups(
        storage,
        path,
        footer,
        row_groups,
        Some(&file_names),
        batch_size,
    )?;
    Ok(stream
        .map(move |b| b.and_then(|b| columns.to_read_names(&b)))
        .boxed())
}

/// Reads the chosen row groups of a file, only the named top-level columns (all when
/// `None`; names the file lacks are ignored), one batch of at most `batch_size` rows at a
/// time.
pub fn stream_row_groups(
    storage: Arc<dyn Storage>,
    path: &str,
    footer: Footer,
    row_groups: Vec<usize>,
    columns: Option<&[String]>,
    batch_size: usize,
) -> Result<BoxStream<'static, Result<RecordBatch>>> {
    if row_groups.is_empty() {
        return Ok(futures::stream::empty().boxed());
    }
    let metadata = footer.metadata.clone();
    let fields = metadata.schema().fields();
    let roots: Vec<usize> = match columns {
        None => (0..fields.len()).collect(),
        Some(cols) => fields
            .iter()
            .enumerate()
            .filter(|(_, f)| cols.iter().any(|c| c == f.name()))
            .map(|(i, _)| i)
            .collect(),
    };
    let mask = match columns {
        None => ProjectionMask::all(),
        Some(_) => ProjectionMask::roots(metadata.parquet_schema(), roots.iter().copied()),
    };
    let file = RangedFile::holding(Some(storage), path, footer.size, footer.tail.clone())
        .with_prefix(footer.data.clone());
    // Map columns are read as lists of entries and turned back into maps (see `maps`).
    let reading = footer.reading.clone().unwrap_or_else(|| metadata.clone());
    let reader = StorageReader::new(
        file.with_gap(COALESCE_GAP),
        reading.metadata().clone(),
        path,
    );
    let rows = row_groups
        .iter()
        .filter_map(|&i| metadata.metadata().row_groups().get(i))
        .map(|g| usize::try_from(g.num_rows()).unwrap_or(usize::MAX))
        .fold(0, usize::saturating_add);
    let stream = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, reading)
        .with_projection(mask)
        .with_row_groups(row_groups)
        .with_batch_size(batch_size)
        .build()
        .map_err(|e| parquet_err(path, e))?;
    let stream = dropped_after(stream.boxed(), rows);
    let path = path.to_string();
    let Some(_) = footer.reading else {
        return Ok(stream.map_err(move |e| parquet_err(&path, e)).boxed());
    };
    let all = metadata.schema().fields();
    let fields: arrow_schema::Fields = roots.iter().map(|&i| all[i].clone()).collect();
    Ok(stream
        .map(move |b| maps::present(b.map_err(|e| parquet_err(&path, e))?, &fields, &path))
        .boxed())
}

/// `stream`, ended and dropped with the batch that completes the `rows` its row groups
/// declare, rather than when polled again: a scan polls each of its slices again only after
/// it has taken the other slices' batches, and a finished Parquet reader still holds its
/// pages and decoders, about the file's size. Before that batch is handed on, the reader is
/// asked once more, so that rows beyond the declared count are an error, never dropped.
fn dropped_after(
    stream: BoxStream<'static, parquet::errors::Result<RecordBatch>>,
    rows: usize,
) -> BoxStream<'static, parquet::errors::Result<RecordBatch>> {
    enum State {
        Reading(
            BoxStream<'static, parquet::errors::Result<RecordBatch>>,
            usize,
        ),
        Then(ParquetError),
    }
    futures::stream::unfold(
        Some(State::Reading(stream, rows)),
        move |state| async move {
            let (mut stream, left) = match state? {
                State::Reading(stream, left) => (stream, left),
                State::Then(e) => return Some((Err(e), None)),
            };
            let item = stream.next().await?;
            let left = match &item {
                Ok(batch) => left.saturating_sub(batch.num_rows()),
                Err(_) => return Some((item, None)),
            };
            if left > 0 {
                return Some((item, Some(State::Reading(stream, left))));
            }
            let after = match stream.next().await {
                None => None,
                Some(Ok(_)) => Some(State::Then(ParquetError::General(format!(
                    "the row groups hold more than the {rows} rows their metadata declares"
                )))),
                Some(Err(e)) => Some(State::Then(e)),
            };
            Some((item, after))
        },
    )
    .boxed()
}

#[cfg(test)]
mod tests;
