//! Fixture base files rewritten by [`write_base_file`]: the same rows, the same Parquet
//! types, the same footer keys and bloom filter, and statistics that agree with the
//! fixture's.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_schema::{Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{LogicalType, Type as PhysicalType};
use parquet::file::metadata::ParquetMetaData;
use parquet::schema::types::ColumnDescriptor;

use super::decimal::decimal_bytes;
use super::*;
use crate::hfile::test_support::table;

/// (fixture table, whether every column is a top-level primitive).
const TABLES: &[(&str, bool)] = &[
    ("sample_table/cow/v9_txns_simple_nometa", true),
    ("sample_table/mor/avro/v9_txns_simple_meta", true),
    ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d", true),
    ("sample_table/cow/v8_nonpartitioned", false),
    ("sample_table/cow/v6_nonpartitioned", false),
];

/// All rows of a Parquet file as one batch, and its footer.
fn read(bytes: Bytes) -> (RecordBatch, Arc<ParquetMetaData>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
    let meta = builder.metadata().clone();
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder.build().unwrap().map(|b| b.unwrap()).collect();
    (
        arrow_select::concat::concat_batches(&schema, &batches).unwrap(),
        meta,
    )
}

fn kv_of(meta: &ParquetMetaData) -> Vec<(String, String)> {
    let mut kv: Vec<(String, String)> = meta
        .file_metadata()
        .key_value_metadata()
        .into_iter()
        .flatten()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    kv.sort();
    kv
}

/// Everything a reader types a leaf column by.
fn leaf_type(c: &ColumnDescriptor) -> String {
    let t = c.self_type();
    let info = t.get_basic_info();
    format!(
        "{} {:?} len={} {:?} {:?} {:?} p={} s={} def={} rep={}",
        c.path(),
        c.physical_type(),
        c.type_length(),
        info.logical_type_ref(),
        info.converted_type(),
        info.repetition(),
        c.type_precision(),
        c.type_scale(),
        c.max_def_level(),
        c.max_rep_level()
    )
}

#[test]
fn fixture_base_files_rewrite_to_the_same_rows_types_and_footer() {
    let mut written = 0;
    for (rel, flat) in TABLES {
        for file in crate::hfile::test_support::data_base_files(&table(rel)) {
            let name = file.display().to_string();
            let (batch, fixture) = read(Bytes::from(std::fs::read(&file).unwrap()));
            let fixture_kv = kv_of(&fixture);
            let get = |k: &str| {
                fixture_kv
                    .iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, v)| v.clone())
            };
            // Files of Spark's row writer (bulk insert, clustering) carry Spark's schema
            // instead: not what this writer imitates.
            let Some(avro) = get(AVRO_SCHEMA_KEY) else {
                assert!(get("org.apache.spark.version").is_some(), "{name}");
                continue;
            };
            let has_bloom = get(bloom::FOOTER_KEY).is_some();
            let mut spec = BaseFileSpec::new(avro);
            if !has_bloom {
                spec.bloom = None;
            }
            let out = write_base_file(&batch, &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
            let (back, meta) = read(out.bytes.clone());

            // (a) the same rows.
            assert_eq!(back, batch, "{name}: rows");
            assert_eq!(out.num_rows, batch.num_rows() as u64);

            // (b) the same Parquet types, leaf by leaf, and the same root name; the same
            // column orders (floats too: parquet-mr's type-defined order).
            assert_eq!(
                meta.file_metadata().column_orders(),
                fixture.file_metadata().column_orders(),
                "{name}: column orders"
            );
            let ours = meta.file_metadata().schema_descr();
            let theirs = fixture.file_metadata().schema_descr();
            assert_eq!(
                ours.root_schema().name(),
                theirs.root_schema().name(),
                "{name}"
            );
            let leaves = |d: &parquet::schema::types::SchemaDescriptor| -> Vec<String> {
                d.columns()
                    .iter()
                    .filter(|c| *flat || c.path().parts().len() == 1)
                    .map(|c| leaf_type(c))
                    .collect()
            };
            assert_eq!(leaves(ours), leaves(theirs), "{name}: Parquet types");

            // (c) the footer: the same keys with the same values, the filter included
            // (the same keys in the same order under Java's default config).
            assert_eq!(kv_of(&meta), fixture_kv, "{name}: footer");
            if has_bloom {
                assert_eq!(out.min_record_key, get(MIN_RECORD_KEY), "{name}");
                assert_eq!(out.max_record_key, get(MAX_RECORD_KEY), "{name}");
                let filter = BloomFilter::from_footer(
                    &get(bloom::FOOTER_KEY).unwrap(),
                    get(bloom::TYPE_CODE_KEY).as_deref(),
                    &name,
                )
                .unwrap();
                let keys = batch.column(2).as_string::<i32>();
                assert!(keys.iter().all(|k| filter.might_contain(k.unwrap())));
            }

            // Column statistics agree with the fixture's own footer.
            for range in &out.columns {
                let schema = batch.schema();
                let conv = StatisticsConverter::try_new(&range.column, &schema, theirs).unwrap();
                let g = fixture.row_groups();
                let lo = Value::from_array(conv.row_group_mins(g.iter()).unwrap().as_ref(), 0);
                let hi = Value::from_array(conv.row_group_maxes(g.iter()).unwrap().as_ref(), 0);
                let nulls: u64 = conv
                    .row_group_null_counts(g.iter())
                    .unwrap()
                    .iter()
                    .flatten()
                    .sum();
                let none_if_null = |v: Value| (v != Value::Null).then_some(v);
                assert_eq!(range.min, none_if_null(lo), "{name} {}", range.column);
                assert_eq!(range.max, none_if_null(hi), "{name} {}", range.column);
                assert_eq!(range.null_count, nulls, "{name} {}", range.column);
                assert_eq!(range.value_count, batch.num_rows() as u64);
                assert!(range.total_size > 0 && range.total_uncompressed_size > 0);
            }
            let primitives = batch
                .schema()
                .fields()
                .iter()
                .filter(|f| !f.data_type().is_nested())
                .count();
            assert_eq!(out.columns.len(), primitives, "{name}");
            written += 1;
        }
    }
    assert!(written >= 10, "{written}");
}

