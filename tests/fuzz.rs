//! Fuzzing of every parser that takes table bytes, on stable Rust: a structure-aware mutator
//! over real files (tests/fuzz/corpus, taken from the fixtures) drives each parser in-process.
//! A finding is a panic, an error that does not name the file, an input taking over
//! [`SLOW`], or one allocating over [`WILD_BYTES`] live on its thread.
//!
//! `cargo test` runs a short deterministic smoke pass per target; `tests/fuzz/run.sh`
//! runs each target for a fixed time (the ignored `fuzz_for_seconds`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::executor::block_on;
use futures::StreamExt;
use hudi_edge::avro::decode::AvroToArrow;
use hudi_edge::base_file::{matching_row_groups, read_footer, stream_row_groups, RowGroupStats};
use hudi_edge::config::TableConfig;
use hudi_edge::expr::stats::StatsSource;
use hudi_edge::hfile::{HFileReader, OpenOptions};
use hudi_edge::log_file::archive::decode_archive_block;
use hudi_edge::log_file::data::{decode_avro_block, decode_parquet_block, AvroRecords};
use hudi_edge::log_file::delete::decode_delete_block;
use hudi_edge::log_file::{parse_log_bytes, BlockType, LogBlock};
use hudi_edge::metadata::records::{RecordDecoder, RecordEncoder};
use hudi_edge::storage::listing::{parse_autoindex, parse_s3_list, Manifest};
use hudi_edge::storage::memory::MemoryStorage;
use hudi_edge::storage::Storage;
use hudi_edge::timeline::metadata::decode_instant_file;
use hudi_edge::timeline::CommitMetadata;
use hudi_edge::{HudiError, Result};

