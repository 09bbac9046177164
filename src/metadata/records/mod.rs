//! Metadata-table values: `HoodieMetadataRecord` Avro binary, decoded with the writer schema
//! stored next to the data (HFile file info `schema`, or a log block's `SCHEMA` header) into
//! typed records (docs/hudi-format.md §8.4–8.10).
//!
//! Column statistics come in two encodings: V1 (table version 8) uses the wrapper that names
//! the type (`DateWrapper`, `DecimalWrapper`, …); V2 (version 9) stores primitives
//! (`IntWrapper`, `BytesWrapper`, …) and says what they mean in `valueType`. Both decode to
//! the same [`Value`].

use std::fmt;
use std::sync::Arc;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value as AvroValue;
use apache_avro::Schema;

use crate::avro::binary::be_i128;
use crate::error::{HudiError, Result};
use crate::hfile::{Cell, HFileReader};
use crate::value::Value;

pub mod encode;
#[cfg(test)]
mod encode_tests;
mod payload;

pub use encode::RecordEncoder;

/// A record's value as a scan hands it over: decoded, or checked and kept as its bytes.
#[allow(clippy::large_enum_variant)] // boxing would cost the decoded path an allocation
pub enum RecordValue {
    Decoded(Result<MetadataPayload>),
    Kept(bytes::Bytes),
}

impl RecordValue {
    /// A decoding error names `path` (decoders are shared by the files of one schema).
    pub fn in_file(self, path: &str) -> RecordValue {
        match self {
            RecordValue::Decoded(p) => RecordValue::Decoded(p.map_err(|e| e.in_file(path))),
            kept => kept,
        }
    }
}

const FILE_NAME_FIELD: &str = "_hoodie_file_name";

/// `type` of record-index records.
pub const RECORD_INDEX_TYPE: i32 = 5;

/// The leading `["null", "string"]` fields named `_hoodie_*`: Hudi's meta fields, which
/// `HoodieAvroUtils.addMetadataFields` puts first.
fn leading_meta_fields(schema: &Schema) -> Vec<String> {
    let Schema::Record(r) = schema else {
        return Vec::new();
    };
    let nullable_string = |s: &Schema| matches!(s, Schema::Union(u) if matches!(u.variants(), [Schema::Null, Schema::String]));
    r.fields
        .iter()
        .take_while(|f| f.name.starts_with("_hoodie_") && nullable_string(&f.schema))
        .map(|f| f.name.clone())
        .collect()
}

/// Reads past one `["null", "string"]` value.
fn skip_nullable_string(buf: &mut &[u8]) -> Result<()> {
    match crate::avro::binary::read_long(buf)? {
        0 => Ok(()),
        1 => crate::avro::binary::read_bytes(buf).map(drop),
        b => Err(HudiError::corrupt(
            "",
            format!("union branch {b} of a nullable string"),
        )),
    }
}

/// How many meta fields come before `key` (a string) and `type` (an int), when the
/// schema starts so: [`RecordDecoder::record_type`] reads the type without decoding.
fn type_position(schema: &Schema) -> Option<usize> {
    let Schema::Record(r) = schema else {
        return None;
    };
    let n = leading_meta_fields(schema).len();
    match r.fields.get(n..n + 2) {
        Some([k, t]) if k.name == "key" && t.name == "type" => {
            matches!((&k.schema, &t.schema), (Schema::String, Schema::Int)).then_some(n)
        }
        _ => None,
    }
}

use payload::{kind, Ctx};

/// One file (type 2) or partition (type 1) of a `files` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilesEntry {
    pub name: String,
    pub size: i64,
    pub is_deleted: bool,
}

/// `HoodieMetadataColumnStats`, for `column_stats` (per file) and `partition_stats` (per
/// partition: `file_name` is the partition path).
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnStats {
    pub file_name: String,
    pub column_name: String,
    /// `None` when the column holds no non-null value.
    pub min: Option<Value>,
    pub max: Option<Value>,
    pub null_count: Option<i64>,
    pub value_count: Option<i64>,
    pub total_size: Option<i64>,
    pub total_uncompressed_size: Option<i64>,
    pub is_deleted: bool,
    pub is_tight_bound: bool,
    /// V2 (`valueType`): Hudi `ValueType` ordinal and its extra info (e.g. `"15,2"`).
    pub value_type: Option<(i32, Option<String>)>,
}

/// `HoodieRecordIndexInfo`: where a record key lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordIndexEntry {
    pub partition: String,
    pub file_id: String,
    /// Epoch milliseconds of the instant that wrote the record.
    pub instant_time_ms: Option<i64>,
    pub position: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecondaryIndexEntry {
    pub is_deleted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BloomFilterEntry {
    pub filter_type: String,
    pub timestamp: String,
    pub bloom_filter: Vec<u8>,
    pub is_deleted: bool,
}

/// The payload of a metadata record, by its `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum MetadataPayload {
    /// Type 1, key `__all_partitions__`: every partition (`.` when non-partitioned).
    AllPartitions(Vec<FilesEntry>),
    /// Type 2, key = partition path: files of that partition.
    Files(Vec<FilesEntry>),
    /// Type 3.
    ColumnStats(ColumnStats),
    /// Type 4.
    BloomFilter(BloomFilterEntry),
    /// Type 5, key = record key.
    RecordIndex(RecordIndexEntry),
    /// Type 6.
    PartitionStats(ColumnStats),
    /// Type 7, key = `<secondary>$<record key>`.
    SecondaryIndex(SecondaryIndexEntry),
}

