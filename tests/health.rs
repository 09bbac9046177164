//! Table health and discovery. The report's numbers are checked against what this test
//! counts itself from the files on disk (file names, sizes, the timeline folder and
//! `hoodie.properties`) for every shared fixture; tables made unhealthy on purpose show the
//! matching findings, and after `Table::fix` the fixable ones are gone.

mod common;
#[path = "write/helpers.rs"]
mod helpers;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use helpers::*;
use hudi_edge::config::TableType;
use hudi_edge::health::discover::{discover, DiscoverOptions};
use hudi_edge::health::Health;
use hudi_edge::storage::crash::CrashAfter;
use hudi_edge::storage::local::LocalStorage;
use hudi_edge::storage::Purpose;
use hudi_edge::write::Operation;
use hudi_edge::Table;
use serde_json::{json, Map, Value};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Every fixture table of the repository: the shared fixtures, hudi-rs's, Spark's variants.
fn all_fixtures() -> Vec<String> {
    let mut names = common::fixture_names();
    for dir in ["hudi_rs", "spark_variants"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(dir);
        for e in fs::read_dir(root).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "zip") {
                let stem = p.file_stem().unwrap().to_string_lossy().to_string();
                names.push(format!("{dir}/{stem}"));
            }
        }
    }
    names.sort();
    names
}

/// One timeline file name, parsed without the crate: (requested, completion, action, state).
fn parse_instant(name: &str) -> Option<(String, Option<String>, String, &'static str)> {
    let digits = name.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits < 14 {
        return None;
    }
    let (time, rest) = name.split_at(digits);
    let (completion, rest) = match rest.strip_prefix('_') {
        Some(r) => {
            let n = r.chars().take_while(|c| c.is_ascii_digit()).count();
            (Some(r[..n].to_string()), &r[n..])
        }
        None => (None, rest),
    };
    let rest = rest.strip_prefix('.')?;
    let (action, state) = if rest == "inflight" {
        ("commit", "inflight")
    } else if let Some(a) = rest.strip_suffix(".requested") {
        (a, "requested")
    } else if let Some(a) = rest.strip_suffix(".inflight") {
        (a, "inflight")
    } else {
        (rest, "completed")
    };
    if action.contains('.') || action.is_empty() {
        return None;
    }
    Some((time.to_string(), completion, action.to_string(), state))
}

/// A timeline folder as this test reads it.
struct Listed {
    /// requested time → (completed action, completion time) of completed instants.
    completed: BTreeMap<String, (String, String)>,
    /// Every requested time with a file.
    all: BTreeSet<String>,
}

fn list_timeline(dir: &Path) -> Listed {
    let mut out = Listed {
        completed: BTreeMap::new(),
        all: BTreeSet::new(),
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        let Some((t, completion, action, state)) = parse_instant(&name) else {
            continue;
        };
        out.all.insert(t.clone());
        if state == "completed" {
            let c = completion.unwrap_or_else(|| t.clone());
            out.completed.insert(t, (action, c));
        }
    }
    out
}

fn timeline_dir(table: &Path) -> PathBuf {
    let v2 = table.join(".hoodie/timeline");
    if v2.is_dir() {
        v2
    } else {
        table.join(".hoodie")
    }
}

fn property(table: &Path, key: &str) -> Option<String> {
    let text = fs::read_to_string(table.join(".hoodie/hoodie.properties")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")).map(str::to_string))
}

/// Every file under `dir` (relative partition, name, size), skipping `.hoodie`.
fn data_files(root: &Path, dir: &Path, out: &mut Vec<(String, String, u64)>) {
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().to_string();
        if e.file_type().unwrap().is_dir() {
            if !name.starts_with(".hoodie") {
                data_files(root, &e.path(), out);
            }
            continue;
        }
        let partition = dir
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        out.push((partition, name, e.metadata().unwrap().len()));
    }
}

/// What this test counts from disk.
#[derive(Debug, Default, PartialEq)]
struct Counted {
    file_groups_with_replaced: usize,
    replaced_file_groups: usize,
    base_files: usize,
    small_base_files: usize,
    log_files: usize,
    max_log_files_per_slice: usize,
    pending_instants: Vec<String>,
    active_timeline_instants: usize,
    mdt_partitions: Vec<String>,
    mdt_lag_instants: usize,
}

