//! HFile blocks: the 33-byte header, checksums and (de)compression of the payload.

use bytes::Bytes;

use super::bytes_reader::ByteReader;
use super::checksum;
use super::data::{cell_at, well_formed_cell_at, CellAt, CellLayout};
use super::gzip::Inflater;
use crate::error::{malformed, HudiError, Result};

pub(crate) const HEADER_SIZE: usize = 33;

/// Block kinds by their 8-byte magic (HBase `BlockType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockType {
    Data,
    EncodedData,
    Meta,
    RootIndex,
    LeafIndex,
    IntermediateIndex,
    FileInfo,
    Bloom,
}

impl BlockType {
    fn from_magic(magic: &[u8]) -> Option<BlockType> {
        Some(match magic {
            b"DATABLK*" => BlockType::Data,
            b"DATABLKE" => BlockType::EncodedData,
            b"METABLKc" => BlockType::Meta,
            b"IDXROOT2" => BlockType::RootIndex,
            b"IDXLEAF2" => BlockType::LeafIndex,
            b"IDXINTE2" => BlockType::IntermediateIndex,
            b"FILEINF2" => BlockType::FileInfo,
            b"BLMFBLK2" | b"BLMFMET2" | b"DFBLMET2" => BlockType::Bloom,
            _ => return None,
        })
    }
}

/// The payload compression named by the trailer; applies to every block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    None,
    Gz,
}

