//! Objects held in memory: for tests, and for bytes handed in from JavaScript (a dropped
//! folder, a `.zip`). Keeps etags so conditional puts behave like an object store.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{HudiError, Result};
use crate::storage::{
    ByteRange, Capabilities, Fetched, ListedAfter, ObjectMeta, Purpose, PutMode, Storage,
};

/// Largest entry [`MemoryStorage::from_zip`] inflates.
pub const MAX_ZIP_ENTRY_BYTES: u64 = 512 * 1024 * 1024;
/// Most bytes all entries of one zip inflate to.
pub const MAX_ZIP_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;

#[derive(Debug, Default)]
pub struct MemoryStorage {
    objects: Mutex<BTreeMap<String, Stored>>,
    next_etag: Mutex<u64>,
    /// Reported as not writable (a copy of a zip or of files in memory: writes would vanish).
    read_only: bool,
    /// Reported as without suffix reads, as a store whose reads then need a `head` first.
    no_suffix_ranges: bool,
    /// Reported as listing directory by directory.
    no_list_after: bool,
    /// `list_after` answers this many objects at most, as a paged store's first page.
    page_after: Option<usize>,
}

#[derive(Debug, Clone)]
struct Stored {
    data: Bytes,
    etag: String,
    last_modified_ms: Option<i64>,
}

impl MemoryStorage {
    pub fn new() -> Self {
        Self::default()
    }

    /// The same objects, reported as not writable ([`Capabilities::writable`]); `put` still
    /// works (tests), but `Table::write` refuses.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// The same objects, reported as a store without suffix reads (JS storage, some HTTP
    /// hosts): a read of a file's end without its size costs a `head` first.
    pub fn without_suffix_ranges(mut self) -> Self {
        self.no_suffix_ranges = true;
        self
    }

    /// The same objects, reported as a store that lists directory by directory (no
    /// [`Storage::list_after`]).
    pub fn without_list_after(mut self) -> Self {
        self.no_list_after = true;
        self
    }

    /// The same objects, with `list_after` answering pages of `keys` (S3's are 1,000).
    pub fn with_pages_after(mut self, keys: usize) -> Self {
        self.page_after = Some(keys);
        self
    }

    /// Adds an object directly (no conditions, not counted).
    pub fn insert(&self, path: &str, data: impl Into<Bytes>, last_modified_ms: Option<i64>) {
        let etag = self.new_etag();
        self.lock().insert(
            path.trim_start_matches('/').to_string(),
            Stored {
                data: data.into(),
                etag,
                last_modified_ms,
            },
        );
    }

