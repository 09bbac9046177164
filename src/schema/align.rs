//! Schema evolution at read time: every batch leaves a reader in the table's current
//! schema — columns matched by name, older types cast (int → long, ...), columns a file
//! lacks filled with nulls, and partition columns that were not stored
//! (`drop.partition.columns`) filled from the partition path.

use std::sync::Arc;

use arrow_array::{new_null_array, ArrayRef, RecordBatch, StringArray};
use arrow_schema::{Schema, SchemaRef};

use crate::config::TableConfig;
use crate::error::{HudiError, Result};

pub fn to_schema(
    batch: &RecordBatch,
    target: &SchemaRef,
    partition: &str,
    config: &TableConfig,
) -> Result<RecordBatch> {
    if batch.schema().as_ref() == target.as_ref() {
        return Ok(batch.clone());
    }
    let rows = batch.num_rows();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(target.fields().len());
    for field in target.fields() {
        let column = match batch.column_by_name(field.name()) {
            Some(c) if c.data_type() == field.data_type() => c.clone(),
            Some(c) => crate::cast::cast(c.as_ref(), field.data_type(), true).map_err(|e| {
                HudiError::unsupported(format!(
                    "reading column {} stored as {} as the table's {}: {e}",
                    field.name(),
                    c.data_type(),
                    field.data_type()
                ))
            })?,
            None => match partition_value(field.name(), partition, config) {
                Some(v) => crate::keygen::cast_lenient(
                    &StringArray::from(vec![v; rows]),
                    field.data_type(),
                ),
                None => new_null_array(field.data_type(), rows),
            },
        };
        columns.push(column);
    }
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
    RecordBatch::try_new_with_options(target.clone(), columns, &options)
        .map_err(crate::error::malformed_by)
}

/// Partition columns set to the values `partition`'s path holds, where the key generator
/// writes them there as they are (simple, complex) and they convert to the column's type.
/// They differ from a file's only where a global index kept an updated record in its old
/// partition (`hoodie.record.index.update.partition.path=false`); Spark shows the path's.
pub fn partition_values_from_path(
    batch: &RecordBatch,
    partition: &str,
    config: &TableConfig,
) -> Result<RecordBatch> {
    let Some(values) = crate::keygen::partition_values(partition, config) else {
        return Ok(batch.clone());
    };
    let schema = batch.schema();
    let mut columns = batch.columns().to_vec();
    let mut changed = false;
    for (field, value) in values {
        let Ok(i) = schema.index_of(&field) else {
            continue;
        };
        let typed = crate::keygen::cast_lenient(
            &StringArray::from(vec![value.clone()]),
            schema.field(i).data_type(),
        );
        // A path value the column's type cannot take (a formatted timestamp, say) says
        // nothing about the file's: keep those.
        if value.is_some() && typed.is_null(0) {
            continue;
        }
        let scalar = arrow_array::Scalar::new(typed.clone());
        let differs = crate::compare::distinct(columns[i].as_ref(), &scalar)
            .map_err(crate::error::malformed_by)?;
        if differs.true_count() == 0 {
            continue;
        }
        // The value repeated, parsed per row: a `take` on a dynamic array would link arrow's
        // comparators for every type (run-end arrays) into the read module.
        columns[i] = crate::keygen::cast_lenient(
            &StringArray::from(vec![value; batch.num_rows()]),
            schema.field(i).data_type(),
        );
        changed = true;
    }
    if !changed {
        return Ok(batch.clone());
    }
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(schema, columns, &options).map_err(crate::error::malformed_by)
}

fn partition_value(column: &str, partition: &str, config: &TableConfig) -> Option<String> {
    crate::keygen::partition_values(partition, config)?
        .into_iter()
        .find(|(f, _)| f == column)?
        .1
}

/// Keeps the output columns, in output order.
pub fn project(batch: &RecordBatch, output: &SchemaRef) -> Result<RecordBatch> {
    let indices: Result<Vec<usize>> = output
        .fields()
        .iter()
        .map(|f| {
            batch
                .schema()
                .index_of(f.name())
                .map_err(|_| HudiError::invalid(format!("missing column {}", f.name())))
        })
        .collect();
    let projected = batch
        .project(&indices?)
        .map_err(crate::error::malformed_by)?;
    if projected.schema().as_ref() == output.as_ref() {
        return Ok(projected);
    }
    RecordBatch::try_new(output.clone(), projected.columns().to_vec())
        .map_err(crate::error::malformed_by)
}

/// All top-level fields nullable: evolution may add nulls to any column.
pub fn nullable(schema: &Schema) -> SchemaRef {
    let fields: Vec<_> = schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}
