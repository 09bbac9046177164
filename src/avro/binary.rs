//! Avro binary encoding primitives (zig-zag varints, length-prefixed bytes, little-endian
//! floats), reading from a shrinking slice and writing to a `Vec`. Errors carry no path;
//! callers add it with `HudiError::in_file`.

use crate::error::{malformed, Result};

#[inline]
fn eof() -> crate::HudiError {
    malformed("Avro datum ends early")
}

/// A zig-zag varint `long`.
#[inline]
pub fn read_long(buf: &mut &[u8]) -> Result<i64> {
    let (&first, rest) = buf.split_first().ok_or_else(eof)?;
    if first < 0x80 {
        *buf = rest;
        return Ok(unzigzag(first as u64));
    }
    let mut value = (first & 0x7f) as u64;
    let mut shift = 7;
    for (i, &b) in rest.iter().enumerate() {
        value |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            *buf = &rest[i + 1..];
            return Ok(unzigzag(value));
        }
        shift += 7;
        if shift > 63 {
            return Err(malformed("Avro varint longer than 10 bytes"));
        }
    }
    Err(eof())
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// A zig-zag varint `int` (a `long` that must fit 32 bits).
#[inline]
pub fn read_int(buf: &mut &[u8]) -> Result<i32> {
    let v = read_long(buf)?;
    i32::try_from(v).map_err(|_| malformed(format!("Avro int out of range: {v}")))
}

/// A length or count: a non-negative `long` that fits in memory.
#[inline]
pub fn read_len(buf: &mut &[u8]) -> Result<usize> {
    let v = read_long(buf)?;
    usize::try_from(v).map_err(|_| malformed(format!("negative Avro length {v}")))
}

#[inline]
pub fn read_fixed<'a>(buf: &mut &'a [u8], n: usize) -> Result<&'a [u8]> {
    if buf.len() < n {
        return Err(eof());
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Ok(head)
}

/// `bytes` / `string`: a length, then that many bytes.
#[inline]
pub fn read_bytes<'a>(buf: &mut &'a [u8]) -> Result<&'a [u8]> {
    let n = read_len(buf)?;
    read_fixed(buf, n)
}

pub fn read_string<'a>(buf: &mut &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(read_bytes(buf)?).map_err(|_| malformed("Avro string is not UTF-8"))
}

#[inline]
pub fn read_bool(buf: &mut &[u8]) -> Result<bool> {
    match read_fixed(buf, 1)?[0] {
        0 => Ok(false),
        1 => Ok(true),
        b => Err(malformed(format!("Avro boolean byte {b}"))),
    }
}

#[inline]
pub fn read_f32(buf: &mut &[u8]) -> Result<f32> {
    let b = read_fixed(buf, 4)?;
    Ok(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[inline]
pub fn read_f64(buf: &mut &[u8]) -> Result<f64> {
    let b = read_fixed(buf, 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(f64::from_le_bytes(a))
}

/// Reads the block header of an array or map: the item count of the next block (0 = end).
/// A negative count is followed by the block's byte size, which is skipped over.
#[inline]
pub fn read_block_count(buf: &mut &[u8]) -> Result<usize> {
    let n = read_long(buf)?;
    if n < 0 {
        read_long(buf)?;
    }
    usize::try_from(n.unsigned_abs()).map_err(|_| malformed("Avro block count too large"))
}

/// The branch a union value takes, of a union's `branches` (one per variant).
#[inline]
pub fn read_union_branch<'a, T>(buf: &mut &[u8], branches: &'a [T]) -> Result<&'a T> {
    let branch = read_long(buf)?;
    usize::try_from(branch)
        .ok()
        .and_then(|b| branches.get(b))
        .ok_or_else(|| malformed(format!("bad Avro union branch {branch}")))
}

/// A big-endian two's-complement integer (decimal unscaled value) of up to 16 bytes.
pub fn be_i128(bytes: &[u8]) -> Result<i128> {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let fill = if negative { 0xff } else { 0 };
    let extra = bytes.len().saturating_sub(16);
    if bytes[..extra].iter().any(|b| *b != fill) {
        return Err(malformed("decimal wider than 128 bits"));
    }
    let mut a = [fill; 16];
    let tail = &bytes[extra..];
    a[16 - tail.len()..].copy_from_slice(tail);
    Ok(i128::from_be_bytes(a))
}

pub fn write_long(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

pub fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_long(out, b.len() as i64);
    out.extend_from_slice(b);
}

/// Minimal big-endian two's-complement bytes of `v` (Java `BigInteger.toByteArray`).
pub fn i128_to_be_min(v: i128) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        let redundant = (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0);
        if !redundant {
            break;
        }
        start += 1;
    }
    bytes[start..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for v in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            300,
            i32::MAX as i64,
            i64::MIN,
            i64::MAX,
        ] {
            let mut out = Vec::new();
            write_long(&mut out, v);
            let mut s = out.as_slice();
            assert_eq!(read_long(&mut s).unwrap(), v);
            assert!(s.is_empty());
        }
        assert_eq!(read_long(&mut &[0x80u8][..]).unwrap_err().code(), "CORRUPT");
        assert!(read_int(&mut &[0xff, 0xff, 0xff, 0xff, 0x7f][..]).is_err());
        assert!(read_long(&mut &[0xffu8; 11][..]).is_err());
    }

    #[test]
    fn strings_and_decimals() {
        let mut out = Vec::new();
        write_bytes(&mut out, b"TXN-002");
        assert_eq!(out[0], 0x0e);
        assert_eq!(read_string(&mut out.as_slice()).unwrap(), "TXN-002");
        for v in [
            0i128,
            1,
            -1,
            127,
            128,
            -128,
            -129,
            1_250_000_000_000_000_000,
        ] {
            assert_eq!(be_i128(&i128_to_be_min(v)).unwrap(), v);
        }
        assert_eq!(i128_to_be_min(128), vec![0, 128]);
        assert_eq!(be_i128(&[0xff; 20]).unwrap(), -1);
        assert!(be_i128(&[1; 17]).is_err());
    }
}
