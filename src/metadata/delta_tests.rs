//! End to end: a delta commit planned by `delta` appended to a fixture's metadata table,
//! then read back with the crate's metadata reader.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::executor::block_on;

use super::delta::*;
use super::keys::{column_stats_key, partition_stats_key};
use super::lookup::Lookup;
use super::records::MetadataPayload;
use super::table::{COLUMN_STATS, FILES, PARTITION_STATS, RECORD_INDEX};
use super::MetadataTable;
use crate::config::TimelineTimezone;
use crate::hfile::test_support as ts;
use crate::meta_client::MetaClient;
use crate::storage::local::LocalStorage;
use crate::value::Value;

const FIXTURE: &str = "sample_table/cow/v9_txns_simple_meta";
const T: &str = "20270101000000000";
const FILE_ID: &str = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d-0";
const MAINTAINED: [&str; 4] = [FILES, COLUMN_STATS, PARTITION_STATS, RECORD_INDEX];

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

fn open(dir: &Path) -> MetadataTable {
    let client = block_on(MetaClient::open(Arc::new(LocalStorage::new(dir)))).unwrap();
    block_on(MetadataTable::open(&client, &[])).unwrap()
}

fn range(column: &str, min: Value, max: Value) -> ColumnRangeInput {
    ColumnRangeInput {
        column: column.into(),
        min: Some(min),
        max: Some(max),
        null_count: 0,
        value_count: 2,
        total_size: 100,
        total_uncompressed_size: 120,
    }
}

fn input(file_name: &str) -> MdtDeltaInput {
    let amount = |unscaled| Value::Decimal {
        unscaled,
        precision: 15,
        scale: 2,
    };
    let ri = |key: &str, deleted| RecordIndexChange {
        record_key: key.into(),
        partition: "region=us".into(),
        file_id: FILE_ID.into(),
        instant: T.into(),
        deleted,
    };
    MdtDeltaInput {
        instant: T.into(),
        files: vec![DataFileChange {
            partition: "region=us".into(),
            file_name: file_name.into(),
            size: 434_567,
            deleted: false,
            columns: vec![
                range(
                    "txn_id",
                    Value::String("TXN-900".into()),
                    Value::String("TXN-901".into()),
                ),
                range("amount", amount(1050), amount(99_999)),
                range("txn_date", Value::Date(20000), Value::Date(20001)),
            ],
        }],
        record_index: vec![
            ri("TXN-900", false),
            ri("TXN-901", false),
            ri("TXN-001", true),
        ],
        partition_stats: vec![(
            "region=us".into(),
            vec![range(
                "txn_id",
                Value::String("TXN-001".into()),
                Value::String("TXN-901".into()),
            )],
        )],
        secondary_index: Vec::new(),
    }
}

/// Writes the planned log files and the MDT delta commit (requested, inflight, completed;
/// the completed file's content is an existing MDT commit's, which readers do not need).
fn commit(dir: &Path, files: &[MdtLogFile]) {
    let mdt = dir.join(".hoodie/metadata");
    for f in files {
        std::fs::write(mdt.join(&f.path), &f.bytes).unwrap();
    }
    let timeline = mdt.join(".hoodie/timeline");
    let template = std::fs::read_dir(&timeline)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy()
                .ends_with("_20260307162458923.deltacommit")
        })
        .unwrap();
    std::fs::write(timeline.join(format!("{T}.deltacommit.requested")), b"").unwrap();
    std::fs::write(timeline.join(format!("{T}.deltacommit.inflight")), b"").unwrap();
    std::fs::copy(
        template,
        timeline.join(format!("{T}_20270101000001000.deltacommit")),
    )
    .unwrap();
}

fn scratch(tag: &str) -> PathBuf {
    let dest = std::env::temp_dir()
        .join("hudi-edge-mdt-delta")
        .join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dest);
    copy_dir(&ts::table(FIXTURE), &dest);
    dest
}

