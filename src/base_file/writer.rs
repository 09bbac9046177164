//! Writes one Hudi base file: the rows of a batch as Parquet, typed as parquet-avro types
//! the table's Avro schema (what Spark and Java Hudi readers expect), with the footer keys a
//! Java writer leaves (docs/hudi-format.md §4.4): the Avro schema, `writer.model.name`, and with a
//! bloom filter the filter, its type code and the min/max record key.
//!
//! Known differences from a parquet-avro file: `bytes` decimals are fixed-length (why: in
//! `writer/decimal.rs`); lists are written in Parquet's 3-level form (`list` / element) where
//! parquet-avro writes the legacy 2-level one (`repeated group array`), and maps lack the
//! legacy `MAP_KEY_VALUE` annotation; readers take both. Float and double statistics are
//! declared in the type-defined order parquet-mr writes, not arrow-rs' `IEEE_754_TOTAL_ORDER`,
//! which Hudi 1.1's parquet-mr does not know.

use arrow_array::cast::AsArray;
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use bytes::Bytes;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::metadata::{KeyValue, ParquetMetaData};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::schema::types::SchemaDescriptor;
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
    let sizes = decimal::sizes(&avro, &arrow_schema)?;
    let parquet_schema = parquet_schema(&arrow_schema, &root_name, &sizes)?;
    let encoded = decimal::encode(batch, &sizes)?;

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
    let (file, metadata) = encode_parquet(&encoded, parquet_schema, footer, spec)?;
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

/// Rows whose columns are an Avro record's fields, as parquet-avro writes them (footer
/// with the Avro schema and writer model, no Arrow schema): files Java reads through its
/// Avro Parquet reader, such as the LSM timeline's.
pub fn write_avro_parquet(batch: &RecordBatch, avro_schema: &str, codec: &str) -> Result<Bytes> {
    let avro: Json = serde_json::from_str(avro_schema)
        .map_err(|e| HudiError::invalid(format!("Parquet file Avro schema: {e}")))?;
    check_against_avro(&avro, batch)?;
    let sizes = decimal::sizes(&avro, &batch.schema())?;
    let parquet_schema = parquet_schema(&batch.schema(), &record_full_name(&avro)?, &sizes)?;
    let footer = vec![
        kv(WRITER_MODEL_KEY, "avro"),
        kv(AVRO_SCHEMA_KEY, avro_schema),
    ];
    let mut spec = BaseFileSpec::new(avro_schema);
    spec.compression = codec.to_string();
    let encoded = decimal::encode(batch, &sizes)?;
    let (file, _) = encode_parquet(&encoded, parquet_schema, footer, &spec)?;
    Ok(Bytes::from(file))
}

/// The Parquet bytes of an encoded batch: parquet-mr's page and statistics settings.
fn encode_parquet(
    encoded: &RecordBatch,
    parquet_schema: SchemaDescriptor,
    footer: Vec<KeyValue>,
    spec: &BaseFileSpec,
) -> Result<(Vec<u8>, ParquetMetaData)> {
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
        |e: parquet::errors::ParquetError| HudiError::invalid(format!("writing Parquet file: {e}"));
    let mut writer =
        ArrowWriter::try_new_with_options(Vec::new(), encoded.schema(), options).map_err(werr)?;
    writer.write(encoded).map_err(werr)?;
    let metadata = writer.finish().map_err(werr)?;
    let mut file = std::mem::take(writer.inner_mut());
    type_ordered_floats(&mut file)?;
    Ok((file, metadata))
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

/// The batch's columns are the Avro record's fields, in order.
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
    Ok(())
}

/// Arrow's Parquet types, but decimals fixed-length at their sizes (arrow-rs would use
/// INT32/INT64 for small precisions).
fn parquet_schema(
    arrow: &arrow_schema::Schema,
    root: &str,
    decimal_sizes: &[usize],
) -> Result<SchemaDescriptor> {
    let converted = ArrowSchemaConverter::new()
        .schema_root(root)
        .convert(arrow)
        .map_err(|e| HudiError::unsupported(format!("base file column types: {e}")))?;
    let mut next = decimal_sizes.iter().copied();
    let root = decimal::parquet_type(&converted.root_schema_ptr(), &mut next)?;
    Ok(SchemaDescriptor::new(root))
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
    let mut ranges = RecordColumnRanges::default();
    ranges.add(batch);
    ranges.finish()
}

/// [`record_column_ranges`] of a file's rows handed over in batches (of one schema): the
/// same ranges, without the rows in one batch.
#[derive(Default)]
pub struct RecordColumnRanges(Vec<ColumnRange>);

impl RecordColumnRanges {
    pub fn add(&mut self, batch: &RecordBatch) {
        let schema = batch.schema();
        let columns = (schema.fields().iter().zip(batch.columns()))
            .filter(|(field, _)| !field.data_type().is_nested());
        for (i, (field, array)) in columns.enumerate() {
            if self.0.len() == i {
                self.0.push(ColumnRange {
                    column: field.name().clone(),
                    min: None,
                    max: None,
                    null_count: 0,
                    value_count: 0,
                    total_size: 0,
                    total_uncompressed_size: 0,
                });
            }
            let range = &mut self.0[i];
            range.null_count += array.null_count() as u64;
            range.value_count += array.len() as u64;
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
        }
    }

    pub fn finish(self) -> Vec<ColumnRange> {
        self.0
    }
}

mod decimal;
#[cfg(test)]
mod tests;
