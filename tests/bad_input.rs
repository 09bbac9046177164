//! Damaged tables give typed errors that name the file and say what is wrong — never a
//! panic, never a silent wrong answer.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hudi_edge::read::ReadOptions;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::Table;

fn damaged_copy(fixture: &str, test: &str) -> PathBuf {
    common::table_copy(fixture, "bad-input", test)
}

async fn open(dir: &Path) -> hudi_edge::Result<Table> {
    Table::open(Arc::new(LocalStorage::new(dir))).await
}

fn latest_commit_file(dir: &Path) -> PathBuf {
    let mut commits: Vec<PathBuf> = std::fs::read_dir(dir.join(".hoodie/timeline"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name().unwrap().to_string_lossy().contains('_')
                && p.extension().is_some_and(|e| e == "commit")
        })
        .collect();
    commits.sort();
    commits.pop().unwrap()
}

#[tokio::test]
async fn truncated_commit_file_is_corrupt_and_named() {
    let dir = damaged_copy("sample_table/cow/v9_txns_simple_nometa", "truncated-commit");
    let commit = latest_commit_file(&dir);
    let bytes = std::fs::read(&commit).unwrap();
    std::fs::write(&commit, &bytes[..bytes.len() / 2]).unwrap();
    let table = open(&dir).await.unwrap();
    let err = table.read(&ReadOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), "CORRUPT", "{err}");
    let name = commit.file_name().unwrap().to_string_lossy().into_owned();
    assert!(err.to_string().contains(&name), "names {name}: {err}");
}

#[tokio::test]
async fn garbage_properties_are_corrupt_and_named() {
    let dir = damaged_copy("sample_table/cow/v6_nonpartitioned", "garbage-properties");
    std::fs::write(
        dir.join(".hoodie/hoodie.properties"),
        b"\x00\x01garbage\xff\xfe not a properties file",
    )
    .unwrap();
    let err = open(&dir).await.unwrap_err();
    assert_eq!(err.code(), "CORRUPT", "{err}");
    assert!(err.to_string().contains("hoodie.properties"), "{err}");
}

#[tokio::test]
async fn edited_table_name_fails_the_checksum() {
    let dir = damaged_copy("sample_table/cow/v6_nonpartitioned", "bad-checksum");
    let path = dir.join(".hoodie/hoodie.properties");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "hoodie.table.name=v6_nonpartitioned",
        "hoodie.table.name=renamed",
    );
    std::fs::write(&path, text).unwrap();
    let err = open(&dir).await.unwrap_err();
    assert_eq!(err.code(), "CORRUPT", "{err}");
    assert!(err.to_string().contains("checksum"), "{err}");
}

#[tokio::test]
async fn missing_base_file_of_the_latest_commit_is_not_found() {
    let dir = damaged_copy("sample_table/cow/v9_txns_simple_nometa", "missing-base");
    let commit = latest_commit_file(&dir);
    let meta =
        hudi_edge::timeline::metadata::decode_instant_file(&std::fs::read(&commit).unwrap(), "c")
            .unwrap();
    let written = meta["partitionToWriteStats"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()[0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_file(dir.join(&written)).unwrap();
    let table = open(&dir).await.unwrap();
    let err = table.read(&ReadOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), "NOT_FOUND", "{err}");
    assert!(err.to_string().contains(&written), "names {written}: {err}");
}

#[tokio::test]
async fn unknown_table_version_is_unsupported() {
    let dir = damaged_copy("sample_table/cow/v6_nonpartitioned", "unknown-version");
    let path = dir.join(".hoodie/hoodie.properties");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("hoodie.table.version=6", "hoodie.table.version=12");
    std::fs::write(&path, text).unwrap();
    let err = open(&dir).await.unwrap_err();
    assert_eq!(err.code(), "UNSUPPORTED", "{err}");
    assert!(
        err.to_string().contains("table version 12")
            && err.to_string().contains("hoodie.properties"),
        "{err}"
    );
}

#[tokio::test]
async fn not_a_table_is_not_found() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("bad-input")
        .join("empty-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let err = open(&dir).await.unwrap_err();
    assert_eq!(err.code(), "NOT_FOUND", "{err}");
    assert!(err.to_string().contains("hoodie.properties"), "{err}");
}

#[tokio::test]
async fn truncated_base_file_is_corrupt_and_named() {
    let dir = damaged_copy("sample_table/cow/v6_nonpartitioned", "truncated-base");
    let base = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .max()
        .unwrap();
    let bytes = std::fs::read(&base).unwrap();
    std::fs::write(&base, &bytes[..bytes.len() - 100]).unwrap();
    let table = open(&dir).await.unwrap();
    let err = table.read(&ReadOptions::default()).await.unwrap_err();
    assert_eq!(err.code(), "CORRUPT", "{err}");
    assert!(
        err.to_string()
            .contains(&*base.file_name().unwrap().to_string_lossy()),
        "{err}"
    );
}
