//! The change feed of Spark-written CDC tables (tests/data/cdc, made by
//! tests/write/make_cdc_tables.sh): every supplemental logging mode, Copy-On-Write and
//! Merge-On-Read, with inserts, updates, deletes, a compaction, a clustering and an insert
//! overwrite. Each commit's feed alone, and the whole range's, equals the rows Apache Hudi
//! Spark 1.1.1 returned for the same range, op by op and image by image.

#[macro_use]
mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::Array;
use hudi_edge::storage::memory::MemoryStorage;
use hudi_edge::Table;
use serde_json::Value;

async fn open(name: &str) -> (Table, Value) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cdc");
    let zip = std::fs::read(dir.join(format!("{name}.zip"))).expect("zip");
    let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("json");
    let storage = MemoryStorage::from_zip(&zip, name).expect("zip");
    let table = Table::open(Arc::new(storage)).await.expect("open");
    (table, serde_json::from_str(&text).expect("json"))
}

/// `[op, ts_ms, before, after]` rows, sorted as the expected file sorts them.
fn feed_rows(feed: &hudi_edge::read::cdc::ChangeFeed) -> Vec<Value> {
    let mut rows = Vec::new();
    for b in &feed.batches {
        let cols: Vec<_> = (0..4).map(|i| b.column(i).as_string::<i32>()).collect();
        for r in 0..b.num_rows() {
            let cell = |c: usize| match cols[c].is_null(r) {
                true => Value::Null,
                false => Value::String(cols[c].value(r).to_string()),
            };
            rows.push(Value::Array((0..4).map(cell).collect()));
        }
    }
    let key = |r: &Value| -> Vec<String> {
        (r.as_array().unwrap().iter())
            .map(|v| v.as_str().unwrap_or("").to_string())
            .collect()
    };
    rows.sort_by_key(key);
    rows
}

async fn check(name: &str) {
    let (table, exp) = open(name).await;
    let feeds = exp["feeds"].as_array().expect("feeds");
    assert!(feeds.len() > 8, "{name}: {} feeds", feeds.len());
    let mut changed = 0;
    for f in feeds {
        let (start, end) = (f["start"].as_str().unwrap(), f["end"].as_str().unwrap());
        let feed = table.changes(Some(start), Some(end)).await.unwrap();
        let want = f["rows"].as_array().unwrap();
        let got = feed_rows(&feed);
        changed += usize::from(!want.is_empty());
        if got != *want {
            let missing: Vec<_> = want.iter().filter(|r| !got.contains(r)).collect();
            let extra: Vec<_> = got.iter().filter(|r| !want.contains(r)).collect();
            panic!(
                "{name} ({start}, {end}]: {} rows, Spark {}\nmissing {missing:#?}\nextra {extra:#?}",
                got.len(),
                want.len()
            );
        }
    }
    assert!(changed > 5, "{name}: only {changed} feeds had rows");
}

/// Where each commit's changes come from: inserts from new base files, MOR updates from log
/// files merged with the slice before them, COW updates from the CDC log files the writer
/// kept, the insert overwrite from the file groups it dropped; compaction and clustering
/// commits change nothing.
#[tokio::test]
async fn splits_name_where_changes_come_from() {
    use hudi_edge::read::cdc::InferenceCase::*;
    for (name, want) in [
        (
            "cdc_v9_mor_data_before_after",
            &[BaseFileInsert, LogFile, ReplaceCommit][..],
        ),
        (
            "cdc_v9_cow_data_before_after",
            &[BaseFileInsert, AsIs, ReplaceCommit][..],
        ),
    ] {
        let (table, exp) = open(name).await;
        let plan = table.plan_changes(Some("0"), None).await.unwrap();
        for case in want {
            assert!(
                plan.splits.iter().any(|s| s.case == *case),
                "{name}: no {case:?} split"
            );
        }
        let actions: Vec<(&str, &str)> = (exp["completed_instants"].as_array().unwrap().iter())
            .map(|i| {
                (
                    i["requested_time"].as_str().unwrap(),
                    i["action"].as_str().unwrap(),
                )
            })
            .collect();
        // Compaction (`commit` on a MOR table) and clustering yield nothing.
        for (t, _) in actions.iter().filter(|(_, a)| *a == "commit") {
            if name.contains("mor") {
                assert!(!plan.instants.iter().any(|i| i == t), "{name}: {t}");
            }
        }
    }
}

