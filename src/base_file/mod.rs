//! Parquet base files over [`Storage`]: the footer in one speculative tail read (which, for
//! small files, is the whole file), row groups pruned by statistics, then only the
//! projected column chunks, with adjacent ranges coalesced and fetched concurrently.

use std::collections::HashMap;
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
use parquet::file::metadata::ParquetMetaData;

use crate::error::{HudiError, Result};
use crate::expr::stats::{may_match, ColumnStats, StatsSource};
use crate::expr::Expr;
use crate::storage::{Purpose, RangedFile, Storage};

mod footer;
mod levels;
mod maps;
mod thrift;
pub mod writer;

pub(crate) use footer::footer_len;
pub use footer::{data_with_footer, fits_tail, read_footer, read_footer_and_data, FOOTER_PREFETCH};
use footer::{decode_footer, rebuilt};

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

/// The footer of a Parquet file held in memory, checked, as the crate presents it.
pub(crate) fn footer_in_memory(file: &[u8], path: &str) -> Result<ArrowReaderMetadata> {
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
    for group in presented.metadata().row_groups() {
        for c in group.columns() {
            let (start, len) = c.byte_range();
            let chunk = file.slice(start as usize..(start + len) as usize);
            check_chunk(chunk, c, group.num_rows(), path)?;
        }
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

/// Parquet's async reader: column chunks through a [`RangedFile`] that holds the footer's
/// tail bytes.
struct StorageReader {
    file: RangedFile<Arc<dyn Storage>>,
    metadata: Arc<ParquetMetaData>,
    /// Every column chunk's byte range, to know a whole-chunk read in O(1): its row group
    /// and column.
    chunks: HashMap<(u64, u64), (usize, usize)>,
    path: String,
}

impl StorageReader {
    fn new(file: RangedFile<Arc<dyn Storage>>, metadata: Arc<ParquetMetaData>, path: &str) -> Self {
        let chunks = (metadata.row_groups().iter().enumerate())
            .flat_map(|(g, group)| {
                let columns = group.columns().iter().enumerate();
                columns.map(move |(c, column)| (column.byte_range(), (g, c)))
            })
            .map(|((start, len), at)| ((start, start.saturating_add(len)), at))
            .collect();
        StorageReader {
            file,
            metadata,
            chunks,
            path: path.to_string(),
        }
    }

    /// Whole column chunks are checked before the crate decodes them (a read without a
    /// page index asks for whole chunks only).
    fn checked(&self, range: &Range<u64>, bytes: &Bytes) -> Result<()> {
        match self.chunks.get(&(range.start, range.end)) {
            Some(&(g, c)) => {
                let group = self.metadata.row_group(g);
                check_chunk(bytes.clone(), group.column(c), group.num_rows(), &self.path)
            }
            None => Ok(()),
        }
    }
}

/// A column chunk's pages: headers, levels and value counts ([`levels::check_pages`]).
fn check_chunk(
    chunk: Bytes,
    column: &parquet::file::metadata::ColumnChunkMetaData,
    rows: i64,
    path: &str,
) -> Result<()> {
    let bad = |e: String| HudiError::corrupt(path, format!("bad page: {e}"));
    levels::check_pages(chunk, column, rows.max(0) as usize)
        .map_err(|e| bad(format!("column {}: {e}", column.column_path().string())))
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
