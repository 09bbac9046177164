//! HFile reader tests: every MDT HFile of the v8 (HBase-written) and v9 (Hudi-written)
//! fixtures, HFiles embedded in MDT log blocks, synthetic files for shapes the fixtures lack,
//! damaged files, and request counts.

use std::sync::Arc;

use bytes::Bytes;
use futures::executor::block_on;

use super::test_support::{self as ts, Spec};
use super::*;
use crate::error::HudiError;
use crate::storage::memory::MemoryStorage;
use crate::storage::{Instrumented, IoSnapshot, Storage};

fn read(path: &std::path::Path) -> Bytes {
    Bytes::from(std::fs::read(path).expect("read fixture"))
}

/// A reader over an instrumented in-memory store holding `bytes` at `path`.
/// Requests are answered after one yield, so concurrent ones overlap like real I/O.
fn on_storage(bytes: Bytes, opts: OpenOptions) -> (Result<HFileReader, HudiError>, Instrumented) {
    let mem = MemoryStorage::new();
    mem.insert("f.hfile", bytes, None);
    let io = Instrumented::new(Arc::new(ts::Yielding(Arc::new(mem))));
    let storage: Arc<dyn Storage> = Arc::new(io.clone());
    (
        block_on(HFileReader::open_with(storage, "f.hfile", opts)),
        io,
    )
}

fn cost(io: &Instrumented, before: IoSnapshot) -> IoSnapshot {
    io.stats().snapshot().since(&before)
}

/// Checks one reader against a full scan: counts, ordering, lookups and prefix scans.
fn check_reader(r: &HFileReader) -> Vec<Cell> {
    let all = block_on(r.scan_all()).expect("scan_all");
    assert_eq!(all.len() as u64, r.entry_count(), "{}", r.path());
    assert!(
        all.windows(2).all(|w| w[0].key < w[1].key),
        "sorted unique keys in {}",
        r.path()
    );
    assert!(r
        .file_info()
        .schema()
        .is_some_and(|s| s.contains("\"type\"")));
    if all.is_empty() {
        assert_eq!(block_on(r.get(b"anything")).unwrap(), None);
        return all;
    }
    for i in [0, all.len() / 2, all.len() - 1] {
        let c = &all[i];
        assert_eq!(
            block_on(r.get(&c.key)).unwrap().as_ref(),
            Some(&c.value),
            "get {:?}",
            c.key
        );
        let mut after = c.key.to_vec();
        after.push(0);
        assert_eq!(block_on(r.get(&after)).unwrap(), None);
        let prefix = &c.key[..c.key.len().min(8)];
        let want: Vec<_> = all
            .iter()
            .filter(|x| x.key.starts_with(prefix))
            .cloned()
            .collect();
        assert_eq!(block_on(r.scan_prefix(prefix)).unwrap(), want);
    }
    assert_eq!(block_on(r.get(b"")).unwrap(), None);
    let keys = [
        all[0].key.clone(),
        Bytes::from_static(b"\xff-missing"),
        all[all.len() - 1].key.clone(),
    ];
    let got = block_on(r.get_many(&keys)).unwrap();
    assert_eq!(
        got,
        vec![
            Some(all[0].value.clone()),
            None,
            Some(all[all.len() - 1].value.clone())
        ]
    );
    let prefixes = [&all[0].key[..1], &all[all.len() - 1].key[..1]];
    let want: Vec<_> = all
        .iter()
        .filter(|x| prefixes.iter().any(|p| x.key.starts_with(p)))
        .cloned()
        .collect();
    assert_eq!(block_on(r.scan_prefixes(&prefixes)).unwrap(), want);
    all
}

#[test]
fn every_fixture_hfile_decodes() {
    let mut files = 0;
    for table in ts::MDT_TABLES {
        let v8 = table.contains("/v8_");
        let mut bloom_checked = false;
        for (_, path) in ts::mdt_hfiles(&ts::table(table)) {
            let bytes = read(&path);
            let name = path.to_string_lossy();
            let r = HFileReader::from_bytes(bytes.clone(), &name).expect("from_bytes");
            // v8 files come from HBase's writer (v3.3, CRC32C); v9 from Hudi's (v3.0).
            assert_eq!(r.trailer().minor_version, if v8 { 3 } else { 0 }, "{name}");
            assert_eq!(r.trailer().compression_codec, 1, "GZ in every fixture");
            let all = check_reader(&r);
            let (opened, _) = on_storage(bytes, OpenOptions::default());
            assert_eq!(block_on(opened.unwrap().scan_all()).unwrap(), all);
            // Base files carry a bloom filter (large, so check one per table).
            if r.entry_count() > 0 && !bloom_checked {
                let bloom = block_on(r.meta_block("bloomFilter"))
                    .unwrap()
                    .expect("bloomFilter");
                assert!(bloom.iter().all(u8::is_ascii), "Base64 text");
                bloom_checked = true;
            }
            files += 1;
        }
    }
    assert!(files > 80, "found only {files} MDT HFiles");
}