/// The name every input is parsed under; errors must carry it.
const FILE: &str = "fuzz/input.bin";
const SLOW: Duration = Duration::from_secs(1);
/// The native ceiling for one read.
const WILD_BYTES: isize = 256 << 20;
/// Allocations past this on one thread are refused (an abort, with the input saved) so a
/// bomb cannot take the machine down.
const REFUSE_BYTES: isize = 2 << 30;
/// No progress for this long: the input is saved and the process exits.
const HANG: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------
// Allocation tracking per thread (each target runs on one thread).

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// Adds `delta` to this thread's live bytes; false when the ceiling would be passed.
fn track(delta: isize) -> bool {
    LIVE.try_with(|live| {
        let now = live.get() + delta;
        if delta > 0 && now > REFUSE_BYTES {
            return false;
        }
        live.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
        true
    })
    .unwrap_or(true)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !track(layout.size() as isize) {
            return std::ptr::null_mut();
        }
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !track(layout.size() as isize) {
            return std::ptr::null_mut();
        }
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        track(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !track(new_size as isize - layout.size() as isize) {
            return std::ptr::null_mut();
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

// ---------------------------------------------------------------------------------------
// Targets

type Parse = fn(&[u8]) -> Result<()>;

struct Target {
    name: &'static str,
    parse: Parse,
    kind: Kind,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Length-field and marker mutations, mostly keeping the length.
    Binary,
    /// As binary, half of them in the last quarter, where the footer is.
    Footer,
    /// Token mutations.
    Text,
}

const TARGETS: &[Target] = &[
    Target {
        name: "log_avro",
        parse: log_file,
        kind: Kind::Binary,
    },
    Target {
        name: "log_delete",
        parse: log_file,
        kind: Kind::Binary,
    },
    Target {
        name: "log_parquet",
        parse: log_file,
        kind: Kind::Binary,
    },
    Target {
        name: "log_hfile",
        parse: hfile_log_file,
        kind: Kind::Binary,
    },
    Target {
        name: "log_command",
        parse: log_file,
        kind: Kind::Binary,
    },
    Target {
        name: "archive",
        parse: archive,
        kind: Kind::Binary,
    },
    Target {
        name: "hfile",
        parse: hfile_unchecked,
        kind: Kind::Binary,
    },
    Target {
        name: "mdt_record",
        parse: mdt_record,
        kind: Kind::Binary,
    },
    Target {
        name: "avro_datum",
        parse: avro_datum,
        kind: Kind::Binary,
    },
    Target {
        name: "instant",
        parse: instant,
        kind: Kind::Binary,
    },
    Target {
        name: "commit_json",
        parse: commit_json,
        kind: Kind::Text,
    },
    Target {
        name: "hoodie_properties",
        parse: hoodie_properties,
        kind: Kind::Text,
    },
    Target {
        name: "manifest",
        parse: manifest,
        kind: Kind::Text,
    },
    Target {
        name: "s3_list",
        parse: s3_list,
        kind: Kind::Text,
    },
    Target {
        name: "autoindex",
        parse: autoindex,
        kind: Kind::Text,
    },
    Target {
        name: "parquet_footer",
        parse: parquet_footer,
        kind: Kind::Footer,
    },
    Target {
        name: "input_jsonl",
        parse: input_jsonl,
        kind: Kind::Text,
    },
    Target {
        name: "input_csv",
        parse: input_csv,
        kind: Kind::Text,
    },
    Target {
        name: "input_arrow",
        parse: input_arrow,
        kind: Kind::Binary,
    },
    Target {
        name: "input_parquet",
        parse: input_parquet,
        kind: Kind::Footer,
    },
    Target {
        name: "lock_file",
        parse: lock_file,
        kind: Kind::Text,
    },
    Target {
        name: "markers",
        parse: markers,
        kind: Kind::Text,
    },
    Target {
        name: "write_plans",
        parse: write_plans,
        kind: Kind::Binary,
    },
];

/// Every block of a log file, each decoded by its type; the first error is returned after
/// all blocks ran.
fn log_file(input: &[u8]) -> Result<()> {
    let blocks = parse_log_bytes(FILE, Bytes::copy_from_slice(input))?;
    let mut first = Ok(());
    for block in &blocks {
        let r = decode_block(block);
        if first.is_ok() {
            first = r;
        }
    }
    first
}

/// HFile blocks carry CRCs, which nearly every mutation breaks: most inputs get their
/// blocks' checksum type set to none so the mutations reach the parsers behind them.
fn without_checksums(input: &[u8]) -> Option<Vec<u8>> {
    const MAGICS: [&[u8]; 8] = [
        b"DATABLK*",
        b"IDXROOT2",
        b"IDXINTE2",
        b"IDXLEAF2",
        b"METABLKc",
        b"FILEINF2",
        b"BLMFMET2",
        b"BLMFBLK2",
    ];
    if input.len().is_multiple_of(4) {
        return None;
    }
    let mut out = input.to_vec();
    for at in 0..input.len().saturating_sub(25) {
        if MAGICS.iter().any(|m| input[at..].starts_with(m)) {
            out[at + 24] = 0;
        }
    }
    Some(out)
}

fn hfile_log_file(input: &[u8]) -> Result<()> {
    log_file(&without_checksums(input).unwrap_or_else(|| input.to_vec()))
}

fn hfile_unchecked(input: &[u8]) -> Result<()> {
    hfile(&without_checksums(input).unwrap_or_else(|| input.to_vec()))
}

fn decode_block(block: &LogBlock) -> Result<()> {
    let content = block.loaded_content().cloned().unwrap_or_default();
    match block.block_type {
        BlockType::AvroData | BlockType::CdcData => {
            let schema = block.schema().unwrap_or("");
            decode_avro_block(content, schema, None, FILE).map(drop)
        }
        BlockType::Delete => decode_delete_block(&content, FILE).map(drop),
        BlockType::ParquetData => decode_parquet_block(content, FILE).map(drop),
        BlockType::HFileData => {
            let reader = HFileReader::from_bytes(content, FILE)?;
            hfile_records(&reader)
        }
        BlockType::Command => {
            let _ = (block.command_type(), block.rollback_target());
            Ok(())
        }
        BlockType::Corrupt => Ok(()),
    }
}

fn archive(input: &[u8]) -> Result<()> {
    for block in parse_log_bytes(FILE, Bytes::copy_from_slice(input))? {
        if block.block_type == BlockType::AvroData {
            let content = block.loaded_content().cloned().unwrap_or_default();
            decode_archive_block(content, block.schema().unwrap_or(""), FILE)?;
        }
    }
    Ok(())
}

fn hfile_records(reader: &HFileReader) -> Result<()> {
    let cells = block_on(reader.scan_all())?;
    if let Some(first) = cells.first() {
        block_on(reader.get(&first.key))?;
        block_on(reader.scan_prefix(&first.key[..first.key.len().min(3)]))?;
    }
    let decoder = RecordDecoder::for_hfile(reader)?;
    for (_, payload) in decoder.decode_each(&cells)? {
        payload?;
    }
    Ok(())
}

/// The HFile in memory, and through a store (the ranged tail read).
fn hfile(input: &[u8]) -> Result<()> {
    let from_bytes = HFileReader::from_bytes(Bytes::copy_from_slice(input), FILE)
        .and_then(|r| hfile_records(&r));
    let storage = MemoryStorage::new();
    storage.insert(FILE, input.to_vec(), None);
    let storage: Arc<dyn Storage> = Arc::new(storage);
    let opts = OpenOptions {
        tail_bytes: 4096,
        file_size: None,
    };
    let stored = block_on(HFileReader::open_with(storage, FILE, opts));
    let stored = stored.and_then(|r| hfile_records(&r));
    from_bytes.and(stored)
}

/// A `HoodieMetadataRecord` value under the writer schema of the corpus' HFiles, and the
/// path compaction copies values by: the type read in place must be the decoded one, and a
/// value moved into another base file must decode to the same payload.
fn mdt_record(input: &[u8]) -> Result<()> {
    // Built once: the schema is the corpus', fixed.
    static CODECS: std::sync::OnceLock<(RecordDecoder, RecordEncoder)> = std::sync::OnceLock::new();
    let (decoder, encoder) = CODECS.get_or_init(|| {
        let schema = &derived().mdt_schema;
        let decoder = RecordDecoder::new(schema, FILE).expect("corpus schema");
        (decoder, RecordEncoder::new(schema).expect("corpus schema"))
    });
    let in_place_type = decoder.record_type(input);
    let record = decoder.decode("key", input)?;
    if let Some(t) = in_place_type {
        assert_eq!(t, record.payload.type_code(), "type read in place");
    }
    if encoder.rebases_values() {
        let moved = encoder.rebase_value(input, "record-index-0000-0_0-1-2_003.hfile")?;
        let again = decoder.decode("key", &moved)?;
        // Debug text: NaN statistics compare equal there.
        assert_eq!(
            format!("{:?}", again.payload),
            format!("{:?}", record.payload),
            "rebased value"
        );
    }
    Ok(())
}

/// One datum through our Avro→Arrow decoder, under a log block's writer schema.
fn avro_datum(input: &[u8]) -> Result<()> {
    let schema = apache_avro::Schema::parse_str(&derived().avro_schema).expect("corpus schema");
    let run = || {
        let mut decoder = AvroToArrow::for_writer(&schema)?;
        decoder.append(input)?;
        decoder.finish().map(drop)
    };
    run().map_err(|e: HudiError| e.in_file(FILE))
}

fn commit_view(value: serde_json::Value) -> Result<()> {
    let meta = CommitMetadata::from_json(value, FILE)?;
    let _ = (meta.totals(), meta.partitions(), meta.schema());
    let _ = meta
        .write_stats()
        .filter_map(|(_, s)| s.file_name())
        .count();
    let _ = meta.replaced_file_ids().count();
    Ok(())
}

fn instant(input: &[u8]) -> Result<()> {
    commit_view(decode_instant_file(input, FILE)?)
}

fn commit_json(input: &[u8]) -> Result<()> {
    let value =
        serde_json::from_slice(input).map_err(|e| HudiError::corrupt_by(FILE, "bad JSON", e))?;
    commit_view(value)
}

fn hoodie_properties(input: &[u8]) -> Result<()> {
    let config = TableConfig::parse(&String::from_utf8_lossy(input), FILE)?;
    let _ = (config.is_partitioned(), config.is_mor());
    let _ = (
        config.has_completion_times(),
        config.metadata_files_available(),
    );
    Ok(())
}

fn manifest(input: &[u8]) -> Result<()> {
    let m = Manifest::parse(input, FILE)?;
    let _ = (m.list("", true), m.list(".hoodie", false), m.num_files());
    Ok(())
}

fn s3_list(input: &[u8]) -> Result<()> {
    parse_s3_list(input, "tables/t1", FILE).map(drop)
}

fn autoindex(input: &[u8]) -> Result<()> {
    // The parser names the directory it lists.
    parse_autoindex(input, "fuzz").map(drop)
}

/// The footer, every column's statistics, then every row group, as a read does.
fn parquet_footer(input: &[u8]) -> Result<()> {
    let storage = MemoryStorage::new();
    storage.insert(FILE, input.to_vec(), None);
    let storage: Arc<dyn Storage> = Arc::new(storage);
    let footer = block_on(read_footer(storage.as_ref(), FILE))?;
    let row_groups = matching_row_groups(&footer, None);
    let stats = RowGroupStats {
        footer: &footer,
        row_groups: row_groups.clone(),
    };
    for field in footer.metadata.schema().fields() {
        let _ = stats.column(field.name());
    }
    let mut batches = stream_row_groups(storage, FILE, footer, row_groups, None, 1024)?;
    block_on(async {
        while let Some(batch) = batches.next().await {
            batch?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Seeds

/// The table schema the input targets decode against: every kind of column a write takes.
fn input_schema() -> arrow_schema::SchemaRef {
    use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
    static S: std::sync::OnceLock<arrow_schema::SchemaRef> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let item = Arc::new(Field::new("element", DataType::Utf8, true));
        let entries = Field::new(
            "key_value",
            DataType::Struct(Fields::from(vec![
                Field::new("key", DataType::Utf8, false),
                Field::new("value", DataType::Int64, true),
            ])),
            false,
        );
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Utf8, false),
            Field::new("ts", DataType::Int64, true),
            Field::new("amount", DataType::Decimal128(10, 2), true),
            Field::new(
                "at",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            ),
            Field::new("day", DataType::Date32, true),
            Field::new("raw", DataType::Binary, true),
            Field::new("score", DataType::Float64, true),
            Field::new("tags", DataType::List(item), true),
            Field::new(
                "attrs",
                DataType::Struct(Fields::from(vec![
                    Field::new("a", DataType::Int32, true),
                    Field::new("b", DataType::Utf8, true),
                ])),
                true,
            ),
            Field::new("m", DataType::Map(Arc::new(entries), false), true),
        ]))
    })
    .clone()
}

/// Small limits, so the fuzzer reaches them.
fn input_limits() -> hudi_edge::write::limits::InputLimits {
    hudi_edge::write::limits::InputLimits {
        max_row_bytes: 4096,
        max_input_bytes: 1 << 20,
    }
}

fn decode_input(input: &[u8], format: hudi_edge::api::input::InputFormat) -> Result<()> {
    let schema = input_schema();
    let batches = hudi_edge::api::input::decode_rows(
        Bytes::copy_from_slice(input),
        format,
        &schema,
        FILE,
        &input_limits(),
    )?;
    // As the wasm face takes JS-typed columns, then the schema's own types.
    // The wasm face names the rows it was handed; here they are the fuzz input.
    hudi_edge::api::input::js_types(batches, &schema)
        .map(drop)
        .map_err(|e| HudiError::invalid_input(format!("{FILE}: {e}")))
}

fn input_jsonl(input: &[u8]) -> Result<()> {
    decode_input(input, hudi_edge::api::input::InputFormat::Jsonl)
}

fn input_csv(input: &[u8]) -> Result<()> {
    decode_input(input, hudi_edge::api::input::InputFormat::Csv)
}

fn input_arrow(input: &[u8]) -> Result<()> {
    decode_input(input, hudi_edge::api::input::InputFormat::Arrow)
}

fn input_parquet(input: &[u8]) -> Result<()> {
    decode_input(input, hudi_edge::api::input::InputFormat::Parquet)
}

fn lock_file(input: &[u8]) -> Result<()> {
    let lock = hudi_edge::write::lock::LockData::parse(input, FILE)?;
    let _ = (lock.is_live(0), lock.is_live(i64::MAX), lock.to_json());
    Ok(())
}

/// A timeline-server `MARKERS<n>` file as a rollback of its instant reads it: whatever the
/// file says, every path the rollback would delete is a file inside the table.
fn markers(input: &[u8]) -> Result<()> {
    use hudi_edge::write::services::rollback;
    const LOCATION: &str = "s3://bucket/table";
    let marked = rollback::markers_file_entries(input);
    let requests = rollback::marker_requests(LOCATION, "20260101000000000", &marked);
    for path in requests.iter().flat_map(|r| &r.files_to_be_deleted) {
        let inside = path.strip_prefix("s3://bucket/table/");
        let safe = inside.and_then(|p| hudi_edge::storage::path::within_table(p, FILE).ok());
        assert!(
            safe.is_some_and(|s| Some(s.as_str()) == inside),
            "a marker made the rollback delete {path:?}"
        );
    }
    let plan = hudi_edge::timeline::metadata::RollbackPlan {
        rollback_requests: Some(requests),
        ..Default::default()
    };
    hudi_edge::timeline::write::encode_rollback_plan(&plan).map(drop)
}

/// The plans a write reads from pending instants: rollback, clean, compaction and
/// clustering plans.
fn write_plans(input: &[u8]) -> Result<()> {
    use hudi_edge::timeline::metadata::{CleanerPlan, RollbackPlan};
    let value = decode_instant_file(input, FILE)?;
    let rollback = RollbackPlan::from_json(value.clone(), FILE).map(drop);
    let clean = CleanerPlan::from_json(value.clone(), FILE).map(drop);
    let compaction =
        hudi_edge::file_group::compaction::plan_operations(&value, FILE).and_then(|ops| {
            let _ = hudi_edge::file_group::compaction::planned_file_groups(&value);
            ops.iter().try_for_each(|(op, _)| op.slice(FILE).map(drop))
        });
    let clustering = hudi_edge::file_group::clustering::parse_requested(&value, FILE).map(drop);
    rollback.or(clean).or(compaction).or(clustering)
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz/corpus")
}

fn read_dir_files(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// Seeds derived from the corpus: the MDT record schema and values, an Avro block's schema
/// and datums, and a log file of command blocks (no fixture has one).
struct Derived {
    mdt_schema: String,
    mdt_values: Vec<Vec<u8>>,
    avro_schema: String,
    avro_datums: Vec<Vec<u8>>,
    commands: Vec<u8>,
}

fn derived() -> &'static Derived {
    static D: std::sync::OnceLock<Derived> = std::sync::OnceLock::new();
    D.get_or_init(|| {
        let mut mdt_schema = String::new();
        let mut mdt_values = Vec::new();
        for file in read_dir_files(&corpus_dir().join("hfile")) {
            let r = HFileReader::from_bytes(file.into(), "seed").expect("corpus HFile");
            let schema = r.file_info().schema().expect("schema");
            if mdt_schema.is_empty() {
                mdt_schema = schema.to_string();
            } else if mdt_schema != schema {
                continue;
            }
            let cells = block_on(r.scan_all()).expect("cells");
            mdt_values.extend(cells.iter().take(8).map(|c| c.value.to_vec()));
        }
        let blocks: Vec<LogBlock> = read_dir_files(&corpus_dir().join("log_avro"))
            .into_iter()
            .flat_map(|log| parse_log_bytes("seed", log.into()).expect("corpus log"))
            .collect();
        let block = blocks.iter().find(|b| b.block_type == BlockType::AvroData);
        let block = block.expect("an Avro block");
        let records = AvroRecords::parse(block.loaded_content().unwrap().clone()).unwrap();
        let avro_datums = records.iter().map(|d| d.unwrap().to_vec()).collect();
        let mut commands = hudi_edge::log_file::writer::rollback_block("002", "001").unwrap();
        commands.extend(hudi_edge::log_file::writer::rollback_block("004", "003").unwrap());
        Derived {
            mdt_schema,
            mdt_values,
            avro_schema: block.schema().unwrap().to_string(),
            avro_datums,
            commands,
        }
    })
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let mut out = read_dir_files(&corpus_dir().join(target));
    let d = derived();
    match target {
        "mdt_record" => out.extend(d.mdt_values.iter().cloned()),
        "avro_datum" => out.extend(d.avro_datums.iter().cloned()),
        "log_command" => out.push(d.commands.clone()),
        "input_arrow" => out.extend(arrow_seeds()),
        "input_parquet" => out.extend(parquet_seeds()),
        "write_plans" => out.push(clustering_seed()),
        _ => {}
    }
    assert!(!out.is_empty(), "no seeds for {target}");
    out
}

/// The JSON-lines seeds that decode, as batches of the input schema.
fn jsonl_seed_batches() -> Vec<Vec<arrow_array::RecordBatch>> {
    read_dir_files(&corpus_dir().join("input_jsonl"))
        .into_iter()
        .filter_map(|jsonl| {
            hudi_edge::api::input::decode_rows(
                jsonl.into(),
                hudi_edge::api::input::InputFormat::Jsonl,
                &input_schema(),
                "seed",
                &Default::default(),
            )
            .ok()
        })
        .collect()
}

/// The JSON-lines seeds as Parquet files, uncompressed (the mutator reaches the pages)
/// and zstd-compressed.
fn parquet_seeds() -> Vec<Vec<u8>> {
    use parquet::basic::{Compression, ZstdLevel};
    use parquet::file::properties::WriterProperties;
    let codecs = [
        Compression::UNCOMPRESSED,
        Compression::ZSTD(ZstdLevel::default()),
    ];
    let mut out = Vec::new();
    for batches in jsonl_seed_batches() {
        let Some(schema) = batches.first().map(|b| b.schema()) else {
            continue;
        };
        for codec in codecs {
            let props = WriterProperties::builder().set_compression(codec).build();
            let mut file = Vec::new();
            let mut w =
                parquet::arrow::ArrowWriter::try_new(&mut file, schema.clone(), Some(props))
                    .unwrap();
            batches.iter().for_each(|b| w.write(b).unwrap());
            w.close().unwrap();
            out.push(file);
        }
    }
    out
}

/// A `.clustering.requested` as this engine's clustering schedules it (Avro), two groups.
fn clustering_seed() -> Vec<u8> {
    use hudi_edge::file_group::clustering::{requested_json, ClusteringPlan, Group};
    use hudi_edge::file_group::compaction::Operation;
    let slice = |partition: &str, id: &str, log: bool| Operation {
        partition: partition.into(),
        file_id: id.into(),
        base_instant: "20260101000000000".into(),
        base_file: Some((format!("{id}_0-1-0_20260101000000000.parquet"), 4096)),
        log_files: (log.then(|| (format!(".{id}_20260101000000000.log.1_0-1-0"), 512)))
            .into_iter()
            .collect(),
    };
    let plan = ClusteringPlan {
        groups: vec![
            Group {
                slices: vec![slice("a", "f1-0", false), slice("a", "f2-0", true)],
                output_file_groups: 1,
            },
            Group {
                slices: vec![slice("b/c", "f3-0", true)],
                output_file_groups: 2,
            },
        ],
        sort_columns: vec!["id".into()],
        preserve_hoodie_metadata: true,
    };
    let json = requested_json(&plan, 120 << 20, &|p| format!("s3://bucket/table/{p}"));
    hudi_edge::timeline::write::encode_avro_instant(
        hudi_edge::timeline::write::InstantSchema::RequestedReplaceMetadata,
        &json,
    )
    .unwrap()
}

/// The JSON-lines seeds as Arrow IPC, stream and file format.
fn arrow_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for batches in jsonl_seed_batches() {
        let mut stream = Vec::new();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut stream, &input_schema()).unwrap();
        let mut file = Vec::new();
        let mut f = arrow_ipc::writer::FileWriter::try_new(&mut file, &input_schema()).unwrap();
        for b in &batches {
            w.write(b).unwrap();
            f.write(b).unwrap();
        }
        w.finish().unwrap();
        f.finish().unwrap();
        drop((w, f));
        out.extend([stream, file]);
    }
    out
}

