//! [`HFileReader`]: opening an HFile with as few requests as the format allows, and answering
//! point lookups and prefix scans by fetching only the index and data blocks that can hold
//! the keys asked for.
//!
//! Opening costs one speculative tail read (trailer + usually the whole load-on-open section:
//! root data index, meta index, file info), plus one ranged read when that section is larger
//! than the tail. A lookup then costs one round trip per index level below the root: blocks
//! needed at the same level are coalesced into as few ranges as possible and those ranges
//! are fetched concurrently. Bytes already held (the tail, or a whole in-memory HFile) are
//! never fetched again.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::block::{decode_block, open_block, BlockHeader, BlockType, Codec};
use super::checksum::{ChecksumReport, Tally};
use super::data::{parse_cells, Cell, CellLayout};
use super::file_info::FileInfo;
use super::index::{parse_non_root, parse_root, select, IndexEntry, KeyRange, RootKeys};
use super::trailer::{Trailer, TRAILER_SIZE};
use crate::error::{malformed, HudiError, Result};
use crate::storage::{Purpose, RangedFile, Storage};

/// Deeper indexes than this are treated as corrupt (HBase never comes close).
const MAX_INDEX_LEVELS: u32 = 16;

/// How [`HFileReader::open_with`] reads the end of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    /// Bytes of the speculative tail read (at least the 4096-byte trailer). MDT HFiles are
    /// small, so the default usually fetches the whole file in one request.
    pub tail_bytes: u64,
    /// The file size when already known (e.g. from a listing): the tail is then a plain
    /// ranged read, which saves the `head` a store without suffix ranges would need.
    pub file_size: Option<u64>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            tail_bytes: 64 * 1024,
            file_size: None,
        }
    }
}

/// An open HFile v3. Cheap to clone; all queries take `&self`.
#[derive(Debug, Clone)]
pub struct HFileReader {
    /// Holds the load-on-open section to the end of the file once open.
    file: RangedFile<Arc<dyn Storage>>,
    path: String,
    trailer: Trailer,
    codec: Codec,
    layout: CellLayout,
    data_index: Vec<IndexEntry>,
    meta_index: Vec<IndexEntry>,
    file_info: FileInfo,
    checksums: Arc<Tally>,
}

impl HFileReader {
    /// Opens `path` on `storage` with the default 64 KiB tail read.
    pub async fn open(storage: Arc<dyn Storage>, path: &str) -> Result<HFileReader> {
        Self::open_with(storage, path, OpenOptions::default()).await
    }

    pub async fn open_with(
        storage: Arc<dyn Storage>,
        path: &str,
        opts: OpenOptions,
    ) -> Result<HFileReader> {
        let want = opts.tail_bytes.max(TRAILER_SIZE as u64);
        let purpose = Purpose::MdtIndexBlock;
        let mut file = RangedFile::open_tail(storage, path, want, opts.file_size, purpose).await?;
        let trailer = parse_trailer(file.held().1, file.size(), path)?;
        file.hold_from(trailer.load_on_open_data_offset, purpose)
            .await?;
        Self::assemble(file, path, trailer)
    }

    /// Reads an HFile held in memory, e.g. the content of an MDT log file's HFILE_DATA block.
    /// `name` labels errors.
    pub fn from_bytes(bytes: Bytes, name: &str) -> Result<HFileReader> {
        let trailer = parse_trailer(&bytes, bytes.len() as u64, name)?;
        Self::assemble(RangedFile::in_memory(bytes, name), name, trailer)
    }

    fn assemble(
        file: RangedFile<Arc<dyn Storage>>,
        path: &str,
        trailer: Trailer,
    ) -> Result<HFileReader> {
        let mut r = HFileReader {
            file,
            path: path.to_string(),
            codec: Codec::from_id(trailer.compression_codec, path)?,
            trailer,
            layout: CellLayout::default(),
            data_index: Vec::new(),
            meta_index: Vec::new(),
            file_info: FileInfo::default(),
            checksums: Arc::default(),
        };
        r.load_on_open_section()?;
        Ok(r)
    }

