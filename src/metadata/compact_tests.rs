use super::*;
use crate::timeline::write::{encode_avro_instant, InstantSchema};

const FIXTURE: &str = "sample_table/cow/v9_txns_simple_meta";
const PLAN: &str = ".hoodie/metadata/.hoodie/timeline/20260307162449278.compaction.requested";

/// Java's plan, decoded into operations (sizes from the files) and encoded again, comes
/// out byte for byte (sync marker aside): field order, metrics and their map order.
#[test]
fn plan_encodes_as_java_writes_it() {
    let root = crate::hfile::test_support::table(FIXTURE);
    let bytes = std::fs::read(root.join(PLAN)).unwrap();
    let json = crate::timeline::metadata::decode_instant_file(&bytes, PLAN).unwrap();
    let size = |p: &str, n: &str| {
        std::fs::metadata(root.join(".hoodie/metadata").join(p).join(n))
            .unwrap()
            .len()
    };
    let ops: Vec<Operation> = plan_operations(&json, PLAN)
        .unwrap()
        .into_iter()
        .map(|(mut op, _)| {
            let p = op.partition.clone();
            if let Some((n, s)) = op.base_file.as_mut() {
                *s = size(&p, n);
            }
            for (n, s) in op.log_files.iter_mut() {
                *s = size(&p, n);
            }
            op
        })
        .collect();
    assert_eq!(ops.len(), 14);
    let ours = encode_avro_instant(InstantSchema::CompactionPlan, &plan_json(&ops)).unwrap();
    let strip = |b: &[u8]| {
        let sync = &b[b.len() - 16..];
        let h = b.windows(16).position(|w| w == sync).unwrap();
        [&b[..h], &b[h + 16..b.len() - 16]].concat()
    };
    assert_eq!(strip(&ours), strip(&bytes));
}

/// Java's commit lists the MDT partitions in `HashMap` order.
#[test]
fn commit_lists_partitions_in_java_order() {
    let stat = |p: &str| WriteStat {
        partition_path: Some(p.into()),
        ..WriteStat::default()
    };
    let m = commit_metadata(
        ["files", "column_stats", "partition_stats", "record_index"]
            .map(stat)
            .to_vec(),
        "{}",
    );
    let order: Vec<&str> = m
        .partition_to_write_stats
        .as_ref()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        order,
        ["record_index", "files", "partition_stats", "column_stats"]
    );
    assert_eq!(m.operation_type.as_deref(), Some("COMPACT"));
    assert_eq!(m.compacted, Some(true));
}

#[test]
fn names_follow_java() {
    assert_eq!(
        base_file_name("files-0000-0", &write_token(13), "20260307162449278"),
        "files-0000-0_13-0-13_20260307162449278.hfile"
    );
}

/// Records of Java's compacted base files decode and encode again to the same bytes,
/// `_hoodie_file_name` included; their `type` reads without decoding, and a record-index
/// value moved to another file (meta fields rewritten) equals its encoding there.
#[tokio::test]
async fn base_file_records_encode_as_java_writes_them() {
    let root = crate::hfile::test_support::table(FIXTURE);
    let (mut checked, mut exact) = (0, 0);
    for (dir, name) in [
        ("files", "files-0000-0_13-170-402_20260307162449278.hfile"),
        (
            "record_index",
            "record-index-0001-0_2-170-391_20260307162449278.hfile",
        ),
        (
            "column_stats",
            "col-stats-0000-0_11-170-400_20260307162449278.hfile",
        ),
        (
            "partition_stats",
            "partition-stats-0000-0_0-170-389_20260307162449278.hfile",
        ),
    ] {
        let path = root.join(".hoodie/metadata").join(dir).join(name);
        let bytes = bytes::Bytes::from(std::fs::read(&path).unwrap());
        let reader = crate::hfile::HFileReader::from_bytes(bytes, name).unwrap();
        let schema = reader.file_info().schema().unwrap().to_string();
        let decoder = super::super::records::RecordDecoder::for_hfile(&reader).unwrap();
        let enc = RecordEncoder::new(&schema).unwrap();
        let cells = reader.scan_all().await.unwrap();
        for (cell, (key, payload)) in cells.iter().zip(decoder.decode_each(&cells).unwrap()) {
            let payload = payload.unwrap();
            let ours = enc.encode_in_base_file(&payload, name).unwrap();
            let record_type = match payload {
                MetadataPayload::AllPartitions(_) => 1,
                MetadataPayload::Files(_) => 2,
                MetadataPayload::ColumnStats(_) => 3,
                MetadataPayload::RecordIndex(_) => 5,
                MetadataPayload::PartitionStats(_) => 6,
                _ => 0,
            };
            assert_eq!(decoder.record_type(&cell.value), Some(record_type), "{key}");
            if record_type == 5 {
                let rebased = enc.rebase_value(&cell.value, name).unwrap();
                assert!(rebased == ours, "{name} {key}: rebased value differs");
                assert!(enc.rebase_value(&cell.value[..2], name).is_err(), "{key}");
            }
            // A `files` map with several entries may iterate in another order than ours.
            if ours == cell.value.to_vec() {
                exact += 1;
            } else {
                assert!(
                    matches!(payload, MetadataPayload::Files(ref f) if f.len() > 1),
                    "{key}"
                );
                assert_eq!(ours.len(), cell.value.len(), "{name} {key}");
                assert_eq!(decoder.decode(&key, &ours).unwrap().payload, payload);
            }
            checked += 1;
        }
    }
    eprintln!("{exact} of {checked} base-file records byte for byte");
    assert!(
        checked > 100 && exact + 3 >= checked,
        "{exact} of {checked}"
    );
}