/// Read split by split, the feed is Spark's whole-range feed: one batch per file-group change
/// that has rows, commits in order, and progress counting changes read up to all planned.
#[tokio::test]
async fn the_feed_streams_split_by_split() {
    for name in ["cdc_v9_mor_data_before_after", "cdc_v9_cow_op_key_only"] {
        let (table, exp) = open(name).await;
        let whole = &exp["feeds"][0];
        let start = whole["start"].as_str().unwrap();
        let plan = Arc::new(table.plan_changes(Some(start), None).await.unwrap());
        let mut scan = table.scan_changes(plan.clone());
        assert_eq!(scan.progress().files_done, 0);
        let (mut batches, mut done, mut times) = (Vec::new(), Vec::new(), Vec::new());
        while let Some(batch) = scan.next().await {
            let batch = batch.unwrap();
            assert!(batch.num_rows() > 0, "{name}: an empty batch");
            // One commit per batch, and commits come oldest first.
            let ts = batch.column(1).as_string::<i32>();
            assert!((0..ts.len()).all(|i| ts.value(i) == ts.value(0)), "{name}");
            times.push(ts.value(0).to_string());
            done.push(scan.progress().files_done);
            batches.push(batch);
        }
        let end = scan.progress();
        assert_eq!(
            (end.files_done, end.files_total),
            (plan.splits.len(), plan.splits.len())
        );
        assert!(done.windows(2).all(|w| w[0] <= w[1]), "{name}: {done:?}");
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{name}: {times:?}");
        assert!(batches.len() > 5, "{name}: {} batches", batches.len());
        let feed = hudi_edge::read::cdc::ChangeFeed {
            schema: hudi_edge::read::cdc::feed_schema(),
            batches,
            plan: Arc::unwrap_or_clone(plan),
            io: scan.io(),
        };
        assert_eq!(
            feed_rows(&feed),
            *whole["rows"].as_array().unwrap(),
            "{name}"
        );
    }
}

#[tokio::test]
async fn tables_without_change_data_capture_say_so() {
    let (table, _) = common::two_readers::open("spark_variants", "spark_v9_bucket_cow").await;
    let err = table
        .changes(Some("0"), None)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("hoodie.table.cdc.enabled"), "{err}");
}

/// A row of the tables' input form.
fn row(id: &str, name: &str, ts: i64, part: &str) -> serde_json::Map<String, Value> {
    let v = serde_json::json!({
        "id": id, "name": name, "qty": 7, "amount": "12.50", "event_date": "2024-02-01",
        "event_ts": "2024-02-01T00:00:00Z", "score": 1.5, "even": true, "ts": ts, "part": part
    });
    v.as_object().unwrap().clone()
}

/// A field of a feed image, however it is rendered (Spark's compact JSON or Avro's).
fn field(image: &Value, name: &str) -> Value {
    let text = image.as_str().unwrap_or("null");
    let parsed: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    parsed.get(name).cloned().unwrap_or(Value::Null)
}

/// A copy of a tests/data/cdc table in a directory of its own.
fn unzipped(name: &str, test: &str) -> std::path::PathBuf {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(test);
    std::fs::create_dir_all(&dir).unwrap();
    let _ = std::fs::remove_dir_all(dir.join(name));
    let zip =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/cdc/{name}.zip"));
    let status = std::process::Command::new("unzip")
        .args(["-q", "-o"])
        .arg(&zip)
        .arg("-d")
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    dir.join(name)
}

/// `.cdc` files under a table, by name.
fn cdc_files(dir: &std::path::Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for part in std::fs::read_dir(dir).unwrap().flatten() {
        if !part.file_type().unwrap().is_dir() || part.file_name() == ".hoodie" {
            continue;
        }
        for f in std::fs::read_dir(part.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().to_string();
            if name.ends_with(".cdc") {
                out.insert(name);
            }
        }
    }
    out
}

