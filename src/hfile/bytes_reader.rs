//! Checked big-endian reads over a byte slice. Every read either succeeds or returns a
//! `Corrupt` error without a path (the reader adds its file with `HudiError::in_file`), so no
//! byte that came from a file can make the decoder panic.

use std::ops::Range;

use crate::error::{malformed, Result};

pub(crate) struct ByteReader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// What is being decoded, for messages ("data block", "trailer", …).
    what: &'static str,
}

impl<'a> ByteReader<'a> {
    pub fn new(buf: &'a [u8], what: &'static str) -> Self {
        ByteReader { buf, pos: 0, what }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The positions of the next `n` bytes, consumed.
    pub fn take_range(&mut self, n: usize) -> Result<Range<usize>> {
        if n > self.remaining() {
            return Err(malformed(format!(
                "{}: needs {n} bytes at offset {}, only {} left",
                self.what,
                self.pos,
                self.remaining()
            )));
        }
        let start = self.pos;
        self.pos += n;
        Ok(start..self.pos)
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let r = self.take_range(n)?;
        Ok(&self.buf[r])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.array::<1>()?[0])
    }

    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    pub fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    pub fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// A length or count stored as a signed int; negative values are corrupt.
    pub fn len_i32(&mut self, field: &str) -> Result<usize> {
        let v = self.i32()?;
        usize::try_from(v).map_err(|_| malformed(format!("{}: negative {field} {v}", self.what)))
    }

    /// Hadoop `WritableUtils.readVLong`: one byte for -112..=127, otherwise a length/sign
    /// byte followed by up to 8 big-endian magnitude bytes.
    pub fn hadoop_vlong(&mut self) -> Result<i64> {
        let first = self.u8()? as i8;
        if first >= -112 {
            return Ok(first as i64);
        }
        let (negative, len) = if first < -120 {
            (true, (-120 - first as i32) as usize)
        } else {
            (false, (-112 - first as i32) as usize)
        };
        let mut v: i64 = 0;
        for &b in self.take(len)? {
            v = (v << 8) | b as i64;
        }
        Ok(if negative { !v } else { v })
    }

    /// Protobuf base-128 varint (at most 10 bytes).
    pub fn varint(&mut self) -> Result<u64> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(malformed(format!(
            "{}: varint longer than 10 bytes",
            self.what
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadoop_vlong_matches_writable_utils() {
        // (encoded, value) pairs produced by Hadoop's WritableUtils.writeVLong.
        let cases: &[(&[u8], i64)] = &[
            (&[0x00], 0),
            (&[0x7f], 127),
            (&[0x90], -112),
            (&[0x8f, 0x80], 128),
            (&[0x8e, 0x01, 0x00], 256),
            (&[0x87, 0x70], -113),
            (
                &[0x88, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
                i64::MAX,
            ),
        ];
        for (bytes, want) in cases {
            let mut r = ByteReader::new(bytes, "t");
            assert_eq!(r.hadoop_vlong().unwrap(), *want, "{bytes:02x?}");
            assert!(r.is_empty());
        }
    }

    #[test]
    fn short_reads_are_errors() {
        let mut r = ByteReader::new(&[1, 2, 3], "t");
        assert!(r.i32().is_err());
        assert!(ByteReader::new(&[0x8e, 0x01], "t").hadoop_vlong().is_err());
        assert!(ByteReader::new(&[0xff; 11], "t").varint().is_err());
        assert_eq!(ByteReader::new(&[0xac, 0x02], "t").varint().unwrap(), 300);
    }
}
