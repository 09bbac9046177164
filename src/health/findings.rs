//! What a health report's numbers mean: findings, each naming the table service (or the
//! setting) that fixes it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use super::Health;
use crate::config::TableConfig;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(target_arch = "wasm32", derive(tsify_next::Tsify))]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

/// One finding. `service` names the table service that fixes it where this engine runs
/// one (`compact`, `clean`, `archive`, `rollback`, `index`, `cluster`, `lock`): what
/// `health --fix` runs.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify_next::Tsify),
    serde(rename_all = "camelCase")
)]
pub struct Finding {
    pub code: String,
    pub severity: Severity,
    pub message: String,
    #[cfg_attr(target_arch = "wasm32", tsify(type = "Record<string, unknown>"))]
    pub evidence: BTreeMap<String, Value>,
    /// The service or setting that fixes it, in words.
    pub fix: String,
    pub service: Option<String>,
}

fn finding(
    code: &str,
    severity: Severity,
    message: String,
    evidence: Value,
    fix: &str,
    service: Option<&str>,
) -> Finding {
    let evidence = match evidence {
        Value::Object(m) => m.into_iter().collect(),
        _ => BTreeMap::new(),
    };
    Finding {
        code: code.into(),
        severity,
        message,
        evidence,
        fix: fix.into(),
        service: service.map(str::to_string),
    }
}

