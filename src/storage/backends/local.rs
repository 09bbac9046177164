//! Files on the local file system, rooted at a table's base path.

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{HudiError, Result};
use crate::storage::memory::{clamp, list_keys};
use crate::storage::{
    md5_hex, ByteRange, Capabilities, Fetched, ListedAfter, ObjectMeta, Purpose, PutMode, Storage,
};

#[derive(Debug, Clone)]
pub struct LocalStorage {
    root: PathBuf,
}

impl LocalStorage {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LocalStorage { root: root.into() }
    }

    /// `put`, blocking (run on tokio's blocking pool when there is a runtime).
    fn put_now(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        let full = self.full(path)?;
        if ObjectMeta::is_folder_marker(path, &data) {
            fs::create_dir_all(&full).map_err(|e| map_err(path, e))?;
            return Ok(ObjectMeta::folder(path));
        }
        if let Some(parent) = full.parent() {
            fs::create_dir_all(parent).map_err(|e| map_err(path, e))?;
        }
        let conflict = |detail: &str| HudiError::Conflict {
            path: path.into(),
            detail: detail.into(),
        };
        match &mode {
            PutMode::Create => {
                if !create_atomically(&full, &data).map_err(|e| map_err(path, e))? {
                    return Err(conflict("object already exists"));
                }
            }
            PutMode::UpdateIfMatch(want) => {
                if !update_if_match(&full, want, &data).map_err(|e| map_err(path, e))? {
                    return Err(conflict("etag changed or object gone"));
                }
            }
            PutMode::Overwrite => write_atomically(&full, &data).map_err(|e| map_err(path, e))?,
        }
        if !matches!(mode, PutMode::Create) {
            drop_checksum_sidecar(&full);
        }
        // The ETag from the bytes in hand: reading the file back would cost a read per put.
        let md = fs::metadata(&full).map_err(|e| map_err(path, e))?;
        let mut meta = meta_of(path, &md);
        meta.etag = Some(etag_of(&full, &md, Some(&data)).map_err(|e| map_err(path, e))?);
        Ok(meta)
    }

    /// `head`, without a future: conditional updates call it under a lock.
    fn head_now(&self, path: &str) -> Result<ObjectMeta> {
        let full = self.full(path)?;
        let md = fs::metadata(&full).map_err(|e| map_err(path, e))?;
        if md.is_dir() {
            return Err(HudiError::NotFound {
                path: path.to_string(),
            });
        }
        let mut meta = meta_of(path, &md);
        meta.etag = Some(etag_of(&full, &md, None).map_err(|e| map_err(path, e))?);
        Ok(meta)
    }

    /// The file of `path`, refused (`CORRUPT`) when the path would leave the root: a second
    /// line behind the checks on paths from table content.
    fn full(&self, path: &str) -> Result<PathBuf> {
        let rel = crate::storage::path::within_table(
            path.trim_start_matches('/'),
            &self.root.to_string_lossy(),
        )?;
        Ok(self.root.join(rel))
    }
}

fn map_err(path: &str, e: std::io::Error) -> HudiError {
    match e.kind() {
        ErrorKind::NotFound => HudiError::NotFound {
            path: path.to_string(),
        },
        ErrorKind::PermissionDenied => HudiError::AccessDenied {
            path: path.to_string(),
            detail: e.to_string(),
        },
        _ => HudiError::io(path, e),
    }
}

fn meta_of(path: &str, md: &fs::Metadata) -> ObjectMeta {
    let modified = md
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok());
    ObjectMeta {
        path: path.to_string(),
        size: md.len(),
        last_modified_ms: modified.map(|d| d.as_millis() as i64),
        // Listings give none: an ETag costs a read (see `etag_of`); `head` and `put` give it.
        etag: None,
        is_dir: md.is_dir(),
    }
}

/// Files up to this size get a content ETag (the conditional-update targets: locks,
/// properties, instants); larger ones a stamp.
const HASHED_ETAG_MAX: u64 = 1 << 20;

