//! Decimal bounds as Java writes them: the shortest two's complement, sign-extended to a
//! `fixed` size, rescaled to the `DecimalWrapper`'s scale.

use crate::error::{HudiError, Result};

/// Java `BigInteger.toByteArray`: the shortest big-endian two's complement.
pub(super) fn min_twos_complement(v: i128) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut start = 0;
    while start < 15 {
        let (cur, next) = (b[start], b[start + 1]);
        if (cur == 0 && next & 0x80 == 0) || (cur == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    b[start..].to_vec()
}

/// Sign-extends big-endian two's complement bytes to `size` (a fixed decimal).
pub(super) fn sign_extend(b: &[u8], size: usize) -> Option<Vec<u8>> {
    if b.len() > size {
        return None;
    }
    let fill = if b.first().is_some_and(|x| x & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut out = vec![fill; size - b.len()];
    out.extend_from_slice(b);
    Some(out)
}

/// `unscaled × 10^(to − from)`; fails where digits would be lost or 128 bits overflow.
pub(super) fn rescale(unscaled: i128, from: i32, to: i32) -> Result<i128> {
    let overflow = || HudiError::invalid("decimal bound does not fit the DecimalWrapper scale");
    if to >= from {
        let f = 10i128
            .checked_pow((to - from) as u32)
            .ok_or_else(overflow)?;
        unscaled.checked_mul(f).ok_or_else(overflow)
    } else {
        let f = 10i128
            .checked_pow((from - to) as u32)
            .ok_or_else(overflow)?;
        if unscaled % f != 0 {
            return Err(overflow());
        }
        Ok(unscaled / f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twos_complement_is_minimal() {
        assert_eq!(min_twos_complement(0), vec![0]);
        assert_eq!(min_twos_complement(127), vec![0x7f]);
        assert_eq!(min_twos_complement(128), vec![0, 0x80]);
        assert_eq!(min_twos_complement(-1), vec![0xff]);
        assert_eq!(min_twos_complement(-129), vec![0xff, 0x7f]);
        assert_eq!(rescale(125, 2, 15).unwrap(), 125 * 10i128.pow(13));
        assert!(rescale(125, 2, 1).is_err());
    }
}
