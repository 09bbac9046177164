//! Clustering plans (`HoodieClusteringPlan` inside `HoodieRequestedReplaceMetadata`,
//! docs/hudi-format.md §3.5) as table version 8+ keeps them: groups of file slices to
//! rewrite into new file groups, written to `<t>.clustering.requested` by whoever schedules
//! and executed from there by whoever runs it, ours or Java's. Pure: plans to and from the
//! JSON the Avro codec takes, and the completed replace commit's metadata.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use super::compaction::{metrics, slice_info, Operation};
use crate::error::{HudiError, Result};
use crate::timeline::metadata::{OrderedMap, RuntimeStats};
use crate::timeline::{CommitMetadata, WriteStat};

/// The execution strategy Spark's plans name (sort by the plan's columns, files by size).
pub const EXECUTION_STRATEGY: &str =
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy";
/// The plan parameter naming the sort columns (comma-separated).
pub const SORT_COLUMNS: &str = "hoodie.clustering.plan.strategy.sort.columns";
/// `HoodieClusteringPlan.version` (and its groups' and strategy's) Hudi 1.1 writes.
const PLAN_VERSION: i32 = 1;

/// One clustering group: slices of one partition rewritten together into
/// `output_file_groups` new file groups.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub slices: Vec<Operation>,
    pub output_file_groups: usize,
}

impl Group {
    pub fn partition(&self) -> &str {
        self.slices.first().map_or("", |s| s.partition.as_str())
    }
}

/// A clustering plan.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusteringPlan {
    pub groups: Vec<Group>,
    /// Columns the rows are sorted by, from the strategy's parameters.
    pub sort_columns: Vec<String>,
    /// Keep each record's `_hoodie_commit_time` and `_hoodie_commit_seqno` (Java's default).
    pub preserve_hoodie_metadata: bool,
}

/// `<t>.clustering.requested` as the JSON the Avro encoder takes, as Spark 1.1 writes it:
/// files named by absolute path (`absolute` turns a path relative to the table into one),
/// no base file an empty string, the size-based strategy's execution class and its sort
/// columns among the parameters.
pub fn requested_json(
    plan: &ClusteringPlan,
    max_file_size: u64,
    absolute: &dyn Fn(&str) -> String,
) -> Json {
    let path = |partition: &str, name: &str| absolute(&crate::storage::join(partition, name));
    let groups: Vec<Json> = (plan.groups.iter())
        .map(|g| {
            let slices: Vec<Json> = (g.slices.iter())
                .map(|s| {
                    json!({
                        "dataFilePath": s.base_file.as_ref().map_or(String::new(), |(n, _)| path(&s.partition, n)),
                        "deltaFilePaths": s.log_files.iter().map(|(n, _)| path(&s.partition, n)).collect::<Vec<_>>(),
                        "fileId": s.file_id,
                        "partitionPath": s.partition,
                        "bootstrapFilePath": "",
                        "version": PLAN_VERSION,
                    })
                })
                .collect();
            json!({
                "slices": slices,
                "metrics": metrics(&g.slices, max_file_size),
                "numOutputFileGroups": g.output_file_groups as i32,
                "extraMetadata": null,
                "version": PLAN_VERSION,
            })
        })
        .collect();
    let mut params = serde_json::Map::new();
    if !plan.sort_columns.is_empty() {
        params.insert(SORT_COLUMNS.into(), json!(plan.sort_columns.join(",")));
    }
    json!({
        "operationType": "CLUSTER",
        "clusteringPlan": {
            "inputGroups": groups,
            "strategy": {
                "strategyClassName": EXECUTION_STRATEGY,
                "strategyParams": params,
                "version": PLAN_VERSION,
            },
            "extraMetadata": {},
            "version": PLAN_VERSION,
            "preserveHoodieMetadata": plan.preserve_hoodie_metadata,
            "missingSchedulePartitions": [],
        },
        "extraMetadata": {},
        "version": PLAN_VERSION,
    })
}

/// The plan of a decoded `.clustering.requested` (or a version 6 `.replacecommit.requested`),
/// files by name with sizes 0 (the caller finds them among the latest slices).
pub fn parse_requested(requested: &Json, origin: &str) -> Result<ClusteringPlan> {
    let bad = |why: &str| HudiError::corrupt(origin, format!("clustering plan: {why}"));
    let plan = requested
        .get("clusteringPlan")
        .filter(|p| !p.is_null())
        .ok_or_else(|| bad("no clusteringPlan (an insert overwrite, not a clustering)"))?;
    let array = |v: Option<&Json>, what: &str| -> Result<Vec<Json>> {
        match v {
            Some(Json::Array(a)) => Ok(a.clone()),
            Some(Json::Null) | None => Ok(Vec::new()),
            Some(_) => Err(bad(&format!("{what} is not an array"))),
        }
    };
    let mut groups = Vec::new();
    for g in array(plan.get("inputGroups"), "inputGroups")? {
        let slices = array(g.get("slices"), "slices")?
            .iter()
            .map(|s| slice_info(s, origin, "clustering plan", "clustering").map(|(op, _)| op))
            .collect::<Result<Vec<_>>>()?;
        if slices.is_empty() {
            continue;
        }
        if slices.iter().any(|s| s.partition != slices[0].partition) {
            return Err(bad("a group spans partitions"));
        }
        let outputs = g
            .get("numOutputFileGroups")
            .and_then(Json::as_i64)
            .unwrap_or(1);
        groups.push(Group {
            slices,
            output_file_groups: outputs.max(1) as usize,
        });
    }
    let sort_columns = plan
        .pointer("/strategy/strategyParams")
        .and_then(|p| p.get(SORT_COLUMNS))
        .and_then(Json::as_str)
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(ClusteringPlan {
        groups,
        sort_columns,
        // Absent in older plans: Java then keeps the metadata too.
        preserve_hoodie_metadata: plan
            .get("preserveHoodieMetadata")
            .and_then(Json::as_bool)
            .unwrap_or(true),
    })
}

