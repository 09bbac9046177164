//! Map columns read as lists of key/value structs, then checked into maps by us.
//!
//! Why: the `parquet` crate's `MapArrayReader::consume_batch` (still in 60.1, the newest
//! release) unwraps the error of the list reader beneath it, so a damaged map column
//! (keys and values of different lengths, broken levels, any error of a nested value)
//! panics — an abort in wasm. Checking levels before the crate decodes would have to
//! foresee every error of every nested reader; instead the crate never builds a map reader:
//! the schema it reads has each `MAP` group relabelled `LIST` (same levels, so the same
//! pages decode to the same values), its list and struct readers return their errors, and
//! [`present`] turns the lists back into maps with arrow's validating constructors.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, GenericListArray, MapArray, OffsetSizeTrait, RecordBatch,
    RecordBatchOptions, StructArray,
};
use arrow_schema::{ArrowError, DataType, Field, FieldRef, Fields, Schema};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::{encode_arrow_schema, ARROW_SCHEMA_META_KEY};
use parquet::basic::{ConvertedType, LogicalType};
use parquet::errors::ParquetError;
use parquet::file::metadata::{KeyValue, RowGroupMetaData};
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};

use crate::error::{HudiError, Result};

/// The metadata the crate reads a file with when it has map columns (`None` without: the
/// file is read as it is). `presented` is the file's own reader metadata.
pub(super) fn reading_metadata(
    presented: &ArrowReaderMetadata,
    path: &str,
) -> Result<Option<ArrowReaderMetadata>> {
    if !presented
        .schema()
        .fields()
        .iter()
        .any(|f| has_map(f.data_type()))
    {
        return Ok(None);
    }
    let parquet = presented.metadata();
    let file = parquet.file_metadata();
    let root = relabel_maps(&file.schema_descr().root_schema_ptr())
        .map_err(|e| HudiError::corrupt(path, format!("bad Parquet schema: {e}")))?;
    let descr = Arc::new(SchemaDescriptor::new(root));
    // The file's own Arrow schema, if any, would hint maps where lists are now: hint the
    // presented schema with lists instead, so every other column reads as before.
    let mut pairs: Vec<KeyValue> = file
        .key_value_metadata()
        .into_iter()
        .flatten()
        .filter(|kv| kv.key != ARROW_SCHEMA_META_KEY)
        .cloned()
        .collect();
    let hint = Schema::new_with_metadata(
        lists_for_maps(presented.schema().fields()),
        presented.schema().metadata().clone(),
    );
    pairs.push(KeyValue::new(
        ARROW_SCHEMA_META_KEY.to_string(),
        encode_arrow_schema(&hint),
    ));
    let groups = parquet
        .row_groups()
        .iter()
        .map(|g| with_schema(g, &descr))
        .collect::<std::result::Result<Vec<_>, ParquetError>>()
        .map_err(|e| super::parquet_err(path, e))?;
    let metadata = super::rebuilt(parquet, pairs, descr, groups);
    let reading = ArrowReaderMetadata::try_new(Arc::new(metadata), ArrowReaderOptions::new())
        .map_err(|e| super::parquet_err(path, e))?;
    // The point of it all: no map type left for the crate to build a map reader for.
    if reading
        .schema()
        .fields()
        .iter()
        .any(|f| has_map(f.data_type()))
    {
        return Err(HudiError::corrupt(
            path,
            "a map column that cannot be read as a list of entries",
        ));
    }
    Ok(Some(reading))
}

fn with_schema(
    group: &RowGroupMetaData,
    descr: &Arc<SchemaDescriptor>,
) -> parquet::errors::Result<RowGroupMetaData> {
    let mut b = RowGroupMetaData::builder(descr.clone())
        .set_num_rows(group.num_rows())
        .set_total_byte_size(group.total_byte_size())
        .set_sorting_columns(group.sorting_columns().cloned())
        .set_column_metadata(group.columns().to_vec());
    if let Some(o) = group.ordinal() {
        b = b.set_ordinal(o);
    }
    if let Some(o) = group.file_offset() {
        b = b.set_file_offset(o);
    }
    b.build()
}

/// The schema with every group the crate reads as a map (annotated `MAP` or
/// `MAP_KEY_VALUE`, one repeated child of key and value) annotated `LIST` instead: a list
/// whose repeated child has two fields reads that child as its struct element, at the
/// same repetition and definition levels as the map's entries.
fn relabel_maps(t: &TypePtr) -> parquet::errors::Result<TypePtr> {
    if t.is_primitive() {
        return Ok(t.clone());
    }
    let fields = t
        .get_fields()
        .iter()
        .map(relabel_maps)
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    let info = t.get_basic_info();
    let is_map = matches!(
        info.converted_type(),
        ConvertedType::MAP | ConvertedType::MAP_KEY_VALUE
    ) && matches!(&fields[..], [entries] if entries.is_group() && entries.get_fields().len() == 2);
    let (converted, logical) = if is_map {
        (ConvertedType::LIST, Some(LogicalType::List))
    } else {
        (info.converted_type(), info.logical_type_ref().cloned())
    };
    let mut b = Type::group_type_builder(info.name())
        .with_converted_type(converted)
        .with_logical_type(logical)
        .with_fields(fields)
        .with_id(info.has_id().then(|| info.id()));
    if info.has_repetition() {
        b = b.with_repetition(info.repetition());
    }
    Ok(Arc::new(b.build()?))
}

