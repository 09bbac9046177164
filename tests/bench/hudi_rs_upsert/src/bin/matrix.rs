//! `hudi-rs-matrix OUT_DIR`: the writer matrix of issue 15, written by hudi-rs' own writer
//! (crate `hudi` 0.6.0-rc.1) — COW and MOR × table versions 8 and 9 × partitioned and not,
//! metadata table on with every partition hudi-rs writes (files, column_stats,
//! partition_stats, record_index), then a MOR table compacted by hudi-rs and one whose crashed
//! write hudi-rs rolled back. Run by tests/write/make_hudi_rs_matrix.sh; prints one JSON line
//! per table with the instants each step made.
//!
//! `hudi_rs_decimals_cow_v9` and `hudi_rs_decimals_mor_v9` (by name only): decimal columns of
//! four precisions, which hudi-rs declares as Avro `bytes` decimals (see `write_decimals`).
//!
//! `hudi-rs-matrix --bench TABLE INPUT.arrow`: the benchmark table of tests/bench/mdt_skipping.py
//! written by hudi-rs: INPUT (a read of the Spark-written bench table with `_hoodie_file_name`
//! first) appended one source file group per commit, so it keeps 256 file groups with the
//! same tight ranges.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array,
    RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use hudi::config::table::TableTypeValue;
use hudi::table::Table;
use hudi::HoodieKey;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn schema() -> Arc<Schema> {
    let utc = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
    let fields = [
        ("id", DataType::Utf8, false),
        ("part", DataType::Utf8, false),
        ("ts", DataType::Int64, false),
        ("qty", DataType::Int32, true),
        ("amount", DataType::Float64, true),
        ("price", DataType::Decimal128(10, 2), true),
        ("day", DataType::Date32, true),
        ("event_time", utc, true),
        ("active", DataType::Boolean, true),
        ("note", DataType::Utf8, true),
    ];
    Arc::new(Schema::new(
        fields
            .map(|(name, t, nullable)| Field::new(name, t, nullable))
            .to_vec(),
    ))
}

/// Rows for keys `ids`, stamped with `round` (ts and the changing values follow it), so a
/// key's row says which write left it.
fn batch(ids: &[u32], round: i64) -> Res<RecordBatch> {
    let parts = ["a", "b", "c"];
    let col = |f: &dyn Fn(u32) -> i64| ids.iter().map(|&i| f(i)).collect::<Vec<_>>();
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(
            ids.iter().map(|i| format!("id-{i:04}")).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            ids.iter()
                .map(|&i| parts[(i as usize) % 3].to_string())
                .collect::<Vec<_>>(),
        )),
        Arc::new(Int64Array::from(col(&|i| round * 1000 + i as i64))),
        Arc::new(Int32Array::from(
            ids.iter()
                .map(|&i| (i % 7 != 0).then_some((i as i32) * 10 + round as i32))
                .collect::<Vec<_>>(),
        )),
        Arc::new(Float64Array::from(
            ids.iter()
                .map(|&i| i as f64 * 1.5 + round as f64)
                .collect::<Vec<_>>(),
        )),
        Arc::new(
            Decimal128Array::from(
                col(&|i| i as i64 * 125 + round)
                    .into_iter()
                    .map(|v| v as i128)
                    .collect::<Vec<_>>(),
            )
            .with_precision_and_scale(10, 2)?,
        ),
        Arc::new(Date32Array::from(
            ids.iter()
                .map(|&i| 20_000 + i as i32 + round as i32)
                .collect::<Vec<_>>(),
        )),
        Arc::new(
            TimestampMicrosecondArray::from(col(&|i| {
                1_780_000_000_000_000 + (i as i64) * 60_000_000 + round * 3_600_000_000
            }))
            .with_timezone("UTC"),
        ),
        Arc::new(BooleanArray::from(
            ids.iter()
                .map(|&i| (i + round as u32) % 2 == 0)
                .collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            ids.iter()
                .map(|&i| (i % 5 != 0).then(|| format!("round {round} key {i}")))
                .collect::<Vec<_>>(),
        )),
    ];
    Ok(RecordBatch::try_new(schema(), cols)?)
}

fn partition_of(i: u32, partitioned: bool) -> String {
    if partitioned {
        format!("part={}", ["a", "b", "c"][(i as usize) % 3])
    } else {
        String::new()
    }
}

