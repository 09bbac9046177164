//! Tests of the Avro → Arrow decoder against datums written by apache-avro.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value;
use apache_avro::writer::datum::GenericDatumWriter;
use apache_avro::{Decimal, Schema};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema, TimeUnit};

use super::decode::AvroToArrow;

fn encode(schema: &Schema, values: &[Value], block_size: Option<usize>) -> Vec<Vec<u8>> {
    let writer = GenericDatumWriter::builder(schema)
        .maybe_target_block_size(block_size)
        .build()
        .unwrap();
    values
        .iter()
        .map(|v| writer.write_value_to_vec(v.clone()).unwrap())
        .collect()
}

fn decode(decoder: &mut AvroToArrow, datums: &[Vec<u8>]) -> RecordBatch {
    for d in datums {
        decoder.append(d).unwrap();
    }
    decoder.finish().unwrap()
}

fn rec(fields: Vec<(&str, Value)>) -> Value {
    Value::Record(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn null() -> Value {
    Value::Union(0, Box::new(Value::Null))
}

fn some(v: Value) -> Value {
    Value::Union(1, Box::new(v))
}

const ALL_TYPES: &str = r#"{"type":"record","name":"all","namespace":"t","fields":[
  {"name":"_hoodie_record_key","type":["null","string"],"default":null},
  {"name":"b","type":"boolean"},
  {"name":"i","type":["null","int"]},
  {"name":"l","type":"long"},
  {"name":"f","type":"float"},
  {"name":"d","type":["double","null"]},
  {"name":"by","type":"bytes"},
  {"name":"fx","type":{"type":"fixed","name":"f3","size":3}},
  {"name":"e","type":{"type":"enum","name":"color","symbols":["RED","GREEN"]}},
  {"name":"dec","type":["null",{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}]},
  {"name":"decf","type":{"type":"fixed","name":"d7","size":7,"logicalType":"decimal","precision":15,"scale":2}},
  {"name":"date","type":{"type":"int","logicalType":"date"}},
  {"name":"tms","type":{"type":"int","logicalType":"time-millis"}},
  {"name":"tus","type":{"type":"long","logicalType":"time-micros"}},
  {"name":"tsm","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"tsu","type":["null",{"type":"long","logicalType":"timestamp-micros"}]},
  {"name":"ltsm","type":{"type":"long","logicalType":"local-timestamp-millis"}},
  {"name":"ltsu","type":{"type":"long","logicalType":"local-timestamp-micros"}},
  {"name":"uuid","type":{"type":"string","logicalType":"uuid"}},
  {"name":"tags","type":{"type":"array","items":["null","string"]}},
  {"name":"props","type":["null",{"type":"map","values":"long"}]},
  {"name":"inner","type":["null",{"type":"record","name":"inner","fields":[
     {"name":"x","type":"int"},{"name":"c","type":"color"}]}]},
  {"name":"num","type":["null","int","long"]},
  {"name":"flt","type":["float","double"]},
  {"name":"mix","type":["null","int","string"]}
]}"#;

fn all_types_row(n: i64) -> Value {
    let uuid = apache_avro::Uuid::parse_str("67e55044-10b1-426f-9247-bb680e5fe0c8").unwrap();
    let odd = n % 2 == 1;
    rec(vec![
        (
            "_hoodie_record_key",
            if odd {
                null()
            } else {
                some(Value::String(format!("k{n}")))
            },
        ),
        ("b", Value::Boolean(odd)),
        (
            "i",
            if odd {
                null()
            } else {
                some(Value::Int(n as i32 * -3))
            },
        ),
        ("l", Value::Long(n << 40)),
        ("f", Value::Float(n as f32 + 0.5)),
        (
            "d",
            if odd {
                Value::Union(1, Box::new(Value::Null))
            } else {
                Value::Union(0, Box::new(Value::Double(n as f64 / 4.0)))
            },
        ),
        ("by", Value::Bytes(vec![n as u8, 0, 255])),
        ("fx", Value::Fixed(3, vec![1, 2, n as u8])),
        (
            "e",
            Value::Enum(n as u32 % 2, ["RED", "GREEN"][n as usize % 2].into()),
        ),
        (
            "dec",
            if odd {
                null()
            } else {
                some(Value::Decimal(Decimal::from(
                    (-12345 - n as i32).to_be_bytes().to_vec(),
                )))
            },
        ),
        (
            "decf",
            Value::Decimal(Decimal::from(vec![0, 0, 0, 0, 0, 0x30, 0x39])),
        ),
        ("date", Value::Date(19737 + n as i32)),
        ("tms", Value::TimeMillis(1000)),
        ("tus", Value::TimeMicros(2000)),
        ("tsm", Value::TimestampMillis(1_700_000_000_000 + n)),
        (
            "tsu",
            some(Value::TimestampMicros(1_700_000_000_000_000 + n)),
        ),
        ("ltsm", Value::LocalTimestampMillis(5)),
        ("ltsu", Value::LocalTimestampMicros(6)),
        ("uuid", Value::Uuid(uuid)),
        (
            "tags",
            Value::Array(
                (0..n)
                    .map(|j| {
                        if j == 1 {
                            null()
                        } else {
                            some(Value::String(format!("t{j}")))
                        }
                    })
                    .collect(),
            ),
        ),
        (
            "props",
            if odd {
                null()
            } else {
                some(Value::Map(HashMap::from([(
                    "a".to_string(),
                    Value::Long(n),
                )])))
            },
        ),
        (
            "inner",
            if n == 2 {
                null()
            } else {
                some(rec(vec![
                    ("x", Value::Int(n as i32)),
                    ("c", Value::Enum(1, "GREEN".into())),
                ]))
            },
        ),
        (
            "num",
            match n % 3 {
                0 => Value::Union(0, Box::new(Value::Null)),
                1 => Value::Union(1, Box::new(Value::Int(7))),
                _ => Value::Union(2, Box::new(Value::Long(1 << 50))),
            },
        ),
        (
            "flt",
            if odd {
                Value::Union(0, Box::new(Value::Float(1.5)))
            } else {
                Value::Union(1, Box::new(Value::Double(2.25)))
            },
        ),
        (
            "mix",
            match n % 3 {
                0 => Value::Union(0, Box::new(Value::Null)),
                1 => Value::Union(1, Box::new(Value::Int(3))),
                _ => Value::Union(2, Box::new(Value::String("s".into()))),
            },
        ),
    ])
}

#[test]
fn decodes_every_supported_type() {
    let schema = Schema::parse_str(ALL_TYPES).unwrap();
    let values: Vec<Value> = (0..4).map(all_types_row).collect();
    // Small target blocks make apache-avro write arrays/maps as sized (negative-count) blocks.
    for block_size in [None, Some(1)] {
        let datums = encode(&schema, &values, block_size);
        let mut decoder = AvroToArrow::for_writer(&schema).unwrap();
        let batch = decode(&mut decoder, &datums);
        check_all_types(&batch);
        // The decoder is reusable after finish.
        let again = decode(&mut decoder, &datums);
        assert_eq!(batch, again);
    }
}

fn check_all_types(batch: &RecordBatch) {
    assert_eq!(batch.num_rows(), 4);
    let col = |n: &str| batch.column_by_name(n).unwrap().clone();
    let key = col("_hoodie_record_key");
    assert_eq!(key.as_string::<i32>().value(0), "k0");
    assert!(key.is_null(1));
    assert!(col("b").as_boolean().value(1));
    let i = col("i");
    assert_eq!(
        (i.as_primitive::<Int32Type>().value(2), i.is_null(3)),
        (-6, true)
    );
    assert_eq!(col("l").as_primitive::<Int64Type>().value(3), 3 << 40);
    assert_eq!(col("f").as_primitive::<Float32Type>().value(1), 1.5);
    let d = col("d");
    assert_eq!(
        (d.as_primitive::<Float64Type>().value(2), d.is_null(1)),
        (0.5, true)
    );
    assert_eq!(col("by").as_binary::<i32>().value(2), &[2, 0, 255]);
    assert_eq!(col("fx").as_fixed_size_binary().value(3), &[1, 2, 3]);
    assert_eq!(col("e").as_string::<i32>().value(1), "GREEN");
    let dec = col("dec");
    assert_eq!(dec.data_type(), &DataType::Decimal128(12, 2));
    assert_eq!(dec.as_primitive::<Decimal128Type>().value(2), -12347);
    assert!(dec.is_null(1));
    assert_eq!(col("decf").as_primitive::<Decimal128Type>().value(0), 12345);
    assert_eq!(col("date").as_primitive::<Date32Type>().value(1), 19738);
    assert_eq!(
        col("tms").as_primitive::<Time32MillisecondType>().value(0),
        1000
    );
    assert_eq!(
        col("tus").as_primitive::<Time64MicrosecondType>().value(0),
        2000
    );
    let tsm = col("tsm");
    assert_eq!(
        tsm.data_type(),
        &DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
    );
    assert_eq!(
        tsm.as_primitive::<TimestampMillisecondType>().value(1),
        1_700_000_000_001
    );
    assert_eq!(
        col("tsu")
            .as_primitive::<TimestampMicrosecondType>()
            .value(3),
        1_700_000_000_000_003
    );
    assert_eq!(
        col("ltsm").data_type(),
        &DataType::Timestamp(TimeUnit::Millisecond, None)
    );
    assert_eq!(
        col("ltsu")
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        6
    );
    assert_eq!(
        col("uuid").as_string::<i32>().value(0),
        "67e55044-10b1-426f-9247-bb680e5fe0c8"
    );
    let tags = col("tags");
    let tags = tags.as_list::<i32>();
    assert_eq!(tags.value_length(3), 3);
    let t3 = tags.value(3);
    assert_eq!(
        (t3.as_string::<i32>().value(2), t3.is_null(1)),
        ("t2", true)
    );
    let props = col("props");
    let props = props.as_map();
    assert!(props.is_null(1));
    assert_eq!(
        props
            .value(2)
            .column(1)
            .as_primitive::<Int64Type>()
            .value(0),
        2
    );
    let inner = col("inner");
    assert!(inner.is_null(2));
    let inner = inner.as_struct();
    assert_eq!(inner.column(0).as_primitive::<Int32Type>().value(3), 3);
    assert_eq!(inner.column(1).as_string::<i32>().value(3), "GREEN");
    let num = col("num");
    assert_eq!(num.data_type(), &DataType::Int64);
    assert!(num.is_null(0));
    assert_eq!(num.as_primitive::<Int64Type>().values()[1..3], [7, 1 << 50]);
    assert_eq!(
        col("flt").as_primitive::<Float64Type>().values()[..2],
        [2.25, 1.5]
    );
    let mix = col("mix");
    let mix = mix.as_struct();
    assert!(mix.is_null(0));
    assert_eq!(mix.column(0).as_primitive::<Int32Type>().value(1), 3);
    assert!(mix.column(0).is_null(2));
    assert_eq!(mix.column(1).as_string::<i32>().value(2), "s");
}

const OLD: &str = r#"{"type":"record","name":"r","fields":[
  {"name":"a","type":"int"},
  {"name":"b","type":["null","string"]},
  {"name":"c","type":"float"},
  {"name":"gone","type":{"type":"array","items":{"type":"map","values":"string"}}},
  {"name":"d","type":["null","int"]},
  {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
  {"name":"rec","type":{"type":"record","name":"in","fields":[{"name":"x","type":"int"},{"name":"z","type":"string"}]}},
  {"name":"bytes","type":"bytes"},
  {"name":"small","type":"int"}
]}"#;