// ---------------------------------------------------------------------------------------
// The mutator

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

const INTERESTING: &[i64] = &[
    0,
    1,
    -1,
    7,
    8,
    0x7f,
    0x80,
    0xff,
    0x7fff,
    0xffff,
    0x7fff_ffff,
    -0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    i64::MAX,
    i64::MIN,
];

/// Markers of the formats, spliced in to reach deeper states.
const BINARY_TOKENS: &[&[u8]] = &[
    b"#HUDI#",
    b"PAR1",
    b"Obj\x01",
    b"DATABLK*",
    b"IDXROOT2",
    b"IDXINTE2",
    b"TRABLK\"$",
    b"FILEINF2",
    b"PBUF",
    b"avro.codec",
    b"deflate",
    b"\xfe\xff\xff\xff\x0f",
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
];

const TEXT_TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    "null",
    "-1",
    "1e308",
    "-9223372036854775808",
    "18446744073709551616",
    "9223372036854775807",
    "\"\"",
    "../",
    "/",
    "=",
    "\n",
    "\\u0000",
    "&#x110000;",
    "&amp;",
    "<![CDATA[",
    "</Contents>",
    "<Contents><Key>",
    "<Size>",
    "<IsTruncated>true</IsTruncated>",
    "\"dirs\":{",
    "\"size\":",
    "\"type\":\"directory\"",
    "hoodie.table.version=",
    "hoodie.timeline.path=",
    "hoodie.table.type=MERGE_ON_READ\n",
    "\"numWrites\":",
    "\"partitionToWriteStats\":{",
    ".marker.CREATE\n",
    ".parquet",
];

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], kind: Kind) -> Vec<u8> {
    let mut v = seeds[rng.below(seeds.len())].clone();
    for _ in 0..1 + rng.below(6) {
        mutate_once(rng, &mut v, seeds, kind);
    }
    v
}

