//! Hudi's record-key bloom filter as Java stores it in a base file's footer
//! (`org.apache.hudi.bloomfilter`, typed by `hoodie_bloom_filter_type_code`): a Hadoop-style
//! filter (`SIMPLE`) or Hudi's bounded dynamic filter (`DYNAMIC_V0`), written with Java's
//! `DataOutput` (big-endian) and Base64-encoded. Hashes are Hadoop's MurmurHash 2, chained
//! as Hadoop's `HashFunction` does, so positions and bytes match Java's for the same keys.
//!
//! Layout of one filter: `i32 -1` (version), `i32 nbHash`, `u8 hashType` (1 = murmur),
//! `i32 vectorSize`, then `ceil(vectorSize / 8)` bytes, bit `i` at byte `i / 8`, mask
//! `1 << (i % 8)`. A dynamic filter is that header, `i32 nr` (keys per row), `i32` keys in
//! the current row, `i32` rows, then each row as one simple filter.

use base64::alphabet::STANDARD as ALPHABET;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

use crate::error::{HudiError, Result};

/// Footer key of the serialized filter.
pub const FOOTER_KEY: &str = "org.apache.hudi.bloomfilter";
/// Footer key of the filter's type code (Java writes it for dynamic filters only).
pub const TYPE_CODE_KEY: &str = "hoodie_bloom_filter_type_code";
/// Java's defaults: `hoodie.index.bloom.num_entries`, `hoodie.index.bloom.fpp`,
/// `hoodie.bloom.index.filter.dynamic.max.entries`, `hoodie.bloom.index.filter.type`.
pub const DEFAULT_NUM_ENTRIES: usize = 60_000;
pub const DEFAULT_FPP: f64 = 0.000_000_001;
pub const DEFAULT_MAX_ENTRIES: usize = 100_000;
pub const DEFAULT_TYPE: BloomType = BloomType::DynamicV0;

const VERSION: i32 = -1;
const MURMUR_HASH: u8 = 1;
/// `ceil(-ln(fpp) / ln 2)` for the smallest positive double is 1075: no Java config hashes
/// more often, and a hostile footer must not make every lookup loop for long.
const MAX_HASHES: i32 = 1100;
const HEADER_LEN: usize = 13;

/// Java decodes with `Base64.getDecoder()`, which takes padding but does not require it.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &ALPHABET,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BloomType {
    Simple,
    DynamicV0,
}

impl BloomType {
    pub fn type_code(self) -> &'static str {
        match self {
            BloomType::Simple => "SIMPLE",
            BloomType::DynamicV0 => "DYNAMIC_V0",
        }
    }

    /// Java's `BloomFilterTypeCode` names, case-insensitively as `BloomFilterFactory` does.
    pub fn from_code(code: &str) -> Option<BloomType> {
        if code.eq_ignore_ascii_case("SIMPLE") {
            Some(BloomType::Simple)
        } else if code.eq_ignore_ascii_case("DYNAMIC_V0") {
            Some(BloomType::DynamicV0)
        } else {
            None
        }
    }
}

/// One bit vector, kept in its serialized byte layout.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    bytes: Vec<u8>,
}

impl Row {
    fn empty(vector_size: i32) -> Row {
        Row {
            bytes: vec![0; n_bytes(vector_size)],
        }
    }

    fn set(&mut self, bit: usize) {
        if let Some(b) = self.bytes.get_mut(bit / 8) {
            *b |= 1 << (bit % 8);
        }
    }

    fn get(&self, bit: usize) -> bool {
        self.bytes
            .get(bit / 8)
            .is_some_and(|b| b & (1 << (bit % 8)) != 0)
    }
}