/// The streaming merge compaction runs (one base-file run at a time) builds the same bytes
/// as merging the whole slice in memory through the lookups' fold, for every slice of the
/// fixtures' MDT partitions, with runs of one block and of 1 MiB.
#[tokio::test]
async fn streaming_merge_builds_the_same_base_files() {
    use crate::metadata::table::Compacted;
    use crate::metadata::MetadataTable;
    use crate::storage::local::LocalStorage;
    let (mut slices, mut with_logs, mut with_both, mut copied) = (0, 0, 0, 0);
    for fixture in [
        FIXTURE,
        "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
    ] {
        let root = crate::hfile::test_support::table(fixture);
        let client =
            crate::meta_client::MetaClient::open(std::sync::Arc::new(LocalStorage::new(&root)))
                .await
                .unwrap();
        let mdt = MetadataTable::open(&client, &[]).await.unwrap();
        let schema = mdt.record_schema().await.unwrap();
        let enc = RecordEncoder::new(&schema).unwrap();
        for partition in &client.config().metadata_partitions {
            let shards = mdt.shards(partition).await.unwrap();
            // Each slice as it is, and its base file alone: no log touches its keys then,
            // so record-index values are copied instead of encoded again.
            let base_only = shards
                .iter()
                .filter(|s| s.base_file.is_some())
                .map(|s| FileSlice {
                    log_files: Vec::new(),
                    ..s.clone()
                });
            let variants: Vec<FileSlice> = shards.iter().cloned().chain(base_only).collect();
            for slice in &variants {
                let name = base_file_name(&slice.file_id, &write_token(0), "20261202000000000");
                let merged = mdt.merge_slice(slice).await.unwrap();
                let expected = base_file(&enc, &schema, &name, &merged, 7).unwrap();
                for run_bytes in [1, 1024 * 1024] {
                    let mut b = BaseFileBuilder::new(
                        &enc,
                        &name,
                        7,
                        crate::hfile::writer::DEFAULT_BLOCK_SIZE,
                    );
                    let copies = b.copies_values_of(&schema);
                    let counts = mdt
                        .merge_slice_streaming(slice, run_bytes, copies, |k, r, from_base| {
                            copied += usize::from(matches!(r, Compacted::Unchanged(_)));
                            b.push_compacted(k, r, from_base)
                        })
                        .await
                        .unwrap();
                    let got = b.finish(&schema).unwrap();
                    let what = format!("{fixture} {partition} {}", slice.file_id);
                    assert_eq!(counts, merged.counts(), "{what}");
                    assert_eq!(
                        (got.written, got.inserts, got.updates),
                        (expected.written, expected.inserts, expected.updates),
                        "{what}"
                    );
                    assert!(got.bytes == expected.bytes, "{what}: bytes differ");
                }
                slices += 1;
                with_logs += usize::from(!slice.log_files.is_empty());
                with_both += usize::from(!slice.log_files.is_empty() && slice.base_file.is_some());
            }
        }
    }
    eprintln!(
        "{slices} slices, {with_logs} with log files, {with_both} with base and logs, \
         {copied} values copied"
    );
    assert!(
        with_both >= 4,
        "{slices} slices, {with_both} with base and logs"
    );
    assert!(copied > 0, "no record-index value was copied unchanged");
}