/// The ETag of a file: the MD5 of its bytes (as S3 gives for a single-part upload), so
/// `UpdateIfMatch` compares content, not a timestamp that a coarse file-system clock can
/// repeat. Past [`HASHED_ETAG_MAX`] bytes it is `W/"<mtime ns>-<len>-<inode>"`: every put
/// makes a new inode by renaming, so only an inode reused within one clock tick at the same
/// length could repeat it.
/// `held`: the file's bytes when the caller has them.
fn etag_of(full: &Path, md: &fs::Metadata, held: Option<&[u8]>) -> std::io::Result<String> {
    if md.len() <= HASHED_ETAG_MAX {
        return Ok(match held {
            Some(bytes) => format!("\"{}\"", md5_hex(bytes)),
            None => format!("\"{}\"", md5_hex(&fs::read(full)?)),
        });
    }
    use std::os::unix::fs::MetadataExt;
    let nanos = md
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Ok(format!("W/\"{nanos:x}-{:x}-{:x}\"", md.len(), md.ino()))
}

/// Replaces `full` with `data` only while its content ETag is `want`, atomically against
/// other updaters in any process on this host: the current file is locked (`flock`), its
/// name checked to still be that file (a rename by the updater before us makes a new
/// one), its bytes compared, and the new bytes renamed over it before the lock is
/// released. `Ok(false)`: the object is gone or changed.
fn update_if_match(full: &Path, want: &str, data: &[u8]) -> std::io::Result<bool> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    loop {
        let mut file = match fs::File::open(full) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        file.lock()?;
        let held = file.metadata()?;
        match fs::metadata(full) {
            Ok(now) if now.ino() == held.ino() && now.dev() == held.dev() => {}
            Ok(_) => continue, // replaced while we waited: lock the new one
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        }
        let mut current = Vec::new();
        file.read_to_end(&mut current)?;
        if etag_of(full, &held, Some(&current))? != want {
            return Ok(false);
        }
        write_atomically(full, data)?;
        return Ok(true); // the lock goes with `file`
    }
}

const TEMP_PREFIX: &str = ".hudi-edge.tmp.";

/// A temporary name beside the target, unique per put (process, counter, clock), so two puts
/// into one directory never share one; a dot name no Hudi reader takes for a table file.
fn temp_path(full: &Path) -> PathBuf {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = format!("{TEMP_PREFIX}{}.{n}.{nanos}", std::process::id());
    full.with_file_name(name)
}

