//! Damaged log files built on the fly, each with the outcome Java's `HoodieLogFileReader`
//! gives; every case is read both whole and by tiny ranged reads.

use bytes::Bytes;

use super::block::{BlockMetadata, BlockType, HeaderKey};
use super::delete::DeleteRecord;
use super::format::parse_log_bytes;
use super::reader::{read_log_file_with, LogReadOptions};
use super::test_util::block_on;
use super::writer::{avro_data_block, delete_block, encode_block, rollback_block};
use crate::avro::binary::write_bytes;
use crate::storage::memory::MemoryStorage;
use crate::value::Value;

const SCHEMA: &str = r#"{"type":"record","name":"r","fields":[{"name":"k","type":"string"}]}"#;
const PATH: &str = "p/.f1-0_001.log.1_0-0-0";

fn data_block(instant: &str, keys: &[&str]) -> Vec<u8> {
    let datums: Vec<Vec<u8>> = keys
        .iter()
        .map(|k| {
            let mut d = Vec::new();
            write_bytes(&mut d, k.as_bytes());
            d
        })
        .collect();
    avro_data_block(instant, SCHEMA, datums.iter().map(Vec::as_slice)).unwrap()
}

fn delete(instant: &str, key: &str) -> Vec<u8> {
    let rec = DeleteRecord {
        record_key: Some(key.into()),
        partition_path: Some("p".into()),
        ordering: Value::Int(0),
    };
    delete_block(instant, Some(SCHEMA), &[rec]).unwrap()
}

/// (type, offset, len, instant) of each block; the whole-file and ranged reads must agree.
type Outcome = crate::Result<Vec<(BlockType, u64, u64, Option<String>)>>;

fn read(file: &[u8]) -> Outcome {
    let whole = parse_log_bytes(PATH, Bytes::copy_from_slice(file)).map(|blocks| {
        blocks
            .iter()
            .map(|b| {
                (
                    b.block_type,
                    b.offset,
                    b.len,
                    b.instant_time().map(String::from),
                )
            })
            .collect::<Vec<_>>()
    });
    let storage = MemoryStorage::new();
    storage.insert(PATH, file.to_vec(), None);
    for read_ahead in [1, 7, 64] {
        let opts = LogReadOptions {
            whole_file_threshold: 0,
            read_ahead,
            ..Default::default()
        };
        let ranged = block_on(read_log_file_with(&storage, PATH, None, opts)).map(|f| {
            f.blocks
                .iter()
                .map(|b| {
                    (
                        b.block_type,
                        b.offset,
                        b.len,
                        b.instant_time().map(String::from),
                    )
                })
                .collect::<Vec<_>>()
        });
        assert_eq!(
            format!("{whole:?}"),
            format!("{ranged:?}"),
            "ranged read (read-ahead {read_ahead}) differs"
        );
    }
    whole
}

fn types(outcome: &Outcome) -> Vec<BlockType> {
    outcome.as_ref().unwrap().iter().map(|b| b.0).collect()
}

fn concat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn valid_blocks_in_order() {
    let (a, b, c) = (
        data_block("001", &["x", "y"]),
        delete("002", "x"),
        rollback_block("003", "001").unwrap(),
    );
    let out = read(&concat(&[&a, &b, &c]));
    assert_eq!(
        types(&out),
        vec![BlockType::AvroData, BlockType::Delete, BlockType::Command]
    );
    let blocks = out.unwrap();
    assert_eq!(blocks[1].1, a.len() as u64);
    assert_eq!(blocks[2].3.as_deref(), Some("003"));
}

#[test]
fn empty_file_has_no_blocks() {
    assert!(read(&[]).unwrap().is_empty());
}

/// Java: `hasNext` throws `CorruptedLogFileException` when the first 6 bytes are not magic.
#[test]
fn a_file_of_garbage_is_an_error() {
    let err = read(b"this is not a hudi log file").unwrap_err();
    assert_eq!((err.code(), err.object()), ("CORRUPT", Some(PATH)));
}

/// Java: fewer than 6 bytes hit EOF in `readMagic`, which means "no more blocks".
#[test]
fn fewer_than_six_bytes_are_ignored() {
    assert!(read(b"#HUD").unwrap().is_empty());
    let a = data_block("001", &["x"]);
    assert_eq!(
        types(&read(&concat(&[&a, b"\0\0\0"]))),
        vec![BlockType::AvroData]
    );
}