    /// Root data index, meta index and file info, all from resident bytes.
    fn load_on_open_section(&mut self) -> Result<()> {
        let t = &self.trailer;
        let (root_end, root) =
            self.resident_block(t.load_on_open_data_offset, BlockType::RootIndex)?;
        let (data_count, meta_count) = (t.data_index_count as usize, t.meta_index_count as usize);
        let file_info_offset = t.file_info_offset;
        self.data_index = parse_root(&root, data_count, RootKeys::KeyValue)
            .map_err(|e| self.block_error(e, self.trailer.load_on_open_data_offset))?;
        // HBase and Hudi always write a meta index block, possibly empty; tolerate its absence.
        if root_end < file_info_offset {
            let (_, meta) = self.resident_block(root_end, BlockType::RootIndex)?;
            self.meta_index = parse_root(&meta, meta_count, RootKeys::Raw)
                .map_err(|e| self.block_error(e, root_end))?;
        }
        let (_, info) = self.resident_block(file_info_offset, BlockType::FileInfo)?;
        self.file_info =
            FileInfo::parse(&info).map_err(|e| self.block_error(e, file_info_offset))?;
        self.layout = CellLayout {
            tags: self.file_info.get("MAX_TAGS_LEN").is_some(),
            mvcc: self.file_info.get_i32("KEY_VALUE_VERSION") == Some(1),
        };
        Ok(())
    }

    /// Decodes a block of the load-on-open section; returns where it ends and its payload.
    fn resident_block(&self, offset: u64, kind: BlockType) -> Result<(u64, Bytes)> {
        let (held_start, held) = self.file.held();
        let end_of_blocks = self.file.size() - TRAILER_SIZE as u64;
        let from = offset.checked_sub(held_start);
        let to = end_of_blocks - held_start;
        let raw = match from {
            Some(from) if from < to => held.slice(from as usize..to as usize),
            _ => {
                return Err(self.block_error(malformed("outside the load-on-open section"), offset))
            }
        };
        let (h, payload) = self.decode(&raw, offset, &[kind])?;
        Ok((offset + h.on_disk_size() as u64, payload))
    }

    fn decode(
        &self,
        raw: &Bytes,
        offset: u64,
        expect: &[BlockType],
    ) -> Result<(BlockHeader, Bytes)> {
        let (h, payload, checksum) =
            decode_block(raw, expect, self.codec).map_err(|e| self.block_error(e, offset))?;
        self.checksums.record(&checksum, &self.path, offset);
        Ok((h, payload))
    }

    /// Fetches blocks less than `gap` bytes apart in one request (fewer requests for a few
    /// bytes more: worth it where a request costs far more than reading a block).
    pub fn with_coalesce_gap(mut self, gap: u64) -> Self {
        self.file = self.file.with_gap(gap);
        self
    }

    /// What the checksums of the blocks decoded so far said (none of them stops a read).
    pub fn checksums(&self) -> ChecksumReport {
        self.checksums.report()
    }

    /// Labels a decoder error with this file and the block's offset.
    fn block_error(&self, e: HudiError, offset: u64) -> HudiError {
        match e {
            HudiError::Corrupt { path, reason, .. } if path.is_empty() => {
                HudiError::corrupt(&self.path, format!("block at offset {offset}: {reason}"))
            }
            other => other.in_file(&self.path),
        }
    }

    /// Number of cells, from the trailer.
    pub fn entry_count(&self) -> u64 {
        self.trailer.entry_count
    }

    pub fn trailer(&self) -> &Trailer {
        &self.trailer
    }

    pub fn file_info(&self) -> &FileInfo {
        &self.file_info
    }

    /// The path (or in-memory name) errors are reported against.
    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn size(&self) -> u64 {
        self.file.size()
    }

    /// Number of data blocks (root entries when the index has one level).
    pub fn data_index_len(&self) -> usize {
        self.data_index.len()
    }