    pub fn paths(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Stored>> {
        self.objects.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn new_etag(&self) -> String {
        let mut n = self.next_etag.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        format!("\"m{}\"", *n)
    }

    fn stored(&self, path: &str) -> Result<Stored> {
        self.lock()
            .get(key(path))
            .cloned()
            .ok_or_else(|| HudiError::NotFound {
                path: path.to_string(),
            })
    }
}

/// Paths are keys without a leading `/`, however they are asked for.
fn key(path: &str) -> &str {
    path.trim_start_matches('/')
}

fn meta(path: &str, s: &Stored) -> ObjectMeta {
    ObjectMeta {
        path: path.to_string(),
        size: s.data.len() as u64,
        last_modified_ms: s.last_modified_ms,
        etag: Some(s.etag.clone()),
        is_dir: false,
    }
}

/// Shared by the in-memory and local stores: directory-style listing over a flat key set.
pub(crate) fn list_keys<'a>(
    keys: impl Iterator<Item = (&'a str, ObjectMeta)>,
    prefix: &str,
    recursive: bool,
) -> Vec<ObjectMeta> {
    let dir = prefix.trim_matches('/');
    let dir_slash = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let mut out = Vec::new();
    let mut dirs = std::collections::BTreeSet::new();
    for (key, m) in keys {
        let Some(rest) = key.strip_prefix(&dir_slash) else {
            continue;
        };
        if rest.is_empty() {
            continue;
        }
        match rest.find('/') {
            Some(i) if !recursive => {
                dirs.insert(format!("{dir_slash}{}", &rest[..i]));
            }
            _ => out.push(m),
        }
    }
    out.extend(dirs.into_iter().map(|d| ObjectMeta {
        path: d,
        size: 0,
        last_modified_ms: None,
        etag: None,
        is_dir: true,
    }));
    out
}

pub(crate) fn clamp(range: Range<u64>, len: u64) -> Range<usize> {
    let end = range.end.min(len);
    let start = range.start.min(end);
    start as usize..end as usize
}

#[async_trait]
impl Storage for MemoryStorage {
    fn location(&self) -> String {
        "memory://".into()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            writable: !self.read_only,
            suffix_ranges: !self.no_suffix_ranges,
            lists_after: !self.no_list_after,
            ..Capabilities::full()
        }
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], _: Purpose) -> Result<Fetched> {
        let data = self.stored(path)?.data;
        let len = data.len() as u64;
        Ok(Fetched {
            parts: ranges
                .iter()
                .map(|r| data.slice(clamp(r.within(len), len)))
                .collect(),
            size: Some(len),
            warnings: Vec::new(),
        })
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        Ok(meta(path, &self.stored(path)?))
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        let objects = self.lock();
        Ok(list_keys(
            objects.iter().map(|(k, s)| (k.as_str(), meta(k, s))),
            prefix,
            recursive,
        ))
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<ListedAfter>> {
        if self.no_list_after {
            return Ok(None);
        }
        let mut after = ListedAfter::new(self.list("", true).await?, start_after, true);
        if let Some(page) = self.page_after.filter(|&p| p < after.objects.len()) {
            after.objects.sort_by(|a, b| a.path.cmp(&b.path));
            after.objects.truncate(page);
            after.complete = false;
        }
        Ok(Some(after))
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        if ObjectMeta::is_folder_marker(path, &data) {
            // Folders are implicit here, as listings show them.
            return Ok(ObjectMeta::folder(path));
        }
        let etag = self.new_etag();
        let conflict = |detail: &str| HudiError::Conflict {
            path: path.into(),
            detail: detail.into(),
        };
        // The condition is checked and the object stored under one lock: exact.
        let mut objects = self.lock();
        match (&mode, objects.get(key(path))) {
            (PutMode::Create, Some(_)) => return Err(conflict("object already exists")),
            (PutMode::UpdateIfMatch(want), Some(s)) if &s.etag != want => {
                return Err(conflict("etag changed"))
            }
            (PutMode::UpdateIfMatch(_), None) => return Err(conflict("object is gone")),
            _ => {}
        }
        let stored = Stored {
            data,
            etag,
            last_modified_ms: None,
        };
        let m = meta(path, &stored);
        objects.insert(key(path).to_string(), stored);
        Ok(m)
    }

    async fn delete(&self, path: &str) -> Result<()> {
        self.lock().remove(key(path));
        Ok(())
    }

    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        let stored = self.stored(path)?;
        Ok((stored.data.clone(), meta(path, &stored)))
    }
}

impl MemoryStorage {
    /// The files of a `.zip` of a table. When every entry sits under one top folder (how
    /// tables are usually zipped), that folder becomes the root. Entries are refused
    /// (`UNSUPPORTED`) past [`MAX_ZIP_ENTRY_BYTES`] each or [`MAX_ZIP_TOTAL_BYTES`] in all,
    /// checked on their declared sizes before inflating; one that inflates to another size
    /// than it declares, or whose path leaves the archive, is `CORRUPT`.
    #[cfg(feature = "zip")]
    pub fn from_zip(bytes: &[u8], name: &str) -> Result<MemoryStorage> {
        let bad = |e: zip::result::ZipError| HudiError::corrupt(name, format!("bad zip: {e}"));
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(bad)?;
        let mut entries = Vec::new();
        let mut total = 0u64;
        for i in 0..archive.len() {
            let mut file = archive.by_index(i).map_err(bad)?;
            if file.is_dir() {
                continue;
            }
            let path = crate::storage::path::within_table(&file.name().map_err(bad)?, name)?;
            // macOS archivers add resource forks; they are not part of the table.
            if path.starts_with("__MACOSX/") || path.ends_with(".DS_Store") {
                continue;
            }
            let declared = file.size();
            total = total.saturating_add(declared);
            if declared > MAX_ZIP_ENTRY_BYTES || total > MAX_ZIP_TOTAL_BYTES {
                return Err(HudiError::unsupported_in(
                    format!(
                        "zip entry {path} of {declared} bytes (at most {} MiB each, {} MiB in all)",
                        MAX_ZIP_ENTRY_BYTES >> 20,
                        MAX_ZIP_TOTAL_BYTES >> 20
                    ),
                    name,
                ));
            }
            let modified = file.last_modified().and_then(|t| {
                let date = chrono::NaiveDate::from_ymd_opt(
                    t.year() as i32,
                    t.month() as u32,
                    t.day() as u32,
                )?;
                let time =
                    date.and_hms_opt(t.hour() as u32, t.minute() as u32, t.second() as u32)?;
                Some(time.and_utc().timestamp_millis())
            });
            // Under the limit, so it fits a usize; one byte more tells a longer entry.
            let mut data = Vec::with_capacity(declared as usize);
            std::io::Read::read_to_end(
                &mut std::io::Read::take(&mut file, declared + 1),
                &mut data,
            )
            .map_err(|e| HudiError::corrupt(name, format!("{path}: {e}")))?;
            if data.len() as u64 != declared {
                let held = if data.len() as u64 > declared {
                    "more".to_string()
                } else {
                    data.len().to_string()
                };
                return Err(HudiError::corrupt(
                    name,
                    format!("{path} declares {declared} bytes and holds {held}"),
                ));
            }
            entries.push((path, data, modified));
        }
        let top = entries
            .first()
            .and_then(|(p, _, _)| p.split_once('/').map(|(t, _)| format!("{t}/")));
        let strip = top.filter(|t| entries.iter().all(|(p, _, _)| p.starts_with(t.as_str())));
        let storage = MemoryStorage::new();
        for (path, data, modified) in entries {
            let rel = strip
                .as_deref()
                .and_then(|t| path.strip_prefix(t))
                .unwrap_or(&path);
            storage.insert(rel, data, modified);
        }
        Ok(storage.read_only())
    }
}