/// The table moved on: promoted, added, dropped and renamed-case columns.
#[test]
fn resolves_against_a_newer_table_schema() {
    let schema = Schema::parse_str(OLD).unwrap();
    let row = |n: i32| {
        rec(vec![
            ("a", Value::Int(n)),
            ("b", some(Value::String(format!("s{n}")))),
            ("c", Value::Float(0.25)),
            (
                "gone",
                Value::Array(vec![Value::Map(HashMap::from([(
                    "k".into(),
                    Value::String("v".into()),
                )]))]),
            ),
            ("d", if n == 0 { null() } else { some(Value::Int(n)) }),
            ("ts", Value::TimestampMillis(1_000)),
            (
                "rec",
                rec(vec![
                    ("x", Value::Int(n)),
                    ("z", Value::String("zz".into())),
                ]),
            ),
            ("bytes", Value::Bytes(b"ok".to_vec())),
            ("small", Value::Int(100 + n)),
        ])
    };
    let datums = encode(&schema, &[row(0), row(1)], None);
    let target = Arc::new(ArrowSchema::new(vec![
        Field::new("new_first", DataType::Utf8, true),
        Field::new("A", DataType::Int64, false),
        Field::new("b", DataType::Binary, true),
        Field::new("c", DataType::Float64, false),
        Field::new("d", DataType::Float64, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
            false,
        ),
        Field::new(
            "rec",
            DataType::Struct(Fields::from(vec![
                Field::new("x", DataType::Int64, false),
                Field::new("y", DataType::Utf8, true),
            ])),
            false,
        ),
        Field::new("bytes", DataType::Utf8, false),
        Field::new("small", DataType::Int16, false),
    ]));
    let mut decoder = AvroToArrow::new(&schema, target.clone()).unwrap();
    let batch = decode(&mut decoder, &datums);
    assert_eq!(batch.schema(), target);
    let col = |n: &str| batch.column_by_name(n).unwrap().clone();
    assert_eq!(col("new_first").null_count(), 2);
    assert_eq!(col("A").as_primitive::<Int64Type>().values()[..], [0, 1]);
    assert_eq!(col("b").as_binary::<i32>().value(1), b"s1");
    assert_eq!(col("c").as_primitive::<Float64Type>().value(0), 0.25);
    assert!(col("d").is_null(0));
    assert_eq!(col("d").as_primitive::<Float64Type>().value(1), 1.0);
    assert_eq!(
        col("ts")
            .as_primitive::<TimestampMicrosecondType>()
            .value(0),
        1_000_000
    );
    let rec_col = col("rec");
    let r = rec_col.as_struct();
    assert_eq!(r.column(0).as_primitive::<Int64Type>().value(1), 1);
    assert_eq!(r.column(1).null_count(), 2);
    assert_eq!(col("bytes").as_string::<i32>().value(0), "ok");
    assert_eq!(col("small").as_primitive::<Int16Type>().value(1), 101);
}