/// The findings of a report, most severe first.
pub(super) fn of(h: &Health, config: &TableConfig) -> Vec<Finding> {
    let mut out = Vec::new();
    let writable_version = matches!(config.version, 8 | 9);
    if let Some(c) = &h.compaction {
        if (c.due && h.slices_with_logs > 0) || !c.pending.is_empty() {
            let severity = if c.delta_commits_since_compaction >= 3 * c.max_delta_commits {
                Severity::Critical
            } else {
                Severity::Warning
            };
            out.push(finding(
                "COMPACTION_BACKLOG",
                severity,
                format!(
                    "{} delta commits since the last compaction, {} log files in {} file slices (at most {} in one), {} compaction plans pending",
                    c.delta_commits_since_compaction,
                    h.log_files,
                    h.slices_with_logs,
                    h.max_log_files_per_slice,
                    c.pending.len()
                ),
                json!({
                    "delta_commits_since_compaction": c.delta_commits_since_compaction,
                    "max_delta_commits": c.max_delta_commits,
                    "log_files": h.log_files,
                    "log_bytes": h.log_bytes,
                    "max_log_files_per_slice": h.max_log_files_per_slice,
                    "pending_compactions": c.pending.iter().map(|p| &p.requested_time).collect::<Vec<_>>(),
                }),
                "run compaction (hudi-edge compact); keep it running with hoodie.compact.inline=true and hoodie.compact.inline.max.delta.commits",
                Some("compact"),
            ));
        }
    }
    let busiest_small = h
        .partition_sizes
        .iter()
        .map(|p| p.small_base_files)
        .max()
        .unwrap_or(0);
    if busiest_small >= 2 {
        let severity = if h.small_base_share >= 0.5 && h.small_base_files >= 10 {
            Severity::Warning
        } else {
            Severity::Info
        };
        out.push(finding(
            "SMALL_FILES",
            severity,
            format!(
                "{} of {} base files are below hoodie.parquet.small.file.limit ({} bytes)",
                h.small_base_files, h.base_files, h.small_file_limit
            ),
            json!({
                "small_base_files": h.small_base_files,
                "base_files": h.base_files,
                "small_base_share": h.small_base_share,
                "small_file_limit": h.small_file_limit,
            }),
            "cluster the small file slices (hudi-edge cluster, hoodie.clustering.plan.strategy.small.file.limit); inserts fill small files up to hoodie.parquet.max.file.size",
            Some("cluster"),
        ));
    }
    if h.clean.pending || (h.clean.due && h.clean.files_beyond_retention > 0) {
        out.push(finding(
            "CLEAN_LAG",
            Severity::Warning,
            format!(
                "{} files ({} bytes) in {} file slices are older than the cleaner keeps ({}){}",
                h.clean.files_beyond_retention,
                h.clean.bytes_beyond_retention,
                h.clean.slices_beyond_retention,
                h.clean.policy,
                if h.clean.pending { "; a clean is pending" } else { "" }
            ),
            json!({
                "files_beyond_retention": h.clean.files_beyond_retention,
                "bytes_beyond_retention": h.clean.bytes_beyond_retention,
                "slices_beyond_retention": h.clean.slices_beyond_retention,
                "earliest_commit_to_retain": h.clean.earliest_commit_to_retain,
                "last_clean": h.clean.last_clean,
                "pending": h.clean.pending,
            }),
            "run the cleaner (hudi-edge clean); keep hoodie.clean.automatic=true, retention by hoodie.clean.commits.retained",
            Some("clean"),
        ));
    }
    let a = &h.archival;
    if a.instants_to_archive > 0 || a.metadata_table_instants_to_archive > 0 {
        let severity = if a.active_commits > 2 * a.keep_max_commits {
            Severity::Warning
        } else {
            Severity::Info
        };
        out.push(finding(
            "ARCHIVAL_LAG",
            severity,
            format!(
                "{} active commits against hoodie.keep.max.commits={}: {} instants (and {} of the metadata table) are due for archival",
                a.active_commits, a.keep_max_commits, a.instants_to_archive, a.metadata_table_instants_to_archive
            ),
            json!({
                "active_commits": a.active_commits,
                "keep_max_commits": a.keep_max_commits,
                "instants_to_archive": a.instants_to_archive,
                "metadata_table_instants_to_archive": a.metadata_table_instants_to_archive,
            }),
            "run archival (hudi-edge archive); hoodie.archive.automatic=true keeps it running after each write",
            Some("archive"),
        ));
    }
    if h.failed_writes > 0 {
        let failed: Vec<&str> = (h.pending_instants.iter())
            .filter(|p| p.failed)
            .map(|p| p.requested_time.as_str())
            .collect();
        out.push(finding(
            "FAILED_WRITES",
            Severity::Warning,
            format!(
                "{} writes were left pending by writers that are gone ({})",
                h.failed_writes,
                failed.join(", ")
            ),
            json!({ "failed_writes": h.failed_writes, "instants": failed }),
            "roll them back (the next write does, under hoodie.cleaner.policy.failed.writes=EAGER; or hudi-edge health --fix)",
            Some("rollback"),
        ));
    }
    if let Some(lock) = &h.lock {
        if lock.stale {
            out.push(finding(
                "STALE_LOCK",
                Severity::Warning,
                format!(
                    "the storage lock of owner {} was never released and expired {} s ago",
                    lock.owner,
                    (h.now_ms - lock.valid_until_ms) / 1000
                ),
                json!({ "owner": lock.owner, "valid_until_ms": lock.valid_until_ms }),
                "the next writer takes it over after hoodie.write.lock.storage.validity.timeout.secs; hudi-edge health --fix takes and releases it",
                Some("lock"),
            ));
        } else if lock.live {
            out.push(finding(
                "LOCK_HELD",
                Severity::Info,
                format!("the storage lock is held by {}", lock.owner),
                json!({ "owner": lock.owner, "valid_until_ms": lock.valid_until_ms }),
                "nothing: a writer is at work (it renews the lock every hoodie.write.lock.storage.renew.interval.secs)",
                None,
            ));
        }
    }
    let m = &h.metadata_table;
    if m.lag_instants > 0 {
        out.push(finding(
            "MDT_LAG",
            Severity::Critical,
            format!(
                "the metadata table lacks {} completed instants of the data table (latest it has: {})",
                m.lag_instants,
                m.latest_instant.as_deref().unwrap_or("none")
            ),
            json!({ "lag_instants": m.lag_instants, "latest_instant": m.latest_instant }),
            "rebuild the metadata table: written with hoodie.metadata.enable=false, it went stale; delete .hoodie/metadata, drop hoodie.table.metadata.partitions, then hudi-edge index",
            None,
        ));
    }
    if !m.building.is_empty() {
        out.push(finding(
            "MDT_BUILDING",
            Severity::Warning,
            format!(
                "metadata-table partitions are being built ({}): writes wait for them",
                m.building.join(", ")
            ),
            json!({ "building": m.building }),
            "finish the build (hudi-edge index)",
            writable_version.then_some("index"),
        ));
    }
    if !m.missing.is_empty() {
        let severity = if m.missing.iter().any(|p| p == "files") {
            Severity::Warning
        } else {
            Severity::Info
        };
        out.push(finding(
            "MDT_MISSING",
            severity,
            format!(
                "metadata-table partitions configured but absent: {}",
                m.missing.join(", ")
            ),
            json!({ "configured": m.configured, "present": m.partitions, "missing": m.missing }),
            if writable_version {
                "build them (hudi-edge index; hoodie.metadata.enable, hoodie.metadata.index.column.stats.enable)"
            } else {
                "upgrade the table to version 8 or later, then build them (hudi-edge index)"
            },
            writable_version.then_some("index"),
        ));
    }
    if m.present && m.delta_commits_since_compaction > 2 * m.max_delta_commits {
        out.push(finding(
            "MDT_COMPACTION_BACKLOG",
            Severity::Info,
            format!(
                "{} metadata-table instants since its last compaction ({}={})",
                m.delta_commits_since_compaction,
                crate::write::config::MDT_MAX_DELTA_COMMITS,
                m.max_delta_commits
            ),
            json!({ "delta_commits_since_compaction": m.delta_commits_since_compaction }),
            "the next write compacts it (hoodie.metadata.compact.max.delta.commits)",
            None,
        ));
    }
    if h.partition_skew.is_some_and(|s| s >= 10.0) {
        out.push(finding(
            "PARTITION_SKEW",
            Severity::Info,
            format!(
                "the largest partition holds {:.1}× the median partition's bytes",
                h.partition_skew.unwrap_or(0.0)
            ),
            json!({ "partition_skew": h.partition_skew }),
            "choose partition fields that spread rows evenly (hoodie.datasource.write.partitionpath.field)",
            None,
        ));
    }
    out.sort_by_key(|f| std::cmp::Reverse(f.severity));
    out
}
