//! Just enough protobuf to read the HFile trailer (`TrailerProto`) and file info
//! (`InfoProto`): walk the fields of a message, skipping the ones we do not know.

use super::bytes_reader::ByteReader;
use crate::error::{malformed, Result};

pub(crate) enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// Fixed 32- and 64-bit fields; nothing we read uses them, but they must be skippable.
    Fixed,
}

/// Calls `f(field_number, value)` for every field of the message `buf`, in order.
pub(crate) fn for_each_field<'a>(
    buf: &'a [u8],
    what: &'static str,
    mut f: impl FnMut(u64, Field<'a>) -> Result<()>,
) -> Result<()> {
    let mut r = ByteReader::new(buf, what);
    while !r.is_empty() {
        let tag = r.varint()?;
        let value = match tag & 7 {
            0 => Field::Varint(r.varint()?),
            1 => {
                r.take(8)?;
                Field::Fixed
            }
            2 => {
                let len = usize::try_from(r.varint()?)
                    .map_err(|_| malformed(format!("{what}: field length overflows")))?;
                Field::Bytes(r.take(len)?)
            }
            5 => {
                r.take(4)?;
                Field::Fixed
            }
            w => {
                return Err(malformed(format!(
                    "{what}: unsupported protobuf wire type {w}"
                )))
            }
        };
        f(tag >> 3, value)?;
    }
    Ok(())
}

/// A `writeDelimitedTo` message: varint length, then the message bytes.
pub(crate) fn delimited<'a>(r: &mut ByteReader<'a>) -> Result<&'a [u8]> {
    let len = usize::try_from(r.varint()?).map_err(|_| malformed("message length overflows"))?;
    r.take(len)
}