/// The length runs past EOF: the tail is one CORRUPT block, earlier blocks survive.
#[test]
fn truncated_last_block() {
    let (a, b) = (data_block("001", &["x"]), delete("002", "x"));
    let file = concat(&[&a, &b[..b.len() - 10]]);
    let out = read(&file).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].0, BlockType::AvroData);
    assert_eq!(
        (out[1].0, out[1].1, out[1].2),
        (BlockType::Corrupt, a.len() as u64, (b.len() - 10) as u64)
    );
}

/// A block must be followed by `#HUDI#` or EOF, so garbage after block A makes A corrupt
/// (spanning A and the garbage); B after it survives.
#[test]
fn garbage_between_two_blocks_voids_the_first() {
    let (a, b) = (data_block("001", &["x"]), delete("002", "x"));
    let garbage = b"garbage!";
    let out = read(&concat(&[&a, garbage, &b])).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(
        (out[0].0, out[0].1, out[0].2),
        (BlockType::Corrupt, 0, (a.len() + garbage.len()) as u64)
    );
    assert_eq!(
        (out[1].0, out[1].3.as_deref()),
        (BlockType::Delete, Some("002"))
    );
}

fn with_trailing_length(block: &[u8], delta: i64) -> Vec<u8> {
    let mut out = block.to_vec();
    let n = out.len();
    let total = i64::from_be_bytes(out[n - 8..].try_into().unwrap()) + delta;
    out[n - 8..].copy_from_slice(&total.to_be_bytes());
    out
}

#[test]
fn wrong_trailing_length() {
    let (a, b) = (data_block("001", &["x"]), delete("002", "x"));
    let out = read(&concat(&[&with_trailing_length(&a, 1), &b]));
    assert_eq!(types(&out), vec![BlockType::Corrupt, BlockType::Delete]);
    let out = read(&concat(&[&a, &with_trailing_length(&b, -1)]));
    assert_eq!(types(&out), vec![BlockType::AvroData, BlockType::Corrupt]);
}

/// A magic with nothing after it: reading the length hits EOF.
#[test]
fn magic_alone_at_the_end() {
    let a = data_block("001", &["x"]);
    let out = read(&concat(&[&a, b"#HUDI#"])).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(
        (out[1].0, out[1].1, out[1].2),
        (BlockType::Corrupt, a.len() as u64, 6)
    );
}

/// The search for the next block starts right after the corrupt block's magic, so a
/// `#HUDI#` inside a damaged block starts another (corrupt) block.
#[test]
fn magic_inside_a_truncated_block() {
    let a = data_block("001", &["x", "#HUDI# inside a value"]);
    let out = read(&a[..a.len() - 4]);
    assert_eq!(types(&out), vec![BlockType::Corrupt, BlockType::Corrupt]);
}

fn block_with(ordinal_at: usize, value: i32) -> Vec<u8> {
    let mut b = data_block("001", &["x"]);
    b[ordinal_at..ordinal_at + 4].copy_from_slice(&value.to_be_bytes());
    b
}

/// Java: `checkArgument(type < values().length)` / `HoodieNotSupportedException` abort the
/// read; the on-disk CORRUPT ordinal is not a readable block either.
#[test]
fn unknown_block_type_is_an_error() {
    let b = delete("002", "x");
    for ordinal in [2, 7, 99, -1] {
        let file = concat(&[&block_with(18, ordinal), &b]);
        let err = read(&file).unwrap_err();
        assert_eq!(
            (err.code(), err.object()),
            ("UNSUPPORTED", Some(PATH)),
            "{ordinal}"
        );
        assert!(err
            .to_string()
            .contains(&format!("log block type {ordinal}")));
    }
}

#[test]
fn other_format_versions_are_unsupported() {
    for version in [0, 2] {
        let err = read(&block_with(14, version)).unwrap_err();
        assert_eq!(err.code(), "UNSUPPORTED");
        assert!(err.to_string().contains("log format version"), "{err}");
    }
}

/// Java indexes `HeaderMetadataType.values()` with the ordinal and throws.
#[test]
fn unknown_header_key_is_an_error() {
    // The first header entry's key ordinal sits right after the entry count.
    let err = read(&block_with(26, 9)).unwrap_err();
    assert_eq!(err.code(), "UNSUPPORTED");
    assert!(err.to_string().contains("header key 9"), "{err}");
}

