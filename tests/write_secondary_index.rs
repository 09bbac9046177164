//! Secondary indexes kept in step: Spark-written tables with `CREATE INDEX` indexes take
//! upserts (changed, unchanged, older and new values, null) and deletes, and after each
//! write every index holds exactly the entries `<value>$<record key>` the table's rows call
//! for — computed here from the rows read back, not from the writer's bookkeeping — each in
//! the file group a routed lookup asks. Reads pruned by the indexes return the rows an
//! unpruned read returns.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::BTreeSet;
use std::path::Path;

use helpers::*;
use hudi_edge::expr::parse_filter;
use hudi_edge::metadata::keys::secondary_index_key;
use hudi_edge::metadata::{Lookup, MetadataPayload};
use hudi_edge::read::ReadOptions;
use hudi_edge::write::Operation;
use serde_json::{Map, Value};

/// (index partition, column) of the fixtures' two indexes.
const INDEXES: &[(&str, &str)] = &[
    ("secondary_index_merchant_idx", "merchant_name"),
    ("secondary_index_txn_date_idx", "txn_date"),
];

/// The text Hudi keys a value by, from the row as read: dates as days since the epoch.
fn index_text(column: &str, v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) if column == "txn_date" => {
            let day = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("date");
            let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap();
            Some((day - epoch).num_days().to_string())
        }
        Value::String(s) => Some(s.clone()),
        other => panic!("{column}: unexpected {other}"),
    }
}

/// The entries the rows of the table at `dir` call for, per index.
async fn expected_entries(dir: &Path) -> Vec<BTreeSet<String>> {
    let table = open(dir).await;
    let rows = table.read(&ReadOptions::default()).await.expect("read");
    let rows: Vec<Map<String, Value>> = rows
        .batches
        .iter()
        .flat_map(hudi_edge::api::output::rows_as_json)
        .collect();
    INDEXES
        .iter()
        .map(|(_, column)| {
            rows.iter()
                .map(|r| {
                    let key = r["_hoodie_record_key"].as_str().expect("record key");
                    secondary_index_key(index_text(column, &r[*column]).as_deref(), Some(key))
                })
                .collect()
        })
        .collect()
}

/// The live entries of each index, by a scan of every file group.
async fn index_entries(dir: &Path) -> Vec<BTreeSet<String>> {
    let table = open(dir).await;
    let mdt = table.metadata_table(&[]).await.expect("metadata table");
    let mut out = Vec::new();
    for (partition, _) in INDEXES {
        let records = mdt.lookup(partition, Lookup::All).await.expect("scan");
        assert!(records.problems.is_empty(), "{:?}", records.problems);
        let live = records.values.into_iter().filter_map(|(k, p)| match p {
            MetadataPayload::SecondaryIndex(e) if !e.is_deleted => Some(k),
            MetadataPayload::SecondaryIndex(_) => None,
            other => panic!("{partition}: {k} holds {other:?}"),
        });
        out.push(live.collect());
    }
    out
}

/// Every index holds what the rows call for, and a lookup routed to each value's file
/// group finds that value's keys.
async fn index_matches_rows(dir: &Path, what: &str) {
    let want = expected_entries(dir).await;
    let got = index_entries(dir).await;
    for (i, (partition, _)) in INDEXES.iter().enumerate() {
        let missing: Vec<_> = want[i].difference(&got[i]).collect();
        let extra: Vec<_> = got[i].difference(&want[i]).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{what}: {partition}: missing {missing:?}, stale {extra:?}"
        );
        assert!(want[i].len() >= 10, "{what}: {partition} {:?}", want[i]);
    }
    let table = open(dir).await;
    let mdt = table.metadata_table(&[]).await.unwrap();
    let defs = mdt
        .secondary_indexes(".hoodie/.index_defs/index.json")
        .await
        .expect("index definitions");
    assert!(defs.len() >= INDEXES.len(), "{what}: {defs:?}");
    for (i, (partition, _)) in INDEXES.iter().enumerate() {
        let def = defs.iter().find(|d| d.partition == *partition).unwrap();
        for entry in &want[i] {
            let (value, key) = hudi_edge::metadata::keys::split_secondary_index_key(entry).unwrap();
            let keys = (mdt.secondary_keys(def, std::slice::from_ref(&value)).await).unwrap();
            assert!(
                keys.contains(&key.clone().unwrap()),
                "{what}: {partition}: {value:?} → {keys:?} lacks {key:?}"
            );
        }
    }
}