fn mutate_once(rng: &mut Rng, v: &mut Vec<u8>, seeds: &[Vec<u8>], kind: Kind) {
    let len = v.len();
    let text = kind == Kind::Text;
    let at = match kind {
        Kind::Footer if rng.below(2) == 0 => len - rng.below(len / 4 + 1),
        _ => rng.below(len + 1),
    };
    // Binary formats locate parts by offset: favour mutations that keep the length.
    let op = match rng.below(15) {
        n @ 11.. if !text => [0, 1, 5, 6][n - 11],
        n => n % 11,
    };
    match op {
        0 if len > 0 => v[at.min(len - 1)] ^= 1 << rng.below(8),
        1 if len > 0 => v[at.min(len - 1)] = rng.next() as u8,
        2 => {
            let n = 1 + rng.below(16);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            v.splice(at..at, bytes);
        }
        3 => {
            let end = (at + 1 + rng.below(64)).min(len);
            v.drain(at.min(end)..end);
        }
        4 => v.truncate(at),
        5 => {
            // An extreme integer, big- or little-endian, over 1 to 8 bytes.
            let value = INTERESTING[rng.below(INTERESTING.len())];
            let width = [1, 2, 4, 8][rng.below(4)];
            let bytes = if rng.below(2) == 0 {
                value.to_be_bytes()[8 - width..].to_vec()
            } else {
                value.to_le_bytes()[..width].to_vec()
            };
            overwrite(v, at, &bytes);
        }
        6 => length_field(rng, v),
        7 => {
            // Splice with another file of the same kind.
            let other = &seeds[rng.below(seeds.len())];
            let from = rng.below(other.len() + 1);
            v.truncate(at);
            v.extend_from_slice(&other[from..]);
        }
        8 if len > 0 => {
            // Repeat a chunk (records, blocks, nesting).
            let start = rng.below(len);
            let end = (start + 1 + rng.below(256)).min(len);
            let chunk = v[start..end].to_vec();
            let most = if rng.below(8) == 0 { 2000 } else { 4 };
            let times = 1 + rng.below(most);
            let at = rng.below(len + 1);
            v.splice(
                at..at,
                chunk.iter().copied().cycle().take(chunk.len() * times),
            );
        }
        _ if text => {
            let token = TEXT_TOKENS[rng.below(TEXT_TOKENS.len())];
            v.splice(at..at, token.bytes());
        }
        _ => {
            let token = BINARY_TOKENS[rng.below(BINARY_TOKENS.len())];
            v.splice(at..at, token.iter().copied());
        }
    }
}