/// Every data file of the table (not under `.hoodie`), relative to its root.
fn data_files(root: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
            if rel == ".hoodie" {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else if !rel.ends_with(".hoodie_partition_metadata") {
                out.insert(rel);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(root, root, &mut out);
    out
}

struct Spec {
    name: &'static str,
    mor: bool,
    version: isize,
    partitioned: bool,
    compact: bool,
    rollback: bool,
}

/// Opens the table with small-file packing off, so each insert makes new file groups with
/// tight key ranges (what column stats and the record index are there to prune).
async fn open(path: &str) -> Res<Table> {
    Ok(Table::new_with_options(path, [("hoodie.parquet.small.file.limit", "0")]).await?)
}

fn step(out: &mut Vec<String>, op: &str, r: &hudi::WriteResult) {
    out.push(format!(
        "{{\"op\": \"{op}\", \"requested_time\": {:?}, \"completion_time\": {:?}, \"inserts\": {}, \"updates\": {}, \"deletes\": {}}}",
        r.requested_time.clone().unwrap_or_default(),
        r.completion_time.clone().unwrap_or_default(),
        r.num_inserts,
        r.num_updates,
        r.num_deletes
    ));
}

async fn write_table(dir: &Path, s: &Spec) -> Res<()> {
    let root = dir.join(s.name);
    let path = root.to_string_lossy().to_string();
    let mut create = Table::create(&path)
        .with_table_name(s.name)
        .with_table_type(if s.mor {
            TableTypeValue::MergeOnRead
        } else {
            TableTypeValue::CopyOnWrite
        })
        .with_table_version(s.version)
        .with_record_key_fields(["id"])
        .with_ordering_fields(["ts"]);
    if s.partitioned {
        create = create.with_partition_fields(["part"]);
    }
    create.create().await?;
    let mut steps = Vec::new();
    let ids = |r: std::ops::Range<u32>| r.collect::<Vec<_>>();

    // 1: insert 60 keys; 2: insert 30 more (new file groups); 3: update 20 + insert 10;
    // 4: delete 8; 5: update 15 (MOR: a further log file on the same slices). Writes from 5 on
    // touch keys of partition c only (2 mod 3), so statistics can prune the others.
    let mut t = open(&path).await?;
    step(
        &mut steps,
        "insert",
        &t.append([batch(&ids(1..61), 1)?]).await?,
    );
    let mut t2 = open(&path).await?;
    step(
        &mut steps,
        "insert",
        &t2.append([batch(&ids(61..91), 2)?]).await?,
    );
    let mut upd: Vec<u32> = (1..91).step_by(5).chain(91..101).collect();
    upd.sort();
    let mut t3 = open(&path).await?;
    step(&mut steps, "upsert", &t3.upsert([batch(&upd, 3)?]).await?);
    let dels: Vec<HoodieKey> = [4u32, 9, 15, 33, 47, 62, 77, 95]
        .iter()
        .map(|&i| HoodieKey {
            record_key: format!("id-{i:04}"),
            partition_path: partition_of(i, s.partitioned),
        })
        .collect();
    let mut t4 = open(&path).await?;
    step(&mut steps, "delete", &t4.delete_keys(dels).await?);
    let upd2: Vec<u32> = (2..92).step_by(6).collect();
    let mut t5 = open(&path).await?;
    step(&mut steps, "upsert", &t5.upsert([batch(&upd2, 5)?]).await?);

    if s.compact {
        let mut t = open(&path).await?;
        let c = t.compact().await?;
        steps.push(format!(
            "{{\"op\": \"compact\", \"requested_time\": {:?}}}",
            c.requested_time.clone().unwrap_or_default()
        ));
        // A delta commit after the compaction: logs on the compacted slices.
        let mut t = open(&path).await?;
        step(
            &mut steps,
            "upsert",
            &t.upsert([batch(&[2, 14, 50, 86], 7)?]).await?,
        );
    }
    if s.rollback {
        // A write that crashed after its data and metadata-table files were written but
        // before its instant completed: made by completing a real upsert and then removing
        // its completed instant file and putting back the markers hudi-rs deleted.
        let before = data_files(&root);
        let mut t = open(&path).await?;
        let r = t.upsert([batch(&[5, 20, 35, 92], 8)?]).await?;
        let failed = r.requested_time.clone().unwrap_or_default();
        let written: Vec<String> = data_files(&root).difference(&before).cloned().collect();
        let timeline = root.join(".hoodie/timeline");
        for e in std::fs::read_dir(&timeline)?.flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if n.starts_with(&format!("{failed}_")) {
                std::fs::remove_file(e.path())?;
            }
        }
        let markers = root.join(".hoodie/.temp").join(&failed);
        std::fs::create_dir_all(&markers)?;
        std::fs::write(markers.join("MARKERS.type"), "TIMELINE_SERVER_BASED")?;
        let lines: String = written
            .iter()
            .map(|f| format!("{f}.marker.CREATE\n"))
            .collect();
        std::fs::write(markers.join("MARKERS0"), lines)?;
        steps.push(format!(
            "{{\"op\": \"crashed upsert\", \"requested_time\": {failed:?}, \"files\": {}}}",
            written.len()
        ));
        // The next write rolls the crashed one back first.
        let mut t = open(&path).await?;
        step(
            &mut steps,
            "upsert",
            &t.upsert([batch(&[11, 23, 38], 9)?]).await?,
        );
    }
    println!(
        "{{\"table\": \"{}\", \"steps\": [{}]}}",
        s.name,
        steps.join(", ")
    );
    Ok(())
}

fn decimal_schema() -> Arc<Schema> {
    let fields = [
        ("id", DataType::Utf8, false),
        ("part", DataType::Utf8, false),
        ("ts", DataType::Int64, false),
        ("d_5_2", DataType::Decimal128(5, 2), true),
        ("d_10_2", DataType::Decimal128(10, 2), true),
        ("d_20_4", DataType::Decimal128(20, 4), true),
        ("d_38_10", DataType::Decimal128(38, 10), true),
        ("note", DataType::Utf8, true),
    ];
    Arc::new(Schema::new(
        fields
            .map(|(name, t, nullable)| Field::new(name, t, nullable))
            .to_vec(),
    ))
}

/// Rows for keys `ids` in `round`: signs alternate, every precision reaches its extremes on
/// some key, and some values are null.
fn decimal_batch(ids: &[u32], round: i64) -> Res<RecordBatch> {
    let dec = |p: u8, s: i8, f: &dyn Fn(i128) -> Option<i128>| -> Res<ArrayRef> {
        let values: Vec<Option<i128>> = ids.iter().map(|&i| f(i as i128)).collect();
        Ok(Arc::new(
            Decimal128Array::from(values).with_precision_and_scale(p, s)?,
        ))
    };
    let r = round as i128;
    let sign = |i: i128| if (i + r) % 2 == 0 { 1 } else { -1 };
    let max = |digits: u32| 10i128.pow(digits) - 1;
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(
            ids.iter().map(|i| format!("k{i:03}")).collect::<Vec<_>>(),
        )),
        Arc::new(StringArray::from(
            ids.iter()
                .map(|&i| ["a", "b"][(i as usize) % 2].to_string())
                .collect::<Vec<_>>(),
        )),
        Arc::new(Int64Array::from(
            ids.iter()
                .map(|&i| round * 100 + i as i64)
                .collect::<Vec<_>>(),
        )),
        dec(5, 2, &|i| match i % 5 {
            0 => None,
            1 => Some(sign(i) * max(5)),
            _ => Some(sign(i) * (i * 1234 + r) % max(5)),
        })?,
        dec(10, 2, &|i| match i % 4 {
            3 => None,
            0 => Some(0),
            1 => Some(sign(i) * max(10)),
            _ => Some(sign(i) * (i * 987_654_321 + r) % max(10)),
        })?,
        dec(20, 4, &|i| match i % 6 {
            5 => None,
            1 => Some(sign(i) * max(20)),
            _ => Some(sign(i) * (i * 12_345_678_901_234_567 + r)),
        })?,
        dec(38, 10, &|i| match i % 7 {
            6 => None,
            1 => Some(sign(i) * max(38)),
            2 => Some(-1),
            _ => Some(sign(i) * (i * 10i128.pow(30) + r)),
        })?,
        Arc::new(StringArray::from(
            ids.iter()
                .map(|&i| format!("round {round} key {i}"))
                .collect::<Vec<_>>(),
        )),
    ];
    Ok(RecordBatch::try_new(decimal_schema(), cols)?)
}