/// The write stat of one new file group, in the shape of Spark 1.1's clustering stats (a
/// create: every record an insert, nothing compacted).
pub fn write_stat(
    partition: &str,
    file_id: &str,
    path: &str,
    records: u64,
    bytes: u64,
    create_ms: i64,
) -> WriteStat {
    let n = |x: u64| Some(x as i64);
    WriteStat {
        file_id: Some(file_id.to_string()),
        path: Some(path.to_string()),
        prev_commit: Some("null".into()),
        num_writes: n(records),
        num_deletes: Some(0),
        num_update_writes: Some(0),
        num_inserts: n(records),
        total_write_bytes: n(bytes),
        total_write_errors: Some(0),
        partition_path: Some(partition.to_string()),
        total_log_records: Some(0),
        total_updated_records_compacted: Some(0),
        total_log_blocks: Some(0),
        total_corrupt_log_block: Some(0),
        total_rollback_blocks: Some(0),
        file_size_in_bytes: n(bytes),
        runtime_stats: Some(RuntimeStats {
            total_scan_time: Some(0),
            total_create_time: Some(create_ms),
            total_upsert_time: Some(0),
        }),
        total_log_files_compacted: Some(0),
        total_log_read_time_ms: Some(0),
        total_log_size_compacted: Some(0),
        num_updates: Some(0),
        ..WriteStat::default()
    }
}

/// A completed clustering's `HoodieReplaceCommitMetadata`: write stats and replaced file
/// groups by partition, each in the order given (the caller orders partitions as Java's
/// `HashMap` does), the schema, `operationType: CLUSTER`.
pub fn commit_metadata(
    stats: Vec<(String, Vec<WriteStat>)>,
    replaced: &BTreeMap<String, Vec<String>>,
    order: &[String],
    schema: &str,
) -> CommitMetadata {
    let mut written: OrderedMap<Option<Vec<WriteStat>>> = OrderedMap::new();
    for (partition, s) in stats {
        written.insert(partition, Some(s));
    }
    let mut replace: OrderedMap<Option<Vec<String>>> = OrderedMap::new();
    for p in order {
        if let Some(ids) = replaced.get(p) {
            replace.insert(p.clone(), Some(ids.clone()));
        }
    }
    CommitMetadata {
        partition_to_write_stats: Some(written),
        compacted: Some(false),
        extra_metadata: Some(OrderedMap::from([(
            "schema".to_string(),
            Some(schema.to_string()),
        )])),
        operation_type: Some("CLUSTER".into()),
        partition_to_replace_file_ids: Some(replace),
        ..CommitMetadata::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(partition: &str, id: &str, base: Option<&str>, logs: &[&str]) -> Operation {
        Operation {
            partition: partition.into(),
            file_id: id.into(),
            base_instant: "100".into(),
            base_file: base.map(|b| (b.to_string(), 10)),
            log_files: logs.iter().map(|l| (l.to_string(), 5)).collect(),
        }
    }

    #[test]
    fn round_trips_as_spark_writes_it() {
        let plan = ClusteringPlan {
            groups: vec![Group {
                slices: vec![
                    op("p=1", "a-0", Some("a-0_0-0-0_100.parquet"), &[]),
                    op("p=1", "b-0", None, &[".b-0_100.log.1_0-0-0"]),
                ],
                output_file_groups: 1,
            }],
            sort_columns: vec!["x".into(), "y".into()],
            preserve_hoodie_metadata: true,
        };
        let abs = |p: &str| format!("/base/{p}");
        let json = requested_json(&plan, 120 << 20, &abs);
        let g = &json["clusteringPlan"]["inputGroups"][0];
        assert_eq!(
            g["slices"][0]["dataFilePath"],
            "/base/p=1/a-0_0-0-0_100.parquet"
        );
        assert_eq!(g["slices"][1]["dataFilePath"], "");
        assert_eq!(
            g["slices"][1]["deltaFilePaths"][0],
            "/base/p=1/.b-0_100.log.1_0-0-0"
        );
        // A slice without a base file is costed as a whole file written.
        assert_eq!(g["metrics"]["TOTAL_IO_WRITE_MB"], 120.0);
        assert_eq!(
            json["clusteringPlan"]["strategy"]["strategyParams"][SORT_COLUMNS],
            "x,y"
        );
        let back = parse_requested(&json, "t").unwrap();
        assert_eq!(back.sort_columns, plan.sort_columns);
        assert_eq!(
            back.groups[0].slices[0].base_file,
            Some(("a-0_0-0-0_100.parquet".into(), 0))
        );
        assert_eq!(back.groups[0].slices[1].base_instant, "100");
        assert_eq!(
            crate::file_group::compaction::planned_file_groups(&json),
            vec![("p=1".into(), "a-0".into()), ("p=1".into(), "b-0".into())]
        );
        let overwrite = json!({"operationType": "INSERT_OVERWRITE", "clusteringPlan": null});
        assert!(parse_requested(&overwrite, "t").is_err());
    }
}
