//! `hoodie.properties`: what kind of table this is and how to read it (Hudi's
//! `HoodieTableConfig`). Unknown or unsupported settings fail here, with the file named,
//! rather than deep inside a read.

pub mod layout;
pub mod properties;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::{HudiError, Result};

pub use layout::{PROPERTIES_BACKUP, PROPERTIES_FILE};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TableType {
    #[serde(rename = "COPY_ON_WRITE")]
    CopyOnWrite,
    #[serde(rename = "MERGE_ON_READ")]
    MergeOnRead,
}

impl TableType {
    pub fn as_str(&self) -> &'static str {
        match self {
            TableType::CopyOnWrite => "COPY_ON_WRITE",
            TableType::MergeOnRead => "MERGE_ON_READ",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum KeyGeneratorType {
    Simple,
    Complex,
    Timestamp,
    NonPartition,
    Custom,
    /// The metadata table's own key generator.
    HoodieTableMetadata,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MergeMode {
    EventTimeOrdering,
    CommitTimeOrdering,
    Custom,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BaseFileFormat {
    Parquet,
    Hfile,
}

/// Time zone instants were written in (`hoodie.table.timeline.timezone`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TimelineTimezone {
    Local,
    Utc,
}

#[derive(Debug, Clone, Serialize)]
pub struct TableConfig {
    pub name: String,
    pub database: Option<String>,
    pub table_type: TableType,
    pub version: u32,
    pub timeline_layout_version: u32,
    /// Directory of the active timeline, relative to the base path.
    pub timeline_dir: String,
    /// v8+: LSM history directory, relative to the base path.
    pub history_dir: String,
    /// v6: archived timeline directory, relative to the base path.
    pub archive_dir: String,
    pub record_key_fields: Vec<String>,
    pub partition_fields: Vec<String>,
    pub ordering_fields: Vec<String>,
    pub key_generator: KeyGeneratorType,
    pub hive_style_partitioning: bool,
    pub url_encode_partitions: bool,
    pub drop_partition_columns: bool,
    pub base_file_format: BaseFileFormat,
    pub populate_meta_fields: bool,
    pub merge_mode: MergeMode,
    pub payload_class: Option<String>,
    pub merge_strategy_id: Option<String>,
    pub metadata_partitions: Vec<String>,
    pub metadata_partitions_inflight: Vec<String>,
    pub timezone: TimelineTimezone,
    pub cdc_enabled: bool,
    pub properties: BTreeMap<String, String>,
}

const EVENT_TIME_STRATEGY: &str = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5";
const COMMIT_TIME_STRATEGY: &str = "ce9acb64-bde0-424c-9b91-f6ebba25356d";

fn list(v: Option<&String>) -> Vec<String> {
    v.map(|s| {
        s.split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

fn flag(props: &BTreeMap<String, String>, key: &str, default: bool) -> bool {
    props
        .get(key)
        .map(|v| v.trim().eq_ignore_ascii_case("true"))
        .unwrap_or(default)
}

impl TableConfig {
    /// Parses the text of `hoodie.properties`; `path` names the file in errors.
    pub fn parse(text: &str, path: &str) -> Result<TableConfig> {
        let props = properties::parse(text);
        let get = |k: &str| {
            props
                .get(k)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let required = |k: &str| {
            get(k).ok_or_else(|| HudiError::corrupt(path, format!("missing required key {k}")))
        };

        let name = required("hoodie.table.name")?;
        let version_text = required("hoodie.table.version")?;
        let version: u32 = version_text.parse().map_err(|_| {
            HudiError::corrupt(
                path,
                format!("hoodie.table.version is not a number: {version_text:?}"),
            )
        })?;
        if !(5..=9).contains(&version) {
            return Err(HudiError::unsupported_in(
                format!("table version {version} (supported: 6, 8 and 9; 5 and 7 read as 6)"),
                path,
            ));
        }
        let table_type = match required("hoodie.table.type")?.as_str() {
            "COPY_ON_WRITE" => TableType::CopyOnWrite,
            "MERGE_ON_READ" => TableType::MergeOnRead,
            other => {
                return Err(HudiError::corrupt(
                    path,
                    format!("unknown hoodie.table.type {other:?}"),
                ))
            }
        };
        let default_layout = if version >= 8 { 2 } else { 1 };
        let timeline_layout_version = match get("hoodie.timeline.layout.version") {
            None => default_layout,
            Some(v) => v.parse().map_err(|_| {
                HudiError::corrupt(path, format!("bad hoodie.timeline.layout.version {v:?}"))
            })?,
        };
        if !(1..=2).contains(&timeline_layout_version) {
            return Err(HudiError::unsupported_in(
                format!("timeline layout version {timeline_layout_version}"),
                path,
            ));
        }
        // Folders named by properties stay inside `.hoodie` (Java resolves them there).
        let in_hoodie = |rel: String| -> Result<String> {
            let p = crate::storage::path::within_table(&format!(".hoodie/{rel}"), path)?;
            if p == ".hoodie" || p.starts_with(".hoodie/") {
                Ok(p)
            } else {
                Err(HudiError::corrupt(
                    path,
                    format!("folder {rel:?} is outside .hoodie"),
                ))
            }
        };
        let timeline_dir = if timeline_layout_version >= 2 {
            in_hoodie(get("hoodie.timeline.path").unwrap_or_else(|| "timeline".into()))?
        } else {
            ".hoodie".to_string()
        };
        let history_dir = crate::storage::path::within_table(
            &format!(
                "{timeline_dir}/{}",
                get("hoodie.timeline.history.path").unwrap_or_else(|| "history".into())
            ),
            path,
        )?;
        if !history_dir.starts_with(".hoodie/") {
            return Err(HudiError::corrupt(
                path,
                "the timeline history folder is outside .hoodie",
            ));
        }
        let archive_dir =
            in_hoodie(get("hoodie.archivelog.folder").unwrap_or_else(|| "archived".into()))?;

        let base_file_format =
            match get("hoodie.table.base.file.format").map(|s| s.to_ascii_uppercase()) {
                None => BaseFileFormat::Parquet,
                Some(f) if f == "PARQUET" => BaseFileFormat::Parquet,
                Some(f) if f == "HFILE" => BaseFileFormat::Hfile,
                Some(other) => {
                    return Err(HudiError::unsupported_in(
                        format!("base file format {other} (only PARQUET is read)"),
                        path,
                    ))
                }
            };

        let key_generator = key_generator_type(&props, path)?;
        let partition_fields: Vec<String> = list(props.get("hoodie.table.partition.fields"))
            .into_iter()
            .map(|f| f.split(':').next().unwrap_or("").to_string())
            .collect();
        let ordering_fields = {
            let v9 = list(props.get("hoodie.table.ordering.fields"));
            if v9.is_empty() {
                list(props.get("hoodie.table.precombine.field"))
            } else {
                v9
            }
        };
        let payload_class = get("hoodie.compaction.payload.class")
            .or_else(|| get("hoodie.table.legacy.payload.class"));
        let merge_strategy_id = get("hoodie.record.merge.strategy.id")
            .or_else(|| get("hoodie.compaction.record.merger.strategy"));
        let merge_mode = infer_merge_mode(
            get("hoodie.record.merge.mode").as_deref(),
            payload_class.as_deref(),
            merge_strategy_id.as_deref(),
            !ordering_fields.is_empty(),
            version,
            path,
        )?;
        let timezone = match get("hoodie.table.timeline.timezone").map(|s| s.to_ascii_uppercase()) {
            Some(t) if t == "UTC" => TimelineTimezone::Utc,
            _ => TimelineTimezone::Local,
        };
        if get("hoodie.bootstrap.base.path").is_some() {
            return Err(HudiError::unsupported_in(
                "bootstrap tables (hoodie.bootstrap.base.path is set)",
                path,
            ));
        }

        let config = TableConfig {
            database: get("hoodie.database.name"),
            table_type,
            version,
            timeline_layout_version,
            timeline_dir,
            history_dir,
            archive_dir,
            record_key_fields: list(props.get("hoodie.table.recordkey.fields")),
            partition_fields,
            ordering_fields,
            key_generator,
            hive_style_partitioning: flag(
                &props,
                "hoodie.datasource.write.hive_style_partitioning",
                false,
            ),
            url_encode_partitions: flag(
                &props,
                "hoodie.datasource.write.partitionpath.urlencode",
                false,
            ),
            drop_partition_columns: flag(
                &props,
                "hoodie.datasource.write.drop.partition.columns",
                false,
            ),
            base_file_format,
            populate_meta_fields: flag(&props, "hoodie.populate.meta.fields", true),
            merge_mode,
            payload_class,
            merge_strategy_id,
            metadata_partitions: list(props.get("hoodie.table.metadata.partitions")),
            metadata_partitions_inflight: list(
                props.get("hoodie.table.metadata.partitions.inflight"),
            ),
            timezone,
            cdc_enabled: flag(&props, "hoodie.table.cdc.enabled", false),
            name,
            properties: props.clone(),
        };
        config.check_checksum(path)?;
        Ok(config)
    }

    /// Hudi guards table and database names with a CRC32 (`HoodieTableConfig.generateChecksum`).
    fn check_checksum(&self, path: &str) -> Result<()> {
        let Some(stored) = self.properties.get("hoodie.table.checksum") else {
            return Ok(());
        };
        let text = format!("{}.{}", self.database.as_deref().unwrap_or(""), self.name);
        let computed = crc32(text.as_bytes()).to_string();
        if stored.trim() != computed {
            return Err(HudiError::corrupt(
                path,
                format!("hoodie.table.checksum {stored} does not match the table name (expected {computed})"),
            ));
        }
        Ok(())
    }

    /// Whether a record index (when the metadata table has one) says where keys are. Hudi
    /// (1.1.1) writes no entries in a table that does not populate meta fields: there it
    /// stays empty, and its upserts insert every key again.
    pub fn record_index_locates_keys(&self) -> bool {
        self.populate_meta_fields
    }

    pub fn is_partitioned(&self) -> bool {
        !self.partition_fields.is_empty() && self.key_generator != KeyGeneratorType::NonPartition
    }

    /// Layout 2 (v8+) timelines name completed instants with their completion time.
    pub fn has_completion_times(&self) -> bool {
        self.timeline_layout_version >= 2
    }

    pub fn is_mor(&self) -> bool {
        self.table_type == TableType::MergeOnRead
    }

    /// The complete metadata-table partitions, as `&str`s.
    pub fn metadata_partition_names(&self) -> Vec<&str> {
        self.metadata_partitions
            .iter()
            .map(String::as_str)
            .collect()
    }

    /// The metadata table may plan reads only when its `files` partition is complete.
    pub fn metadata_files_available(&self) -> bool {
        self.metadata_partitions.iter().any(|p| p == "files")
    }

    pub fn property(&self, key: &str) -> Option<&str> {
        self.properties.get(key).map(String::as_str)
    }
}

fn key_generator_type(props: &BTreeMap<String, String>, path: &str) -> Result<KeyGeneratorType> {
    if let Some(t) = props
        .get("hoodie.table.keygenerator.type")
        .map(|s| s.trim().to_ascii_uppercase())
    {
        return Ok(match t.as_str() {
            "SIMPLE" | "SIMPLE_AVRO" => KeyGeneratorType::Simple,
            "COMPLEX" | "COMPLEX_AVRO" => KeyGeneratorType::Complex,
            "TIMESTAMP" | "TIMESTAMP_AVRO" => KeyGeneratorType::Timestamp,
            "NON_PARTITION" | "NON_PARTITION_AVRO" => KeyGeneratorType::NonPartition,
            "CUSTOM" | "CUSTOM_AVRO" => KeyGeneratorType::Custom,
            "HOODIE_TABLE_METADATA" => KeyGeneratorType::HoodieTableMetadata,
            other => {
                return Err(HudiError::unsupported_in(
                    format!("key generator type {other}"),
                    path,
                ))
            }
        });
    }
    let class = props
        .get("hoodie.table.keygenerator.class")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let simple = class.rsplit('.').next().unwrap_or("");
    Ok(match simple {
        "SimpleKeyGenerator" | "SimpleAvroKeyGenerator" => KeyGeneratorType::Simple,
        "ComplexKeyGenerator" | "ComplexAvroKeyGenerator" => KeyGeneratorType::Complex,
        "TimestampBasedKeyGenerator" | "TimestampBasedAvroKeyGenerator" => {
            KeyGeneratorType::Timestamp
        }
        "NonpartitionedKeyGenerator" | "NonpartitionedAvroKeyGenerator" => {
            KeyGeneratorType::NonPartition
        }
        "CustomKeyGenerator" | "CustomAvroKeyGenerator" => KeyGeneratorType::Custom,
        "HoodieTableMetadataKeyGenerator" => KeyGeneratorType::HoodieTableMetadata,
        // Hudi's default when nothing is recorded.
        "" => {
            if props
                .get("hoodie.table.partition.fields")
                .map(|s| s.trim().is_empty())
                .unwrap_or(true)
            {
                KeyGeneratorType::NonPartition
            } else {
                KeyGeneratorType::Simple
            }
        }
        other => {
            return Err(HudiError::unsupported_in(
                format!("key generator class {other}"),
                path,
            ))
        }
    })
}

/// Java's `inferMergingConfigsForPreV9Table` / `...ForV9TableCreation`, reduced to what a
/// reader needs.
fn infer_merge_mode(
    mode: Option<&str>,
    payload: Option<&str>,
    strategy: Option<&str>,
    has_ordering: bool,
    version: u32,
    path: &str,
) -> Result<MergeMode> {
    if let Some(m) = mode {
        return match m.to_ascii_uppercase().as_str() {
            "EVENT_TIME_ORDERING" => Ok(MergeMode::EventTimeOrdering),
            "COMMIT_TIME_ORDERING" => Ok(MergeMode::CommitTimeOrdering),
            "CUSTOM" => Ok(MergeMode::Custom),
            other => Err(HudiError::corrupt(
                path,
                format!("unknown hoodie.record.merge.mode {other:?}"),
            )),
        };
    }
    let payload_simple = payload.map(|p| p.rsplit('.').next().unwrap_or(p));
    Ok(match (payload_simple, strategy) {
        (Some("DefaultHoodieRecordPayload") | Some("EventTimeAvroPayload"), _) => {
            MergeMode::EventTimeOrdering
        }
        // 0.x applies log records over the base unconditionally with this payload; in a
        // v6 table its strategy id is the event-time one, which only dedupes within a batch.
        (Some("OverwriteWithLatestAvroPayload"), _) if version < 8 => MergeMode::CommitTimeOrdering,
        (Some("OverwriteWithLatestAvroPayload"), _) => MergeMode::CommitTimeOrdering,
        (Some("HoodieMetadataPayload"), _) => MergeMode::Custom,
        (Some(_), _) => MergeMode::Custom,
        (None, Some(EVENT_TIME_STRATEGY)) => MergeMode::EventTimeOrdering,
        (None, Some(COMMIT_TIME_STRATEGY)) => MergeMode::CommitTimeOrdering,
        (None, _) if has_ordering => MergeMode::EventTimeOrdering,
        (None, _) => MergeMode::CommitTimeOrdering,
    })
}

/// A `hoodie.*` option's value as given: trimmed; `None` when absent or empty.
pub fn option_value<'a>(options: &'a BTreeMap<String, String>, key: &str) -> Option<&'a str> {
    options.get(key).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// A true/false option (in either case); `None` when not given, any other value
/// `INVALID_ARGUMENT` naming the key.
pub fn option_flag(options: &BTreeMap<String, String>, key: &str) -> Result<Option<bool>> {
    match option_value(options, key) {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(v) => Err(HudiError::invalid(format!(
            "{key}={v:?}: expected one of true, false"
        ))),
    }
}

/// zlib / IEEE CRC32, as Java's `java.util.zip.CRC32`.
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_matches_hudi() {
        assert_eq!(crc32(b"default.v6_trips_8i1u"), 3843273058);
    }

    #[test]
    fn rejects_unknown_version() {
        let e = TableConfig::parse(
            "hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=42\n",
            "p",
        )
        .unwrap_err();
        assert_eq!(e.code(), "UNSUPPORTED");
    }
}
