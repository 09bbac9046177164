use super::*;
use crate::config::TableConfig;
use crate::storage::ObjectMeta;

fn config() -> TableConfig {
    TableConfig::parse(
        "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=9\n\
         hoodie.timeline.layout.version=2\n",
        ".hoodie/hoodie.properties",
    )
    .unwrap()
}

/// `n` as an instant time (requested times every 10 ms, completions 5 ms later).
fn t(n: u64) -> String {
    format!("2026120500{:07}", n * 10)
}

fn done(n: u64, action: &str) -> Vec<String> {
    let pending = match action {
        "commit" => "compaction",
        other => other,
    };
    let completion = format!("2026120500{:07}", n * 10 + 5);
    vec![
        format!("{}.{pending}.requested", t(n)),
        format!("{}.{pending}.inflight", t(n)),
        format!("{}_{completion}.{action}", t(n)),
    ]
}

fn timeline(files: &[Vec<String>]) -> Timeline {
    let objects: Vec<ObjectMeta> = (files.iter().flatten())
        .map(|n| ObjectMeta::file(format!(".hoodie/timeline/{n}"), 1))
        .collect();
    Timeline::from_listing(&objects, &config())
}

fn inputs() -> ArchivalInputs {
    ArchivalInputs {
        config: ArchivalConfig::default(),
        merge_on_read: false,
        compaction_delta_commits: None,
        clean_retain: None,
        metadata: MetadataBarrier::None,
        data_table_bound: None,
        last_clean_retain: None,
    }
}

fn times(range: std::ops::Range<u64>) -> Vec<String> {
    range.map(t).collect()
}

#[test]
fn nothing_until_the_maximum_is_passed_then_down_to_the_minimum() {
    let mut files: Vec<Vec<String>> = (0..30).map(|n| done(n, "deltacommit")).collect();
    assert!(select(&timeline(&files), &inputs()).is_empty());
    files.push(done(30, "deltacommit"));
    assert_eq!(select(&timeline(&files), &inputs()), times(0..11));
}

#[test]
fn a_pending_write_holds_back_everything_from_the_commit_before_it() {
    let mut files: Vec<Vec<String>> = (0..40).map(|n| done(n, "deltacommit")).collect();
    files[5].truncate(2); // instant 5 still inflight
    assert_eq!(select(&timeline(&files), &inputs()), times(0..4));
    // A cleaner keeping everything from the pending write on raises the minimum past what
    // is there, as in Java.
    let mut i = inputs();
    i.clean_retain = Some(t(4));
    assert!(select(&timeline(&files), &i).is_empty());
}

#[test]
fn merge_on_read_keeps_the_delta_commits_compaction_needs() {
    let mut files: Vec<Vec<String>> = (0..40).map(|n| done(n, "deltacommit")).collect();
    files[3] = done(3, "commit"); // a compaction
    let mut i = inputs();
    i.merge_on_read = true;
    i.compaction_delta_commits = Some(5);
    // 36 delta commits after the compaction: the 32nd-from-first is where 5 remain.
    assert_eq!(select(&timeline(&files), &i), times(0..20));
    i.compaction_delta_commits = Some(40);
    // Fewer than 40 since the compaction: the compaction itself stays.
    let got = select(&timeline(&files), &i);
    assert_eq!(got, times(0..3));
}

#[test]
fn the_metadata_table_bounds_the_data_table() {
    let files: Vec<Vec<String>> = (0..40).map(|n| done(n, "deltacommit")).collect();
    let mut i = inputs();
    i.metadata = MetadataBarrier::NeverCompacted;
    assert!(select(&timeline(&files), &i).is_empty());
    // Commits 0..=6 completed before the metadata table compacted at this time.
    i.metadata = MetadataBarrier::CompactedAt(format!("2026120500{:07}", 68));
    assert_eq!(select(&timeline(&files), &i), times(0..7));
    // The metadata table's own archival stops at the data table's first active instant.
    let mut i = inputs();
    i.data_table_bound = Some(t(4));
    assert_eq!(select(&timeline(&files), &i), times(0..4));
}