/// A small table with decimal columns: insert 12 keys, then update 4 and insert 2 (MOR: a
/// Parquet log block over each updated slice).
async fn write_decimals(dir: &Path, name: &str, mor: bool) -> Res<()> {
    let path = dir.join(name).to_string_lossy().to_string();
    Table::create(&path)
        .with_table_name(name)
        .with_table_type(if mor {
            TableTypeValue::MergeOnRead
        } else {
            TableTypeValue::CopyOnWrite
        })
        .with_table_version(9)
        .with_record_key_fields(["id"])
        .with_ordering_fields(["ts"])
        .with_partition_fields(["part"])
        .create()
        .await?;
    let mut steps = Vec::new();
    let ids: Vec<u32> = (1..13).collect();
    let r = open(&path).await?.append([decimal_batch(&ids, 1)?]).await?;
    step(&mut steps, "insert", &r);
    let r = open(&path)
        .await?
        .upsert([decimal_batch(&[2, 5, 8, 11, 13, 14], 2)?])
        .await?;
    step(&mut steps, "upsert", &r);
    let filters = r#"[[["d_10_2", "<", "0"]], [["d_38_10", ">", "1000"]], [["id", "=", "k008"]]]"#;
    println!(
        "{{\"table\": \"{name}\", \"written_by\": \"hudi-rs 0.6.0-rc.1 (crate hudi, tests/bench/hudi_rs_upsert/src/bin/matrix.rs, write_decimals)\", \"filters\": {filters}, \"steps\": [{}]}}",
        steps.join(", ")
    );
    Ok(())
}