/// A clean deletes the CDC log files of the slices it deletes (they go with the base file
/// written beside them) and keeps those of the slices it keeps; the feed of the retained
/// commits still reads.
#[tokio::test]
async fn cleaning_deletes_cdc_files_with_their_slices() {
    use hudi_edge::write::Operation;
    let dir = unzipped("cdc_v9_cow_data_before_after", "cdc-clean");
    let table = helpers::open(&dir).await;
    let before = cdc_files(&dir);
    assert!(!before.is_empty());
    let up = [row("id-003", "edge-3", 99_003, "p0")];
    helpers::write_on(&table, &up, Operation::Upsert)
        .await
        .unwrap();
    let table = table.reopen().await.unwrap();
    let last = (table.timeline().completed_writes().last())
        .map(|i| i.requested_time.clone())
        .unwrap();
    let options = [("hoodie.clean.commits.retained", "1")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cleans = table.clean(&options).await.unwrap();
    assert!(!cleans.is_empty(), "a clean ran");
    let after = cdc_files(&dir);
    let ours: Vec<&String> = after.iter().filter(|n| n.contains(&last)).collect();
    assert_eq!(ours.len(), 1, "our commit's CDC file stays: {after:?}");
    let gone: Vec<&String> = before.difference(&after).collect();
    assert!(
        !gone.is_empty(),
        "cleaned slices' CDC files deleted: {after:?}"
    );
    // Every CDC file left belongs to a base file still there.
    for name in &after {
        let (file_id, rest) = name[1..].split_once('_').unwrap();
        let instant = rest.split('.').next().unwrap();
        let base_left = std::fs::read_dir(dir.join("part=p0"))
            .into_iter()
            .chain(std::fs::read_dir(dir.join("part=p1")))
            .chain(std::fs::read_dir(dir.join("part=p2")))
            .flatten()
            .flatten()
            .any(|f| {
                let n = f.file_name().to_string_lossy().to_string();
                n.starts_with(file_id) && n.ends_with(&format!("_{instant}.parquet"))
            });
        assert!(base_left, "{name} outlived its base file");
    }
    let table = table.reopen().await.unwrap();
    let feed = table.changes(Some(&last[..last.len() - 1]), None).await;
    assert!(feed.is_ok(), "{:?}", feed.err());
}

/// Our upsert and delete on a CDC table keep its feed: the update with its before and after
/// images, the new key, the deleted key — in every mode, COW (our CDC log files) and MOR (our
/// log files, merged with the slice their write stats name).
#[tokio::test]
async fn our_writes_keep_the_change_feed() {
    use hudi_edge::write::Operation;
    for name in [
        "cdc_v9_cow_data_before_after",
        "cdc_v9_cow_op_key_only",
        "cdc_v9_cow_data_before",
        "cdc_v9_mor_data_before_after",
        "cdc_v9_mor_op_key_only",
    ] {
        let table = helpers::open(&unzipped(name, "cdc-writes")).await;
        let last = (table.timeline().completed_writes().last())
            .map(|i| i.requested_time.clone())
            .unwrap();
        let up = [
            row("id-003", "edge-3", 99_003, "p0"),
            row("id-090", "edge-90", 99_090, "p0"),
        ];
        helpers::write_on(&table, &up, Operation::Upsert)
            .await
            .unwrap();
        let gone = [row("id-009", "", 0, "p0")];
        helpers::write_on(&table, &gone, Operation::Delete)
            .await
            .unwrap();
        let table = table.reopen().await.unwrap();
        let plan = table.plan_changes(Some(&last), None).await.unwrap();
        assert_eq!(plan.instants.len(), 2, "{name}");
        if name.contains("cow") {
            assert!(
                plan.splits
                    .iter()
                    .all(|s| s.case == hudi_edge::read::cdc::InferenceCase::AsIs
                        || s.case == hudi_edge::read::cdc::InferenceCase::BaseFileInsert),
                "{name}: {:?}",
                plan.splits.iter().map(|s| s.case).collect::<Vec<_>>()
            );
        }
        let rows = feed_rows(&table.changes(Some(&last), None).await.unwrap());
        let by_id = |op: &str, image: usize| -> Vec<(Value, Value)> {
            (rows.iter().filter(|r| r[0] == op))
                .map(|r| (field(&r[image], "id"), field(&r[image], "name")))
                .collect()
        };
        assert_eq!(rows.len(), 3, "{name}: {rows:#?}");
        assert_eq!(
            by_id("u", 3),
            [("id-003".into(), "edge-3".into())],
            "{name}"
        );
        assert_eq!(by_id("u", 2)[0].0, "id-003", "{name}");
        assert_ne!(by_id("u", 2)[0].1, "edge-3", "{name}: before image");
        assert_eq!(
            by_id("i", 3),
            [("id-090".into(), "edge-90".into())],
            "{name}"
        );
        assert_eq!(by_id("d", 2)[0].0, "id-009", "{name}");
    }
}

macro_rules! cdc_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                check(stringify!($name)).await;
            }
        )*
    };
}

