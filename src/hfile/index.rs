//! Block indexes: the root index (data and meta) in the load-on-open section, the
//! leaf/intermediate index blocks of multi-level data indexes, and choosing which blocks can
//! hold the keys a query asks for.

use bytes::Bytes;

use super::bytes_reader::ByteReader;
use crate::error::{malformed, Result};

/// One index entry: where a child block is and the smallest row it can hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IndexEntry {
    pub offset: u64,
    /// On-disk size of the child block, header included.
    pub size: u64,
    /// Row of the entry's key: the child's first row (Hudi writer) or an HBase "fake"
    /// separator that sorts after the previous block's last row and not after this first row.
    pub first_row: Bytes,
}

/// How root-index keys are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RootKeys {
    /// A KeyValue key (`u16 rowLen | row | …`); only the row is kept.
    KeyValue,
    /// Raw bytes (meta block names).
    Raw,
}

/// Root index payload: `count` × (`i64 offset | i32 size | vlong keyLen | key`). HBase appends
/// mid-key data after the entries of a multi-level root; it is ignored.
pub(crate) fn parse_root(payload: &Bytes, count: usize, keys: RootKeys) -> Result<Vec<IndexEntry>> {
    let mut r = ByteReader::new(payload, "root index");
    // Each entry needs at least 13 bytes; refuse counts the payload cannot hold.
    if count > payload.len() / 13 {
        return Err(malformed(format!(
            "root index claims {count} entries in {} bytes",
            payload.len()
        )));
    }
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let (offset, size) = (r.i64()?, r.i32()?);
        let key_len = usize::try_from(r.hadoop_vlong()?)
            .map_err(|_| malformed("root index: negative key length"))?;
        let key = payload.slice(r.take_range(key_len)?);
        let first_row = match keys {
            RootKeys::KeyValue => row_of_key(&key)?,
            RootKeys::Raw => key,
        };
        out.push(entry(offset, size, first_row)?);
    }
    Ok(out)
}

/// Leaf/intermediate index payload: `i32 n | i32 secondary[n+1] | entries`, each entry
/// `i64 offset | i32 size | key` with the key running to the next secondary offset.
pub(crate) fn parse_non_root(payload: &Bytes) -> Result<Vec<IndexEntry>> {
    let mut r = ByteReader::new(payload, "index block");
    let n = r.len_i32("entry count")?;
    if n > payload.len() / 16 {
        return Err(malformed(format!(
            "index block claims {n} entries in {} bytes",
            payload.len()
        )));
    }
    let secondary = (0..=n)
        .map(|_| r.len_i32("secondary offset"))
        .collect::<Result<Vec<_>>>()?;
    let base = r.pos();
    let mut out = Vec::with_capacity(n);
    for w in secondary.windows(2) {
        let start = base.saturating_add(w[0]);
        let end = base.saturating_add(w[1]);
        let bytes = payload
            .get(start..end)
            .filter(|b| b.len() >= 12)
            .ok_or_else(|| malformed(format!("index block: bad entry bounds {start}..{end}")))?;
        let mut e = ByteReader::new(bytes, "index entry");
        let (offset, size) = (e.i64()?, e.i32()?);
        let first_row = row_of_key(&payload.slice(start + 12..end))?;
        out.push(entry(offset, size, first_row)?);
    }
    Ok(out)
}

fn entry(offset: i64, size: i32, first_row: Bytes) -> Result<IndexEntry> {
    match (u64::try_from(offset), u64::try_from(size)) {
        (Ok(offset), Ok(size)) => Ok(IndexEntry {
            offset,
            size,
            first_row,
        }),
        _ => Err(malformed(format!(
            "index entry with offset {offset}, size {size}"
        ))),
    }
}

/// The row of a KeyValue key: `u16 rowLen | row | …` (Hudi's writer stops after the row).
pub(crate) fn row_of_key(key: &Bytes) -> Result<Bytes> {
    Ok(key.slice(row_range(key)?))
}

/// Where the row lies in a cell key (`u16 rowLen | row | …`).
pub(crate) fn row_range(key: &[u8]) -> Result<std::ops::Range<usize>> {
    let mut r = ByteReader::new(key, "key");
    let len = r.u16()? as usize;
    r.take_range(len)
}

/// A half-open row range `[start, end)`; `end: None` is unbounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyRange {
    pub start: Vec<u8>,
    pub end: Option<Vec<u8>>,
}

impl KeyRange {
    pub fn point(key: &[u8]) -> KeyRange {
        let mut end = key.to_vec();
        end.push(0);
        KeyRange {
            start: key.to_vec(),
            end: Some(end),
        }
    }

    pub fn prefix(prefix: &[u8]) -> KeyRange {
        KeyRange {
            start: prefix.to_vec(),
            end: prefix_successor(prefix),
        }
    }

    pub fn all() -> KeyRange {
        KeyRange {
            start: Vec::new(),
            end: None,
        }
    }
}

/// The smallest byte string greater than every string starting with `prefix`, if any.
fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut s = prefix.to_vec();
    while let Some(last) = s.pop() {
        if last < 0xff {
            s.push(last + 1);
            return Some(s);
        }
    }
    None
}

/// Positions (ascending) of the entries whose blocks may hold a row in any of `ranges`.
/// Entry `i` covers rows from its `first_row` up to the next entry's `first_row`.
pub(crate) fn select(entries: &[IndexEntry], ranges: &[KeyRange]) -> Vec<usize> {
    let mut picked = Vec::new();
    for range in ranges {
        let first = entries
            .partition_point(|e| e.first_row[..] <= range.start[..])
            .saturating_sub(1);
        let past_last = match &range.end {
            Some(end) => entries.partition_point(|e| e.first_row[..] < end[..]),
            None => entries.len(),
        };
        picked.extend(first..past_last);
    }
    picked.sort_unstable();
    picked.dedup();
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(rows: &[&str]) -> Vec<IndexEntry> {
        rows.iter()
            .enumerate()
            .map(|(i, r)| IndexEntry {
                offset: i as u64 * 100,
                size: 100,
                first_row: Bytes::copy_from_slice(r.as_bytes()),
            })
            .collect()
    }

    #[test]
    fn selects_blocks_by_range() {
        let e = entries(&["b", "d", "f"]);
        let pick = |r: KeyRange| select(&e, &[r]);
        assert_eq!(pick(KeyRange::point(b"a")), Vec::<usize>::new());
        assert_eq!(pick(KeyRange::point(b"b")), vec![0]);
        assert_eq!(pick(KeyRange::point(b"c")), vec![0]);
        assert_eq!(pick(KeyRange::point(b"d")), vec![1]);
        assert_eq!(pick(KeyRange::point(b"z")), vec![2]);
        assert_eq!(pick(KeyRange::prefix(b"")), vec![0, 1, 2]);
        assert_eq!(pick(KeyRange::all()), vec![0, 1, 2]);
        assert_eq!(pick(KeyRange::prefix(b"c")), vec![0]);
        assert_eq!(pick(KeyRange::prefix(b"d")), vec![1]);
        assert_eq!(
            select(&e, &[KeyRange::point(b"c"), KeyRange::point(b"e")]),
            vec![0, 1]
        );
    }

    #[test]
    fn prefix_successor_carries() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(&[0x61, 0xff]), Some(vec![0x62]));
        assert_eq!(prefix_successor(&[0xff, 0xff]), None);
        assert_eq!(prefix_successor(b""), None);
    }
}
