use super::*;
use crate::file_group::{BaseFile, LogFile};
use crate::timeline::Instant;

fn instant(t: &str, action: &str, state: State) -> Instant {
    Instant {
        requested_time: t.into(),
        completion_time: (state == State::Completed).then(|| format!("{t}9")),
        action: action.into(),
        plan_action: None,
        state,
        completion_source: None,
        file: String::new(),
        requested_file: None,
        archived: false,
    }
}

/// Commits at 10, 20, … (`n` of them), plus `extra`.
fn timeline(n: usize, extra: Vec<Instant>) -> Timeline {
    let mut instants: Vec<Instant> = (1..=n)
        .map(|i| instant(&format!("{:03}", i * 10), action::COMMIT, State::Completed))
        .collect();
    instants.extend(extra);
    instants.sort();
    Timeline {
        instants,
        ..Timeline::default()
    }
}

fn slice(file_id: &str, base: &str, logs: &[&str]) -> FileSlice {
    FileSlice {
        partition: "p".into(),
        file_id: file_id.into(),
        base_instant: base.into(),
        base_file: BaseFile::parse(&format!("{file_id}_0-0-0_{base}.parquet"), 1),
        log_files: logs
            .iter()
            .map(|t| LogFile::parse(&format!(".{file_id}_{t}.log.1_0-0-0"), 1).unwrap())
            .collect(),
    }
}

fn group(file_id: &str, bases: &[&str]) -> FileGroup {
    FileGroup {
        partition: "p".into(),
        file_id: file_id.into(),
        slices: bases.iter().map(|b| slice(file_id, b, &[])).collect(),
    }
}

fn config(pairs: &[(&str, &str)]) -> CleanConfig {
    let given = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    CleanConfig::parse(&given).unwrap()
}

#[test]
fn retain_point_is_the_nth_last_commit_but_never_after_a_pending_one() {
    let c = config(&[(COMMITS_RETAINED, "3")]);
    let tz = TimelineTimezone::Utc;
    // 15 commits, keep 3: the 13th (130) is the earliest retained.
    let t = timeline(15, vec![]);
    let r = earliest_commit_to_retain(&t, &c, 0, tz).unwrap();
    assert_eq!((r.timestamp.as_str(), r.action.as_str()), ("130", "commit"));
    assert_eq!(r.state, "COMPLETED");
    // A pending write at 55: the last completed commit before it.
    let t = timeline(
        15,
        vec![instant("055", action::DELTA_COMMIT, State::Inflight)],
    );
    assert_eq!(
        earliest_commit_to_retain(&t, &c, 0, tz).unwrap().timestamp,
        "050"
    );
    // A pending clean does not count; too few commits: none.
    let t = timeline(15, vec![instant("057", action::CLEAN, State::Requested)]);
    assert_eq!(
        earliest_commit_to_retain(&t, &c, 0, tz).unwrap().timestamp,
        "130"
    );
    assert_eq!(
        earliest_commit_to_retain(&timeline(3, vec![]), &c, 0, tz),
        None
    );
    // File versions: no retain point.
    let v = config(&[(POLICY_OLD, "keep_latest_file_versions")]);
    assert_eq!(earliest_commit_to_retain(&t, &v, 0, tz), None);
}

#[test]
fn retain_point_by_hours_is_the_first_commit_since() {
    let c = config(&[(HOURS_RETAINED, "1")]);
    assert_eq!(c.policy, Policy::KeepLatestByHours);
    let mut t = timeline(0, vec![]);
    for s in [
        "20260101000000000",
        "20260101013000000",
        "20260101020000000",
    ] {
        t.instants
            .push(instant(s, action::COMMIT, State::Completed));
    }
    // now 02:10 UTC → retain from 01:10.
    let now = chrono::DateTime::parse_from_rfc3339("2026-01-01T02:10:00Z")
        .unwrap()
        .timestamp_millis();
    let r = earliest_commit_to_retain(&t, &c, now, TimelineTimezone::Utc).unwrap();
    assert_eq!(r.timestamp, "20260101013000000");
}