/// Reads filtered on the indexed columns: the plan prunes by the index where a value is
/// pinned, and returns what a read without the metadata table returns.
async fn pruned_reads_agree(dir: &Path, filters: &[&str], what: &str) {
    let table = open(dir).await;
    for f in filters {
        let filters = vec![parse_filter(f).unwrap()];
        let pruned = ReadOptions {
            filters: filters.clone(),
            ..ReadOptions::default()
        };
        let plan = table.plan(&pruned).await.expect("plan");
        assert!(
            plan.stats.files_after_secondary_index.is_some(),
            "{what}: {f}: {:?}",
            plan.stats
        );
        assert!(
            plan.stats.files_after_secondary_index.unwrap()
                <= plan.stats.files_after_partition_pruning,
            "{what}: {f}"
        );
        let plain = ReadOptions {
            filters,
            use_metadata_table: false,
            data_skipping: false,
            ..ReadOptions::default()
        };
        let (a, b) = (our_rows(dir, pruned).await, our_rows(dir, plain).await);
        assert_eq!(a, b, "{what}: {f}");
    }
}

fn row(rows: &[Map<String, Value>], id: &str) -> Map<String, Value> {
    rows.iter()
        .find(|r| r["txn_id"] == id)
        .unwrap_or_else(|| panic!("no {id}"))
        .clone()
}

fn ts_plus(r: &mut Map<String, Value>, by: i64) {
    let ts = r["txn_ts"].as_i64().unwrap();
    r.insert("txn_ts".into(), Value::from(ts + by));
}