fn n_bytes(vector_size: i32) -> usize {
    (vector_size.max(0) as usize).div_ceil(8)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BloomFilter {
    kind: BloomType,
    num_hashes: i32,
    vector_size: i32,
    /// Dynamic only: keys per row, keys added since the last row was opened, and the bound
    /// on `rows × nr` (Java does not serialize it: 0 after deserializing).
    nr: i32,
    current: i32,
    max_nr: i32,
    /// Dynamic only, not serialized: once the bound is reached, keys go to rows in turn.
    reached_max: bool,
    next_row: usize,
    /// One row for a simple filter.
    rows: Vec<Row>,
}

impl BloomFilter {
    /// A filter sized as Java's `BloomFilterFactory.createBloomFilter`: `ceil(n · -ln(fpp) /
    /// ln²2)` bits and `ceil(ln 2 · bits / n)` hashes. Values Java would reject (no entries,
    /// `fpp` outside (0, 1)) are clamped to the nearest it accepts; sizes beyond Java's `int`
    /// saturate as Java's casts do.
    pub fn new(kind: BloomType, num_entries: usize, fpp: f64, max_entries: usize) -> BloomFilter {
        let n = num_entries.clamp(1, i32::MAX as usize) as i32;
        let fpp = if fpp.is_nan() {
            DEFAULT_FPP
        } else {
            fpp.clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON)
        };
        let log2_squared = 2f64.ln() * 2f64.ln();
        // `as i32` saturates like Java's `(int)` of a double.
        let bits = ((n as f64) * (-fpp.ln() / log2_squared)).ceil() as i32;
        let vector_size = bits.max(1);
        let num_hashes = ((2f64.ln() * vector_size as f64 / n as f64).ceil() as i32).max(1);
        BloomFilter {
            kind,
            num_hashes,
            vector_size,
            nr: if kind == BloomType::DynamicV0 { n } else { 0 },
            current: 0,
            max_nr: match kind {
                BloomType::DynamicV0 => max_entries.min(i32::MAX as usize) as i32,
                BloomType::Simple => 0,
            },
            reached_max: false,
            next_row: 0,
            rows: vec![Row::empty(vector_size)],
        }
    }

    /// Parses a footer's filter. `type_code` is the footer's `hoodie_bloom_filter_type_code`;
    /// without it the filter is `SIMPLE`, as Java's readers assume. Damage is an error naming
    /// `path`; memory stays proportional to `serialized`.
    pub fn from_footer(
        serialized: &str,
        type_code: Option<&str>,
        path: &str,
    ) -> Result<BloomFilter> {
        let kind = match type_code {
            None => BloomType::Simple,
            Some(code) => BloomType::from_code(code).ok_or_else(|| {
                HudiError::unsupported_in(format!("bloom filter type code {code:?}"), path)
            })?,
        };
        let bytes = BASE64
            .decode(serialized.as_bytes())
            .map_err(|e| HudiError::corrupt(path, format!("bloom filter is not Base64: {e}")))?;
        let mut r = Reader {
            bytes: &bytes,
            pos: 0,
            path,
        };
        let (num_hashes, vector_size) = r.header()?;
        let mut filter = BloomFilter {
            kind,
            num_hashes,
            vector_size,
            nr: 0,
            current: 0,
            max_nr: 0,
            reached_max: false,
            next_row: 0,
            rows: Vec::new(),
        };
        match kind {
            BloomType::Simple => filter.rows.push(r.bits(vector_size)?),
            BloomType::DynamicV0 => {
                filter.nr = r.i32()?;
                filter.current = r.i32()?;
                let rows = r.i32()?;
                if filter.nr <= 0 || rows <= 0 {
                    return Err(r.corrupt(format!(
                        "dynamic bloom filter with {rows} rows of {} keys",
                        filter.nr
                    )));
                }
                for _ in 0..rows {
                    // Every row's bytes are checked present before its vector is allocated.
                    if r.header()? != (num_hashes, vector_size) {
                        return Err(r.corrupt("bloom filter rows of different shapes"));
                    }
                    filter.rows.push(r.bits(vector_size)?);
                }
            }
        }
        // Java ignores bytes after the filter; so do we.
        Ok(filter)
    }

    /// Adds a record key. Java rejects empty keys (it cannot hash them); here they are not
    /// added, and [`BloomFilter::might_contain`] answers true for them.
    pub fn add(&mut self, key: &str) {
        if key.is_empty() {
            return;
        }
        let row = match self.kind {
            BloomType::Simple => 0,
            BloomType::DynamicV0 => self.active_row(),
        };
        let (num_hashes, vector_size) = (self.num_hashes, self.vector_size);
        if let Some(row) = self.rows.get_mut(row) {
            for_each_position(key.as_bytes(), num_hashes, vector_size, |bit| {
                row.set(bit);
                true
            });
        }
        if self.kind == BloomType::DynamicV0 {
            // Java counts every key, also once rows are reused.
            self.current = self.current.wrapping_add(1);
        }
    }

    /// The row a dynamic filter adds the next key to, opening a row while under the bound
    /// (Java's `InternalDynamicBloomFilter.getActiveStandardBF`).
    fn active_row(&mut self) -> usize {
        let rows = self.rows.len().max(1);
        if self.reached_max {
            let i = self.next_row % rows;
            self.next_row = self.next_row.wrapping_add(1);
            return i;
        }
        if self.current >= self.nr {
            if (rows as i64) * (self.nr as i64) < self.max_nr as i64 {
                self.rows.push(Row::empty(self.vector_size));
                self.current = 0;
                return self.rows.len() - 1;
            }
            self.reached_max = true;
            return 0;
        }
        rows - 1
    }

    /// False only when `key` was never added.
    pub fn might_contain(&self, key: &str) -> bool {
        if key.is_empty() {
            return true;
        }
        self.rows.iter().any(|row| {
            for_each_position(key.as_bytes(), self.num_hashes, self.vector_size, |bit| {
                row.get(bit)
            })
        })
    }

    /// The footer value: Base64 of Java's `write(DataOutput)` bytes.
    pub fn serialize(&self) -> String {
        let row_len = HEADER_LEN + n_bytes(self.vector_size);
        let mut out = Vec::with_capacity(HEADER_LEN + 12 + row_len * self.rows.len());
        self.write_header(&mut out);
        if self.kind == BloomType::DynamicV0 {
            out.extend_from_slice(&self.nr.to_be_bytes());
            out.extend_from_slice(&self.current.to_be_bytes());
            out.extend_from_slice(&(self.rows.len() as i32).to_be_bytes());
        }
        for row in &self.rows {
            if self.kind == BloomType::DynamicV0 {
                self.write_header(&mut out);
            }
            out.extend_from_slice(&row.bytes);
        }
        BASE64.encode(out)
    }

    fn write_header(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&VERSION.to_be_bytes());
        out.extend_from_slice(&self.num_hashes.to_be_bytes());
        out.push(MURMUR_HASH);
        out.extend_from_slice(&self.vector_size.to_be_bytes());
    }

    pub fn type_code(&self) -> &'static str {
        self.kind.type_code()
    }

    pub fn kind(&self) -> BloomType {
        self.kind
    }

    /// Bits per row and hashes per key.
    pub fn shape(&self) -> (u32, u32) {
        (self.vector_size as u32, self.num_hashes as u32)
    }

    /// Dynamic only: the keys-per-row threshold (`hoodie.index.bloom.num_entries` of the
    /// writer) and the number of rows; `(0, 1)` for a simple filter.
    pub fn dynamic_shape(&self) -> (u32, usize) {
        (self.nr.max(0) as u32, self.rows.len())
    }
}

