//! Writes into copies of the Apache Hudi-written fixtures, checked by two readers: after an
//! upsert (updates, inserts, duplicate keys in one batch, a new partition) and a delete
//! (an existing and a missing key), this engine's snapshot equals the expected rows, PyPI
//! `hudi` (hudi-rs) returns the same rows field for field, time travel to the commit before
//! returns the old rows in both, and an incremental query returns exactly the batch (on tables
//! without meta fields it is refused, as Hudi refuses it).
//! Apache Hudi Spark reads the same tables in `tests/write/spark_check.sh` (recorded).

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use helpers::*;
use hudi_edge::read::{QueryType, ReadOptions};
use hudi_edge::write::{Operation, WriteOptions};
use serde_json::{Map, Value};

fn bump(row: &mut Map<String, Value>, field: &str, by: i64) {
    if let Some(Value::Number(n)) = row.get(field) {
        if let Some(i) = n.as_i64() {
            row.insert(field.to_string(), Value::from(i + by));
        }
    }
}

async fn latest(dir: &Path) -> (String, String) {
    let table = open(dir).await;
    let i = table
        .timeline()
        .latest_completed_write()
        .cloned()
        .expect("a commit");
    (i.requested_time, i.completion_time.unwrap_or_default())
}

/// Our rows of an incremental read after `start` (up to `end`, else the latest).
async fn incremental_rows(dir: &Path, start: &str, end: Option<&str>) -> Vec<String> {
    let options = ReadOptions {
        query: QueryType::Incremental,
        start: Some(start.to_string()),
        end: end.map(str::to_string),
        ..ReadOptions::default()
    };
    our_rows(dir, options).await
}

/// Upsert, then delete, each checked against the model and hudi-rs.
async fn round_trip(fixture: &str, test: &str) {
    round_trip_in(&common::table_copy(fixture, "write", test), fixture).await;
}

/// The round trip on the table at `dir` (`fixture` names it in messages).
async fn round_trip_in(dir: &Path, fixture: &str) {
    let dir = dir.to_path_buf();
    let table = open(&dir).await;
    let config = table.config().clone();
    let all_rows = input_rows(&dir).await;
    // Rows whose key the snapshot holds once (a non-global table may repeat a key across
    // partitions; Spark left one fixture with a key in two file groups).
    let key_of = |r: &Map<String, Value>| {
        config
            .record_key_fields
            .iter()
            .map(|f| r.get(f).map(Value::to_string).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut seen = std::collections::HashMap::new();
    for r in &all_rows {
        *seen.entry(key_of(r)).or_insert(0) += 1;
    }
    let (unique, repeated): (Vec<_>, Vec<_>) =
        all_rows.into_iter().partition(|r| seen[&key_of(r)] == 1);
    let rows = unique;
    assert!(rows.len() >= 3, "{fixture}: too few rows to test with");
    let edit = editable(&table, &rows[0])
        .await
        .expect("a string column to edit");
    let ordering = config.ordering_fields.first().cloned();
    // hudi-rs refuses tables that do not store their partition columns (Spark reads them:
    // tests/write/spark_check.sh).
    let hudi_rs_same = |args: &[&str], ours: &[String], what: &str| {
        if !config.drop_partition_columns {
            same_rows(&hudi_rs_rows(&dir, args), ours, what);
        }
    };
    let before = our_rows(&dir, ReadOptions::default()).await;
    hudi_rs_same(
        &[],
        &before,
        &format!("{fixture}: hudi-rs disagrees before any write"),
    );
    let (before_instant, before_completion) = latest(&dir).await;

    // Upsert: two updates, two new keys (one given twice: the higher ordering value wins).
    let mut batch = Vec::new();
    for (i, r) in rows.iter().take(2).enumerate() {
        let mut u = r.clone();
        u.insert(edit.clone(), Value::from(format!("edited-{i}")));
        if let Some(o) = &ordering {
            bump(&mut u, o, 1);
        }
        batch.push(u);
    }
    let new_key = |base: &Map<String, Value>, tag: &str| {
        let mut n = base.clone();
        for f in &config.record_key_fields {
            let value = match n.get(f) {
                Some(Value::Number(_)) => Value::from(900_000 + tag.as_bytes()[0] as i64),
                _ => Value::from(format!("NEW-{tag}")),
            };
            n.insert(f.clone(), value);
        }
        n
    };
    let mut winner = new_key(&rows[1], "A");
    winner.insert(edit.clone(), Value::from("winner"));
    let mut loser = new_key(&rows[1], "A");
    loser.insert(edit.clone(), Value::from("loser"));
    if let Some(o) = &ordering {
        bump(&mut winner, o, 5);
    }
    let fresh = new_key(&rows[2], "B");
    let by_event_time = ordering.is_some();
    if by_event_time {
        batch.extend([winner.clone(), loser.clone(), fresh.clone()]);
    } else {
        batch.extend([loser.clone(), winner.clone(), fresh.clone()]);
    }
    let result = write(&dir, &batch, Operation::Upsert).await;
    assert_eq!(
        (
            result.records.updated,
            result.records.inserted,
            result.records.deduplicated
        ),
        (2, 2, 1),
        "{fixture}: {result:?}"
    );

    let mut model: Vec<Map<String, Value>> = rows[2..].to_vec();
    model.extend(repeated.iter().cloned());
    model.extend(batch[..2].iter().cloned());
    model.extend([winner.clone(), fresh.clone()]);
    let after = our_rows(&dir, ReadOptions::default()).await;
    let expected_data = data_only(&model_rows(&dir, &model).await);
    same_rows(
        &data_only(&after),
        &expected_data,
        &format!("{fixture}: snapshot after the upsert"),
    );
    hudi_rs_same(&[], &after, &format!("{fixture}: hudi-rs after the upsert"));
    if config.drop_partition_columns {
        stores_no_partition_columns(&dir, &result.files_written, &config.partition_fields);
    }

    // Time travel to the commit before, in both readers.
    let old = our_rows(
        &dir,
        ReadOptions {
            as_of: Some(before_instant.clone()),
            ..ReadOptions::default()
        },
    )
    .await;
    same_rows(
        &old,
        &before,
        &format!("{fixture}: time travel to {before_instant}"),
    );
    hudi_rs_same(
        &["--as-of", &before_instant],
        &before,
        &format!("{fixture}: hudi-rs time travel"),
    );

    // Incremental from the previous commit: exactly the batch (after pre-combining). Without
    // meta fields no row says which commit wrote it: Hudi refuses the query, and so do we.
    if config.populate_meta_fields {
        let changed = incremental_rows(&dir, &before_completion, None).await;
        let mut batch_rows = batch[..2].to_vec();
        batch_rows.extend([winner, fresh]);
        same_rows(
            &data_only(&changed),
            &data_only(&model_rows(&dir, &batch_rows).await),
            &format!("{fixture}: incremental since {before_completion}"),
        );
        for r in &changed {
            assert!(r.contains(&result.instant), "{fixture}: commit time of {r}");
        }
    } else {
        let options = ReadOptions {
            query: QueryType::Incremental,
            start: Some(before_completion.clone()),
            ..ReadOptions::default()
        };
        let e = open(&dir).await.read(&options).await.unwrap_err();
        assert_eq!(e.code(), "UNSUPPORTED", "{fixture}: {e}");
        // Merge-On-Read with the record index appends new keys to small slices' logs.
        if result.files_written.iter().any(|f| f.ends_with(".parquet")) {
            written_without_meta_fields(&dir, &result.instant);
        }
    }

    // Delete: one key that exists, one that does not.
    let victim = rows[2].clone();
    let mut missing = rows[2].clone();
    for f in &config.record_key_fields {
        let value = match missing.get(f) {
            Some(Value::Number(_)) => Value::from(987_654),
            _ => Value::from("NO-SUCH-KEY"),
        };
        missing.insert(f.clone(), value);
    }
    let result = write(&dir, &[victim.clone(), missing], Operation::Delete).await;
    assert_eq!(
        (result.records.deleted, result.records.delete_missing),
        (1, 1),
        "{fixture}: {result:?}"
    );
    let after_delete = our_rows(&dir, ReadOptions::default()).await;
    let victim_data = data_only(&model_rows(&dir, &[victim]).await);
    let remaining = data_only(&after_delete);
    assert!(
        !remaining.contains(&victim_data[0]),
        "{fixture}: deleted row still there"
    );
    assert_eq!(
        remaining.len(),
        expected_data.len() - 1,
        "{fixture}: rows after the delete"
    );
    hudi_rs_same(
        &[],
        &after_delete,
        &format!("{fixture}: hudi-rs after the delete"),
    );
}

/// The base files among `files` leave `partition_fields` out, as Java's do when the table
/// does not store them.
fn stores_no_partition_columns(dir: &Path, files: &[String], partition_fields: &[String]) {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let parquet_files: Vec<&String> = files.iter().filter(|f| f.ends_with(".parquet")).collect();
    assert!(!parquet_files.is_empty(), "no base file among {files:?}");
    for f in parquet_files {
        let reader = SerializedFileReader::new(std::fs::File::open(dir.join(f)).unwrap()).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let stored: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
        for p in partition_fields {
            assert!(!stored.contains(&p.as_str()), "{f} stores {p}: {stored:?}");
        }
    }
}

macro_rules! round_trips {
    ($($name:ident => $fixture:literal),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                round_trip($fixture, stringify!($name)).await;
            }
        )*
    };
}

