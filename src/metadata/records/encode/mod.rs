//! Encoding `HoodieMetadataRecord` values, the inverse of the decoder (docs/hudi-format.md
//! §8.4–8.8). Writes Avro binary against the table's own writer schema (taken from its MDT
//! files), walking that schema field by field so that union branches, field order and the
//! presence of `valueType` follow whatever Hudi version wrote it. Maps are written in the
//! order Java's `HashMap` iterates them, as Hudi's writer does.

use std::collections::HashMap;

use apache_avro::schema::{InnerDecimalSchema, Name};
use apache_avro::Schema;

use super::{ColumnStats, FilesEntry, MetadataPayload, RecordIndexEntry, FILE_NAME_FIELD};
use crate::avro::binary::{write_bytes, write_long};
use crate::error::{HudiError, Result};
use crate::value::Value;

mod decimal;
mod file_id;

use decimal::{min_twos_complement, rescale, sign_extend};
pub use file_id::split_file_id;

/// A V2 `valueType`: ordinal and additional info (e.g. `"15,2"`).
type ValueTypeInfo = (i32, Option<String>);

/// Hudi `ValueType` ordinals (column stats V2 `valueType.typeOrdinal`).
pub mod value_type {
    pub const NULL: i32 = 1;
    pub const BOOLEAN: i32 = 2;
    pub const INT: i32 = 3;
    pub const LONG: i32 = 4;
    pub const FLOAT: i32 = 5;
    pub const DOUBLE: i32 = 6;
    pub const STRING: i32 = 7;
    pub const BYTES: i32 = 8;
    pub const DECIMAL: i32 = 10;
    pub const DATE: i32 = 12;
    pub const TIME_MICROS: i32 = 14;
    pub const TIMESTAMP_MICROS: i32 = 16;
}