fn meta_batch(keys: Vec<Option<&str>>) -> (RecordBatch, String) {
    let col = |v: Vec<Option<&str>>| Arc::new(StringArray::from(v)) as ArrayRef;
    let n = keys.len();
    let fields: Vec<Field> = META_COLUMNS
        .iter()
        .map(|c| Field::new(*c, DataType::Utf8, true))
        .collect();
    let mut columns = vec![
        col(vec![Some("1"); n]),
        col(vec![Some("1_0_0"); n]),
        col(keys),
    ];
    columns.push(col(vec![Some(""); n]));
    columns.push(col(vec![Some("f.parquet"); n]));
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    let avro = r#"{"type":"record","name":"r","namespace":"hoodie.t","fields":[
        {"name":"_hoodie_commit_time","type":["null","string"],"default":null},
        {"name":"_hoodie_commit_seqno","type":["null","string"],"default":null},
        {"name":"_hoodie_record_key","type":["null","string"],"default":null},
        {"name":"_hoodie_partition_path","type":["null","string"],"default":null},
        {"name":"_hoodie_file_name","type":["null","string"],"default":null}]}"#;
    (batch, avro.to_string())
}

#[test]
fn record_key_bounds_follow_java_string_order() {
    // U+1F600 sorts after U+FF61 in UTF-8 but before it in UTF-16 (a surrogate pair), Java's order.
    let (batch, avro) = meta_batch(vec![Some("\u{ff61}"), Some("\u{1f600}"), Some("a")]);
    let out = write_base_file(&batch, &BaseFileSpec::new(avro)).unwrap();
    assert_eq!(out.min_record_key.as_deref(), Some("a"));
    assert_eq!(out.max_record_key.as_deref(), Some("\u{ff61}"));
    assert_eq!(
        out.columns[2].max,
        Some(Value::String("\u{1f600}".into())),
        "column statistics keep Parquet's byte order"
    );
}

