//! Compaction plans (`HoodieCompactionPlan`, docs/hudi-format.md §3.6) as both tables keep
//! them: one operation per file slice to merge into a new base file, written to
//! `<t>.compaction.requested` by whoever schedules and executed from there by whoever runs
//! it (the data table's and the metadata table's compactions, ours or Java's). Pure: plans
//! to and from the JSON the Avro codec takes.

use serde_json::{json, Map, Value as Json};

use super::{BaseFile, FileSlice, LogFile};
use crate::error::{HudiError, Result};
use crate::timeline::metadata::OrderedMap;
use crate::timeline::{CommitMetadata, WriteStat};

/// `HoodieCompactionPlan.version` Hudi 1.x writes.
pub const PLAN_VERSION: i32 = 2;

/// One file slice to compact.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub partition: String,
    pub file_id: String,
    /// The slice's base instant (its base file's, else its first log file's).
    pub base_instant: String,
    /// (name, size).
    pub base_file: Option<(String, u64)>,
    pub log_files: Vec<(String, u64)>,
}

impl Operation {
    pub fn of(slice: &FileSlice) -> Operation {
        Operation {
            partition: slice.partition.clone(),
            file_id: slice.file_id.clone(),
            base_instant: slice.base_instant.clone(),
            base_file: slice.base_file.as_ref().map(|b| (b.name.clone(), b.size)),
            log_files: slice
                .log_files
                .iter()
                .map(|l| (l.name.clone(), l.size))
                .collect(),
        }
    }

    /// The slice to read (sizes known, so reads are ranged); `origin` names the table's
    /// root in errors.
    pub fn slice(&self, origin: &str) -> Result<FileSlice> {
        let bad = |n: &str| {
            HudiError::corrupt(
                crate::storage::join(origin, &self.partition),
                format!(
                    "compaction plan names {n:?}, not a file of {}",
                    self.file_id
                ),
            )
        };
        let base_file = match &self.base_file {
            Some((n, size)) => Some(BaseFile::parse(n, *size).ok_or_else(|| bad(n))?),
            None => None,
        };
        let log_files = self
            .log_files
            .iter()
            .map(|(n, size)| LogFile::parse(n, *size).ok_or_else(|| bad(n)))
            .collect::<Result<Vec<_>>>()?;
        Ok(FileSlice {
            partition: self.partition.clone(),
            file_id: self.file_id.clone(),
            base_instant: self.base_instant.clone(),
            base_file,
            log_files,
        })
    }

    pub fn log_bytes(&self) -> u64 {
        self.log_files.iter().map(|(_, s)| s).sum()
    }

    /// Java's `CompactionStrategy.captureMetrics`: whole MiB read (base and logs) and
    /// written (the base file's size, else `max_file_size`).
    pub fn io_mb(&self, max_file_size: u64) -> (u64, u64) {
        let mb = |b: u64| b / (1024 * 1024);
        let base = self.base_file.as_ref().map(|(_, s)| *s);
        (
            mb(base.unwrap_or(0) + self.log_bytes()),
            mb(base.unwrap_or(max_file_size)),
        )
    }
}

/// `HoodieCompactionPlan` (version 2) as the JSON the Avro encoder takes, as Hudi 1.1
/// writes it: no strategy, `preserveHoodieMetadata` false, empty extra metadata and missing
/// partitions; `max_file_size` estimates the write of a slice without a base file.
pub fn plan_json(ops: &[Operation], max_file_size: u64) -> Json {
    let operations: Vec<Json> = ops
        .iter()
        .map(|op| {
            let metrics = metrics(std::slice::from_ref(op), max_file_size);
            json!({
                "baseInstantTime": op.base_instant,
                "deltaFilePaths": op.log_files.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
                "dataFilePath": op.base_file.as_ref().map(|(n, _)| n.clone()),
                "fileId": op.file_id,
                "partitionPath": op.partition,
                "metrics": metrics,
                "bootstrapFilePath": null,
            })
        })
        .collect();
    json!({
        "operations": operations,
        "extraMetadata": {},
        "version": PLAN_VERSION,
        "strategy": null,
        "preserveHoodieMetadata": false,
        "missingSchedulePartitions": [],
    })
}

