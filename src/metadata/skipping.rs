//! Data skipping with the metadata table's indexes (docs/hudi-format.md §8.6–8.8):
//! `partition_stats` prunes partitions, `column_stats` prunes file slices, `record_index`
//! finds the file groups of record keys. Lookups ask only for the filter's columns; unknown
//! (no record, a bound of the wrong type) never prunes.

use std::collections::HashSet;

use arrow_schema::{DataType, Schema};

use super::keys::{
    column_stats_key, column_stats_key_prefix, partition_stats_key, NON_PARTITIONED_ID,
};
use super::lookup::{Lookup, Records};
use super::records::{ColumnStats, MetadataPayload};
use super::stats::StatsBatch;
use super::table::{MetadataTable, COLUMN_STATS, PARTITION_STATS, RECORD_INDEX};
use crate::config::{KeyGeneratorType, TableConfig};
use crate::error::{HudiError, Result};
use crate::expr::stats::{match_share, may_match};
use crate::expr::{conjunction, Expr, Op, Predicate};
use crate::file_group::FileSlice;

/// What an index says about each container (partition or file slice).
#[derive(Debug, Clone, Default)]
pub struct Verdicts {
    /// False only where the index proves that no row can match.
    pub keep: Vec<bool>,
    /// Where the index knew nothing for some filter column (so other pruning may still help).
    pub unknown: Vec<bool>,
    /// Records that could not be used, for plan notes.
    pub problems: Vec<String>,
    /// The share of rows expected to match ([`match_share`]; 1 where unknown).
    pub share: Vec<f64>,
}

/// Filter columns that are table columns, sorted.
fn filter_columns<'a>(filter: &'a Expr, schema: &Schema) -> Vec<&'a str> {
    let mut cols = filter.columns();
    cols.retain(|c| schema.field_with_name(c).is_ok());
    cols
}

fn stats_of<'a>(records: &'a Records, key: &str) -> Option<&'a ColumnStats> {
    match records.values.get(key) {
        Some(MetadataPayload::ColumnStats(s) | MetadataPayload::PartitionStats(s)) => Some(s),
        _ => None,
    }
}

/// Records of another type than the partition holds are ignored, and said so.
fn unexpected_types(records: &Records, partition: &str) -> Vec<String> {
    records
        .values
        .iter()
        .filter(|(_, p)| {
            !matches!(
                p,
                MetadataPayload::ColumnStats(_) | MetadataPayload::PartitionStats(_)
            )
        })
        .map(|(k, p)| format!("{partition} record {k:?} is not column statistics ({p:?}); ignored"))
        .collect()
}

impl MetadataTable {
    /// `partition_stats`: which of `partitions` may hold a matching row. One point lookup per
    /// (filter column, partition).
    pub async fn prune_partitions(
        &self,
        partitions: &[String],
        filter: &Expr,
        schema: &Schema,
    ) -> Result<Verdicts> {
        let columns = filter_columns(filter, schema);
        let keys: Vec<String> = columns
            .iter()
            .flat_map(|c| partitions.iter().map(|p| partition_stats_key(c, p)))
            .collect();
        let records = self.lookup(PARTITION_STATS, Lookup::Keys(&keys)).await?;
        let batch = StatsBatch::build(schema, &columns, partitions.len(), |i, c| {
            stats_of(&records, &partition_stats_key(c, &partitions[i]))
        })
        .without_null_counts();
        Ok(verdicts(filter, batch, &records, PARTITION_STATS))
    }

    /// `column_stats`: which slices may hold a matching row. A slice is kept when any of its
    /// files (base or log) may match; files without statistics are kept.
    pub async fn prune_slices(
        &self,
        slices: &[FileSlice],
        filter: &Expr,
        schema: &Schema,
    ) -> Result<Verdicts> {
        let columns = filter_columns(filter, schema);
        let (records, files) = self.file_records(slices, &columns).await?;
        let key = |f: &(usize, &str, &str), c: &str| column_stats_key(c, f.1, f.2);
        let batch = StatsBatch::build(schema, &columns, files.len(), |i, c| {
            stats_of(&records, &key(&files[i], c))
        });
        let by_file = verdicts(filter, batch, &records, COLUMN_STATS);
        let mut out = Verdicts {
            keep: vec![false; slices.len()],
            unknown: vec![false; slices.len()],
            problems: by_file.problems,
            share: vec![0.0; slices.len()],
        };
        for (f, (slice, _, _)) in files.iter().enumerate() {
            out.keep[*slice] |= by_file.keep[f];
            out.unknown[*slice] |= by_file.unknown[f];
            out.share[*slice] = out.share[*slice].max(by_file.share[f]);
        }
        // A slice without files (cannot happen in a view) is kept.
        for (i, s) in slices.iter().enumerate() {
            if s.file_names().next().is_none() {
                out.keep[i] = true;
                out.share[i] = 1.0;
            }
        }
        Ok(out)
    }