#[test]
fn bad_inputs_are_errors() {
    let (batch, avro) = meta_batch(vec![Some("k"), None]);
    // A null key cannot go in a filter.
    assert!(write_base_file(&batch, &BaseFileSpec::new(avro.clone())).is_err());
    // Without a filter it is written, with no key bounds in the footer.
    let mut spec = BaseFileSpec::new(avro.clone());
    spec.bloom = None;
    let out = write_base_file(&batch, &spec).unwrap();
    let (_, meta) = read(out.bytes);
    let keys: Vec<String> = kv_of(&meta).into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, [AVRO_SCHEMA_KEY, WRITER_MODEL_KEY]);

    let (batch, avro) = meta_batch(vec![Some("k")]);
    for codec in ["lzo", "brotli", "lz4", "gz"] {
        let mut spec = BaseFileSpec::new(avro.clone());
        spec.compression = codec.into();
        assert_eq!(
            write_base_file(&batch, &spec).unwrap_err().code(),
            "UNSUPPORTED"
        );
    }
    for codec in ["GZIP", "snappy", "zstd", "uncompressed", "none"] {
        let mut spec = BaseFileSpec::new(avro.clone());
        spec.compression = codec.into();
        spec.max_row_group_bytes = 0;
        spec.page_bytes = 0;
        write_base_file(&batch, &spec).unwrap();
    }
    for bad in ["", "[]", r#"{"type":"record","name":"r","fields":[]}"#] {
        assert!(write_base_file(&batch, &BaseFileSpec::new(bad)).is_err());
    }
    // Meta columns missing or out of order.
    let swapped = batch.project(&[1, 0, 2, 3, 4]).unwrap();
    assert!(write_base_file(&swapped, &BaseFileSpec::new(avro)).is_err());
}

#[test]
fn decimal_sizes_are_sparks() {
    let sizes: Vec<usize> = [1u8, 2, 3, 4, 5, 9, 10, 15, 18, 19, 38]
        .iter()
        .map(|&p| decimal_bytes(p))
        .collect();
    assert_eq!(sizes, [1, 1, 2, 2, 3, 4, 5, 7, 8, 9, 16]);
    assert_eq!(decimal_bytes(0), 1);
    assert_eq!(decimal_bytes(200), 16);
}

