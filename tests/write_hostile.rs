//! The writer against hostile input and what a careless or hostile peer leaves in the table:
//! refused before any request that changes storage, never a crash, never a wedged table;
//! and checks a writer bug would trip: which requests are conditional, whether the commit
//! names exactly the files written, whether the record index points where the rows are.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;
use helpers::*;
use hudi_edge::config::TableType;
use hudi_edge::metadata::lookup::Lookup;
use hudi_edge::metadata::records::MetadataPayload;
use hudi_edge::read::ReadOptions;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::storage::{ByteRange, Capabilities, Fetched, ObjectMeta, Purpose, PutMode, Storage};
use hudi_edge::write::Operation;
use hudi_edge::Table;
use serde_json::{json, Map, Value};

fn dir_for(test: &str) -> PathBuf {
    fresh_dir("write_hostile", test)
}

fn row(id: &str, ts: i64, region: &str) -> Map<String, Value> {
    json!({"id": id, "ts": ts, "region": region, "v": ts as f64})
        .as_object()
        .unwrap()
        .clone()
}

/// One mutating request as the store saw it.
#[derive(Debug, Clone, PartialEq)]
enum Mutation {
    Put { path: String, conditional: bool },
    Delete(String),
}

/// A store that records every mutating request and whether it was conditional.
#[derive(Debug)]
struct Recording {
    inner: Arc<dyn Storage>,
    log: Mutex<Vec<Mutation>>,
}

impl Recording {
    fn new(dir: &Path) -> Arc<Recording> {
        Arc::new(Recording {
            inner: Arc::new(LocalStorage::new(dir)),
            log: Mutex::new(Vec::new()),
        })
    }

    fn take(&self) -> Vec<Mutation> {
        std::mem::take(&mut self.log.lock().unwrap())
    }
}

#[async_trait]
impl Storage for Recording {
    fn location(&self) -> String {
        self.inner.location()
    }
    fn capabilities(&self) -> Capabilities {
        self.inner.capabilities()
    }
    async fn read(
        &self,
        path: &str,
        ranges: &[ByteRange],
        purpose: Purpose,
    ) -> hudi_edge::Result<Fetched> {
        self.inner.read(path, ranges, purpose).await
    }
    async fn head(&self, path: &str) -> hudi_edge::Result<ObjectMeta> {
        self.inner.head(path).await
    }
    async fn list(&self, prefix: &str, recursive: bool) -> hudi_edge::Result<Vec<ObjectMeta>> {
        self.inner.list(prefix, recursive).await
    }
    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> hudi_edge::Result<ObjectMeta> {
        let conditional = !matches!(mode, PutMode::Overwrite);
        self.log.lock().unwrap().push(Mutation::Put {
            path: path.to_string(),
            conditional,
        });
        self.inner.put(path, data, mode).await
    }
    async fn delete(&self, path: &str) -> hudi_edge::Result<()> {
        self.log
            .lock()
            .unwrap()
            .push(Mutation::Delete(path.to_string()));
        self.inner.delete(path).await
    }
    async fn get_versioned(&self, path: &str) -> hudi_edge::Result<(Bytes, ObjectMeta)> {
        self.inner.get_versioned(path).await
    }
}

async fn write_through(
    storage: Arc<Recording>,
    rows: &[Map<String, Value>],
    settings: &[(&str, &str)],
) -> hudi_edge::write::WriteResult {
    let table = Table::open(storage).await.expect("open");
    write_on_with(&table, rows, Operation::Upsert, settings)
        .await
        .expect("write")
}