async fn write_bench(path: &str, input: &str) -> Res<()> {
    let bytes = std::fs::read(input)?;
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)?;
    let mut chunks: Vec<(String, Vec<RecordBatch>)> = Vec::new();
    for b in reader {
        let b = b?;
        let files = b
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or("file name")?;
        let file = files.value(0).to_string();
        // Batches never span files; the first column only groups them.
        let data = b.project(&(1..b.num_columns()).collect::<Vec<_>>())?;
        match chunks.last_mut() {
            Some((f, v)) if *f == file => v.push(data),
            _ => chunks.push((file, vec![data])),
        }
    }
    Table::create(path)
        .with_table_name("hudi_rs_bench_cow_v9")
        .with_record_key_fields(["id"])
        .with_ordering_fields(["ts"])
        .with_partition_fields(["region"])
        .with_hive_style_partitioning(false)
        .create()
        .await?;
    let started = std::time::Instant::now();
    for (_, batches) in &chunks {
        open(path).await?.append(batches.clone()).await?;
    }
    println!(
        "{{\"table\": {path:?}, \"commits\": {}, \"seconds\": {:.1}}}",
        chunks.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    if args[1] == "--bench" {
        return write_bench(&args[2], &args[3]).await;
    }
    let out = Path::new(&args[1]);
    let only = args.get(2);
    let mut specs = Vec::new();
    for mor in [false, true] {
        for version in [8, 9] {
            for partitioned in [true, false] {
                let name = format!(
                    "hudi_rs_{}_v{version}_{}",
                    if mor { "mor" } else { "cow" },
                    if partitioned { "part" } else { "nonpart" }
                );
                specs.push(Spec {
                    name: Box::leak(name.into_boxed_str()),
                    mor,
                    version,
                    partitioned,
                    compact: false,
                    rollback: false,
                });
            }
        }
    }
    specs.push(Spec {
        name: "hudi_rs_mor_v9_part_compacted",
        mor: true,
        version: 9,
        partitioned: true,
        compact: true,
        rollback: false,
    });
    specs.push(Spec {
        name: "hudi_rs_mor_v9_part_rollback",
        mor: true,
        version: 9,
        partitioned: true,
        compact: false,
        rollback: true,
    });
    std::fs::create_dir_all(out)?;
    for (name, mor) in [
        ("hudi_rs_decimals_cow_v9", false),
        ("hudi_rs_decimals_mor_v9", true),
    ] {
        if only.is_some_and(|o| o == name) {
            return write_decimals(out, name, mor).await;
        }
    }
    for s in specs.iter().filter(|s| only.is_none_or(|o| o == s.name)) {
        write_table(out, s).await?;
    }
    Ok(())
}