/// Decimal leaves at the sizes the Avro schema gives them, top-level and nested, read back by
/// arrow-rs' own Parquet reader as the same values.
#[test]
fn decimals_keep_the_tables_avro_encoding() {
    use arrow_array::builder::{Decimal128Builder, ListBuilder, MapBuilder, StringBuilder};
    use arrow_array::{Decimal128Array, StructArray};

    let (meta, meta_avro) = meta_batch(vec![Some("a"), Some("b"), Some("c"), Some("d")]);
    let values = [Some(-9_999_999_999_i128), Some(0), None, Some(1234)];
    let dec = || -> ArrayRef {
        Arc::new(
            Decimal128Array::from(values.to_vec())
                .with_precision_and_scale(10, 2)
                .unwrap(),
        )
    };
    let dec_type = DataType::Decimal128(10, 2);
    let inner = StructArray::from(vec![(
        Arc::new(Field::new("v", dec_type.clone(), true)),
        dec(),
    )]);
    let mut list = ListBuilder::new(Decimal128Builder::new().with_data_type(dec_type.clone()));
    let mut map = MapBuilder::new(
        None,
        StringBuilder::new(),
        Decimal128Builder::new().with_data_type(dec_type.clone()),
    );
    for v in values {
        list.values().append_option(v);
        list.values().append_value(-1);
        list.append(true);
        map.keys().append_value("k");
        map.values().append_option(v);
        map.append(true).unwrap();
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("as_bytes", dec()),
        ("as_min_fixed", dec()),
        ("as_wide_fixed", dec()),
        ("in_struct", Arc::new(inner)),
        ("in_list", Arc::new(list.finish())),
        ("in_map", Arc::new(map.finish())),
    ];
    let mut fields: Vec<Field> = meta
        .schema()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    let mut arrays = meta.columns().to_vec();
    for (name, a) in columns {
        fields.push(Field::new(name, a.data_type().clone(), true));
        arrays.push(a);
    }
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap();

    let bytes = r#"{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}"#;
    let fixed = |name: &str, size: usize| {
        format!(
            r#"{{"type":"fixed","name":"{name}","size":{size},"logicalType":"decimal","precision":10,"scale":2}}"#
        )
    };
    let data_fields = [
        format!(r#"{{"name":"as_bytes","type":["null",{bytes}]}}"#),
        format!(r#"{{"name":"as_min_fixed","type":["null",{}]}}"#, fixed("f5", 5)),
        format!(r#"{{"name":"as_wide_fixed","type":["null",{}]}}"#, fixed("f12", 12)),
        // A reference to a named fixed defined above.
        r#"{"name":"in_struct","type":["null",{"type":"record","name":"s","fields":[{"name":"v","type":["null","f12"]}]}]}"#.to_string(),
        format!(r#"{{"name":"in_list","type":["null",{{"type":"array","items":["null",{bytes}]}}]}}"#),
        format!(r#"{{"name":"in_map","type":["null",{{"type":"map","values":["null",{}]}}]}}"#, fixed("f9", 9)),
    ];
    let avro = meta_avro.replace("}]}", &format!("}},{}]}}", data_fields.join(",")));
    let mut spec = BaseFileSpec::new(avro.clone());
    spec.bloom = None;
    let out = write_base_file(&batch, &spec).unwrap();
    let (back, meta) = read(out.bytes.clone());
    assert_eq!(back.schema().fields(), batch.schema().fields());
    assert_eq!(
        back.columns(),
        batch.columns(),
        "rows as arrow-rs reads them"
    );

    let descr = meta.file_metadata().schema_descr();
    let stored: Vec<(String, PhysicalType, i32)> = descr
        .columns()
        .iter()
        .filter(|c| matches!(c.logical_type_ref(), Some(LogicalType::Decimal { .. })))
        .map(|c| (c.path().string(), c.physical_type(), c.type_length()))
        .collect();
    // `bytes` at the size its precision needs (decimal(10,2): 5 bytes), `fixed` at its own.
    let flba = |p: &str, n| (p.to_string(), PhysicalType::FIXED_LEN_BYTE_ARRAY, n);
    let needed = decimal_bytes(10) as i32;
    assert_eq!(
        stored,
        [
            flba("as_bytes", needed),
            flba("as_min_fixed", 5),
            flba("as_wide_fixed", 12),
            flba("in_struct.v", 12),
            flba("in_list.list.item", needed),
            flba("in_map.entries.value", 9),
        ]
    );
    // The statistics the metadata table takes are those of the rows.
    let from_rows = record_column_ranges(&batch);
    for name in ["as_bytes", "as_min_fixed", "as_wide_fixed"] {
        let [ours, rows] =
            [&out.columns, &from_rows].map(|c| c.iter().find(|r| r.column == name).unwrap());
        let key = |r: &ColumnRange| (r.min.clone(), r.max.clone(), r.null_count);
        assert_eq!(key(ours), key(rows), "{name}");
    }

    // Encodings that cannot hold the column, or that arrow-rs cannot read back, are refused.
    for (bad, why) in [
        (fixed("f20", 20), "fixed of 20 bytes"),
        (fixed("f4", 4), "fixed of 4 bytes"),
        (r#"{"type":"string"}"#.to_string(), "not a decimal"),
    ] {
        let avro = avro.replacen(
            &format!("[\"null\",{bytes}]"),
            &format!("[\"null\",{bad}]"),
            1,
        );
        let e = write_base_file(&batch, &BaseFileSpec::new(avro)).unwrap_err();
        assert_eq!(e.code(), "UNSUPPORTED", "{e}");
        assert!(
            e.to_string().contains("as_bytes") && e.to_string().contains(why),
            "{e}"
        );
    }

    // A value beyond the column's precision does not fit its bytes: refused, not truncated.
    let wide: ArrayRef = Arc::new(
        Decimal128Array::from(vec![Some(1i128 << 40); 4])
            .with_precision_and_scale(10, 2)
            .unwrap(),
    );
    let mut columns = batch.columns().to_vec();
    columns[5] = wide;
    let too_wide = RecordBatch::try_new(batch.schema(), columns).unwrap();
    let e = write_base_file(&too_wide, &spec).unwrap_err();
    assert_eq!(e.code(), "INVALID_INPUT", "{e}");
    assert!(e.to_string().contains("as_bytes"), "{e}");
}
