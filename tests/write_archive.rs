//! Timeline archival this engine runs: after writes (Java's automatic post-commit
//! archival, both timelines) and on request. Rows read the same before and after, as
//! hudi-rs reads them; every instant stays on the timeline (active or in the LSM history)
//! with its completion time and metadata; time travel to archived instants still works; and
//! a crash at any request of an archival leaves a table every reader reads as before,
//! finished by the next run.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use helpers::*;
use hudi_edge::config::TableType;
use hudi_edge::read::ReadOptions;
use hudi_edge::storage::crash::CrashAfter;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::write::{Operation, WriteOptions};
use hudi_edge::Table;
use serde_json::{json, Map, Value};

fn dir_for(test: &str) -> PathBuf {
    fresh_dir("archive", test)
}

async fn create(dir: &Path, table_type: TableType) {
    create_events(dir, table_type, &[]).await
}

/// Write `n`: three keys of twelve, updated or inserted.
fn batch(n: usize) -> Vec<Map<String, Value>> {
    (0..3)
        .map(|k| {
            let i = (n * 3 + k) % 12;
            let region = ["us", "eu"][i % 2];
            json!({"id": format!("K{i:02}"), "ts": n as i64, "region": region, "v": n as f64})
                .as_object()
                .unwrap()
                .clone()
        })
        .collect()
}

async fn write_with(
    dir: &Path,
    n: usize,
    options: &[(&str, &str)],
) -> hudi_edge::write::WriteResult {
    let table = open(dir).await;
    let batches = decode_input(&table, &batch(n)).await;
    let mut w = WriteOptions::new(Operation::Upsert);
    for (k, v) in options {
        w.options.insert(k.to_string(), v.to_string());
    }
    table.write(&batches, &w).await.expect("write")
}

/// Every instant on the timeline, active or archived: (requested, completion, action).
async fn all_instants(dir: &Path) -> Vec<(String, Option<String>, String)> {
    let timeline = open(dir).await.load_history().await.expect("history");
    timeline
        .instants
        .iter()
        .filter(|i| i.is_completed())
        .map(|i| {
            (
                i.requested_time.clone(),
                i.completion_time.clone(),
                i.action.clone(),
            )
        })
        .collect()
}

fn active_count(dir: &Path, timeline: &str) -> usize {
    std::fs::read_dir(dir.join(timeline))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_type().unwrap().is_file())
        .count()
}

