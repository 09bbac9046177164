//! A `column_stats` record whose bounds do not fit the table column, appended to a copy of a
//! fixture's metadata table as one more HFILE_DATA log block: only that file's statistics
//! become unknown (the file is kept, the plan says why), and rows stay right.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value;
use apache_avro::writer::datum::GenericDatumWriter;
use apache_avro::Schema;
use futures::executor::block_on;

use super::keys::{column_stats_key, file_group_index};
use super::log_blocks::{self, Content};
use crate::expr::parse_filter;
use crate::hfile::test_support as ts;
use crate::log_file::writer::encode_block;
use crate::log_file::{BlockMetadata, BlockType, HeaderKey};
use crate::read::ReadOptions;
use crate::storage::local::LocalStorage;
use crate::table::Table;

const FIXTURE: &str = "sample_table/cow/v9_txns_simple_meta";
/// region=eu, amounts 350.00 … 999.99: `amount < 60` prunes it, unless its stats are unusable.
const PARTITION: &str = "region=eu";
const FILE: &str = "04a47f87-3cc6-4c8b-a583-df8602967032-0_1-235-587_20260307162454799.parquet";
/// The last valid metadata delta commit that wrote column stats.
const INSTANT: &str = "20260307162456179";

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn copy_of_fixture(tag: &str) -> PathBuf {
    let dest = std::env::temp_dir()
        .join("hudi-edge-damaged")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dest);
    copy_dir(&ts::table(FIXTURE), &dest);
    dest
}

/// The current record (Avro binary) of `key` in shard `shard`, and the schema it was
/// written with, from the log file the file's own commit wrote.
fn template(dir: &Path, shard: usize, key: &str) -> (String, Vec<u8>) {
    let stats = dir.join(".hoodie/metadata/column_stats");
    let prefix = format!(".col-stats-{shard:04}-0_20260307162454799.log.");
    let log = std::fs::read_dir(&stats)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .unwrap()
        .path();
    let storage = LocalStorage::new(&stats);
    let name = log.file_name().unwrap().to_string_lossy().into_owned();
    let size = std::fs::metadata(&log).unwrap().len();
    let blocks = block_on(log_blocks::read(&storage, &name, size)).unwrap();
    for b in blocks {
        if let Content::HFile { reader, schema } = b.content {
            if let Some(v) = block_on(reader.get(key.as_bytes())).unwrap() {
                return (schema.unwrap(), v.to_vec());
            }
        }
    }
    panic!("no column_stats record {key} in {prefix}");
}

fn field<'a>(fields: &'a mut [(String, Value)], name: &str) -> &'a mut Value {
    &mut fields.iter_mut().find(|(n, _)| n == name).unwrap().1
}

fn union_record(v: &mut Value) -> &mut Vec<(String, Value)> {
    match v {
        Value::Union(_, inner) => union_record(inner),
        Value::Record(fields) => fields,
        other => panic!("not a record: {other:?}"),
    }
}

/// Index of the `StringWrapper` branch of the `minValue` union.
fn string_branch(schema: &Schema) -> u32 {
    let Schema::Record(r) = schema else { panic!() };
    let cs = &r
        .fields
        .iter()
        .find(|f| f.name == "ColumnStatsMetadata")
        .unwrap()
        .schema;
    let Schema::Union(u) = cs else { panic!() };
    let Some(Schema::Record(cs)) = u.variants().iter().find(|v| matches!(v, Schema::Record(_)))
    else {
        panic!()
    };
    let min = &cs
        .fields
        .iter()
        .find(|f| f.name == "minValue")
        .unwrap()
        .schema;
    let Schema::Union(u) = min else { panic!() };
    let i = u
        .variants()
        .iter()
        .position(|v| v.name().is_some_and(|n| n.name() == "StringWrapper"));
    i.unwrap() as u32
}

/// The record with string bounds for a decimal column; `tight` makes it replace the older
/// version instead of merging with it.
fn string_bounds(schema_json: &str, value: &[u8], tight: bool) -> Vec<u8> {
    let schema = Schema::parse_str(schema_json).unwrap();
    let reader = GenericDatumReader::builder(&schema).build().unwrap();
    let mut record = reader.read_value(&mut &value[..]).unwrap();
    let Value::Record(fields) = &mut record else {
        panic!()
    };
    let cs = union_record(field(fields, "ColumnStatsMetadata"));
    let branch = string_branch(&schema);
    for bound in ["minValue", "maxValue"] {
        let wrapped = Value::Record(vec![("value".into(), Value::String("abc".into()))]);
        *field(cs, bound) = Value::Union(branch, Box::new(wrapped));
    }
    *field(cs, "isTightBound") = Value::Boolean(tight);
    let writer = GenericDatumWriter::builder(&schema).build().unwrap();
    writer.write_value_to_vec(record).unwrap()
}

/// Appends one log file holding `record` under `key` to shard `shard`.
fn append_log(dir: &Path, shard: usize, key: &str, schema: &str, record: Vec<u8>) {
    let hfile = ts::write_hfile(&[(key.as_bytes().to_vec(), record)], &ts::Spec::default());
    let header = BlockMetadata::new()
        .with(HeaderKey::InstantTime, INSTANT)
        .with(HeaderKey::Schema, schema);
    let block = encode_block(BlockType::HFileData, &header, &hfile, &BlockMetadata::new()).unwrap();
    let name = format!(".col-stats-{shard:04}-0_{INSTANT}.log.2_0-0-0");
    std::fs::write(dir.join(".hoodie/metadata/column_stats").join(name), block).unwrap();
}

/// Notes, files after column stats, files selected and rows of `amount < 60`.
fn plan(dir: &Path) -> (Vec<String>, Option<usize>, usize, usize) {
    let table = block_on(Table::open(Arc::new(LocalStorage::new(dir)))).unwrap();
    let options = ReadOptions {
        filters: vec![parse_filter("amount < 60").unwrap()],
        ..Default::default()
    };
    let result = block_on(table.read(&options)).unwrap();
    let rows = result.num_rows();
    let stats = result.plan.stats;
    let (after, selected) = (stats.files_after_column_stats, stats.files_selected);
    (stats.planning_notes, after, selected, rows)
}

#[test]
fn mistyped_column_stats_keep_their_file() {
    let key = column_stats_key("amount", PARTITION, FILE);
    let shard = file_group_index(&key, 2);
    // Tight bounds replace the older version and then do not fit the column; loose ones do
    // not merge with it. Either way the file is kept and its footer decides.
    for (tight, why) in [
        (
            true,
            "a string bound does not fit a Decimal128(15, 2) column",
        ),
        (false, "cannot compare"),
    ] {
        let dir = copy_of_fixture(if tight { "tight" } else { "merged" });
        let (clean_notes, clean_after, clean_selected, clean_rows) = plan(&dir);
        assert_eq!(clean_after, Some(1), "{clean_notes:?}");
        let (schema, value) = template(&dir, shard, &key);
        let record = string_bounds(&schema, &value, tight);
        append_log(&dir, shard, &key, &schema, record);
        let (notes, after, selected, rows) = plan(&dir);
        assert_eq!(after, Some(2), "{notes:?}");
        let note = notes
            .iter()
            .find(|n| n.starts_with("column_stats: ") && n.contains(why));
        assert!(note.is_some(), "{why}: {notes:?}");
        assert_eq!((selected, rows), (clean_selected, clean_rows));
        assert_eq!(rows, 1); // TXN-018, amount 55.00
        let _ = std::fs::remove_dir_all(&dir);
    }
}