#[test]
fn keep_latest_commits_spares_the_latest_and_the_last_before_the_retain_point() {
    let c = config(&[(COMMITS_RETAINED, "2")]);
    let retain = ActionInstant {
        timestamp: "40".into(),
        action: "commit".into(),
        state: "COMPLETED".into(),
    };
    let groups = PartitionGroups {
        groups: vec![
            group("a", &["10", "20", "30", "40", "50"]),
            group("b", &["10"]),
        ],
        replaced: vec![],
    };
    let got = files_to_clean(&groups, &c, Some(&retain), 5, &Protected::default());
    // a: 50 latest, 40 not before the retain point, 30 the last before it: 20 and 10 go.
    assert_eq!(
        got.files,
        vec![
            "a_0-0-0_20.parquet".to_string(),
            "a_0-0-0_10.parquet".to_string()
        ]
    );
    assert!(!got.delete_partition);
    // Not more commits than retained: nothing.
    let none = files_to_clean(&groups, &c, Some(&retain), 2, &Protected::default());
    assert!(none.files.is_empty());
}

#[test]
fn slices_go_whole_and_protected_ones_stay() {
    let c = config(&[(COMMITS_RETAINED, "1")]);
    let retain = ActionInstant {
        timestamp: "50".into(),
        ..Default::default()
    };
    let mut g = group("a", &["10", "20", "30", "40"]);
    g.slices[0] = slice("a", "10", &["11", "12"]);
    let mut protected = Protected::default();
    protected
        .savepointed_files
        .insert("a_0-0-0_20.parquet".into());
    let groups = PartitionGroups {
        groups: vec![g.clone()],
        replaced: vec![
            (group("r", &["5"]), "45".into()),
            (group("s", &["6"]), "55".into()),
        ],
    };
    let got = files_to_clean(&groups, &c, Some(&retain), 5, &protected);
    assert_eq!(
        got.files,
        vec![
            "r_0-0-0_5.parquet",
            "a_0-0-0_30.parquet",
            "a_0-0-0_10.parquet",
            ".a_11.log.1_0-0-0",
            ".a_12.log.1_0-0-0"
        ]
    );
    // A pending compaction of the group based on 10 keeps 10 and later.
    protected
        .pending_compaction
        .insert(("p".into(), "a".into()), "10".into());
    let got = files_to_clean(&groups, &c, Some(&retain), 5, &protected);
    assert_eq!(got.files, vec!["r_0-0-0_5.parquet"]);
}

#[test]
fn keep_latest_file_versions_keeps_n_per_group() {
    let c = config(&[(FILE_VERSIONS_RETAINED, "2")]);
    assert_eq!(c.policy, Policy::KeepLatestFileVersions);
    let groups = PartitionGroups {
        groups: vec![group("a", &["10", "20", "30"])],
        replaced: vec![(group("r", &["5"]), "99".into())],
    };
    let got = files_to_clean(&groups, &c, None, 3, &Protected::default());
    assert_eq!(got.files, vec!["r_0-0-0_5.parquet", "a_0-0-0_10.parquet"]);
    let empty = files_to_clean(
        &PartitionGroups::default(),
        &c,
        None,
        3,
        &Protected::default(),
    );
    assert!(empty.delete_partition);
}

#[test]
fn trigger_counts_commits_since_the_last_clean() {
    let t = timeline(5, vec![]);
    let last = LastClean {
        last_completed_commit: "050".into(),
        ..Default::default()
    };
    assert!(!needs_cleaning(&t, Some(&last), 1));
    assert!(needs_cleaning(&t, None, 1));
    let last = LastClean {
        last_completed_commit: "030".into(),
        ..Default::default()
    };
    assert!(needs_cleaning(&t, Some(&last), 2));
    assert!(!needs_cleaning(&t, Some(&last), 3));
}