/// Writes `data` to a new temporary file beside `full` (flushed to disk), returning its path.
fn write_temp(full: &Path, data: &[u8]) -> std::io::Result<PathBuf> {
    let tmp = temp_path(full);
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(data)?;
            f.sync_all()
        });
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Readers never see a half-written file: write a temporary sibling, then rename over.
fn write_atomically(full: &Path, data: &[u8]) -> std::io::Result<()> {
    let tmp = write_temp(full, data)?;
    fs::rename(&tmp, full).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// Creates `full` holding `data` only if absent, atomically against other creators (also in
/// other processes): the complete temporary file is hard-linked to the name, which fails
/// when the name exists. `Ok(false)`: it existed.
fn create_atomically(full: &Path, data: &[u8]) -> std::io::Result<bool> {
    let tmp = write_temp(full, data)?;
    let linked = fs::hard_link(&tmp, full);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
        // File systems without hard links: exclusive create still decides the race, though
        // a reader may then see the file before its bytes.
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::Unsupported | ErrorKind::PermissionDenied
            ) =>
        {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(full)
            {
                Ok(mut f) => f.write_all(data).and_then(|()| f.sync_all()).map(|()| true),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

fn walk(
    root: &Path,
    dir: &Path,
    recursive: bool,
    out: &mut Vec<(String, ObjectMeta)>,
) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        // A put in progress is not an object yet (a store shows nothing before it completes).
        if entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
            continue;
        }
        // Gone since the directory was read (a finished put's temporary, a deleted file or
        // directory): not there, rather than the whole listing failing as not found.
        let md = match entry.metadata() {
            Ok(md) => md,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(&entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        if md.is_dir() {
            if recursive {
                match walk(root, &entry.path(), true, out) {
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    other => other?,
                }
            } else {
                out.push((rel.clone(), meta_of(&rel, &md)));
            }
        } else {
            out.push((rel.clone(), meta_of(&rel, &md)));
        }
    }
    Ok(())
}

#[async_trait]
impl Storage for LocalStorage {
    fn location(&self) -> String {
        format!("file://{}", self.root.display())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            lists_after: true,
            ..Capabilities::full()
        }
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], _: Purpose) -> Result<Fetched> {
        let f = fs::File::open(self.full(path)?).map_err(|e| map_err(path, e))?;
        let len = f.metadata().map_err(|e| map_err(path, e))?.len();
        let parts = ranges
            .iter()
            .map(|r| {
                let r = clamp(r.within(len), len);
                let mut buf = vec![0u8; r.len()];
                f.read_exact_at(&mut buf, r.start as u64)
                    .map_err(|e| map_err(path, e))?;
                Ok(Bytes::from(buf))
            })
            .collect::<Result<_>>()?;
        Ok(Fetched {
            parts,
            size: Some(len),
            warnings: Vec::new(),
        })
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.head_now(path)
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        let dir = self.full(prefix.trim_matches('/'))?;
        let mut found = Vec::new();
        match walk(&self.root, &dir, recursive, &mut found) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(map_err(prefix, e)),
        }
        let (dirs, files): (Vec<_>, Vec<_>) = found.into_iter().partition(|(_, m)| m.is_dir);
        let mut out = list_keys(
            files.iter().map(|(k, m)| (k.as_str(), m.clone())),
            prefix,
            recursive,
        );
        out.extend(dirs.into_iter().map(|(_, m)| m));
        Ok(out)
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<ListedAfter>> {
        let mut top = Vec::new();
        walk(&self.root, &self.root, false, &mut top).map_err(|e| map_err("", e))?;
        let mut found = Vec::new();
        for (rel, m) in top {
            if !m.is_dir {
                found.push((rel, m));
                continue;
            }
            // Every key under `dir/` sorts before `start_after`: not walked.
            let dir = format!("{rel}/");
            if dir.as_str() < start_after && !start_after.starts_with(&dir) {
                continue;
            }
            match walk(&self.root, &self.root.join(&rel), true, &mut found) {
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                other => other.map_err(|e| map_err(&rel, e))?,
            }
        }
        let files = found.into_iter().map(|(_, m)| m).collect();
        Ok(Some(ListedAfter::new(files, start_after, true)))
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        // Each put ends in an fsync: on the blocking pool concurrent puts wait for their
        // syncs together instead of one after another on the runtime's thread.
        if tokio::runtime::Handle::try_current().is_ok() {
            let (this, owned) = (self.clone(), path.to_string());
            return tokio::task::spawn_blocking(move || this.put_now(&owned, data, mode))
                .await
                .map_err(|e| HudiError::io(path, e))?;
        }
        self.put_now(path, data, mode)
    }

    async fn delete(&self, path: &str) -> Result<()> {
        let full = self.full(path)?;
        drop_checksum_sidecar(&full);
        match fs::remove_file(full) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(map_err(path, e)),
        }
    }

    async fn delete_empty_dir(&self, dir: &str) -> Result<()> {
        let full = self.full(dir)?;
        if full == self.root || !holds_only_directories(&full) {
            return Ok(());
        }
        match fs::remove_dir_all(&full) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(map_err(dir, e)),
        }
    }

    /// The ETag from the very bytes read (a rename between a `head` and a read would
    /// otherwise pair one version's ETag with another's bytes).
    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        let full = self.full(path)?;
        let bytes = fs::read(&full).map_err(|e| map_err(path, e))?;
        let md = fs::metadata(&full).map_err(|e| map_err(path, e))?;
        let mut meta = meta_of(path, &md);
        meta.size = bytes.len() as u64;
        meta.etag = Some(format!("\"{}\"", md5_hex(&bytes)));
        Ok((Bytes::from(bytes), meta))
    }
}