#[tokio::test]
async fn writes_archive_both_timelines_and_every_reader_still_agrees() {
    for table_type in [TableType::MergeOnRead, TableType::CopyOnWrite] {
        let dir = dir_for(&format!("{table_type:?}"));
        create(&dir, table_type).await;
        let mut archived = (None, None);
        let mut commits = Vec::new();
        for n in 0..36 {
            let done = write_with(&dir, n, &[]).await;
            commits.push(done.instant.clone());
            assert!(
                done.services.errors.is_empty(),
                "{:?}",
                done.services.errors
            );
            if let Some(a) = done.services.archival {
                archived.0 = archived.0.or(a.data_table);
                archived.1 = archived.1.or(a.metadata_table);
            }
        }
        let data = archived.0.expect("the data timeline was archived");
        assert!(
            archived.1.is_some(),
            "the metadata table's timeline was archived"
        );
        // The oldest completed instants (writes, the compactions and cleans among them),
        // down to the 20 commits Java's defaults keep.
        let everything = all_instants(&dir).await;
        assert!(data.instants.len() >= 11, "{table_type:?}: {data:?}");
        assert_eq!(data.instants[0], commits[0]);
        let newest_archived = data.instants.iter().max().unwrap();
        let still_active_writes: Vec<&String> = commits
            .iter()
            .filter(|c| !data.instants.contains(c))
            .collect();
        assert!(
            still_active_writes.iter().all(|c| *c > newest_archived),
            "{table_type:?}: archived {data:?}, active {still_active_writes:?}"
        );
        assert!(everything.iter().any(|i| &i.0 == newest_archived));
        assert!(dir.join(&data.history_file).is_file());
        // Each instant once, with its completion time: the archived ones from the history.
        let instants = all_instants(&dir).await;
        let requested: Vec<&String> = instants.iter().map(|i| &i.0).collect();
        for c in &commits {
            assert_eq!(requested.iter().filter(|r| **r == c).count(), 1, "{c}");
        }
        assert!(instants.iter().all(|i| i.1.is_some()));
        // No more than `hoodie.keep.max.commits` completed commits stay active.
        let active_commits = std::fs::read_dir(dir.join(".hoodie/timeline"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains('_') && (n.ends_with(".commit") || n.ends_with(".deltacommit")))
            .count();
        assert!(
            active_commits <= 30,
            "{table_type:?}: {active_commits} commits active"
        );
        // Marker directories: only the last write's (its markers go with the next write),
        // none of the earlier writes', archived or not, in either table.
        for temp in [".hoodie/.temp", ".hoodie/metadata/.hoodie/.temp"] {
            let left: Vec<String> = std::fs::read_dir(dir.join(temp))
                .map(|d| d.flatten().collect::<Vec<_>>())
                .unwrap_or_default()
                .iter()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.as_str() != commits[35].as_str())
                .collect();
            assert!(left.is_empty(), "{table_type:?} {temp}: {left:?}");
        }

        let ours = our_rows(&dir, ReadOptions::default()).await;
        let listing = ReadOptions {
            use_metadata_table: false,
            ..ReadOptions::default()
        };
        same_rows(
            &ours,
            &our_rows(&dir, listing).await,
            "metadata table vs listing",
        );
        let mut hudi_rs = HudiRs::start();
        same_rows(
            &data_only(&ours),
            &data_only(&hudi_rs.rows(&dir)),
            "hudi-rs",
        );
        // Time travel to an archived instant: its files were cleaned since, so it is refused
        // as Hudi refuses it.
        let as_of = ReadOptions {
            as_of: Some(commits[1].clone()),
            ..ReadOptions::default()
        };
        let e = open(&dir).await.read(&as_of).await.unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT", "{e}");
        assert!(e.to_string().contains("cleaner"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn archival_on_request_follows_its_settings_and_can_be_turned_off() {
    let dir = dir_for("on_request");
    create(&dir, TableType::MergeOnRead).await;
    let off = [("hoodie.archive.automatic", "false")];
    for n in 0..12 {
        let done = write_with(&dir, n, &off).await;
        assert!(done.services.archival.is_none());
    }
    let table = open(&dir).await;
    let mut options = BTreeMap::new();
    options.insert("hoodie.keep.min.commits".to_string(), "4".to_string());
    options.insert("hoodie.keep.max.commits".to_string(), "6".to_string());
    options.insert("hoodie.clean.commits.retained".to_string(), "2".to_string());
    let done = table.archive(&options).await.expect("archive");
    let data = done.data_table.expect("archived");
    // The metadata table compacted after 10 of its delta commits; the data table may only
    // archive what completed before that compaction.
    assert!(
        !data.instants.is_empty() && data.instants.len() <= 8,
        "{data:?}"
    );
    assert_eq!(
        open(&dir)
            .await
            .archive(&options)
            .await
            .unwrap()
            .data_table
            .map(|d| d.instants),
        None,
        "nothing more is due"
    );
    options.insert("hoodie.keep.min.commits".to_string(), "9".to_string());
    let e = table.archive(&options).await.unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn history_layers_merge_and_old_manifests_go() {
    let dir = dir_for("layers");
    create(&dir, TableType::MergeOnRead).await;
    let small = [
        ("hoodie.keep.min.commits", "2"),
        ("hoodie.keep.max.commits", "3"),
        ("hoodie.clean.commits.retained", "1"),
        ("hoodie.timeline.compaction.batch.size", "3"),
        ("hoodie.metadata.compact.max.delta.commits", "2"),
    ];
    for n in 0..24 {
        write_with(&dir, n, &small).await;
    }
    let history = dir.join(".hoodie/timeline/history");
    let names: Vec<String> = std::fs::read_dir(&history)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.ends_with("_1.parquet")), "{names:?}");
    let manifests = names.iter().filter(|n| n.starts_with("manifest_")).count();
    assert!(manifests <= 4, "{names:?}");
    let instants = all_instants(&dir).await;
    assert_eq!(
        instants.iter().filter(|i| i.2 == "deltacommit").count(),
        24,
        "every write is on the timeline once"
    );
    let mut hudi_rs = HudiRs::start();
    same_rows(
        &data_only(&our_rows(&dir, ReadOptions::default()).await),
        &data_only(&hudi_rs.rows(&dir)),
        "hudi-rs",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_crash_at_any_request_of_an_archival_loses_nothing() {
    let seed = dir_for("crash_seed");
    create(&seed, TableType::MergeOnRead).await;
    let small = [
        ("hoodie.archive.automatic", "false"),
        ("hoodie.metadata.compact.max.delta.commits", "3"),
    ];
    // Enough for the metadata table too: its cleaner keeps 20 commits, which archival keeps.
    for n in 0..26 {
        write_with(&seed, n, &small).await;
    }
    let options: BTreeMap<String, String> = [
        ("hoodie.keep.min.commits", "3"),
        ("hoodie.keep.max.commits", "5"),
        ("hoodie.clean.commits.retained", "1"),
        ("hoodie.timeline.compaction.batch.size", "2"),
        ("hoodie.metadata.compact.max.delta.commits", "3"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let before = our_rows(&seed, ReadOptions::default()).await;
    let instants = all_instants(&seed).await;
    let mut k = 0;
    loop {
        k += 1;
        let dir = dir_for(&format!("crash_{k}"));
        common::copy_dir(&seed, &dir);
        let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&dir)), k));
        let table = Table::open(crash.clone()).await.expect("open");
        let outcome = table.archive(&options).await;
        let crashed = crash.crashed();
        if crashed {
            keep_crashed(&dir, &format!("archive_{k}"));
        }
        assert_eq!(
            our_rows(&dir, ReadOptions::default()).await,
            before,
            "crash at request {k}"
        );
        assert_eq!(all_instants(&dir).await, instants, "crash at request {k}");
        if !crashed {
            let done = outcome.expect("the archival without a crash");
            assert!(
                done.data_table.is_some() && done.metadata_table.is_some(),
                "{done:?}"
            );
            assert!(k > 10, "an archival takes more than {k} requests");
            let _ = std::fs::remove_dir_all(&dir);
            break;
        }
        open(&dir).await.archive(&options).await.expect("redo");
        assert_eq!(
            all_instants(&dir).await,
            instants,
            "redo after a crash at {k}"
        );
        assert!(
            active_count(&dir, ".hoodie/timeline") < active_count(&seed, ".hoodie/timeline"),
            "the redo after a crash at {k} archived"
        );
        // Writes go on after it.
        write_with(&dir, 100, &[]).await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}