fn overwrite(v: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    let end = (at + bytes.len()).min(v.len());
    v.splice(at..end, bytes.iter().copied());
}

/// Finds a big-endian 32- or 64-bit field whose value could be a length, count or offset
/// into the input, and sets it to an extreme or off-by-one value.
fn length_field(rng: &mut Rng, v: &mut [u8]) {
    let width = if rng.below(2) == 0 { 4 } else { 8 };
    if v.len() < width {
        return;
    }
    let read = |b: &[u8]| -> i64 {
        match width {
            4 => i32::from_be_bytes(b.try_into().unwrap()) as i64,
            _ => i64::from_be_bytes(b.try_into().unwrap()),
        }
    };
    let candidates: Vec<usize> = (0..=v.len() - width)
        .filter(|&i| {
            let n = read(&v[i..i + width]);
            n > 0 && n <= v.len() as i64
        })
        .collect();
    if candidates.is_empty() {
        return;
    }
    let at = candidates[rng.below(candidates.len())];
    let old = read(&v[at..at + width]);
    let new = match rng.below(6) {
        0 => old + 1,
        1 => old - 1,
        2 => old * 2,
        3 => v.len() as i64 + 1,
        _ => INTERESTING[rng.below(INTERESTING.len())],
    };
    let bytes = new.to_be_bytes();
    v[at..at + width].copy_from_slice(&bytes[8 - width..]);
}