    /// The value stored under `key`, if any.
    pub async fn get(&self, key: &[u8]) -> Result<Option<Bytes>> {
        Ok(self.get_many(&[key]).await?.pop().flatten())
    }

    /// Values for `keys`, in the order given. Sorted keys are not required; all blocks are
    /// fetched together either way. Each block is inflated only up to its last key asked
    /// for.
    pub async fn get_many<K: AsRef<[u8]> + Sync>(&self, keys: &[K]) -> Result<Vec<Option<Bytes>>> {
        let ranges: Vec<_> = keys.iter().map(|k| KeyRange::point(k.as_ref())).collect();
        let entries = self.data_block_entries(&ranges).await?;
        let raws = self.read_raw(&entries, Purpose::MdtDataBlock).await?;
        let mut wanted: Vec<&[u8]> = keys.iter().map(|k| k.as_ref()).collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut found: std::collections::HashMap<&[u8], Bytes> = Default::default();
        let mut next_key = 0;
        for (i, (e, raw)) in entries.iter().zip(&raws).enumerate() {
            // The keys this block may hold: those before the next block's first row.
            let bound = entries.get(i + 1).map(|n| &n.first_row[..]);
            let first = next_key;
            while next_key < wanted.len() && bound.is_none_or(|b| wanted[next_key] < b) {
                next_key += 1;
            }
            let mine = &wanted[first..next_key];
            if mine.is_empty() {
                continue;
            }
            self.lookup_block(e.offset, raw, mine, &mut found)
                .map_err(|err| self.block_error(err, e.offset))?;
        }
        Ok(keys
            .iter()
            .map(|k| found.get(k.as_ref()).cloned())
            .collect())
    }

    /// Finds `keys` (sorted) in one data block, inflating it only up to the last of them.
    fn lookup_block<'k>(
        &self,
        offset: u64,
        raw: &Bytes,
        keys: &[&'k [u8]],
        found: &mut std::collections::HashMap<&'k [u8], Bytes>,
    ) -> Result<()> {
        let (_, mut payload, checksum) = open_block(raw, &[BlockType::Data], self.codec)?;
        self.checksums.record(&checksum, &self.path, offset);
        // Rows and keys are both sorted: one walk over each.
        let mut next_key = 0;
        let mut pos = 0;
        let mut previous: Option<Range<usize>> = None;
        while let Some(at) = payload.cell_at(pos, self.layout)? {
            let row = &payload.bytes()[at.row.clone()];
            // Rows out of order is damage (with checksums unverified, what catches it).
            if let Some(p) = previous.replace(at.row.clone()) {
                if payload.bytes()[p] > *row {
                    let reason = format!("rows out of order at {:?}", String::from_utf8_lossy(row));
                    return Err(malformed(reason));
                }
            }
            while keys.get(next_key).is_some_and(|k| *k < row) {
                next_key += 1;
            }
            let Some(&key) = keys.get(next_key) else {
                break;
            };
            if key == row {
                found.insert(key, Bytes::copy_from_slice(&payload.bytes()[at.value]));
            }
            pos = at.end;
        }
        Ok(())
    }

    /// Cells whose key starts with `prefix`, in key order.
    pub async fn scan_prefix(&self, prefix: &[u8]) -> Result<Vec<Cell>> {
        self.scan_prefixes(&[prefix]).await
    }

    /// Cells whose key starts with any of `prefixes`, in key order, each once.
    pub async fn scan_prefixes<P: AsRef<[u8]> + Sync>(&self, prefixes: &[P]) -> Result<Vec<Cell>> {
        let ranges: Vec<_> = prefixes
            .iter()
            .map(|p| KeyRange::prefix(p.as_ref()))
            .collect();
        let mut cells = self.cells_of_blocks(&ranges).await?;
        cells.retain(|c| prefixes.iter().any(|p| c.key.starts_with(p.as_ref())));
        Ok(cells)
    }