/// Java's file-slice metrics (`FileSliceMetricUtils`) of the slices `ops` name together:
/// log files and their bytes, whole MiB read and written (per slice, summed).
pub fn metrics(ops: &[Operation], max_file_size: u64) -> Json {
    let (read, write) = ops.iter().fold((0, 0), |(r, w), op| {
        let (read, write) = op.io_mb(max_file_size);
        (r + read, w + write)
    });
    let logs: usize = ops.iter().map(|op| op.log_files.len()).sum();
    let log_bytes: u64 = ops.iter().map(Operation::log_bytes).sum();
    // The keys in the order Java's `HashMap` iterates them (compared byte for byte with
    // Spark's plans in the tests).
    let mut metrics = Map::new();
    for (k, v) in [
        ("TOTAL_LOG_FILES", logs as f64),
        ("TOTAL_IO_MB", (read + write) as f64),
        ("TOTAL_IO_READ_MB", read as f64),
        ("TOTAL_LOG_FILES_SIZE", log_bytes as f64),
        ("TOTAL_IO_WRITE_MB", write as f64),
    ] {
        metrics.insert(k.to_string(), json!(v));
    }
    Json::Object(metrics)
}

/// The operations of a decoded plan, with file names only (sizes 0: the caller adds them),
/// and the names each one needs.
pub fn plan_operations(plan: &Json, origin: &str) -> Result<Vec<(Operation, Vec<String>)>> {
    let ops = match plan.get("operations") {
        Some(Json::Array(a)) => a.as_slice(),
        Some(Json::Null) | None => &[],
        Some(_) => {
            return Err(HudiError::corrupt(
                origin,
                "compaction plan: operations is not an array",
            ))
        }
    };
    ops.iter()
        .map(|op| slice_info(op, origin, "compaction plan", "compacting"))
        .collect()
}

/// One planned file slice as compaction operations and clustering slices (`HoodieSliceInfo`)
/// name it, by file names (paths cut to names, sizes 0), and the names it needs. `doing`
/// names the service in errors. Clustering slices say "no file" with an empty string and
/// carry no base instant: it is taken from the file names.
pub(crate) fn slice_info(
    op: &Json,
    origin: &str,
    what: &str,
    doing: &str,
) -> Result<(Operation, Vec<String>)> {
    let bad = |why: &str| HudiError::corrupt(origin, format!("{what}: {why}"));
    let str_of = |k: &str| {
        op.get(k)
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let name_of = |p: &str| p.rsplit('/').next().unwrap_or(p).to_string();
    let file_id = str_of("fileId").ok_or_else(|| bad("a slice without fileId"))?;
    let partition = match op.get("partitionPath") {
        Some(Json::String(p)) => p.clone(),
        _ => return Err(bad("a slice without partitionPath")),
    };
    if str_of("bootstrapFilePath").is_some() {
        return Err(HudiError::unsupported_in(
            format!("{doing} a bootstrapped file group"),
            origin,
        ));
    }
    // Java writes compaction logs as bare names, clustering files as paths.
    let logs: Vec<String> = match op.get("deltaFilePaths") {
        Some(Json::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(name_of)
                    .ok_or_else(|| bad("a log path not a string"))
            })
            .collect::<Result<_>>()?,
        Some(Json::Null) | None => Vec::new(),
        Some(_) => return Err(bad("deltaFilePaths is not an array")),
    };
    let base = str_of("dataFilePath").map(|p| name_of(&p));
    let base_instant = str_of("baseInstantTime")
        .or_else(|| (base.as_deref()).and_then(|n| BaseFile::parse(n, 0).map(|b| b.instant)))
        .or_else(|| (logs.first()).and_then(|n| LogFile::parse(n, 0).map(|l| l.instant)))
        .unwrap_or_default();
    let mut names = logs.clone();
    names.extend(base.clone());
    Ok((
        Operation {
            partition,
            file_id,
            base_instant,
            base_file: base.map(|n| (n, 0)),
            log_files: logs.into_iter().map(|n| (n, 0)).collect(),
        },
        names,
    ))
}

/// File groups (partition, file id) a pending table-service plan works on: compaction and
/// log-compaction operations, clustering input groups. Plans without any name none.
pub fn planned_file_groups(plan: &Json) -> Vec<(String, String)> {
    let of = |v: &Json| {
        let s = |k: &str| v.get(k).and_then(Json::as_str).unwrap_or("").to_string();
        (s("partitionPath"), s("fileId"))
    };
    let compaction = plan
        .get("operations")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(of);
    let clustering = plan
        .pointer("/clusteringPlan/inputGroups")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .flat_map(|g| {
            g.get("slices")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
        })
        .map(of);
    compaction.chain(clustering).collect()
}

