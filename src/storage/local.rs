//! Files on the local file system, rooted at a table's base path.

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use async_trait::async_trait;
use bytes::Bytes;

use super::memory::{clamp, list_keys};
use super::{ByteRange, Capabilities, Fetched, ObjectMeta, Purpose, PutMode, Storage};
use crate::error::{HudiError, Result};

#[derive(Debug, Clone)]
pub struct LocalStorage {
    root: PathBuf,
}

impl LocalStorage {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LocalStorage { root: root.into() }
    }

    /// The file of `path`, refused (`CORRUPT`) when the path would leave the root: a second
    /// line behind the checks on paths from table content.
    fn full(&self, path: &str) -> Result<PathBuf> {
        let rel =
            super::path::within_table(path.trim_start_matches('/'), &self.root.to_string_lossy())?;
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
        etag: modified.map(|d| format!("\"{:x}-{:x}\"", d.as_nanos(), md.len())),
        is_dir: md.is_dir(),
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
        let md = entry.metadata()?;
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(&entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        if md.is_dir() {
            if recursive {
                walk(root, &entry.path(), true, out)?;
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
        Capabilities::full()
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
        let md = fs::metadata(self.full(path)?).map_err(|e| map_err(path, e))?;
        if md.is_dir() {
            return Err(HudiError::NotFound {
                path: path.to_string(),
            });
        }
        Ok(meta_of(path, &md))
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

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        let full = self.full(path)?;
        if let Some(parent) = full.parent() {
            fs::create_dir_all(parent).map_err(|e| map_err(path, e))?;
        }
        match &mode {
            PutMode::Create => {
                let mut f = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&full)
                    .map_err(|e| {
                        if e.kind() == ErrorKind::AlreadyExists {
                            HudiError::Conflict {
                                path: path.into(),
                                detail: "object already exists".into(),
                            }
                        } else {
                            map_err(path, e)
                        }
                    })?;
                f.write_all(&data).map_err(|e| map_err(path, e))?;
            }
            PutMode::UpdateIfMatch(want) => {
                let current = self.head(path).await.map_err(|_| HudiError::Conflict {
                    path: path.into(),
                    detail: "object is gone".into(),
                })?;
                if current.etag.as_deref() != Some(want.as_str()) {
                    return Err(HudiError::Conflict {
                        path: path.into(),
                        detail: "etag changed".into(),
                    });
                }
                write_atomically(&full, &data).map_err(|e| map_err(path, e))?;
            }
            PutMode::Overwrite => write_atomically(&full, &data).map_err(|e| map_err(path, e))?,
        }
        self.head(path).await
    }

    async fn delete(&self, path: &str) -> Result<()> {
        match fs::remove_file(self.full(path)?) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(map_err(path, e)),
        }
    }
}

/// Readers never see a half-written file: write a sibling, then rename over.
fn write_atomically(full: &Path, data: &[u8]) -> std::io::Result<()> {
    let tmp = full.with_extension(format!("tmp-{}", std::process::id()));
    fs::write(&tmp, data)?;
    fs::rename(&tmp, full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::StorageExt;

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
}
