use std::path::Path;

use super::*;
use crate::timeline::instant::parse_instant_file_name;
use crate::timeline::metadata::decode_instant_file;

const AVRO_TABLES: &[&str] = &[
    "sample_table/cow/v9_txns_simple_nometa",
    "sample_table/mor/avro/v9_txns_simple_nometa",
    "sample_table/mor/avro/v9_nonpartitioned_rollback",
    "sample_table/cow/v9_txns_simple_overwrite",
    "sample_table/cow/v8_nonpartitioned",
];

fn timeline_files(root: &Path, dir: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(root.join(dir))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .filter(|(n, _)| parse_instant_file_name(n).is_some())
        .collect();
    out.sort();
    out
}

fn schema_of(bytes: &[u8]) -> Option<InstantSchema> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
    let name = head.split("\"name\":\"").nth(1)?.split('"').next()?;
    Some(match name {
        "HoodieCommitMetadata" => InstantSchema::CommitMetadata,
        "HoodieReplaceCommitMetadata" => InstantSchema::ReplaceCommitMetadata,
        "HoodieRequestedReplaceMetadata" => InstantSchema::RequestedReplaceMetadata,
        "HoodieRollbackPlan" => InstantSchema::RollbackPlan,
        "HoodieRollbackMetadata" => InstantSchema::RollbackMetadata,
        "HoodieCompactionPlan" => InstantSchema::CompactionPlan,
        "HoodieCleanerPlan" => InstantSchema::CleanerPlan,
        "HoodieCleanMetadata" => InstantSchema::CleanMetadata,
        _ => return None,
    })
}

/// Where the header (and its sync marker) ends.
fn header_len(bytes: &[u8]) -> usize {
    let sync = &bytes[bytes.len() - 16..];
    bytes.windows(16).position(|w| w == sync).unwrap() + 16
}

fn values(bytes: &[u8]) -> Vec<apache_avro::types::Value> {
    crate::avro::container::read_values(bytes).unwrap()
}

/// Every Avro instant of the fixtures, decoded and encoded again: same header, same
/// values, same length; byte for byte (sync marker aside) unless a map with several
/// entries came back in another order (apache-avro decodes maps into hash maps).
#[test]
fn avro_instants_round_trip_through_the_generic_encoder() {
    let (mut total, mut exact) = (0, 0);
    for t in AVRO_TABLES {
        let root = crate::hfile::test_support::table(t);
        for (name, bytes) in timeline_files(&root, ".hoodie/timeline") {
            // Other plans (compaction, clean ...) are not written here.
            let Some(schema) = schema_of(&bytes) else {
                continue;
            };
            total += 1;
            let json = decode_instant_file(&bytes, &name).unwrap();
            let ours = encode_avro_instant(schema, &json).unwrap();
            let h = header_len(&bytes);
            assert_eq!(h, header_len(&ours), "{t}/{name}");
            assert_eq!(bytes[..h - 16], ours[..h - 16], "{t}/{name}: header");
            assert_eq!(bytes.len(), ours.len(), "{t}/{name}: length");
            assert_eq!(values(&bytes), values(&ours), "{t}/{name}: values");
            let strip = |b: &[u8]| [&b[..h - 16], &b[h..b.len() - 16]].concat();
            if strip(&bytes) == strip(&ours) {
                exact += 1;
            }
        }
    }
    eprintln!("{exact} of {total} Avro instants re-encoded byte for byte");
    assert!(total >= 40, "{total}");
    assert!(exact > 0);
}

/// The same through the typed structs: decode → CommitMetadata / rollback structs →
/// encode → decode gives the same value as the fixture.
#[test]
fn typed_instants_lose_nothing() {
    let mut seen = [0; 3];
    for t in AVRO_TABLES {
        let root = crate::hfile::test_support::table(t);
        for (name, bytes) in timeline_files(&root, ".hoodie/timeline") {
            let Some(schema) = schema_of(&bytes) else {
                continue;
            };
            let json = decode_instant_file(&bytes, &name).unwrap();
            let ours = match schema {
                InstantSchema::CommitMetadata => {
                    seen[0] += 1;
                    let m = CommitMetadata::from_json(json.clone(), &name).unwrap();
                    assert!(m.other.is_empty(), "{name}: {:?}", m.other);
                    for (_, s) in m.write_stats() {
                        assert!(s.other.is_empty(), "{name}: {:?}", s.other);
                    }
                    encode_commit_metadata(&m, 9).unwrap()
                }
                InstantSchema::ReplaceCommitMetadata => {
                    seen[0] += 1;
                    let m = CommitMetadata::from_json(json.clone(), &name).unwrap();
                    encode_replace_metadata(&m, 8).unwrap()
                }
                InstantSchema::RollbackPlan => {
                    seen[1] += 1;
                    encode_rollback_plan(&RollbackPlan::from_json(json.clone(), &name).unwrap())
                        .unwrap()
                }
                InstantSchema::RollbackMetadata => {
                    seen[2] += 1;
                    let m = RollbackMetadata::from_json(json.clone(), &name).unwrap();
                    encode_rollback_metadata(&m).unwrap()
                }
                InstantSchema::RequestedReplaceMetadata
                | InstantSchema::CompactionPlan
                | InstantSchema::CleanerPlan
                | InstantSchema::CleanMetadata => continue,
            };
            assert_eq!(bytes.len(), ours.len(), "{t}/{name}");
            assert_eq!(
                decode_instant_file(&ours, &name).unwrap(),
                json,
                "{t}/{name}"
            );
            assert_eq!(values(&bytes), values(&ours), "{t}/{name}");
        }
    }
    assert!(seen.iter().all(|n| *n > 0), "{seen:?}");
}