#[test]
fn hfiles_inside_mdt_log_blocks_decode() {
    let mut blocks = 0;
    for table in ts::MDT_TABLES {
        for (_, path) in ts::mdt_log_files(&ts::table(table)) {
            for (schema, content) in ts::log_hfile_blocks(&read(&path)) {
                let r = HFileReader::from_bytes(content, &path.to_string_lossy()).expect("inline");
                check_reader(&r);
                assert!(schema.is_some_and(|s| s.contains("HoodieMetadataRecord")));
                blocks += 1;
            }
        }
    }
    assert!(blocks > 50, "found only {blocks} HFILE_DATA blocks");
}

fn v8_column_stats() -> std::path::PathBuf {
    let root = ts::table(ts::MDT_TABLES[0]);
    ts::mdt_hfiles(&root)
        .into_iter()
        .find(|(p, _)| p == "column_stats")
        .map(|(_, f)| f)
        .expect("v8 column_stats hfile")
}

#[test]
fn open_and_lookup_cost_at_most_three_requests() {
    let bytes = read(&v8_column_stats());
    let key = block_on(
        HFileReader::from_bytes(bytes.clone(), "x")
            .unwrap()
            .scan_all(),
    )
    .unwrap()[7]
        .key
        .clone();
    // Default tail: the whole 12 KiB file arrives with the trailer; the lookup is free.
    let (r, io) = on_storage(bytes.clone(), OpenOptions::default());
    let r = r.unwrap();
    assert_eq!(io.stats().snapshot().requests, 1);
    let before = io.stats().snapshot();
    assert!(block_on(r.get(&key)).unwrap().is_some());
    assert_eq!(cost(&io, before).requests, 0);
    // A tail of just the trailer: + load-on-open section, + one data block.
    let (r, io) = on_storage(
        bytes,
        OpenOptions {
            tail_bytes: 4096,
            file_size: None,
        },
    );
    let r = r.unwrap();
    assert_eq!(io.stats().snapshot().requests, 2);
    assert!(block_on(r.get(&key)).unwrap().is_some());
    let total = io.stats().snapshot();
    assert_eq!((total.requests, total.round_trips), (3, 3));
}

fn cells(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            (
                format!("key-{:05}", i * 3).into_bytes(),
                format!("value {i}").into_bytes(),
            )
        })
        .collect()
}

fn multi_level_spec() -> Spec {
    Spec {
        cells_per_block: 8,
        codec: Codec::None,
        checksum: 2,
        bytes_per_checksum: 64,
        fanout: 4,
        hbase_keys: true,
        ..Spec::default()
    }
}

#[test]
fn multi_level_index_walks_every_level() {
    let cells = cells(2000);
    let bytes = Bytes::from(ts::write_hfile(&cells, &multi_level_spec()));
    let r = HFileReader::from_bytes(bytes.clone(), "multi").unwrap();
    // 250 data blocks -> 63 leaf -> 16 intermediate -> 4 root entries.
    assert_eq!(r.trailer().num_data_index_levels, 4);
    let all = check_reader(&r);
    assert_eq!(all.len(), 2000);
    for (i, (k, v)) in cells.iter().enumerate().step_by(37) {
        assert_eq!(block_on(r.get(k)).unwrap().as_deref(), Some(&v[..]), "{i}");
        let missing = format!("key-{:05}", i * 3 + 1);
        assert_eq!(block_on(r.get(missing.as_bytes())).unwrap(), None);
    }
    let hits = block_on(r.scan_prefix(b"key-012")).unwrap();
    assert_eq!(
        hits.len(),
        cells
            .iter()
            .filter(|(k, _)| k.starts_with(b"key-012"))
            .count()
    );

    // Over storage with a small tail: one round trip per level below the root, + data.
    let (r, io) = on_storage(
        bytes,
        OpenOptions {
            tail_bytes: 4096,
            file_size: None,
        },
    );
    let r = r.unwrap();
    let before = io.stats().snapshot();
    assert!(block_on(r.get(b"key-03000")).unwrap().is_some());
    let c = cost(&io, before);
    assert_eq!((c.requests, c.round_trips), (4, 4));
}

