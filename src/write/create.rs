//! A new, empty table: `.hoodie/hoodie.properties` as Apache Hudi 1.x (table version 9)
//! leaves it when a Spark DataFrame write creates a table, plus the creation schema
//! (`hoodie.table.create.schema`, which Spark SQL's `CREATE TABLE` records) so the table has
//! a schema before its first commit, and the folders Java makes beside it. The properties are
//! created if absent: that one request claims the location. The metadata table is built
//! next ([`crate::write::services::mdt_init`]), as Spark builds it before a new table's
//! first commit; `hoodie.metadata.*` options choose its partitions.

use std::collections::BTreeMap;

use arrow_schema::{DataType, Schema};
use bytes::Bytes;

use crate::config::{crc32, properties, TableType, PROPERTIES_FILE};
use crate::error::{HudiError, Result};
use crate::storage::{PutMode, Storage};

/// What a new table is.
#[derive(Debug, Clone)]
pub struct NewTable {
    /// `hoodie.table.name` (an Avro name: it also names the schema's record).
    pub name: String,
    pub table_type: TableType,
    /// The data columns (no `_hoodie_*` meta columns).
    pub schema: Schema,
    pub record_key_fields: Vec<String>,
    /// Empty for a non-partitioned table.
    pub partition_fields: Vec<String>,
    /// Hudi's ordering (precombine) fields: with them the table merges by event time
    /// (`EVENT_TIME_ORDERING`), without them the latest commit wins (`COMMIT_TIME_ORDERING`).
    pub ordering_fields: Vec<String>,
    /// Table configs by their Java names, from [`TAKEN_OPTIONS`].
    pub options: BTreeMap<String, String>,
}

/// The table configs a new table takes, with their defaults here. The timeline's zone is
/// UTC (Hudi's default is the writer's local zone): writers in different places then
/// agree on instant order.
pub const TAKEN_OPTIONS: [(&str, &str); 7] = [
    ("hoodie.datasource.write.hive_style_partitioning", "false"),
    // A change feed: CDC log files beside rewritten base files, in this supplemental mode
    // (`DATA_BEFORE_AFTER` when on and not named, as Spark writes it).
    ("hoodie.table.cdc.enabled", "false"),
    ("hoodie.table.cdc.supplemental.logging.mode", ""),
    // `false`: virtual keys (from the key fields).
    ("hoodie.populate.meta.fields", "true"),
    ("hoodie.datasource.write.partitionpath.urlencode", "false"),
    ("hoodie.table.timeline.timezone", "UTC"),
    ("hoodie.database.name", ""),
];

/// What `HoodieTableMetaClient.initTableAndGetMetaClient` creates beside the properties.
const HUDI_FOLDERS: [&str; 7] = [
    ".hoodie/timeline/",
    ".hoodie/timeline/history/",
    ".hoodie/.temp/",
    ".hoodie/.aux/",
    ".hoodie/.aux/.bootstrap/.partitions/",
    ".hoodie/.aux/.bootstrap/.fileids/",
    ".hoodie/.schema/",
];

/// Writes `table`'s `hoodie.properties` if no table is at `storage`'s root.
pub async fn create_table(storage: &dyn Storage, table: &NewTable) -> Result<()> {
    let saved_at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    // A refused create whose object holds our bytes counts as our own earlier attempt
    // (storage retries); the token keeps a second creator's identical spec from looking so.
    let mut token = [0u8; 8];
    getrandom::fill(&mut token).map_err(|e| HudiError::io("random source", e))?;
    let token: String = token.iter().map(|b| format!("{b:02x}")).collect();
    let comment = format!("Properties saved on {saved_at} by hudi-edge (creator {token})");
    let text = properties_text(table, &comment)?;
    if !storage.capabilities().writable {
        return Err(HudiError::unsupported_in(
            "creating a table on a read-only storage",
            storage.location(),
        ));
    }
    // The folders Hudi makes for a new table, as folder markers (directories on local
    // files): Java lists `.hoodie/timeline` before its first commit, and a missing one is
    // an error there. Before the properties, so a table is never without them.
    futures::future::try_join_all(
        HUDI_FOLDERS
            .iter()
            .map(|folder| storage.put(folder, Bytes::new(), PutMode::Overwrite)),
    )
    .await?;
    match storage
        .put(PROPERTIES_FILE, Bytes::from(text), PutMode::Create)
        .await
    {
        Err(HudiError::Conflict { .. }) => Err(HudiError::Conflict {
            path: PROPERTIES_FILE.into(),
            detail: format!("a table already exists at {}", storage.location()),
        }),
        other => other.map(|_| ()),
    }
}

