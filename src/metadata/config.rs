//! The metadata-table settings a table is created or written with (Java's
//! `HoodieMetadataConfig`, by its keys): which partitions to keep, which columns the
//! statistics cover, and how many file groups the record index starts with.

use std::collections::BTreeMap;

use super::init::Sizing;
use super::table::{COLUMN_STATS, FILES, PARTITION_STATS, RECORD_INDEX};
use crate::error::{HudiError, Result};

pub const ENABLE: &str = "hoodie.metadata.enable";
pub const COLUMN_STATS_ENABLE: &str = "hoodie.metadata.index.column.stats.enable";
pub const COLUMN_LIST: &str = "hoodie.metadata.index.column.stats.column.list";
pub const MAX_COLUMNS: &str = "hoodie.metadata.index.column.stats.max.columns.to.index";
pub const RECORD_INDEX_ENABLE: &str = "hoodie.metadata.record.index.enable";
pub const GLOBAL_RECORD_INDEX_ENABLE: &str = "hoodie.metadata.global.record.level.index.enable";
pub const PARTITIONED_RECORD_INDEX_ENABLE: &str = "hoodie.metadata.record.level.index.enable";
pub const RECORD_INDEX_MIN_GROUPS: &str = "hoodie.metadata.record.index.min.filegroup.count";
pub const RECORD_INDEX_MAX_GROUPS: &str = "hoodie.metadata.record.index.max.filegroup.count";
pub const BLOOM_ENABLE: &str = "hoodie.metadata.index.bloom.filter.enable";

/// (key, default, what it does): for the writer's settings list and its docs.
pub const SETTINGS: &[(&str, &str, &str)] = &[
    (ENABLE, "true", "keep a metadata table (`create` builds one; a write builds missing partitions only when its options name this or an index below)"),
    (COLUMN_STATS_ENABLE, "true", "keep `column_stats` (and `partition_stats` on a partitioned table)"),
    (COLUMN_LIST, "", "columns the statistics cover (comma-separated); default: the record key, partition path and commit time meta columns, then the data columns"),
    (MAX_COLUMNS, "32", "at most this many columns are covered when no list is given"),
    (RECORD_INDEX_ENABLE, "false", "keep `record_index` (also hoodie.metadata.global.record.level.index.enable)"),
    (RECORD_INDEX_MIN_GROUPS, "10", "file groups the record index starts with at least"),
    (RECORD_INDEX_MAX_GROUPS, "10000", "file groups the record index starts with at most"),
];