// ---------------------------------------------------------------------------------------
// Running

thread_local! {
    static PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    static PARSING: Cell<bool> = const { Cell::new(false) };
}

/// Panics of a parser are recorded (message and place) instead of printed.
fn quiet_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !PARSING.with(Cell::get) {
                return default(info);
            }
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let place = info.location().map(|l| format!("{l}")).unwrap_or_default();
            // Replaying a finding: where in the engine the panic came from.
            if std::env::var_os("HUDI_EDGE_FUZZ_BACKTRACE").is_some() {
                eprintln!("{}", std::backtrace::Backtrace::force_capture());
            }
            let _ = PANIC.try_with(|p| *p.borrow_mut() = Some(format!("{place}: {msg}")));
        }))
    });
}

fn work_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fuzz")
}

#[derive(Default)]
struct Report {
    executions: u64,
    errors: u64,
    /// Typed errors by the start of their message: how deep the mutations get.
    error_kinds: BTreeMap<String, u64>,
    /// Kind and place → (count, saved input).
    findings: BTreeMap<String, (u64, PathBuf)>,
}

/// One input: `Some(finding)` when it panicked, was slow, allocated wildly or failed
/// without naming the file.
fn execute(target: &Target, input: &[u8]) -> (Option<String>, Option<String>) {
    let _ = PEAK.try_with(|p| p.set(LIVE.with(Cell::get)));
    let base = LIVE.with(Cell::get);
    let start = Instant::now();
    PARSING.with(|p| p.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| (target.parse)(input)));
    PARSING.with(|p| p.set(false));
    let elapsed = start.elapsed();
    let peak = PEAK.with(Cell::get) - base;
    let finding = match &result {
        Err(_) => {
            let msg = PANIC.with(|p| p.borrow_mut().take()).unwrap_or_default();
            Some(format!("panic at {}", first_line(&msg)))
        }
        Ok(Err(e)) if !e.to_string().contains(FILE) && !e.to_string().contains("fuzz") => {
            Some(format!(
                "error without the file name: {}",
                first_line(&e.to_string())
            ))
        }
        _ if peak > WILD_BYTES => Some(format!("allocated {} MiB", peak >> 20)),
        _ if elapsed > SLOW => Some(format!("slow: {} ms", elapsed.as_millis())),
        _ => None,
    };
    let error = match result {
        Ok(Err(e)) => Some(e.to_string()),
        _ => None,
    };
    (finding, error)
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(160).collect()
}