async fn upserts_and_deletes(fixture: &str, test: &str) {
    let dir = common::table_copy(fixture, "secondary_index", test);
    index_matches_rows(&dir, "as Spark wrote it").await;
    let rows = input_rows(&dir).await;
    let mut ids: Vec<String> = (rows.iter())
        .map(|r| r["txn_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    let id = |i: usize| ids[i].as_str();

    // A changed merchant and date, an unchanged merchant (other column changed), an update
    // older by the ordering field (loses: its entries stay), new keys with a new and a
    // null merchant.
    let mut changed = row(&rows, id(0));
    changed.insert("merchant_name".into(), "Amazon Fresh".into());
    changed.insert("txn_date".into(), "2024-02-01".into());
    ts_plus(&mut changed, 1_000_000);
    let mut same = row(&rows, id(1));
    same.insert("currency".into(), "CAD".into());
    ts_plus(&mut same, 1_000_000);
    let mut older = row(&rows, id(2));
    older.insert("merchant_name".into(), "Never Seen".into());
    ts_plus(&mut older, -1_000_000_000);
    let mut new_key = row(&rows, id(3));
    new_key.insert("txn_id".into(), "TXN-900".into());
    new_key.insert("merchant_name".into(), "Uber".into());
    let mut null_merchant = row(&rows, id(3));
    null_merchant.insert("txn_id".into(), "TXN-901".into());
    null_merchant.insert("merchant_name".into(), Value::Null);
    null_merchant.insert("txn_date".into(), "2024-02-02".into());
    let upsert = [changed, same, older, new_key, null_merchant];
    write(&dir, &upsert, Operation::Upsert).await;
    index_matches_rows(&dir, "after an upsert").await;
    let entries = index_entries(&dir).await;
    assert!(
        entries[0].contains(&format!("Amazon Fresh${}", id(0))),
        "{entries:?}"
    );
    assert!(!entries[0].iter().any(|e| e.starts_with("Never Seen$")));
    assert!(entries[0].contains("\0$TXN-901"), "{entries:?}");

    // Deletes: one key with its two entries, and the new key.
    let deletes = [row(&rows, id(4)), row(&input_rows(&dir).await, "TXN-900")];
    write(&dir, &deletes, Operation::Delete).await;
    index_matches_rows(&dir, "after a delete").await;
    let entries = index_entries(&dir).await;
    let gone = format!("${}", id(4));
    assert!(
        !entries[0].iter().any(|e| e.ends_with(&gone)),
        "{entries:?}"
    );

    // Spark SQL's quoted literals and `in` lists.
    pruned_reads_agree(
        &dir,
        &[
            "merchant_name = 'Amazon Fresh'",
            "merchant_name = Amazon",
            "merchant_name in ('Uber', 'Spotify', 'Apple Store')",
            "txn_date = '2024-01-15'",
            "txn_date in ('2024-02-01', '2024-01-21') and currency = USD",
        ],
        fixture,
    )
    .await;
}

#[tokio::test]
async fn cow_partitioned() {
    upserts_and_deletes("sample_table/cow/v9_txns_simple_meta", "cow_partitioned").await;
}

#[tokio::test]
async fn cow_not_partitioned() {
    upserts_and_deletes(
        "sample_table/cow/v9_txns_nonpart_meta",
        "cow_not_partitioned",
    )
    .await;
}

#[tokio::test]
async fn mor_partitioned() {
    upserts_and_deletes(
        "sample_table/mor/avro/v9_txns_simple_meta",
        "mor_partitioned",
    )
    .await;
}

/// Compaction and clustering move rows, not values: the indexes stay as they were.
#[tokio::test]
async fn services_leave_entries() {
    let dir = common::table_copy(
        "sample_table/mor/avro/v9_txns_simple_meta",
        "secondary_index",
        "services",
    );
    let rows = input_rows(&dir).await;
    let first = rows
        .iter()
        .map(|r| r["txn_id"].as_str().unwrap())
        .min()
        .unwrap();
    let mut changed = row(&rows, first);
    changed.insert("merchant_name".into(), "Netflix Plus".into());
    ts_plus(&mut changed, 1_000_000);
    write_with(&dir, &[changed], Operation::Upsert, NO_INLINE_COMPACTION).await;
    let before = index_entries(&dir).await;
    let table = open(&dir).await;
    let report = table
        .compact(&Default::default(), &Default::default())
        .await
        .expect("compact");
    assert_eq!(report.completed.len(), 1, "{report:?}");
    index_matches_rows(&dir, "after compaction").await;
    assert_eq!(index_entries(&dir).await, before);
    let table = open(&dir).await;
    table
        .cluster(&Default::default(), &Default::default())
        .await
        .expect("cluster");
    index_matches_rows(&dir, "after clustering").await;
    assert_eq!(index_entries(&dir).await, before);
}

/// `index --secondary`: a crash at any request of the build leaves reads as they were and
/// the index unlisted; the next attempt builds it, and then it holds what the rows call for
/// (through writes after it too) and prunes reads.
#[tokio::test]
async fn index_secondary_survives_a_crash_at_every_request() {
    use hudi_edge::storage::crash::CrashAfter;
    use hudi_edge::storage::local::LocalStorage;
    use std::sync::Arc;
    let seed = common::table_path("sample_table/cow/v9_txns_simple_meta");
    let before = our_rows(&seed, ReadOptions::default()).await;
    let partition = "secondary_index_account_idx".to_string();
    let listed = |dir: &Path| {
        let text = std::fs::read_to_string(dir.join(".hoodie/hoodie.properties")).unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix("hoodie.table.metadata.partitions="))
            .unwrap_or_default()
            .split(',')
            .any(|p| p == partition)
    };
    let mut k = 0;
    loop {
        k += 1;
        let dir = common::table_copy(
            "sample_table/cow/v9_txns_simple_meta",
            "secondary_index",
            &format!("crash_{k}"),
        );
        let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&dir)), k));
        let table = hudi_edge::Table::open(crash.clone()).await.expect("open");
        let outcome = table
            .index_secondary("account_id", "account_idx", &Default::default())
            .await;
        let crashed = crash.crashed();
        assert_eq!(
            our_rows(&dir, ReadOptions::default()).await,
            before,
            "crash at {k}"
        );
        // Listed means built: only the clean-up after the commit point (the properties
        // backup) was cut short.
        if crashed && !listed(&dir) {
            let redo = open(&dir).await;
            redo.index_secondary("account_id", "account_idx", &Default::default())
                .await
                .expect("redo");
        } else if !crashed {
            let built = outcome.expect("build").expect("something built");
            assert_eq!(built.partitions[0].file_groups, 10);
            assert!(k > 10, "a build takes more than {k} requests");
        }
        assert!(listed(&dir), "crash at {k}: not listed after the redo");
        let want = account_entries(&dir).await;
        let got = live_entries(&dir, &partition).await;
        assert_eq!(got, want, "crash at {k}");
        assert!(
            open(&dir)
                .await
                .index_secondary("account_id", "account_idx", &Default::default())
                .await
                .unwrap()
                .is_none(),
            "built twice"
        );
        if crashed {
            let _ = std::fs::remove_dir_all(&dir);
            continue;
        }
        // Writes after the build keep it; reads prune by it.
        let rows = input_rows(&dir).await;
        let mut moved = rows[0].clone();
        moved.insert("account_id".into(), "ACC-NEW".into());
        ts_plus(&mut moved, 1_000_000);
        write(&dir, &[moved], Operation::Upsert).await;
        write(&dir, &[rows[1].clone()], Operation::Delete).await;
        assert_eq!(
            live_entries(&dir, &partition).await,
            account_entries(&dir).await
        );
        index_matches_rows(&dir, "after index --secondary and writes").await;
        pruned_reads_agree(
            &dir,
            &["account_id = 'ACC-NEW'", "account_id in ('ACC-A', 'ACC-B')"],
            "index --secondary",
        )
        .await;
        break;
    }
}