#[cfg(test)]
mod put_tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn conditional_puts_are_exact() {
        let s = Arc::new(MemoryStorage::new());
        let winners: usize = (0..8)
            .map(|i| {
                let s = s.clone();
                std::thread::spawn(move || {
                    futures::executor::block_on(s.put(
                        "/t/x.commit",
                        Bytes::from(vec![i]),
                        PutMode::Create,
                    ))
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| match h.join().unwrap() {
                Ok(_) => 1,
                Err(e) => {
                    assert_eq!(e.code(), "CONFLICT");
                    0
                }
            })
            .sum();
        assert_eq!(winners, 1);
        futures::executor::block_on(async {
            // One object, however the path is spelled.
            assert_eq!(s.paths(), ["t/x.commit"]);
            let e = s.put("t/x.commit", Bytes::new(), PutMode::Create).await;
            assert_eq!(e.unwrap_err().code(), "CONFLICT");
            let etag = s.head("/t/x.commit").await.unwrap().etag.unwrap();
            let next = s.put(
                "t/x.commit",
                Bytes::from_static(b"b"),
                PutMode::UpdateIfMatch(etag.clone()),
            );
            let next = next.await.unwrap().etag.unwrap();
            assert_ne!(next, etag);
            let stale = s.put(
                "t/x.commit",
                Bytes::from_static(b"c"),
                PutMode::UpdateIfMatch(etag),
            );
            assert_eq!(stale.await.unwrap_err().code(), "CONFLICT");
            let gone = s.put("t/y", Bytes::new(), PutMode::UpdateIfMatch(next));
            assert_eq!(gone.await.unwrap_err().code(), "CONFLICT");
            s.delete("/t/x.commit").await.unwrap();
            assert!(s.paths().is_empty());
        });
    }
}

#[cfg(all(test, feature = "zip"))]
mod tests {
    use std::io::Write;

    use super::*;

    /// A zip of `t/f` (1000 bytes, deflated), with every little-endian `from` (the sizes
    /// fields, `width` bytes wide) replaced by `to`.
    fn zip_declaring(large: bool, width: usize, from: u64, to: u64) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(large);
        w.start_file("t/f", options).unwrap();
        w.write_all(&[b'a'; 1000]).unwrap();
        let mut bytes = w.finish().unwrap().into_inner();
        let (from, to) = (&from.to_le_bytes()[..width], &to.to_le_bytes()[..width]);
        let mut i = 0;
        while i + width <= bytes.len() {
            if &bytes[i..i + width] == from {
                bytes[i..i + width].copy_from_slice(to);
            }
            i += 1;
        }
        bytes
    }

    #[test]
    fn zips_declaring_huge_or_wrong_sizes_are_refused_before_inflating() {
        let ok = MemoryStorage::from_zip(&zip_declaring(false, 4, 1000, 1000), "t.zip").unwrap();
        assert_eq!(ok.paths(), ["f"]);
        for (large, width, to) in [(false, 4, 0xFFFF_FFFE), (true, 8, 1 << 62)] {
            let e = MemoryStorage::from_zip(&zip_declaring(large, width, 1000, to), "t.zip")
                .unwrap_err();
            assert_eq!(
                (e.code(), e.object()),
                ("UNSUPPORTED", Some("t.zip")),
                "{e}"
            );
            assert!(e.to_string().contains("512 MiB"), "{e}");
        }
        let e = MemoryStorage::from_zip(&zip_declaring(false, 4, 1000, 10), "t.zip").unwrap_err();
        assert_eq!((e.code(), e.object()), ("CORRUPT", Some("t.zip")), "{e}");
    }
}
