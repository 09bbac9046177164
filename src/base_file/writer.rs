//! Writes one Hudi base file: the rows of a batch as Parquet, typed as parquet-avro types
//! the table's Avro schema (what Spark and Java Hudi readers expect), with the footer keys a
//! Java writer leaves (docs/hudi-format.md §4.4): the Avro schema, `writer.model.name`, and with a
//! bloom filter the filter, its type code and the min/max record key.
//!
//! Known differences from a parquet-avro file: lists are written in Parquet's 3-level form
//! (`list` / element) where parquet-avro writes the legacy 2-level one (`repeated group
//! array`), and maps lack the legacy `MAP_KEY_VALUE` annotation; readers take both. Float and
//! double statistics are declared in the type-defined order parquet-mr writes, not arrow-rs'
//! `IEEE_754_TOTAL_ORDER`, which Hudi 1.1's parquet-mr does not know.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use bytes::Bytes;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::{Compression, GzipLevel, LogicalType, Type as PhysicalType, ZstdLevel};
use parquet::file::metadata::{KeyValue, ParquetMetaData};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::schema::types::{SchemaDescriptor, Type, TypePtr};
use serde_json::Value as Json;

use crate::error::{HudiError, Result};
use crate::index::bloom::{self, BloomFilter, BloomType};
use crate::value::Value;

/// Footer keys of a Java-written base file.
pub const AVRO_SCHEMA_KEY: &str = "parquet.avro.schema";
pub const WRITER_MODEL_KEY: &str = "writer.model.name";
pub const MIN_RECORD_KEY: &str = "hoodie_min_record_key";
pub const MAX_RECORD_KEY: &str = "hoodie_max_record_key";

/// Java's defaults: `hoodie.parquet.block.size` (120 MB), `hoodie.parquet.page.size` (1 MB).
pub const DEFAULT_ROW_GROUP_BYTES: usize = 120 * 1024 * 1024;
pub const DEFAULT_PAGE_BYTES: usize = 1024 * 1024;
/// Java's default `hoodie.parquet.compression.codec`.
pub const DEFAULT_COMPRESSION: &str = "gzip";

const META_COLUMNS: [&str; 5] = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
];

#[derive(Debug, Clone)]
pub struct BaseFileSpec {
    /// The table's Avro schema with the meta fields, stored as `parquet.avro.schema`.
    pub avro_schema: String,
    /// `hoodie.parquet.compression.codec`: gzip, snappy, zstd or uncompressed/none.
    pub compression: String,
    /// `None` writes no filter and, as Java, no min/max record key.
    pub bloom: Option<BloomSpec>,
    pub max_row_group_bytes: usize,
    pub page_bytes: usize,
}