async fn account_entries(dir: &Path) -> BTreeSet<String> {
    let table = open(dir).await;
    let rows = table.read(&ReadOptions::default()).await.expect("read");
    rows.batches
        .iter()
        .flat_map(hudi_edge::api::output::rows_as_json)
        .map(|r| {
            let key = r["_hoodie_record_key"].as_str().unwrap().to_string();
            secondary_index_key(r["account_id"].as_str(), Some(&key))
        })
        .collect()
}

async fn live_entries(dir: &Path, partition: &str) -> BTreeSet<String> {
    let table = open(dir).await;
    let mdt = table.metadata_table(&[]).await.expect("metadata table");
    let records = mdt.lookup(partition, Lookup::All).await.expect("scan");
    records
        .values
        .into_iter()
        .filter(|(_, p)| matches!(p, MetadataPayload::SecondaryIndex(e) if !e.is_deleted))
        .map(|(k, _)| k)
        .collect()
}

/// Indexes this writer cannot keep exactly are refused by name (`UNSUPPORTED`), and the
/// table reads as before: an expression index partition, and a secondary index over a
/// function of its column.
#[tokio::test]
async fn expression_indexes_are_refused_by_name() {
    let fixture = "sample_table/cow/v9_txns_simple_meta";
    let edit = |dir: &Path, file: &str, from: &str, to: &str| {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file}");
        std::fs::write(&path, text.replace(from, to)).unwrap();
    };
    for (case, name) in [
        ("expr", "expr_index_amount_bucket"),
        ("function", "secondary_index_merchant_idx"),
    ] {
        let dir = common::table_copy(fixture, "secondary_index", &format!("refused_{case}"));
        if case == "expr" {
            edit(
                &dir,
                ".hoodie/hoodie.properties",
                "secondary_index_txn_date_idx\n",
                "secondary_index_txn_date_idx,expr_index_amount_bucket\n",
            );
        } else {
            edit(
                &dir,
                ".hoodie/.index_defs/index.json",
                "\"indexFunction\" : \"identity\",\n      \"sourceFields\" : [ \"merchant_name\" ]",
                "\"indexFunction\" : \"upper\",\n      \"sourceFields\" : [ \"merchant_name\" ]",
            );
        }
        let before = our_rows(&dir, ReadOptions::default()).await;
        let instants = timeline_names(&dir, false);
        let rows = input_rows(&dir).await;
        let table = open(&dir).await;
        let err = write_on(&table, &rows[..1], Operation::Upsert)
            .await
            .expect_err("refused");
        assert_eq!(err.code(), "UNSUPPORTED", "{case}: {err}");
        assert!(err.to_string().contains(name), "{case}: {err}");
        assert_eq!(
            our_rows(&dir, ReadOptions::default()).await,
            before,
            "{case}"
        );
        let completed: Vec<String> = (timeline_names(&dir, false).into_iter())
            .filter(|n| !instants.contains(n) && n.ends_with("commit"))
            .collect();
        assert!(
            completed.is_empty(),
            "{case}: {completed:?} after a refusal"
        );
    }
}