/// `options` with the settings that ask for `partitions` (files, column_stats,
/// partition_stats, record_index) and the metadata table on.
pub fn asking_for(
    partitions: &[String],
    options: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>> {
    let mut out = options.clone();
    out.entry(ENABLE.into()).or_insert_with(|| "true".into());
    for p in partitions {
        let key = match p.as_str() {
            FILES => ENABLE,
            COLUMN_STATS | PARTITION_STATS => COLUMN_STATS_ENABLE,
            RECORD_INDEX => RECORD_INDEX_ENABLE,
            other => {
                return Err(HudiError::unsupported(format!(
                    "building the metadata table's {other} partition (files, column_stats, \
                     partition_stats and record_index are built)"
                )))
            }
        };
        out.insert(key.into(), "true".into());
    }
    Ok(out)
}

/// Parsed metadata settings; `None` where the options do not say.
#[derive(Debug, Clone, Default)]
pub struct MetadataConfig {
    pub enable: Option<bool>,
    pub column_stats: Option<bool>,
    pub record_index: Option<bool>,
    pub column_list: Option<Vec<String>>,
    pub max_columns: usize,
    pub sizing: Sizing,
}

impl MetadataConfig {
    pub fn parse(options: &BTreeMap<String, String>) -> Result<MetadataConfig> {
        let own = |k: &str| crate::config::option_value(options, k);
        let flag = |k: &str| crate::config::option_flag(options, k);
        let count = |k: &str, default: usize| -> Result<usize> {
            own(k).map_or(Ok(default), |v| {
                v.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
                    HudiError::invalid(format!("{k}={v:?}: expected a positive number"))
                })
            })
        };
        for refused in [BLOOM_ENABLE, PARTITIONED_RECORD_INDEX_ENABLE] {
            if flag(refused)? == Some(true) {
                return Err(HudiError::unsupported(format!(
                    "{refused}=true (this engine keeps files, column_stats, partition_stats \
                     and the global record_index)"
                )));
            }
        }
        let record_index = match (
            flag(RECORD_INDEX_ENABLE)?,
            flag(GLOBAL_RECORD_INDEX_ENABLE)?,
        ) {
            (Some(a), Some(b)) => Some(a || b),
            (a, b) => a.or(b),
        };
        let mut sizing = Sizing::default();
        sizing.record_index_min = count(RECORD_INDEX_MIN_GROUPS, sizing.record_index_min)?;
        sizing.record_index_max = count(RECORD_INDEX_MAX_GROUPS, sizing.record_index_max)?;
        if sizing.record_index_min > sizing.record_index_max {
            return Err(HudiError::invalid(format!(
                "{RECORD_INDEX_MIN_GROUPS} ({}) is above {RECORD_INDEX_MAX_GROUPS} ({})",
                sizing.record_index_min, sizing.record_index_max
            )));
        }
        Ok(MetadataConfig {
            enable: flag(ENABLE)?,
            column_stats: flag(COLUMN_STATS_ENABLE)?,
            record_index,
            column_list: own(COLUMN_LIST).map(|v| {
                v.split(',')
                    .map(|c| c.trim().to_string())
                    .filter(|c| !c.is_empty())
                    .collect()
            }),
            max_columns: count(MAX_COLUMNS, 32)?,
            sizing,
        })
    }

    /// Whether the options ask for a metadata table (a write builds what is missing only
    /// then: an initialisation reads every file of the table).
    pub fn asked(&self) -> bool {
        self.enable == Some(true)
            || self.column_stats == Some(true)
            || self.record_index == Some(true)
    }

    /// The partitions a table with these settings keeps, in the order Java builds them
    /// (Spark's defaults: `files`, `column_stats`, and `partition_stats` when partitioned).
    pub fn partitions(&self, partitioned: bool) -> Vec<&'static str> {
        if self.enable == Some(false) {
            return Vec::new();
        }
        let stats = self.column_stats != Some(false);
        let mut out = vec![FILES];
        if stats {
            out.push(COLUMN_STATS);
        }
        if self.record_index == Some(true) {
            out.push(RECORD_INDEX);
        }
        if stats && partitioned {
            out.push(PARTITION_STATS);
        }
        out
    }

    /// The columns the statistics cover, from the table's columns (`meta` first, then
    /// `data`, both of primitive types): the configured list, else the first
    /// `max_columns`.
    pub fn indexed_columns(&self, meta: &[&str], data: &[String]) -> Result<Vec<String>> {
        if let Some(list) = &self.column_list {
            if let Some(unknown) = list
                .iter()
                .find(|c| !data.contains(c) && !meta.contains(&c.as_str()))
            {
                return Err(HudiError::invalid(format!(
                    "{COLUMN_LIST} names {unknown:?}, not a column of the table"
                )));
            }
            return Ok(list.clone());
        }
        Ok(meta
            .iter()
            .map(|m| m.to_string())
            .chain(data.iter().cloned())
            .take(self.max_columns)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<MetadataConfig> {
        MetadataConfig::parse(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn defaults_are_sparks() {
        let c = parse(&[]).unwrap();
        assert!(!c.asked());
        assert_eq!(c.partitions(true), [FILES, COLUMN_STATS, PARTITION_STATS]);
        assert_eq!(c.partitions(false), [FILES, COLUMN_STATS]);
        let rli = parse(&[(GLOBAL_RECORD_INDEX_ENABLE, "true")]).unwrap();
        assert!(rli.asked());
        assert_eq!(
            rli.partitions(true),
            [FILES, COLUMN_STATS, RECORD_INDEX, PARTITION_STATS]
        );
        let off = parse(&[(ENABLE, "false")]).unwrap();
        assert!(off.partitions(true).is_empty());
        let files_only = parse(&[(ENABLE, "true"), (COLUMN_STATS_ENABLE, "false")]).unwrap();
        assert_eq!(files_only.partitions(true), [FILES]);
    }

    #[test]
    fn bad_and_unsupported_settings_are_refused() {
        assert_eq!(
            parse(&[(ENABLE, "yes")]).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
        assert_eq!(
            parse(&[(BLOOM_ENABLE, "true")]).unwrap_err().code(),
            "UNSUPPORTED"
        );
        assert_eq!(
            parse(&[
                (RECORD_INDEX_MIN_GROUPS, "20"),
                (RECORD_INDEX_MAX_GROUPS, "5")
            ])
            .unwrap_err()
            .code(),
            "INVALID_ARGUMENT"
        );
    }

    #[test]
    fn indexed_columns_put_meta_columns_first() {
        let data: Vec<String> = ["id", "ts"].map(String::from).to_vec();
        let c = parse(&[(MAX_COLUMNS, "3")]).unwrap();
        assert_eq!(
            c.indexed_columns(&["_hoodie_commit_time", "_hoodie_record_key"], &data)
                .unwrap(),
            ["_hoodie_commit_time", "_hoodie_record_key", "id"]
        );
        let listed = parse(&[(COLUMN_LIST, "ts, nope")]).unwrap();
        assert!(listed.indexed_columns(&[], &data).is_err());
    }
}