#[test]
fn adjacent_blocks_coalesce_and_distant_ones_run_concurrently() {
    let spec = Spec {
        codec: Codec::None,
        cells_per_block: 4,
        ..Spec::default()
    };
    let cells = cells(400);
    let bytes = Bytes::from(ts::write_hfile(&cells, &spec));
    let (r, io) = on_storage(
        bytes,
        OpenOptions {
            tail_bytes: 4096,
            file_size: None,
        },
    );
    let r = r.unwrap();
    // Three neighbouring blocks (keys 40..52 of 4-cell blocks): one request.
    let near: Vec<_> = (40..52).map(|i| cells[i].0.clone()).collect();
    let before = io.stats().snapshot();
    assert!(block_on(r.get_many(&near))
        .unwrap()
        .iter()
        .all(Option::is_some));
    assert_eq!(cost(&io, before).requests, 1);
    // Three distant blocks: three requests in one round trip.
    let far = [&cells[0].0, &cells[200].0, &cells[399].0];
    let before = io.stats().snapshot();
    assert!(block_on(r.get_many(&far))
        .unwrap()
        .iter()
        .all(Option::is_some));
    let c = cost(&io, before);
    assert_eq!((c.requests, c.round_trips), (3, 1));
    // With a coalescing gap wider than the blocks between them: one request, same values.
    let expected = block_on(r.get_many(&far)).unwrap();
    let wide = r.clone().with_coalesce_gap(1 << 20);
    let before = io.stats().snapshot();
    assert_eq!(block_on(wide.get_many(&far)).unwrap(), expected);
    let c = cost(&io, before);
    assert_eq!((c.requests, c.round_trips), (1, 1));
    // A prefix spanning many blocks is one coalesced range too.
    let before = io.stats().snapshot();
    assert_eq!(block_on(r.scan_prefix(b"key-000")).unwrap().len(), 34);
    assert_eq!(cost(&io, before).requests, 1);
}

#[test]
fn large_load_on_open_section_costs_one_more_read() {
    let spec = Spec {
        cells_per_block: 1,
        codec: Codec::None,
        ..Spec::default()
    };
    let bytes = Bytes::from(ts::write_hfile(&cells(3000), &spec));
    let (r, io) = on_storage(
        bytes.clone(),
        OpenOptions {
            tail_bytes: 8192,
            file_size: None,
        },
    );
    assert_eq!(r.unwrap().entry_count(), 3000);
    assert_eq!(io.stats().snapshot().requests, 2);
    // A known size skips nothing here (memory stores have suffix ranges) but must agree.
    let size = Some(bytes.len() as u64);
    let (r, io) = on_storage(
        bytes,
        OpenOptions {
            tail_bytes: 8192,
            file_size: size,
        },
    );
    assert_eq!(block_on(r.unwrap().scan_all()).unwrap().len(), 3000);
    assert!(io.stats().snapshot().requests >= 2);
}

#[test]
fn gz_tags_and_meta_blocks() {
    let spec = Spec {
        tags: true,
        meta_blocks: vec![("bloomFilter".into(), b"AAAA".to_vec())],
        ..Spec::default()
    };
    let r = HFileReader::from_bytes(Bytes::from(ts::write_hfile(&cells(100), &spec)), "t").unwrap();
    assert_eq!(check_reader(&r).len(), 100);
    assert_eq!(
        block_on(r.meta_block("bloomFilter")).unwrap().as_deref(),
        Some(&b"AAAA"[..])
    );
    assert_eq!(block_on(r.meta_block("nope")).unwrap(), None);
}

#[test]
fn empty_hfile_needs_no_block_reads() {
    let bytes = Bytes::from(ts::write_hfile(&[], &Spec::default()));
    let (r, io) = on_storage(bytes, OpenOptions::default());
    let r = r.unwrap();
    assert_eq!(r.trailer().first_data_block_offset, None);
    let before = io.stats().snapshot();
    assert!(block_on(r.scan_all()).unwrap().is_empty());
    assert_eq!(block_on(r.get(b"k")).unwrap(), None);
    assert_eq!(cost(&io, before).requests, 0);
}

