//! HBase block checksums: one 4-byte big-endian checksum per `bytesPerChecksum` chunk of
//! header + on-disk payload. HBase writes CRC32C; Hudi's own writer writes type NULL (and
//! zero bytes in the reserved slots).

use crate::error::{malformed, Result};

pub(crate) const NULL: u8 = 0;
pub(crate) const CRC32: u8 = 1;
pub(crate) const CRC32C: u8 = 2;

const fn crc32c_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82F6_3B78
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

static CRC32C_TABLE: [u32; 256] = crc32c_table();

/// CRC-32C (Castagnoli), as `java.util.zip.CRC32C`.
pub(crate) fn crc32c(data: &[u8]) -> u32 {
    !data.iter().fold(!0u32, |c, &b| {
        CRC32C_TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8)
    })
}

/// Checks the checksums in `sums` against `data` (header + on-disk payload).
pub(crate) fn verify(kind: u8, bytes_per_checksum: u32, data: &[u8], sums: &[u8]) -> Result<()> {
    let f: fn(&[u8]) -> u32 = match kind {
        NULL => return Ok(()),
        CRC32 => crate::config::crc32,
        CRC32C => crc32c,
        other => return Err(malformed(format!("unknown checksum type {other}"))),
    };
    if bytes_per_checksum == 0 {
        return Err(malformed("bytesPerChecksum is 0"));
    }
    let chunks = data.chunks(bytes_per_checksum as usize);
    if sums.len() < chunks.len() * 4 {
        return Err(malformed(format!(
            "{} checksum bytes for {} chunks",
            sums.len(),
            chunks.len()
        )));
    }
    for (i, (chunk, stored)) in chunks.zip(sums.chunks_exact(4)).enumerate() {
        let stored = u32::from_be_bytes([stored[0], stored[1], stored[2], stored[3]]);
        let computed = f(chunk);
        if stored != computed {
            return Err(malformed(format!(
                "checksum mismatch in chunk {i}: stored {stored:08x}, computed {computed:08x}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
    }
}
