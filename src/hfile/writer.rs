//! Writes HFile v3 files the way Hudi 1.x's own writer does for the metadata table (docs:
//! docs/hudi-format.md §7.9): data blocks split at a block size, a single-level root index keyed by
//! `[u16 len][row]` of each block's first row, an empty meta index, a file info block and the
//! 4096-byte trailer. Every block's payload is compressed with the same codec.

use std::io::Write;

use super::checksum::{crc32c, CRC32C, NULL};
use super::Codec;
use crate::error::{HudiError, Result};

/// Comparator Hudi names in the trailer (Java readers only check it is a known one).
pub const COMPARATOR: &str = "org.apache.hudi.io.storage.HoodieHBaseKVComparator";

/// Block size Hudi uses for MDT HFiles (log blocks and base files): 1 MiB.
pub const DEFAULT_BLOCK_SIZE: usize = 1024 * 1024;

const BYTES_PER_CHECKSUM: usize = 16384;
const HEADER_SIZE: usize = 33;
const TRAILER_SIZE: usize = 4096;

/// Checksums written after each block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChecksumKind {
    /// Type NULL with zero bytes in the reserved slots: what Hudi 1.1 writes. Readers that
    /// verify checksums (HBase's) accept it because type NULL means "do not verify".
    Null,
    /// Real CRC32C per 16 KiB chunk, as HBase writes; every reader accepts it.
    Crc32c,
}

#[derive(Debug, Clone)]
pub struct HFileWriteOptions {
    /// A data block is closed before a cell would take it past this many uncompressed bytes.
    pub block_size: usize,
    pub checksum: ChecksumKind,
    pub codec: Codec,
    /// `hfile.CREATE_TIME_TS`, epoch milliseconds.
    pub create_time_ms: i64,
}

impl Default for HFileWriteOptions {
    fn default() -> Self {
        HFileWriteOptions {
            block_size: DEFAULT_BLOCK_SIZE,
            checksum: ChecksumKind::Crc32c,
            codec: Codec::Gz,
            create_time_ms: chrono::Utc::now().timestamp_millis(),
        }
    }
}

/// An HFile of `cells` (row key, value), which must be strictly ascending by row bytes, with
/// `file_info` entries added to the ones the writer always puts (`MAX_MEMSTORE_TS_KEY`,
/// `hfile.LASTKEY`, `hfile.AVG_KEY_LEN`, `hfile.AVG_VALUE_LEN`, `hfile.CREATE_TIME_TS`,
/// `KEY_VALUE_VERSION`). GZ payloads, CRC32C checksums, 1 MiB blocks.
pub fn write_hfile(cells: &[(Vec<u8>, Vec<u8>)], file_info: &[(&str, Vec<u8>)]) -> Result<Vec<u8>> {
    write_hfile_with(cells, file_info, &HFileWriteOptions::default())
}

/// [`write_hfile`] with explicit block size, checksum, codec and creation time.
pub fn write_hfile_with(
    cells: &[(Vec<u8>, Vec<u8>)],
    file_info: &[(&str, Vec<u8>)],
    opts: &HFileWriteOptions,
) -> Result<Vec<u8>> {
    let mut w = HFileWriter::new(opts.clone());
    for (row, value) in cells {
        w.append(row, value)?;
    }
    w.finish(file_info)
}

/// An HFile built one cell at a time: only the current data block's payload and the bytes
/// written so far are held, so a file of any number of cells is written from a stream.
/// The bytes equal [`write_hfile_with`]'s for the same cells.
pub struct HFileWriter {
    blocks: BlockWriter,
    /// (offset, on-disk size, first row) per data block.
    index: Vec<(u64, usize, Vec<u8>)>,
    payload: Vec<u8>,
    first_row: Vec<u8>,
    last_row: Option<Vec<u8>>,
    cells: u64,
    key_total: u64,
    value_total: u64,
}

/// The longest row key an HFile holds.
pub const MAX_ROW_LEN: usize = i16::MAX as usize;