round_trips! {
    cow_v9_simple => "sample_table/cow/v9_txns_simple_nometa",
    mor_v9_simple => "sample_table/mor/avro/v9_txns_simple_nometa",
    cow_v9_complex => "sample_table/cow/v9_txns_complex_nometa",
    mor_v9_complex => "sample_table/mor/avro/v9_txns_complex_nometa",
    cow_v9_nonpartitioned => "sample_table/cow/v9_txns_nonpart_nometa",
    mor_v9_nonpartitioned => "sample_table/mor/avro/v9_txns_nonpart_nometa",
    cow_v8_simple => "sample_table/cow/v8_simplekeygen_nonhivestyle",
    cow_v8_nonpartitioned => "sample_table/cow/v8_nonpartitioned",
    // Without meta fields (virtual keys): keys come from the key fields, files carry null
    // meta columns and no bloom filter.
    cow_v8_no_meta_fields => "sample_table/cow/v8_simplekeygen_hivestyle_no_metafields",
    // With a metadata table: files, column_stats, partition_stats, record_index.
    cow_v9_mdt_full => "sample_table/cow/v9_txns_simple_overwrite",
    // Without meta fields, with files, column_stats and partition_stats.
    cow_v9_no_meta_fields_mdt => "spark_variants/spark_v9_no_meta_fields_cow",
    mor_v9_no_meta_fields_mdt => "spark_variants/spark_v9_no_meta_fields_mor",
    // The same with a record index, which Hudi leaves empty there: tagged by key columns.
    mor_v9_no_meta_fields_record_index => "spark_variants/spark_v9_no_meta_fields_record_index_mor",
    // Partition columns not stored (drop.partition.columns): taken from the input for the
    // path, left out of the files.
    cow_v9_drop_partition_columns => "spark_variants/spark_v9_drop_partcols",
    mor_v9_drop_partition_columns => "spark_variants/spark_v9_drop_partcols_mor",
    // URL-encoded partition paths ('/', ' ' and '%' in values).
    cow_v9_urlencoded => "spark_variants/spark_v9_urlencoded",
    // Column stats on decimal, date and timestamp columns, with a record index.
    cow_v9_colstats_types => "spark_variants/spark_v9_colstats_types",
    cow_v9_mdt_epoch_millis => "sample_table/cow/v9_timebasedkeygen_epochmillis",
    mor_v9_mdt_date_string => "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
    // hudi-rs' tables, whose schema declares decimals as Avro `bytes`.
    cow_v9_hudi_rs_decimals => "hudi_rs/hudi_rs_decimals_cow_v9",
    mor_v9_hudi_rs_decimals => "hudi_rs/hudi_rs_decimals_mor_v9",
}

/// hudi-rs declares decimals as Avro `bytes`. New decimal values (other keys' values with the
/// sign flipped, so every precision's extremes of both signs, and nulls) upserted into its
/// tables keep that declaration (Avro `bytes` in log blocks, fixed-length bytes of the size
/// the precision needs in base files) and read back as written, here and in hudi-rs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hudi_rs_bytes_decimals_written_back() {
    for (fixture, test) in [
        ("hudi_rs/hudi_rs_decimals_cow_v9", "bytes-decimals-cow"),
        ("hudi_rs/hudi_rs_decimals_mor_v9", "bytes-decimals-mor"),
    ] {
        let dir = common::table_copy(fixture, "write", test);
        let table = open(&dir).await;
        let visible = table.timeline().visibility_as_of(None);
        let (avro, _) = hudi_edge::snapshot::schema::table_avro_schema(table.client(), &visible)
            .await
            .unwrap()
            .expect("a schema");
        let declared = decimal_encodings(&serde_json::from_str(&avro).unwrap());
        assert!(
            declared.len() >= 4 && declared.values().all(|(how, _)| how == "bytes"),
            "{fixture}: {declared:?}"
        );
        // hudi-rs stores them by precision: INT32, INT64, or fixed-length bytes beyond 18.
        let hudi_rs_types = decimal_types_in(&dir);
        let rows = input_rows(&dir).await;
        let flip = |v: &Value| match v.as_str() {
            Some(t) => Value::from(t.strip_prefix('-').map_or(format!("-{t}"), str::to_string)),
            None => Value::Null,
        };
        let mut batch = Vec::new();
        // The first key holds every column's largest value (hudi-rs' writes put them there).
        for (i, r) in rows.iter().take(4).enumerate() {
            let mut u = r.clone();
            for c in declared.keys() {
                u.insert(c.clone(), flip(&rows[(i + 1) % 4][c]));
            }
            bump(&mut u, "ts", 1000);
            batch.push(u);
        }
        let mut fresh = batch[0].clone();
        fresh.insert("id".into(), Value::from("new-negated"));
        let mut nulls = batch[1].clone();
        nulls.insert("id".into(), Value::from("new-nulls"));
        for c in declared.keys() {
            nulls.insert(c.clone(), Value::Null);
        }
        batch.extend([fresh, nulls]);
        let result = write(&dir, &batch, Operation::Upsert).await;
        assert_eq!(
            (result.records.updated, result.records.inserted),
            (4, 2),
            "{fixture}: {result:?}"
        );

        let mut model = rows[4..].to_vec();
        model.extend(batch.iter().cloned());
        let after = our_rows(&dir, ReadOptions::default()).await;
        same_rows(
            &data_only(&after),
            &data_only(&model_rows(&dir, &model).await),
            &format!("{fixture}: snapshot after the upsert"),
        );
        same_rows(
            &hudi_rs_rows(&dir, &[]),
            &after,
            &format!("{fixture}: hudi-rs"),
        );

        // What the files hold: the table's encoding, base files and log blocks alike.
        let (mut base_files, mut log_blocks) = (0, 0);
        for f in &result.files_written {
            let bytes = bytes::Bytes::from(std::fs::read(dir.join(f)).unwrap());
            if f.ends_with(".parquet") {
                base_files += 1;
                // `bytes` decimals as fixed-length bytes of the size their precision needs
                // (readable by Spark's vectorized reader, which takes no BINARY decimal below
                // precision 19): the size hudi-rs chose where it chose fixed-length bytes.
                for (column, physical) in parquet_decimals(bytes) {
                    let (how, precision) = &declared[&column];
                    let size = match how.as_str() {
                        "bytes" => (1..=16u32)
                            .find(|n| 2f64.powi(8 * *n as i32 - 1) > 10f64.powi(*precision as i32))
                            .unwrap(),
                        fixed => fixed.parse().unwrap(),
                    };
                    let want = format!("FIXED_LEN_BYTE_ARRAY({size})");
                    assert_eq!(physical, want, "{fixture} {f}: {column}");
                    let theirs = &hudi_rs_types[&column];
                    assert!(
                        theirs.contains(&want) || theirs.iter().all(|t| !t.starts_with("FIXED")),
                        "{fixture} {f}: {column}: hudi-rs wrote {theirs:?}"
                    );
                }
            } else {
                for block in hudi_edge::log_file::parse_log_bytes(f, bytes).unwrap() {
                    let Some(schema) = block.header.get(hudi_edge::log_file::HeaderKey::Schema)
                    else {
                        continue;
                    };
                    log_blocks += 1;
                    let in_block = decimal_encodings(&serde_json::from_str(schema).unwrap());
                    assert_eq!(in_block, declared, "{fixture} {f}: block schema");
                }
            }
        }
        // Merge-On-Read with the record index appends the new keys to small slices' logs.
        let mor = table.config().table_type == hudi_edge::config::TableType::MergeOnRead;
        assert!(
            (mor || base_files > 0) && (log_blocks > 0) == mor,
            "{fixture}: {result:?}"
        );
    }
}

/// Each decimal field of an Avro record schema: how it is stored (`bytes`, or its `fixed`
/// size) and its precision.
fn decimal_encodings(avro: &Value) -> BTreeMap<String, (String, u64)> {
    let mut out = BTreeMap::new();
    for f in avro["fields"].as_array().unwrap() {
        let branches = match &f["type"] {
            Value::Array(b) => b.clone(),
            t => vec![t.clone()],
        };
        for t in branches {
            if t["logicalType"] == "decimal" {
                let how = match t["type"].as_str().unwrap() {
                    "fixed" => t["size"].to_string(),
                    other => other.to_string(),
                };
                let name = f["name"].as_str().unwrap().to_string();
                out.insert(name, (how, t["precision"].as_u64().unwrap()));
            }
        }
    }
    out
}

/// Every decimal column of the table's base files with the physical types they hold it as.
fn decimal_types_in(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::<String, BTreeSet<String>>::new();
    for e in walkdir(dir) {
        if e.extension().is_some_and(|x| x == "parquet") && !e.to_string_lossy().contains(".hoodie")
        {
            let bytes = bytes::Bytes::from(std::fs::read(&e).unwrap());
            for (column, physical) in parquet_decimals(bytes) {
                out.entry(column).or_default().insert(physical);
            }
        }
    }
    out
}

fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A Parquet file's decimal columns and their physical types.
fn parquet_decimals(bytes: bytes::Bytes) -> Vec<(String, String)> {
    use parquet::basic::{LogicalType, Type};
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(bytes).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    schema
        .columns()
        .iter()
        .filter(|c| matches!(c.logical_type_ref(), Some(LogicalType::Decimal { .. })))
        .map(|c| {
            let t = match c.physical_type() {
                Type::FIXED_LEN_BYTE_ARRAY => format!("FIXED_LEN_BYTE_ARRAY({})", c.type_length()),
                t => t.to_string(),
            };
            (c.name().to_string(), t)
        })
        .collect()
}

/// Hudi leaves the record index of a table without meta fields empty, so Spark's upserts
/// there inserted keys again: tagging reads key columns instead, an update of a key held once
/// lands in place, and a key Spark left in several file groups is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_index_without_meta_fields_tags_by_key_columns() {
    let fixture = "spark_variants/spark_v9_no_meta_fields_record_index_mor";
    let dir = common::table_copy(fixture, "write", "record_index_without_meta_fields");
    let rows = input_rows(&dir).await;
    let held = |id: &str| -> Vec<Map<String, Value>> {
        rows.iter().filter(|r| r["id"] == id).cloned().collect()
    };
    assert_eq!(
        held("id-005").len(),
        3,
        "Spark's upserts inserted id-005 again"
    );
    let before = our_rows(&dir, ReadOptions::default()).await;
    let table = open(&dir).await;
    let err = write_on(&table, &held("id-005")[..1], Operation::Upsert)
        .await
        .expect_err("a key in three file groups");
    assert_eq!(err.code(), "CORRUPT", "{err}");
    assert!(err.to_string().contains("id-005"), "{err}");
    assert_eq!(
        our_rows(&dir, ReadOptions::default()).await,
        before,
        "the refused upsert changed the snapshot"
    );

    let mut update = held("id-004").remove(0);
    update.insert("name".into(), Value::from("edited"));
    bump(&mut update, "ts", 1000);
    let result = write(&dir, &[update], Operation::Upsert).await;
    assert_eq!(
        (result.records.updated, result.records.inserted),
        (1, 0),
        "{result:?}"
    );
    let after = input_rows(&dir).await;
    let now: Vec<_> = after.iter().filter(|r| r["id"] == "id-004").collect();
    assert_eq!(now.len(), 1, "{now:?}");
    assert_eq!(now[0]["name"], "edited");
    same_rows(
        &hudi_rs_rows(&dir, &[]),
        &our_rows(&dir, ReadOptions::default()).await,
        "hudi-rs after the update",
    );
}

/// A table this engine created (`Table::create`), six rows inserted by this writer, then
/// the whole round trip above; Spark reads it in tests/write/spark_check.sh like the others.
async fn created_round_trip(
    test: &str,
    new: hudi_edge::write::create::NewTable,
    seed: impl Fn(usize) -> Value,
) {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("write")
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    let storage = Arc::new(hudi_edge::storage::local::LocalStorage::new(&dir));
    let table = hudi_edge::Table::create(storage, &new)
        .await
        .expect("create");
    assert!(table.timeline().instants.is_empty());
    assert_eq!(
        our_rows(&dir, ReadOptions::default()).await,
        hudi_rs_rows(&dir, &[]),
        "{test}: empty in both readers"
    );
    let rows: Vec<Map<String, Value>> = (0..6)
        .map(|i| seed(i).as_object().unwrap().clone())
        .collect();
    let result = write(&dir, &rows, Operation::Insert).await;
    assert_eq!(result.records.inserted, rows.len() as u64, "{test}");
    round_trip_in(&dir, test).await;
}