    /// What `column_stats` says of every file of `slices`, one [`StatsBatch`] a column (so a
    /// file without a record for one column is unknown for that column alone).
    pub async fn file_stats(
        &self,
        slices: &[FileSlice],
        columns: &[&str],
        schema: &Schema,
    ) -> Result<FileStats> {
        let mut columns = columns.to_vec();
        columns.retain(|c| schema.field_with_name(c).is_ok());
        let (records, files) = self.file_records(slices, &columns).await?;
        let mut problems = records.problems.clone();
        problems.extend(unexpected_types(&records, COLUMN_STATS));
        let by_column = (columns.iter())
            .map(|c| {
                let batch = StatsBatch::build(schema, &[c], files.len(), |i, c| {
                    let (_, partition, file) = files[i];
                    stats_of(&records, &column_stats_key(c, partition, file))
                });
                problems.extend(batch.problems.iter().cloned());
                (c.to_string(), batch)
            })
            .collect();
        let files = (files.iter())
            .map(|&(i, _, name)| {
                let base = slices[i].base_file.as_ref().is_some_and(|b| b.name == name);
                (i, base)
            })
            .collect();
        Ok(FileStats {
            files,
            columns: by_column,
            problems,
        })
    }

    /// The `column_stats` records of `columns` for every file of `slices`: one prefix scan
    /// (column ‖ partition) per shard, shards concurrently. The files as (slice, partition,
    /// file name).
    async fn file_records<'s>(
        &self,
        slices: &'s [FileSlice],
        columns: &[&str],
    ) -> Result<(Records, Vec<(usize, &'s str, &'s str)>)> {
        let mut partitions: Vec<&str> = slices.iter().map(|s| s.partition.as_str()).collect();
        partitions.sort_unstable();
        partitions.dedup();
        let prefixes: Vec<String> = columns
            .iter()
            .flat_map(|c| {
                partitions
                    .iter()
                    .map(|p| column_stats_key_prefix(c, Some(p)))
            })
            .collect();
        let records = self
            .lookup(COLUMN_STATS, Lookup::Prefixes(&prefixes))
            .await?;
        let files = slices
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.file_names().map(move |f| (i, s.partition.as_str(), f)))
            .collect();
        Ok((records, files))
    }

    /// `record_index`: the (partition, file id) of each key found; missing keys are not in
    /// the table. A record that cannot be read makes the whole answer unusable.
    pub async fn locate_keys(&self, keys: &[String]) -> Result<HashSet<(String, String)>> {
        let records = self.lookup(RECORD_INDEX, Lookup::Keys(keys)).await?;
        if let Some(p) = records.problems.first() {
            return Err(HudiError::corrupt(RECORD_INDEX, p.clone()));
        }
        records
            .values
            .iter()
            .map(|(k, p)| match p {
                MetadataPayload::RecordIndex(e) => {
                    let partition = if e.partition == NON_PARTITIONED_ID {
                        String::new()
                    } else {
                        e.partition.clone()
                    };
                    Ok((partition, e.file_id.clone()))
                }
                other => Err(HudiError::corrupt(
                    RECORD_INDEX,
                    format!("record {k:?} is not a record-index entry: {other:?}"),
                )),
            })
            .collect()
    }
}

fn verdicts(filter: &Expr, batch: StatsBatch, records: &Records, partition: &str) -> Verdicts {
    let keep = may_match(filter, &batch)
        .into_iter()
        .zip(&batch.empty)
        .map(|(may, empty)| may && !empty)
        .collect();
    let share = match_share(filter, &batch);
    let mut problems = records.problems.clone();
    problems.extend(unexpected_types(records, partition));
    problems.extend(batch.problems);
    Verdicts {
        keep,
        unknown: batch.unknown,
        problems,
        share,
    }
}

/// `column_stats` of the files of some slices ([`MetadataTable::file_stats`]).
#[derive(Debug, Clone)]
pub struct FileStats {
    /// Each file (container): the index of its slice, and whether it is the base file.
    pub files: Vec<(usize, bool)>,
    /// One batch a column, a container a file.
    pub columns: Vec<(String, StatsBatch)>,
    /// Records that could not be used.
    pub problems: Vec<String>,
}

/// The record keys a filter pins down, and the rest of the filter.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyLookup {
    /// Sorted, distinct.
    pub keys: Vec<String>,
    /// The conjuncts that are not key predicates (`None` when there are none).
    pub rest: Option<Expr>,
}

