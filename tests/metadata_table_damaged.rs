//! Damaged metadata tables on the `*_meta` fixtures (truncated files, wrong checksums,
//! missing partitions): planning falls back safely, says so in the plan notes, and rows stay
//! equal to the expected JSON.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::mdt::*;
use common::oracle::key_fields;
use common::*;
use hudi_edge::read::{Plan, ReadOptions};
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::Table;
use serde_json::Value;

// --- damaged metadata tables ---

static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A private copy of a fixture table to damage.
fn copy_of(name: &str) -> PathBuf {
    let n = COPIES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dest = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("damaged-tables")
        .join(format!(
            "{}-{}-{n}",
            name.replace('/', "_"),
            std::process::id()
        ));
    let _ = std::fs::remove_dir_all(&dest);
    copy_dir(&table_path(name), &dest);
    dest
}

fn files_in(dir: &Path, pred: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| pred(&p.file_name().unwrap().to_string_lossy()))
        .collect();
    out.sort();
    out
}

fn truncate(path: &Path) {
    let len = std::fs::metadata(path).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len / 2).unwrap();
}

async fn open_at(path: &Path) -> Table {
    Table::open(Arc::new(LocalStorage::new(path)))
        .await
        .unwrap()
}

fn has_note(plan: &Plan, needle: &str) -> bool {
    plan.stats.planning_notes.iter().any(|n| n.contains(needle))
}

#[tokio::test]
async fn truncated_files_partition_falls_back_to_listing() {
    let dir = copy_of(COW);
    let files = dir.join(".hoodie/metadata/files");
    let latest_base = files_in(&files, |n| n.ends_with(".hfile")).pop().unwrap();
    truncate(&latest_base);
    let table = open_at(&dir).await;
    let plan = table.plan(&options(&["amount > 4000"])).await.unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    let name = latest_base
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        has_note(&plan, "cannot be read") && has_note(&plan, &name),
        "{:?}",
        plan.stats.planning_notes
    );
    let exp = expected(COW).unwrap();
    let rows = read_rows(&table, &options(&["amount > 4000"]), &key_fields(&exp)).await;
    assert_eq!(
        rows,
        expected_rows(&exp["snapshot"]["rows"], &["amount > 4000"])
    );
}

/// A wrong stored checksum is read as Apache Hudi's reader reads it (hudi-io never verifies
/// them), and said in the plan notes and io warnings.
#[tokio::test]
async fn wrong_hfile_checksum_is_read_and_said() {
    let dir = copy_of(TRIPS_V8);
    let files = dir.join(".hoodie/metadata/files");
    let latest_base = files_in(&files, |n| n.ends_with(".hfile")).pop().unwrap();
    let mut bytes = std::fs::read(&latest_base).unwrap();
    assert_eq!(bytes[24], 2, "HBase writes CRC32C");
    // The first block starts the file; its last byte is a checksum byte.
    let end = 33 + u32::from_be_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[end - 1] ^= 0x5a;
    std::fs::write(&latest_base, bytes).unwrap();
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(plan.stats.planning_source, "metadata_table");
    assert!(
        has_note(&plan, "wrong or uncheckable checksums") && has_note(&plan, "checksum mismatch"),
        "{:?}",
        plan.stats.planning_notes
    );
    assert!(table.io().warnings.iter().any(|w| w.contains("checksum")));
    let exp = expected(TRIPS_V8).unwrap();
    let rows = read_rows(&table, &ReadOptions::default(), &key_fields(&exp)).await;
    assert_eq!(rows, exp["snapshot"]["rows"].as_array().unwrap().clone());
}

#[tokio::test]
async fn truncated_column_stats_file_keeps_every_file() {
    let dir = copy_of(COW);
    for f in files_in(&dir.join(".hoodie/metadata/column_stats"), |n| {
        n.ends_with(".hfile")
    }) {
        truncate(&f);
    }
    let table = open_at(&dir).await;
    let o = options(&["txn_date = 2024-01-21"]);
    let plan = table.plan(&o).await.unwrap();
    assert_eq!(plan.stats.planning_source, "metadata_table");
    assert!(
        has_note(
            &plan,
            "column_stats not used: .hoodie/metadata/column_stats/col-stats-"
        ),
        "{:?}",
        plan.stats.planning_notes
    );
    assert_eq!(plan.stats.files_after_column_stats, None);
    // Partition stats and the Parquet footers still prune; rows are right.
    let exp = expected(COW).unwrap();
    let rows = read_rows(&table, &o, &key_fields(&exp)).await;
    assert_eq!(
        rows,
        expected_rows(&exp["snapshot"]["rows"], &["txn_date = 2024-01-21"])
    );
}