/// A clean written by Apache Hudi Spark 1.1.1 (plan and metadata, `tests/data/spark_clean`):
/// through the typed structs and back, the same header, values and length.
#[test]
fn spark_clean_instants_round_trip() {
    let plan_bytes: &[u8] =
        include_bytes!("../../../tests/data/spark_clean/20261205140420881.clean.requested");
    let meta_bytes: &[u8] =
        include_bytes!("../../../tests/data/spark_clean/20261205140420881_20261205140421931.clean");
    let plan = CleanerPlan::from_json(decode_instant_file(plan_bytes, "p").unwrap(), "p").unwrap();
    assert_eq!(plan.version, Some(2));
    assert_eq!(plan.policy, "KEEP_LATEST_COMMITS");
    let files = plan
        .file_paths_to_be_deleted_per_partition
        .as_ref()
        .unwrap();
    assert_eq!(files["eu"].len(), 4);
    assert!(files["eu"][0]
        .file_path
        .as_deref()
        .unwrap()
        .starts_with('/'));
    let meta =
        CleanMetadata::from_json(decode_instant_file(meta_bytes, "m").unwrap(), "m").unwrap();
    assert_eq!(meta.total_files_deleted, 8);
    assert!(!meta.partition_metadata["us"].success_delete_files[0].contains('/'));
    for (bytes, ours) in [
        (plan_bytes, encode_cleaner_plan(&plan).unwrap()),
        (meta_bytes, encode_clean_metadata(&meta).unwrap()),
    ] {
        let h = header_len(bytes);
        assert_eq!(bytes[..h - 16], ours[..h - 16], "header");
        assert_eq!(bytes.len(), ours.len());
        assert_eq!(values(bytes), values(&ours));
    }
}

#[test]
fn rollback_fixture_content() {
    let root =
        crate::hfile::test_support::table("sample_table/mor/avro/v9_nonpartitioned_rollback");
    let files = timeline_files(&root, ".hoodie/timeline");
    let get = |suffix: &str| &files.iter().find(|(n, _)| n.ends_with(suffix)).unwrap().1;
    assert!(get(".rollback.inflight").is_empty());
    let plan = get(".rollback.requested");
    let plan = RollbackPlan::from_json(decode_instant_file(plan, "p").unwrap(), "p").unwrap();
    assert_eq!(plan.instant_to_rollback.unwrap().action, "deltacommit");
    let done = get(".rollback");
    let done = RollbackMetadata::from_json(decode_instant_file(done, "m").unwrap(), "m").unwrap();
    assert_eq!(done.commits_rollback.len(), 1);
    assert_eq!(
        done.instants_rollback[0].commit_time,
        done.commits_rollback[0]
    );
}

/// v6 commits are Java's pretty-printed JSON: byte for byte for the 0.14 writer's files.
#[test]
fn v6_json_matches_java() {
    let root = crate::hfile::test_support::table("sample_table/cow/v6_nonpartitioned");
    let mut n = 0;
    for (name, bytes) in timeline_files(&root, ".hoodie") {
        if bytes.is_empty() {
            continue;
        }
        let json = decode_instant_file(&bytes, &name).unwrap();
        let m = CommitMetadata::from_json(json, &name).unwrap();
        let ours = encode_commit_metadata(&m, 6).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&bytes),
            "{name}"
        );
        n += 1;
    }
    assert_eq!(n, 4);
    // MOR log stats (delta write stats, `recordsStats`) and replace commits: same values.
    let root = crate::hfile::test_support::table(
        "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle_overwritetable",
    );
    for (name, bytes) in timeline_files(&root, ".hoodie") {
        if bytes.is_empty() || !bytes.starts_with(b"{") {
            continue;
        }
        let json = decode_instant_file(&bytes, &name).unwrap();
        let m = CommitMetadata::from_json(json.clone(), &name).unwrap();
        // A replacecommit's inflight is plain commit metadata.
        let ours = if name.ends_with(".replacecommit") {
            encode_replace_metadata(&m, 6).unwrap()
        } else {
            encode_commit_metadata(&m, 6).unwrap()
        };
        assert_eq!(decode_instant_file(&ours, &name).unwrap(), json, "{name}");
    }
}

#[test]
fn jackson_style_printing() {
    let v = serde_json::json!({"a": {}, "b": [], "c": [1, {"d": "x\"\u{1}é"}], "e": null});
    assert_eq!(
        java_pretty_json(&v),
        "{\n  \"a\" : { },\n  \"b\" : [ ],\n  \"c\" : [ 1, {\n    \"d\" : \"x\\\"\\u0001é\"\n  } ],\n  \"e\" : null\n}"
    );
}

