//! The v6 archived timeline (docs/hudi-format.md §2.5): `.hoodie/archived/.commits_.archive.N_<token>`
//! files are log files whose Avro data blocks hold `HoodieArchivedMetaEntry` records (Java
//! `HoodieArchivedMetaEntry.avsc`). Each record is decoded with the block's own schema.

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value;
use bytes::Bytes;

use super::block::BlockType;
use super::data::AvroRecords;
use super::reader::{read_log_file_with, LogReadOptions};
use crate::avro::value_to_json;
use crate::error::{malformed, HudiError, Result};
use crate::storage::{Purpose, Storage};

/// One archived instant.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ArchivedInstant {
    pub commit_time: String,
    pub action_type: String,
    /// `REQUESTED` / `INFLIGHT` / `COMPLETED` when the archiver recorded it (0.x did for
    /// pending plans), else `None`.
    pub action_state: Option<String>,
    /// The action's metadata record (commit, clean, rollback, plan …) as JSON, or null.
    pub metadata: serde_json::Value,
}

/// Metadata fields of `HoodieArchivedMetaEntry`, most specific first per action.
const METADATA_FIELDS: [&str; 10] = [
    "hoodieCommitMetadata",
    "hoodieReplaceCommitMetadata",
    "hoodieRequestedReplaceMetadata",
    "hoodieCleanMetadata",
    "hoodieCleanerPlan",
    "hoodieRollbackMetadata",
    "hoodieSavePointMetadata",
    "hoodieCompactionPlan",
    "hoodieCompactionMetadata",
    "hoodieRestoreMetadata",
];

fn preferred_fields(action: &str) -> &'static [&'static str] {
    match action {
        "commit" | "deltacommit" => &["hoodieCommitMetadata"],
        "replacecommit" | "clustering" => &[
            "hoodieReplaceCommitMetadata",
            "hoodieRequestedReplaceMetadata",
        ],
        "clean" => &["hoodieCleanMetadata", "hoodieCleanerPlan"],
        "rollback" => &["hoodieRollbackMetadata"],
        "savepoint" => &["hoodieSavePointMetadata"],
        "compaction" | "logcompaction" => &["hoodieCompactionPlan", "hoodieCommitMetadata"],
        _ => &[],
    }
}

/// Reads every archived instant of one archive file, in file order. Corrupt blocks are
/// skipped as for any log file.
pub async fn read_archive_file(
    storage: &dyn Storage,
    path: &str,
    size: Option<u64>,
) -> Result<Vec<ArchivedInstant>> {
    let opts = LogReadOptions {
        purpose: Purpose::History,
        ..Default::default()
    };
    let file = read_log_file_with(storage, path, size, opts).await?;
    let mut out = Vec::new();
    for block in file.of_type(BlockType::AvroData) {
        let schema = block
            .schema()
            .ok_or_else(|| HudiError::corrupt(path, "archive block without a schema"))?;
        out.extend(decode_archive_block(
            block.content(storage).await?,
            schema,
            path,
        )?);
    }
    Ok(out)
}

/// Decodes one Avro data block of archived entries.
pub fn decode_archive_block(
    content: Bytes,
    writer_schema: &str,
    path: &str,
) -> Result<Vec<ArchivedInstant>> {
    let run = || -> Result<Vec<ArchivedInstant>> {
        let schema = crate::avro::parse_schema(writer_schema)
            .map_err(|e| HudiError::corrupt_by("", "bad archive block schema", e))?;
        let checked = crate::avro::guard::Checked::new(&schema)?;
        let reader = GenericDatumReader::builder(&schema)
            .build()
            .map_err(|e| HudiError::corrupt_by("", "bad archive block schema", e))?;
        let records = AvroRecords::parse(content)?;
        records
            .iter()
            .map(|datum| {
                let datum = datum?;
                checked.datum(&datum)?;
                let value = reader
                    .read_value(&mut &datum[..])
                    .map_err(|e| HudiError::corrupt_by("", "bad archived entry", e))?;
                archived_instant(value)
            })
            .collect()
    };
    run().map_err(|e| e.in_file(path))
}