#[test]
fn incremental_mode_scans_commits_between_the_retain_points() {
    let c = CleanConfig::default();
    let t = timeline(8, vec![]);
    let retain = ActionInstant {
        timestamp: "060".into(),
        ..Default::default()
    };
    let last = LastClean {
        earliest_commit_to_retain: "030".into(),
        ..Default::default()
    };
    let got = incremental_range(&t, &c, Some(&last), Some(&retain), &[]).unwrap();
    let times: Vec<&str> = got.iter().map(|i| i.requested_time.as_str()).collect();
    assert_eq!(times, ["030", "040", "050"]);
    // A removed savepoint, no last clean, or incremental off: a full scan.
    let sp = LastClean {
        savepointed: vec!["020".into()],
        ..last.clone()
    };
    assert!(incremental_range(&t, &c, Some(&sp), Some(&retain), &[]).is_none());
    assert!(incremental_range(&t, &c, None, Some(&retain), &[]).is_none());
    let off = config(&[(INCREMENTAL_OLD, "false")]);
    assert!(incremental_range(&t, &off, Some(&last), Some(&retain), &[]).is_none());
}

#[test]
fn settings_take_both_names_and_refuse_bad_values() {
    let c = config(&[(COMMITS_RETAINED_OLD, "4"), (AUTOMATIC, "FALSE")]);
    assert_eq!((c.commits_retained, c.automatic), (4, false));
    for (k, v) in [
        (POLICY, "KEEP_SOME"),
        (COMMITS_RETAINED, "-1"),
        (FILE_VERSIONS_RETAINED, "0"),
        (TRIGGER_STRATEGY, "ELAPSED_TIME"),
        (AUTOMATIC, "yes"),
    ] {
        let given = [(k.to_string(), v.to_string())].into_iter().collect();
        let e = CleanConfig::parse(&given).unwrap_err();
        assert_eq!(e.code(), "INVALID_ARGUMENT");
        assert!(e.to_string().contains(k), "{e}");
    }
    let mdt = CleanConfig::default().for_metadata_table();
    assert_eq!(mdt.commits_retained, 20);
    let big = config(&[(COMMITS_RETAINED, "30"), (FILE_VERSIONS_RETAINED, "3")]);
    assert_eq!(big.for_metadata_table().commits_retained, 36);
    assert_eq!(big.for_metadata_table().file_versions_retained, 4);
}

#[test]
fn the_metadata_table_cleans_when_its_retain_point_passes_a_compaction() {
    let c = config(&[(COMMITS_RETAINED, "3")]);
    let tz = TimelineTimezone::Utc;
    let mut init = instant("00000000000000000", action::DELTA_COMMIT, State::Completed);
    init.completion_time = Some("001".into());
    let compaction = |t: &str| {
        let mut i = instant(t, action::COMMIT, State::Completed);
        i.plan_action = Some(action::COMPACTION.into());
        i
    };
    // Deltas 010..090, compactions at 035 and 065.
    let mut instants = vec![init, compaction("035"), compaction("065")];
    instants.extend((1..=9).map(|i| {
        instant(
            &format!("{:03}", i * 10),
            action::DELTA_COMMIT,
            State::Completed,
        )
    }));
    instants.sort();
    let t = Timeline {
        instants,
        ..Timeline::default()
    };
    // 12 completed, keep 3: retain from 070; starts 000, 035, 065 precede it: work.
    assert!(metadata_table_may_clean(&t, &c, 0, tz));
    // After a clean at 095 (retain then 070 too) nothing new until another start passes.
    let mut cleaned = t.clone();
    let mut clean = instant("095", action::CLEAN, State::Completed);
    clean.completion_time = Some("096".into());
    cleaned.instants.push(clean);
    cleaned.instants.sort();
    assert!(!metadata_table_may_clean(&cleaned, &c, 0, tz));
    // A clean at 085, when the retain point was 065: the retain point passed 065 since.
    let mut earlier = t.clone();
    let mut clean = instant("085", action::CLEAN, State::Completed);
    clean.completion_time = Some("086".into());
    earlier.instants.push(clean);
    earlier.instants.sort();
    assert!(metadata_table_may_clean(&earlier, &c, 0, tz));
    // Only one start before the retain point: nothing.
    let early = Timeline {
        instants: t.instants[..6].to_vec(),
        ..Timeline::default()
    };
    assert!(!metadata_table_may_clean(&early, &c, 0, tz));
    // A pending clean is always work.
    let mut pending = cleaned.clone();
    pending
        .instants
        .push(instant("097", action::CLEAN, State::Requested));
    assert!(metadata_table_may_clean(&pending, &c, 0, tz));
}