impl MetadataPayload {
    /// The record's `type` field.
    pub fn type_code(&self) -> i32 {
        match self {
            MetadataPayload::AllPartitions(_) => 1,
            MetadataPayload::Files(_) => 2,
            MetadataPayload::ColumnStats(_) => 3,
            MetadataPayload::BloomFilter(_) => 4,
            MetadataPayload::RecordIndex(_) => RECORD_INDEX_TYPE,
            MetadataPayload::PartitionStats(_) => 6,
            MetadataPayload::SecondaryIndex(_) => 7,
        }
    }
}

/// A decoded record: the key (the HFile row; the Avro `key` field is stored empty) and payload.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRecord {
    pub key: String,
    pub payload: MetadataPayload,
}

/// Decodes the values of one HFile or log block. Parses the writer schema once.
#[derive(Debug, Clone)]
pub struct RecordDecoder {
    schema: Arc<Schema>,
    /// Every value is walked before apache-avro decodes it.
    checked: crate::avro::guard::Checked,
    stats: StatsSchema,
    /// File the values come from, for errors.
    source: String,
    type_position: Option<usize>,
}

/// Union branch names of the stats bounds, which the decoded values do not carry.
#[derive(Debug, Clone, Default)]
struct StatsSchema {
    min: Vec<String>,
    max: Vec<String>,
    array_items: Vec<String>,
    /// Precision and scale of the V1 `DecimalWrapper`.
    decimal: Option<(u32, u32)>,
}

impl RecordDecoder {
    /// `schema_json` is the `HoodieMetadataRecord` writer schema; `source` names the file.
    pub fn new(schema_json: &str, source: &str) -> Result<RecordDecoder> {
        let schema = crate::avro::parse_schema(schema_json)
            .map_err(|e| HudiError::corrupt_by(source, "metadata record schema", e))?;
        let checked = crate::avro::guard::Checked::new(&schema).map_err(|e| e.in_file(source))?;
        Ok(RecordDecoder {
            type_position: type_position(&schema),
            checked,
            stats: StatsSchema::of(&schema),
            schema,
            source: source.to_string(),
        })
    }

    /// A decoder for the values of `hfile`, from its file info `schema`.
    pub fn for_hfile(hfile: &HFileReader) -> Result<RecordDecoder> {
        let schema = hfile.file_info().schema().ok_or_else(|| {
            HudiError::corrupt(hfile.path(), "file info has no UTF-8 `schema` entry")
        })?;
        Self::new(schema, hfile.path())
    }

    /// Decodes every cell of an HFile (row key = record key).
    pub fn decode_cells(&self, cells: &[Cell]) -> Result<Vec<MetadataRecord>> {
        let reader = self.datum_reader()?;
        cells
            .iter()
            .map(|c| {
                let key = std::str::from_utf8(&c.key).map_err(|_| {
                    HudiError::corrupt(&self.source, format!("key {:?} is not UTF-8", c.key))
                })?;
                self.decode_with(&reader, key, &c.value)
            })
            .collect()
    }

    /// Decodes each cell on its own, so one bad value spoils only its key (an index can then
    /// ignore that key instead of the whole file).
    pub fn decode_each(&self, cells: &[Cell]) -> Result<Vec<(String, Result<MetadataPayload>)>> {
        let reader = self.datum_reader()?;
        cells
            .iter()
            .map(|c| {
                let key = String::from_utf8(c.key.to_vec()).map_err(|_| {
                    HudiError::corrupt(&self.source, format!("key {:?} is not UTF-8", c.key))
                })?;
                let payload = self.decode_with(&reader, &key, &c.value).map(|r| r.payload);
                Ok((key, payload))
            })
            .collect()
    }

    /// [`Self::decode_each`] handing each record to `f` as it is decoded, so a scan holds
    /// one decoded record at a time.
    pub fn decode_for_each(
        &self,
        cells: &[Cell],
        mut f: impl FnMut(String, Result<MetadataPayload>) -> Result<()>,
    ) -> Result<()> {
        let reader = self.datum_reader()?;
        for c in cells {
            let key = self.cell_key(c)?;
            let payload = self.decode_with(&reader, &key, &c.value).map(|r| r.payload);
            f(key, payload)?;
        }
        Ok(())
    }

    /// [`Self::decode_for_each`], except that with `keep` each value is only checked
    /// (exactly one well-formed datum of the schema) and handed over as its bytes:
    /// compaction copies such values instead of decoding and encoding them again. A value
    /// that fails the check is decoded, so its error is the decoder's.
    pub fn decode_or_keep_each(
        &self,
        cells: &[Cell],
        keep: bool,
        mut f: impl FnMut(String, RecordValue) -> Result<()>,
    ) -> Result<()> {
        let reader = self.datum_reader()?;
        for c in cells {
            let key = self.cell_key(c)?;
            let value = if keep && matches!(self.checked.datum_trailing(&c.value), Ok(0)) {
                RecordValue::Kept(c.value.clone())
            } else {
                RecordValue::Decoded(self.decode_with(&reader, &key, &c.value).map(|r| r.payload))
            };
            f(key, value)?;
        }
        Ok(())
    }