/// What compacting one file group read and wrote: the numbers of its write stat.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatCounts {
    pub written: u64,
    /// Base records a log version replaced, base records a log delete removed, records only
    /// the logs held.
    pub updates: u64,
    pub deletes: u64,
    pub inserts: u64,
    /// Log records and deletes read, blocks read, corrupt and rolled-back blocks skipped.
    pub log_records: u64,
    pub log_blocks: u64,
    pub corrupt_blocks: u64,
    pub rollback_blocks: u64,
    /// Java's `totalUpdatedRecordsCompacted`.
    pub records_compacted: u64,
    pub bytes: u64,
    pub read_ms: i64,
    pub total_ms: i64,
}

/// The write stat of one compacted file group (new base file at `path`), in the shape of
/// Java's compaction write stats (docs/hudi-format.md §3.6).
pub fn write_stat(op: &Operation, path: &str, c: &StatCounts) -> WriteStat {
    let i = |n: u64| Some(n as i64);
    WriteStat {
        file_id: Some(op.file_id.clone()),
        path: Some(path.to_string()),
        prev_commit: Some(match &op.base_file {
            Some(_) => op.base_instant.clone(),
            None => "null".into(),
        }),
        num_writes: i(c.written),
        num_deletes: i(c.deletes),
        num_update_writes: i(c.updates),
        num_inserts: i(c.inserts),
        total_write_bytes: i(c.bytes),
        total_write_errors: Some(0),
        partition_path: Some(op.partition.clone()),
        total_log_records: i(c.log_records),
        total_updated_records_compacted: i(c.records_compacted),
        total_log_blocks: i(c.log_blocks),
        total_corrupt_log_block: i(c.corrupt_blocks),
        total_rollback_blocks: i(c.rollback_blocks),
        file_size_in_bytes: i(c.bytes),
        prev_base_file: op.base_file.as_ref().map(|(n, _)| n.clone()),
        runtime_stats: Some(crate::timeline::metadata::RuntimeStats {
            total_scan_time: Some(c.read_ms),
            total_create_time: Some(0),
            total_upsert_time: Some(c.total_ms),
        }),
        total_log_files_compacted: Some(op.log_files.len() as i64),
        total_log_read_time_ms: Some(c.read_ms),
        total_log_size_compacted: i(op.log_bytes()),
        num_updates: Some(0),
        ..WriteStat::default()
    }
}

/// A completed compaction's metadata: the write stats by partition in the order given,
/// `compacted`, the schema the base files were written with, `operationType: COMPACT`.
pub fn commit_metadata(stats: Vec<(String, Vec<WriteStat>)>, schema: &str) -> CommitMetadata {
    let mut ordered: OrderedMap<Option<Vec<WriteStat>>> = OrderedMap::new();
    for (partition, s) in stats {
        ordered.insert(partition, Some(s));
    }
    CommitMetadata {
        partition_to_write_stats: Some(ordered),
        compacted: Some(true),
        extra_metadata: Some(OrderedMap::from([(
            "schema".to_string(),
            Some(schema.to_string()),
        )])),
        operation_type: Some("COMPACT".into()),
        ..CommitMetadata::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_in_whole_mib() {
        let op = Operation {
            partition: "p".into(),
            file_id: "f-0".into(),
            base_instant: "1".into(),
            base_file: Some(("f-0_0-0-0_1.parquet".into(), 3 << 20)),
            log_files: vec![(".f-0_2.log.1_0-0-0".into(), (1 << 20) + 5)],
        };
        assert_eq!(op.io_mb(120 << 20), (4, 3));
        let plan = plan_json(std::slice::from_ref(&op), 120 << 20);
        let m = &plan["operations"][0]["metrics"];
        let keys: Vec<&String> = m.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "TOTAL_LOG_FILES",
                "TOTAL_IO_MB",
                "TOTAL_IO_READ_MB",
                "TOTAL_LOG_FILES_SIZE",
                "TOTAL_IO_WRITE_MB"
            ]
        );
        assert_eq!(m["TOTAL_IO_MB"], 7.0);
        assert_eq!(m["TOTAL_LOG_FILES_SIZE"], ((1 << 20) + 5) as f64);
        let back = plan_operations(&plan, "p").unwrap();
        assert_eq!(
            back[0].1,
            vec![op.log_files[0].0.clone(), op.base_file.clone().unwrap().0]
        );
        assert_eq!(planned_file_groups(&plan), vec![("p".into(), "f-0".into())]);
        let no_base = Operation {
            base_file: None,
            ..op
        };
        assert_eq!(no_base.io_mb(120 << 20), (1, 120));
    }
}