/// Whether `dir` is a directory with no file anywhere beneath it.
fn holds_only_directories(dir: &Path) -> bool {
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries.into_iter().all(|e| {
        e.ok()
            .and_then(|e| e.file_type().ok().map(|t| (e, t)))
            .is_some_and(|(e, t)| t.is_dir() && holds_only_directories(&e.path()))
    })
}

/// Removes Hadoop's checksum file beside `full` (`.<name>.crc`, which Spark and Java writers
/// leave on local files): it describes the bytes just replaced or deleted, and Hadoop's
/// local file system refuses a file whose checksum file disagrees. Without one it reads the
/// file as it is.
fn drop_checksum_sidecar(full: &Path) {
    let (Some(dir), Some(name)) = (full.parent(), full.file_name()) else {
        return;
    };
    let sidecar = dir.join(format!(".{}.crc", name.to_string_lossy()));
    let _ = fs::remove_file(sidecar);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::StorageExt;

    /// Hadoop's `.crc` beside a file goes when the file is replaced or deleted (Spark on
    /// local files would refuse the new bytes), and stays when another file is created.
    #[test]
    fn replaced_files_lose_their_hadoop_checksum() {
        let dir = std::env::temp_dir().join(format!("hudi-edge-crc-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        for name in ["p", "d", "new"] {
            fs::write(dir.join(format!(".{name}.crc")), b"crc").unwrap();
        }
        fs::write(dir.join("p"), b"old").unwrap();
        fs::write(dir.join("d"), b"old").unwrap();
        let s = LocalStorage::new(&dir);
        futures::executor::block_on(async {
            s.put("p", Bytes::from_static(b"new"), PutMode::Overwrite)
                .await
                .unwrap();
            s.delete("d").await.unwrap();
            s.put("other", Bytes::from_static(b"x"), PutMode::Create)
                .await
                .unwrap();
        });
        assert!(!dir.join(".p.crc").exists() && !dir.join(".d.crc").exists());
        assert!(dir.join(".new.crc").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn paths_never_leave_the_root() {
        let dir = std::env::temp_dir().join(format!("hudi-edge-local-{}", std::process::id()));
        fs::create_dir_all(dir.join("t/a")).unwrap();
        fs::write(dir.join("secret"), b"s").unwrap();
        fs::write(dir.join("t/a/f"), b"f").unwrap();
        let s = LocalStorage::new(dir.join("t"));
        futures::executor::block_on(async {
            assert_eq!(&s.get("a/./f", Purpose::Other).await.unwrap()[..], b"f");
            for bad in ["../secret", "a/../../secret", "a\\..\\..\\secret"] {
                let e = s.get(bad, Purpose::Other).await.unwrap_err();
                assert_eq!(e.code(), "CORRUPT", "{bad}: {e}");
            }
            assert_eq!(s.list("..", true).await.unwrap_err().code(), "CORRUPT");
        });
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn a_listing_past_a_key_skips_what_sorts_before_it() {
        let dir = scratch("after");
        for f in [
            ".hoodie/timeline/1.commit",
            ".hoodie/metadata/files/x",
            "-1/a",
            "b/c/d",
            "e",
            ".f",
        ] {
            let path = dir.join(f);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, b"x").unwrap();
        }
        let s = LocalStorage::new(&dir);
        let listed = futures::executor::block_on(s.list_after(".hoodie0"))
            .unwrap()
            .unwrap();
        let mut paths: Vec<&str> = listed.objects.iter().map(|m| m.path.as_str()).collect();
        paths.sort();
        assert_eq!(paths, ["b/c/d", "e"]);
        let _ = fs::remove_dir_all(dir);
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hudi-edge-local-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn concurrent_creators_one_wins() {
        let dir = scratch("create");
        let s = std::sync::Arc::new(LocalStorage::new(&dir));
        for round in 0..20 {
            let path = format!(".hoodie/timeline/{round}_1.commit");
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let (s, path, barrier) = (s.clone(), path.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        let data = Bytes::from(format!("writer {i}").repeat(1000));
                        futures::executor::block_on(s.put(&path, data, PutMode::Create)).map(|_| i)
                    })
                })
                .collect();
            let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            let winners: Vec<_> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
            assert_eq!(winners.len(), 1, "{results:?}");
            for r in &results {
                if let Err(e) = r {
                    assert_eq!(e.code(), "CONFLICT");
                }
            }
            // The file is the winner's, whole.
            let got = fs::read(dir.join(&path)).unwrap();
            assert_eq!(
                got,
                format!("writer {}", winners[0]).repeat(1000).into_bytes()
            );
        }
        // No temporary file is left behind.
        let left: Vec<_> = fs::read_dir(dir.join(".hoodie/timeline"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        let _ = fs::remove_dir_all(dir);
    }

    /// A listing taken while puts come and go in the same directory (their temporaries
    /// appear and vanish between reading the directory and reading each entry) still holds
    /// every file that was there all along, and no temporary.
    #[test]
    fn listings_survive_concurrent_puts() {
        let dir = scratch("churn");
        let s = std::sync::Arc::new(LocalStorage::new(&dir));
        fs::create_dir_all(dir.join(".hoodie/timeline")).unwrap();
        fs::write(dir.join(".hoodie/timeline/1_2.commit"), b"{}").unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let churn = {
            let (s, stop) = (s.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let path = format!(".hoodie/timeline/sub{}/{i}.inflight", i % 3);
                    futures::executor::block_on(s.put(&path, Bytes::new(), PutMode::Create))
                        .unwrap();
                    futures::executor::block_on(s.delete(&path)).unwrap();
                    let _ = fs::remove_dir(dir_of(&s, &path));
                    i += 1;
                }
                i
            })
        };
        for _ in 0..2000 {
            for recursive in [false, true] {
                let listed =
                    futures::executor::block_on(s.list(".hoodie/timeline", recursive)).unwrap();
                let names: Vec<_> = listed.iter().map(|m| m.path.as_str()).collect();
                assert!(names.contains(&".hoodie/timeline/1_2.commit"), "{names:?}");
                assert!(!names.iter().any(|n| n.contains(TEMP_PREFIX)), "{names:?}");
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(churn.join().unwrap() > 0);
        let _ = fs::remove_dir_all(dir);
    }

    fn dir_of(s: &LocalStorage, path: &str) -> PathBuf {
        s.full(path).unwrap().parent().unwrap().to_path_buf()
    }

    #[test]
    fn conditional_updates_compare_content() {
        let dir = scratch("update");
        let s = LocalStorage::new(&dir);
        futures::executor::block_on(async {
            let a = s
                .put(
                    "lock.json",
                    Bytes::from_static(b"{\"a\":1}"),
                    PutMode::Create,
                )
                .await
                .unwrap();
            assert_eq!(a.etag, Some(format!("\"{}\"", md5_hex(b"{\"a\":1}"))));
            assert_eq!(s.head("lock.json").await.unwrap().etag, a.etag);
            // Same length, same instant: still another ETag.
            let b = s
                .put(
                    "lock.json",
                    Bytes::from_static(b"{\"a\":2}"),
                    PutMode::UpdateIfMatch(a.etag.clone().unwrap()),
                )
                .await
                .unwrap();
            assert_ne!(a.etag, b.etag);
            let stale = s
                .put(
                    "lock.json",
                    Bytes::from_static(b"{\"a\":3}"),
                    PutMode::UpdateIfMatch(a.etag.unwrap()),
                )
                .await;
            assert_eq!(stale.unwrap_err().code(), "CONFLICT");
            let gone = s
                .put(
                    "nothing",
                    Bytes::new(),
                    PutMode::UpdateIfMatch("\"x\"".into()),
                )
                .await;
            assert_eq!(gone.unwrap_err().code(), "CONFLICT");
            assert_eq!(
                &s.get("lock.json", Purpose::Other).await.unwrap()[..],
                b"{\"a\":2}"
            );
        });
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn temp_names_are_unique() {
        let p = Path::new("/t/.hoodie/timeline/x.commit");
        let names: std::collections::HashSet<_> = (0..1000).map(|_| temp_path(p)).collect();
        assert_eq!(names.len(), 1000);
        assert!(names.iter().all(|n| n.parent() == p.parent()));
    }
}