/// Mutates and runs until `budget` (a count of executions or a time) is spent.
fn run_target(
    target: &Target,
    seed: u64,
    iterations: Option<u64>,
    time: Option<Duration>,
) -> Report {
    quiet_panics();
    let seeds = seeds(target.name);
    // The smoke pass may run while a long run does: apart.
    let pass = if iterations.is_some() {
        "smoke"
    } else {
        "long"
    };
    let dir = work_dir().join(pass).join(target.name);
    std::fs::create_dir_all(&dir).unwrap();
    let current = dir.join("current");
    let progress = Arc::new(AtomicU64::new(0));
    let stop = watchdog(target.name, current.clone(), progress.clone());
    let mut rng = Rng(seed);
    let mut report = Report::default();
    let start = Instant::now();
    loop {
        let done = match (iterations, time) {
            (Some(n), _) => report.executions >= n,
            (_, Some(t)) => start.elapsed() >= t,
            _ => true,
        };
        if done {
            break;
        }
        // The seeds themselves first: real files must parse.
        let input = match seeds.get(report.executions as usize) {
            Some(s) => s.clone(),
            None => mutate(&mut rng, &seeds, target.kind),
        };
        // Saved before running, so an abort or hang leaves it behind.
        std::fs::write(&current, &input).unwrap();
        let (finding, error) = execute(target, &input);
        if let Some(e) = &error {
            report.errors += 1;
            let kind = e.replace(FILE, "").chars().take(70).collect();
            *report.error_kinds.entry(kind).or_default() += 1;
        }
        let finding = match (&error, seeds.len() as u64 > report.executions) {
            (Some(e), true) => Some(format!("seed fails: {}", first_line(e))),
            _ => finding,
        };
        report.executions += 1;
        progress.fetch_add(1, Ordering::Relaxed);
        if let Some(kind) = finding {
            let entry = report.findings.entry(kind).or_insert_with(|| {
                let n = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
                let saved = dir.join(format!("finding-{n}.bin"));
                std::fs::write(&saved, &input).unwrap();
                (0, saved)
            });
            entry.0 += 1;
        }
    }
    stop.store(u64::MAX, Ordering::Relaxed);
    report
}

/// Exits the process when a target stops making progress (a hang cannot be unwound).
fn watchdog(name: &'static str, current: PathBuf, progress: Arc<AtomicU64>) -> Arc<AtomicU64> {
    let stop = progress.clone();
    std::thread::spawn(move || {
        let mut last = (0, Instant::now());
        loop {
            std::thread::sleep(Duration::from_millis(500));
            let now = progress.load(Ordering::Relaxed);
            if now == u64::MAX {
                return;
            }
            if now != last.0 {
                last = (now, Instant::now());
            } else if last.1.elapsed() > HANG {
                eprintln!("fuzz {name}: HANG, input left in {}", current.display());
                std::process::exit(3);
            }
        }
    });
    stop
}