#[test]
fn appended_delta_reads_back() {
    let dir = scratch("e2e");
    let file_name = format!("{FILE_ID}_0-1-1_{T}.parquet");
    let before = open(&dir);
    let keys = ["TXN-001".to_string(), "TXN-900".to_string()];
    let ri = block_on(before.lookup(RECORD_INDEX, Lookup::Keys(&keys))).unwrap();
    assert!(ri.values.contains_key("TXN-001"), "fixture has TXN-001");
    assert!(!ri.values.contains_key("TXN-900"));

    let planned = block_on(plan_delta(
        &before,
        &input(&file_name),
        &MAINTAINED,
        TimelineTimezone::Utc,
    ))
    .unwrap();
    let partitions: Vec<&str> = planned.iter().map(|f| f.partition.as_str()).collect();
    for p in MAINTAINED {
        assert!(partitions.contains(&p), "{p}: {partitions:?}");
    }
    for f in &planned {
        assert!(f
            .path
            .starts_with(&format!("{}/.{}_{T}.log.1_0-0-0", f.partition, f.file_id)));
        let blocks =
            crate::log_file::parse_log_bytes(&f.path, bytes::Bytes::from(f.bytes.clone())).unwrap();
        assert!(blocks.iter().all(|b| !b.is_corrupt()));
        assert!(!blocks.is_empty());
    }
    let deletes: u64 = planned.iter().map(|f| f.num_deletes).sum();
    assert_eq!(deletes, 1);
    commit(&dir, &planned);

    let after = open(&dir);
    assert!(after.orphan_instants().contains(&T.to_string()));
    // files
    let listed = block_on(after.files(&["region=us".to_string()])).unwrap();
    let new = listed
        .iter()
        .find(|f| f.name == file_name)
        .expect("new file listed");
    assert_eq!(new.size, 434_567);
    assert!(listed.len() > 1, "older files still listed");
    assert!(block_on(after.all_partitions())
        .unwrap()
        .contains(&"region=us".to_string()));
    // column_stats, by key prefix (column + partition)
    let prefix = vec![super::keys::column_stats_key_prefix(
        "amount",
        Some("region=us"),
    )];
    let stats = block_on(after.lookup(COLUMN_STATS, Lookup::Prefixes(&prefix))).unwrap();
    let key = column_stats_key("amount", "region=us", &file_name);
    match stats.values.get(&key) {
        Some(MetadataPayload::ColumnStats(cs)) => {
            assert_eq!(cs.file_name, file_name);
            assert_eq!(
                cs.min,
                Some(Value::Decimal {
                    unscaled: 1050,
                    precision: 15,
                    scale: 2
                })
            );
            assert_eq!(cs.value_type, Some((10, Some("15,2".into()))));
            assert_eq!(cs.total_size, Some(100));
        }
        other => panic!("column stats of the new file: {other:?}"),
    }
    assert!(stats.values.len() > 1, "older files' stats still there");
    let date_key = [column_stats_key("txn_date", "region=us", &file_name)];
    let dates = block_on(after.lookup(COLUMN_STATS, Lookup::Keys(&date_key))).unwrap();
    match dates.values.get(&date_key[0]) {
        Some(MetadataPayload::ColumnStats(cs)) => assert_eq!(cs.max, Some(Value::Date(20001))),
        other => panic!("{other:?}"),
    }
    // partition_stats
    let pkey = [partition_stats_key("txn_id", "region=us")];
    let ps = block_on(after.lookup(PARTITION_STATS, Lookup::Keys(&pkey))).unwrap();
    match ps.values.get(&pkey[0]) {
        Some(MetadataPayload::PartitionStats(cs)) => {
            assert!(cs.is_tight_bound);
            assert_eq!(cs.max, Some(Value::String("TXN-901".into())));
        }
        other => panic!("{other:?}"),
    }
    // record_index: new keys found, deleted key gone
    let keys = [
        "TXN-001".to_string(),
        "TXN-900".to_string(),
        "TXN-901".to_string(),
    ];
    let ri = block_on(after.lookup(RECORD_INDEX, Lookup::Keys(&keys))).unwrap();
    assert!(ri.problems.is_empty(), "{:?}", ri.problems);
    assert!(
        !ri.values.contains_key("TXN-001"),
        "deleted key still indexed"
    );
    for k in ["TXN-900", "TXN-901"] {
        match ri.values.get(k) {
            Some(MetadataPayload::RecordIndex(e)) => {
                assert_eq!(e.file_id, FILE_ID);
                assert_eq!(e.partition, "region=us");
                assert_eq!(e.instant_time_ms, Some(1_798_761_600_000));
            }
            other => panic!("{k}: {other:?}"),
        }
    }
    // Kept on request, for a one-off check with another reader.
    if std::env::var_os("HUDI_EDGE_KEEP_DELTA").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("kept {}", dir.display());
    }
}

#[test]
fn retried_instant_rolls_over_and_bad_input_is_refused() {
    let dir = scratch("retry");
    let mdt = open(&dir);
    let file_name = format!("{FILE_ID}_0-1-1_{T}.parquet");
    let first = block_on(plan_delta(
        &mdt,
        &input(&file_name),
        &MAINTAINED,
        TimelineTimezone::Utc,
    ))
    .unwrap();
    for f in &first {
        std::fs::write(dir.join(".hoodie/metadata").join(&f.path), &f.bytes).unwrap();
    }
    let again = block_on(plan_delta(
        &mdt,
        &input(&file_name),
        &MAINTAINED,
        TimelineTimezone::Utc,
    ))
    .unwrap();
    assert!(again.iter().all(|f| f.log_version == 2), "{again:?}");

    let mut bad = input(&file_name);
    bad.instant = "2027".into();
    assert!(block_on(plan_delta(&mdt, &bad, &MAINTAINED, TimelineTimezone::Utc)).is_err());
    let mut twice = input(&file_name);
    twice.files.push(twice.files[0].clone());
    assert!(block_on(plan_delta(&mdt, &twice, &MAINTAINED, TimelineTimezone::Utc)).is_err());
    let mut both = input(&file_name);
    both.record_index.push(RecordIndexChange {
        deleted: true,
        ..both.record_index[0].clone()
    });
    assert!(block_on(plan_delta(&mdt, &both, &MAINTAINED, TimelineTimezone::Utc)).is_err());
    // Without record_index maintained, no record-index files.
    let only = block_on(plan_delta(
        &mdt,
        &input(&file_name),
        &[FILES],
        TimelineTimezone::Utc,
    ))
    .unwrap();
    assert!(only.iter().all(|f| f.partition == FILES));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn instants_to_millis() {
    assert_eq!(
        instant_millis(T, TimelineTimezone::Utc).unwrap(),
        1_798_761_600_000
    );
    assert_eq!(
        instant_millis("20270101000000", TimelineTimezone::Utc).unwrap(),
        1_798_761_600_000
    );
    assert!(instant_millis("2027010100000x000", TimelineTimezone::Utc).is_err());
    assert!(instant_millis("20271301000000000", TimelineTimezone::Utc).is_err());
}
