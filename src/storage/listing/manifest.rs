//! The static manifest (`.hoodie/hudi-edge-manifest.json`, format in the module doc of
//! [`super`]): written by `hudi-edge manifest`, and answering every listing once loaded.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{trim, MANIFEST_FORMAT, MANIFEST_PATH};
use crate::error::{HudiError, Result};
use crate::storage::path::{plain_name, within_table};
use crate::storage::{join, ObjectMeta};

/// One file: name, size, optional modification time (epoch millis).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry(pub String, pub u64, #[serde(default)] pub Option<i64>);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    #[serde(default)]
    pub table: Option<String>,
    #[serde(default)]
    pub table_version: Option<u32>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub latest_instant: Option<String>,
    pub dirs: BTreeMap<String, Vec<ManifestEntry>>,
}

/// Files a manifest leaves out: in-flight markers and itself.
fn excluded(path: &str) -> bool {
    path == MANIFEST_PATH || path.starts_with(".hoodie/.temp/") || path.contains("/.hoodie/.temp/")
}

impl Manifest {
    /// A manifest of `files` (a recursive listing of the base path).
    pub fn from_files<'a>(files: impl IntoIterator<Item = &'a ObjectMeta>) -> Manifest {
        let mut dirs: BTreeMap<String, Vec<ManifestEntry>> = BTreeMap::new();
        for f in files {
            if f.is_dir || excluded(&f.path) {
                continue;
            }
            let (dir, name) = match f.path.rfind('/') {
                Some(i) => (&f.path[..i], &f.path[i + 1..]),
                None => ("", f.path.as_str()),
            };
            dirs.entry(dir.to_string()).or_default().push(ManifestEntry(
                name.to_string(),
                f.size,
                f.last_modified_ms,
            ));
        }
        for entries in dirs.values_mut() {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
        }
        Manifest {
            format: MANIFEST_FORMAT.into(),
            version: 1,
            table: None,
            table_version: None,
            created_at: None,
            latest_instant: None,
            dirs,
        }
    }

    /// Parses a manifest; every directory is normalised inside the table and every name is
    /// a plain file name, or the manifest is `CORRUPT` (requests carry the table's headers).
    pub fn parse(bytes: &[u8], path: &str) -> Result<Manifest> {
        let mut m: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| HudiError::corrupt(path, format!("not a hudi-edge manifest: {e}")))?;
        if m.format != MANIFEST_FORMAT {
            return Err(HudiError::corrupt(
                path,
                format!("format is {:?}, expected {MANIFEST_FORMAT:?}", m.format),
            ));
        }
        if m.version != 1 {
            return Err(HudiError::unsupported_in(
                format!("manifest version {}", m.version),
                path,
            ));
        }
        let mut dirs: BTreeMap<String, Vec<ManifestEntry>> = BTreeMap::new();
        for (dir, entries) in std::mem::take(&mut m.dirs) {
            for e in &entries {
                plain_name(&e.0, path)?;
            }
            dirs.entry(within_table(&dir, path)?)
                .or_default()
                .extend(entries);
        }
        m.dirs = dirs;
        Ok(m)
    }

    pub fn to_json(&self) -> Vec<u8> {
        // A manifest is plain data: serializing it cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn num_files(&self) -> usize {
        self.dirs.values().map(Vec::len).sum()
    }

    fn files_of(&self, dir: &str, out: &mut Vec<ObjectMeta>) {
        if let Some(entries) = self.dirs.get(dir) {
            out.extend(
                entries
                    .iter()
                    .map(|ManifestEntry(name, size, mtime)| ObjectMeta {
                        path: join(dir, name),
                        size: *size,
                        last_modified_ms: *mtime,
                        etag: None,
                        is_dir: false,
                    }),
            );
        }
    }

    /// `Storage::list` answered from the manifest.
    pub fn list(&self, prefix: &str, recursive: bool) -> Vec<ObjectMeta> {
        let prefix = trim(prefix);
        let under =
            |d: &str| prefix.is_empty() || d == prefix || d.starts_with(&format!("{prefix}/"));
        let mut out = Vec::new();
        if recursive {
            for dir in self.dirs.keys().filter(|d| under(d)) {
                self.files_of(dir, &mut out);
            }
            return out;
        }
        self.files_of(prefix, &mut out);
        let mut subdirs = BTreeSet::new();
        for dir in self
            .dirs
            .keys()
            .filter(|d| under(d) && d.as_str() != prefix)
        {
            let rest = if prefix.is_empty() {
                dir.as_str()
            } else {
                &dir[prefix.len() + 1..]
            };
            if let Some(first) = rest.split('/').next().filter(|s| !s.is_empty()) {
                subdirs.insert(join(prefix, first));
            }
        }
        out.extend(subdirs.into_iter().map(|path| ObjectMeta {
            path,
            size: 0,
            last_modified_ms: None,
            etag: None,
            is_dir: true,
        }));
        out
    }
}