#[test]
fn cleans_and_rollbacks_before_the_last_archived_commit_go_along() {
    let mut files: Vec<Vec<String>> = (0..40).map(|n| done(n, "deltacommit")).collect();
    files[2] = done(2, "clean");
    files[7] = done(7, "rollback");
    files[30] = done(30, "clean");
    let got = select(&timeline(&files), &inputs());
    // 37 commits: 17 archived (0..=19 less the clean and rollback), which go along.
    let mut want = times(0..19);
    want.retain(|x| *x != t(2) && *x != t(7));
    want.extend([t(2), t(7)]);
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn the_cleaner_retention_raises_the_minimum() {
    let files: Vec<Vec<String>> = (0..60).map(|n| done(n, "deltacommit")).collect();
    let mut i = inputs();
    i.clean_retain = Some(t(35));
    // 24 commits after the retain point + 2 = 26 kept (max raised to 36).
    assert_eq!(select(&timeline(&files), &i), times(0..34));
}

#[test]
fn savepoints_stop_archival_unless_asked_to_go_beyond() {
    let mut files: Vec<Vec<String>> = (0..40).map(|n| done(n, "deltacommit")).collect();
    files.push(vec![format!("{}_{}.savepoint", t(3), t(3))]);
    files[3] = done(3, "commit");
    let got = select(&timeline(&files), &inputs());
    assert_eq!(got, times(0..3));
    let mut i = inputs();
    i.config.beyond_savepoint = true;
    let got = select(&timeline(&files), &i);
    assert!(!got.contains(&t(3)) && got.contains(&t(4)), "{got:?}");
}

#[test]
fn replace_commits_wait_for_the_clean_that_covers_them() {
    let mut files: Vec<Vec<String>> = (0..40).map(|n| done(n, "deltacommit")).collect();
    files[6] = done(6, "replacecommit");
    let mut i = inputs();
    // No clean yet: the first replace commit stays.
    assert_eq!(select(&timeline(&files), &i), times(0..6));
    i.last_clean_retain = Some(Ok(t(12)));
    assert_eq!(select(&timeline(&files), &i), times(0..20));
}

#[test]
fn history_files_read_back_as_written() {
    let rows = vec![
        HistoryRow {
            instant_time: t(1),
            completion_time: Some(t(2)),
            action: "commit".into(),
            metadata: Some(Bytes::from_static(b"{}")),
            plan: Some(Bytes::from_static(b"plan")),
        },
        HistoryRow {
            instant_time: t(3),
            completion_time: None,
            action: "clean".into(),
            metadata: None,
            plan: None,
        },
    ];
    let bytes = encode_history_file(&rows).unwrap();
    assert_eq!(
        decode_history_file(bytes.clone(), "h.parquet").unwrap(),
        rows
    );
    // The footer Java's Avro reader types the rows with, and its record name as the root.
    let meta = crate::base_file::footer_in_memory(&bytes, "h.parquet").unwrap();
    let file = meta.metadata().file_metadata();
    let kv: BTreeMap<String, Option<String>> = (file.key_value_metadata().unwrap().iter())
        .map(|k| (k.key.clone(), k.value.clone()))
        .collect();
    assert_eq!(
        kv["parquet.avro.schema"].as_deref(),
        Some(LSM_INSTANT_SCHEMA)
    );
    assert_eq!(kv["writer.model.name"].as_deref(), Some("avro"));
    assert_eq!(
        file.schema_descr().root_schema().name(),
        "org.apache.hudi.avro.model.HoodieLSMTimelineInstant"
    );
}

#[test]
fn the_manifest_is_written_as_java_writes_it() {
    // manifest_5 of tests/data/generated/v9_archive_mor.zip, written by Hudi 1.1.1.
    let java = "{\n  \"files\" : [ {\n    \"fileName\" : \"20261130012225238_20261130012626396_1.parquet\",\n    \"fileLen\" : 5778\n  }, {\n    \"fileName\" : \"20261130012645740_20261130012645740_0.parquet\",\n    \"fileLen\" : 3233\n  } ]\n}";
    let m = Manifest::parse(java.as_bytes(), "manifest_5").unwrap();
    assert_eq!(m.files.len(), 2);
    assert_eq!(m.to_json(), java);
    assert!(Manifest::parse(b"{}", "m").is_err());
}

#[test]
fn layers_merge_the_oldest_batch() {
    let files: Vec<(String, u64)> = (0..12)
        .map(|n| (history_file_name(&t(n), &t(n), 0), 100))
        .chain([(history_file_name(&t(0), &t(0), 1), 100)])
        .collect();
    let m = Manifest { files };
    assert_eq!(m.merge_candidates(0, 13), None);
    let chosen = m.merge_candidates(0, 10).unwrap();
    assert_eq!(chosen.len(), 10);
    assert_eq!(
        merged_file_name(&chosen).unwrap(),
        history_file_name(&t(0), &t(9), 1)
    );
    assert_eq!(
        parse_history_file_name("1_2_3.parquet"),
        Some(("1", "2", 3))
    );
    assert_eq!(parse_history_file_name("manifest_3"), None);
    assert_eq!(
        manifest_versions_to_drop(vec![1, 2, 3, 4, 5], 0),
        vec![2, 1]
    );
    assert_eq!(manifest_versions_to_drop(vec![1, 2, 3, 4, 5], 1), vec![1]);
}

#[test]
fn settings_are_checked() {
    let opts = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        (pairs.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        ArchivalConfig::parse(&opts(&[])).unwrap(),
        ArchivalConfig::default()
    );
    let e = ArchivalConfig::parse(&opts(&[(MIN_COMMITS, "30")])).unwrap_err();
    assert!(e.to_string().contains(MAX_COMMITS), "{e}");
    assert!(ArchivalConfig::parse(&opts(&[(AUTOMATIC, "maybe")])).is_err());
    let c = ArchivalConfig::parse(&opts(&[(MIN_COMMITS, "2"), (MAX_COMMITS, "3")])).unwrap();
    assert_eq!(
        (
            c.for_metadata_table().min_commits,
            c.for_metadata_table().max_commits
        ),
        (3, 4)
    );
}
