//! Incoming rows checked against the table's latest schema (by name): missing nullable
//! columns become nulls, unknown columns, types that do not convert and missing key,
//! partition or ordering fields are `INVALID_INPUT` naming the row and column. Then keyed
//! and de-duplicated with the table's ordering rule, as Hudi pre-combines a batch.

use std::collections::HashMap;

use arrow_array::{new_null_array, Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use super::{KeyGen, KeyedRows, Operation};
use crate::config::{KeyGeneratorType, TableConfig};
use crate::error::{HudiError, Result};
use crate::merge::ordering::{compare_keys, key_of};
use crate::merge::MergeRule;

/// One batch with exactly the table's data columns, in table order.
pub fn align_input(
    batches: &[RecordBatch],
    table: &Schema,
    config: &TableConfig,
    operation: Operation,
) -> Result<RecordBatch> {
    let target: SchemaRef = crate::schema::align::nullable(table);
    let mut aligned = Vec::with_capacity(batches.len());
    let mut first_row = 0usize;
    for batch in batches {
        aligned.push(align_batch(batch, &target, first_row)?);
        first_row += batch.num_rows();
    }
    // One batch is taken as it is (its columns shared, not copied).
    let batch = match aligned.len() {
        1 => aligned.remove(0),
        _ => arrow_select::concat::concat_batches(&target, &aligned)
            .map_err(|e| HudiError::invalid_input(format!("input batches do not combine: {e}")))?,
    };
    if batch.num_rows() == 0 {
        return Err(HudiError::invalid_input("no rows to write"));
    }
    let mut required: Vec<&str> = config
        .record_key_fields
        .iter()
        .map(String::as_str)
        .collect();
    if config.key_generator != KeyGeneratorType::NonPartition {
        required.extend(config.partition_fields.iter().map(String::as_str));
    }
    let ordering_needed =
        operation != Operation::Delete && MergeRule::of(config)? == MergeRule::EventTime;
    if ordering_needed {
        required.extend(config.ordering_fields.iter().map(String::as_str));
    }
    for name in required {
        let present = batches
            .iter()
            .all(|b| b.schema().column_with_name(name).is_some());
        let column = batch.column_by_name(name).ok_or_else(|| {
            HudiError::invalid_input(format!(
                "the table has no column {name:?} that its config names"
            ))
        })?;
        if !present {
            return Err(HudiError::invalid_input(format!(
                "the input has no column {name:?} (a record key, partition or ordering field)"
            )));
        }
        if let Some(row) = (0..column.len()).find(|&r| column.is_null(r)) {
            return Err(HudiError::invalid_input(format!(
                "row {row}: column {name:?} (a record key, partition or ordering field) is null"
            )));
        }
    }
    Ok(batch)
}

/// The input's columns the table does not have, in the order they first appear (meta
/// columns and partition fields, which a table may leave out of its files, aside). A name
/// that differs from a table column only in case is refused: Spark resolves columns
/// without regard to case, so it would take it for the same column.
pub fn added_columns(
    batches: &[RecordBatch],
    table: &Schema,
    config: &TableConfig,
) -> Result<Vec<Field>> {
    let mut added: Vec<Field> = Vec::new();
    for batch in batches {
        for field in batch.schema().fields() {
            let name = field.name();
            if table.column_with_name(name).is_some()
                || crate::schema::is_meta_column(name)
                || config.partition_fields.contains(name)
                || added.iter().any(|f| f.name() == name)
            {
                continue;
            }
            let taken = (table.fields().iter().map(|f| f.name()))
                .chain(added.iter().map(Field::name))
                .find(|n| n.eq_ignore_ascii_case(name));
            if let Some(taken) = taken {
                return Err(HudiError::invalid_input(format!(
                    "column {name:?} differs from column {taken:?} only in case"
                )));
            }
            added.push(field.as_ref().clone().with_nullable(true));
        }
    }
    Ok(added)
}

fn align_batch(batch: &RecordBatch, target: &SchemaRef, first_row: usize) -> Result<RecordBatch> {
    let schema = batch.schema();
    if let Some(unknown) = schema.fields().iter().find(|f| {
        target.column_with_name(f.name()).is_none() && !crate::schema::is_meta_column(f.name())
    }) {
        return Err(HudiError::invalid_input(format!(
            "column {:?} is not in the table's schema (a write adds columns only when asked to: \
             the add-columns option)",
            unknown.name()
        )));
    }
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(target.fields().len());
    for field in target.fields() {
        let column = match batch.column_by_name(field.name()) {
            None => new_null_array(field.data_type(), batch.num_rows()),
            Some(c) if c.data_type() == field.data_type() => c.clone(),
            Some(c) => convert(c, field.data_type()).map_err(|e| {
                HudiError::invalid_input(format!(
                    "column {:?}: {} does not convert to the table's {}{}",
                    field.name(),
                    c.data_type(),
                    field.data_type(),
                    e.map(|(row, why)| format!(" (row {}: {why})", first_row + row))
                        .unwrap_or_default()
                ))
            })?,
        };
        columns.push(column);
    }
    RecordBatch::try_new(target.clone(), columns)
        .map_err(|e| HudiError::invalid_input(format!("input does not fit the table schema: {e}")))
}

/// A conversion that keeps every value (decimals with more fraction digits than the scale
/// are rounded half-up, as Spark assigns them), or the first row that does not convert.
fn convert(
    column: &ArrayRef,
    to: &DataType,
) -> std::result::Result<ArrayRef, Option<(usize, String)>> {
    let lossless = matches!(
        (column.data_type(), to),
        (
            DataType::Int8 | DataType::Int16,
            DataType::Int32 | DataType::Int64
        ) | (DataType::Int32, DataType::Int64)
            | (DataType::Float32, DataType::Float64)
            | (DataType::LargeUtf8 | DataType::Utf8View, DataType::Utf8)
            | (
                DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_),
                DataType::Binary
            )
            | (DataType::Timestamp(_, _), DataType::Timestamp(_, _))
            | (DataType::Decimal128(_, _), DataType::Decimal128(_, _))
            | (
                DataType::Int64 | DataType::Int32 | DataType::Utf8,
                DataType::Decimal128(_, _)
            )
            | (DataType::Utf8, DataType::Date32 | DataType::Timestamp(_, _))
            | (
                DataType::Utf8,
                DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
            )
            | (DataType::Int64, DataType::Int32)
            | (DataType::Struct(_), DataType::Struct(_))
            | (DataType::List(_), DataType::List(_))
            | (DataType::Map(_, _), DataType::Map(_, _))
            | (DataType::Null, _)
    );
    if !lossless {
        return Err(None);
    }
    let options = arrow_cast::CastOptions {
        safe: true,
        ..Default::default()
    };
    let cast = arrow_cast::cast_with_options(column, to, &options)
        .map_err(|e| Some((0, e.to_string())))?;
    // A value that does not fit turns into a null under safe casting: refuse it by row.
    if let Some(row) = (0..column.len()).find(|&r| column.is_valid(r) && cast.is_null(r)) {
        return Err(Some((row, "value out of range".into())));
    }
    Ok(cast)
}