/// A datum to write; records name their fields, absent fields take the schema default.
#[derive(Debug, Clone)]
enum D {
    Null,
    Bool(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Bytes(Vec<u8>),
    Str(String),
    Rec(Vec<(&'static str, D)>),
    Map(Vec<(String, D)>),
    /// The union branch named `.0` (a wrapper record).
    Named(&'static str, Box<D>),
}

/// Encodes metadata records with one writer schema. Parses the schema once.
#[derive(Debug, Clone)]
pub struct RecordEncoder {
    schema: std::sync::Arc<Schema>,
    names: HashMap<Name, Schema>,
    /// Whether column stats carry `valueType` (the V2 index of Hudi 1.1).
    has_value_type: bool,
    /// `DecimalWrapper` precision and scale (V1 decimals are rescaled to it).
    v1_decimal: Option<(usize, usize)>,
    /// The leading meta fields ([`super::leading_meta_fields`]).
    meta_prefix: Vec<String>,
    /// Whether a `_hoodie_file_name` comes after them (values cannot be rebased then).
    file_name_later: bool,
}

impl RecordEncoder {
    /// `schema_json`: the `HoodieMetadataRecord` schema found in the table's MDT files.
    pub fn new(schema_json: &str) -> Result<RecordEncoder> {
        let schema = crate::avro::parse_schema(schema_json)
            .map_err(|e| HudiError::invalid(format!("metadata record schema: {e}")))?;
        let mut names = HashMap::new();
        collect_names(&schema, &mut names);
        let cs = names
            .iter()
            .find(|(n, _)| n.name() == "HoodieMetadataColumnStats")
            .map(|(_, s)| s);
        let has_value_type = cs.is_some_and(|s| field(s, "valueType").is_some());
        let v1_decimal = names
            .iter()
            .find(|(n, _)| n.name() == "DecimalWrapper")
            .and_then(|(_, s)| match field(s, "value") {
                Some(Schema::Decimal(d)) => Some((d.precision, d.scale)),
                _ => None,
            });
        let meta_prefix = super::leading_meta_fields(&schema);
        let file_name_later = matches!(&*schema, Schema::Record(r)
            if r.fields[meta_prefix.len()..].iter().any(|f| f.name == FILE_NAME_FIELD));
        Ok(RecordEncoder {
            meta_prefix,
            file_name_later,
            schema,
            names,
            has_value_type,
            v1_decimal,
        })
    }

    /// Whether the schema has the V2 `valueType` field in column stats.
    pub fn has_value_type(&self) -> bool {
        self.has_value_type
    }

    /// Avro binary of a record holding `payload` (the record key is the HFile row; the Avro
    /// `key` field is written empty, as Hudi does).
    pub fn encode(&self, payload: &MetadataPayload) -> Result<Vec<u8>> {
        self.encode_with(payload, None)
    }

    /// [`Self::encode`] for a base file named `file_name`: Java fills `_hoodie_file_name`
    /// in base-file records (when the schema has the meta fields), the others stay null.
    pub fn encode_in_base_file(
        &self,
        payload: &MetadataPayload,
        file_name: &str,
    ) -> Result<Vec<u8>> {
        self.encode_with(payload, Some(file_name))
    }

    /// Whether base-file records get `_hoodie_file_name` (the schema has the meta fields).
    fn fills_file_name(&self) -> bool {
        self.file_name_later || self.meta_prefix.iter().any(|f| f == FILE_NAME_FIELD)
    }

    /// Whether [`Self::rebase_value`] can move values into another base file: the file
    /// name, if the schema has one, is among its leading meta fields.
    pub fn rebases_values(&self) -> bool {
        !self.file_name_later
    }

    /// A base-file value of this schema (one well-formed datum) as [`Self::encode_in_base_file`]
    /// would encode it for `file_name`: the meta fields are written anew (the file name
    /// filled in, the others null), the fields after them copied.
    pub fn rebase_value(&self, value: &[u8], file_name: &str) -> Result<Vec<u8>> {
        let mut rest = value;
        let mut out = Vec::with_capacity(value.len() + file_name.len() + 1);
        for field in &self.meta_prefix {
            super::skip_nullable_string(&mut rest)?;
            if field == FILE_NAME_FIELD {
                write_long(&mut out, 1);
                write_bytes(&mut out, file_name.as_bytes());
            } else {
                write_long(&mut out, 0);
            }
        }
        out.extend_from_slice(rest);
        Ok(out)
    }

    fn encode_with(&self, payload: &MetadataPayload, file_name: Option<&str>) -> Result<Vec<u8>> {
        use MetadataPayload as P;
        let (field, value) = match payload {
            P::AllPartitions(list) | P::Files(list) => ("filesystemMetadata", files_map(list)),
            P::ColumnStats(cs) | P::PartitionStats(cs) => {
                ("ColumnStatsMetadata", self.column_stats(cs)?)
            }
            P::RecordIndex(ri) => ("recordIndexMetadata", record_index(ri)),
            P::SecondaryIndex(si) => (
                "SecondaryIndexMetadata",
                D::Rec(vec![("isDeleted", D::Bool(si.is_deleted))]),
            ),
            P::BloomFilter(_) => {
                return Err(HudiError::unsupported(
                    "writing bloom filter metadata records",
                ))
            }
        };
        let mut fields = vec![
            ("key", D::Str(String::new())),
            ("type", D::Int(payload.type_code())),
            (field, value),
        ];
        if let (Some(name), true) = (file_name, self.fills_file_name()) {
            fields.push(("_hoodie_file_name", D::Str(name.to_string())));
        }
        let record = D::Rec(fields);
        let mut out = Vec::new();
        self.write(&self.schema, &record, &mut out)?;
        Ok(out)
    }

    fn column_stats(&self, cs: &ColumnStats) -> Result<D> {
        let v2 = self.has_value_type;
        let (min, min_type) = self.bound(cs.min.as_ref(), v2)?;
        let (max, max_type) = self.bound(cs.max.as_ref(), v2)?;
        let opt = |v: Option<i64>| v.map_or(D::Null, D::Long);
        let mut fields = vec![
            ("fileName", D::Str(cs.file_name.clone())),
            ("columnName", D::Str(cs.column_name.clone())),
            ("minValue", min),
            ("maxValue", max),
            ("valueCount", opt(cs.value_count)),
            ("nullCount", opt(cs.null_count)),
            ("totalSize", opt(cs.total_size)),
            ("totalUncompressedSize", opt(cs.total_uncompressed_size)),
            ("isDeleted", D::Bool(cs.is_deleted)),
            ("isTightBound", D::Bool(cs.is_tight_bound)),
        ];
        if v2 {
            // The caller's type wins; else the bounds'; all-null columns are NULL.
            let vt = cs
                .value_type
                .clone()
                .or(min_type)
                .or(max_type)
                .unwrap_or((value_type::NULL, None));
            fields.push((
                "valueType",
                D::Rec(vec![
                    ("typeOrdinal", D::Int(vt.0)),
                    ("additionalInfo", vt.1.map_or(D::Null, D::Str)),
                ]),
            ));
        }
        Ok(D::Rec(fields))
    }

    /// A bound as its wrapper union branch, and the V2 value type it implies.
    fn bound(&self, v: Option<&Value>, v2: bool) -> Result<(D, Option<ValueTypeInfo>)> {
        use value_type as T;
        let Some(v) = v else {
            return Ok((D::Null, None));
        };
        let wrap = |name: &'static str, d: D| D::Named(name, Box::new(D::Rec(vec![("value", d)])));
        let (d, ordinal, info) = match v {
            Value::Null => return Ok((D::Null, None)),
            Value::Boolean(b) => (wrap("BooleanWrapper", D::Bool(*b)), T::BOOLEAN, None),
            Value::Int(i) => (wrap("IntWrapper", D::Int(*i)), T::INT, None),
            Value::Long(l) => (wrap("LongWrapper", D::Long(*l)), T::LONG, None),
            Value::Float(f) => (wrap("FloatWrapper", D::Float(*f)), T::FLOAT, None),
            Value::Double(f) => (wrap("DoubleWrapper", D::Double(*f)), T::DOUBLE, None),
            Value::String(s) => (wrap("StringWrapper", D::Str(s.clone())), T::STRING, None),
            Value::Bytes(b) => (wrap("BytesWrapper", D::Bytes(b.clone())), T::BYTES, None),
            Value::Date(d) if v2 => (wrap("IntWrapper", D::Int(*d)), T::DATE, None),
            Value::Date(d) => (wrap("DateWrapper", D::Int(*d)), T::DATE, None),
            Value::LocalDate(d) if v2 => (wrap("IntWrapper", D::Int(*d)), T::DATE, None),
            Value::LocalDate(d) => (wrap("LocalDateWrapper", D::Int(*d)), T::DATE, None),
            Value::TimeMicros(t) if v2 => (wrap("LongWrapper", D::Long(*t)), T::TIME_MICROS, None),
            Value::TimeMicros(t) => (wrap("TimeMicrosWrapper", D::Long(*t)), T::TIME_MICROS, None),
            Value::TimestampMicros(t) if v2 => {
                (wrap("LongWrapper", D::Long(*t)), T::TIMESTAMP_MICROS, None)
            }
            Value::TimestampMicros(t) => (
                wrap("TimestampMicrosWrapper", D::Long(*t)),
                T::TIMESTAMP_MICROS,
                None,
            ),
            Value::Decimal {
                unscaled,
                precision,
                scale,
            } => {
                let info = Some(format!("{precision},{scale}"));
                if v2 {
                    let bytes = D::Bytes(min_twos_complement(*unscaled));
                    (wrap("BytesWrapper", bytes), T::DECIMAL, info)
                } else {
                    let (_, to_scale) = self.v1_decimal.ok_or_else(|| {
                        HudiError::invalid("the metadata schema has no DecimalWrapper")
                    })?;
                    let rescaled = rescale(*unscaled, *scale as i32, to_scale as i32)?;
                    let bytes = D::Bytes(min_twos_complement(rescaled));
                    (wrap("DecimalWrapper", bytes), T::DECIMAL, info)
                }
            }
            Value::Array(_) => {
                return Err(HudiError::unsupported(
                    "writing array-valued column statistics",
                ))
            }
        };
        Ok((d, Some((ordinal, info))))
    }

    fn resolve<'s>(&'s self, s: &'s Schema) -> Result<&'s Schema> {
        match s {
            Schema::Ref { name } => self
                .names
                .get(name)
                .ok_or_else(|| HudiError::invalid(format!("schema reference {name} not defined"))),
            s => Ok(s),
        }
    }

    fn write(&self, schema: &Schema, d: &D, out: &mut Vec<u8>) -> Result<()> {
        let schema = self.resolve(schema)?;
        let mismatch = || {
            HudiError::invalid(format!(
                "metadata record: {d:?} does not fit schema {}",
                schema_kind(schema)
            ))
        };
        match (schema, d) {
            (Schema::Union(u), d) => {
                let pick = u.variants().iter().enumerate().find_map(|(i, v)| {
                    let v = self.resolve(v).ok()?;
                    fits(v, d).then_some((i, v))
                });
                let (i, v) = pick.ok_or_else(mismatch)?;
                zigzag(out, i as i64);
                let inner = match d {
                    D::Named(_, inner) => inner.as_ref(),
                    d => d,
                };
                self.write(v, inner, out)
            }
            (Schema::Null, D::Null) => Ok(()),
            (Schema::Boolean, D::Bool(b)) => {
                out.push(*b as u8);
                Ok(())
            }
            (Schema::Int | Schema::Date | Schema::TimeMillis, D::Int(i)) => {
                zigzag(out, *i as i64);
                Ok(())
            }
            (
                Schema::Long
                | Schema::TimeMicros
                | Schema::TimestampMillis
                | Schema::TimestampMicros
                | Schema::LocalTimestampMillis
                | Schema::LocalTimestampMicros,
                D::Long(l),
            ) => {
                zigzag(out, *l);
                Ok(())
            }
            (Schema::Float, D::Float(f)) => {
                out.extend_from_slice(&f.to_le_bytes());
                Ok(())
            }
            (Schema::Double, D::Double(f)) => {
                out.extend_from_slice(&f.to_le_bytes());
                Ok(())
            }
            (Schema::Bytes, D::Bytes(b)) => {
                bytes(out, b);
                Ok(())
            }
            (Schema::Decimal(dec), D::Bytes(b)) => match &dec.inner {
                InnerDecimalSchema::Bytes => {
                    bytes(out, b);
                    Ok(())
                }
                InnerDecimalSchema::Fixed(f) => {
                    out.extend_from_slice(&sign_extend(b, f.size).ok_or_else(mismatch)?);
                    Ok(())
                }
            },
            (Schema::String | Schema::Uuid(_), D::Str(s)) => {
                bytes(out, s.as_bytes());
                Ok(())
            }
            (Schema::Map(m), D::Map(entries)) => {
                if !entries.is_empty() {
                    zigzag(out, entries.len() as i64);
                    let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
                    for i in crate::hfile::writer::java_hash_map_order(&keys) {
                        let (k, v) = &entries[i];
                        bytes(out, k.as_bytes());
                        self.write(&m.types, v, out)?;
                    }
                }
                out.push(0);
                Ok(())
            }
            (Schema::Record(r), D::Rec(given)) => {
                for f in &r.fields {
                    match given.iter().find(|(n, _)| *n == f.name) {
                        Some((_, v)) => self.write(&f.schema, v, out)?,
                        None => {
                            // Absent nullable fields are null, as Java's record builders leave them.
                            let nullable = matches!(&f.schema, Schema::Union(u)
                                if u.variants().iter().any(|v| matches!(v, Schema::Null)));
                            let v = default_datum(f.default.as_ref())
                                .or(nullable.then_some(D::Null))
                                .ok_or_else(|| {
                                    HudiError::invalid(format!(
                                        "metadata record field {} has no value and no default",
                                        f.name
                                    ))
                                })?;
                            self.write(&f.schema, &v, out)?;
                        }
                    }
                }
                if let Some((n, _)) = given
                    .iter()
                    .find(|(n, _)| !r.fields.iter().any(|f| f.name == *n))
                {
                    return Err(HudiError::invalid(format!(
                        "metadata record schema {} has no field {n}",
                        r.name
                    )));
                }
                Ok(())
            }
            _ => Err(mismatch()),
        }
    }
}

/// Whether union branch `s` takes `d`: null for null, the named branch for a wrapper, the
/// first branch of the datum's kind otherwise.
fn fits(s: &Schema, d: &D) -> bool {
    match d {
        D::Null => matches!(s, Schema::Null),
        D::Named(name, _) => s.name().is_some_and(|n| n.name() == *name),
        D::Bool(_) => matches!(s, Schema::Boolean),
        D::Int(_) => matches!(s, Schema::Int),
        D::Long(_) => matches!(s, Schema::Long),
        D::Float(_) => matches!(s, Schema::Float),
        D::Double(_) => matches!(s, Schema::Double),
        D::Bytes(_) => matches!(s, Schema::Bytes),
        D::Str(_) => matches!(s, Schema::String),
        D::Rec(_) => matches!(s, Schema::Record(_)),
        D::Map(_) => matches!(s, Schema::Map(_)),
    }
}

fn default_datum(v: Option<&serde_json::Value>) -> Option<D> {
    Some(match v? {
        serde_json::Value::Null => D::Null,
        serde_json::Value::Bool(b) => D::Bool(*b),
        serde_json::Value::String(s) => D::Str(s.clone()),
        serde_json::Value::Number(n) => {
            let i = n.as_i64()?;
            match i32::try_from(i) {
                Ok(i) => D::Int(i),
                Err(_) => D::Long(i),
            }
        }
        _ => return None,
    })
}

fn schema_kind(s: &Schema) -> String {
    match s.name() {
        Some(n) => n.name().to_string(),
        None => format!("{:?}", std::mem::discriminant(s)),
    }
}

fn collect_names(s: &Schema, names: &mut HashMap<Name, Schema>) {
    match s {
        Schema::Record(r) => {
            names.insert(r.name.clone(), s.clone());
            for f in &r.fields {
                collect_names(&f.schema, names);
            }
        }
        Schema::Union(u) => u.variants().iter().for_each(|v| collect_names(v, names)),
        Schema::Array(a) => collect_names(&a.items, names),
        Schema::Map(m) => collect_names(&m.types, names),
        Schema::Enum(e) => {
            names.insert(e.name.clone(), s.clone());
        }
        Schema::Fixed(f) => {
            names.insert(f.name.clone(), s.clone());
        }
        _ => {}
    }
}

fn field<'s>(s: &'s Schema, name: &str) -> Option<&'s Schema> {
    match s {
        Schema::Record(r) => r.fields.iter().find(|f| f.name == name).map(|f| &f.schema),
        _ => None,
    }
}

fn files_map(list: &[FilesEntry]) -> D {
    D::Map(
        list.iter()
            .map(|e| {
                let info = D::Rec(vec![
                    ("size", D::Long(e.size)),
                    ("isDeleted", D::Bool(e.is_deleted)),
                ]);
                (e.name.clone(), info)
            })
            .collect(),
    )
}

/// UUID file ids (`<uuid>-<n>`, or a bare UUID) as the two halves and index (encoding 0);
/// any other id verbatim (encoding 1), as Java `createRecordIndexUpdate` does.
fn record_index(ri: &RecordIndexEntry) -> D {
    let instant = ri.instant_time_ms.map_or(D::Null, D::Long);
    let position = ri.position.map_or(D::Null, D::Long);
    let fields = match split_file_id(&ri.file_id) {
        Some((hi, lo, index)) => vec![
            ("partitionName", D::Str(ri.partition.clone())),
            ("fileIdHighBits", D::Long(hi)),
            ("fileIdLowBits", D::Long(lo)),
            ("fileIndex", D::Int(index)),
            ("fileId", D::Str(String::new())),
            ("instantTime", instant),
            ("fileIdEncoding", D::Int(0)),
            ("position", position),
        ],
        None => vec![
            ("partitionName", D::Str(ri.partition.clone())),
            ("fileIdHighBits", D::Long(-1)),
            ("fileIdLowBits", D::Long(-1)),
            ("fileIndex", D::Int(-1)),
            ("fileId", D::Str(ri.file_id.clone())),
            ("instantTime", instant),
            ("fileIdEncoding", D::Int(1)),
            ("position", position),
        ],
    };
    D::Rec(fields)
}

fn zigzag(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn bytes(out: &mut Vec<u8>, b: &[u8]) {
    zigzag(out, b.len() as i64);
    out.extend_from_slice(b);
}