fn archived_instant(value: Value) -> Result<ArchivedInstant> {
    let serde_json::Value::Object(mut entry) = value_to_json(value) else {
        return Err(malformed("archived entry is not a record"));
    };
    let mut text = |k: &str| match entry.remove(k) {
        Some(serde_json::Value::String(s)) => Some(s),
        _ => None,
    };
    let commit_time =
        text("commitTime").ok_or_else(|| malformed("archived entry without commitTime"))?;
    let action_type =
        text("actionType").ok_or_else(|| malformed("archived entry without actionType"))?;
    let action_state = text("actionState");
    let metadata = preferred_fields(&action_type)
        .iter()
        .chain(METADATA_FIELDS.iter())
        .find_map(|k| entry.get(*k).filter(|v| !v.is_null()).cloned())
        .unwrap_or(serde_json::Value::Null);
    Ok(ArchivedInstant {
        commit_time,
        action_type,
        action_state,
        metadata,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use apache_avro::writer::datum::GenericDatumWriter;
    use apache_avro::Schema;

    use super::*;
    use crate::log_file::test_util::block_on;
    use crate::log_file::writer::avro_data_block;
    use crate::storage::memory::MemoryStorage;
    use crate::timeline::metadata::CommitMetadata;

    /// A subset of Java's `HoodieArchivedMetaEntry.avsc`, nested records inlined as the
    /// block header carries them; field order as in the .avsc.
    const ENTRY_SCHEMA: &str = r#"{"type":"record","name":"HoodieArchivedMetaEntry",
      "namespace":"org.apache.hudi.avro.model","fields":[
      {"name":"hoodieCommitMetadata","type":["null",{"type":"record","name":"HoodieCommitMetadata",
        "fields":[
          {"name":"partitionToWriteStats","type":["null",{"type":"map","values":{"type":"array",
            "items":{"type":"record","name":"HoodieWriteStat","fields":[
              {"name":"fileId","type":["null","string"],"default":null},
              {"name":"path","type":["null","string"],"default":null},
              {"name":"numWrites","type":["null","long"],"default":null}]}}}],"default":null},
          {"name":"extraMetadata","type":["null",{"type":"map","values":"string"}],"default":null},
          {"name":"operationType","type":["null","string"],"default":null}]}],"default":null},
      {"name":"hoodieCleanMetadata","type":["null",{"type":"record","name":"HoodieCleanMetadata",
        "fields":[{"name":"startCleanTime","type":"string"},
                  {"name":"totalFilesDeleted","type":"int"}]}],"default":null},
      {"name":"hoodieRollbackMetadata","type":["null",{"type":"record",
        "name":"HoodieRollbackMetadata","fields":[{"name":"startRollbackTime","type":"string"},
        {"name":"commitsRollback","type":{"type":"array","items":"string"}}]}],"default":null},
      {"name":"commitTime","type":["null","string"],"default":null},
      {"name":"actionType","type":["null","string"],"default":null},
      {"name":"version","type":["int","null"],"default":1},
      {"name":"actionState","type":["null","string"],"default":null}
    ]}"#;

    fn s(v: &str) -> Value {
        Value::Union(1, Box::new(Value::String(v.into())))
    }

    fn null() -> Value {
        Value::Union(0, Box::new(Value::Null))
    }

    fn entry(meta: [Value; 3], time: &str, action: &str, state: Value) -> Value {
        let [commit, clean, rollback] = meta;
        Value::Record(vec![
            ("hoodieCommitMetadata".into(), commit),
            ("hoodieCleanMetadata".into(), clean),
            ("hoodieRollbackMetadata".into(), rollback),
            ("commitTime".into(), s(time)),
            ("actionType".into(), s(action)),
            ("version".into(), Value::Union(0, Box::new(Value::Int(1)))),
            ("actionState".into(), state),
        ])
    }

    fn commit_metadata(path: &str, writes: i64) -> Value {
        let stat = Value::Record(vec![
            ("fileId".into(), s("f1-0")),
            ("path".into(), s(path)),
            (
                "numWrites".into(),
                Value::Union(1, Box::new(Value::Long(writes))),
            ),
        ]);
        let stats = HashMap::from([("p1".to_string(), Value::Array(vec![stat]))]);
        let extra = HashMap::from([("schema".to_string(), Value::String("{}".into()))]);
        Value::Union(
            1,
            Box::new(Value::Record(vec![
                (
                    "partitionToWriteStats".into(),
                    Value::Union(1, Box::new(Value::Map(stats))),
                ),
                (
                    "extraMetadata".into(),
                    Value::Union(1, Box::new(Value::Map(extra))),
                ),
                ("operationType".into(), s("UPSERT")),
            ])),
        )
    }

    fn block(instant: &str, entries: &[Value]) -> Vec<u8> {
        let schema = Schema::parse_str(ENTRY_SCHEMA).unwrap();
        let writer = GenericDatumWriter::builder(&schema).build().unwrap();
        let datums: Vec<Vec<u8>> = entries
            .iter()
            .map(|e| writer.write_value_to_vec(e.clone()).unwrap())
            .collect();
        avro_data_block(instant, ENTRY_SCHEMA, datums.iter().map(Vec::as_slice)).unwrap()
    }

    #[test]
    fn reads_archived_instants_across_blocks() {
        let clean = Value::Union(
            1,
            Box::new(Value::Record(vec![
                ("startCleanTime".into(), Value::String("003".into())),
                ("totalFilesDeleted".into(), Value::Int(2)),
            ])),
        );
        let rollback = Value::Union(
            1,
            Box::new(Value::Record(vec![
                ("startRollbackTime".into(), Value::String("004".into())),
                (
                    "commitsRollback".into(),
                    Value::Array(vec![Value::String("002".into())]),
                ),
            ])),
        );
        let first = block(
            "005",
            &[
                entry(
                    [commit_metadata("p1/a.parquet", 7), null(), null()],
                    "001",
                    "commit",
                    null(),
                ),
                entry([null(), clean, null()], "003", "clean", s("COMPLETED")),
            ],
        );
        let second = block(
            "006",
            &[
                entry([null(), null(), rollback], "004", "rollback", null()),
                entry(
                    [null(), null(), null()],
                    "002",
                    "deltacommit",
                    s("INFLIGHT"),
                ),
            ],
        );
        let path = ".hoodie/archived/.commits_.archive.1_1-0-1";
        let storage = MemoryStorage::new();
        storage.insert(path, [first, second].concat(), None);

        let got = block_on(read_archive_file(&storage, path, None)).unwrap();
        let summary: Vec<_> = got
            .iter()
            .map(|a| {
                (
                    a.commit_time.as_str(),
                    a.action_type.as_str(),
                    a.action_state.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                ("001", "commit", None),
                ("003", "clean", Some("COMPLETED")),
                ("004", "rollback", None),
                ("002", "deltacommit", Some("INFLIGHT")),
            ]
        );
        let commit = CommitMetadata::from_json(got[0].metadata.clone(), path).unwrap();
        assert_eq!(commit.totals().num_writes, 7);
        assert_eq!(commit.schema(), Some("{}"));
        assert_eq!(got[1].metadata["totalFilesDeleted"], 2);
        assert_eq!(got[2].metadata["commitsRollback"][0], "002");
        assert!(got[3].metadata.is_null());
    }

    #[test]
    fn entries_without_identity_are_corrupt() {
        let e = Value::Record(vec![
            ("hoodieCommitMetadata".into(), null()),
            ("hoodieCleanMetadata".into(), null()),
            ("hoodieRollbackMetadata".into(), null()),
            ("commitTime".into(), null()),
            ("actionType".into(), s("commit")),
            ("version".into(), Value::Union(0, Box::new(Value::Int(1)))),
            ("actionState".into(), null()),
        ]);
        let bytes = bytes::Bytes::from(block("1", &[e]));
        let blocks = crate::log_file::parse_log_bytes("a", bytes).unwrap();
        let content = blocks[0].loaded_content().unwrap().clone();
        let err = decode_archive_block(content, ENTRY_SCHEMA, "a").unwrap_err();
        assert_eq!((err.code(), err.object()), ("CORRUPT", Some("a")));
    }
}
