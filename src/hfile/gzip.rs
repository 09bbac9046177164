//! GZ block payloads (RFC 1952 members, one after another) inflated in steps, doing no work
//! a lookup that stops early throws away: output goes straight into spare capacity (nothing
//! zeroed first), and a member's CRC-32 is computed only once the member is whole.

use bytes::Bytes;
use flate2::{Crc, Decompress, FlushDecompress, Status};

use crate::error::{malformed, HudiError, Result};

pub(crate) struct Inflater {
    input: Bytes,
    /// The next input byte not yet consumed.
    at: usize,
    inflate: Decompress,
    /// Where in the output the member being inflated began; `None` between members.
    member_start: Option<usize>,
}

impl Inflater {
    pub fn new(input: Bytes) -> Inflater {
        Inflater {
            input,
            at: 0,
            inflate: Decompress::new(false),
            member_start: None,
        }
    }

    /// Appends at most `max` (≥ 1, within `out`'s spare capacity) inflated bytes to `out`;
    /// true once the last member has ended and been checked.
    pub fn inflate_into(&mut self, out: &mut Vec<u8>, max: usize) -> Result<bool> {
        loop {
            let Some(start) = self.member_start else {
                if self.at == self.input.len() {
                    return Ok(true);
                }
                self.at += header_len(&self.input[self.at..])?;
                self.inflate.reset(false);
                self.member_start = Some(out.len());
                continue;
            };
            let (read, wrote, status) = self.step(out, max)?;
            if status == Status::StreamEnd {
                self.check_trailer(&out[start..])?;
                self.member_start = None;
            } else if read == 0 && wrote == 0 {
                return Err(malformed("gzip payload ends inside its deflate stream"));
            }
            if wrote > 0 {
                return Ok(false);
            }
        }
    }

    fn step(&mut self, out: &mut Vec<u8>, max: usize) -> Result<(usize, usize, Status)> {
        let (in_before, out_before) = (self.inflate.total_in(), self.inflate.total_out());
        let spare = out.spare_capacity_mut();
        let room = max.min(spare.len());
        let status = self
            .inflate
            .decompress_uninit(
                &self.input[self.at..],
                &mut spare[..room],
                FlushDecompress::None,
            )
            .map_err(|e| HudiError::corrupt_by("", "gzip payload", e))?;
        let read = (self.inflate.total_in() - in_before) as usize;
        let wrote = ((self.inflate.total_out() - out_before) as usize).min(room);
        // SAFETY: `decompress_uninit` initialized the first `wrote` bytes of the spare room.
        unsafe { out.set_len(out.len() + wrote) };
        self.at += read;
        Ok((read, wrote, status))
    }

    /// The member's trailer: CRC-32 and length (mod 2^32) of what it inflated to.
    fn check_trailer(&mut self, member: &[u8]) -> Result<()> {
        let Some(trailer) = self.input.get(self.at..self.at + 8) else {
            return Err(malformed("gzip payload ends before its member's trailer"));
        };
        let stored_crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
        let stored_len = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
        let mut crc = Crc::new();
        crc.update(member);
        let (crc, len) = (crc.sum(), member.len());
        if crc != stored_crc || len as u32 != stored_len {
            return Err(malformed(format!(
                "gzip member fails its trailer: CRC-32 {crc:08x} and length {len} inflated, {stored_crc:08x} and {stored_len} stored"
            )));
        }
        self.at += 8;
        Ok(())
    }
}

/// The length of the member header at the start of `b`.
fn header_len(b: &[u8]) -> Result<usize> {
    const FHCRC: u8 = 0x02;
    const FEXTRA: u8 = 0x04;
    const FNAME: u8 = 0x08;
    const FCOMMENT: u8 = 0x10;
    let bad = |what: &str| malformed(format!("gzip payload: {what}"));
    if b.len() < 10 || b[..3] != [0x1f, 0x8b, 8] {
        return Err(bad("not a gzip member (magic or method)"));
    }
    let flags = b[3];
    if flags & 0xe0 != 0 {
        return Err(bad("reserved header flags set"));
    }
    let mut at = 10;
    if flags & FEXTRA != 0 {
        let len = b
            .get(at..at + 2)
            .ok_or_else(|| bad("header cut in its extra field"))?;
        at += 2 + u16::from_le_bytes([len[0], len[1]]) as usize;
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let rest = b.get(at..).unwrap_or_default();
            let end = rest.iter().position(|&c| c == 0);
            at += end.ok_or_else(|| bad("header cut in its name or comment"))? + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    if at > b.len() {
        return Err(bad("header longer than the payload"));
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn member(data: &[u8], named: bool) -> Vec<u8> {
        let builder = if named {
            flate2::GzBuilder::new()
                .filename("block")
                .comment("c")
                .extra(vec![1, 2, 3])
        } else {
            flate2::GzBuilder::new()
        };
        let mut w = builder.write(Vec::new(), flate2::Compression::default());
        w.write_all(data).unwrap();
        w.finish().unwrap()
    }

    fn inflate_all(input: Vec<u8>, cap: usize, step: usize) -> Result<Vec<u8>> {
        let mut gz = Inflater::new(Bytes::from(input));
        let mut out = Vec::with_capacity(cap);
        while !gz.inflate_into(&mut out, step)? {}
        Ok(out)
    }

    #[test]
    fn members_inflate_in_steps_and_in_one_go() {
        let a: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let mut input = member(&a, true);
        input.extend(member(b"second member", false));
        let mut want = a.clone();
        want.extend_from_slice(b"second member");
        for step in [1, 4096, 1 << 30] {
            assert_eq!(
                inflate_all(input.clone(), want.len() + 1, step).unwrap(),
                want
            );
        }
    }

    #[test]
    fn damage_is_named() {
        let good = member(b"hello hello hello", false);
        let mut crc = good.clone();
        let n = crc.len();
        crc[n - 8] ^= 1;
        let e = inflate_all(crc, 64, 64).unwrap_err().to_string();
        assert!(e.contains("CRC-32"), "{e}");
        let e = inflate_all(good[..good.len() - 3].to_vec(), 64, 64).unwrap_err();
        assert!(e.to_string().contains("trailer"), "{e}");
        let e = inflate_all(good[..14].to_vec(), 64, 64).unwrap_err();
        assert!(e.to_string().contains("deflate stream"), "{e}");
        let e = inflate_all(b"PK\x03\x04 not gzip".to_vec(), 64, 64).unwrap_err();
        assert!(e.to_string().contains("not a gzip member"), "{e}");
        let mut trailing = good.clone();
        trailing.extend_from_slice(&[0; 12]);
        assert!(inflate_all(trailing, 64, 64).is_err());
    }
}