/// Framing intact but the fields inside do not add up: Java misreads and throws.
#[test]
fn inconsistent_content_length_is_an_error() {
    let a = data_block("001", &["x"]);
    let header_len = super::writer::encode_metadata(
        &BlockMetadata::new()
            .with(HeaderKey::InstantTime, "001")
            .with(HeaderKey::Schema, SCHEMA),
    )
    .len();
    let at = 22 + header_len;
    let shifted = |delta: i64| {
        let mut bad = a.clone();
        let len = i64::from_be_bytes(bad[at..at + 8].try_into().unwrap()) + delta;
        bad[at..at + 8].copy_from_slice(&len.to_be_bytes());
        read(&bad)
    };
    for delta in [1, -1, 1 << 31] {
        assert_eq!(shifted(delta).unwrap_err().code(), "CORRUPT", "{delta}");
    }
    // Java narrows the content length to an int, so high bits are ignored.
    assert_eq!(types(&shifted(1 << 40)), vec![BlockType::AvroData]);
}

/// docs/hudi-format.md §5.1 worked example: the v6 rollback command block.
#[test]
fn documented_rollback_block() {
    let bytes = super::writer::tests::hex(super::writer::tests::ROLLBACK_HEX);
    let blocks = parse_log_bytes(PATH, Bytes::from(bytes)).unwrap();
    assert_eq!(blocks.len(), 1);
    let b = &blocks[0];
    assert_eq!(b.block_type, BlockType::Command);
    assert_eq!(b.instant_time(), Some("20250126040936578"));
    assert_eq!(b.rollback_target(), Some("20250126040826878"));
    assert_eq!(b.command_type(), Some(super::block::CommandType::Rollback));
    assert_eq!(
        (b.len, b.content_range.end - b.content_range.start),
        (105, 0)
    );
    assert!(b.schema().is_none() && b.footer.is_empty());
}

#[test]
fn all_header_keys_round_trip() {
    let mut header = BlockMetadata::new();
    for (i, key) in HeaderKey::ALL.iter().enumerate() {
        header.insert(*key, format!("v{i}"));
    }
    header.insert(HeaderKey::CompactedBlockTimes, "001, 002");
    header.insert(HeaderKey::IsPartial, "true");
    let footer = BlockMetadata::new().with(HeaderKey::BlockIdentifier, "f");
    let bytes = encode_block(BlockType::AvroData, &header, b"\0\0\0\x03\0\0\0\0", &footer).unwrap();
    let b = &parse_log_bytes(PATH, Bytes::from(bytes)).unwrap()[0];
    assert_eq!((&b.header, &b.footer), (&header, &footer));
    assert_eq!(b.compacted_block_times(), vec!["001", "002"]);
    assert!(b.is_partial());
    assert_eq!(b.record_positions(), Some("v5"));
    assert_eq!(b.block_identifier(), Some("v6"));
    assert_eq!(b.base_file_instant_time_of_record_positions(), Some("v8"));
    assert_eq!(b.rollback_target(), None, "not a command block");
}

#[test]
fn extreme_trailing_length_is_just_corrupt() {
    let (a, b) = (data_block("001", &["x"]), delete("002", "x"));
    let mut bad = a.clone();
    let n = bad.len();
    bad[n - 8..].copy_from_slice(&i64::MIN.to_be_bytes());
    assert_eq!(
        types(&read(&concat(&[&bad, &b]))),
        vec![BlockType::Corrupt, BlockType::Delete]
    );
}

/// Flipped bytes and cut tails never panic; cuts keep every block before the cut.
#[test]
fn mangled_files_never_panic() {
    let blocks = [
        data_block("001", &["x", "y"]),
        delete("002", "x"),
        rollback_block("003", "001").unwrap(),
    ];
    let file = blocks.concat();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let mut bytes = file.clone();
        for _ in 0..1 + next() % 3 {
            let i = (next() % bytes.len() as u64) as usize;
            bytes[i] = next() as u8;
        }
        let _ = parse_log_bytes(PATH, Bytes::from(bytes));
    }
    for cut in 0..file.len() {
        let out = parse_log_bytes(PATH, Bytes::copy_from_slice(&file[..cut])).unwrap();
        let whole = blocks.iter().scan(0, |end, b| {
            *end += b.len();
            Some(*end)
        });
        let intact = whole.filter(|end| *end <= cut).count();
        assert!(
            out[..intact].iter().all(|b| !b.is_corrupt()),
            "cut at {cut}"
        );
        assert!(out[intact..].iter().all(|b| b.is_corrupt()), "cut at {cut}");
    }
}
