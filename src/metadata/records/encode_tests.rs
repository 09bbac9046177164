//! Every record of the fixtures' MDTs, decoded and encoded again, gives the same bytes.

use std::collections::BTreeMap;

use futures::executor::block_on;

use super::*;
use crate::hfile::test_support::{self as ts, MDT_TABLES};

/// (schema, key, value) of every cell of every MDT HFile (base files and log blocks).
fn fixture_cells() -> Vec<(String, String, Vec<u8>, String)> {
    let mut out = Vec::new();
    for rel in MDT_TABLES {
        let root = ts::table(rel);
        let mut push = |schema: Option<String>, hfile: HFileReader, src: String| {
            let schema = schema
                .or_else(|| hfile.file_info().schema().map(str::to_string))
                .unwrap();
            for c in block_on(hfile.scan_all()).unwrap() {
                let key = String::from_utf8(c.key.to_vec()).unwrap();
                out.push((schema.clone(), key, c.value.to_vec(), src.clone()));
            }
        };
        for (_, path) in ts::mdt_hfiles(&root) {
            let bytes = bytes::Bytes::from(std::fs::read(&path).unwrap());
            push(
                None,
                HFileReader::from_bytes(bytes, "b").unwrap(),
                path.display().to_string(),
            );
        }
        for (_, path) in ts::mdt_log_files(&root) {
            let log = std::fs::read(&path).unwrap();
            for (schema, content) in ts::log_hfile_blocks(&log) {
                let r = HFileReader::from_bytes(content, "l").unwrap();
                push(schema, r, path.display().to_string());
            }
        }
    }
    out
}

#[test]
fn reencodes_every_fixture_record() {
    let mut encoders: BTreeMap<String, (RecordDecoder, RecordEncoder)> = BTreeMap::new();
    let mut by_type: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    // Base files are compaction output (merged maps, `_hoodie_file_name`): not what a
    // delta commit writes, so they are only counted.
    let mut base_differ = 0;
    for (schema, key, value, src) in fixture_cells() {
        let (dec, enc) = encoders.entry(schema.clone()).or_insert_with(|| {
            (
                RecordDecoder::new(&schema, "f").unwrap(),
                RecordEncoder::new(&schema).unwrap(),
            )
        });
        let record = dec.decode(&key, &value).unwrap();
        let kind = match &record.payload {
            MetadataPayload::AllPartitions(_) => "all_partitions",
            MetadataPayload::Files(_) => "files",
            MetadataPayload::ColumnStats(_) => "column_stats",
            MetadataPayload::PartitionStats(_) => "partition_stats",
            MetadataPayload::RecordIndex(_) => "record_index",
            MetadataPayload::SecondaryIndex(_) => "secondary_index",
            MetadataPayload::BloomFilter(_) => "bloom",
        };
        let slot = by_type.entry(kind).or_default();
        slot.0 += 1;
        let encoded = enc.encode(&record.payload).map(|b| with_file_name(b, &src));
        match encoded {
            Ok(bytes) if bytes == value => slot.1 += 1,
            Ok(_) if src.ends_with(".hfile") => base_differ += 1,
            Ok(bytes) => failures.push(format!(
                "{kind} {key} in {src}:\n ours   {bytes:02x?}\n theirs {value:02x?}"
            )),
            Err(e) => failures.push(format!("{kind} {key}: {e}")),
        }
    }
    eprintln!("{by_type:?}; {base_differ} base-file records differ");
    for f in failures.iter().take(5) {
        eprintln!("{f}");
    }
    assert!(failures.is_empty(), "{} records differ", failures.len());
    for kind in [
        "all_partitions",
        "files",
        "column_stats",
        "partition_stats",
        "record_index",
    ] {
        assert!(by_type.get(kind).is_some_and(|c| c.1 > 0), "{kind}");
    }
}

/// Records in MDT base files carry the base file's name in `_hoodie_file_name` (the fifth
/// field, null in log blocks); we only write log blocks, so add it here.
fn with_file_name(ours: Vec<u8>, src: &str) -> Vec<u8> {
    if !src.ends_with(".hfile") {
        return ours;
    }
    let name = src.rsplit('/').next().unwrap_or(src).as_bytes();
    let mut out = ours[..4].to_vec();
    out.push(2);
    let mut len = Vec::new();
    let mut z = (name.len() as u64) << 1;
    while z >= 0x80 {
        len.push((z as u8) | 0x80);
        z >>= 7;
    }
    len.push(z as u8);
    out.extend_from_slice(&len);
    out.extend_from_slice(name);
    out.extend_from_slice(&ours[5..]);
    out
}