fn new_table(
    name: &str,
    table_type: hudi_edge::config::TableType,
    columns: &str,
    [keys, partitions, ordering]: [&str; 3],
) -> hudi_edge::write::create::NewTable {
    let list = |s: &str| -> Vec<String> {
        s.split(',')
            .filter(|f| !f.is_empty())
            .map(String::from)
            .collect()
    };
    hudi_edge::write::create::NewTable {
        name: name.into(),
        table_type,
        schema: hudi_edge::schema::to_avro::schema_from_ddl(columns).unwrap(),
        record_key_fields: list(keys),
        partition_fields: list(partitions),
        ordering_fields: list(ordering),
        options: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_cow_partitioned() {
    let mut new = new_table(
        "orders",
        hudi_edge::config::TableType::CopyOnWrite,
        "order_id STRING NOT NULL, ts BIGINT, region STRING, amount DECIMAL(12,2), \
         placed_at TIMESTAMP, placed_on DATE, note STRING, tags ARRAY<STRING>, \
         address STRUCT<city: STRING, zip INT>",
        ["order_id", "region", "ts"],
    );
    new.options.insert(
        "hoodie.datasource.write.hive_style_partitioning".into(),
        "true".into(),
    );
    created_round_trip("created_cow_partitioned", new, |i| {
        serde_json::json!({
            "order_id": format!("O-{i}"), "ts": i, "region": if i % 2 == 0 { "us" } else { "eu" },
            "amount": format!("{i}.25"), "placed_at": format!("2024-05-0{}T10:00:00Z", i + 1),
            "placed_on": format!("2024-05-0{}", i + 1), "note": format!("n{i}"),
            "tags": ["a", "b"], "address": {"city": "c", "zip": i},
        })
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_mor_nonpartitioned_commit_time() {
    let new = new_table(
        "events",
        hudi_edge::config::TableType::MergeOnRead,
        "id BIGINT NOT NULL, note STRING, score DOUBLE, flag BOOLEAN",
        ["id", "", ""],
    );
    created_round_trip("created_mor_nonpartitioned_commit_time", new, |i| serde_json::json!({"id": i, "note": format!("n{i}"), "score": i as f64 / 4.0, "flag": i % 2 == 0})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_mor_complex_keys() {
    let new = new_table(
        "visits",
        hudi_edge::config::TableType::MergeOnRead,
        "site STRING NOT NULL, visit INT NOT NULL, country STRING, day DATE, ts BIGINT, page STRING",
        ["site,visit", "country,day", "ts"],
    );
    created_round_trip("created_mor_complex_keys", new, |i| serde_json::json!({"site": format!("s{}", i % 2), "visit": i, "country": if i % 2 == 0 { "de" } else { "fr" }, "day": "2024-01-02", "ts": 10 + i, "page": format!("/p{i}")})).await;
}

/// Created without meta fields (virtual keys): keys from the key fields; Spark reads it and
/// keeps writing in tests/write/spark_no_meta_fields.sh.
async fn created_without_meta_fields(test: &str, table_type: hudi_edge::config::TableType) {
    let mut new = new_table(
        "events",
        table_type,
        "event_id BIGINT NOT NULL, kind STRING, ts BIGINT, day DATE, note STRING",
        ["event_id", "day", "ts"],
    );
    new.options
        .insert("hoodie.populate.meta.fields".into(), "false".into());
    created_round_trip(test, new, |i| serde_json::json!({"event_id": i, "kind": format!("k{}", i % 3), "ts": 100 + i, "day": if i % 2 == 0 { "2024-05-01" } else { "2024-05-02" }, "note": format!("n{i}")})).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_cow_no_meta_fields() {
    use hudi_edge::config::TableType::CopyOnWrite;
    created_without_meta_fields("created_cow_no_meta_fields", CopyOnWrite).await;
}

/// A timestamp key without meta fields: delete blocks carry the key generator's text for it
/// (epoch microseconds), which the merge must match against the keys of the base rows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timestamp_keys_without_meta_fields_merge() {
    let mut new = new_table(
        "readings",
        hudi_edge::config::TableType::MergeOnRead,
        "at TIMESTAMP NOT NULL, sensor STRING, ts BIGINT, note STRING",
        ["at", "sensor", "ts"],
    );
    new.options
        .insert("hoodie.populate.meta.fields".into(), "false".into());
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("write")
        .join("mor_timestamp_key_virtual_keys");
    let _ = std::fs::remove_dir_all(&dir);
    let storage = Arc::new(hudi_edge::storage::local::LocalStorage::new(&dir));
    hudi_edge::Table::create(storage, &new)
        .await
        .expect("create");
    let row = |i: u32, note: &str| {
        let r = serde_json::json!({"at": format!("2024-05-01T00:00:0{i}Z"), "sensor": "s", "ts": 100 + i, "note": note});
        r.as_object().unwrap().clone()
    };
    write(
        &dir,
        &[row(1, "a"), row(2, "b"), row(3, "c")],
        Operation::Insert,
    )
    .await;
    let updated = write(&dir, &[row(1, "a2")], Operation::Upsert).await;
    assert_eq!(updated.records.updated, 1);
    let deleted = write(&dir, &[row(2, "")], Operation::Delete).await;
    assert_eq!(deleted.records.deleted, 1);
    let ours = our_rows(&dir, ReadOptions::default()).await;
    assert_eq!(ours.len(), 2, "{ours:?}");
    for note in ["a2", "c"] {
        assert!(
            ours.iter()
                .any(|r| r.contains(&format!("\"note\":\"{note}\""))),
            "{note} in {ours:?}"
        );
    }
    // hudi-rs refuses virtual keys of timestamp type. Spark 1.1.1 read this table (snapshot
    // and time travel to both earlier commits) as we do: stop 40's closing note.
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn created_mor_no_meta_fields() {
    use hudi_edge::config::TableType::MergeOnRead;
    created_without_meta_fields("created_mor_no_meta_fields", MergeOnRead).await;
}

#[tokio::test]
async fn refuses_tables_it_cannot_create() {
    use hudi_edge::config::TableType::CopyOnWrite;
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("create-refused");
    let _ = std::fs::remove_dir_all(&dir);
    let storage = Arc::new(hudi_edge::storage::local::LocalStorage::new(&dir));
    let good = new_table("t", CopyOnWrite, "id STRING, v DOUBLE", ["id", "", ""]);
    let mut unknown_option = good.clone();
    unknown_option
        .options
        .insert("hoodie.bootstrap.base.path".into(), "/elsewhere".into());
    let mut populate_maybe = good.clone();
    populate_maybe
        .options
        .insert("hoodie.populate.meta.fields".into(), "maybe".into());
    // (table name, columns, record key, what the error says): all INVALID_ARGUMENT.
    let invalid = [
        ("t", "id STRING", "nope", "not a column"),
        ("t", "id STRING, v DOUBLE", "v", "of type Float64"),
        (
            "t",
            "id STRING, _hoodie_record_key STRING",
            "id",
            "meta column",
        ),
        ("t", "id STRING, ID INT", "id", "declared twice"),
        ("my-table", "id STRING", "id", "table name"),
        ("t", "id STRING", "", "record key"),
    ];
    let mut cases: Vec<_> = invalid
        .iter()
        .map(|(name, columns, key, says)| {
            let new = new_table(name, CopyOnWrite, columns, [key, "", ""]);
            (new, "INVALID_ARGUMENT", *says)
        })
        .collect();
    cases.push((unknown_option, "UNSUPPORTED", "hoodie.bootstrap.base.path"));
    cases.push((populate_maybe, "INVALID_ARGUMENT", "true or false"));
    for (new, code, says) in cases {
        let e = hudi_edge::Table::create(storage.clone(), &new)
            .await
            .unwrap_err();
        assert_eq!(e.code(), code, "{e}");
        assert!(e.to_string().contains(says), "{e}");
        assert!(!dir.join(".hoodie").exists(), "nothing written for {e}");
    }
    hudi_edge::Table::create(storage.clone(), &good)
        .await
        .expect("create");
    let before = std::fs::read(dir.join(".hoodie/hoodie.properties")).unwrap();
    let e = hudi_edge::Table::create(storage, &good).await.unwrap_err();
    assert_eq!(e.code(), "CONFLICT", "{e}");
    assert!(e.to_string().contains("a table already exists"), "{e}");
    assert_eq!(
        std::fs::read(dir.join(".hoodie/hoodie.properties")).unwrap(),
        before
    );
}

/// A refused write: the error code, and not one request that changes storage.
/// Columns the input adds (string, int, decimal, date) join the table's schema only when
/// asked: refused before any request otherwise; then appended nullable, old rows read as
/// nulls in both readers (MOR: a log file with them over a base file without), and a column
/// added through a metadata table prunes with `IS NULL` and `=` as it should.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adds_columns_when_asked() {
    use arrow_array::{
        ArrayRef, Date32Array, Decimal128Array, Int32Array, Int64Array, StringArray,
    };
    use hudi_edge::config::TableType;
    let wider = |ids: Vec<i64>, regions: Vec<&str>| {
        let n = ids.len();
        batch(vec![
            ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
            ("ts", Arc::new(Int64Array::from(vec![9; n]))),
            ("region", Arc::new(StringArray::from(regions))),
            ("note", Arc::new(StringArray::from(vec![Some("added"); n]))),
            ("qty", Arc::new(Int32Array::from(vec![Some(7); n]))),
            (
                "price",
                Arc::new(
                    Decimal128Array::from(vec![1230; n])
                        .with_precision_and_scale(10, 2)
                        .unwrap(),
                ),
            ),
            ("day", Arc::new(Date32Array::from(vec![20_000; n]))),
        ])
    };
    for table_type in [TableType::CopyOnWrite, TableType::MergeOnRead] {
        let test = format!("adds_columns_{table_type:?}");
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("write")
            .join(&test);
        let _ = std::fs::remove_dir_all(&dir);
        let storage = Arc::new(hudi_edge::storage::local::LocalStorage::new(&dir));
        let new = new_table(
            "evolving",
            table_type,
            "id BIGINT NOT NULL, ts BIGINT, region STRING, amount DOUBLE",
            ["id", "region", "ts"],
        );
        hudi_edge::Table::create(storage, &new)
            .await
            .expect("create");
        let rows: Vec<Map<String, Value>> = (1..=3)
            .map(|i| serde_json::json!({"id": i, "ts": 1, "region": if i == 2 { "us" } else { "eu" }, "amount": i as f64}))
            .map(|v| v.as_object().unwrap().clone())
            .collect();
        write(&dir, &rows, Operation::Insert).await;
        let (before, _) = latest(&dir).await;

        let input = [wider(vec![2, 4], vec!["us", "eu"])];
        assert_eq!(
            refused(&dir, &input, Operation::Upsert).await,
            "INVALID_INPUT"
        );
        let mut options = WriteOptions::new(Operation::Upsert);
        options.add_columns = true;
        // Names Spark would take for a column the table has, or Avro cannot hold: refused
        // before any request.
        for (name, says) in [("ID", "only in case"), ("my col", "Avro names")] {
            let table = open(&dir).await;
            let mut columns: Vec<(&str, ArrayRef)> = vec![
                ("id", Arc::new(Int64Array::from(vec![5]))),
                ("ts", Arc::new(Int64Array::from(vec![1]))),
                ("region", Arc::new(StringArray::from(vec!["eu"]))),
            ];
            columns.push((name, Arc::new(StringArray::from(vec!["x"]))));
            let e = table.write(&[batch(columns)], &options).await.unwrap_err();
            assert_eq!(e.code(), "INVALID_INPUT", "{e}");
            assert!(e.to_string().contains(says), "{e}");
            assert_eq!((table.io().puts, table.io().deletes), (0, 0), "{e}");
        }
        let table = open(&dir).await;
        let result = table
            .write(&input, &options)
            .await
            .expect("write adding columns");
        assert_eq!(
            (result.records.updated, result.records.inserted),
            (1, 1),
            "{test}"
        );

        // The commit's writer schema: the old fields, then the new ones as `["null", T]`.
        let reopened = open(&dir).await;
        let instant = reopened
            .timeline()
            .latest_completed_write()
            .cloned()
            .unwrap();
        assert_eq!(instant.requested_time, result.instant);
        let commit = reopened.commit_metadata(&instant).await.unwrap();
        let schema: Value = serde_json::from_str(commit.schema().unwrap()).unwrap();
        let fields = schema["fields"].as_array().unwrap();
        let names: Vec<&str> = fields.iter().map(|f| f["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["id", "ts", "region", "amount", "note", "qty", "price", "day"]
        );
        for f in &fields[4..] {
            assert_eq!(f["type"][0], "null", "{f}");
            assert!(f["default"].is_null() && f.get("default").is_some(), "{f}");
        }
        assert_eq!(
            fields[6]["type"][1]["type"], "fixed",
            "Spark's decimal: {}",
            fields[6]
        );

        let ours = our_rows(&dir, ReadOptions::default()).await;
        assert_eq!(ours.len(), 4, "{test}");
        same_rows(
            &ours,
            &hudi_rs_rows(&dir, &[]),
            &format!("{test}: hudi-edge vs hudi-rs"),
        );
        let added: Vec<&String> = ours
            .iter()
            .filter(|r| r.contains("\"note\":\"added\""))
            .collect();
        assert_eq!(added.len(), 2, "{test}: {ours:?}");
        assert!(
            ours.iter().filter(|r| r.contains("\"note\":null")).count() == 2,
            "{ours:?}"
        );
        // Time travel to before the write: the old schema's rows.
        let old = our_rows(
            &dir,
            ReadOptions {
                as_of: Some(before),
                ..Default::default()
            },
        )
        .await;
        assert!(
            old.len() == 3 && old.iter().all(|r| !r.contains("note")),
            "{old:?}"
        );
    }

    // Through a metadata table (files, column_stats, partition_stats, record_index); its
    // column-stats index as Spark defined it (listed columns: the new one is not indexed),
    // then without a definition (every column: the new one gets stats in new files only).
    for every_column in [false, true] {
        adds_a_column_through_the_metadata_table(every_column).await;
    }
}

async fn adds_a_column_through_the_metadata_table(every_column: bool) {
    use arrow_array::{ArrayRef, StringArray};
    let test = format!("adds_columns_mdt_{every_column}");
    let dir = common::table_copy("sample_table/cow/v9_txns_simple_overwrite", "write", &test);
    if every_column {
        std::fs::remove_file(dir.join(".hoodie/.index_defs/index.json")).unwrap();
    }
    let table = open(&dir).await;
    // A new key in a new file group: every row of that file has the column, none of the
    // partition's older files do.
    let mut row = input_rows(&dir).await.remove(0);
    row.insert("txn_id".into(), "TXN-NEW".into());
    let mut batches = decode_input(&table, &[row]).await;
    let first = batches.remove(0);
    let first_schema = first.schema();
    let mut columns: Vec<(&str, ArrayRef)> = first_schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .zip(first.columns().iter().cloned())
        .collect();
    columns.push(("channel", Arc::new(StringArray::from(vec!["web"]))));
    let mut options = WriteOptions::new(Operation::Upsert);
    options.add_columns = true;
    options
        .options
        .insert("hoodie.parquet.small.file.limit".into(), "0".into());
    let result = table
        .write(&[batch(columns)], &options)
        .await
        .expect("write through the MDT");
    assert_eq!(result.records.inserted, 1);
    let all = our_rows(&dir, ReadOptions::default()).await;
    same_rows(
        &all,
        &hudi_rs_rows(&dir, &[]),
        &format!("{test}: hudi-edge vs hudi-rs"),
    );
    for (filter, want) in [("channel = web", 1), ("channel is null", all.len() - 1)] {
        let found = our_rows(&dir, common::mdt::options(&[filter])).await;
        assert_eq!(found.len(), want, "{test}: {filter}");
        let plain = common::mdt::without_metadata(common::mdt::options(&[filter]));
        assert_eq!(
            found,
            our_rows(&dir, plain).await,
            "{filter}: with and without the MDT"
        );
    }
    // An incremental read of a range from before the column came has it, null, as Spark's
    // incremental relation reads in the latest schema (tests/write/spark_check.sh).
    let t = open(&dir).await.timeline();
    let writes: Vec<_> = t.completed_writes().collect();
    let (start, end) = (&writes[writes.len() - 3], &writes[writes.len() - 2]);
    let older = incremental_rows(
        &dir,
        start.completion_time.as_deref().unwrap(),
        end.completion_time.as_deref(),
    )
    .await;
    assert!(!older.is_empty(), "{test}");
    for r in &older {
        assert!(r.contains("\"channel\":null"), "{test}: {r}");
    }
}

async fn refused(dir: &Path, batches: &[arrow_array::RecordBatch], operation: Operation) -> String {
    let table = open(dir).await;
    let err = table
        .write(batches, &WriteOptions::new(operation))
        .await
        .expect_err("the write must be refused");
    let io = table.io();
    assert_eq!(
        (io.puts, io.deletes),
        (0, 0),
        "{}: {err} after changing storage",
        dir.display()
    );
    err.code().to_string()
}

fn batch(columns: Vec<(&str, arrow_array::ArrayRef)>) -> arrow_array::RecordBatch {
    arrow_array::RecordBatch::try_from_iter(columns).unwrap()
}

#[tokio::test]
async fn refuses_tables_it_cannot_keep_consistent() {
    use arrow_array::StringArray;
    let rows = || {
        vec![batch(vec![(
            "txn_id",
            Arc::new(StringArray::from(vec!["X"])) as arrow_array::ArrayRef,
        )])]
    };
    for (fixture, why) in [("sample_table/cow/v6_nonpartitioned", "table version 6")] {
        let dir = common::table_copy(
            fixture,
            "write-refused",
            fixture.rsplit('/').next().unwrap(),
        );
        let code = refused(&dir, &rows(), Operation::Upsert).await;
        assert_eq!(code, "UNSUPPORTED", "{fixture} ({why})");
    }
}

#[tokio::test]
async fn refuses_bad_input_before_writing() {
    use arrow_array::{ArrayRef, Int64Array, StringArray};
    let dir = common::table_copy(
        "sample_table/cow/v9_txns_simple_nometa",
        "write-refused",
        "bad_input",
    );
    let s = |v: Vec<Option<&str>>| Arc::new(StringArray::from(v)) as ArrayRef;
    let l = |v: Vec<i64>| Arc::new(Int64Array::from(v)) as ArrayRef;
    let cases: Vec<(&str, Vec<(&str, ArrayRef)>)> = vec![
        (
            "unknown column",
            vec![
                ("txn_id", s(vec![Some("A")])),
                ("region", s(vec![Some("us")])),
                ("txn_ts", l(vec![1])),
                ("nope", s(vec![Some("x")])),
            ],
        ),
        (
            "null key",
            vec![
                ("txn_id", s(vec![None])),
                ("region", s(vec![Some("us")])),
                ("txn_ts", l(vec![1])),
            ],
        ),
        (
            "missing ordering field",
            vec![
                ("txn_id", s(vec![Some("A")])),
                ("region", s(vec![Some("us")])),
            ],
        ),
        (
            "missing partition field",
            vec![("txn_id", s(vec![Some("A")])), ("txn_ts", l(vec![1]))],
        ),
        (
            "wrong type",
            vec![
                ("txn_id", s(vec![Some("A")])),
                ("region", s(vec![Some("us")])),
                ("txn_ts", s(vec![Some("soon")])),
            ],
        ),
        (
            "text that is not an integer for an integer column",
            vec![
                ("txn_id", s(vec![Some("A"), Some("B")])),
                ("region", s(vec![Some("us"), Some("us")])),
                ("txn_ts", s(vec![Some("17"), Some("17.5")])),
            ],
        ),
    ];
    for (what, columns) in cases {
        let code = refused(&dir, &[batch(columns)], Operation::Upsert).await;
        assert_eq!(code, "INVALID_INPUT", "{what}");
    }
    // Partition values that would leave the table or make paths Hudi cannot hold: refused
    // as input, naming the row and column, with no request that changes storage.
    // (This table is hive-style: `region=..` is a plain folder name, `region=us/../..` is not.)
    for region in ["../../x", "us/../..", "us//x", "us/", "us/./x", "a\u{1}b"] {
        let columns = vec![
            ("txn_id", s(vec![Some("A"), Some("B")])),
            ("region", s(vec![Some("us"), Some(region)])),
            ("txn_ts", l(vec![1, 2])),
        ];
        let table = open(&dir).await;
        let err = table
            .write(&[batch(columns)], &WriteOptions::new(Operation::Upsert))
            .await
            .expect_err("refused");
        assert_eq!(err.code(), "INVALID_INPUT", "{region:?}: {err}");
        let text = err.to_string();
        assert!(
            text.contains("row 1, column \"region\""),
            "{region:?}: {text}"
        );
        assert_eq!((table.io().puts, table.io().deletes), (0, 0), "{region:?}");
    }
    // Nested folders stay allowed, as Java writes them.
    let nested = vec![
        ("txn_id", s(vec![Some("N")])),
        ("region", s(vec![Some("us/west")])),
        ("txn_ts", l(vec![1])),
    ];
    let table = open(&dir).await;
    table
        .write(&[batch(nested)], &WriteOptions::new(Operation::Upsert))
        .await
        .expect("a nested partition path is written");
    assert!(dir
        .join("region=us/west/.hoodie_partition_metadata")
        .exists());
}

/// Integers as text (how JSON carries int64 values past 2^53) are the integers they spell.
#[tokio::test]
async fn takes_integer_text_for_integer_columns() {
    use arrow_array::{ArrayRef, StringArray};
    let dir = common::table_copy(
        "sample_table/cow/v9_txns_simple_nometa",
        "write-int-text",
        "int_text",
    );
    let s = |v: Vec<&str>| Arc::new(StringArray::from(v)) as ArrayRef;
    let input = batch(vec![
        ("txn_id", s(vec!["TXT-1", "TXT-2"])),
        ("region", s(vec!["us", "us"])),
        ("txn_ts", s(vec!["9007199254740993", "-17"])),
    ]);
    let table = open(&dir).await;
    let result = table
        .write(&[input], &WriteOptions::new(Operation::Insert))
        .await
        .unwrap();
    assert_eq!(result.records.inserted, 2);
    let rows = our_rows(&dir, ReadOptions::default()).await;
    for (key, ts) in [("TXT-1", "9007199254740993"), ("TXT-2", "-17")] {
        let row = rows
            .iter()
            .find(|r| r.contains(&format!(r#""txn_id":"{key}""#)))
            .unwrap_or_else(|| panic!("{key} not in {rows:?}"));
        assert!(row.contains(&format!(r#""txn_ts":{ts},"#)), "{row}");
    }
}

#[tokio::test]
async fn deletes_of_missing_keys_commit_nothing() {
    use arrow_array::{ArrayRef, StringArray};
    let dir = common::table_copy(
        "sample_table/mor/avro/v9_txns_simple_nometa",
        "write-refused",
        "missing_deletes",
    );
    let s = |v: &str| Arc::new(StringArray::from(vec![v])) as ArrayRef;
    let table = open(&dir).await;
    let result = table
        .write(
            &[batch(vec![("txn_id", s("NOPE")), ("region", s("us"))])],
            &WriteOptions::new(Operation::Delete),
        )
        .await
        .unwrap();
    assert_eq!(
        (result.records.delete_missing, result.action.as_str()),
        (1, "none")
    );
    assert_eq!((table.io().puts, table.io().deletes), (0, 0));
}

/// With a global index a key can move partition: Hudi's `update.partition.path` deletes it
/// where it was and inserts it where it goes; without it the update stays in place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_moves_partition_only_when_asked() {
    for move_it in [true, false] {
        let test = if move_it { "moves" } else { "stays" };
        let dir = common::table_copy(
            "sample_table/cow/v9_txns_simple_overwrite",
            "write-move",
            test,
        );
        let rows = input_rows(&dir).await;
        let mut row = rows[0].clone();
        let from = row["region"].as_str().unwrap().to_string();
        let to = rows
            .iter()
            .filter_map(|r| r["region"].as_str())
            .find(|r| *r != from)
            .unwrap_or("zz")
            .to_string();
        row.insert("region".into(), Value::from(to.clone()));
        if let Some(Value::Number(n)) = row.get("txn_ts") {
            row.insert("txn_ts".into(), Value::from(n.as_i64().unwrap() + 1));
        }
        let table = open(&dir).await;
        let batches = decode_input(&table, std::slice::from_ref(&row)).await;
        let mut options = WriteOptions::new(Operation::Upsert);
        if move_it {
            options.options.insert(
                "hoodie.record.index.update.partition.path".into(),
                "true".into(),
            );
        }
        let result = table.write(&batches, &options).await.unwrap();
        let after = our_rows(&dir, ReadOptions::default()).await;
        let key = row["txn_id"].as_str().unwrap();
        let holding: Vec<&String> = after
            .iter()
            .filter(|r| r.contains(&format!("\"_hoodie_record_key\":\"{key}\"")))
            .collect();
        assert_eq!(holding.len(), 1, "{test}: one row for {key}: {holding:?}");
        let want = if move_it { &to } else { &from };
        let hive = format!("\"_hoodie_partition_path\":\"region={want}\"");
        let plain = format!("\"_hoodie_partition_path\":\"{want}\"");
        assert!(
            holding[0].contains(&hive) || holding[0].contains(&plain),
            "{test}: {} ({result:?})",
            holding[0]
        );
        // Staying, the record keeps its partition with the new value in its data (as Java
        // writes it): Spark shows the partition column from the path, hudi-rs from the file.
        let mut theirs = hudi_rs_rows(&dir, &[]);
        if !move_it {
            let (file, path) = (
                format!("\"region\":\"{to}\""),
                format!("\"region\":\"{from}\""),
            );
            assert!(holding[0].contains(&path), "{test}: {}", holding[0]);
            let key = format!("\"_hoodie_record_key\":\"{key}\"");
            for r in theirs.iter_mut().filter(|r| r.contains(&key)) {
                assert!(
                    r.contains(&file),
                    "{test}: hudi-rs reads the file's value: {r}"
                );
                *r = r.replace(&file, &path);
            }
            theirs.sort();
            // Filters agree with what the rows show (partition pruning goes by the path).
            for (region, found) in [(&from, true), (&to, false)] {
                let filter = hudi_edge::expr::parse_filter(&format!("region = '{region}'"));
                let options = ReadOptions {
                    filters: vec![filter.unwrap()],
                    ..ReadOptions::default()
                };
                let rows = our_rows(&dir, options).await;
                assert_eq!(
                    rows.iter().any(|r| r.contains(&key)),
                    found,
                    "{test}: {region}"
                );
            }
        }
        same_rows(&theirs, &after, &format!("{test}: hudi-rs"));
        // The record index answers a key lookup with the new location.
        let by_key = our_rows(
            &dir,
            ReadOptions {
                filters: vec![hudi_edge::expr::parse_filter(&format!("txn_id = '{key}'")).unwrap()],
                ..ReadOptions::default()
            },
        )
        .await;
        assert_eq!(by_key, vec![holding[0].clone()], "{test}: lookup by key");
    }
}

/// A file group under a pending clustering plan is not written: `CONFLICT` naming the plan,
/// nothing written.
#[tokio::test]
async fn refuses_file_groups_being_clustered() {
    use hudi_edge::timeline::write::{encode_avro_instant, InstantSchema};
    let dir = common::table_copy(
        "sample_table/cow/v9_txns_simple_nometa",
        "write-refused",
        "clustering",
    );
    let rows = input_rows(&dir).await;
    let table = open(&dir).await;
    // The file group that holds the first row.
    let view = table.file_system_view(None).await.unwrap();
    let target = common::oracle_rows(
        &table.read(&ReadOptions::default()).await.unwrap().batches,
        &table.config().record_key_fields,
    )
    .into_iter()
    .find(|r| r["txn_id"] == rows[0]["txn_id"])
    .unwrap();
    let file_name = target["_hoodie_file_name"].as_str().unwrap();
    let group = view
        .groups
        .iter()
        .find(|g| file_name.starts_with(&g.file_id))
        .unwrap();
    // A clustering plan Spark wrote, pointed at that group, as a new pending instant.
    let timeline_dir = dir.join(".hoodie/timeline");
    let requested = std::fs::read_dir(&timeline_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".clustering.requested"))
        .unwrap();
    let mut plan = hudi_edge::timeline::metadata::decode_instant_file(
        &std::fs::read(&requested).unwrap(),
        "plan",
    )
    .unwrap();
    for group_json in plan["clusteringPlan"]["inputGroups"]
        .as_array_mut()
        .unwrap()
    {
        for slice in group_json["slices"].as_array_mut().unwrap() {
            slice["fileId"] = Value::from(group.file_id.clone());
            slice["partitionPath"] = Value::from(group.partition.clone());
        }
    }
    let bytes = encode_avro_instant(InstantSchema::RequestedReplaceMetadata, &plan).unwrap();
    std::fs::write(
        timeline_dir.join("29990101000000000.clustering.requested"),
        bytes,
    )
    .unwrap();
    let mut update = rows[0].clone();
    update.insert("txn_ts".into(), Value::from(1_900_000_000_000i64));
    let table = open(&dir).await;
    let batches = decode_input(&table, &[update]).await;
    let err = table
        .write(&batches, &WriteOptions::new(Operation::Upsert))
        .await
        .expect_err("clustering pending");
    assert_eq!(err.code(), "CONFLICT", "{err}");
    assert!(err.to_string().contains("29990101000000000"), "{err}");
    assert_eq!((table.io().puts, table.io().deletes), (0, 0));
}

#[tokio::test]
async fn refuses_read_only_storage_before_any_request() {
    use arrow_array::{ArrayRef, StringArray};
    // A zip copied into memory: the write would vanish with the handle.
    let name = "sample_table/cow/v9_txns_simple_nometa";
    let zip = std::fs::read(common::fixtures_dir().join(format!("tables/{name}.zip"))).unwrap();
    let storage = hudi_edge::storage::memory::MemoryStorage::from_zip(&zip, name).unwrap();
    let table = hudi_edge::Table::open(Arc::new(storage)).await.unwrap();
    let before = table.io();
    let rows = batch(vec![(
        "txn_id",
        Arc::new(StringArray::from(vec!["X"])) as ArrayRef,
    )]);
    let err = table
        .write(&[rows], &WriteOptions::new(Operation::Upsert))
        .await
        .expect_err("refused");
    assert_eq!(err.code(), "UNSUPPORTED", "{err}");
    assert!(err.to_string().contains("read-only"), "{err}");
    assert_eq!(table.io().requests, before.requests, "no request");
}

/// Table settings this writer cannot honour are refused before any request: custom merging
/// (Java classes decide).
#[tokio::test]
async fn refuses_table_settings_it_cannot_honour() {
    use arrow_array::{ArrayRef, StringArray};
    for (name, extra) in [
        (
            "custom_merge",
            "hoodie.record.merge.mode=CUSTOM\nhoodie.record.merge.strategy.id=11111111-2222-3333-4444-555555555555\n",
        ),
    ] {
        let dir = common::table_copy("sample_table/cow/v9_txns_simple_nometa", "write-refused", name);
        let props = dir.join(".hoodie/hoodie.properties");
        let text = std::fs::read_to_string(&props).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| !extra.lines().any(|e| l.starts_with(e.split('=').next().unwrap())))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&props, kept + extra).unwrap();
        let rows = vec![batch(vec![(
            "txn_id",
            Arc::new(StringArray::from(vec!["X"])) as ArrayRef,
        )])];
        let code = refused(&dir, &rows, Operation::Upsert).await;
        assert_eq!(code, "UNSUPPORTED", "{name}");
    }
}

/// A table handle held while others write (an edge worker keeps one across requests): each
/// write takes the timeline as it is then, so a key another handle inserted is updated in
/// place, never inserted twice — with the record index (metadata table) and without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handles_held_across_writes_see_every_commit() {
    for (fixture, test) in [
        (
            "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
            "mdt",
        ),
        ("sample_table/cow/v9_txns_simple_nometa", "nometa"),
    ] {
        let dir = common::table_copy(fixture, "write-held", test);
        let rows = input_rows(&dir).await;
        let before = our_rows(&dir, ReadOptions::default()).await.len();
        let first = open(&dir).await;
        let second = open(&dir).await;
        // A new key through the first handle, then the same key through the second,
        // opened before that commit.
        let mut row = rows[0].clone();
        row.insert("txn_id".into(), Value::from("held-handle-key"));
        assert_eq!(upsert_one(&first, &row).await, (1, 0), "{test}");
        bump(&mut row, "txn_ts", 1);
        assert_eq!(
            upsert_one(&second, &row).await,
            (0, 1),
            "{test}: the second handle must find the key"
        );
        // And the first handle, after the second one's commit, updates it again.
        assert_eq!(upsert_one(&first, &row).await, (0, 1), "{test}");
        let after = our_rows(&dir, ReadOptions::default()).await;
        assert_eq!(after.len(), before + 1, "{test}: one row added");
        same_rows(
            &hudi_rs_rows(&dir, &[]),
            &after,
            &format!("{test}: hudi-rs"),
        );
    }
}

/// (inserted, updated) of an upsert of one row through `table`.
async fn upsert_one(table: &hudi_edge::Table, row: &Map<String, Value>) -> (u64, u64) {
    let batches = decode_input(table, std::slice::from_ref(row)).await;
    let r = table
        .write(&batches, &WriteOptions::new(Operation::Upsert))
        .await
        .unwrap();
    (r.records.inserted, r.records.updated)
}

/// A Merge-On-Read incremental range holding Spark's clustering: the clustered base file
/// carries TXN-008 with its first commit time (clustering keeps it), so, as in Spark's
/// incremental relation, that record stays out of merging and our later update of it, which
/// loses on the ordering field in a snapshot, is the range's change of the key.
#[tokio::test]
async fn incremental_range_over_clustering_shows_losing_updates() {
    let fixture = "sample_table/mor/avro/v9_txns_complex_nometa";
    let dir = common::table_copy(fixture, "write", "incremental-over-clustering");
    let rows = input_rows(&dir).await;
    let stored = (rows.iter())
        .find(|r| r.get("txn_id") == Some(&Value::from("TXN-008")))
        .expect("TXN-008")
        .clone();
    let mut late = stored.clone();
    bump(&mut late, "txn_ts", -1);
    late.insert("amount".into(), Value::from("1.25"));
    let result = write(&dir, std::slice::from_ref(&late), Operation::Upsert).await;
    assert_eq!(result.records.updated, 1, "{result:?}");

    let snapshot = our_rows(&dir, ReadOptions::default()).await;
    let snapshot_008: Vec<&String> = snapshot.iter().filter(|r| r.contains("TXN-008")).collect();
    assert_eq!(snapshot_008.len(), 1);
    assert!(
        snapshot_008[0].contains("20260307135857131"),
        "{snapshot_008:?}"
    );

    // After deltacommit 20260307135908746 (completed 20260307135908948): compaction,
    // clustering, one deltacommit of Spark's, then ours.
    let changed = incremental_rows(&dir, "20260307135908948", None).await;
    let ids: Vec<String> = changed
        .iter()
        .map(|r| {
            let v: Value = serde_json::from_str(r).unwrap();
            format!("{} {}", v["txn_id"], v["_hoodie_commit_time"])
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let ours = format!("\"TXN-008\" \"{}\"", result.instant);
    assert_eq!(
        ids,
        [
            ours.as_str(),
            "\"TXN-017\" \"20260307135910511\"",
            "\"TXN-018\" \"20260307135910511\""
        ],
        "{changed:?}"
    );
    let ours_row = changed.iter().find(|r| r.contains("TXN-008")).unwrap();
    assert!(ours_row.contains("1.25"), "{ours_row}");
}

/// The `.hoodie/.schema/` history files of completed writes (`<requested>_<completion>`),
/// oldest first, with their bytes.
fn schema_history(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join(".hoodie/.schema"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| {
            let n = e.file_name().into_string().unwrap();
            n.ends_with(".schemacommit") && n.contains('_')
        })
        .map(|e| {
            let name = e.file_name().into_string().unwrap();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// `latest_schema` of the newest completed write's metadata.
async fn latest_schema_of_last_commit(dir: &Path) -> String {
    let table = open(dir).await;
    let instant = table.timeline().latest_completed_write().cloned().unwrap();
    let meta = table.commit_metadata(&instant).await.unwrap();
    meta.extra("latest_schema")
        .expect("latest_schema in the commit")
        .to_string()
}

/// Tables whose schema evolved on read (Spark SQL renamed, dropped, retyped and re-added
/// columns with `hoodie.schema.on.read.enable`): an upsert of every row (files written
/// before and after the renames) and a new key, then a delete, read back by column id; each
/// commit carries the column ids forward as Java's writer does — the same `latest_schema`
/// and the history again under its instant. Adding a column (a new id) is refused.
/// Apache Hudi Spark reads and keeps writing them in tests/write/spark_evolved_on_read.sh.
async fn evolved_on_read(variant: &str) {
    let fixture = format!("spark_variants/{variant}");
    let dir = common::table_copy(&fixture, "write", &format!("evolved-on-read-{variant}"));
    let rows = input_rows(&dir).await;
    let schema_before = latest_schema_of_last_commit(&dir).await;
    let history_before = schema_history(&dir);
    let (newest_before, newest_bytes) = history_before.last().cloned().unwrap();

    let mut changes: Vec<Map<String, Value>> = rows.clone();
    for r in &mut changes {
        let title = r["title"].as_str().unwrap_or("").to_string();
        r.insert("title".into(), Value::from(format!("{title}-edge")));
        bump(r, "ts", 10);
        bump(r, "qty", 3_000_000_000);
    }
    let mut fresh = rows[0].clone();
    fresh.insert("id".into(), Value::from(90));
    fresh.insert("note".into(), Value::from("new from the edge"));
    changes.push(fresh);
    let upsert = write(&dir, &changes, Operation::Upsert).await;
    assert_eq!(
        (upsert.records.updated, upsert.records.inserted),
        (rows.len() as u64, 1),
        "{variant}: {upsert:?}"
    );
    same_rows(
        &data_only(&our_rows(&dir, ReadOptions::default()).await),
        &data_only(&model_rows(&dir, &changes).await),
        &format!("{variant}: snapshot after the upsert"),
    );
    same_rows(
        &data_only(
            &our_rows(
                &dir,
                ReadOptions {
                    as_of: Some(newest_before.split('_').next().unwrap().to_string()),
                    ..ReadOptions::default()
                },
            )
            .await,
        ),
        &data_only(&model_rows(&dir, &rows).await),
        &format!("{variant}: time travel to before the upsert"),
    );
    assert_eq!(latest_schema_of_last_commit(&dir).await, schema_before);
    let history = schema_history(&dir);
    assert_eq!(
        history.len(),
        history_before.len() + 1,
        "{variant}: {history:?}"
    );
    let (newest, bytes) = history.last().unwrap();
    assert!(
        newest.starts_with(&format!("{}_", upsert.instant)),
        "{newest}"
    );
    assert_eq!(bytes, &newest_bytes, "{variant}: the history, unchanged");
    for suffix in ["requested", "inflight"] {
        let f = format!(".hoodie/.schema/{}.schemacommit.{suffix}", upsert.instant);
        assert!(dir.join(&f).exists(), "{variant}: {f}");
    }

    let victim = changes[1].clone();
    let delete = write(&dir, std::slice::from_ref(&victim), Operation::Delete).await;
    assert_eq!(delete.records.deleted, 1, "{variant}: {delete:?}");
    let kept: Vec<Map<String, Value>> = changes.iter().filter(|r| **r != victim).cloned().collect();
    same_rows(
        &data_only(&our_rows(&dir, ReadOptions::default()).await),
        &data_only(&model_rows(&dir, &kept).await),
        &format!("{variant}: snapshot after the delete"),
    );
    assert_eq!(latest_schema_of_last_commit(&dir).await, schema_before);
    assert_eq!(schema_history(&dir).len(), history_before.len() + 2);

    use arrow_array::{ArrayRef, Int32Array, Int64Array, StringArray};
    let table = open(&dir).await;
    let wider = batch(vec![
        ("id", Arc::new(Int32Array::from(vec![91])) as ArrayRef),
        ("ts", Arc::new(Int64Array::from(vec![1]))),
        ("region", Arc::new(StringArray::from(vec!["eu"]))),
        ("colour", Arc::new(StringArray::from(vec!["red"]))),
    ]);
    let mut options = WriteOptions::new(Operation::Upsert);
    options.add_columns = true;
    let err = table.write(&[wider], &options).await.unwrap_err();
    assert_eq!(err.code(), "UNSUPPORTED", "{variant}: {err}");
    assert!(err.to_string().contains("ALTER TABLE"), "{variant}: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_cow_evolved_on_read() {
    evolved_on_read("spark_v9_schema_on_read_cow").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_mor_evolved_on_read() {
    evolved_on_read("spark_v9_schema_on_read_mor").await;
}

/// Every row of the table at `dir` sits in the file group of its key's bucket (Java's hash).
async fn rows_in_their_buckets(dir: &Path, buckets: &hudi_edge::write::bucket::Buckets) {
    for r in our_rows(dir, ReadOptions::default()).await {
        let v: Value = serde_json::from_str(&r).unwrap();
        let key = v["_hoodie_record_key"].as_str().unwrap();
        let file = v["_hoodie_file_name"].as_str().unwrap();
        let group = hudi_edge::write::bucket::bucket_of_file_id(file.trim_start_matches('.'));
        assert_eq!(group, Some(buckets.of(key).unwrap()), "{key} in {file}");
    }
}

/// Tables with Hudi's bucket index (Spark: `hoodie.index.type=BUCKET`), which
/// hoodie.properties does not record: known by their file ids, written only with the bucket
/// settings given (as Spark's writers are given them); new keys go to their bucket's file
/// group (Copy-On-Write: rewritten; Merge-On-Read: a log append) or start it, and every row
/// stays where Java's hash puts it — checked first on Spark's own rows. Settings that are
/// not the table's are refused before anything is written. Spark keeps writing the tables in
/// tests/write/spark_bucket.sh.
async fn bucket_index(variant: &str, count: u32, hash_field: Option<&str>) {
    let fixture = format!("spark_variants/{variant}");
    let dir = common::table_copy(&fixture, "write", &format!("bucket-{variant}"));
    let config = open(&dir).await.config().clone();
    let buckets = hudi_edge::write::bucket::Buckets {
        count,
        hash_fields: hash_field.map_or(config.record_key_fields.clone(), |f| vec![f.to_string()]),
    };
    rows_in_their_buckets(&dir, &buckets).await;
    let rows = input_rows(&dir).await;
    let mut changes: Vec<Map<String, Value>> = rows[..2].to_vec();
    for r in &mut changes {
        r.insert("name".into(), Value::from("edge-update"));
        bump(r, "ts", 100);
    }
    for i in 0..12 {
        let mut fresh = rows[i % rows.len()].clone();
        fresh.insert("id".into(), Value::from(format!("edge-{i:03}")));
        // A third of them in a partition that has no buckets yet.
        if i % 3 == 0 {
            fresh.insert("part".into(), Value::from("p9"));
        }
        changes.push(fresh);
    }
    let before = std::fs::read_dir(dir.join(".hoodie/timeline"))
        .unwrap()
        .count();
    let with = |settings: &[(&str, String)]| {
        let mut options = WriteOptions::new(Operation::Upsert);
        for (k, v) in settings {
            options.options.insert(k.to_string(), v.clone());
        }
        options
    };
    let table = open(&dir).await;
    let batches = decode_input(&table, &changes).await;
    // Detected from the file ids; nothing is written without the settings.
    let err = table.write(&batches, &with(&[])).await.unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT", "{err}");
    assert!(
        err.to_string().contains("hoodie.bucket.index.num.buckets"),
        "{err}"
    );
    // Another bucket count: the updated keys are not where it would put them.
    let wrong = with(&[
        ("hoodie.index.type", "BUCKET".into()),
        ("hoodie.bucket.index.num.buckets", (count + 1).to_string()),
    ]);
    let err = table.write(&batches, &wrong).await.unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT", "{err}");
    assert!(err.to_string().contains("another bucket count"), "{err}");
    let after_refusals = std::fs::read_dir(dir.join(".hoodie/timeline"))
        .unwrap()
        .count();
    assert_eq!(
        after_refusals, before,
        "refusals leave the timeline as it was"
    );

    let mut settings = vec![
        ("hoodie.index.type", "BUCKET".to_string()),
        ("hoodie.bucket.index.num.buckets", count.to_string()),
    ];
    if let Some(f) = hash_field {
        settings.push(("hoodie.bucket.index.hash.field", f.to_string()));
    }
    let result = table.write(&batches, &with(&settings)).await.unwrap();
    assert_eq!(
        (result.records.updated, result.records.inserted),
        (2, 12),
        "{result:?}"
    );
    let mut expected = rows.clone();
    expected.retain(|r| !changes[..2].iter().any(|c| c["id"] == r["id"]));
    expected.extend(changes.iter().cloned());
    same_rows(
        &data_only(&our_rows(&dir, ReadOptions::default()).await),
        &data_only(&model_rows(&dir, &expected).await),
        &format!("{variant}: snapshot"),
    );
    same_rows(
        &hudi_rs_rows(&dir, &[]),
        &our_rows(&dir, ReadOptions::default()).await,
        &format!("{variant}: hudi-rs"),
    );
    rows_in_their_buckets(&dir, &buckets).await;
    let groups = open(&dir)
        .await
        .plan(&ReadOptions::default())
        .await
        .unwrap();
    for s in &groups.file_slices {
        assert!(
            hudi_edge::write::bucket::bucket_of_file_id(&s.file_id).is_some_and(|b| b < count),
            "{variant}: file group {} is no bucket",
            s.file_id
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_cow_bucket_index() {
    bucket_index("spark_v9_bucket_cow", 2, Some("id")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_mor_bucket_index() {
    bucket_index("spark_v9_bucket_mor", 4, None).await;
}

/// Merge-On-Read incremental reads of an update that loses on the ordering field, as Spark
/// 1.1.1 answered on this table (recorded in tests/bench/results/write_spark_sequences.txt):
/// from an active commit, the range's files merged alone show the losing update; from an
/// archived commit (Hudi's fallback: the latest snapshot filtered to the range) the stored
/// row shows, as its commit is in that range too. A winning update shows in both.
#[tokio::test]
async fn incremental_fallback_shows_what_spark_shows() {
    let dir = common::table_copy("generated/v9_archive_mor", "write", "incremental-fallback");
    let rows = input_rows(&dir).await;
    let pick = |id: &str, name: &str, ts: i64| {
        let mut r = rows.iter().find(|r| r["id"] == id).unwrap().clone();
        r.insert("name".into(), Value::from(name));
        r.insert("ts".into(), Value::from(ts));
        r
    };
    let batch = [
        pick("id-025", "losing-edge", 1000),
        pick("id-028", "winning-edge", 5000),
    ];
    // The write's log file stays: a compaction would move the losing update's row into a
    // base file of the range.
    let result = write_with(&dir, &batch, Operation::Upsert, NO_INLINE_COMPACTION).await;
    let seen = |start: &'static str| {
        let dir = dir.clone();
        async move {
            let rows = incremental_rows(&dir, start, None).await;
            rows.iter()
                .map(|r| serde_json::from_str::<Value>(r).unwrap())
                .filter(|v| v["id"] == "id-025" || v["id"] == "id-028")
                .map(|v| format!("{} {} {}", v["id"], v["name"], v["_hoodie_commit_time"]))
                .collect::<std::collections::BTreeSet<_>>()
        }
    };
    let ours = &result.instant;
    // An archived start (the table's first commit): Hudi's fallback.
    let archived = seen("20261130012408385").await;
    assert_eq!(
        archived.into_iter().collect::<Vec<_>>(),
        [
            "\"id-025\" \"name_25_0-u\" \"20261130012612092\"".to_string(),
            format!("\"id-028\" \"winning-edge\" \"{ours}\"")
        ]
    );
    let active = seen("20261130012731415").await;
    assert_eq!(
        active.into_iter().collect::<Vec<_>>(),
        [
            format!("\"id-025\" \"losing-edge\" \"{ours}\""),
            format!("\"id-028\" \"winning-edge\" \"{ours}\"")
        ]
    );
}

/// The base files a commit wrote into a table without meta fields carry the meta columns
/// (Java keeps them in the file schema), every one null, and neither a bloom filter nor a
/// key range in the footer: Java fills both from the meta key column.
fn written_without_meta_fields(dir: &Path, instant: &str) {
    use arrow_array::Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().to_string();
            if path.is_dir() && name != ".hoodie" {
                stack.push(path);
            } else if name.ends_with(&format!("_{instant}.parquet")) {
                files.push(path);
            }
        }
    }
    assert!(!files.is_empty(), "no base file of {instant} under {dir:?}");
    for file in files {
        let reader =
            ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&file).unwrap()).unwrap();
        let footer: Vec<String> = (reader.metadata().file_metadata().key_value_metadata())
            .into_iter()
            .flatten()
            .map(|kv| kv.key.clone())
            .collect();
        for key in ["org.apache.hudi.bloomfilter", "hoodie_min_record_key"] {
            assert!(
                !footer.iter().any(|k| k == key),
                "{file:?}: {key} in {footer:?}"
            );
        }
        for batch in reader.build().unwrap() {
            let batch = batch.unwrap();
            for meta in hudi_edge::schema::META_COLUMNS {
                let column = batch
                    .column_by_name(meta)
                    .unwrap_or_else(|| panic!("{file:?}: no {meta} column"));
                assert_eq!(column.null_count(), column.len(), "{file:?}: {meta}");
            }
        }
    }
}