fn expect_corrupt(r: Result<impl std::fmt::Debug, HudiError>, needle: &str) {
    match r {
        Err(HudiError::Corrupt { path, reason, .. }) => {
            assert!(!path.is_empty(), "corrupt error names the file");
            assert!(
                reason.contains(needle),
                "{reason:?} should mention {needle:?}"
            );
        }
        other => panic!("expected Corrupt({needle}), got {other:?}"),
    }
}

#[test]
fn truncated_files_are_corrupt() {
    let bytes = read(&v8_column_stats());
    expect_corrupt(
        HFileReader::from_bytes(bytes.slice(..3000), "short"),
        "truncated",
    );
    expect_corrupt(
        HFileReader::from_bytes(bytes.slice(..bytes.len() - 1), "cut"),
        "trailer magic",
    );
    // The tail survives but the front is gone: offsets point before the start.
    let tail = bytes.slice(bytes.len() - 5000..);
    expect_corrupt(
        HFileReader::from_bytes(tail.clone(), "front"),
        "truncated or bad trailer",
    );
    let (r, _) = on_storage(tail, OpenOptions::default());
    expect_corrupt(r, "truncated or bad trailer");
}

fn patched(bytes: &Bytes, at: usize, with: &[u8]) -> Bytes {
    let mut v = bytes.to_vec();
    v[at..at + with.len()].copy_from_slice(with);
    Bytes::from(v)
}