const SMALL_FILE_LIMIT: u64 = 104_857_600;

fn count(table: &Path) -> Counted {
    let timeline = list_timeline(&timeline_dir(table));
    let layout2 = table.join(".hoodie/timeline").is_dir();
    let first_active = timeline.all.iter().next().cloned();
    // Completed as of now, or older than the active timeline (archived, so completed).
    let committed = |t: &str| -> Option<String> {
        if let Some((_, c)) = timeline.completed.get(t) {
            return Some(c.clone());
        }
        match &first_active {
            Some(f) if t < f.as_str() => Some(t.to_string()),
            None => Some(t.to_string()),
            _ => None,
        }
    };
    let mut files = Vec::new();
    data_files(table, table, &mut files);
    // (partition, file id) → slices: base instant → (base size, log count).
    let mut bases: HashMap<(String, String), BTreeMap<String, u64>> = HashMap::new();
    let mut logs: HashMap<(String, String), Vec<(String, String)>> = HashMap::new();
    for (partition, name, size) in &files {
        if let Some(rest) = name.strip_prefix('.') {
            // .<fileId>_<instant>.log.<version>_<token>[.cdc]
            let Some((head, tail)) = rest.split_once(".log.") else {
                continue;
            };
            if tail.ends_with(".cdc") {
                continue;
            }
            let Some((file_id, instant)) = head.rsplit_once('_') else {
                continue;
            };
            let position = if layout2 {
                match committed(instant) {
                    Some(c) => c,
                    None => continue,
                }
            } else {
                instant.to_string()
            };
            logs.entry((partition.clone(), file_id.to_string()))
                .or_default()
                .push((position, name.clone()));
            continue;
        }
        // <fileId>_<token>_<instant>.<ext>
        let Some((stem, ext)) = name.rsplit_once('.') else {
            continue;
        };
        if !matches!(ext, "parquet" | "hfile" | "orc") {
            continue;
        }
        let parts: Vec<&str> = stem.rsplitn(3, '_').collect();
        if parts.len() != 3 {
            continue;
        }
        let (instant, file_id) = (parts[0], parts[2]);
        if committed(instant).is_none() {
            continue;
        }
        bases
            .entry((partition.clone(), file_id.to_string()))
            .or_default()
            .insert(instant.to_string(), *size);
    }
    let keys: BTreeSet<(String, String)> = bases.keys().chain(logs.keys()).cloned().collect();
    let replaced = replaced_groups(table, &timeline);
    let mut c = Counted {
        file_groups_with_replaced: keys.len(),
        replaced_file_groups: keys.iter().filter(|k| replaced.contains(*k)).count(),
        ..Counted::default()
    };
    for key in keys.into_iter().filter(|k| !replaced.contains(k)) {
        let group_bases = bases.remove(&key).unwrap_or_default();
        let mut slice_logs: BTreeMap<String, usize> =
            group_bases.keys().map(|k| (k.clone(), 0)).collect();
        for (position, _) in logs.remove(&key).unwrap_or_default() {
            let target = slice_logs
                .range(..=position.clone())
                .next_back()
                .map(|(k, _)| k.clone())
                .unwrap_or(position);
            *slice_logs.entry(target).or_default() += 1;
        }
        let (latest, n) = slice_logs.iter().next_back().unwrap();
        if let Some(size) = group_bases.get(latest) {
            c.base_files += 1;
            c.small_base_files += usize::from(*size < SMALL_FILE_LIMIT);
        }
        c.log_files += n;
        c.max_log_files_per_slice = c.max_log_files_per_slice.max(*n);
    }
    c.pending_instants = timeline
        .all
        .iter()
        .filter(|t| !timeline.completed.contains_key(*t))
        .cloned()
        .collect();
    c.active_timeline_instants = timeline.all.len();
    c.mdt_partitions = property(table, "hoodie.table.metadata.partitions")
        .map(|p| {
            p.split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    if !c.mdt_partitions.is_empty() {
        let mdt = list_timeline(&timeline_dir(&table.join(".hoodie/metadata")));
        let init = mdt
            .completed
            .iter()
            .filter(|(t, _)| t.starts_with("00000000000000"))
            .map(|(_, (_, c))| c.clone())
            .min();
        let synced: BTreeSet<&String> = mdt
            .completed
            .iter()
            .filter(|(_, (a, _))| a == "deltacommit")
            .map(|(t, _)| t)
            .collect();
        let mdt_start = mdt.all.iter().next();
        if let Some(init) = init {
            c.mdt_lag_instants = timeline
                .completed
                .iter()
                // A rollback is mirrored only when the metadata table had the failed write.
                .filter(|(_, (a, _))| {
                    ["commit", "deltacommit", "replacecommit", "clean"].contains(&a.as_str())
                })
                .filter(|(_, (_, done))| done.as_str() > init.as_str())
                .filter(|(t, _)| mdt_start.is_none_or(|s| t.as_str() >= s.as_str()))
                .filter(|(t, _)| !synced.contains(t))
                .count();
        }
    }
    c
}

/// File groups named by completed replace commits (`partitionToReplaceFileIds`; the
/// instant file decoded by the crate's Avro/JSON reader, the rest read here).
fn replaced_groups(table: &Path, timeline: &Listed) -> BTreeSet<(String, String)> {
    let dir = timeline_dir(table);
    let mut out = BTreeSet::new();
    for e in fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        let Some((t, _, action, "completed")) = parse_instant(&name) else {
            continue;
        };
        if action != "replacecommit" || !timeline.completed.contains_key(&t) {
            continue;
        }
        let bytes = fs::read(dir.join(&name)).unwrap();
        let meta = hudi_edge::timeline::metadata::decode_instant_file(&bytes, &name).unwrap();
        let by_partition = meta
            .get("partitionToReplaceFileIds")
            .and_then(Value::as_object);
        for (p, ids) in by_partition.into_iter().flatten() {
            for id in ids.as_array().into_iter().flatten() {
                out.insert((p.clone(), id.as_str().unwrap_or_default().to_string()));
            }
        }
    }
    out
}

fn counted_by_report(h: &Health) -> Counted {
    let mut mdt_partitions = h.metadata_table.partitions.clone();
    mdt_partitions.sort();
    Counted {
        file_groups_with_replaced: h.file_groups + h.replaced_file_groups,
        replaced_file_groups: h.replaced_file_groups,
        base_files: h.base_files,
        small_base_files: h.small_base_files,
        log_files: h.log_files,
        max_log_files_per_slice: h.max_log_files_per_slice,
        pending_instants: h
            .pending_instants
            .iter()
            .map(|p| p.requested_time.clone())
            .collect(),
        active_timeline_instants: h.active_timeline_instants,
        mdt_partitions,
        mdt_lag_instants: h.metadata_table.lag_instants,
    }
}

fn sorted(mut c: Counted) -> Counted {
    c.mdt_partitions.sort();
    c
}

async fn report(dir: &Path, settings: &[(&str, &str)]) -> Health {
    let options = settings
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    open(dir)
        .await
        .health(&options, now_ms())
        .await
        .unwrap_or_else(|e| panic!("health of {}: {e}", dir.display()))
}

fn codes(h: &Health) -> BTreeSet<String> {
    h.findings.iter().map(|f| f.code.clone()).collect()
}

#[tokio::test]
async fn every_fixture_reports_what_its_files_say() {
    let mut checked = 0;
    for name in all_fixtures() {
        let dir = common::table_path(&name);
        let table = match Table::open(Arc::new(LocalStorage::new(&dir))).await {
            Ok(t) => t,
            // Tables this engine does not open (Lance base files) have no report either.
            Err(hudi_edge::HudiError::Unsupported { .. }) => continue,
            Err(e) => panic!("{name}: {e}"),
        };
        let h = table
            .health(&BTreeMap::new(), now_ms())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            counted_by_report(&h),
            sorted(count(&dir)),
            "{name}: the report against the files on disk"
        );
        // No data block is read: only listings, properties, instant files and the lock.
        for purpose in [
            Purpose::ColumnChunk,
            Purpose::LogBlock,
            Purpose::Footer,
            Purpose::MdtDataBlock,
        ] {
            assert!(
                !h.io.by_purpose.contains_key(&purpose),
                "{name}: the report read {purpose:?}: {:?}",
                h.io.by_purpose
            );
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} fixtures");
}

fn row(i: usize, ts: i64) -> Map<String, Value> {
    let region = ["us", "eu", "ap"][i % 3];
    json!({"id": format!("K{i:04}"), "ts": ts, "region": region, "v": i as f64})
        .as_object()
        .unwrap()
        .clone()
}

const NO_SERVICES: &[(&str, &str)] = &[
    ("hoodie.compact.inline", "false"),
    ("hoodie.clean.automatic", "false"),
    ("hoodie.archive.automatic", "false"),
];

#[tokio::test]
async fn a_neglected_merge_on_read_table_shows_its_findings_and_the_fix_clears_them() {
    let dir = fresh_dir("health", "neglected_mor");
    create_events(&dir, TableType::MergeOnRead, &[]).await;
    // Many small commits, nothing compacted: inserts, then updates of the same keys.
    write_with(
        &dir,
        &(0..12).map(|i| row(i, 1)).collect::<Vec<_>>(),
        Operation::Upsert,
        NO_SERVICES,
    )
    .await;
    for round in 0..6 {
        let rows: Vec<_> = (0..12).map(|i| row(i, 10 + round)).collect();
        write_with(&dir, &rows, Operation::Upsert, NO_SERVICES).await;
    }
    // A write that dies once its instant is requested: left pending, no heartbeat.
    let mut crashed = false;
    for k in 1..40 {
        let crash = Arc::new(CrashAfter::new(Arc::new(LocalStorage::new(&dir)), k));
        let table = Table::open(crash.clone()).await.unwrap();
        let failed = write_on_with(&table, &[row(99, 100)], Operation::Upsert, NO_SERVICES).await;
        assert!(failed.is_err(), "the write crashing at request {k} failed");
        let listed = list_timeline(&timeline_dir(&dir));
        if listed.all.len() > listed.completed.len() {
            crashed = true;
            break;
        }
    }
    assert!(crashed, "no crash left a pending write");
    // A lock whose owner died holding it ten minutes ago.
    let lock = dir.join(".hoodie/.locks/table_lock.json");
    fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let stale = json!({"expired": false, "validUntil": now_ms() - 600_000, "owner": "gone-owner"});
    fs::write(&lock, stale.to_string()).unwrap();

    let before = report(&dir, NO_SERVICES).await;
    assert_eq!(counted_by_report(&before), sorted(count(&dir)));
    let found = codes(&before);
    for code in ["COMPACTION_BACKLOG", "FAILED_WRITES", "STALE_LOCK"] {
        assert!(found.contains(code), "{code} missing from {found:?}");
    }
    assert!(before.failed_writes >= 1 && before.lock.as_ref().unwrap().stale);
    let compaction = before.compaction.as_ref().unwrap();
    assert!(compaction.due && compaction.delta_commits_since_compaction >= 6);
    assert!(before.max_log_files_per_slice >= 6, "{before:?}");

    let fixes = open(&dir)
        .await
        .fix(&before, &BTreeMap::new())
        .await
        .unwrap();
    for f in &fixes {
        assert!(f.ok, "fix {} failed: {:?}", f.service, f.error);
    }
    let services: BTreeSet<&str> = fixes.iter().map(|f| f.service.as_str()).collect();
    assert!(
        ["rollback", "lock", "compact"]
            .iter()
            .all(|s| services.contains(s)),
        "{services:?}"
    );
    let after = report(&dir, NO_SERVICES).await;
    assert_eq!(counted_by_report(&after), sorted(count(&dir)));
    let left = codes(&after);
    for code in ["COMPACTION_BACKLOG", "FAILED_WRITES", "STALE_LOCK"] {
        assert!(
            !left.contains(code),
            "{code} still there: {:?}",
            after.findings
        );
    }
    assert_eq!(after.log_files, 0);
    assert!(after.lock.as_ref().is_some_and(|l| !l.stale && !l.live));
}

/// `hoodie.table.metadata.partitions` cleared as Java clears it when a writer turns the
/// metadata table off (its folder goes too).
fn switch_off_metadata_table(dir: &Path) -> String {
    let path = dir.join(".hoodie/hoodie.properties");
    let text = fs::read_to_string(&path).unwrap();
    let old = property(dir, "hoodie.table.metadata.partitions").unwrap();
    let text = text.replace(
        &format!("hoodie.table.metadata.partitions={old}"),
        "hoodie.table.metadata.partitions=",
    );
    fs::write(&path, text).unwrap();
    old
}

fn restore_metadata_partitions(dir: &Path, partitions: &str) {
    let path = dir.join(".hoodie/hoodie.properties");
    let text = fs::read_to_string(&path).unwrap().replace(
        "hoodie.table.metadata.partitions=\n",
        &format!("hoodie.table.metadata.partitions={partitions}\n"),
    );
    fs::write(&path, text).unwrap();
}

#[tokio::test]
async fn a_metadata_table_switched_off_is_missing_and_the_fix_builds_it() {
    let dir = fresh_dir("health", "mdt_switched_off");
    create_events(&dir, TableType::CopyOnWrite, &[]).await;
    write(
        &dir,
        &(0..6).map(|i| row(i, 1)).collect::<Vec<_>>(),
        Operation::Upsert,
    )
    .await;
    assert!(report(&dir, &[]).await.metadata_table.missing.is_empty());
    switch_off_metadata_table(&dir);
    fs::remove_dir_all(dir.join(".hoodie/metadata")).unwrap();
    write(
        &dir,
        &(6..9).map(|i| row(i, 2)).collect::<Vec<_>>(),
        Operation::Upsert,
    )
    .await;

    let before = report(&dir, &[]).await;
    assert_eq!(counted_by_report(&before), sorted(count(&dir)));
    assert!(
        codes(&before).contains("MDT_MISSING"),
        "{:?}",
        before.findings
    );
    assert!(before.metadata_table.missing.contains(&"files".to_string()));
    assert!(!before.metadata_table.present);

    let fixes = open(&dir)
        .await
        .fix(&before, &BTreeMap::new())
        .await
        .unwrap();
    assert!(
        fixes.iter().any(|f| f.service == "index" && f.ok),
        "{fixes:?}"
    );
    let after = report(&dir, &[]).await;
    assert_eq!(counted_by_report(&after), sorted(count(&dir)));
    assert!(
        !codes(&after).contains("MDT_MISSING"),
        "{:?}",
        after.findings
    );
    assert!(after.metadata_table.present && after.metadata_table.lag_instants == 0);
}

#[tokio::test]
async fn a_metadata_table_left_behind_shows_its_lag() {
    let dir = fresh_dir("health", "mdt_behind");
    create_events(&dir, TableType::CopyOnWrite, &[]).await;
    write(
        &dir,
        &(0..6).map(|i| row(i, 1)).collect::<Vec<_>>(),
        Operation::Upsert,
    )
    .await;
    // Writers that do not keep the metadata table (it switched off), then on again with the
    // old folder still there: it lacks what they wrote.
    let partitions = switch_off_metadata_table(&dir);
    for round in 0..2 {
        write(&dir, &[row(20 + round, 3)], Operation::Upsert).await;
    }
    restore_metadata_partitions(&dir, &partitions);

    let h = report(&dir, &[]).await;
    let counted = count(&dir);
    assert_eq!(counted_by_report(&h), sorted(counted));
    assert_eq!(h.metadata_table.lag_instants, 2);
    let lag = h
        .findings
        .iter()
        .find(|f| f.code == "MDT_LAG")
        .expect("MDT_LAG");
    assert_eq!(lag.evidence["lag_instants"], json!(2));
    assert!(
        lag.service.is_none(),
        "a stale metadata table is rebuilt by hand"
    );
}

/// Copies fixture `name` to `to`.
fn place(name: &str, to: &Path) {
    common::copy_dir(&common::table_path(name), to);
}

#[tokio::test]
async fn discovery_finds_every_table_and_no_table_inside_one() {
    let root = fresh_dir("health", "tree");
    let fixtures = all_fixtures();
    place(&fixtures[0], &root.join("a"));
    place(&fixtures[1], &root.join("team/b"));
    place(&fixtures[2], &root.join("team/deep/er/c"));
    // Inside a table's folder: not a table of its own.
    place(&fixtures[3], &root.join("a/inner_copy"));
    fs::create_dir_all(root.join("notes/more")).unwrap();
    fs::write(root.join("notes/readme.txt"), "not a table").unwrap();
    fs::write(root.join("notes/more/x.parquet"), "neither").unwrap();

    let options = DiscoverOptions {
        health: true,
        now_ms: now_ms(),
        ..DiscoverOptions::default()
    };
    let found = discover(Arc::new(LocalStorage::new(&root)), &options)
        .await
        .unwrap();
    let paths: Vec<&str> = found.tables.iter().map(|t| t.path.as_str()).collect();
    assert_eq!(paths, ["a", "team/b", "team/deep/er/c"]);
    assert!(!found.truncated, "{:?}", found.limits);
    for t in &found.tables {
        assert!(t.error.is_none(), "{}: {:?}", t.path, t.error);
        let dir = root.join(&t.path);
        assert_eq!(
            t.location,
            format!("{}/{}", found.root.trim_end_matches('/'), t.path)
        );
        assert_eq!(Some(t.name.clone()), property(&dir, "hoodie.table.name"));
        let h = report(&dir, &[]).await;
        let severities = h.findings.iter().fold(BTreeMap::new(), |mut m, f| {
            *m.entry(
                serde_json::to_value(f.severity)
                    .unwrap()
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
            .or_insert(0usize) += 1;
            m
        });
        assert_eq!(t.severities, severities, "{}", t.path);
    }

    // Depth: the deepest table lies four folders down.
    let shallow = DiscoverOptions {
        max_depth: 2,
        health: false,
        ..options.clone()
    };
    let found = discover(Arc::new(LocalStorage::new(&root)), &shallow)
        .await
        .unwrap();
    assert!(found.truncated);
    assert!(
        found.limits[0].contains("depth limit"),
        "{:?}",
        found.limits
    );
    assert_eq!(found.tables.len(), 2);
}

#[tokio::test]
async fn discovery_under_many_objects_stays_within_its_limits() {
    let root = fresh_dir("health", "crowded");
    place(&all_fixtures()[0], &root.join("t"));
    for d in 0..100 {
        let dir = root.join(format!("logs/d{d:03}"));
        fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            fs::write(dir.join(format!("part-{f:03}.json")), "{}").unwrap();
        }
    }
    let options = DiscoverOptions {
        max_objects: 2_000,
        health: false,
        ..DiscoverOptions::default()
    };
    let found = discover(Arc::new(LocalStorage::new(&root)), &options)
        .await
        .unwrap();
    assert!(found.truncated);
    assert!(
        found.objects_seen <= 2_000 + 100 * 100,
        "{}",
        found.objects_seen
    );
    assert!(
        found.limits.iter().any(|l| l.contains("object limit")),
        "{:?}",
        found.limits
    );
    assert_eq!(
        found.tables.len(),
        1,
        "the table beside them is found first"
    );

    let few_listings = DiscoverOptions {
        max_listings: 10,
        health: false,
        ..DiscoverOptions::default()
    };
    let found = discover(Arc::new(LocalStorage::new(&root)), &few_listings)
        .await
        .unwrap();
    assert!(
        found.truncated && found.listings <= 10,
        "{}",
        found.listings
    );
    assert!(
        found.limits.iter().any(|l| l.contains("listing limit")),
        "{:?}",
        found.limits
    );
}

/// A CLI run that succeeded: its stdout and stderr.
fn cli_run(args: &[&str]) -> std::process::Output {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hudi-edge"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hudi-edge {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn cli(args: &[&str]) -> Value {
    serde_json::from_slice(&cli_run(args).stdout).unwrap()
}

/// The fields scripts may rely on, with the numbers the Table API gives.
#[tokio::test]
async fn the_cli_prints_the_report_and_fixes_the_table() {
    let dir = fresh_dir("health", "cli");
    create_events(&dir, TableType::MergeOnRead, &[]).await;
    for round in 0..6 {
        let rows: Vec<_> = (0..6).map(|i| row(i, round)).collect();
        write_with(&dir, &rows, Operation::Upsert, NO_SERVICES).await;
    }
    let path = dir.to_str().unwrap();
    let printed = cli(&["health", path, "--json"]);
    let api = serde_json::to_value(report(&dir, &[]).await).unwrap();
    for field in [
        "file_groups",
        "base_files",
        "small_base_files",
        "log_files",
        "max_log_files_per_slice",
        "pending_instants",
        "failed_writes",
        "active_timeline_instants",
    ] {
        assert_eq!(printed[field], api[field], "{field}");
    }
    for field in ["partitions", "lag_instants"] {
        assert_eq!(
            printed["metadata_table"][field], api["metadata_table"][field],
            "metadata_table.{field}"
        );
    }
    let found: Vec<&str> = printed["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            for key in ["code", "severity", "message", "evidence", "fix"] {
                assert!(!f[key].is_null(), "finding without {key}: {f}");
            }
            f["code"].as_str().unwrap()
        })
        .collect();
    assert!(found.contains(&"COMPACTION_BACKLOG"), "{found:?}");

    let fixed = cli(&["health", path, "--fix", "--json"]);
    assert!(fixed["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["service"] == "compact" && f["ok"] == true));
    let after: Vec<&Value> = fixed["after"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert!(
        after.iter().all(|f| f["code"] != "COMPACTION_BACKLOG"),
        "{after:?}"
    );
    assert_eq!(fixed["after"]["log_files"], 0);

    let listed = cli(&["tables", dir.parent().unwrap().to_str().unwrap(), "--json"]);
    let rows = listed["tables"].as_array().unwrap();
    let ours = rows.iter().find(|t| t["path"] == "cli").expect("the table");
    assert_eq!(ours["name"], "events");
    assert_eq!(ours["table_type"], "MERGE_ON_READ");
}

/// What a report costs, by purpose, on a v9 Merge-On-Read fixture with a metadata table
/// (3 partitions; 6 metadata-table partitions; 2 replace commits), its clock an hour after
/// the last write so that write activity reads the week's commit metadata: each timeline is
/// listed once, and no data block, footer or metadata-table block is read.
#[tokio::test]
async fn the_report_lists_each_timeline_once_and_reads_no_data_block() {
    let dir = common::table_path("sample_table/mor/avro/v9_txns_simple_meta");
    let table = open(&dir).await;
    let timeline = table.timeline();
    let latest = timeline.instants.last().expect("instants");
    let at =
        hudi_edge::timeline::time::instant_millis(&latest.requested_time, table.config().timezone)
            .expect("an instant time")
            + 3_600_000;
    let h = table.health(&BTreeMap::new(), at).await.unwrap();
    let by_purpose: BTreeMap<&str, u64> =
        h.io.by_purpose
            .iter()
            .map(|(p, io)| (p.as_str(), io.requests))
            .collect();
    let writes = timeline
        .instants
        .iter()
        .filter(|i| i.is_completed() && i.is_write())
        .count() as u64;
    assert_eq!(h.activity.commits_read as u64, writes);
    // Listings: the data files (everything past `.hoodie/` at once: hive-style partitions),
    // heartbeats, the LSM history, the metadata table's timeline, its root and its 6
    // partitions. The data timeline was listed by the open; the archiver plans on both
    // timelines as listed.
    // Commit metadata: each completed write once (the replace commits' shared with activity);
    // the metadata table's properties; the lock object (other).
    let expected = BTreeMap::from([
        ("listing", 1 + 1 + 1 + 1 + 1 + 6),
        ("commit_metadata", writes),
        ("properties", 1),
        ("other", 1),
    ]);
    assert_eq!(by_purpose, expected, "{:?}", h.io.by_purpose);
    assert_eq!(h.io.requests, expected.values().sum::<u64>());

    // The CLI's `--stats`: the report's requests, and with the open's (properties, timeline).
    let out = cli_run(&["health", dir.to_str().unwrap(), "--json", "--stats"]);
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stats: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(stats["health_io"], printed["io"]);
    let (report, total) = (&stats["health_io"], &stats["total_io"]);
    assert_eq!(
        total["requests"],
        report["requests"].as_u64().unwrap() + 2,
        "{stats}"
    );
    for purpose in [
        "footer",
        "column_chunk",
        "log_block",
        "mdt_data_block",
        "mdt_index_block",
    ] {
        assert!(total["by_purpose"][purpose].is_null(), "{purpose}: {stats}");
    }
}