/// The properties file of `table` under the comment line `comment`.
pub fn properties_text(table: &NewTable, comment: &str) -> Result<String> {
    check(table)?;
    let mut props: BTreeMap<&str, String> = BTreeMap::new();
    let avro = crate::schema::to_avro::avro_schema_for_table(&table.name, &table.schema)?;
    let (table_type, merge_mode) = (
        match table.table_type {
            TableType::CopyOnWrite => "COPY_ON_WRITE",
            TableType::MergeOnRead => "MERGE_ON_READ",
        },
        if table.ordering_fields.is_empty() {
            "COMMIT_TIME_ORDERING"
        } else {
            "EVENT_TIME_ORDERING"
        },
    );
    let key_generator = match (table.record_key_fields.len(), table.partition_fields.len()) {
        (_, 0) => "NON_PARTITION",
        (1, 1) => "SIMPLE",
        _ => "COMPLEX",
    };
    for (key, value) in [
        ("hoodie.table.name", table.name.clone()),
        ("hoodie.table.type", table_type.into()),
        ("hoodie.table.version", "9".into()),
        ("hoodie.table.initial.version", "9".into()),
        ("hoodie.timeline.layout.version", "2".into()),
        ("hoodie.timeline.path", "timeline".into()),
        ("hoodie.timeline.history.path", "history".into()),
        ("hoodie.archivelog.folder", "history".into()),
        ("hoodie.table.format", "native".into()),
        ("hoodie.table.base.file.format", "PARQUET".into()),
        (
            "hoodie.table.multiple.base.file.formats.enable",
            "false".into(),
        ),
        ("hoodie.partition.metafile.use.base.format", "false".into()),
        (
            "hoodie.datasource.write.drop.partition.columns",
            "false".into(),
        ),
        (
            "hoodie.table.recordkey.fields",
            table.record_key_fields.join(","),
        ),
        ("hoodie.table.keygenerator.type", key_generator.into()),
        ("hoodie.record.merge.mode", merge_mode.into()),
        ("hoodie.table.create.schema", avro.to_string()),
    ] {
        props.insert(key, value);
    }
    // Empty for a non-partitioned table, as Spark writes it.
    props.insert(
        "hoodie.table.partition.fields",
        table.partition_fields.join(","),
    );
    if !table.ordering_fields.is_empty() {
        props.insert(
            "hoodie.table.ordering.fields",
            table.ordering_fields.join(","),
        );
    }
    for (key, default) in TAKEN_OPTIONS {
        let value = table.options.get(key).map_or(default, |v| v.trim());
        if !value.is_empty() {
            props.insert(key, value.to_string());
        }
    }
    if props.get("hoodie.table.cdc.enabled").map(String::as_str) == Some("true") {
        props
            .entry("hoodie.table.cdc.supplemental.logging.mode")
            .or_insert_with(|| "DATA_BEFORE_AFTER".into());
    }
    let database = props
        .get("hoodie.database.name")
        .cloned()
        .unwrap_or_default();
    // The metadata partitions the creator builds next, listed as being built: a writer that
    // opens the table meanwhile waits for them instead of writing past them.
    let mut building = crate::metadata::config::MetadataConfig::parse(&table.options)?
        .partitions(!table.partition_fields.is_empty());
    building.sort();
    if !building.is_empty() {
        props.insert(
            "hoodie.table.metadata.partitions.inflight",
            building.join(","),
        );
    }
    let checksum = crc32(format!("{database}.{}", table.name).as_bytes()).to_string();
    props.insert("hoodie.table.checksum", checksum);
    Ok(properties::store(
        comment,
        props.iter().map(|(k, v)| (*k, v.as_str())),
    ))
}