impl HFileWriter {
    pub fn new(opts: HFileWriteOptions) -> HFileWriter {
        HFileWriter {
            blocks: BlockWriter {
                out: Vec::new(),
                opts,
            },
            index: Vec::new(),
            payload: Vec::new(),
            first_row: Vec::new(),
            last_row: None,
            cells: 0,
            key_total: 0,
            value_total: 0,
        }
    }

    /// Cells written so far.
    pub fn len(&self) -> u64 {
        self.cells
    }

    pub fn is_empty(&self) -> bool {
        self.cells == 0
    }

    /// Appends a cell; rows must be strictly ascending by bytes.
    pub fn append(&mut self, row: &[u8], value: &[u8]) -> Result<()> {
        if let Some(last) = &self.last_row {
            if last.as_slice() >= row {
                let what = if last.as_slice() == row {
                    "duplicate"
                } else {
                    "unsorted"
                };
                return Err(HudiError::invalid(format!(
                    "HFile cells must be strictly ascending by row: {what} row {:?}",
                    String::from_utf8_lossy(row)
                )));
            }
        }
        // The row length is a Java `short` in the key (HBase's KeyValue refuses longer rows;
        // readers would see a negative length); the key and value lengths are i32.
        if row.len() > MAX_ROW_LEN {
            return Err(HudiError::invalid(format!(
                "HFile row key of {} bytes (at most {MAX_ROW_LEN})",
                row.len()
            )));
        }
        let cell_len = row.len() + value.len() + 21;
        if !self.payload.is_empty() && self.payload.len() + cell_len > self.blocks.opts.block_size {
            self.close_data_block()?;
        }
        if self.payload.is_empty() {
            self.first_row = row.to_vec();
        }
        put_cell(&mut self.payload, row, value)?;
        self.last_row = Some(row.to_vec());
        self.cells += 1;
        self.key_total += row.len() as u64;
        self.value_total += value.len() as u64;
        Ok(())
    }

    fn close_data_block(&mut self) -> Result<()> {
        let offset = self.blocks.out.len() as u64;
        let size = self.blocks.block(b"DATABLK*", &self.payload)?;
        self.index
            .push((offset, size, std::mem::take(&mut self.first_row)));
        self.payload.clear();
        Ok(())
    }

    /// The file's bytes, with `file_info` entries added to the ones the writer always puts.
    pub fn finish(mut self, file_info: &[(&str, Vec<u8>)]) -> Result<Vec<u8>> {
        if !self.payload.is_empty() {
            self.close_data_block()?;
        }
        // Hudi's trailer carries the data bytes here, not the index size (§7.2 quirk).
        let uncompressed_data = self.key_total + self.value_total + 21 * self.cells;
        let w = &mut self.blocks;
        let index = &self.index;
        let load_on_open = w.out.len() as u64;
        let mut root = Vec::new();
        for (offset, size, row) in index {
            root.extend_from_slice(&offset.to_be_bytes());
            root.extend_from_slice(&(*size as i32).to_be_bytes());
            let key = row_key(row);
            hadoop_vlong(&mut root, key.len() as i64);
            root.extend_from_slice(&key);
        }
        w.block(b"IDXROOT2", &root)?;
        // The meta index must be there even when empty (Java readers expect it).
        w.block(b"IDXROOT2", &[])?;

        let file_info_offset = w.out.len() as u64;
        let n = self.cells as i64;
        let avg = |total: u64| if n == 0 { 0 } else { (total as i64 / n) as i32 };
        let last_key = self.last_row.as_deref().map(row_key).unwrap_or_default();
        let mut info = InfoMap::default();
        info.put("MAX_MEMSTORE_TS_KEY", 0i64.to_be_bytes().to_vec());
        for (k, v) in file_info {
            info.put(k, v.clone());
        }
        info.put("hfile.LASTKEY", last_key);
        info.put(
            "hfile.AVG_KEY_LEN",
            avg(self.key_total).to_be_bytes().to_vec(),
        );
        info.put(
            "hfile.CREATE_TIME_TS",
            w.opts.create_time_ms.to_be_bytes().to_vec(),
        );
        info.put(
            "hfile.AVG_VALUE_LEN",
            avg(self.value_total).to_be_bytes().to_vec(),
        );
        if !info.contains("KEY_VALUE_VERSION") {
            info.put("KEY_VALUE_VERSION", 1i32.to_be_bytes().to_vec());
        }
        w.block(b"FILEINF2", &info.payload())?;

        let mut t = Vec::new();
        proto_varint(&mut t, 1, file_info_offset);
        proto_varint(&mut t, 2, load_on_open);
        proto_varint(&mut t, 3, uncompressed_data);
        proto_varint(&mut t, 5, index.len() as u64);
        proto_varint(&mut t, 6, 0);
        proto_varint(&mut t, 7, self.cells);
        proto_varint(&mut t, 8, 1);
        // -1 (no data block) as protobuf writes a negative int64.
        proto_varint(&mut t, 9, index.first().map_or(u64::MAX, |b| b.0));
        proto_varint(&mut t, 10, index.last().map_or(0, |b| b.0));
        proto_bytes(&mut t, 11, COMPARATOR.as_bytes());
        proto_varint(&mut t, 12, codec_id(w.opts.codec));
        let mut out = std::mem::take(&mut w.out);
        let trailer_at = out.len();
        out.extend_from_slice(b"TRABLK\"$");
        varint(&mut out, t.len() as u64);
        out.extend_from_slice(&t);
        if out.len() - trailer_at > TRAILER_SIZE - 4 {
            return Err(HudiError::invalid("HFile trailer larger than 4096 bytes"));
        }
        out.resize(trailer_at + TRAILER_SIZE - 4, 0);
        // Major version 3, minor 0 (Hudi's writer; HBase writes minor 3).
        out.extend_from_slice(&[0, 0, 0, 3]);
        Ok(out)
    }
}

