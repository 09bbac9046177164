//! Test helpers: fixture tables (zips under `tests/data/fixtures/tables`, the repository's copy
//! of the shared fixtures) loaded into memory.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::storage::memory::MemoryStorage;

/// `$HUDI_FIXTURES` (a `tables/` folder), else the repository's `tests/data/fixtures/tables`.
pub(crate) fn fixtures_root() -> PathBuf {
    let root = std::env::var_os("HUDI_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixtures/tables")
        });
    assert!(
        root.is_dir(),
        "fixture tables not found at {}",
        root.display()
    );
    root
}

/// Every fixture zip, sorted, as (name relative to the root, path).
pub(crate) fn fixture_zips() -> Vec<(String, PathBuf)> {
    let root = fixtures_root();
    let mut out = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "zip") {
                let name = p
                    .strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((name, p));
            }
        }
    }
    out.sort();
    out
}

/// The table in a fixture zip, keyed by path relative to its base path (macOS `__MACOSX`
/// shadow entries dropped).
pub(crate) fn load_table(zip_path: &Path) -> MemoryStorage {
    let file = std::fs::File::open(zip_path).unwrap();
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let storage = MemoryStorage::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let name = entry.name().unwrap().to_string();
        if entry.is_dir() || name.starts_with("__MACOSX") {
            continue;
        }
        let Some((_, rel)) = name.split_once('/') else {
            continue;
        };
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        storage.insert(rel, data, None);
    }
    storage
}

/// Whether a storage path is a log file (`.<fileId>_<instant>.log.<v>_<token>`).
pub(crate) fn is_log_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.starts_with('.') && name.contains(".log.")
}

pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    futures::executor::block_on(f)
}
