//! Avro object container files (Hudi's instant files from table version 8 on), read with
//! bounds: a block decompresses to at most [`MAX_BLOCK_BYTES`], the schema passes
//! [`guard::Checked`] and every datum is walked before apache-avro decodes it.

use std::io::Read;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value;

use super::binary::{read_block_count, read_bytes, read_fixed, read_len, read_string};
use super::guard::{self, Checked};
use super::json::JsonPlan;
use crate::error::{malformed, HudiError, Result};

pub const MAGIC: &[u8] = b"Obj\x01";

/// Largest decompressed block (instant files are kilobytes to a few megabytes).
pub const MAX_BLOCK_BYTES: usize = guard::MAX_VALUE_BYTES;

/// A container file's blocks, after its header.
struct Blocks<'a> {
    codec: Codec,
    sync: &'a [u8],
    rest: &'a [u8],
}

impl<'a> Blocks<'a> {
    /// The writer schema's text and the blocks.
    fn open(bytes: &'a [u8]) -> Result<(&'a str, Self)> {
        let mut rest = bytes
            .strip_prefix(MAGIC)
            .ok_or_else(|| malformed("not an Avro container file"))?;
        let (schema, codec) = read_header(&mut rest)?;
        let sync = read_fixed(&mut rest, 16)?;
        Ok((schema, Blocks { codec, sync, rest }))
    }

    /// The next block's record count and decompressed bytes.
    fn next_block(&mut self) -> Result<Option<(usize, std::borrow::Cow<'a, [u8]>)>> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        let count = read_len(&mut self.rest)?;
        let size = read_len(&mut self.rest)?;
        let block = decompress(self.codec, read_fixed(&mut self.rest, size)?)?;
        if read_fixed(&mut self.rest, 16)? != self.sync {
            return Err(malformed(
                "Avro container block does not end with the sync marker",
            ));
        }
        if count > block.len() {
            return Err(malformed(format!(
                "Avro container block of {count} records in {} bytes",
                block.len()
            )));
        }
        Ok(Some((count, block)))
    }
}

/// The records of a container file, decoded with its writer schema.
pub fn read_values(bytes: &[u8]) -> Result<Vec<Value>> {
    let (text, mut blocks) = Blocks::open(bytes)?;
    let schema = super::parse_schema(text)
        .map_err(|e| HudiError::corrupt_by("", "bad Avro container schema", e))?;
    let checked = Checked::new(&schema)?;
    let reader = GenericDatumReader::builder(&schema)
        .build()
        .map_err(|e| HudiError::corrupt_by("", "bad Avro container schema", e))?;
    let mut out = Vec::new();
    while let Some((count, block)) = blocks.next_block()? {
        let mut data = &block[..];
        for _ in 0..count {
            checked.datum(data)?;
            let v = reader
                .read_value(&mut data)
                .map_err(|e| HudiError::corrupt_by("", "bad Avro record", e))?;
            out.push(v);
        }
    }
    Ok(out)
}

/// The records of a container file as JSON ([`super::value_to_json`]'s, with maps in file
/// order), decoded straight from the bytes.
pub fn read_json(bytes: &[u8]) -> Result<Vec<serde_json::Value>> {
    let (text, mut blocks) = Blocks::open(bytes)?;
    let Some(plan) = JsonPlan::of_text(text)? else {
        return Ok(read_values(bytes)?
            .into_iter()
            .map(super::value_to_json)
            .collect());
    };
    let mut out = Vec::new();
    while let Some((count, block)) = blocks.next_block()? {
        let mut data = &block[..];
        for _ in 0..count {
            out.push(plan.decode(&mut data)?);
        }
    }
    Ok(out)
}

#[derive(Clone, Copy)]
enum Codec {
    Null,
    Deflate,
}