#[test]
fn bad_magics_versions_and_codecs_are_typed() {
    let bytes = read(&v8_column_stats());
    let t = bytes.len() - TRAILER_SIZE;
    expect_corrupt(
        HFileReader::from_bytes(patched(&bytes, t, b"XRABLK"), "m"),
        "trailer magic",
    );
    let r = HFileReader::from_bytes(patched(&bytes, 0, b"XATABLK*"), "m").unwrap();
    expect_corrupt(block_on(r.scan_all()), "block magic mismatch");
    let v2 = patched(&bytes, bytes.len() - 4, &[0, 0, 0, 2]);
    let e = HFileReader::from_bytes(v2, "v2").unwrap_err();
    assert!(
        matches!(e, HudiError::Unsupported { path: Some(_), .. }),
        "{e:?}"
    );
    let v9 = patched(&bytes, bytes.len() - 4, &[0, 0, 0, 9]);
    expect_corrupt(HFileReader::from_bytes(v9, "v9"), "version");
    // compression_codec is field 12 (tag 0x60) = 1 (GZ); make it 3 (SNAPPY).
    let at = bytes[t..]
        .windows(2)
        .position(|w| w == [0x60, 0x01])
        .unwrap()
        + t;
    let e = HFileReader::from_bytes(patched(&bytes, at + 1, &[3]), "snappy.hfile").unwrap_err();
    match e {
        HudiError::Unsupported { what, path } => {
            assert!(what.contains("SNAPPY"), "{what}");
            assert_eq!(path.as_deref(), Some("snappy.hfile"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn checksums_are_checked_but_do_not_fail_reads() {
    // HBase-written (v8): real CRC32C checksums, verified.
    let bytes = read(&v8_column_stats());
    let good = HFileReader::from_bytes(bytes.clone(), "ok").unwrap();
    let cells_ok = block_on(good.scan_all()).unwrap();
    let report = good.checksums();
    assert!(report.verified > 0, "{report:?}");
    assert_eq!(
        (report.mismatched, report.stored_zeros),
        (0, 0),
        "{report:?}"
    );

    // A wrong stored checksum: read as Hudi reads it, and reported.
    let multi = Bytes::from(ts::write_hfile(&cells(50), &multi_level_spec()));
    // The last byte of the first data block (at offset 0) is a checksum byte.
    let sum_at = 33 + u32::from_be_bytes(multi[8..12].try_into().unwrap()) as usize - 1;
    let r =
        HFileReader::from_bytes(patched(&multi, sum_at, &[multi[sum_at] ^ 0x40]), "sum").unwrap();
    assert_eq!(block_on(r.scan_all()).unwrap().len(), 50);
    let report = r.checksums();
    assert_eq!(report.mismatched, 1, "{report:?}");
    assert!(report
        .first_problem
        .unwrap()
        .starts_with("sum: block at offset"));

    // Damage the checksum would have caught is still caught by what Hudi checks.
    let at = multi.windows(9).position(|w| w == b"key-00009").unwrap();
    let r = HFileReader::from_bytes(patched(&multi, at, b"key-00099"), "order").unwrap();
    expect_corrupt(block_on(r.scan_all()), "out of order");
    let r = HFileReader::from_bytes(patched(&bytes, 100, &[bytes[100] ^ 1]), "gz").unwrap();
    assert!(
        block_on(r.scan_all()).is_err_and(|e| e.code() == "CORRUPT"),
        "a flipped byte in a GZ payload"
    );
    assert_eq!(cells_ok.len() as u64, good.entry_count());
}

/// hudi-rs 0.6 declares CRC32C and stores zeros: every MDT HFile it wrote (base files and
/// log blocks) reads, and says its checksums were not verified.
#[test]
fn hudi_rs_hfiles_with_zero_checksums_read() {
    let root = ts::hudi_rs_table("hudi_rs_mor_v9_part");
    let mut hfiles: Vec<(String, Bytes)> = ts::mdt_hfiles(&root)
        .into_iter()
        .map(|(p, f)| (p, read(&f)))
        .collect();
    for (p, log) in ts::mdt_log_files(&root) {
        for (_, content) in ts::log_hfile_blocks(&std::fs::read(log).unwrap()) {
            hfiles.push((p.clone(), content));
        }
    }
    assert!(hfiles.len() > 30, "{}", hfiles.len());
    let mut cells_read = 0;
    for (partition, bytes) in hfiles {
        assert_eq!(
            bytes[24],
            super::checksum::CRC32C,
            "{partition}: declared type"
        );
        let r = HFileReader::from_bytes(bytes, &partition).unwrap();
        let all = block_on(r.scan_all()).unwrap();
        assert_eq!(all.len() as u64, r.entry_count(), "{partition}");
        for c in all.iter().take(3) {
            assert_eq!(block_on(r.get(&c.key)).unwrap().as_ref(), Some(&c.value));
        }
        cells_read += all.len();
        let report = r.checksums();
        assert!(report.stored_zeros > 0, "{partition}: {report:?}");
        assert_eq!(
            report.verified + report.mismatched + report.unverifiable,
            0,
            "{report:?}"
        );
    }
    assert!(cells_read > 100, "{cells_read}");
}

/// Damaged bytes anywhere must give errors, never panics.
#[test]
fn damaged_files_never_panic() {
    let root = ts::table(ts::MDT_TABLES[1]);
    let v9 = ts::mdt_hfiles(&root)
        .into_iter()
        .find(|(p, _)| p == "files")
        .unwrap()
        .1;
    let multi = Bytes::from(ts::write_hfile(&cells(300), &multi_level_spec()));
    for bytes in [read(&v8_column_stats()), read(&v9), multi] {
        let try_all = |b: Bytes| {
            if let Ok(r) = HFileReader::from_bytes(b, "fuzz") {
                let _ = block_on(r.scan_all());
                let _ = block_on(r.get(b"key-00300"));
            }
        };
        for len in (0..bytes.len()).step_by(331) {
            try_all(bytes.slice(..len));
        }
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..400 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed % bytes.len() as u64) as usize;
            try_all(patched(&bytes, at, &[(seed >> 32) as u8]));
        }
    }
}

/// Runs of blocks scanned one block at a time give every cell of a full scan, in order,
/// whatever the run size; a run is one request.
#[test]
fn block_runs_scan_like_a_full_scan() {
    let spec = Spec {
        cells_per_block: 7,
        ..Spec::default()
    };
    let bytes = Bytes::from(ts::write_hfile(&cells(400), &spec));
    let (r, io) = on_storage(bytes, OpenOptions::default());
    let r = r.unwrap();
    let all = block_on(r.scan_all()).unwrap();
    for run_bytes in [1, 300, 4096, 1 << 30] {
        let runs = block_on(r.data_block_runs(run_bytes)).unwrap();
        let before = io.stats().snapshot();
        let mut got = Vec::new();
        for run in &runs {
            block_on(r.scan_run(run, |cells| {
                got.extend_from_slice(cells);
                Ok(())
            }))
            .unwrap();
        }
        assert_eq!(got, all, "runs of {run_bytes} bytes");
        assert!(cost(&io, before).requests <= runs.len() as u64);
    }
    assert_eq!(block_on(r.data_block_runs(1 << 30)).unwrap().len(), 1);
}