fn codec_id(codec: Codec) -> u64 {
    match codec {
        Codec::Gz => 1,
        Codec::None => 2,
    }
}

/// `i32 keyLen | i32 valueLen | u16 rowLen | row | 0 | i64 MAX | 4 (Put) | value | 0 (MVCC)`.
fn put_cell(out: &mut Vec<u8>, row: &[u8], value: &[u8]) -> Result<()> {
    let value_len = i32::try_from(value.len())
        .map_err(|_| HudiError::invalid("HFile value larger than 2 GiB"))?;
    out.extend_from_slice(&((row.len() + 12) as i32).to_be_bytes());
    out.extend_from_slice(&value_len.to_be_bytes());
    out.extend_from_slice(&(row.len() as u16).to_be_bytes());
    out.extend_from_slice(row);
    out.push(0);
    out.extend_from_slice(&i64::MAX.to_be_bytes());
    out.push(4);
    out.extend_from_slice(value);
    out.push(0);
    Ok(())
}

/// Index and `hfile.LASTKEY` keys: `[u16 len][row]` (empty for an empty file).
fn row_key(row: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(row.len() + 2);
    k.extend_from_slice(&(row.len() as u16).to_be_bytes());
    k.extend_from_slice(row);
    k
}

struct BlockWriter {
    out: Vec<u8>,
    opts: HFileWriteOptions,
}

impl BlockWriter {
    /// Appends one block; returns its on-disk size (header, payload and checksums).
    fn block(&mut self, magic: &[u8; 8], payload: &[u8]) -> Result<usize> {
        let body = match self.opts.codec {
            Codec::None => payload.to_vec(),
            Codec::Gz => gzip(payload)?,
        };
        let too_big = || HudiError::invalid("HFile block larger than 2 GiB");
        let data_len = HEADER_SIZE + body.len();
        let sums_len = 4 * data_len.div_ceil(BYTES_PER_CHECKSUM);
        let start = self.out.len();
        let out = &mut self.out;
        out.extend_from_slice(magic);
        out.extend_from_slice(
            &i32::try_from(body.len() + sums_len)
                .map_err(|_| too_big())?
                .to_be_bytes(),
        );
        out.extend_from_slice(
            &i32::try_from(payload.len())
                .map_err(|_| too_big())?
                .to_be_bytes(),
        );
        out.extend_from_slice(&(-1i64).to_be_bytes());
        out.push(match self.opts.checksum {
            ChecksumKind::Null => NULL,
            ChecksumKind::Crc32c => CRC32C,
        });
        out.extend_from_slice(&(BYTES_PER_CHECKSUM as i32).to_be_bytes());
        out.extend_from_slice(&(data_len as i32).to_be_bytes());
        out.extend_from_slice(&body);
        match self.opts.checksum {
            ChecksumKind::Null => out.resize(out.len() + sums_len, 0),
            ChecksumKind::Crc32c => {
                let sums: Vec<u8> = out[start..start + data_len]
                    .chunks(BYTES_PER_CHECKSUM)
                    .flat_map(|c| crc32c(c).to_be_bytes())
                    .collect();
                out.extend_from_slice(&sums);
            }
        }
        Ok(self.out.len() - start)
    }
}