    /// Every cell, in key order.
    pub async fn scan_all(&self) -> Result<Vec<Cell>> {
        self.cells_of_blocks(&[KeyRange::all()]).await
    }

    /// The payload of the meta block `name` (e.g. `bloomFilter`), if the file has one.
    pub async fn meta_block(&self, name: &str) -> Result<Option<Bytes>> {
        let Some(e) = self
            .meta_index
            .iter()
            .find(|e| e.first_row == name.as_bytes())
        else {
            return Ok(None);
        };
        let raw = self
            .read_raw(std::slice::from_ref(e), Purpose::MdtIndexBlock)
            .await?;
        let raw = raw.first().cloned().unwrap_or_default();
        let (_, payload) = self.decode(&raw, e.offset, &[BlockType::Meta])?;
        Ok(Some(payload))
    }

    /// Every data block in file order, in runs of about `run_bytes` on disk: a whole file
    /// scanned one run at a time holds one run's cells, not the file's.
    pub async fn data_block_runs(&self, run_bytes: u64) -> Result<Vec<BlockRun>> {
        let mut runs: Vec<BlockRun> = Vec::new();
        let mut bytes = 0;
        for e in self.data_block_entries(&[KeyRange::all()]).await? {
            match runs.last_mut() {
                Some(run) if bytes + e.size <= run_bytes.max(1) => {
                    bytes += e.size;
                    run.0.push(e);
                }
                _ => {
                    bytes = e.size;
                    runs.push(BlockRun(vec![e]));
                }
            }
        }
        Ok(runs)
    }

    /// The cells of one run of [`Self::data_block_runs`], in key order, handed to `f` one
    /// block at a time: the run comes in one request, and only one block is inflated at once.
    pub async fn scan_run(
        &self,
        run: &BlockRun,
        mut f: impl FnMut(&[Cell]) -> Result<()>,
    ) -> Result<()> {
        let raws = self.read_raw(&run.0, Purpose::MdtDataBlock).await?;
        let mut last_key: Option<Bytes> = None;
        for (e, raw) in run.0.iter().zip(raws) {
            let payload = self.decode(&raw, e.offset, &[BlockType::Data])?.1;
            let cells = parse_cells(&payload, self.layout)
                .map_err(|err| self.block_error(err, e.offset))?;
            let mut previous = last_key.as_ref();
            for c in &cells {
                if previous.is_some_and(|p| *p > c.key) {
                    let reason = format!(
                        "rows out of order: {:?} after {:?}",
                        String::from_utf8_lossy(&c.key),
                        String::from_utf8_lossy(previous.expect("checked"))
                    );
                    return Err(self.block_error(malformed(reason), e.offset));
                }
                previous = Some(&c.key);
            }
            // A copy: the previous block's bytes are not kept for one key.
            last_key = cells.last().map(|c| Bytes::copy_from_slice(&c.key));
            f(&cells)?;
        }
        Ok(())
    }

    /// All cells of the data blocks that may hold a row in `ranges`.
    async fn cells_of_blocks(&self, ranges: &[KeyRange]) -> Result<Vec<Cell>> {
        let entries = self.data_block_entries(ranges).await?;
        self.cells_of_entries(&entries).await
    }

    /// All cells of the data blocks `entries` (in file order).
    async fn cells_of_entries(&self, entries: &[IndexEntry]) -> Result<Vec<Cell>> {
        let raws = self.read_raw(entries, Purpose::MdtDataBlock).await?;
        let mut cells: Vec<Cell> = Vec::new();
        for (e, raw) in entries.iter().zip(&raws) {
            let offset = e.offset;
            let payload = self.decode(raw, offset, &[BlockType::Data])?.1;
            let first = cells.len();
            cells.extend(
                parse_cells(&payload, self.layout).map_err(|e| self.block_error(e, offset))?,
            );
            // Lookups binary-search these, and with checksums unverified this is what catches
            // a damaged key.
            if let Some(i) = (first.max(1)..cells.len()).find(|&i| cells[i - 1].key > cells[i].key)
            {
                let reason = format!(
                    "rows out of order: {:?} after {:?}",
                    String::from_utf8_lossy(&cells[i].key),
                    String::from_utf8_lossy(&cells[i - 1].key)
                );
                return Err(self.block_error(malformed(reason), offset));
            }
        }
        Ok(cells)
    }

