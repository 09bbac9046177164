//! Byte ranges of one file, the way every format reader wants them: the end of the file held
//! after one speculative tail read (a Parquet footer, an HFile's trailer and index), ranges
//! inside it answered from memory, the rest coalesced into as few requests as the gap allows
//! and sent in one [`Storage::read`], and a short answer reported as a truncated file.

use std::ops::{Deref, Range};

use bytes::{Bytes, BytesMut};

use super::{ByteRange, Purpose, Storage};
use crate::error::{HudiError, Result};

/// One file of a storage (`S` is `Arc<dyn Storage>` or `&dyn Storage`), or a whole file in
/// memory. Cheap to clone when `S` is.
#[derive(Debug, Clone)]
pub struct RangedFile<S> {
    /// `None`: the whole file is `held` (e.g. an HFile embedded in a log block).
    storage: Option<S>,
    path: String,
    size: u64,
    /// The bytes `[held_start, size)` of the file.
    held: Bytes,
    held_start: u64,
    /// The bytes `[0, prefix.len())` of the file (a Parquet file's data read with its footer).
    prefix: Bytes,
    /// Ranges closer than this are fetched as one.
    gap: u64,
}

impl<S> RangedFile<S>
where
    S: Deref + Sync,
    S::Target: Storage,
{
    /// Reads the last `n` bytes (a bounded read when `size` is known, which saves the `head`
    /// a store without suffix ranges would need) and holds them.
    pub async fn open_tail(
        storage: S,
        path: &str,
        n: u64,
        size: Option<u64>,
        purpose: Purpose,
    ) -> Result<Self> {
        let range = match size {
            Some(size) => ByteRange::Bounded(size.saturating_sub(n)..size),
            None => ByteRange::Suffix(n),
        };
        let fetched = storage.read(path, &[range], purpose).await?;
        let size = size.or(fetched.size).ok_or_else(|| {
            HudiError::io(path, "a suffix read answered without the object's size")
        })?;
        let tail = fetched
            .parts
            .into_iter()
            .next()
            .ok_or_else(|| no_answer(path))?;
        expect_len(&tail, n.min(size), size.saturating_sub(n), path)?;
        Ok(Self::holding(Some(storage), path, size, tail))
    }

    /// A file of `size` bytes whose last bytes, `tail`, are already in memory.
    pub fn holding(storage: Option<S>, path: &str, size: u64, tail: Bytes) -> Self {
        RangedFile {
            storage,
            path: path.to_string(),
            held_start: size.saturating_sub(tail.len() as u64),
            size,
            held: tail,
            prefix: Bytes::new(),
            gap: 0,
        }
    }

    /// Also holds the file's first bytes, `prefix`.
    pub fn with_prefix(mut self, prefix: Bytes) -> Self {
        self.prefix = prefix;
        self
    }

    /// Fetches ranges less than `gap` bytes apart as one (fewer requests, a few more bytes).
    pub fn with_gap(mut self, gap: u64) -> Self {
        self.gap = gap;
        self
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The bytes held, from the offset they start at to the end of the file.
    pub fn held(&self) -> (u64, &Bytes) {
        (self.held_start, &self.held)
    }

    /// Holds the file from `start` on, fetching what is not held yet.
    pub async fn hold_from(&mut self, start: u64, purpose: Purpose) -> Result<()> {
        if start >= self.held_start {
            return Ok(());
        }
        let before = self.read_one(start..self.held_start, purpose).await?;
        let mut both = BytesMut::with_capacity(before.len() + self.held.len());
        both.extend_from_slice(&before);
        both.extend_from_slice(&self.held);
        self.held = both.freeze();
        self.held_start = start;
        Ok(())
    }

    /// Bytes `range`, from the held bytes or fetched.
    pub async fn read_one(&self, range: Range<u64>, purpose: Purpose) -> Result<Bytes> {
        let parts = self.read(&[range], purpose).await?;
        parts
            .into_iter()
            .next()
            .ok_or_else(|| no_answer(&self.path))
    }

    /// Each of `ranges`, in order: sliced from the held bytes when there, the rest coalesced
    /// and fetched in one read (its requests run concurrently).
    pub async fn read(&self, ranges: &[Range<u64>], purpose: Purpose) -> Result<Vec<Bytes>> {
        let in_prefix = |r: &Range<u64>| r.end <= self.prefix.len() as u64;
        let in_tail = |r: &Range<u64>| r.start >= self.held_start && r.end <= self.size;
        let is_held = |r: &Range<u64>| in_prefix(r) || in_tail(r);
        let merged = coalesce(ranges.iter().filter(|r| !is_held(r)).cloned(), self.gap);
        let fetched = match (&self.storage, merged.is_empty()) {
            (_, true) => Vec::new(),
            (Some(storage), false) => read_exact(&**storage, &self.path, &merged, purpose).await?,
            (None, false) => {
                return Err(HudiError::corrupt(
                    &self.path,
                    format!("bytes {:?} lie outside the file held in memory", merged[0]),
                ))
            }
        };
        ranges
            .iter()
            .map(|r| {
                let (start, bytes) = if in_prefix(r) {
                    (0, &self.prefix)
                } else if in_tail(r) {
                    (self.held_start, &self.held)
                } else {
                    let i = merged
                        .iter()
                        .position(|m| m.start <= r.start && r.end <= m.end)
                        .ok_or_else(|| {
                            HudiError::corrupt(&self.path, format!("bytes {r:?} not fetched"))
                        })?;
                    (merged[i].start, &fetched[i])
                };
                slice_at(bytes, start, r).ok_or_else(|| {
                    HudiError::corrupt(&self.path, format!("bytes {r:?} lie outside the file"))
                })
            })
            .collect()
    }
}

impl RangedFile<std::sync::Arc<dyn Storage>> {
    /// A whole file already in memory; `name` labels errors.
    pub fn in_memory(bytes: Bytes, name: &str) -> Self {
        Self::holding(None, name, bytes.len() as u64, bytes)
    }
}

/// Bytes `r` of a file from `bytes`, which start at file offset `start`. Offsets convert
/// checked: on wasm32 an offset past 4 GiB must not wrap into the bytes held.
fn slice_at(bytes: &Bytes, start: u64, r: &Range<u64>) -> Option<Bytes> {
    let from = usize::try_from(r.start.checked_sub(start)?).ok()?;
    let to = usize::try_from(r.end.checked_sub(start)?).ok()?;
    (from <= to && to <= bytes.len()).then(|| bytes.slice(from..to))
}

/// Bytes `range` of `path`, in full (see [`read_exact`]).
pub async fn read_exact_one<D: Storage + ?Sized>(
    storage: &D,
    path: &str,
    range: Range<u64>,
    purpose: Purpose,
) -> Result<Bytes> {
    let parts = read_exact(storage, path, &[range], purpose).await?;
    parts.into_iter().next().ok_or_else(|| no_answer(path))
}

fn no_answer(path: &str) -> HudiError {
    HudiError::io(path, "a read answered no bytes")
}

/// `ranges` of `path`, each in full: an answer cut short means the file is truncated.
pub async fn read_exact<D: Storage + ?Sized>(
    storage: &D,
    path: &str,
    ranges: &[Range<u64>],
    purpose: Purpose,
) -> Result<Vec<Bytes>> {
    let asked: Vec<ByteRange> = ranges.iter().cloned().map(ByteRange::Bounded).collect();
    let parts = storage.read(path, &asked, purpose).await?.parts;
    if parts.len() != ranges.len() {
        return Err(HudiError::io(
            path,
            format!("asked for {} ranges, got {}", ranges.len(), parts.len()),
        ));
    }
    for (r, b) in ranges.iter().zip(&parts) {
        expect_len(b, r.end.saturating_sub(r.start), r.start, path)?;
    }
    Ok(parts)
}

fn expect_len(bytes: &Bytes, want: u64, at: u64, path: &str) -> Result<()> {
    if bytes.len() as u64 == want {
        return Ok(());
    }
    Err(HudiError::corrupt(
        path,
        format!(
            "truncated: read {} of {want} bytes at offset {at}",
            bytes.len()
        ),
    ))
}

/// Sorted ranges, those overlapping or less than `gap` apart merged into one.
pub fn coalesce(ranges: impl Iterator<Item = Range<u64>>, gap: u64) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.collect();
    sorted.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in sorted {
        match out.last_mut() {
            Some(last) if r.start <= last.end + gap => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::executor::block_on;

    use super::*;
    use crate::storage::memory::MemoryStorage;
    use crate::storage::Instrumented;

    #[test]
    fn held_bytes_are_free_and_near_ranges_share_a_request() {
        let mem = MemoryStorage::new();
        mem.insert("f", (0u8..=255).collect::<Vec<_>>(), None);
        let io = Instrumented::new(Arc::new(mem));
        let stats = io.stats();
        let storage: Arc<dyn Storage> = Arc::new(io);
        block_on(async {
            let file = RangedFile::open_tail(storage, "f", 16, None, Purpose::Footer)
                .await
                .unwrap()
                .with_gap(8);
            assert_eq!((file.size(), file.held().0), (256, 240));
            let got = file
                .read(&[250..252, 10..12, 15..20, 100..101], Purpose::ColumnChunk)
                .await
                .unwrap();
            let firsts: Vec<u8> = got.iter().map(|b| b[0]).collect();
            assert_eq!(firsts, [250, 10, 15, 100]);
            let io = stats.snapshot();
            // The tail, then 10..20 and 100..101 together (one round trip).
            assert_eq!((io.requests, io.round_trips), (3, 2));
            assert_eq!(io.by_purpose[&Purpose::ColumnChunk].requests, 2);
            assert_eq!(io.by_purpose[&Purpose::Footer].bytes, 16);
        });
    }

    #[test]
    fn offsets_past_what_is_held_are_refused_not_wrapped() {
        let b = Bytes::from_static(b"0123456789");
        let big = 1u64 << 32;
        assert_eq!(&slice_at(&b, big, &(big + 2..big + 4)).unwrap()[..], b"23");
        assert!(slice_at(&b, big, &(big + 2..2 * big + 4)).is_none());
        assert!(slice_at(&b, big, &(2..4)).is_none());
        assert!(slice_at(&b, 0, &(u64::MAX - 1..u64::MAX)).is_none());
    }

    #[test]
    fn short_reads_name_the_file() {
        let mem = MemoryStorage::new();
        mem.insert("f", vec![0u8; 10], None);
        let err = block_on(read_exact(&mem, "f", &[0..2, 5..20], Purpose::Other)).unwrap_err();
        assert_eq!((err.code(), err.object()), ("CORRUPT", Some("f")));
        let whole = RangedFile::in_memory(Bytes::from_static(b"abc"), "m");
        let err = block_on(whole.read(&[0..1, 5..6], Purpose::Other)).unwrap_err();
        assert_eq!(err.object(), Some("m"));
    }
}