/// Keys and partition paths of every row; of rows sharing a key (and partition, for a
/// non-global index) the one the table's ordering rule picks survives, later rows winning
/// ties (Hudi's pre-combine).
pub(crate) fn keyed_rows(
    input: &RecordBatch,
    keygen: &KeyGen,
    config: &TableConfig,
    rule: MergeRule,
) -> Result<KeyedRows> {
    let ordering: Vec<ArrayRef> = config
        .ordering_fields
        .iter()
        .filter_map(|f| input.column_by_name(f).cloned())
        .collect();
    let by_event_time =
        rule == MergeRule::EventTime && ordering.len() == config.ordering_fields.len();
    let mut winner: HashMap<String, usize> = HashMap::new();
    let mut rows: Vec<(String, String, usize)> = Vec::with_capacity(input.num_rows());
    let mut deduplicated = 0;
    let hfile_keys = HFileKeys::of(config);
    for row in 0..input.num_rows() {
        let key = keygen.record_key(input, row)?;
        let partition = keygen.partition_path(input, row)?;
        hfile_keys.check(&key, &partition, row)?;
        match winner.get(&key) {
            None => {
                winner.insert(key.clone(), rows.len());
                rows.push((key, partition, row));
            }
            Some(&slot) => {
                deduplicated += 1;
                let previous = rows[slot].2;
                let newer_wins = !by_event_time
                    || compare_keys(&key_of(&ordering, row), &key_of(&ordering, previous))
                        .is_none_or(|o| o.is_ge());
                if newer_wins {
                    rows[slot] = (key, partition, row);
                }
            }
        }
    }
    Ok(KeyedRows { rows, deduplicated })
}

/// Which of a row's names become metadata-table HFile row keys, whose length HFile caps:
/// refused up front, not met when the metadata table is built after the data files.
struct HFileKeys {
    record_key: bool,
    partition: bool,
}

impl HFileKeys {
    fn of(config: &TableConfig) -> HFileKeys {
        let has = |p: &str| config.metadata_partitions.iter().any(|q| q == p);
        HFileKeys {
            record_key: has("record_index"),
            partition: has("files"),
        }
    }

    fn check(&self, key: &str, partition: &str, row: usize) -> Result<()> {
        let most = crate::hfile::writer::MAX_ROW_LEN;
        let too_long = |what: &str, len: usize| {
            HudiError::invalid_input(format!(
                "row {row}: the {what} is {len} bytes; the metadata table holds at most {most} \
                 (an HFile row key)"
            ))
        };
        if self.record_key && key.len() > most {
            return Err(too_long("record key", key.len()));
        }
        if self.partition && partition.len() > most {
            return Err(too_long("partition path", partition.len()));
        }
        Ok(())
    }
}
