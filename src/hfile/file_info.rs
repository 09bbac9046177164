//! The file info block: `PBUF` + a delimited `InfoProto` of byte-string pairs (Avro `schema`,
//! `hfile.LASTKEY`, `KEY_VALUE_VERSION`, …).

use std::collections::BTreeMap;

use bytes::Bytes;

use super::bytes_reader::ByteReader;
use super::proto::{delimited, for_each_field, Field};
use crate::error::{malformed, Result};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileInfo {
    entries: BTreeMap<Vec<u8>, Bytes>,
}

impl FileInfo {
    pub(crate) fn parse(payload: &[u8]) -> Result<FileInfo> {
        let mut r = ByteReader::new(payload, "file info");
        if r.take(4)? != b"PBUF" {
            return Err(malformed("file info does not start with PBUF"));
        }
        let mut entries = BTreeMap::new();
        for_each_field(delimited(&mut r)?, "file info", |n, f| {
            if let (1, Field::Bytes(pair)) = (n, f) {
                let (k, v) = parse_pair(pair)?;
                entries.insert(k, v);
            }
            Ok(())
        })?;
        Ok(FileInfo { entries })
    }

    pub fn get(&self, key: &str) -> Option<&Bytes> {
        self.entries.get(key.as_bytes())
    }

    /// A UTF-8 value; `None` when absent or not UTF-8.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// A big-endian i32 value (e.g. `hfile.AVG_KEY_LEN`).
    pub fn get_i32(&self, key: &str) -> Option<i32> {
        Some(i32::from_be_bytes(self.get(key)?.as_ref().try_into().ok()?))
    }

    /// A big-endian i64 value (e.g. `hfile.CREATE_TIME_TS`).
    pub fn get_i64(&self, key: &str) -> Option<i64> {
        Some(i64::from_be_bytes(self.get(key)?.as_ref().try_into().ok()?))
    }

    /// The Avro writer schema of the values (`schema`), as Hudi stores it.
    pub fn schema(&self) -> Option<&str> {
        self.get_str("schema")
    }

    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.entries.keys().map(|k| k.as_slice())
    }
}

/// `BytesBytesPair { bytes first = 1; bytes second = 2; }`
fn parse_pair(pair: &[u8]) -> Result<(Vec<u8>, Bytes)> {
    let (mut key, mut value) = (None, None);
    for_each_field(pair, "file info entry", |n, f| {
        match (n, f) {
            (1, Field::Bytes(b)) => key = Some(b.to_vec()),
            (2, Field::Bytes(b)) => value = Some(Bytes::copy_from_slice(b)),
            _ => {}
        }
        Ok(())
    })?;
    match (key, value) {
        (Some(k), Some(v)) => Ok((k, v)),
        (Some(k), None) => Ok((k, Bytes::new())),
        _ => Err(malformed("file info entry without a key")),
    }
}