/// A gzip member as `java.util.zip.GZIPOutputStream` writes it: mtime 0, no extra flags,
/// OS byte 0, default deflate level.
fn gzip(payload: &[u8]) -> Result<Vec<u8>> {
    let mut gz = flate2::GzBuilder::new()
        .operating_system(0)
        .write(Vec::new(), flate2::Compression::new(6));
    gz.write_all(payload)
        .and_then(|_| gz.finish())
        .map_err(|e| HudiError::invalid(format!("gzip: {e}")))
}

/// File info entries in the order Java's `HashMap<String, _>` iterates them (the order Hudi
/// writes), so files compare equal to Java's byte for byte.
#[derive(Default)]
struct InfoMap {
    entries: Vec<(String, Vec<u8>)>,
}

impl InfoMap {
    fn contains(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// Replaces in place (a Java put keeps the entry's position).
    fn put(&mut self, key: &str, value: Vec<u8>) {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(e) => e.1 = value,
            None => self.entries.push((key.to_string(), value)),
        }
    }

    fn payload(&self) -> Vec<u8> {
        let keys: Vec<&str> = self.entries.iter().map(|(k, _)| k.as_str()).collect();
        let mut msg = Vec::new();
        for i in java_hash_map_order(&keys) {
            let (k, v) = &self.entries[i];
            let mut pair = Vec::new();
            proto_bytes(&mut pair, 1, k.as_bytes());
            proto_bytes(&mut pair, 2, v);
            proto_bytes(&mut msg, 1, &pair);
        }
        let mut p = b"PBUF".to_vec();
        varint(&mut p, msg.len() as u64);
        p.extend_from_slice(&msg);
        p
    }
}

/// Iteration order of a Java `HashMap<String, _>` (default capacity 16, load factor 0.75)
/// filled with `keys` in this order: by bucket, then by insertion within a bucket.
pub(crate) fn java_hash_map_order(keys: &[&str]) -> Vec<usize> {
    let mut cap = 16usize;
    while keys.len() > cap / 4 * 3 {
        cap *= 2;
    }
    let bucket = |k: &str| {
        let h = crate::value::java_string_hash(k) as u32;
        ((h ^ (h >> 16)) as usize) & (cap - 1)
    };
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| (bucket(keys[i]), i));
    order
}

/// Hadoop `WritableUtils.writeVLong`.
pub(crate) fn hadoop_vlong(out: &mut Vec<u8>, v: i64) {
    if (-112..=127).contains(&v) {
        out.push(v as u8);
        return;
    }
    let (mut len, mag) = if v < 0 { (-120i32, !v) } else { (-112i32, v) };
    let mut tmp = mag;
    while tmp != 0 {
        tmp >>= 8;
        len -= 1;
    }
    out.push(len as i8 as u8);
    let n = if len < -120 {
        -(len + 120)
    } else {
        -(len + 112)
    };
    for i in (0..n).rev() {
        out.push((mag >> (i * 8)) as u8);
    }
}

pub(crate) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn proto_varint(out: &mut Vec<u8>, field: u64, v: u64) {
    varint(out, field << 3);
    varint(out, v);
}

pub(crate) fn proto_bytes(out: &mut Vec<u8>, field: u64, b: &[u8]) {
    varint(out, (field << 3) | 2);
    varint(out, b.len() as u64);
    out.extend_from_slice(b);
}
