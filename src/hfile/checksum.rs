//! HBase block checksums: one 4-byte big-endian checksum per `bytesPerChecksum` chunk of
//! header + on-disk payload. HBase writes CRC32C; Hudi's own writer writes type NULL (and
//! zero bytes in the reserved slots); hudi-rs 0.6 declares CRC32C and stores zeros.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::error::{malformed, Result};

pub(crate) const NULL: u8 = 0;
pub(crate) const CRC32: u8 = 1;
pub(crate) const CRC32C: u8 = 2;

/// CRC32C tables for eight bytes at a time (slice-by-8): a block's checksums are computed
/// on every read of it, and wasm has no CRC instruction (byte at a time is one dependent
/// table lookup per byte).
const fn crc32c_tables() -> [[u32; 256]; 8] {
    let mut tables = [[0u32; 256]; 8];
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
        tables[0][i] = c;
        i += 1;
    }
    let mut t = 1;
    while t < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = tables[t - 1][i];
            tables[t][i] = (prev >> 8) ^ tables[0][(prev & 0xff) as usize];
            i += 1;
        }
        t += 1;
    }
    tables
}

static CRC32C_TABLES: [[u32; 256]; 8] = crc32c_tables();

/// CRC-32C (Castagnoli), as `java.util.zip.CRC32C`.
pub(crate) fn crc32c(data: &[u8]) -> u32 {
    let t = &CRC32C_TABLES;
    let mut crc = !0u32;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        let lo = crc ^ u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        let hi = u32::from_le_bytes([w[4], w[5], w[6], w[7]]);
        crc = t[7][(lo & 0xff) as usize]
            ^ t[6][((lo >> 8) & 0xff) as usize]
            ^ t[5][((lo >> 16) & 0xff) as usize]
            ^ t[4][(lo >> 24) as usize]
            ^ t[3][(hi & 0xff) as usize]
            ^ t[2][((hi >> 8) & 0xff) as usize]
            ^ t[1][((hi >> 16) & 0xff) as usize]
            ^ t[0][(hi >> 24) as usize];
    }
    !words.remainder().iter().fold(crc, |c, &b| {
        t[0][((c ^ b as u32) & 0xff) as usize] ^ (c >> 8)
    })
}

/// What a block's checksums said. None of these stops a read: Apache Hudi's own reader
/// (hudi-io `HFileBlock`, `HFileBlockReader`) reads the checksum fields and never verifies
/// them, so tables it reads must read here; damage is still caught by the block magic, the
/// sizes, decompression and key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Type NULL (Hudi 1.1's own writer): nothing to check.
    Undeclared,
    Verified,
    /// A checksum type is declared but every stored value is zero (hudi-rs 0.6 writes so).
    Zeros,
    Mismatch {
        chunk: usize,
        stored: u32,
        computed: u32,
    },
    /// An unknown type or a checksum area too short for the data: not checked.
    Unverifiable(String),
}

/// Checks the checksums in `sums` against `data` (header + on-disk payload).
pub(crate) fn check(
    kind: u8,
    bytes_per_checksum: u32,
    data: &[u8],
    sums: &[u8],
) -> Result<Outcome> {
    let f: fn(&[u8]) -> u32 = match kind {
        NULL => return Ok(Outcome::Undeclared),
        CRC32 => crate::config::crc32,
        CRC32C => crc32c,
        other => {
            return Ok(Outcome::Unverifiable(format!(
                "unknown checksum type {other}"
            )))
        }
    };
    // Java sizes the checksum area with it (numChecksumChunks), so 0 fails there too.
    if bytes_per_checksum == 0 {
        return Err(malformed("bytesPerChecksum is 0"));
    }
    let chunks = data.chunks(bytes_per_checksum as usize);
    if sums.len() < chunks.len() * 4 {
        return Ok(Outcome::Unverifiable(format!(
            "{} checksum bytes for {} chunks",
            sums.len(),
            chunks.len()
        )));
    }
    let sums = &sums[..chunks.len() * 4];
    if sums.iter().all(|&b| b == 0) {
        return Ok(Outcome::Zeros);
    }
    for (chunk, (bytes, stored)) in chunks.zip(sums.chunks_exact(4)).enumerate() {
        let stored = u32::from_be_bytes([stored[0], stored[1], stored[2], stored[3]]);
        let computed = f(bytes);
        if stored != computed {
            return Ok(Outcome::Mismatch {
                chunk,
                stored,
                computed,
            });
        }
    }
    Ok(Outcome::Verified)
}