fn print(name: &str, r: &Report, took: Duration) {
    println!(
        "fuzz {name}: {} executions ({} typed errors) in {:.1} s, {} findings",
        r.executions,
        r.errors,
        took.as_secs_f64(),
        r.findings.len()
    );
    let mut kinds: Vec<_> = r.error_kinds.iter().collect();
    kinds.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
    for (kind, n) in kinds.iter().take(if verbose() { 8 } else { 0 }) {
        println!("  error {n}× {kind}");
    }
    for (kind, (n, saved)) in &r.findings {
        println!("  {n}× {kind}\n     input: {}", saved.display());
    }
}

fn verbose() -> bool {
    std::env::var_os("HUDI_EDGE_FUZZ_VERBOSE").is_some()
}

fn target(name: &str) -> &'static Target {
    TARGETS.iter().find(|t| t.name == name).expect("target")
}

/// The smoke pass: fixed seeds and counts, so `cargo test` is deterministic.
fn smoke(name: &str) {
    let start = Instant::now();
    let report = run_target(
        target(name),
        0x5EED ^ name.len() as u64,
        Some(SMOKE_RUNS),
        None,
    );
    print(name, &report, start.elapsed());
    assert!(
        report.findings.is_empty(),
        "fuzz {name} found problems (above)"
    );
}

const SMOKE_RUNS: u64 = 200;

macro_rules! smoke_tests {
    ($($name:ident),*) => {$(
        #[test]
        fn $name() {
            super::smoke(stringify!($name));
        }
    )*};
}

mod smoke {
    smoke_tests!(
        log_avro,
        log_delete,
        log_parquet,
        log_hfile,
        log_command,
        archive,
        hfile,
        mdt_record,
        avro_datum,
        instant,
        commit_json,
        hoodie_properties,
        manifest,
        s3_list,
        autoindex,
        parquet_footer,
        input_jsonl,
        input_csv,
        input_arrow,
        input_parquet,
        lock_file,
        markers,
        write_plans
    );
}

/// Every target (or those in `HUDI_EDGE_FUZZ_TARGETS`, comma-separated) for
/// `HUDI_EDGE_FUZZ_SECONDS` each; `HUDI_EDGE_FUZZ_SEED` varies the run.
#[test]
#[ignore = "long; run by tests/fuzz/run.sh"]
fn fuzz_for_seconds() {
    let env = |k: &str| std::env::var(k).ok();
    let secs: u64 = env("HUDI_EDGE_FUZZ_SECONDS")
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let seed: u64 = env("HUDI_EDGE_FUZZ_SEED")
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let only = env("HUDI_EDGE_FUZZ_TARGETS");
    let mut total = 0;
    for t in TARGETS {
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|n| n == t.name))
        {
            continue;
        }
        let start = Instant::now();
        let report = run_target(t, seed, None, Some(Duration::from_secs(secs)));
        print(t.name, &report, start.elapsed());
        total += report.findings.len();
    }
    assert_eq!(total, 0, "findings above");
}

/// Every input a fuzz run found (tests/fuzz/regressions/<target>/) now gets a typed error,
/// quickly and within the memory bound.
#[test]
fn regressions_answer_typed_errors() {
    quiet_panics();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz/regressions");
    let mut seen = 0;
    for t in TARGETS {
        for input in read_dir_files(&dir.join(t.name)) {
            let (finding, error) = execute(t, &input);
            assert_eq!(finding, None, "{}", t.name);
            // Table bytes are damage; rows handed to a write are bad input.
            assert!(
                error.is_some_and(
                    |e| e.contains(" is corrupt: ") || e.starts_with("invalid input: ")
                ),
                "{}",
                t.name
            );
            seen += 1;
        }
    }
    assert!(seen > 0);
}

/// Runs the inputs named by `HUDI_EDGE_FUZZ_REPLAY` (`target=file,…`) once each, with timing.
#[test]
#[ignore = "replays saved inputs"]
fn replay() {
    quiet_panics();
    let list = std::env::var("HUDI_EDGE_FUZZ_REPLAY").unwrap_or_default();
    for item in list.split(',').filter(|s| !s.is_empty()) {
        let (name, file) = item.split_once('=').expect("target=file");
        let input = std::fs::read(file).expect("input");
        let start = Instant::now();
        let (finding, error) = execute(target(name), &input);
        println!(
            "{name} {file}: {finding:?} {error:?} in {:?}",
            start.elapsed()
        );
    }
}

/// The harness itself: each kind of finding is reported.
#[test]
fn harness_reports_each_kind_of_finding() {
    quiet_panics();
    let cases: [(Parse, &str); 4] = [
        (|_| panic!("boom"), "panic at"),
        (
            |_| {
                std::thread::sleep(SLOW + Duration::from_millis(50));
                Ok(())
            },
            "slow",
        ),
        (
            |_| {
                std::hint::black_box(vec![0u8; 300 << 20]);
                Ok(())
            },
            "allocated 300 MiB",
        ),
        (
            |_| Err(HudiError::corrupt("elsewhere", "x")),
            "error without the file name",
        ),
    ];
    for (parse, kind) in cases {
        let target = Target {
            name: "self-test",
            parse,
            kind: Kind::Binary,
        };
        let (finding, _) = execute(&target, b"x");
        assert!(
            finding.as_deref().is_some_and(|f| f.starts_with(kind)),
            "{finding:?}"
        );
    }
}
