//! Batches and schemas across the seam between this crate's arrow and DataFusion's (another
//! major version): the Arrow C data interface, zero-copy both ways. Each side exports its
//! arrays as the C structs and the other imports them; the buffers stay where they are and
//! are released by the side that made them.

use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StructArray};
use arrow_df::array::{Array as DfArray, StructArray as DfStructArray};
use arrow_df::record_batch::{RecordBatch as DfBatch, RecordBatchOptions as DfBatchOptions};
use datafusion::arrow::datatypes::{Schema as DfSchema, SchemaRef as DfSchemaRef};

use crate::error::{HudiError, Result};

fn seam(e: impl std::fmt::Display) -> HudiError {
    HudiError::invalid(format!("Arrow C data interface: {e}"))
}

// SAFETY (both conversions below): `FFI_ArrowArray` and `FFI_ArrowSchema` are the
// `#[repr(C)]` structs of the Arrow C data interface, the same in every arrow major
// (`transmute` checks their sizes at compile time). Moving one from one crate's type to the
// other's moves the ownership of its release callback with it, as the C interface does
// between two libraries.
fn array_to_df(array: arrow_array::ffi::FFI_ArrowArray) -> arrow_df::ffi::FFI_ArrowArray {
    unsafe { std::mem::transmute(array) }
}

fn schema_to_df(schema: arrow_array::ffi::FFI_ArrowSchema) -> arrow_df::ffi::FFI_ArrowSchema {
    unsafe { std::mem::transmute(schema) }
}

fn array_from_df(array: arrow_df::ffi::FFI_ArrowArray) -> arrow_array::ffi::FFI_ArrowArray {
    unsafe { std::mem::transmute(array) }
}

fn schema_from_df(schema: arrow_df::ffi::FFI_ArrowSchema) -> arrow_array::ffi::FFI_ArrowSchema {
    unsafe { std::mem::transmute(schema) }
}

/// This crate's schema as DataFusion's.
pub fn schema_into_df(schema: &arrow_schema::Schema) -> Result<DfSchema> {
    let c = arrow_array::ffi::FFI_ArrowSchema::try_from(schema).map_err(seam)?;
    DfSchema::try_from(&schema_to_df(c)).map_err(seam)
}

/// DataFusion's schema as this crate's.
pub fn schema_from_df_schema(schema: &DfSchema) -> Result<arrow_schema::Schema> {
    let c = arrow_df::ffi::FFI_ArrowSchema::try_from(schema).map_err(seam)?;
    arrow_schema::Schema::try_from(&schema_from_df(c)).map_err(seam)
}

/// A batch of this crate's as a batch of `schema` (DataFusion's; the same columns).
pub fn batch_into_df(batch: RecordBatch, schema: &DfSchemaRef) -> Result<DfBatch> {
    let rows = batch.num_rows();
    if batch.num_columns() == 0 {
        let options = DfBatchOptions::new().with_row_count(Some(rows));
        return DfBatch::try_new_with_options(schema.clone(), vec![], &options).map_err(seam);
    }
    let data = StructArray::from(batch).into_data();
    let (array, c_schema) = arrow_array::ffi::to_ffi(&data).map_err(seam)?;
    // SAFETY: the two structs were just exported together by `to_ffi`.
    let imported = unsafe { arrow_df::ffi::from_ffi(array_to_df(array), &schema_to_df(c_schema)) }
        .map_err(seam)?;
    let columns = DfStructArray::from(imported).columns().to_vec();
    DfBatch::try_new(schema.clone(), columns).map_err(seam)
}

/// A DataFusion batch as one of this crate's.
pub fn batch_from_df(batch: DfBatch) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let schema = Arc::new(schema_from_df_schema(batch.schema().as_ref())?);
    if batch.num_columns() == 0 {
        let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
        return RecordBatch::try_new_with_options(schema, vec![], &options).map_err(seam);
    }
    let data = DfStructArray::from(batch).into_data();
    let (array, c_schema) = arrow_df::ffi::to_ffi(&data).map_err(seam)?;
    // SAFETY: the two structs were just exported together by `to_ffi`.
    let imported =
        unsafe { arrow_array::ffi::from_ffi(array_from_df(array), &schema_from_df(c_schema)) }
            .map_err(seam)?;
    let columns = StructArray::from(imported).columns().to_vec();
    RecordBatch::try_new(schema, columns).map_err(seam)
}

/// An array of this crate's as DataFusion's.
pub fn array_into_df(array: arrow_array::ArrayRef) -> Result<arrow_df::array::ArrayRef> {
    let (c_array, c_schema) = arrow_array::ffi::to_ffi(&array.into_data()).map_err(seam)?;
    // SAFETY: the two structs were just exported together by `to_ffi`.
    let data = unsafe { arrow_df::ffi::from_ffi(array_to_df(c_array), &schema_to_df(c_schema)) }
        .map_err(seam)?;
    Ok(arrow_df::array::make_array(data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    #[test]
    fn a_batch_crosses_the_seam_and_back() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(vec![1, 2, 3])),
                Arc::new(StringArray::from(vec![Some("a"), None, Some("c")])),
            ],
        )
        .unwrap();
        let df_schema = Arc::new(schema_into_df(&schema).unwrap());
        let df = batch_into_df(batch.clone(), &df_schema).unwrap();
        assert_eq!(df.num_rows(), 3);
        assert_eq!(df.column(1).null_count(), 1);
        let back = batch_from_df(df).unwrap();
        assert_eq!(back, batch);
    }
}