/// Counts of [`Outcome`]s over the blocks one HFile reader decoded (a block decoded twice
/// counts twice). Shared by a reader's clones.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    verified: AtomicU64,
    zeros: AtomicU64,
    mismatched: AtomicU64,
    unverifiable: AtomicU64,
    first_problem: Mutex<Option<String>>,
}

impl Tally {
    pub fn record(&self, outcome: &Outcome, path: &str, offset: u64) {
        let counter = match outcome {
            Outcome::Undeclared => return,
            Outcome::Verified => &self.verified,
            Outcome::Zeros => &self.zeros,
            Outcome::Mismatch { .. } => &self.mismatched,
            Outcome::Unverifiable(_) => &self.unverifiable,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let problem = match outcome {
            Outcome::Mismatch {
                chunk,
                stored,
                computed,
            } => format!(
                "{path}: block at offset {offset}: checksum mismatch in chunk {chunk}: stored {stored:08x}, computed {computed:08x}"
            ),
            Outcome::Unverifiable(why) => format!("{path}: block at offset {offset}: {why}"),
            _ => return,
        };
        let mut first = self.first_problem.lock().unwrap_or_else(|e| e.into_inner());
        first.get_or_insert(problem);
    }

    pub fn report(&self) -> ChecksumReport {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ChecksumReport {
            verified: load(&self.verified),
            stored_zeros: load(&self.zeros),
            mismatched: load(&self.mismatched),
            unverifiable: load(&self.unverifiable),
            first_problem: self
                .first_problem
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}

/// Block checksums an HFile reader met, for plan notes and warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChecksumReport {
    pub verified: u64,
    /// Blocks declaring a checksum type whose stored values are all zero.
    pub stored_zeros: u64,
    /// Blocks whose stored checksums differ from their bytes (read anyway, as Hudi does).
    pub mismatched: u64,
    /// Blocks whose checksums could not be checked (unknown type, short checksum area).
    pub unverifiable: u64,
    /// The first mismatched or unverifiable block, described.
    pub first_problem: Option<String>,
}

impl ChecksumReport {
    /// Adds `other`'s counts (the first problem seen stays).
    pub fn add(&mut self, other: &ChecksumReport) {
        self.verified += other.verified;
        self.stored_zeros += other.stored_zeros;
        self.mismatched += other.mismatched;
        self.unverifiable += other.unverifiable;
        if self.first_problem.is_none() {
            self.first_problem.clone_from(&other.first_problem);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
        // RFC 3720 B.4: 32 bytes of zeros, of ones, ascending and descending.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
        let ascending: Vec<u8> = (0..32).collect();
        assert_eq!(crc32c(&ascending), 0x46DD_794E);
        let descending: Vec<u8> = (0..32).rev().collect();
        assert_eq!(crc32c(&descending), 0x113F_DB5C);
    }

    #[test]
    fn crc32c_eight_at_a_time_is_crc32c_a_byte_at_a_time() {
        let bytewise = |data: &[u8]| {
            !data.iter().fold(!0u32, |c, &b| {
                CRC32C_TABLES[0][((c ^ b as u32) & 0xff) as usize] ^ (c >> 8)
            })
        };
        let data: Vec<u8> = (0..1000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 999, 1000] {
            for start in [0, 1, 3] {
                let slice = &data[start.min(len)..len];
                assert_eq!(crc32c(slice), bytewise(slice), "{start}..{len}");
            }
        }
    }
}