    /// Walks the index from the root down, one round trip per level, to the entries of the
    /// data blocks that may hold a row in `ranges`, in file order.
    async fn data_block_entries(&self, ranges: &[KeyRange]) -> Result<Vec<IndexEntry>> {
        let levels = self.trailer.num_data_index_levels.max(1);
        if levels > MAX_INDEX_LEVELS {
            return Err(HudiError::corrupt(
                &self.path,
                format!("{levels} index levels"),
            ));
        }
        let mut entries = pick(&self.data_index, ranges);
        for _ in 1..levels {
            let raws = self.read_raw(&entries, Purpose::MdtIndexBlock).await?;
            let mut children = Vec::new();
            for (e, raw) in entries.iter().zip(&raws) {
                let kinds = [BlockType::LeafIndex, BlockType::IntermediateIndex];
                let (_, payload) = self.decode(raw, e.offset, &kinds)?;
                let level =
                    parse_non_root(&payload).map_err(|err| self.block_error(err, e.offset))?;
                children.extend(pick(&level, ranges));
            }
            children.sort_by_key(|e| e.offset);
            children.dedup_by_key(|e| e.offset);
            entries = children;
        }
        Ok(entries)
    }

    /// The on-disk bytes of each block in `blocks`: held bytes are sliced, the rest is
    /// fetched as coalesced ranges, all requests issued concurrently.
    async fn read_raw(&self, blocks: &[IndexEntry], purpose: Purpose) -> Result<Vec<Bytes>> {
        let spans = blocks
            .iter()
            .map(|b| self.span_of(b))
            .collect::<Result<Vec<_>>>()?;
        self.file.read(&spans, purpose).await
    }

    /// The byte range of an index entry's block, which must end before the trailer.
    fn span_of(&self, b: &IndexEntry) -> Result<Range<u64>> {
        let end_of_blocks = self.file.size() - TRAILER_SIZE as u64;
        match b.offset.checked_add(b.size) {
            Some(end) if end <= end_of_blocks => Ok(b.offset..end),
            _ => Err(HudiError::corrupt(
                &self.path,
                format!(
                    "block at offset {} ({} bytes) runs past the data section (ends at {end_of_blocks})",
                    b.offset, b.size
                ),
            )),
        }
    }
}

/// Consecutive data blocks of one file, read together ([`HFileReader::data_block_runs`]).
#[derive(Debug, Clone)]
pub struct BlockRun(Vec<IndexEntry>);

fn pick(entries: &[IndexEntry], ranges: &[KeyRange]) -> Vec<IndexEntry> {
    select(entries, ranges)
        .into_iter()
        .map(|i| entries[i].clone())
        .collect()
}

/// The trailer from the end of `tail` (the last bytes of a `size`-byte file), with its offsets
/// checked against the file size.
fn parse_trailer(tail: &Bytes, size: u64, path: &str) -> Result<Trailer> {
    if size < TRAILER_SIZE as u64 || tail.len() < TRAILER_SIZE {
        return Err(HudiError::corrupt(
            path,
            format!("truncated: {size} bytes is shorter than the {TRAILER_SIZE}-byte trailer"),
        ));
    }
    let t = Trailer::parse(&tail[tail.len() - TRAILER_SIZE..]).map_err(|e| e.in_file(path))?;
    let end_of_blocks = size - TRAILER_SIZE as u64;
    let (lo, info) = (t.load_on_open_data_offset, t.file_info_offset);
    if lo > info || info >= end_of_blocks {
        return Err(HudiError::corrupt(
            path,
            format!("truncated or bad trailer: load-on-open at {lo}, file info at {info}, trailer at {end_of_blocks}"),
        ));
    }
    Ok(t)
}
