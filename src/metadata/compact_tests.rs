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