#[test]
fn incompatible_targets_and_bad_data_are_errors() {
    let schema = Schema::parse_str(OLD).unwrap();
    let target = |f: Field| Arc::new(ArrowSchema::new(vec![f]));
    let err = AvroToArrow::new(&schema, target(Field::new("b", DataType::Int32, true)))
        .err()
        .unwrap();
    assert_eq!(err.code(), "UNSUPPORTED");
    assert!(err.to_string().contains("field `b`"), "{err}");
    let err = AvroToArrow::new(&schema, target(Field::new("absent", DataType::Utf8, false)))
        .err()
        .unwrap();
    assert!(err.to_string().contains("absent"), "{err}");
    let err = AvroToArrow::new(&schema, target(Field::new("a", DataType::Utf8, false)))
        .err()
        .unwrap();
    assert_eq!(err.code(), "UNSUPPORTED");

    let mut decoder = AvroToArrow::for_writer(&schema).unwrap();
    let datum = encode(
        &schema,
        &[rec(vec![
            ("a", Value::Int(1)),
            ("b", null()),
            ("c", Value::Float(0.0)),
            ("gone", Value::Array(vec![])),
            ("d", null()),
            ("ts", Value::TimestampMillis(0)),
            (
                "rec",
                rec(vec![("x", Value::Int(1)), ("z", Value::String("z".into()))]),
            ),
            ("bytes", Value::Bytes(vec![])),
            ("small", Value::Int(1)),
        ])],
        None,
    )
    .remove(0);
    assert_eq!(
        decoder
            .append(&datum[..datum.len() - 2])
            .unwrap_err()
            .code(),
        "CORRUPT"
    );
    let mut bad_branch = datum.clone();
    bad_branch[1] = 0x08; // union branch 4 for `b`
    assert_eq!(
        AvroToArrow::for_writer(&schema)
            .unwrap()
            .append(&bad_branch)
            .unwrap_err()
            .code(),
        "CORRUPT"
    );
    // Narrowing that overflows is an error, not a silent null.
    let mut narrow =
        AvroToArrow::new(&schema, target(Field::new("a", DataType::Int8, false))).unwrap();
    let mut big = datum.clone();
    big[0] = 0x80;
    big.insert(1, 0x04); // a = 256
    narrow.append(&big).unwrap();
    assert!(narrow.finish().is_err());
}