#[test]
fn file_names() {
    let t = "20260307162434124";
    let c = Some("20260307162438653");
    let cases = [
        (
            action::COMMIT,
            State::Requested,
            None,
            "20260307162434124.commit.requested",
        ),
        (
            action::COMMIT,
            State::Inflight,
            None,
            "20260307162434124.inflight",
        ),
        (
            action::COMMIT,
            State::Completed,
            c,
            "20260307162434124_20260307162438653.commit",
        ),
        (
            action::DELTA_COMMIT,
            State::Requested,
            None,
            "20260307162434124.deltacommit.requested",
        ),
        (
            action::DELTA_COMMIT,
            State::Inflight,
            None,
            "20260307162434124.deltacommit.inflight",
        ),
        (
            action::DELTA_COMMIT,
            State::Completed,
            c,
            "20260307162434124_20260307162438653.deltacommit",
        ),
        (
            action::ROLLBACK,
            State::Requested,
            None,
            "20260307162434124.rollback.requested",
        ),
        (
            action::ROLLBACK,
            State::Inflight,
            None,
            "20260307162434124.rollback.inflight",
        ),
        (
            action::ROLLBACK,
            State::Completed,
            c,
            "20260307162434124_20260307162438653.rollback",
        ),
        (
            action::COMPACTION,
            State::Completed,
            c,
            "20260307162434124_20260307162438653.commit",
        ),
        (
            action::CLUSTERING,
            State::Completed,
            c,
            "20260307162434124_20260307162438653.replacecommit",
        ),
        (
            action::DELTA_COMMIT,
            State::Completed,
            None,
            "20260307162434124.deltacommit",
        ),
        (
            action::COMMIT,
            State::Completed,
            None,
            "20260307162434124.commit",
        ),
    ];
    for (a, s, c, want) in cases {
        let name = instant_file_name(t, a, s, c);
        assert_eq!(name, want);
        let p = parse_instant_file_name(&name).unwrap();
        assert_eq!((p.state, p.completion_time.as_deref()), (s, c), "{name}");
        assert_eq!(
            p.action,
            if s == State::Completed {
                action::completed_as(a)
            } else {
                a
            }
        );
    }
}

#[test]
fn instant_times() {
    let ms = 1_772_900_674_124; // 2026-03-07T16:24:34.124Z
    let utc = TimelineTimezone::Utc;
    assert_eq!(new_instant_time(ms, utc, &[]).unwrap(), "20260307162434124");
    assert_eq!(
        new_instant_time(ms, utc, &["20260307162434123", "20260101000000000"]).unwrap(),
        "20260307162434124"
    );
    // Not ahead of the timeline: one past the greatest time on it.
    assert_eq!(
        new_instant_time(ms, utc, &["20260307162434124"]).unwrap(),
        "20260307162434125"
    );
    assert_eq!(
        new_instant_time(ms, utc, &["20260307235959999"]).unwrap(),
        "20260308000000000"
    );
    assert_eq!(
        new_instant_time(ms, utc, &["20260307162440"]).unwrap(),
        "20260307162441000"
    );
    // MDT-style suffixed times sort above their first 17 digits.
    assert_eq!(
        new_instant_time(ms, utc, &["20260307162434124001"]).unwrap(),
        "20260307162434125"
    );
    let local = new_instant_time(ms, TimelineTimezone::Local, &[]).unwrap();
    assert_eq!(
        local,
        DateTime::<Utc>::from_timestamp_millis(ms)
            .unwrap()
            .with_timezone(&Local)
            .format(INSTANT_FORMAT)
            .to_string()
    );
    for bad in ["x", "2026", "", "9999123123595999a"] {
        assert_eq!(
            new_instant_time(ms, utc, &[bad]).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
    }
    assert!(new_instant_time(ms, utc, &["99999999999999999"]).is_err());
    assert!(new_instant_time(i64::MAX, utc, &[]).is_err());
}

#[test]
fn bad_values_are_errors_not_panics() {
    for v in [
        serde_json::json!(null),
        serde_json::json!([1]),
        serde_json::json!({"partitionToWriteStats": {"p": [{"numWrites": "x"}]}}),
        serde_json::json!({"version": 1_i64 << 40}),
        serde_json::json!({"compacted": 3}),
    ] {
        let r = encode_avro_instant(InstantSchema::CommitMetadata, &v);
        if !v.is_null() {
            assert_eq!(r.unwrap_err().code(), "INVALID_ARGUMENT", "{v}");
        }
    }
    // Required fields without defaults.
    let e =
        encode_avro_instant(InstantSchema::RollbackMetadata, &serde_json::json!({})).unwrap_err();
    assert_eq!(e.code(), "INVALID_ARGUMENT");
    assert_eq!(
        encode_commit_metadata(&CommitMetadata::default(), 5)
            .unwrap_err()
            .code(),
        "UNSUPPORTED"
    );
}
