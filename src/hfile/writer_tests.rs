//! The HFile writer against our reader and against the MDT HFiles Hudi 1.1 wrote.

use bytes::Bytes;
use futures::executor::block_on;

use super::test_support::{self as ts, MDT_TABLES};
use super::writer::java_hash_map_order;
use super::*;

fn cells(n: usize, value_len: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            let v = (0..value_len).map(|j| (i * 7 + j) as u8).collect();
            (format!("key-{i:06}").into_bytes(), v)
        })
        .collect()
}

fn read(bytes: Vec<u8>) -> HFileReader {
    HFileReader::from_bytes(Bytes::from(bytes), "w.hfile").expect("open written HFile")
}

#[test]
fn round_trips_through_the_reader() {
    for (n, block_size, checksum, codec) in [
        (1, 1 << 20, ChecksumKind::Crc32c, Codec::Gz),
        (500, 4096, ChecksumKind::Crc32c, Codec::Gz),
        (500, 4096, ChecksumKind::Null, Codec::None),
        (3000, 1 << 20, ChecksumKind::Crc32c, Codec::Gz),
    ] {
        let cells = cells(n, 50);
        let opts = HFileWriteOptions {
            block_size,
            checksum,
            codec,
            create_time_ms: 1,
        };
        let info = [("schema", b"{\"type\":\"string\"}".to_vec())];
        let r = read(write_hfile_with(&cells, &info, &opts).unwrap());
        assert_eq!(r.entry_count(), n as u64);
        if block_size == 4096 {
            assert!(r.data_index_len() > 5, "{}", r.data_index_len());
        }
        let all = block_on(r.scan_all()).unwrap();
        assert_eq!(all.len(), n);
        for (c, (k, v)) in all.iter().zip(&cells) {
            assert_eq!((&c.key[..], &c.value[..]), (&k[..], &v[..]));
        }
        let mid = &cells[n / 2];
        assert_eq!(
            block_on(r.get(&mid.0)).unwrap().as_deref(),
            Some(&mid.1[..])
        );
        assert_eq!(block_on(r.get(b"key-")).unwrap(), None);
        assert_eq!(block_on(r.get(b"zzz")).unwrap(), None);
        if n >= 500 {
            let hits = block_on(r.scan_prefix(b"key-0001")).unwrap();
            assert_eq!(hits.len(), 100);
            assert_eq!(&hits[0].key[..], b"key-000100");
        }
        assert_eq!(r.file_info().schema(), Some("{\"type\":\"string\"}"));
        assert_eq!(r.file_info().get_i32("hfile.AVG_KEY_LEN"), Some(10));
        assert_eq!(r.file_info().get_i32("hfile.AVG_VALUE_LEN"), Some(50));
    }
}

#[test]
fn empty_file_reads_as_empty() {
    let r = read(write_hfile(&[], &[]).unwrap());
    assert_eq!(r.entry_count(), 0);
    assert!(block_on(r.scan_all()).unwrap().is_empty());
    assert_eq!(r.trailer().first_data_block_offset, None);
}

#[test]
fn rejects_unsorted_and_duplicate_rows() {
    let c = |k: &str| (k.as_bytes().to_vec(), vec![1]);
    assert!(write_hfile(&[c("b"), c("a")], &[]).is_err());
    assert!(write_hfile(&[c("a"), c("a")], &[]).is_err());
    assert!(write_hfile(&[(vec![b'x'; 70_000], vec![])], &[]).is_err());
    // Byte order, not char order: "Z" < "a".
    assert!(write_hfile(&[c("Z"), c("a")], &[]).is_ok());
}

#[test]
fn java_hash_map_iteration_order() {
    // The file info order seen in Hudi 1.1-written MDT log-block HFiles.
    let ins = [
        "MAX_MEMSTORE_TS_KEY",
        "schema",
        "hfile.LASTKEY",
        "hfile.AVG_KEY_LEN",
        "hfile.CREATE_TIME_TS",
        "hfile.AVG_VALUE_LEN",
        "KEY_VALUE_VERSION",
    ];
    let order: Vec<&str> = java_hash_map_order(&ins)
        .into_iter()
        .map(|i| ins[i])
        .collect();
    assert_eq!(
        order,
        [
            "schema",
            "hfile.LASTKEY",
            "hfile.AVG_VALUE_LEN",
            "hfile.AVG_KEY_LEN",
            "KEY_VALUE_VERSION",
            "MAX_MEMSTORE_TS_KEY",
            "hfile.CREATE_TIME_TS"
        ]
    );
}