fn has_map(t: &DataType) -> bool {
    match t {
        DataType::Map(..) => true,
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _) => has_map(f.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| has_map(f.data_type())),
        _ => false,
    }
}

fn lists_for_maps(fields: &Fields) -> Fields {
    fields
        .iter()
        .map(|f| {
            Arc::new(
                f.as_ref()
                    .clone()
                    .with_data_type(list_for_map(f.data_type())),
            )
        })
        .collect()
}

fn list_for_map(t: &DataType) -> DataType {
    let item = |f: &FieldRef| {
        Arc::new(
            f.as_ref()
                .clone()
                .with_data_type(list_for_map(f.data_type())),
        )
    };
    match t {
        DataType::Map(entries, _) => DataType::List(item(entries)),
        DataType::List(f) => DataType::List(item(f)),
        DataType::LargeList(f) => DataType::LargeList(item(f)),
        DataType::ListView(f) => DataType::ListView(item(f)),
        DataType::LargeListView(f) => DataType::LargeListView(item(f)),
        DataType::FixedSizeList(f, n) => DataType::FixedSizeList(item(f), *n),
        DataType::Struct(fields) => DataType::Struct(lists_for_maps(fields)),
        other => other.clone(),
    }
}

/// A batch read with [`reading_metadata`] as the file's own `fields` (the projected
/// presented ones) say: lists of entries become maps, checked by arrow's constructors.
pub(super) fn present(batch: RecordBatch, fields: &Fields, path: &str) -> Result<RecordBatch> {
    if !fields.iter().any(|f| has_map(f.data_type())) {
        return Ok(batch);
    }
    let schema = Arc::new(Schema::new_with_metadata(
        fields.clone(),
        batch.schema().metadata().clone(),
    ));
    let columns = batch
        .columns()
        .iter()
        .zip(fields)
        .map(|(c, f)| as_presented(c, f.data_type()))
        .collect::<std::result::Result<Vec<_>, ArrowError>>()
        .and_then(|columns| {
            let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
            RecordBatch::try_new_with_options(schema, columns, &options)
        });
    columns.map_err(|e| HudiError::corrupt(path, format!("bad map column: {e}")))
}

fn as_presented(array: &ArrayRef, target: &DataType) -> std::result::Result<ArrayRef, ArrowError> {
    if !has_map(target) {
        return Ok(array.clone());
    }
    let unexpected = || {
        ArrowError::InvalidArgumentError(format!(
            "read as {}, expected {target}",
            array.data_type()
        ))
    };
    Ok(match target {
        DataType::Map(entries, sorted) => {
            let list = array.as_list_opt::<i32>().ok_or_else(unexpected)?;
            let DataType::Struct(fields) = entries.data_type() else {
                return Err(unexpected());
            };
            let values = list.values().as_struct_opt().ok_or_else(unexpected)?;
            let values = presented_struct(values, fields)?;
            Arc::new(MapArray::try_new(
                entries.clone(),
                list.offsets().clone(),
                values,
                list.nulls().cloned(),
                *sorted,
            )?)
        }
        DataType::List(f) => presented_list::<i32>(array, f).ok_or_else(unexpected)??,
        DataType::LargeList(f) => presented_list::<i64>(array, f).ok_or_else(unexpected)??,
        DataType::FixedSizeList(f, n) => {
            let list = array.as_fixed_size_list_opt().ok_or_else(unexpected)?;
            let values = as_presented(list.values(), f.data_type())?;
            Arc::new(FixedSizeListArray::try_new(
                f.clone(),
                *n,
                values,
                list.nulls().cloned(),
            )?)
        }
        DataType::Struct(fields) => {
            let s = array.as_struct_opt().ok_or_else(unexpected)?;
            Arc::new(presented_struct(s, fields)?)
        }
        _ => return Err(unexpected()),
    })
}

fn presented_struct(
    s: &StructArray,
    fields: &Fields,
) -> std::result::Result<StructArray, ArrowError> {
    if s.num_columns() != fields.len() {
        return Err(ArrowError::InvalidArgumentError(format!(
            "{} fields read, {} expected",
            s.num_columns(),
            fields.len()
        )));
    }
    let columns = s
        .columns()
        .iter()
        .zip(fields)
        .map(|(c, f)| as_presented(c, f.data_type()))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    StructArray::try_new_with_length(fields.clone(), columns, s.nulls().cloned(), s.len())
}

fn presented_list<O: OffsetSizeTrait>(
    array: &ArrayRef,
    item: &Arc<Field>,
) -> Option<std::result::Result<ArrayRef, ArrowError>> {
    let list = array.as_list_opt::<O>()?;
    let built = as_presented(list.values(), item.data_type()).and_then(|values| {
        GenericListArray::<O>::try_new(
            item.clone(),
            list.offsets().clone(),
            values,
            list.nulls().cloned(),
        )
    });
    Some(built.map(|l| Arc::new(l) as ArrayRef))
}