    fn cell_key(&self, c: &Cell) -> Result<String> {
        String::from_utf8(c.key.to_vec())
            .map_err(|_| HudiError::corrupt(&self.source, format!("key {:?} is not UTF-8", c.key)))
    }

    /// The `type` field of a value, read without decoding the rest (`None` when the schema
    /// does not start with the meta fields, `key` and `type`, or the bytes end early).
    pub fn record_type(&self, value: &[u8]) -> Option<i32> {
        use crate::avro::binary::{read_bytes, read_int};
        let mut rest = value;
        for _ in 0..self.type_position? {
            skip_nullable_string(&mut rest).ok()?;
        }
        read_bytes(&mut rest).ok()?;
        read_int(&mut rest).ok()
    }

    /// Decodes the Avro binary `value` stored under `key`.
    pub fn decode(&self, key: &str, value: &[u8]) -> Result<MetadataRecord> {
        self.decode_with(&self.datum_reader()?, key, value)
    }

    /// Resolving the schema's named types is the costly part; do it once per batch.
    fn datum_reader(&self) -> Result<GenericDatumReader<'_>> {
        GenericDatumReader::builder(&self.schema)
            .build()
            .map_err(|e| HudiError::corrupt_by(&self.source, "metadata record schema", e))
    }

    fn decode_with(
        &self,
        reader: &GenericDatumReader<'_>,
        key: &str,
        value: &[u8],
    ) -> Result<MetadataRecord> {
        let ctx = Ctx { decoder: self, key };
        self.checked
            .datum(value)
            .map_err(|e| ctx.bad(format!("Avro: {e}")))?;
        let mut input = value;
        let v = reader
            .read_value(&mut input)
            .map_err(|e| ctx.bad(format!("Avro: {e}")))?;
        if !input.is_empty() {
            return Err(ctx.bad(format!("{} bytes after the record", input.len())));
        }
        let AvroValue::Record(fields) = &v else {
            return Err(ctx.bad(format!("top level is {}, not a record", kind(&v))));
        };
        let payload = ctx.payload(fields.as_slice())?;
        Ok(MetadataRecord {
            key: key.to_string(),
            payload,
        })
    }
}

impl StatsSchema {
    fn of(schema: &Schema) -> StatsSchema {
        let Some(cs) = field_schema(schema, "ColumnStatsMetadata").and_then(record_branch) else {
            return StatsSchema::default();
        };
        let min_variants = field_schema(cs, "minValue")
            .map(variants)
            .unwrap_or_default();
        let named = |name: &str| {
            min_variants
                .iter()
                .find(|s| matches!(s, Schema::Record(r) if r.name.name() == name))
        };
        let array_items = named("ArrayWrapper")
            .and_then(|s| field_schema(s, "wrappedValues"))
            .into_iter()
            .flat_map(variants)
            .find_map(|s| match s {
                Schema::Array(a) => Some(branch_names(&a.items)),
                _ => None,
            });
        let decimal = named("DecimalWrapper")
            .and_then(|s| field_schema(s, "value"))
            .and_then(|s| match s {
                Schema::Decimal(d) => Some((d.precision as u32, d.scale as u32)),
                _ => None,
            });
        StatsSchema {
            min: branch_names(field_schema(cs, "minValue").unwrap_or(&Schema::Null)),
            max: branch_names(field_schema(cs, "maxValue").unwrap_or(&Schema::Null)),
            array_items: array_items.unwrap_or_default(),
            decimal,
        }
    }
}

fn field_schema<'s>(s: &'s Schema, name: &str) -> Option<&'s Schema> {
    match s {
        Schema::Record(r) => r.fields.iter().find(|f| f.name == name).map(|f| &f.schema),
        _ => None,
    }
}

fn variants(s: &Schema) -> &[Schema] {
    match s {
        Schema::Union(u) => u.variants(),
        _ => &[],
    }
}

/// The record inside a `["null", record]` union.
fn record_branch(s: &Schema) -> Option<&Schema> {
    variants(s).iter().find(|v| matches!(v, Schema::Record(_)))
}

fn branch_names(s: &Schema) -> Vec<String> {
    variants(s)
        .iter()
        .map(|v| match (v, v.name()) {
            (_, Some(n)) => n.name().to_string(),
            (Schema::Null, _) => "null".into(),
            _ => "unnamed".into(),
        })
        .collect()
}

type Fields = [(String, AvroValue)];

#[cfg(test)]
mod tests {
    use super::payload::uuid_string;

    #[test]
    fn uuid_from_halves() {
        assert_eq!(
            uuid_string(6891194845742907684, -7319604397853378321),
            "5fa27133-7a82-4124-9a6b-8a94c18ff8ef"
        );
    }
}