#[tokio::test]
async fn metadata_behind_the_data_table_falls_back_to_listing() {
    // The metadata table lost its latest delta commit: it does not know the latest data
    // commit's files.
    let dir = copy_of(COW);
    let exp = expected(COW).unwrap();
    let latest_write = exp["timeline_folder"]["completed"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|c| c["action"] == "commit" || c["action"] == "replacecommit")
        .unwrap()["instant_time"]
        .as_str()
        .unwrap()
        .to_string();
    let timeline = dir.join(".hoodie/metadata/.hoodie/timeline");
    for f in files_in(&timeline, |n| n.starts_with(&latest_write)) {
        std::fs::remove_file(f).unwrap();
    }
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    assert!(
        has_note(&plan, "behind the data table") && has_note(&plan, &latest_write),
        "{:?}",
        plan.stats.planning_notes
    );
    let rows = read_rows(&table, &ReadOptions::default(), &key_fields(&exp)).await;
    assert_eq!(rows, exp["snapshot"]["rows"].as_array().unwrap().clone());
}

#[tokio::test]
async fn metadata_commit_missing_from_the_data_timeline_is_left_to_the_data_timeline() {
    // The data table's latest commit is gone (as if it failed after the metadata table
    // committed): its files stay in the `files` partition but are not committed data.
    let dir = copy_of(COW);
    let exp = expected(COW).unwrap();
    let completed = exp["timeline_folder"]["completed"].as_array().unwrap();
    let writes: Vec<&Value> = completed
        .iter()
        .filter(|c| c["action"] == "commit" || c["action"] == "replacecommit")
        .collect();
    let (gone, previous) = (writes[writes.len() - 1], writes[writes.len() - 2]);
    let gone = gone["instant_time"].as_str().unwrap();
    for f in files_in(&dir.join(".hoodie/timeline"), |n| n.starts_with(gone)) {
        std::fs::remove_file(f).unwrap();
    }
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(
        plan.stats.planning_source, "metadata_table",
        "{:?}",
        plan.stats.planning_notes
    );
    assert!(has_note(&plan, gone), "{:?}", plan.stats.planning_notes);
    let listed = table
        .plan(&without_metadata(ReadOptions::default()))
        .await
        .unwrap();
    assert_eq!(slices(&plan), slices(&listed));
    let want = exp["time_travel"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["as_of"] == previous["instant_time"])
        .unwrap();
    let rows = read_rows(&table, &ReadOptions::default(), &key_fields(&exp)).await;
    assert_eq!(rows, want["rows"].as_array().unwrap().clone());
}

#[tokio::test]
async fn missing_or_disabled_metadata_table_lists_and_says_why() {
    let dir = copy_of(NONPART);
    std::fs::remove_file(dir.join(".hoodie/metadata/.hoodie/hoodie.properties")).unwrap();
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    assert!(
        has_note(&plan, "no metadata table"),
        "{:?}",
        plan.stats.planning_notes
    );

    let table = open(NONPART).await.unwrap();
    let plan = table
        .plan(&without_metadata(ReadOptions::default()))
        .await
        .unwrap();
    assert!(
        has_note(&plan, "turned off"),
        "{:?}",
        plan.stats.planning_notes
    );
    let plan = open("sample_table/cow/v9_txns_simple_nometa")
        .await
        .unwrap()
        .plan(&ReadOptions::default())
        .await
        .unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    assert!(
        has_note(&plan, "hoodie.table.metadata.partitions"),
        "{:?}",
        plan.stats.planning_notes
    );
}

#[tokio::test]
async fn files_partition_missing_the_latest_commit_falls_back_to_listing() {
    // The files partition's log of the latest data commit is gone: the metadata table looks
    // in sync by its timeline, but the latest commit's files are not in it.
    let dir = copy_of(NONPART);
    let exp = expected(NONPART).unwrap();
    let writes: Vec<&Value> = exp["timeline_folder"]["completed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["action"] == "commit" || c["action"] == "replacecommit")
        .collect();
    let latest = writes.last().unwrap()["instant_time"].as_str().unwrap();
    let files = dir.join(".hoodie/metadata/files");
    let logs = files_in(&files, |n| n.contains(&format!("_{latest}.log.")));
    assert_eq!(logs.len(), 1);
    std::fs::remove_file(&logs[0]).unwrap();
    let table = open_at(&dir).await;
    let plan = table.plan(&ReadOptions::default()).await.unwrap();
    assert_eq!(plan.stats.planning_source, "listing");
    assert!(
        has_note(&plan, "files partition misses"),
        "{:?}",
        plan.stats.planning_notes
    );
    let rows = read_rows(&table, &ReadOptions::default(), &key_fields(&exp)).await;
    assert_eq!(rows, exp["snapshot"]["rows"].as_array().unwrap().clone());
}
