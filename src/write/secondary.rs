//! A commit's secondary-index entries (docs/hudi-format.md §8.10): per changed file group,
//! the indexed value of each written key before and after the commit, compared as Java's
//! writer compares a group's previous and new slice — a new key gets an entry, a key whose
//! value changed loses the old entry and gets the new one, a deleted key loses its entry.
//! Unchanged values write nothing.

use std::collections::{BTreeMap, HashMap};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;

use super::commit::Inputs;
use super::plan::RowAt;
use crate::config::TableConfig;
use crate::error::{malformed_by, HudiError, Result};
use crate::merge::ordering::{compare_keys, key_of};
use crate::merge::MergeRule;
use crate::metadata::delta::SecondaryIndexChange;
use crate::metadata::keys::secondary_index_key;
use crate::metadata::secondary::{secondary_value, SecondaryIndexDef};

/// Entry key → whether it is removed; an entry both removed and added (a key moving
/// between file groups with its value) is added, as Java's reduction prefers live entries.
type Entries = BTreeMap<(String, String), (String, bool)>;

/// The secondary-index changes of the commit `inputs` plans. `existing` holds the rows (as
/// of the snapshot) of every changed file group.
pub(crate) fn changes(
    inputs: &Inputs<'_>,
    existing: &HashMap<(String, String), Vec<RecordBatch>>,
    read_schema: &SchemaRef,
    config: &TableConfig,
    defs: &[SecondaryIndexDef],
) -> Result<Vec<SecondaryIndexChange>> {
    if defs.is_empty() {
        return Ok(Vec::new());
    }
    let input_column = |column: &str| -> Result<&ArrayRef> {
        inputs.input.column_by_name(column).ok_or_else(|| {
            HudiError::invalid(format!(
                "the input has no column {column}, which a secondary index covers"
            ))
        })
    };
    let ordering_new: Vec<ArrayRef> = (config.ordering_fields.iter())
        .filter_map(|f| inputs.input.column_by_name(f).cloned())
        .collect();
    let mut entries = Entries::new();
    let mut add = |def: &SecondaryIndexDef, value: Option<String>, key: &str, deleted: bool| {
        let full = secondary_index_key(value.as_deref(), Some(key));
        let shard = def.shard_key(value.as_deref(), &full);
        let slot = entries
            .entry((def.partition.clone(), full))
            .or_insert((shard, deleted));
        slot.1 &= deleted;
    };
    let new_value = |def: &SecondaryIndexDef, row: &RowAt| -> Result<Option<String>> {
        secondary_value(input_column(&def.column)?.as_ref(), row.2, &def.column)
    };

    for ((partition, file_id), change) in &inputs.plan.groups {
        let path = format!("{partition}/{file_id}");
        let old = match existing.get(&(partition.clone(), file_id.clone())) {
            Some(batches) => {
                arrow_select::concat::concat_batches(read_schema, batches).map_err(malformed_by)?
            }
            None => RecordBatch::new_empty(read_schema.clone()),
        };
        let keys = super::key::stored_keys(&old, config, &path)?;
        let row_of: HashMap<&str, usize> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        let ordering_old: Vec<ArrayRef> = (config.ordering_fields.iter())
            .filter_map(|f| old.column_by_name(f).cloned())
            .collect();
        let by_event_time = inputs.rule == MergeRule::EventTime
            && ordering_old.len() == config.ordering_fields.len()
            && ordering_new.len() == config.ordering_fields.len();
        for def in defs {
            let old_column = old.column_by_name(&def.column).ok_or_else(|| {
                HudiError::invalid(format!(
                    "rows of {path} have no column {}, which {} covers",
                    def.column, def.partition
                ))
            })?;
            let old_value = |row: usize| secondary_value(old_column.as_ref(), row, &def.column);
            for (key, _) in &change.deletes {
                if let Some(&row) = row_of.get(key.as_str()) {
                    add(def, old_value(row)?, key, true);
                }
            }
            for update in change.updates.iter().chain(&change.inserts) {
                let key = update.0.as_str();
                let Some(&row) = row_of.get(key) else {
                    add(def, new_value(def, update)?, key, false);
                    continue;
                };
                // An update older by event time leaves the stored row (and its entry).
                let incoming_loses = by_event_time
                    && compare_keys(
                        &key_of(&ordering_new, update.2),
                        &key_of(&ordering_old, row),
                    )
                    .is_some_and(|o| o.is_lt());
                if incoming_loses {
                    continue;
                }
                let (before, after) = (old_value(row)?, new_value(def, update)?);
                if before != after {
                    add(def, before, key, true);
                    add(def, after, key, false);
                }
            }
        }
    }
    let new_groups = (inputs.plan.inserts.values()).chain(inputs.plan.bucket_inserts.values());
    for rows in new_groups {
        for row in rows {
            for def in defs {
                add(def, new_value(def, row)?, &row.0, false);
            }
        }
    }
    Ok(entries
        .into_iter()
        .map(
            |((partition, key), (shard_key, deleted))| SecondaryIndexChange {
                partition,
                shard_key,
                key,
                deleted,
            },
        )
        .collect())
}