const BENCH_SCHEMA: &str = r#"{"type":"record","name":"trip","fields":[
  {"name":"_hoodie_commit_time","type":["null","string"],"default":null},
  {"name":"_hoodie_commit_seqno","type":["null","string"],"default":null},
  {"name":"_hoodie_record_key","type":["null","string"],"default":null},
  {"name":"_hoodie_partition_path","type":["null","string"],"default":null},
  {"name":"_hoodie_file_name","type":["null","string"],"default":null},
  {"name":"ts","type":["null","long"],"default":null},
  {"name":"fare","type":["null","double"],"default":null},
  {"name":"rider","type":["null","string"],"default":null},
  {"name":"trip_date","type":["null",{"type":"int","logicalType":"date"}],"default":null},
  {"name":"is_paid","type":["null","boolean"],"default":null},
  {"name":"amount","type":["null",{"type":"fixed","name":"amt","size":7,"logicalType":"decimal","precision":15,"scale":2}],"default":null}
]}"#;

fn bench_datums(n: usize) -> (Schema, Vec<Vec<u8>>) {
    let schema = Schema::parse_str(BENCH_SCHEMA).unwrap();
    let s = |v: String| some(Value::String(v));
    let values: Vec<Value> = (0..n)
        .map(|i| {
            rec(vec![
                ("_hoodie_commit_time", s("20260307162604102".into())),
                (
                    "_hoodie_commit_seqno",
                    s(format!("20260307162604102_0_{i}")),
                ),
                ("_hoodie_record_key", s(format!("trip-{i:08}"))),
                ("_hoodie_partition_path", s("city=san_francisco".into())),
                (
                    "_hoodie_file_name",
                    s("3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0".into()),
                ),
                ("ts", some(Value::Long(1_700_000_000_000 + i as i64))),
                (
                    "fare",
                    if i % 10 == 0 {
                        null()
                    } else {
                        some(Value::Double(i as f64 * 0.37))
                    },
                ),
                ("rider", s(format!("rider-{}", i % 1000))),
                ("trip_date", some(Value::Date(19_000 + (i % 365) as i32))),
                ("is_paid", some(Value::Boolean(i % 3 == 0))),
                (
                    "amount",
                    some(Value::Decimal(Decimal::from(vec![
                        0,
                        0,
                        0,
                        0,
                        1,
                        (i >> 8) as u8,
                        i as u8,
                    ]))),
                ),
            ])
        })
        .collect();
    let datums = encode(&schema, &values, None);
    (schema, datums)
}

