//! The fixed 4096-byte trailer at the end of every HFile v3: magic, a length-delimited
//! `TrailerProto`, zero padding, and the version in the last 4 bytes.

use super::bytes_reader::ByteReader;
use super::proto::{delimited, for_each_field, Field};
use crate::error::{malformed, HudiError, Result};

pub const TRAILER_SIZE: usize = 4096;
const TRAILER_MAGIC: &[u8; 8] = b"TRABLK\"$";

/// The decoded trailer. Offsets are absolute file offsets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trailer {
    pub file_info_offset: u64,
    pub load_on_open_data_offset: u64,
    /// Hudi's own writer stores the uncompressed *data* size here (a quirk); HBase the index size.
    pub uncompressed_data_index_size: u64,
    pub total_uncompressed_bytes: u64,
    pub data_index_count: u32,
    pub meta_index_count: u32,
    pub entry_count: u64,
    pub num_data_index_levels: u32,
    /// `None` when the file has no data block (written as -1).
    pub first_data_block_offset: Option<u64>,
    pub last_data_block_offset: Option<u64>,
    pub comparator_class_name: String,
    /// HBase `Compression.Algorithm` ordinal: 0 LZO, 1 GZ, 2 NONE, 3 SNAPPY, 4 LZ4, 5 BZIP2, 6 ZSTD.
    pub compression_codec: u32,
    pub major_version: u32,
    pub minor_version: u8,
}

impl Trailer {
    /// Parses the last [`TRAILER_SIZE`] bytes of a file. Errors carry no path.
    pub(crate) fn parse(bytes: &[u8]) -> Result<Trailer> {
        if bytes.len() != TRAILER_SIZE {
            return Err(malformed(format!(
                "trailer must be {TRAILER_SIZE} bytes, got {}",
                bytes.len()
            )));
        }
        let mut r = ByteReader::new(bytes, "trailer");
        if r.take(8)? != TRAILER_MAGIC {
            return Err(malformed("bad trailer magic (not an HFile, or truncated)"));
        }
        let mut t = Trailer {
            compression_codec: 2,
            num_data_index_levels: 1,
            ..Trailer::default()
        };
        t.set_version(&bytes[TRAILER_SIZE - 4..])?;
        for_each_field(delimited(&mut r)?, "trailer", |n, f| t.set_field(n, f))?;
        Ok(t)
    }

    /// Byte 0 is the minor version, bytes 1..4 the major version.
    fn set_version(&mut self, b: &[u8]) -> Result<()> {
        self.minor_version = b[0];
        self.major_version = u32::from_be_bytes([0, b[1], b[2], b[3]]);
        match self.major_version {
            3 => Ok(()),
            1 | 2 => Err(HudiError::unsupported(format!(
                "HFile version {}.{} (only v3 is read)",
                self.major_version, self.minor_version
            ))),
            v => Err(malformed(format!("bad HFile major version {v}"))),
        }
    }

    fn set_field(&mut self, number: u64, field: Field<'_>) -> Result<()> {
        match (number, field) {
            (11, Field::Bytes(b)) => self.comparator_class_name = String::from_utf8_lossy(b).into(),
            (13, Field::Bytes(b)) if !b.is_empty() => {
                return Err(HudiError::unsupported("encrypted HFile"))
            }
            (n, Field::Varint(v)) => self.set_varint(n, v)?,
            _ => {}
        }
        Ok(())
    }

    fn set_varint(&mut self, number: u64, v: u64) -> Result<()> {
        let small = |v: u64| {
            u32::try_from(v)
                .map_err(|_| malformed(format!("trailer field {number} = {v} too large")))
        };
        // -1 (written as a 10-byte varint) marks "no block".
        let offset = |v: u64| (v != u64::MAX).then_some(v);
        match number {
            1 => self.file_info_offset = v,
            2 => self.load_on_open_data_offset = v,
            3 => self.uncompressed_data_index_size = v,
            4 => self.total_uncompressed_bytes = v,
            5 => self.data_index_count = small(v)?,
            6 => self.meta_index_count = small(v)?,
            7 => self.entry_count = v,
            8 => self.num_data_index_levels = small(v)?,
            9 => self.first_data_block_offset = offset(v),
            10 => self.last_data_block_offset = offset(v),
            12 => self.compression_codec = small(v)?,
            _ => {}
        }
        Ok(())
    }
}