impl Codec {
    /// Maps HBase's `Compression.Algorithm` ordinal; codecs other than NONE and GZ are
    /// `Unsupported`, naming the codec and the file.
    pub(crate) fn from_id(id: u32, path: &str) -> Result<Codec> {
        let name = match id {
            1 => return Ok(Codec::Gz),
            2 => return Ok(Codec::None),
            0 => "LZO",
            3 => "SNAPPY",
            4 => "LZ4",
            5 => "BZIP2",
            6 => "ZSTD",
            _ => {
                return Err(HudiError::corrupt(
                    path,
                    format!("unknown compression codec {id}"),
                ))
            }
        };
        Err(HudiError::unsupported_in(
            format!("HFile compression codec {name} (only NONE and GZ are read)"),
            path,
        ))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct BlockHeader {
    pub block_type: BlockType,
    pub on_disk_size_without_header: usize,
    pub uncompressed_size: usize,
    pub checksum_type: u8,
    pub bytes_per_checksum: u32,
    pub on_disk_data_size_with_header: usize,
}

impl BlockHeader {
    pub fn parse(buf: &[u8]) -> Result<BlockHeader> {
        let mut r = ByteReader::new(buf, "block header");
        let magic = r.take(8)?;
        let block_type = BlockType::from_magic(magic).ok_or_else(|| {
            malformed(format!(
                "block magic mismatch: {:?} is not a known HFile block",
                String::from_utf8_lossy(magic)
            ))
        })?;
        let on_disk_size_without_header = r.len_i32("on-disk size")?;
        let uncompressed_size = r.len_i32("uncompressed size")?;
        let _prev_block_offset = r.i64()?;
        let h = BlockHeader {
            block_type,
            on_disk_size_without_header,
            uncompressed_size,
            checksum_type: r.u8()?,
            bytes_per_checksum: r.i32()? as u32,
            on_disk_data_size_with_header: r.len_i32("on-disk data size")?,
        };
        let data = h.on_disk_data_size_with_header;
        if data < HEADER_SIZE || data > h.on_disk_size() {
            return Err(malformed(format!(
                "block header sizes disagree: data size {data}, on-disk size {}",
                h.on_disk_size()
            )));
        }
        Ok(h)
    }

    pub fn on_disk_size(&self) -> usize {
        HEADER_SIZE.saturating_add(self.on_disk_size_without_header)
    }
}

/// Decodes the block at the start of `raw`: checks the magic is one of `expect`, checks the
/// checksums (what they said is returned, never an error: see [`checksum::Outcome`]) and
/// decompresses the payload. Errors carry no path.
pub(crate) fn decode_block(
    raw: &Bytes,
    expect: &[BlockType],
    codec: Codec,
) -> Result<(BlockHeader, Bytes, checksum::Outcome)> {
    let (h, stored, outcome) = checked_block(raw, expect)?;
    let payload = decompress(codec, stored, h.uncompressed_size)?;
    Ok((h, payload, outcome))
}

/// Like [`decode_block`], but the payload is inflated only as far as its reader asks.
pub(crate) fn open_block(
    raw: &Bytes,
    expect: &[BlockType],
    codec: Codec,
) -> Result<(BlockHeader, LazyPayload, checksum::Outcome)> {
    let (h, stored, outcome) = checked_block(raw, expect)?;
    let payload = LazyPayload::new(codec, stored, h.uncompressed_size)?;
    Ok((h, payload, outcome))
}

/// The header, checked against `expect` and the bytes present, and the stored (possibly
/// compressed) payload, and what its checksums said.
fn checked_block(
    raw: &Bytes,
    expect: &[BlockType],
) -> Result<(BlockHeader, Bytes, checksum::Outcome)> {
    let h = BlockHeader::parse(raw)?;
    if !expect.contains(&h.block_type) {
        if h.block_type == BlockType::EncodedData {
            return Err(HudiError::unsupported(
                "HFile data block encoding (DATABLKE)",
            ));
        }
        return Err(malformed(format!(
            "block magic mismatch: expected {expect:?}, found {:?}",
            h.block_type
        )));
    }
    if raw.len() < h.on_disk_size() {
        return Err(malformed(format!(
            "truncated block: {} of {} bytes present",
            raw.len(),
            h.on_disk_size()
        )));
    }
    let data_end = h.on_disk_data_size_with_header;
    let outcome = checksum::check(
        h.checksum_type,
        h.bytes_per_checksum,
        &raw[..data_end],
        &raw[data_end..h.on_disk_size()],
    )?;
    Ok((h, raw.slice(HEADER_SIZE..data_end), outcome))
}

/// A block payload inflated on demand: a point lookup stops at its key, so it inflates half
/// of a (typically 1 MiB) record-index block on average instead of all of it. The same
/// bounds as [`decompress`] hold for what is inflated.
pub(crate) struct LazyPayload {
    plain: Bytes,
    inflated: Vec<u8>,
    gz: Option<Inflater>,
    declared: usize,
}

impl LazyPayload {
    fn new(codec: Codec, stored: Bytes, declared: usize) -> Result<LazyPayload> {
        check_declared(codec, &stored, declared)?;
        Ok(match codec {
            Codec::None => {
                if stored.len() != declared {
                    return Err(malformed(format!(
                        "payload is {} bytes uncompressed, header says {declared}",
                        stored.len()
                    )));
                }
                LazyPayload {
                    plain: stored,
                    inflated: Vec::new(),
                    gz: None,
                    declared,
                }
            }
            Codec::Gz => LazyPayload {
                plain: Bytes::new(),
                // One byte past the declared size, so that a stream going on is noticed.
                inflated: Vec::with_capacity(declared + 1),
                gz: Some(Inflater::new(stored)),
                declared,
            },
        })
    }

    /// The payload's bytes inflated so far.
    pub fn bytes(&self) -> &[u8] {
        if self.gz.is_none() && self.inflated.is_empty() {
            &self.plain
        } else {
            &self.inflated
        }
    }

    fn into_bytes(self) -> Bytes {
        if self.gz.is_none() && self.inflated.is_empty() {
            self.plain
        } else {
            Bytes::from(self.inflated)
        }
    }

    /// The cell starting at `pos`, inflating as far as it needs; `None` at the payload's end.
    pub fn cell_at(&mut self, pos: usize, layout: CellLayout) -> Result<Option<CellAt>> {
        if let Some(at) = well_formed_cell_at(self.bytes(), pos, layout) {
            return Ok(Some(at));
        }
        self.fill(pos + 1)?;
        loop {
            if pos >= self.bytes().len() {
                return Ok(None);
            }
            match cell_at(self.bytes(), pos, layout) {
                Ok(at) => return Ok(Some(at)),
                // A cell cut where inflating has stopped so far: inflate on.
                Err(_) if self.gz.is_some() => self.fill(self.bytes().len() + 1)?,
                Err(e) => return Err(e),
            }
        }
    }

    /// Inflates until at least `len` bytes are held or the payload ends (then fewer are).
    fn fill(&mut self, len: usize) -> Result<()> {
        const STEP: usize = 64 << 10;
        while self.inflated.len() < len {
            let Some(gz) = self.gz.as_mut() else {
                return Ok(());
            };
            let have = self.inflated.len();
            let room = (self.declared + 1).saturating_sub(have).max(1);
            let step = len.saturating_sub(have).max(STEP).min(room);
            let ended = gz.inflate_into(&mut self.inflated, step)?;
            if self.inflated.len() > self.declared {
                return Err(malformed(format!(
                    "payload inflates past the {} bytes its header says",
                    self.declared
                )));
            }
            if ended {
                self.gz = None;
                if self.inflated.len() != self.declared {
                    return Err(malformed(format!(
                        "payload is {} bytes uncompressed, header says {}",
                        self.inflated.len(),
                        self.declared
                    )));
                }
            }
        }
        Ok(())
    }
}

/// A declared uncompressed size is refused before anything is allocated for it when it
/// passes the block limit or what `codec` could inflate from `stored`.
fn check_declared(codec: Codec, stored: &Bytes, uncompressed_size: usize) -> Result<()> {
    if uncompressed_size > MAX_BLOCK_BYTES {
        return Err(malformed(format!(
            "block declares {uncompressed_size} bytes uncompressed (at most {MAX_BLOCK_BYTES})"
        )));
    }
    // Deflate cannot compress past ~1032:1: a larger claim is a lie.
    if codec == Codec::Gz && uncompressed_size as u64 > stored.len() as u64 * 1100 + 1024 {
        return Err(malformed(format!(
            "{} gzip bytes cannot hold the {uncompressed_size} its header says",
            stored.len()
        )));
    }
    Ok(())
}

/// Largest block payload inflated (Hudi writes 64 KiB to 1 MiB blocks); a header that
/// declares more is damage or a decompression bomb.
pub const MAX_BLOCK_BYTES: usize = crate::avro::guard::MAX_VALUE_BYTES;

fn decompress(codec: Codec, payload: Bytes, uncompressed_size: usize) -> Result<Bytes> {
    let mut payload = LazyPayload::new(codec, payload, uncompressed_size)?;
    payload.fill(usize::MAX)?;
    Ok(payload.into_bytes())
}

#[cfg(test)]
mod bomb_tests {
    use super::*;

    fn gzip(data: &[u8]) -> Bytes {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut enc, data).unwrap();
        Bytes::from(enc.finish().unwrap())
    }

    #[test]
    fn inflation_is_bounded_by_the_header_and_by_the_limit() {
        let payload = gzip(&vec![0u8; 8 << 20]);
        // The header says 1 KiB: reading stops just past it.
        let e = decompress(Codec::Gz, payload.clone(), 1024).unwrap_err();
        assert!(e.to_string().contains("past the 1024 bytes"), "{e}");
        // More than deflate could ever hold in these bytes: refused before allocating.
        let e = decompress(Codec::Gz, gzip(b"tiny"), 60 << 20).unwrap_err();
        assert!(e.to_string().contains("cannot hold"), "{e}");
        // The header declares more than any block may hold: refused before inflating.
        let e = decompress(Codec::Gz, payload, 2 << 30).unwrap_err();
        assert_eq!(e.code(), "CORRUPT");
        assert!(e.to_string().contains("at most"), "{e}");
        assert_eq!(decompress(Codec::Gz, gzip(b"abc"), 3).unwrap(), &b"abc"[..]);
    }

    #[test]
    fn a_whole_payload_is_checked_against_its_crc_and_a_lookup_stops_early() {
        let data: Vec<u8> = (0..300_000u32).flat_map(|i| i.to_be_bytes()).collect();
        let mut damaged = gzip(&data).to_vec();
        let crc_at = damaged.len() - 8;
        damaged[crc_at] ^= 0xff;
        let damaged = Bytes::from(damaged);
        let e = decompress(Codec::Gz, damaged.clone(), data.len()).unwrap_err();
        assert!(e.to_string().contains("CRC-32"), "{e}");
        // A reader that stops inside the payload has inflated a prefix only.
        let mut lazy = LazyPayload::new(Codec::Gz, damaged, data.len()).unwrap();
        lazy.fill(1000).unwrap();
        assert!(lazy.bytes().len() >= 1000 && lazy.bytes().len() < data.len() / 2);
        assert_eq!(lazy.bytes(), &data[..lazy.bytes().len()]);
    }
}