/// Nanoseconds this thread has run on a CPU (Linux), so a busy machine does not skew rates.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Decodes `datums` into one batch; returns records/s by wall clock and by thread CPU time.
fn decode_rate(schema: &Schema, datums: &[Vec<u8>]) -> (f64, Option<f64>, RecordBatch) {
    let mut decoder = AvroToArrow::for_writer(schema).unwrap();
    let (start, cpu) = (Instant::now(), thread_cpu_ns());
    decoder.reserve(datums.len());
    for d in datums {
        decoder.append(d).unwrap();
    }
    let batch = decoder.finish().unwrap();
    let n = datums.len() as f64;
    let cpu_rate = cpu
        .zip(thread_cpu_ns())
        .map(|(a, b)| n / ((b - a).max(1) as f64 / 1e9));
    (n / start.elapsed().as_secs_f64(), cpu_rate, batch)
}

#[test]
fn decodes_a_hudi_like_block() {
    let (schema, datums) = bench_datums(2_000);
    let (_, _, batch) = decode_rate(&schema, &datums);
    assert_eq!(batch.num_rows(), 2_000);
    assert_eq!(batch.column(6).null_count(), 200);
    assert_eq!(
        batch.column(2).as_string::<i32>().value(1999),
        "trip-00001999"
    );
}