fn is_completed(path: &str) -> bool {
    if path.contains("/history/") {
        return false;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().is_some_and(|t| t.contains('_'))
        && !name.ends_with(".requested")
        && !name.ends_with(".inflight")
}

/// A partition value that climbs out of the table is refused with no mutating request,
/// and a planted marker or rollback plan naming a path outside the table neither wedges
/// the next write nor touches that path.
#[tokio::test]
async fn paths_outside_the_table_are_refused_as_input_and_ignored_in_leftovers() {
    let root = dir_for("outside");
    let dir = root.join("a/b/events");
    create_events(&dir, TableType::MergeOnRead, &[]).await;
    write(&dir, &[row("k1", 1, "eu")], Operation::Upsert).await;

    let storage = Recording::new(&dir);
    let table = Table::open(storage.clone()).await.unwrap();
    let err = write_on_with(&table, &[row("k2", 1, "../../x")], Operation::Upsert, &[])
        .await
        .expect_err("refused");
    assert_eq!(err.code(), "INVALID_INPUT", "{err}");
    assert!(
        err.to_string().contains("row 0, column \"region\""),
        "{err}"
    );
    assert_eq!(storage.take(), vec![], "no request changed storage");

    // A failed write whose markers (and a rollback plan) name a file outside the table.
    let victim = root.join("a/victim.parquet");
    std::fs::write(&victim, b"not ours").unwrap();
    let t = "20200101000000000";
    let timeline = dir.join(".hoodie/timeline");
    std::fs::write(timeline.join(format!("{t}.deltacommit.requested")), b"").unwrap();
    std::fs::write(timeline.join(format!("{t}.deltacommit.inflight")), b"").unwrap();
    let markers = dir.join(format!(".hoodie/.temp/{t}"));
    std::fs::create_dir_all(&markers).unwrap();
    std::fs::write(markers.join("MARKERS.type"), b"TIMELINE_SERVER_BASED").unwrap();
    std::fs::write(
        markers.join("MARKERS0"),
        format!(
            "../../victim.parquet.marker.CREATE\n../../x/abc-0_0-0-0_{t}.parquet.marker.CREATE\n"
        ),
    )
    .unwrap();
    let result = write_through(storage.clone(), &[row("k3", 2, "eu")], &[]).await;
    assert_eq!(result.rolled_back.len(), 1, "{:?}", result.rolled_back);
    assert!(victim.exists(), "the file outside the table is untouched");
    let touched_outside: Vec<_> = storage
        .take()
        .into_iter()
        .filter(|m| match m {
            Mutation::Put { path, .. } | Mutation::Delete(path) => path.contains(".."),
        })
        .collect();
    assert_eq!(touched_outside, vec![]);
    assert!(
        !markers.join("MARKERS0").exists(),
        "the failed write's markers are gone"
    );
    let rows = our_rows(&dir, ReadOptions::default()).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
}

/// Nesting deeper than any column could hold is refused before decoding (the decoder
/// would recurse that deep describing the mistake: a stack overflow kills a wasm module).
#[tokio::test]
async fn deep_json_nesting_is_refused_not_a_crash() {
    let dir = dir_for("deep");
    create_events(&dir, TableType::CopyOnWrite, &[]).await;
    let table = open(&dir).await;
    let schema = table.schema_for_write().await.unwrap().unwrap();
    let schema = Arc::new(schema);
    let deep = format!(
        "{{\"id\":\"a\",\"ts\":1,\"region\":\"eu\",\"v\":{}{}}}\n",
        "[".repeat(300_000),
        "]".repeat(300_000)
    );
    let limits = hudi_edge::write::limits::InputLimits::default();
    let err = hudi_edge::api::input::decode_rows(
        deep.into(),
        hudi_edge::api::input::InputFormat::Jsonl,
        &schema,
        "deep.jsonl",
        &limits,
    )
    .expect_err("refused");
    assert_eq!(err.code(), "INVALID_INPUT");
    assert!(
        err.to_string().contains("deep.jsonl: row 0 nests values"),
        "{err}"
    );
}

/// Keys and partition paths longer than an HFile row key are refused up front where the
/// metadata table would index them, not after the data files are written.
#[tokio::test]
async fn keys_the_metadata_table_cannot_hold_are_refused_before_any_request() {
    let dir = dir_for("long_key");
    create_events(
        &dir,
        TableType::MergeOnRead,
        &[("hoodie.metadata.record.index.enable", "true")],
    )
    .await;
    let storage = Recording::new(&dir);
    let table = Table::open(storage.clone()).await.unwrap();
    let long = "k".repeat(40_000);
    let err = write_on_with(&table, &[row(&long, 1, "eu")], Operation::Upsert, &[])
        .await
        .expect_err("refused");
    assert_eq!(err.code(), "INVALID_INPUT", "{err}");
    assert!(
        err.to_string().contains("record key is 40000 bytes"),
        "{err}"
    );
    assert_eq!(storage.take(), vec![]);
}

/// Settings are input too: unknown values of known keys are refused before any request.
#[tokio::test]
async fn bad_settings_are_refused_before_any_request() {
    let dir = dir_for("settings");
    create_events(&dir, TableType::MergeOnRead, &[]).await;
    let storage = Recording::new(&dir);
    let table = Table::open(storage.clone()).await.unwrap();
    for (key, value, accepted) in [
        ("hoodie.index.type", "NOPE", "BLOOM"),
        ("hoodie.cleaner.policy", "SOMETIMES", "KEEP_LATEST_COMMITS"),
        ("hoodie.compact.inline", "maybe", "true, false"),
        ("hoodie.keep.min.commits", "-1", "whole number"),
        ("hudi-edge.write.max.row.bytes", "lots", "whole number"),
    ] {
        let err = write_on_with(
            &table,
            &[row("k", 1, "eu")],
            Operation::Upsert,
            &[(key, value)],
        )
        .await
        .expect_err("refused");
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{key}: {err}");
        let text = err.to_string();
        assert!(
            text.contains(key) && text.contains(accepted),
            "{key}: {text}"
        );
    }
    assert_eq!(storage.take(), vec![]);
}

/// A write's requests: instants complete with create-if-absent (a plain PUT could
/// overwrite a peer's), the commit names exactly the data files the write put (with their
/// sizes), and its markers are gone once a later write cleans up.
#[tokio::test]
async fn commits_are_conditional_and_name_exactly_the_files_written() {
    for (name, table_type) in [
        ("mor", TableType::MergeOnRead),
        ("cow", TableType::CopyOnWrite),
    ] {
        let dir = dir_for(&format!("requests_{name}"));
        create_events(
            &dir,
            table_type,
            &[("hoodie.metadata.record.index.enable", "true")],
        )
        .await;
        let storage = Recording::new(&dir);
        let mut instants = Vec::new();
        for n in 0..4 {
            let rows: Vec<_> = (0..5)
                .map(|i| {
                    row(
                        &format!("k{}", (n * 3 + i) % 11),
                        n as i64,
                        ["eu", "us"][i % 2],
                    )
                })
                .collect();
            let result = write_through(storage.clone(), &rows, NO_INLINE_COMPACTION).await;
            let mutations = storage.take();
            let t = result.instant.clone();
            // Every completed instant, data and metadata table, is created if absent.
            let completed: Vec<_> = mutations
                .iter()
                .filter_map(|m| match m {
                    Mutation::Put { path, conditional }
                        if path.contains("/timeline/") && is_completed(path) =>
                    {
                        Some((path.clone(), *conditional))
                    }
                    _ => None,
                })
                .collect();
            assert!(
                completed
                    .iter()
                    .any(|(p, _)| p.starts_with(".hoodie/timeline/") && p.contains(&t)),
                "{name}: {completed:?}"
            );
            for (path, conditional) in &completed {
                assert!(conditional, "{name}: {path} completed with a plain PUT");
            }
            // The data files put are exactly the commit's write stats, sizes included.
            let put: BTreeSet<String> = mutations
                .iter()
                .filter_map(|m| match m {
                    Mutation::Put { path, .. }
                        if !path.starts_with(".hoodie/")
                            && (path.ends_with(".parquet") || path.contains(".log.")) =>
                    {
                        Some(path.clone())
                    }
                    _ => None,
                })
                .collect();
            let table = open(&dir).await;
            let (instant, _) = table.instant(&t).await.unwrap();
            let metadata = table.commit_metadata(&instant).await.unwrap();
            let mut named = BTreeSet::new();
            for (_, stat) in metadata.write_stats() {
                let path = stat.path.clone().expect("a write stat names its file");
                let on_disk = std::fs::metadata(dir.join(&path))
                    .unwrap_or_else(|e| panic!("{name}: {path} named by {t}: {e}"))
                    .len();
                assert_eq!(
                    stat.file_size_in_bytes,
                    Some(on_disk as i64),
                    "{name}: {path}"
                );
                named.insert(path);
            }
            assert_eq!(named, put, "{name}: commit {t} vs the files it put");
            assert_eq!(
                named.into_iter().collect::<Vec<_>>().len(),
                result.files_written.len()
            );
            instants.push(t);
        }
        // Earlier writes' marker folders are cleaned by later writes.
        for t in &instants[..instants.len() - 1] {
            let markers = dir.join(format!(".hoodie/.temp/{t}"));
            let left: Vec<_> = std::fs::read_dir(&markers)
                .map(|d| d.map(|e| e.unwrap().file_name()).collect())
                .unwrap_or_default();
            assert!(left.is_empty(), "{name}: markers of {t} left: {left:?}");
        }
        record_index_points_at_the_rows(&dir, name).await;
    }
}

/// Every live key is in the record index, in its row's partition and file group, and no
/// other key is.
async fn record_index_points_at_the_rows(dir: &Path, name: &str) {
    let table = open(dir).await;
    let mdt = table.metadata_table(&[]).await.unwrap();
    let indexed = mdt.lookup("record_index", Lookup::All).await.unwrap();
    assert!(
        indexed.problems.is_empty(),
        "{name}: {:?}",
        indexed.problems
    );
    let rows = our_rows(dir, ReadOptions::default()).await;
    let mut live: BTreeMap<String, (String, String)> = BTreeMap::new();
    for r in &rows {
        let r: Value = serde_json::from_str(r).unwrap();
        live.insert(
            r["_hoodie_record_key"].as_str().unwrap().to_string(),
            (
                r["_hoodie_partition_path"].as_str().unwrap().to_string(),
                r["_hoodie_file_name"].as_str().unwrap().to_string(),
            ),
        );
    }
    let keys: BTreeSet<&String> = indexed.values.keys().collect();
    assert_eq!(
        keys,
        live.keys().collect(),
        "{name}: indexed keys vs live rows"
    );
    for (key, payload) in &indexed.values {
        let MetadataPayload::RecordIndex(entry) = payload else {
            panic!("{name}: {key}: {payload:?}");
        };
        let (partition, file_name) = &live[key];
        assert_eq!(&entry.partition, partition, "{name}: {key}");
        assert!(
            file_name.contains(&entry.file_id),
            "{name}: {key} indexed in {} but read from {file_name}",
            entry.file_id
        );
    }
}