/// Calls `f` with each of the key's bit positions until it returns false; whether all
/// returned true. Hadoop's `HashFunction`: each hash seeds the next, position
/// `|h mod vectorSize|` in Java's `int` arithmetic.
fn for_each_position(
    key: &[u8],
    num_hashes: i32,
    vector_size: i32,
    mut f: impl FnMut(usize) -> bool,
) -> bool {
    let mut seed = 0i32;
    for _ in 0..num_hashes {
        seed = murmur_hash(key, seed);
        // `vector_size > 0`, so the remainder cannot overflow.
        let bit = (seed % vector_size.max(1)).unsigned_abs() as usize;
        if !f(bit) {
            return false;
        }
    }
    true
}

/// Hadoop's `org.apache.hadoop.util.hash.MurmurHash` (MurmurHash 2, 32-bit). The tail
/// bytes are sign-extended, as Java's `byte` is.
pub(crate) fn murmur_hash(data: &[u8], seed: i32) -> i32 {
    const M: i32 = 0x5bd1_e995;
    let mut h = seed ^ data.len() as i32;
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = i32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= ((k as u32) >> 24) as i32;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    // Hadoop indexes the tail from the end (the last byte unshifted), unlike the C
    // original, which starts it at the first.
    let tail = chunks.remainder();
    let n = tail.len();
    if n > 0 {
        let signed = |i: usize| tail[i] as i8 as i32;
        if n >= 3 {
            h ^= signed(n - 3) << 16;
        }
        if n >= 2 {
            h ^= signed(n - 2) << 8;
        }
        h ^= signed(n - 1);
        h = h.wrapping_mul(M);
    }
    h ^= ((h as u32) >> 13) as i32;
    h = h.wrapping_mul(M);
    h ^= ((h as u32) >> 15) as i32;
    h
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a str,
}

impl Reader<'_> {
    fn corrupt(&self, what: impl std::fmt::Display) -> HudiError {
        HudiError::corrupt(
            self.path,
            format!("bad bloom filter at byte {}: {what}", self.pos),
        )
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.corrupt(format!(
                "{n} bytes needed, {} left",
                self.bytes.len() - self.pos
            )));
        };
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn i32(&mut self) -> Result<i32> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A filter header: (hashes, vector size).
    fn header(&mut self) -> Result<(i32, i32)> {
        let version = self.i32()?;
        if version != VERSION {
            // Positive: Hadoop's unversioned format, always Jenkins-hashed.
            return Err(HudiError::unsupported_in(
                format!(
                    "bloom filter version {version} (only -1, murmur-hashed, is written by Hudi)"
                ),
                self.path,
            ));
        }
        let num_hashes = self.i32()?;
        let hash_type = self.take(1)?[0];
        let vector_size = self.i32()?;
        if hash_type != MURMUR_HASH {
            return Err(HudiError::unsupported_in(
                format!("bloom filter hash type {hash_type} (Hudi writes 1, murmur)"),
                self.path,
            ));
        }
        if !(1..=MAX_HASHES).contains(&num_hashes) || vector_size <= 0 {
            return Err(self.corrupt(format!("{num_hashes} hashes over {vector_size} bits")));
        }
        Ok((num_hashes, vector_size))
    }

    /// A bit vector, with the bits past `vector_size` cleared as Java's reader drops them.
    fn bits(&mut self, vector_size: i32) -> Result<Row> {
        let mut bytes = self.take(n_bytes(vector_size))?.to_vec();
        let used = (vector_size % 8) as u32;
        if used != 0 {
            if let Some(last) = bytes.last_mut() {
                *last &= ((1u16 << used) - 1) as u8;
            }
        }
        Ok(Row { bytes })
    }
}

#[cfg(test)]
mod tests;