/// `cargo test --release --lib bench_avro_decode -- --ignored --nocapture`
#[test]
#[ignore]
fn bench_avro_decode() {
    let (schema, datums) = bench_datums(200_000);
    let bytes: usize = datums.iter().map(Vec::len).sum();
    let (mut wall, mut cpu) = (0f64, 0f64);
    for _ in 0..5 {
        let (w, c, _) = decode_rate(&schema, &datums);
        wall = wall.max(w);
        cpu = cpu.max(c.unwrap_or(0.0));
    }
    let reader = GenericDatumReader::builder(&schema).build().unwrap();
    let start = thread_cpu_ns().unwrap_or(0);
    for d in &datums {
        reader.read_value(&mut &d[..]).unwrap();
    }
    let generic = datums.len() as f64 / ((thread_cpu_ns().unwrap_or(1) - start) as f64 / 1e9);
    let per_record = bytes as f64 / datums.len() as f64;
    println!(
        "AvroToArrow, {} records of {per_record:.0} bytes: {:.2} M records/s by CPU time \
         ({:.0} MB/s), {:.2} M records/s wall clock; apache-avro Value: {:.2} M records/s",
        datums.len(),
        cpu / 1e6,
        cpu * per_record / 1e6,
        wall / 1e6,
        generic / 1e6
    );
}

#[test]
fn exact_names_win_over_case_insensitive_ones() {
    let schema = Schema::parse_str(
        r#"{"type":"record","name":"r","fields":[{"name":"A","type":"int"},{"name":"a","type":"int"}]}"#,
    )
    .unwrap();
    let datums = encode(
        &schema,
        &[rec(vec![("A", Value::Int(1)), ("a", Value::Int(2))])],
        None,
    );
    let target = Arc::new(ArrowSchema::new(vec![Field::new(
        "a",
        DataType::Int32,
        false,
    )]));
    let batch = decode(&mut AvroToArrow::new(&schema, target).unwrap(), &datums);
    assert_eq!(batch.column(0).as_primitive::<Int32Type>().value(0), 2);
}

#[test]
fn null_fixed_values_cannot_inflate_a_batch_without_bound() {
    let schema = Schema::parse_str(
        r#"{"type":"record","name":"r","fields":[{"name":"f","type":["null",{"type":"fixed","name":"w","size":1048576}]}]}"#,
    )
    .unwrap();
    let mut decoder = AvroToArrow::for_writer(&schema).unwrap();
    // One input byte per row (the null branch), a mebibyte of output each.
    for _ in 0..100 {
        decoder.append(&[0]).unwrap();
    }
    let e = decoder.finish().unwrap_err();
    assert_eq!(e.code(), "CORRUPT", "{e}");
    // Within the bound the same rows decode.
    for _ in 0..10 {
        decoder.append(&[0]).unwrap();
    }
    assert_eq!(decoder.finish().unwrap().column(0).null_count(), 10);
}