fn read_header<'a>(buf: &mut &'a [u8]) -> Result<(&'a str, Codec)> {
    let (mut schema, mut codec) = (None, Codec::Null);
    loop {
        let n = read_block_count(buf)?;
        if n == 0 {
            break;
        }
        for _ in 0..n {
            let key = read_string(buf)?;
            let value = read_bytes(buf)?;
            match key {
                "avro.schema" => {
                    schema = Some(
                        std::str::from_utf8(value)
                            .map_err(|_| malformed("Avro container schema is not UTF-8"))?,
                    );
                }
                "avro.codec" => {
                    codec = match value {
                        b"null" => Codec::Null,
                        b"deflate" => Codec::Deflate,
                        other => {
                            return Err(HudiError::unsupported(format!(
                                "Avro container codec {:?}",
                                String::from_utf8_lossy(other)
                            )))
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let schema = schema.ok_or_else(|| malformed("Avro container without a schema"))?;
    Ok((schema, codec))
}

fn decompress(codec: Codec, data: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>> {
    match codec {
        Codec::Null => Ok(data.into()),
        Codec::Deflate => {
            // Measured first, so a bomb costs time but no memory, and the block is then held
            // once at its exact size (growing a buffer would double it).
            let inflate = || flate2::read::DeflateDecoder::new(data);
            let size = std::io::copy(
                &mut inflate().take(MAX_BLOCK_BYTES as u64 + 1),
                &mut std::io::sink(),
            )
            .map_err(|e| HudiError::corrupt_by("", "deflate block", e))?;
            if size > MAX_BLOCK_BYTES as u64 {
                return Err(malformed(format!(
                    "Avro container block inflates past {MAX_BLOCK_BYTES} bytes"
                )));
            }
            let mut out = Vec::with_capacity(size as usize);
            inflate()
                .read_to_end(&mut out)
                .map_err(|e| HudiError::corrupt_by("", "deflate block", e))?;
            Ok(out.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::{Codec as AvroCodec, Schema, Writer};

    const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[{"name":"a","type":"string"},{"name":"n","type":{"type":"array","items":"long"}}]}"#;

    fn container(codec: AvroCodec, rows: usize) -> Vec<u8> {
        let schema = Schema::parse_str(SCHEMA).unwrap();
        let mut w = Writer::with_codec(&schema, Vec::new(), codec).unwrap();
        for i in 0..rows {
            let rec = Value::Record(vec![
                ("a".into(), Value::String(format!("row {i}"))),
                ("n".into(), Value::Array(vec![Value::Long(i as i64); 3])),
            ]);
            w.append_value(rec).unwrap();
        }
        w.into_inner().unwrap()
    }

    #[test]
    fn reads_what_apache_avro_writes() {
        for codec in [AvroCodec::Null, AvroCodec::Deflate(Default::default())] {
            let values = read_values(&container(codec, 3)).unwrap();
            assert_eq!(values.len(), 3);
            let Value::Record(f) = &values[2] else {
                panic!()
            };
            assert_eq!(f[0].1, Value::String("row 2".into()));
        }
    }

    #[test]
    fn refuses_bombs_and_lies() {
        // A deflate block that inflates past the bound.
        let zeros = vec![0u8; MAX_BLOCK_BYTES + 10];
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        std::io::Write::write_all(&mut enc, &zeros).unwrap();
        let bomb = enc.finish().unwrap();
        let good = container(AvroCodec::Deflate(Default::default()), 1);
        let mut head = good[..good.len()].to_vec();
        // Rebuild: header (up to and including the sync) + one block of the bomb.
        let sync_end = find_sync_end(&good);
        head.truncate(sync_end);
        let sync = good[sync_end - 16..sync_end].to_vec();
        super::super::binary::write_long(&mut head, 1);
        super::super::binary::write_long(&mut head, bomb.len() as i64);
        head.extend_from_slice(&bomb);
        head.extend_from_slice(&sync);
        let e = read_values(&head).unwrap_err();
        assert_eq!(e.code(), "CORRUPT", "{e}");

        // A record count no block could hold.
        let mut lie = good[..sync_end].to_vec();
        super::super::binary::write_long(&mut lie, 1 << 40);
        super::super::binary::write_long(&mut lie, 0);
        lie.extend_from_slice(&sync);
        assert_eq!(read_values(&lie).unwrap_err().code(), "CORRUPT");
    }

    /// End of the header: the first 16-byte run that recurs at the end of the file.
    fn find_sync_end(file: &[u8]) -> usize {
        let sync = &file[file.len() - 16..];
        file.windows(16).position(|w| w == sync).unwrap() + 16
    }
}