fn check(table: &NewTable) -> Result<()> {
    let bad = |msg: String| {
        Err(HudiError::invalid(format!(
            "new table {:?}: {msg}",
            table.name
        )))
    };
    if !crate::schema::to_avro::is_avro_name(&table.name) {
        return bad(
            "a table name starts with a letter or `_` and holds only letters, digits and `_`"
                .into(),
        );
    }
    if table.schema.fields().is_empty() {
        return bad("a table needs columns".into());
    }
    let mut seen = std::collections::HashSet::new();
    for f in table.schema.fields() {
        if crate::schema::is_meta_column(f.name()) || f.name() == crate::schema::IS_DELETED {
            return bad(format!(
                "{:?} is a Hudi meta column; it is not declared",
                f.name()
            ));
        }
        if !seen.insert(f.name().to_ascii_lowercase()) {
            return bad(format!(
                "column {:?} is declared twice (names are case-insensitive in Spark)",
                f.name()
            ));
        }
    }
    if table.record_key_fields.is_empty() {
        return bad("a record key field is needed".into());
    }
    for (role, names) in [
        ("record key", &table.record_key_fields),
        ("partition", &table.partition_fields),
        ("ordering", &table.ordering_fields),
    ] {
        for name in names {
            let Ok(field) = table.schema.field_with_name(name) else {
                return bad(format!("{role} field {name:?} is not a column"));
            };
            let scalar = !matches!(
                field.data_type(),
                DataType::List(_)
                    | DataType::LargeList(_)
                    | DataType::Map(..)
                    | DataType::Struct(_)
                    | DataType::Binary
                    | DataType::LargeBinary
                    | DataType::BinaryView
            );
            let exact = !matches!(field.data_type(), DataType::Float32 | DataType::Float64);
            if !scalar || (role != "ordering" && !exact) {
                return bad(format!(
                    "{role} field {name:?} is of type {}: keys and partitions take strings, \
                     integers, decimals, dates, timestamps or booleans",
                    field.data_type()
                ));
            }
        }
    }
    let populate = table.options.get("hoodie.populate.meta.fields");
    if let Some(other) = populate.filter(|v| !matches!(v.trim(), "true" | "false")) {
        return bad(format!(
            "hoodie.populate.meta.fields={other}: true or false"
        ));
    }
    if let Some(v) = table.options.get("hoodie.table.cdc.enabled") {
        if !matches!(v.trim(), "true" | "false") {
            return bad(format!("hoodie.table.cdc.enabled={v}: true or false"));
        }
    }
    use crate::read::cdc::SupplementalMode;
    if let Some(mode) = table.options.get(SupplementalMode::KEY) {
        if SupplementalMode::parse(mode).is_none() {
            return bad(format!(
                "{}={mode}: OP_KEY_ONLY, DATA_BEFORE or DATA_BEFORE_AFTER",
                SupplementalMode::KEY
            ));
        }
    }
    crate::metadata::config::MetadataConfig::parse(&table.options)?;
    for key in table.options.keys() {
        if !TAKEN_OPTIONS.iter().any(|(k, _)| k == key) && !key.starts_with("hoodie.metadata.") {
            let taken: Vec<&str> = TAKEN_OPTIONS.iter().map(|(k, _)| *k).collect();
            return Err(HudiError::unsupported(format!(
                "table config {key} at creation (taken: {})",
                taken.join(", ")
            )));
        }
    }
    Ok(())
}