cdc_tests! {
    cdc_v9_cow_op_key_only,
    cdc_v9_cow_data_before,
    cdc_v9_cow_data_before_after,
    cdc_v9_mor_op_key_only,
    cdc_v9_mor_data_before,
    cdc_v9_mor_data_before_after,
    cdc_v8_mor_data_before_after,
    cdc_v6_cow_data_before_after,
}

/// An image's values, however rendered (Spark 1.1.1's, Avro's or Hudi 0.15.0's field order),
/// without decimals (each renders them its own way) and null fields.
fn values(image: &Value) -> Value {
    match image.as_str().filter(|s| *s != "null") {
        None => Value::Null,
        Some(text) => {
            let mut o: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
            o.remove("amount");
            o.retain(|_, v| !v.is_null());
            Value::Object(
                o.into_iter()
                    .collect::<std::collections::BTreeMap<_, _>>()
                    .into_iter()
                    .collect(),
            )
        }
    }
}

/// Hudi 1.1.1 cannot read the change feed of a version-6 Merge-On-Read table (it parses
/// version-6 delta commits as Avro), so Hudi 0.15.0's reading is the oracle there: the same
/// changes record for record, rendering aside, except the deletes of the file groups an
/// insert overwrite dropped, which 0.15.0 gets wrong (none in that commit's own feed, one
/// record repeated for each in a wider range) and 1.1.1 reports as the groups' records (as
/// on the version-6 COW table, compared exactly above).
#[tokio::test]
async fn cdc_v6_mor_data_before_after() {
    use hudi_edge::read::cdc::InferenceCase;
    let name = "cdc_v6_mor_data_before_after";
    let (table, exp) = open(name).await;
    let plan = table.plan_changes(Some("0"), None).await.unwrap();
    let overwrite: Vec<&str> = (plan.splits.iter())
        .filter(|s| s.case == InferenceCase::ReplaceCommit)
        .map(|s| s.instant.as_str())
        .collect();
    assert!(
        !overwrite.is_empty(),
        "the insert overwrite drops file groups"
    );
    let norm = |rows: &[Value]| -> Vec<String> {
        let mut out: Vec<String> = rows
            .iter()
            .filter(|r| !(r[0] == "d" && overwrite.contains(&r[1].as_str().unwrap())))
            .map(|r| serde_json::json!([r[0], r[1], values(&r[2]), values(&r[3])]).to_string())
            .collect();
        out.sort();
        out
    };
    let mut compared = 0;
    for f in exp["feeds"].as_array().unwrap() {
        let (start, end) = (f["start"].as_str().unwrap(), f["end"].as_str().unwrap());
        let feed = table.changes(Some(start), Some(end)).await.unwrap();
        let ours = feed_rows(&feed);
        let want = norm(f["rows"].as_array().unwrap());
        let got = norm(&ours);
        let missing: Vec<_> = want.iter().filter(|r| !got.contains(r)).collect();
        let extra: Vec<_> = got.iter().filter(|r| !want.contains(r)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{name} ({start}, {end}]: missing {missing:#?}\nextra {extra:#?}"
        );
        compared += want.len();
    }
    assert!(compared > 40, "{compared} rows compared");
}

/// A compaction of a table with a change feed writes a CDC log file beside each new base file
/// with the changes its logs brought (as Java's compaction does: `cdcStats` in its write stats,
/// the files in the metadata table), and the feed — which leaves compaction out, as Spark's
/// does — is unchanged by it.
#[tokio::test]
async fn compaction_keeps_cdc_files_as_java_does() {
    use hudi_edge::write::{CompactRequest, Operation};
    let dir = unzipped("cdc_v9_mor_data_before_after", "cdc-compaction");
    let table = helpers::open(&dir).await;
    let first = (table.timeline().completed_writes().next())
        .map(|i| i.requested_time.clone())
        .unwrap();
    let up = [row("id-003", "edge-3", 99_003, "p0")];
    helpers::write_on_with(
        &table,
        &up,
        Operation::Upsert,
        &[("hoodie.compact.inline", "false")],
    )
    .await
    .unwrap();
    let table = table.reopen().await.unwrap();
    let feed_before = feed_rows(&table.changes(Some(&first), None).await.unwrap());
    let before = cdc_files(&dir);
    let report = table
        .compact(&CompactRequest::default(), &Default::default())
        .await
        .unwrap();
    let instant = report.completed[0].instant.clone();
    let table = table.reopen().await.unwrap();
    let written: Vec<String> = cdc_files(&dir).difference(&before).cloned().collect();
    assert!(
        !written.is_empty() && written.iter().all(|n| n.contains(&instant)),
        "{written:?}"
    );
    let meta = table
        .commit_metadata(table.timeline().get(&instant).unwrap())
        .await
        .unwrap();
    let stats: Vec<String> = meta
        .write_stats()
        .flat_map(|(_, s)| s.cdc_stats.iter().flat_map(|m| m.keys().cloned()))
        .collect();
    assert_eq!(stats.len(), written.len(), "{stats:?}");
    // The compacted group's CDC file holds the update our log brought.
    let ours = written
        .iter()
        .find(|n| stats.iter().any(|s| s.ends_with(n.as_str())));
    assert!(ours.is_some());
    let feed_after = feed_rows(&table.changes(Some(&first), None).await.unwrap());
    assert_eq!(feed_before, feed_after, "compaction changes no feed");
}

/// A table created here with `hoodie.table.cdc.enabled=true` keeps a change feed from its
/// first commit (`DATA_BEFORE_AFTER` unless named): inserts, then a Copy-On-Write upsert and
/// delete whose CDC log files the feed reads as written.
#[tokio::test]
async fn created_tables_keep_a_change_feed() {
    use hudi_edge::config::TableType;
    use hudi_edge::write::Operation;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cdc-created");
    let _ = std::fs::remove_dir_all(&dir);
    let storage = Arc::new(hudi_edge::storage::local::LocalStorage::new(&dir));
    let new = hudi_edge::write::create::NewTable {
        name: "feed".into(),
        table_type: TableType::CopyOnWrite,
        schema: hudi_edge::schema::to_avro::schema_from_ddl(
            "id STRING NOT NULL, v BIGINT, p STRING",
        )
        .unwrap(),
        record_key_fields: vec!["id".into()],
        partition_fields: vec!["p".into()],
        ordering_fields: vec!["v".into()],
        options: [("hoodie.table.cdc.enabled".to_string(), "true".to_string())].into(),
    };
    Table::create(storage, &new).await.unwrap();
    let table = helpers::open(&dir).await;
    assert!(table.config().cdc_enabled);
    assert_eq!(
        table
            .config()
            .property("hoodie.table.cdc.supplemental.logging.mode"),
        Some("DATA_BEFORE_AFTER")
    );
    let r = |id: &str, v: i64| {
        serde_json::json!({"id": id, "v": v, "p": "a"})
            .as_object()
            .unwrap()
            .clone()
    };
    helpers::write_on(&table, &[r("k1", 1), r("k2", 1)], Operation::Insert)
        .await
        .unwrap();
    helpers::write_on(&table, &[r("k1", 2)], Operation::Upsert)
        .await
        .unwrap();
    helpers::write_on(&table, &[r("k2", 0)], Operation::Delete)
        .await
        .unwrap();
    let table = table.reopen().await.unwrap();
    let rows = feed_rows(&table.changes(Some("0"), None).await.unwrap());
    let ops: Vec<(&str, Value, Value)> = rows
        .iter()
        .map(|r| {
            let image = if r[0] == "d" { &r[2] } else { &r[3] };
            (
                r[0].as_str().unwrap(),
                field(image, "id"),
                field(image, "v"),
            )
        })
        .collect();
    assert_eq!(ops.len(), 4, "{rows:#?}");
    for want in [
        ("i", "k1", 1),
        ("i", "k2", 1),
        ("u", "k1", 2),
        ("d", "k2", 1),
    ] {
        assert!(
            ops.contains(&(want.0, want.1.into(), want.2.into())),
            "{want:?} in {ops:?}"
        );
    }
}