/// The CLI: `index --secondary COLUMN [--index-name NAME]`, then a plan through it; a column
/// the table lacks and a table without a record index are refused.
#[test]
fn cli_index_secondary() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hudi-edge"))
            .args(args)
            .output()
            .expect("run hudi-edge");
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    };
    let dir = common::table_copy(
        "sample_table/cow/v9_txns_simple_meta",
        "secondary_index",
        "cli",
    );
    let d = dir.to_str().unwrap();
    let (ok, out, err) = run(&["index", d, "--secondary", "currency", "--json"]);
    assert!(ok, "{err}");
    let built: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        built["partitions"][0]["partition"],
        "secondary_index_currency_idx"
    );
    assert_eq!(built["partitions"][0]["file_groups"], 10);
    let (ok, out, err) = run(&["plan", d, "--filter", "currency = EUR", "--json"]);
    assert!(ok, "{err}");
    let plan: Value = serde_json::from_str(&out).unwrap();
    let stats = &plan["stats"];
    assert!(
        stats["files_after_secondary_index"].as_u64().unwrap() >= 1,
        "{stats}"
    );
    assert!(
        stats["files_after_secondary_index"].as_u64()
            < stats["files_after_partition_pruning"].as_u64(),
        "{stats}"
    );
    let (ok, _, err) = run(&["index", d, "--secondary", "nope", "--index-name", "n"]);
    assert!(!ok && err.contains("nope"), "{err}");
    let plain = common::table_copy(
        "sample_table/cow/v9_txns_simple_nometa",
        "secondary_index",
        "cli_no_ri",
    );
    let (ok, _, err) = run(&["index", plain.to_str().unwrap(), "--secondary", "currency"]);
    assert!(!ok && err.contains("record index"), "{err}");
}

/// A table version 8 index (V1: sharded by the whole entry key, its definition without a
/// version): writes keep it, each entry where a lookup routed by its key asks, and reads
/// prune by it.
#[tokio::test]
async fn version_8_index_sharded_by_whole_key() {
    let dir = common::table_copy(
        "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
        "secondary_index",
        "v8",
    );
    let partition = "secondary_index_rider_idx";
    let expected = |dir: &Path| {
        let dir = dir.to_path_buf();
        async move {
            let table = open(&dir).await;
            let rows = table.read(&ReadOptions::default()).await.expect("read");
            (rows.batches.iter())
                .flat_map(hudi_edge::api::output::rows_as_json)
                .map(|r| {
                    let key = r["_hoodie_record_key"].as_str().unwrap().to_string();
                    secondary_index_key(r["rider"].as_str(), Some(&key))
                })
                .collect::<BTreeSet<String>>()
        }
    };
    assert_eq!(
        live_entries(&dir, partition).await,
        expected(&dir).await,
        "as Spark wrote it"
    );
    let rows = input_rows(&dir).await;
    let mut changed = rows[0].clone();
    changed.insert("rider".into(), "rider-Z".into());
    let ts = changed["ts"].as_i64().unwrap();
    changed.insert("ts".into(), Value::from(ts + 1_000_000));
    write_with(&dir, &[changed], Operation::Upsert, NO_INLINE_COMPACTION).await;
    write_with(
        &dir,
        &[rows[1].clone()],
        Operation::Delete,
        NO_INLINE_COMPACTION,
    )
    .await;
    let want = expected(&dir).await;
    assert_eq!(live_entries(&dir, partition).await, want, "after writes");
    // Every entry where a lookup by its whole key (V1's shard) finds it.
    let table = open(&dir).await;
    let mdt = table.metadata_table(&[]).await.unwrap();
    let keys: Vec<String> = want.iter().cloned().collect();
    let found = mdt.lookup(partition, Lookup::Keys(&keys)).await.unwrap();
    assert_eq!(found.values.len(), keys.len());
    pruned_reads_agree(
        &dir,
        &["rider = rider-Z", "rider in (rider-A, rider-C)"],
        "v8",
    )
    .await;
}