/// Keys from `=` / `in` conjuncts on `_hoodie_record_key`, or on the record key field of a
/// single-field key whose text Hudi writes as the value itself (simple, non-partitioned and
/// timestamp key generators; string and integer columns). Several such conjuncts
/// intersect. `None` when the filter pins no key.
pub fn record_keys(filter: &Expr, config: &TableConfig, schema: &Schema) -> Option<KeyLookup> {
    let key_field = match config.record_key_fields.as_slice() {
        [f] if matches!(
            config.key_generator,
            KeyGeneratorType::Simple | KeyGeneratorType::NonPartition | KeyGeneratorType::Timestamp
        ) =>
        {
            Some(f.as_str())
        }
        _ => None,
    };
    let keys_of = |p: &Predicate| -> Option<Vec<String>> {
        if !matches!(p.op, Op::Eq | Op::In) {
            return None;
        }
        if p.column == crate::schema::RECORD_KEY {
            return Some(p.values.clone());
        }
        if Some(p.column.as_str()) != key_field {
            return None;
        }
        let ty = schema.field_with_name(&p.column).ok()?.data_type();
        p.values.iter().map(|v| key_text(v, ty)).collect()
    };
    let mut conjuncts = Vec::new();
    flatten_and(filter, &mut conjuncts);
    let mut found: Option<Vec<String>> = None;
    let mut rest = Vec::new();
    for c in conjuncts {
        let keys = match &c {
            Expr::Pred(p) => keys_of(p),
            _ => None,
        };
        let Some(mut keys) = keys else {
            rest.push(c);
            continue;
        };
        keys.sort();
        keys.dedup();
        found = Some(match found {
            None => keys,
            Some(prev) => prev.into_iter().filter(|k| keys.contains(k)).collect(),
        });
    }
    Some(KeyLookup {
        keys: found?,
        rest: conjunction(&rest),
    })
}

/// `filter` without the conjuncts that read only partition columns: partition paths answer
/// those exactly, so statistics cannot prune more on them. Kept as they are when partition
/// values are not the column values (timestamp and custom key generators).
pub fn without_partition_conjuncts(filter: &Expr, config: &TableConfig) -> Option<Expr> {
    let paths_are_values = config.is_partitioned()
        && !matches!(
            config.key_generator,
            KeyGeneratorType::Timestamp | KeyGeneratorType::Custom
        );
    if !paths_are_values {
        return Some(filter.clone());
    }
    let is_partition = |c: &&str| config.partition_fields.iter().any(|f| f == c);
    let mut conjuncts = Vec::new();
    flatten_and(filter, &mut conjuncts);
    conjuncts.retain(|e| !e.columns().iter().all(is_partition));
    conjunction(&conjuncts)
}

fn flatten_and(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::And(parts) => parts.iter().for_each(|p| flatten_and(p, out)),
        other => out.push(other.clone()),
    }
}

/// The record-key text of a literal, as Java's `toString` of the value.
fn key_text(literal: &str, ty: &DataType) -> Option<String> {
    match ty {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(literal.to_string()),
        t if t.is_integer() => literal.trim().parse::<i64>().ok().map(|n| n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::parse_filter;
    use arrow_schema::Field;

    #[test]
    fn record_keys_from_filters() {
        let config = TableConfig::parse(
            "hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=9\n\
             hoodie.table.recordkey.fields=id\nhoodie.table.partition.fields=region\n\
             hoodie.table.keygenerator.type=SIMPLE\n",
            "p",
        )
        .unwrap();
        let schema = Schema::new(vec![
            Field::new("_hoodie_record_key", DataType::Utf8, true),
            Field::new("id", DataType::Int64, true),
            Field::new("region", DataType::Utf8, true),
        ]);
        let keys =
            |f: &str| record_keys(&parse_filter(f).unwrap(), &config, &schema).map(|k| k.keys);
        assert_eq!(keys("id = 007"), Some(vec!["7".to_string()]));
        assert_eq!(
            keys("id in (3, 1, 3) and region = us"),
            Some(vec!["1".into(), "3".into()])
        );
        assert_eq!(
            keys("id in (1, 2) and _hoodie_record_key = 2"),
            Some(vec!["2".into()])
        );
        assert_eq!(keys("id > 5"), None);
        assert_eq!(keys("id = 1 or id = 2"), None);
        assert_eq!(keys("region = us"), None);
        assert_eq!(keys("id = x"), None);
        let rest =
            |f: &str| record_keys(&parse_filter(f).unwrap(), &config, &schema).map(|k| k.rest);
        assert_eq!(rest("id = 1"), Some(None));
        let drop = |f: &str| without_partition_conjuncts(&parse_filter(f).unwrap(), &config);
        assert_eq!(drop("region = us"), None);
        assert_eq!(
            drop("region = us and id > 3"),
            Some(parse_filter("id > 3").unwrap())
        );
        assert_eq!(
            drop("region = us or id > 3"),
            Some(parse_filter("region = us or id > 3").unwrap())
        );
        assert_eq!(
            rest("id = 1 and (region = us or region = eu)"),
            Some(Some(parse_filter("region = us or region = eu").unwrap()))
        );
    }
}