/// Every HFile inside the v9 fixtures' MDT log blocks (written by Hudi 1.1's native writer)
/// re-encoded from its cells, schema and creation time comes out byte-identical; the v8
/// (HBase-written) ones keep their cells and file info keys.
#[test]
fn reencodes_fixture_log_block_hfiles() {
    let mut identical = 0;
    let mut same_structure = 0;
    let mut compared = 0;
    for rel in MDT_TABLES {
        let root = ts::table(rel);
        let hudi_writer = rel.contains("/v9_");
        for (_, path) in ts::mdt_log_files(&root) {
            let log = std::fs::read(&path).unwrap();
            for (_, content) in ts::log_hfile_blocks(&log) {
                let orig = HFileReader::from_bytes(content.clone(), "orig").unwrap();
                let cells: Vec<(Vec<u8>, Vec<u8>)> = block_on(orig.scan_all())
                    .unwrap()
                    .into_iter()
                    .map(|c| (c.key.to_vec(), c.value.to_vec()))
                    .collect();
                let info = orig.file_info();
                let schema = info.get("schema").unwrap().to_vec();
                let opts = HFileWriteOptions {
                    checksum: ChecksumKind::Null,
                    create_time_ms: info.get_i64("hfile.CREATE_TIME_TS").unwrap(),
                    ..HFileWriteOptions::default()
                };
                let ours = write_hfile_with(&cells, &[("schema", schema)], &opts).unwrap();
                compared += 1;
                if hudi_writer {
                    let theirs = content.to_vec();
                    if ours == theirs {
                        identical += 1;
                    } else {
                        // zlib-rs deflates differently from Java's zlib; all else must match.
                        let (bo, bt) = (blocks(&ours), blocks(&theirs));
                        assert_eq!(bo.len(), bt.len(), "{}", path.display());
                        for (i, (o, t)) in bo.iter().zip(&bt).enumerate() {
                            assert!(o.0 == t.0, "block {i} header {:?} vs {:?}", o.0, t.0);
                            assert!(o.1 == t.1, "block {i} payload {}", path.display());
                            assert!(o.2 == t.2, "block {i} sums {}", path.display());
                        }
                        let (a, b) = (read(ours), &orig);
                        let (ta, tb) = (a.trailer(), b.trailer());
                        assert_eq!(
                            (
                                ta.uncompressed_data_index_size,
                                ta.data_index_count,
                                ta.entry_count
                            ),
                            (
                                tb.uncompressed_data_index_size,
                                tb.data_index_count,
                                tb.entry_count
                            )
                        );
                        assert_eq!(
                            (ta.comparator_class_name.as_str(), ta.compression_codec),
                            (tb.comparator_class_name.as_str(), tb.compression_codec)
                        );
                        assert_eq!(
                            (ta.major_version, ta.num_data_index_levels),
                            (tb.major_version, tb.num_data_index_levels)
                        );
                        same_structure += 1;
                    }
                } else {
                    let r = read(ours);
                    let mut theirs: Vec<&[u8]> = info.keys().collect();
                    let mut mine: Vec<&[u8]> = r.file_info().keys().collect();
                    theirs.sort();
                    mine.sort();
                    assert_eq!(mine, theirs, "{}", path.display());
                    assert_eq!(r.entry_count(), orig.entry_count());
                    assert_eq!(r.data_index_len(), orig.data_index_len());
                }
            }
        }
    }
    eprintln!("{identical} identical, {same_structure} equal but for deflate, of {compared}");
    assert!(identical + same_structure > 100, "{compared}");
}

/// Each block's magic, uncompressed size, previous offset, checksum type, bytes per checksum
/// and decompressed payload (the trailer excluded).
fn blocks(file: &[u8]) -> Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    use std::io::Read;
    let end = file.len() - TRAILER_SIZE;
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < end {
        let be32 = |p: usize| i32::from_be_bytes(file[p..p + 4].try_into().unwrap()) as usize;
        let on_disk = be32(pos + 8);
        let data_end = pos + be32(pos + 29);
        let mut payload = Vec::new();
        flate2::read::GzDecoder::new(&file[pos + 33..data_end])
            .read_to_end(&mut payload)
            .unwrap();
        if &file[pos..pos + 8] == b"IDXROOT2" {
            blank_index_offsets(&mut payload);
        }
        let mut fixed = file[pos..pos + 8].to_vec();
        fixed.extend_from_slice(&file[pos + 12..pos + 29]);
        out.push((fixed, payload, file[data_end..pos + 33 + on_disk].to_vec()));
        pos += 33 + on_disk;
    }
    out
}

/// Zeroes the offset and size of each root index entry: they follow the compressed sizes.
fn blank_index_offsets(p: &mut [u8]) {
    let mut at = 0;
    while at + 13 <= p.len() {
        p[at..at + 12].fill(0);
        let first = p[at + 12] as i8;
        let (extra, len) = if first >= -112 {
            (0, first as usize)
        } else {
            let n = if first < -120 {
                -(first as i32 + 120)
            } else {
                -(first as i32 + 112)
            } as usize;
            let len = p[at + 13..at + 13 + n]
                .iter()
                .fold(0usize, |acc, &b| (acc << 8) | b as usize);
            (n, len)
        };
        at += 13 + extra + len;
    }
}
