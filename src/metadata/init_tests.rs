use super::*;
use crate::metadata::records::RecordDecoder;
use crate::value::Value;

/// The log file Spark 1.1.1 starts an MDT file group with (`column_stats` of a new table,
/// instant `…001`): one delete block without records, schema or footer.
const JAVA_EMPTY_LOG: &str = "2348554449230000000000000042000000010000000100000001000000000000\
    0011303030303030303030303030303030303100000000000000090000000300000001000000000000000000000000\
    48";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn empty_log_file_is_javas() {
    let java = unhex(JAVA_EMPTY_LOG);
    let built = build_partition(
        COLUMN_STATS,
        &BTreeMap::new(),
        2,
        "00000000000000001",
        0,
        4096,
    )
    .unwrap();
    assert_eq!(
        built.files.len(),
        2,
        "one log file per file group, no base file"
    );
    assert_eq!(
        built.files[0].0,
        "column_stats/.col-stats-0000-0_00000000000000001.log.1_0-0-0"
    );
    assert_eq!(built.files[0].1, java);
    let stats = built.metadata.partition_to_write_stats.unwrap();
    assert_eq!(stats.get(COLUMN_STATS), Some(&Some(vec![])));
}

/// The schema a new MDT is written with is the one Hudi 1.1's MDT files carry.
#[test]
fn record_schema_is_hudi_1_1s() {
    let root = crate::hfile::test_support::table("sample_table/cow/v9_txns_simple_meta");
    let name = "files-0000-0_13-170-402_20260307162449278.hfile";
    let path = root.join(".hoodie/metadata/files").join(name);
    let bytes = bytes::Bytes::from(std::fs::read(path).unwrap());
    let reader = crate::hfile::HFileReader::from_bytes(bytes, name).unwrap();
    assert_eq!(
        reader.file_info().schema(),
        Some(base_file_schema().as_str())
    );
}

#[test]
fn file_groups_are_sized_and_named_as_java_does() {
    let s = Sizing::default();
    assert_eq!(s.file_groups(FILES, 1_000_000), 1);
    assert_eq!(s.file_groups(COLUMN_STATS, 0), 2);
    assert_eq!(s.file_groups(PARTITION_STATS, 5), 1);
    assert_eq!(s.file_groups(RECORD_INDEX, 0), 10);
    assert_eq!(s.file_groups(RECORD_INDEX, 10_000_000), 10);
    // 1 GiB / 48 bytes per entry, at twice the records.
    assert_eq!(s.file_groups(RECORD_INDEX, 100_000_000), 10);
    assert_eq!(s.file_groups(RECORD_INDEX, 200_000_000), 18);
    assert_eq!(s.file_groups(RECORD_INDEX, 1_000_000_000), 90);
    assert_eq!(
        file_group_ids(RECORD_INDEX, 2),
        ["record-index-0000-0", "record-index-0001-0"]
    );
    assert_eq!(file_group_ids(FILES, 1), ["files-0000-0"]);
    assert_eq!(
        file_group_ids(PARTITION_STATS, 1),
        ["partition-stats-0000-0"]
    );
    assert_eq!(
        file_group_ids("secondary_index_idx", 1),
        ["secondary-index-idx-0000-0"]
    );
}

#[test]
fn init_instants_count_up_from_the_solo_commit_time() {
    let mut taken = BTreeSet::new();
    assert_eq!(init_instant(&taken), "00000000000000000");
    taken.insert("00000000000000000".to_string());
    taken.insert("00000000000000002".to_string());
    assert_eq!(init_instant(&taken), "00000000000000001");
}

fn range(column: &str, min: i64, max: i64) -> ColumnRange {
    ColumnRange {
        column: column.into(),
        min: Some(Value::Long(min)),
        max: Some(Value::Long(max)),
        null_count: 0,
        value_count: 3,
        total_size: 10,
        total_uncompressed_size: 20,
    }
}

fn contents() -> Contents {
    let file = |p: &str, n: &str, lo, hi| DataFile {
        partition: p.into(),
        name: n.into(),
        size: 100,
        columns: vec![range("ts", lo, hi)],
    };
    Contents {
        partitions: vec!["a".into(), "b".into(), "empty".into()],
        files: vec![
            file("a", "f1_0-1-0_20250101000000000.parquet", 1, 5),
            file("a", ".f1_20250101000000000.log.1_0-1-0", 7, 9),
            file("b", "f2_0-1-0_20250101000000000.parquet", -4, 2),
        ],
        keys: vec![LiveKey {
            key: "k1".into(),
            partition: "a".into(),
            file_id: "f1".into(),
            instant: "20250101000000000".into(),
        }],
    }
}

/// Built partitions read back: every record in its file group's HFile, decoded as written.
#[tokio::test]
async fn partitions_read_back() {
    let data = contents();
    for (partition, expected) in [
        (FILES, 4),
        (COLUMN_STATS, 3),
        (PARTITION_STATS, 2),
        (RECORD_INDEX, 1),
    ] {
        let mut recs = records(partition, &mut data.clone(), TimelineTimezone::Utc).unwrap();
        for r in recs.values_mut() {
            if let MetadataPayload::Files(f) = r {
                f.sort_by(|a, b| a.name.cmp(&b.name));
            }
        }
        assert_eq!(recs.len(), expected, "{partition}");
        let groups = Sizing::default().file_groups(partition, recs.len() as u64);
        let built =
            build_partition(partition, &recs, groups, "00000000000000003", 0, 4096).unwrap();
        let mut found = BTreeMap::new();
        for (path, bytes) in &built.files {
            if !path.ends_with(".hfile") {
                continue;
            }
            let reader = crate::hfile::HFileReader::from_bytes(bytes.clone().into(), path).unwrap();
            let decoder = RecordDecoder::for_hfile(&reader).unwrap();
            let cells = reader.scan_all().await.unwrap();
            for (key, payload) in decoder.decode_each(&cells).unwrap() {
                let payload = match payload.unwrap() {
                    // Maps decode in Java's iteration order.
                    MetadataPayload::Files(mut f) => {
                        f.sort_by(|a, b| a.name.cmp(&b.name));
                        MetadataPayload::Files(f)
                    }
                    // The encoder adds the V2 value type.
                    MetadataPayload::ColumnStats(mut c) => {
                        c.value_type = None;
                        MetadataPayload::ColumnStats(c)
                    }
                    MetadataPayload::PartitionStats(mut c) => {
                        c.value_type = None;
                        MetadataPayload::PartitionStats(c)
                    }
                    other => other,
                };
                found.insert(key, payload);
            }
        }
        assert_eq!(found, recs, "{partition}");
    }
    let stats = records(PARTITION_STATS, &mut data.clone(), TimelineTimezone::Utc).unwrap();
    let a = &stats[&partition_stats_key("ts", "a")];
    let MetadataPayload::PartitionStats(a) = a else {
        panic!("{a:?}")
    };
    assert_eq!(
        (a.min.clone(), a.max.clone()),
        (Some(Value::Long(1)), Some(Value::Long(9)))
    );
    assert_eq!(a.value_count, Some(6));
    assert!(a.is_tight_bound);
}

#[test]
fn a_key_live_twice_is_refused() {
    let mut data = contents();
    let mut twice = data.keys[0].clone();
    twice.file_id = "f2".into();
    data.keys.push(twice);
    let err = records(RECORD_INDEX, &mut data, TimelineTimezone::Utc).unwrap_err();
    assert!(err.to_string().contains("\"k1\""), "{err}");
}
