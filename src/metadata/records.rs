//! Metadata-table values: `HoodieMetadataRecord` Avro binary, decoded with the writer schema
//! stored next to the data (HFile file info `schema`, or a log block's `SCHEMA` header) into
//! typed records (docs: hudi-format §8.4–8.10).
//!
//! Column statistics come in two encodings: V1 (table version 8) uses the wrapper that names
//! the type (`DateWrapper`, `DecimalWrapper`, …); V2 (version 9) stores primitives
//! (`IntWrapper`, `BytesWrapper`, …) and says what they mean in `valueType`. Both decode to
//! the same [`Value`].

use std::fmt;

use apache_avro::reader::datum::GenericDatumReader;
use apache_avro::types::Value as AvroValue;
use apache_avro::Schema;

use crate::avro::binary::be_i128;
use crate::error::{HudiError, Result};
use crate::hfile::{Cell, HFileReader};
use crate::value::Value;

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

/// A decoded record: the key (the HFile row; the Avro `key` field is stored empty) and payload.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRecord {
    pub key: String,
    pub payload: MetadataPayload,
}

/// Decodes the values of one HFile or log block. Parses the writer schema once.
#[derive(Debug, Clone)]
pub struct RecordDecoder {
    schema: Schema,
    /// Every value is walked before apache-avro decodes it.
    checked: crate::avro::guard::Checked,
    stats: StatsSchema,
    /// File the values come from, for errors.
    source: String,
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
        let schema = Schema::parse_str(schema_json)
            .map_err(|e| HudiError::corrupt_by(source, "metadata record schema", e))?;
        let checked = crate::avro::guard::Checked::new(&schema).map_err(|e| e.in_file(source))?;
        Ok(RecordDecoder {
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

/// Field access with errors that name the file and the record key.
struct Ctx<'a> {
    decoder: &'a RecordDecoder,
    key: &'a str,
}

impl Ctx<'_> {
    fn bad(&self, what: impl fmt::Display) -> HudiError {
        HudiError::corrupt(
            &self.decoder.source,
            format!("metadata record {:?}: {what}", self.key),
        )
    }

    fn payload(&self, f: &Fields) -> Result<MetadataPayload> {
        use MetadataPayload as P;
        let ty = self.required(self.int(f, "type")?, "type")?;
        Ok(match ty {
            1 => P::AllPartitions(self.files(f)?),
            2 => P::Files(self.files(f)?),
            3 => P::ColumnStats(self.column_stats(f)?),
            4 => P::BloomFilter(self.bloom_filter(f)?),
            5 => P::RecordIndex(self.record_index(f)?),
            6 => P::PartitionStats(self.column_stats(f)?),
            7 => P::SecondaryIndex(self.secondary_index(f)?),
            other => {
                return Err(HudiError::unsupported_in(
                    format!("metadata record type {other} (key {:?})", self.key),
                    &self.decoder.source,
                ))
            }
        })
    }

    fn files(&self, f: &Fields) -> Result<Vec<FilesEntry>> {
        let map = match self.get(f, "filesystemMetadata") {
            None => return Ok(Vec::new()),
            Some(AvroValue::Map(m)) => m,
            Some(v) => return Err(self.bad(format!("filesystemMetadata is {}", kind(v)))),
        };
        let mut out = map
            .iter()
            .map(|(name, info)| {
                let AvroValue::Record(info) = unwrap_union(info) else {
                    return Err(self.bad(format!("file info of {name:?} is not a record")));
                };
                Ok(FilesEntry {
                    name: name.clone(),
                    size: self.required(self.long(info, "size")?, "size")?,
                    is_deleted: self.required(self.boolean(info, "isDeleted")?, "isDeleted")?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn column_stats(&self, f: &Fields) -> Result<ColumnStats> {
        let cs = self.required(
            self.record(f, "ColumnStatsMetadata")?,
            "ColumnStatsMetadata",
        )?;
        let value_type = match self.record(cs, "valueType")? {
            None => None,
            Some(vt) => Some((
                self.required(self.int(vt, "typeOrdinal")?, "typeOrdinal")?,
                self.string(vt, "additionalInfo")?,
            )),
        };
        let stats = &self.decoder.stats;
        Ok(ColumnStats {
            file_name: self.required(self.string(cs, "fileName")?, "fileName")?,
            column_name: self.required(self.string(cs, "columnName")?, "columnName")?,
            min: self.bound(cs, "minValue", &stats.min, value_type.as_ref())?,
            max: self.bound(cs, "maxValue", &stats.max, value_type.as_ref())?,
            null_count: self.long(cs, "nullCount")?,
            value_count: self.long(cs, "valueCount")?,
            total_size: self.long(cs, "totalSize")?,
            total_uncompressed_size: self.long(cs, "totalUncompressedSize")?,
            is_deleted: self.required(self.boolean(cs, "isDeleted")?, "isDeleted")?,
            is_tight_bound: self.boolean(cs, "isTightBound")?.unwrap_or(false),
            value_type,
        })
    }

    fn record_index(&self, f: &Fields) -> Result<RecordIndexEntry> {
        let ri = self.required(
            self.record(f, "recordIndexMetadata")?,
            "recordIndexMetadata",
        )?;
        let file_id = match self.int(ri, "fileIdEncoding")?.unwrap_or(0) {
            0 => {
                let hi = self.required(self.long(ri, "fileIdHighBits")?, "fileIdHighBits")?;
                let lo = self.required(self.long(ri, "fileIdLowBits")?, "fileIdLowBits")?;
                let index = self.required(self.int(ri, "fileIndex")?, "fileIndex")?;
                format!("{}-{index}", uuid_string(hi, lo))
            }
            1 => self.required(self.string(ri, "fileId")?, "fileId")?,
            other => return Err(self.bad(format!("unknown fileIdEncoding {other}"))),
        };
        Ok(RecordIndexEntry {
            partition: self.required(self.string(ri, "partitionName")?, "partitionName")?,
            file_id,
            instant_time_ms: self.long(ri, "instantTime")?,
            position: self.long(ri, "position")?,
        })
    }

    fn secondary_index(&self, f: &Fields) -> Result<SecondaryIndexEntry> {
        let si = self.required(
            self.record(f, "SecondaryIndexMetadata")?,
            "SecondaryIndexMetadata",
        )?;
        Ok(SecondaryIndexEntry {
            is_deleted: self.required(self.boolean(si, "isDeleted")?, "isDeleted")?,
        })
    }

    fn bloom_filter(&self, f: &Fields) -> Result<BloomFilterEntry> {
        let b = self.required(
            self.record(f, "BloomFilterMetadata")?,
            "BloomFilterMetadata",
        )?;
        let bloom_filter = match self.get(b, "bloomFilter") {
            Some(AvroValue::Bytes(bytes)) => bytes.clone(),
            None => Vec::new(),
            Some(v) => return Err(self.bad(format!("bloomFilter is {}", kind(v)))),
        };
        Ok(BloomFilterEntry {
            filter_type: self.string(b, "type")?.unwrap_or_default(),
            timestamp: self.string(b, "timestamp")?.unwrap_or_default(),
            bloom_filter,
            is_deleted: self.required(self.boolean(b, "isDeleted")?, "isDeleted")?,
        })
    }

    /// A min/max bound: the union branch names the wrapper, `valueType` (V2) its meaning.
    fn bound(
        &self,
        cs: &Fields,
        name: &str,
        branches: &[String],
        value_type: Option<&(i32, Option<String>)>,
    ) -> Result<Option<Value>> {
        let Some((_, v)) = cs.iter().find(|(n, _)| n == name) else {
            return Ok(None);
        };
        let Some(raw) = self.wrapper(v, branches)? else {
            return Ok(None);
        };
        match value_type {
            Some((ordinal, info)) => self
                .apply_value_type(raw, *ordinal, info.as_deref())
                .map(Some),
            None => Ok(Some(raw)),
        }
    }

    /// Decodes one wrapper-record union value (`null` → `None`).
    fn wrapper(&self, v: &AvroValue, branches: &[String]) -> Result<Option<Value>> {
        let (index, inner) = match v {
            AvroValue::Null => return Ok(None),
            AvroValue::Union(i, inner) => (*i as usize, inner.as_ref()),
            other => return Err(self.bad(format!("stat value is {}, not a union", kind(other)))),
        };
        let AvroValue::Record(fields) = inner else {
            return match inner {
                AvroValue::Null => Ok(None),
                other => Err(self.bad(format!("stat value holds {}", kind(other)))),
            };
        };
        let wrapper = branches
            .get(index)
            .ok_or_else(|| self.bad(format!("stat union branch {index} not in the schema")))?;
        if wrapper == "ArrayWrapper" {
            return self.array(fields).map(Some);
        }
        let value = fields
            .iter()
            .find(|(n, _)| n == "value")
            .map(|(_, v)| unwrap_union(v))
            .ok_or_else(|| self.bad(format!("{wrapper} without a value")))?;
        self.wrapped(wrapper, value).map(Some)
    }

    fn array(&self, fields: &Fields) -> Result<Value> {
        let items = match self.get(fields, "wrappedValues") {
            None => return Ok(Value::Array(Vec::new())),
            Some(AvroValue::Array(items)) => items,
            Some(v) => return Err(self.bad(format!("ArrayWrapper holds {}", kind(v)))),
        };
        let branches = &self.decoder.stats.array_items;
        let values = items
            .iter()
            .map(|item| Ok(self.wrapper(item, branches)?.unwrap_or(Value::Null)))
            .collect::<Result<_>>()?;
        Ok(Value::Array(values))
    }

    fn wrapped(&self, wrapper: &str, v: &AvroValue) -> Result<Value> {
        use Value as S;
        Ok(match (wrapper, v) {
            ("BooleanWrapper", AvroValue::Boolean(b)) => S::Boolean(*b),
            ("IntWrapper", AvroValue::Int(i)) => S::Int(*i),
            ("LongWrapper", AvroValue::Long(l)) => S::Long(*l),
            ("FloatWrapper", AvroValue::Float(x)) => S::Float(*x),
            ("DoubleWrapper", AvroValue::Double(x)) => S::Double(*x),
            ("BytesWrapper", AvroValue::Bytes(b)) => S::Bytes(b.clone()),
            ("StringWrapper", AvroValue::String(s)) => S::String(s.clone()),
            ("DateWrapper", AvroValue::Int(d) | AvroValue::Date(d)) => S::Date(*d),
            ("LocalDateWrapper", AvroValue::Int(d) | AvroValue::Date(d)) => S::LocalDate(*d),
            ("TimeMicrosWrapper", AvroValue::TimeMicros(t) | AvroValue::Long(t)) => {
                S::TimeMicros(*t)
            }
            ("TimestampMicrosWrapper", AvroValue::TimestampMicros(t) | AvroValue::Long(t)) => {
                S::TimestampMicros(*t)
            }
            ("DecimalWrapper", AvroValue::Decimal(d)) => {
                let bytes =
                    Vec::<u8>::try_from(d).map_err(|e| self.bad(format!("decimal: {e}")))?;
                self.v1_decimal(&bytes)?
            }
            ("DecimalWrapper", AvroValue::Bytes(b)) => self.v1_decimal(b)?,
            (w, v) => return Err(self.bad(format!("{w} holds {}", kind(v)))),
        })
    }

    fn v1_decimal(&self, unscaled: &[u8]) -> Result<Value> {
        let (precision, scale) = self
            .decoder
            .stats
            .decimal
            .ok_or_else(|| self.bad("DecimalWrapper without a decimal schema"))?;
        self.decimal(unscaled, precision, scale)
    }

    /// A decimal from its big-endian two's-complement unscaled bytes.
    fn decimal(&self, unscaled: &[u8], precision: u32, scale: u32) -> Result<Value> {
        let too_wide = || {
            self.bad(format!(
                "decimal({precision}, {scale}) does not fit 128 bits"
            ))
        };
        Ok(Value::Decimal {
            unscaled: be_i128(unscaled).map_err(|_| too_wide())?,
            precision: u8::try_from(precision).map_err(|_| too_wide())?,
            scale: i8::try_from(scale).map_err(|_| too_wide())?,
        })
    }

    /// V2: primitives stand for logical types named by the Hudi `ValueType` ordinal.
    fn apply_value_type(&self, v: Value, ordinal: i32, info: Option<&str>) -> Result<Value> {
        use Value as S;
        Ok(match (ordinal, v) {
            (10, S::Bytes(unscaled)) => {
                let (precision, scale) = self.precision_scale(info)?;
                self.decimal(&unscaled, precision, scale)?
            }
            (12, S::Int(days)) => S::Date(days),
            (14, S::Long(t)) => S::TimeMicros(t),
            (16, S::Long(t)) => S::TimestampMicros(t),
            (_, S::Array(items)) => S::Array(
                items
                    .into_iter()
                    .map(|v| self.apply_value_type(v, ordinal, info))
                    .collect::<Result<_>>()?,
            ),
            (_, v) => v,
        })
    }

    /// `"p,s"` from `valueType.additionalInfo`.
    fn precision_scale(&self, info: Option<&str>) -> Result<(u32, u32)> {
        let parsed = info.and_then(|s| {
            let (p, s) = s.split_once(',')?;
            Some((p.trim().parse().ok()?, s.trim().parse().ok()?))
        });
        parsed.ok_or_else(|| self.bad(format!("decimal valueType with additionalInfo {info:?}")))
    }

    fn required<T>(&self, v: Option<T>, name: &str) -> Result<T> {
        v.ok_or_else(|| self.bad(format!("{name} is missing or null")))
    }

    /// A field's value with unions unwrapped; `None` when absent or null.
    fn get<'v>(&self, f: &'v Fields, name: &str) -> Option<&'v AvroValue> {
        let v = unwrap_union(&f.iter().find(|(n, _)| n == name)?.1);
        (!matches!(v, AvroValue::Null)).then_some(v)
    }

    fn typed<'v, T>(
        &self,
        f: &'v Fields,
        name: &str,
        want: &str,
        pick: impl Fn(&'v AvroValue) -> Option<T>,
    ) -> Result<Option<T>> {
        match self.get(f, name) {
            None => Ok(None),
            Some(v) => pick(v)
                .map(Some)
                .ok_or_else(|| self.bad(format!("{name} is {}, expected {want}", kind(v)))),
        }
    }

    fn string(&self, f: &Fields, name: &str) -> Result<Option<String>> {
        self.typed(f, name, "string", |v| match v {
            AvroValue::String(s) => Some(s.clone()),
            _ => None,
        })
    }

    fn long(&self, f: &Fields, name: &str) -> Result<Option<i64>> {
        self.typed(f, name, "long", |v| match v {
            AvroValue::Long(l) => Some(*l),
            AvroValue::Int(i) => Some(*i as i64),
            _ => None,
        })
    }

    fn int(&self, f: &Fields, name: &str) -> Result<Option<i32>> {
        self.typed(f, name, "int", |v| match v {
            AvroValue::Int(i) => Some(*i),
            _ => None,
        })
    }

    fn boolean(&self, f: &Fields, name: &str) -> Result<Option<bool>> {
        self.typed(f, name, "boolean", |v| match v {
            AvroValue::Boolean(b) => Some(*b),
            _ => None,
        })
    }

    fn record<'v>(&self, f: &'v Fields, name: &str) -> Result<Option<&'v Fields>> {
        self.typed(f, name, "record", |v| match v {
            AvroValue::Record(r) => Some(r.as_slice()),
            _ => None,
        })
    }
}

fn unwrap_union(v: &AvroValue) -> &AvroValue {
    match v {
        AvroValue::Union(_, inner) => unwrap_union(inner),
        v => v,
    }
}

fn kind(v: &AvroValue) -> &'static str {
    match v {
        AvroValue::Null => "null",
        AvroValue::Boolean(_) => "boolean",
        AvroValue::Int(_) => "int",
        AvroValue::Long(_) => "long",
        AvroValue::Float(_) => "float",
        AvroValue::Double(_) => "double",
        AvroValue::Bytes(_) | AvroValue::Fixed(..) => "bytes",
        AvroValue::String(_) => "string",
        AvroValue::Union(..) => "union",
        AvroValue::Array(_) => "array",
        AvroValue::Map(_) => "map",
        AvroValue::Record(_) => "record",
        _ => "a logical-type value",
    }
}

/// Java `UUID.toString()` of the two signed 64-bit halves.
fn uuid_string(high: i64, low: i64) -> String {
    let (h, l) = (high as u64, low as u64);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xffff,
        l >> 48,
        l & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_from_halves() {
        assert_eq!(
            uuid_string(6891194845742907684, -7319604397853378321),
            "5fa27133-7a82-4124-9a6b-8a94c18ff8ef"
        );
    }
}