impl BaseFileSpec {
    /// Java's defaults for everything but the schema.
    pub fn new(avro_schema: impl Into<String>) -> BaseFileSpec {
        BaseFileSpec {
            avro_schema: avro_schema.into(),
            compression: DEFAULT_COMPRESSION.to_string(),
            bloom: Some(BloomSpec::default()),
            max_row_group_bytes: DEFAULT_ROW_GROUP_BYTES,
            page_bytes: DEFAULT_PAGE_BYTES,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomSpec {
    pub kind: BloomType,
    pub num_entries: usize,
    pub fpp: f64,
    pub max_entries: usize,
}

impl Default for BloomSpec {
    fn default() -> BloomSpec {
        BloomSpec {
            kind: bloom::DEFAULT_TYPE,
            num_entries: bloom::DEFAULT_NUM_ENTRIES,
            fpp: bloom::DEFAULT_FPP,
            max_entries: bloom::DEFAULT_MAX_ENTRIES,
        }
    }
}

#[derive(Debug, Clone)]
pub struct WrittenBaseFile {
    pub bytes: Bytes,
    pub num_rows: u64,
    pub min_record_key: Option<String>,
    pub max_record_key: Option<String>,
    pub columns: Vec<ColumnRange>,
}

/// What the metadata table's `column_stats` partition keeps of one column of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnRange {
    pub column: String,
    pub min: Option<Value>,
    pub max: Option<Value>,
    pub null_count: u64,
    pub value_count: u64,
    pub total_size: u64,
    pub total_uncompressed_size: u64,
}

/// Writes `batch` (the five meta columns, then the data columns in table-schema order) as
/// one base file.
pub fn write_base_file(batch: &RecordBatch, spec: &BaseFileSpec) -> Result<WrittenBaseFile> {
    let arrow_schema = batch.schema();
    for (i, name) in META_COLUMNS.iter().enumerate() {
        let ok = arrow_schema
            .fields()
            .get(i)
            .is_some_and(|f| f.name() == name && f.data_type() == &DataType::Utf8);
        if !ok {
            return Err(HudiError::invalid(format!(
                "base file batch: column {i} must be the Utf8 meta column {name}"
            )));
        }
    }
    let avro: Json = serde_json::from_str(&spec.avro_schema)
        .map_err(|e| HudiError::invalid(format!("base file Avro schema: {e}")))?;
    let root_name = record_full_name(&avro)?;
    check_against_avro(&avro, batch)?;
    let parquet_schema = parquet_schema(&arrow_schema, &root_name)?;

    let keys = batch.column(2).as_string::<i32>();
    let (mut min_key, mut max_key): (Option<&str>, Option<&str>) = (None, None);
    let mut footer = Vec::new();
    if let Some(b) = &spec.bloom {
        let mut filter = BloomFilter::new(b.kind, b.num_entries, b.fpp, b.max_entries);
        for i in 0..keys.len() {
            if keys.is_null(i) {
                return Err(HudiError::invalid(format!(
                    "base file batch: null _hoodie_record_key at row {i} with a bloom filter"
                )));
            }
            let k = keys.value(i);
            filter.add(k);
            // Java's Avro write support orders keys as `String.compareTo` does (UTF-16).
            if min_key.is_none_or(|m| utf16_less(k, m)) {
                min_key = Some(k);
            }
            if max_key.is_none_or(|m| utf16_less(m, k)) {
                max_key = Some(k);
            }
        }
        // The order of a Java-written footer (a HashMap's), for files that diff cleanly.
        if let (Some(min), Some(_)) = (min_key, max_key) {
            footer.push(kv(MIN_RECORD_KEY, min));
        }
        footer.push(kv(bloom::FOOTER_KEY, &filter.serialize()));
        if let (Some(_), Some(max)) = (min_key, max_key) {
            footer.push(kv(MAX_RECORD_KEY, max));
        }
        // Java writes the type code for dynamic filters only; readers take SIMPLE without.
        if b.kind == BloomType::DynamicV0 {
            footer.push(kv(bloom::TYPE_CODE_KEY, filter.type_code()));
        }
    }
    footer.push(kv(WRITER_MODEL_KEY, "avro"));
    footer.push(kv(AVRO_SCHEMA_KEY, &spec.avro_schema));

    let props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(compression(&spec.compression)?)
        .set_max_row_group_bytes(Some(spec.max_row_group_bytes.max(1)))
        .set_max_row_group_row_count(None)
        .set_data_page_size_limit(spec.page_bytes.max(1))
        .set_dictionary_page_size_limit(spec.page_bytes.max(1))
        .set_statistics_enabled(EnabledStatistics::Page)
        // Exact bounds (arrow-rs truncates to 64 bytes by default): column_stats and
        // readers' pruning take them as the true min/max, as parquet-mr's are.
        .set_statistics_truncate_length(None)
        .set_key_value_metadata(Some(footer))
        .build();
    let options = parquet::arrow::arrow_writer::ArrowWriterOptions::new()
        .with_properties(props)
        // parquet-mr files carry no Arrow schema; readers type columns from Parquet's.
        .with_skip_arrow_metadata(true)
        .with_parquet_schema(parquet_schema);
    let werr =
        |e: parquet::errors::ParquetError| HudiError::invalid(format!("writing base file: {e}"));
    let mut writer = ArrowWriter::try_new_with_options(Vec::new(), arrow_schema.clone(), options)
        .map_err(werr)?;
    writer.write(batch).map_err(werr)?;
    let metadata = writer.finish().map_err(werr)?;
    let mut file = std::mem::take(writer.inner_mut());
    type_ordered_floats(&mut file)?;
    let bytes = Bytes::from(file);
    let columns = column_ranges(&batch.schema(), &metadata)?;
    Ok(WrittenBaseFile {
        bytes,
        num_rows: batch.num_rows() as u64,
        min_record_key: min_key.map(str::to_string),
        max_record_key: max_key.map(str::to_string),
        columns,
    })
}

/// Declares float and double statistics in Parquet's type-defined order, which every reader
/// knows ([`super::thrift::type_defined_float_orders`]); the values are the same.
fn type_ordered_floats(file: &mut [u8]) -> Result<()> {
    let bad = |e: String| HudiError::invalid(format!("written base file footer: {e}"));
    let n = file.len();
    let len = file
        .get(n.saturating_sub(8)..n.saturating_sub(4))
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map(|b| u32::from_le_bytes(b) as usize)
        .filter(|len| len + 8 <= n)
        .ok_or_else(|| bad("no footer length".into()))?;
    super::thrift::type_defined_float_orders(&mut file[n - 8 - len..n - 8]).map_err(bad)?;
    Ok(())
}

fn kv(key: &str, value: &str) -> KeyValue {
    KeyValue::new(key.to_string(), value.to_string())
}

fn utf16_less(a: &str, b: &str) -> bool {
    a.encode_utf16().lt(b.encode_utf16())
}

/// Java codec names, as `CompressionCodecName.fromConf` reads them. LZ4, LZO and Brotli are
/// not offered: their Hadoop framings are not something we can vouch for.
pub(crate) fn compression(codec: &str) -> Result<Compression> {
    Ok(match codec.to_ascii_lowercase().as_str() {
        "gzip" => Compression::GZIP(GzipLevel::default()),
        "snappy" => Compression::SNAPPY,
        // parquet-mr's default zstd level.
        "zstd" => Compression::ZSTD(ZstdLevel::try_new(3).unwrap_or_default()),
        "uncompressed" | "none" | "" => Compression::UNCOMPRESSED,
        other => {
            return Err(HudiError::unsupported(format!(
                "Parquet compression codec {other:?}"
            )))
        }
    })
}

/// parquet-avro names the root message after the record's full name.
fn record_full_name(avro: &Json) -> Result<String> {
    let name = avro
        .get("name")
        .and_then(Json::as_str)
        .ok_or_else(|| HudiError::invalid("base file Avro schema is not a named record"))?;
    Ok(match avro.get("namespace").and_then(Json::as_str) {
        Some(ns) if !ns.is_empty() && !name.contains('.') => format!("{ns}.{name}"),
        _ => name.to_string(),
    })
}

/// The batch's columns are the Avro record's fields, in order, and every decimal column is
/// an Avro `fixed` of the size Parquet will be given (what Spark writes).
fn check_against_avro(avro: &Json, batch: &RecordBatch) -> Result<()> {
    let fields = avro
        .get("fields")
        .and_then(Json::as_array)
        .ok_or_else(|| HudiError::invalid("base file Avro schema has no fields"))?;
    let schema = batch.schema();
    let names: Vec<&str> = fields
        .iter()
        .map(|f| f.get("name").and_then(Json::as_str).unwrap_or(""))
        .collect();
    let columns: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    if names != columns {
        return Err(HudiError::invalid(format!(
            "base file batch columns {columns:?} are not the Avro schema's fields {names:?}"
        )));
    }
    for (field, avro_field) in schema.fields().iter().zip(fields) {
        let precision = match field.data_type() {
            DataType::Decimal32(p, _)
            | DataType::Decimal64(p, _)
            | DataType::Decimal128(p, _)
            | DataType::Decimal256(p, _) => p,
            _ => continue,
        };
        let ty = non_null_branch(avro_field.get("type"));
        let size = ty
            .filter(|t| t.get("type").and_then(Json::as_str) == Some("fixed"))
            .and_then(|t| t.get("size"))
            .and_then(Json::as_u64);
        if size != Some(decimal_bytes(*precision) as u64) {
            return Err(HudiError::unsupported(format!(
                "decimal column {} as Avro {}: only `fixed` of {} bytes is written",
                field.name(),
                ty.map(|t| t.to_string()).unwrap_or_default(),
                decimal_bytes(*precision)
            )));
        }
    }
    Ok(())
}

/// The type of a nullable union's value, or the type itself.
fn non_null_branch(ty: Option<&Json>) -> Option<&Json> {
    match ty? {
        Json::Array(branches) => branches.iter().find(|b| b.as_str() != Some("null")),
        t => Some(t),
    }
}

/// The fewest bytes holding any unscaled value of `precision` digits, signed: Spark's
/// `minBytesForPrecision`, and the size arrow-rs writes a decimal's bytes at.
fn decimal_bytes(precision: u8) -> usize {
    let max = 10u128.saturating_pow(precision.min(38) as u32) - 1;
    (1..=16usize)
        .find(|n| (1u128 << (8 * n - 1)) > max)
        .unwrap_or(16)
}

/// Arrow's Parquet types, but decimals as `FIXED_LEN_BYTE_ARRAY` (parquet-avro's mapping of
/// Avro `fixed` decimals; arrow-rs would use INT32/INT64 for small precisions).
fn parquet_schema(arrow: &arrow_schema::Schema, root: &str) -> Result<SchemaDescriptor> {
    let converted = ArrowSchemaConverter::new()
        .schema_root(root)
        .convert(arrow)
        .map_err(|e| HudiError::unsupported(format!("base file column types: {e}")))?;
    let fixed = fixed_decimals(&converted.root_schema_ptr())?;
    Ok(SchemaDescriptor::new(fixed))
}

fn fixed_decimals(t: &TypePtr) -> Result<TypePtr> {
    let info = t.get_basic_info();
    let err = |e: parquet::errors::ParquetError| {
        HudiError::unsupported(format!("base file column {}: {e}", info.name()))
    };
    if t.is_group() {
        let fields = t
            .get_fields()
            .iter()
            .map(fixed_decimals)
            .collect::<Result<Vec<_>>>()?;
        let mut b = Type::group_type_builder(info.name())
            .with_fields(fields)
            .with_logical_type(info.logical_type_ref().cloned())
            .with_converted_type(info.converted_type())
            .with_id(info.has_id().then(|| info.id()));
        if info.has_repetition() {
            b = b.with_repetition(info.repetition());
        }
        return Ok(Arc::new(b.build().map_err(err)?));
    }
    let is_decimal = matches!(info.logical_type_ref(), Some(LogicalType::Decimal { .. }));
    let physical = t.get_physical_type();
    if !is_decimal || physical == PhysicalType::FIXED_LEN_BYTE_ARRAY {
        return Ok(t.clone());
    }
    let precision = t.get_precision();
    let ty = Type::primitive_type_builder(info.name(), PhysicalType::FIXED_LEN_BYTE_ARRAY)
        .with_repetition(info.repetition())
        .with_logical_type(info.logical_type_ref().cloned())
        .with_precision(precision)
        .with_scale(t.get_scale())
        .with_length(decimal_bytes(precision.clamp(0, 38) as u8) as i32)
        .with_id(info.has_id().then(|| info.id()))
        .build()
        .map_err(err)?;
    Ok(Arc::new(ty))
}

/// Per top-level primitive column, from the written footer: bounds over the row groups,
/// null and value counts, and the column chunks' sizes.
fn column_ranges(
    arrow: &arrow_schema::Schema,
    metadata: &ParquetMetaData,
) -> Result<Vec<ColumnRange>> {
    let descr = metadata.file_metadata().schema_descr();
    let groups = metadata.row_groups();
    let mut out = Vec::new();
    for field in arrow.fields() {
        if field.data_type().is_nested() {
            continue;
        }
        let name = field.name();
        let Some(leaf) = (0..descr.num_columns()).find(|&i| {
            let p = descr.column(i).path().parts().to_vec();
            p.len() == 1 && p[0] == *name
        }) else {
            continue;
        };
        let conv = StatisticsConverter::try_new(name, arrow, descr)
            .map_err(|e| HudiError::invalid(format!("statistics of {name}: {e}")))?;
        let serr = |e: parquet::errors::ParquetError| {
            HudiError::invalid(format!("statistics of {name}: {e}"))
        };
        let mins = conv.row_group_mins(groups.iter()).map_err(serr)?;
        let maxes = conv.row_group_maxes(groups.iter()).map_err(serr)?;
        let nulls = conv.row_group_null_counts(groups.iter()).map_err(serr)?;
        let mut range = ColumnRange {
            column: name.clone(),
            min: None,
            max: None,
            null_count: nulls.iter().flatten().sum(),
            value_count: 0,
            total_size: 0,
            total_uncompressed_size: 0,
        };
        for (g, group) in groups.iter().enumerate() {
            let chunk = group.column(leaf);
            range.value_count += chunk.num_values().max(0) as u64;
            range.total_size += chunk.compressed_size().max(0) as u64;
            range.total_uncompressed_size += chunk.uncompressed_size().max(0) as u64;
            let lo = Value::from_array(mins.as_ref(), g);
            let hi = Value::from_array(maxes.as_ref(), g);
            if lo != Value::Null
                && range
                    .min
                    .as_ref()
                    .is_none_or(|m| lo.compare(m).is_some_and(|o| o.is_lt()))
            {
                range.min = Some(lo);
            }
            if hi != Value::Null
                && range
                    .max
                    .as_ref()
                    .is_none_or(|m| hi.compare(m).is_some_and(|o| o.is_gt()))
            {
                range.max = Some(hi);
            }
        }
        out.push(range);
    }
    Ok(out)
}

/// [`column_ranges`] of a written file, from its footer alone (its Arrow schema derived from
/// the Parquet one).
pub fn footer_column_ranges(metadata: &ParquetMetaData, path: &str) -> Result<Vec<ColumnRange>> {
    let file = metadata.file_metadata();
    let arrow =
        parquet::arrow::parquet_to_arrow_schema(file.schema_descr(), file.key_value_metadata())
            .map_err(|e| HudiError::corrupt_by(path, "Parquet schema", e))?;
    column_ranges(&arrow, metadata)
}

/// Per top-level primitive column, from the rows themselves, as Java's append handle
/// collects them for a log file: bounds, null and value counts, and sizes of zero (a log
/// block's sizes are not comparable with Parquet's).
pub fn record_column_ranges(batch: &RecordBatch) -> Vec<ColumnRange> {
    let schema = batch.schema();
    let mut out = Vec::new();
    for (field, array) in schema.fields().iter().zip(batch.columns()) {
        if field.data_type().is_nested() {
            continue;
        }
        let mut range = ColumnRange {
            column: field.name().clone(),
            min: None,
            max: None,
            null_count: array.null_count() as u64,
            value_count: array.len() as u64,
            total_size: 0,
            total_uncompressed_size: 0,
        };
        for row in 0..array.len() {
            let v = Value::from_array(array.as_ref(), row);
            if v == Value::Null {
                continue;
            }
            let below = |m: &Value| v.compare(m).is_some_and(|o| o.is_lt());
            let above = |m: &Value| v.compare(m).is_some_and(|o| o.is_gt());
            if range.min.as_ref().is_none_or(below) {
                range.min = Some(v.clone());
            }
            if range.max.as_ref().is_none_or(above) {
                range.max = Some(v);
            }
        }
        out.push(range);
    }
    out
}

#[cfg(test)]
mod tests;
