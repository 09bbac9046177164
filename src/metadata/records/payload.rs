//! Decoded `HoodieMetadataRecord` values → typed payloads, one record type at a time
//! (files, column and partition stats, record index, secondary index, bloom filters).

use super::*;

/// Field access with errors that name the file and the record key.
pub(super) struct Ctx<'a> {
    pub(super) decoder: &'a RecordDecoder,
    pub(super) key: &'a str,
}

impl Ctx<'_> {
    pub(super) fn bad(&self, what: impl fmt::Display) -> HudiError {
        HudiError::corrupt(
            &self.decoder.source,
            format!("metadata record {:?}: {what}", self.key),
        )
    }

    pub(super) fn payload(&self, f: &Fields) -> Result<MetadataPayload> {
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

pub(super) fn kind(v: &AvroValue) -> &'static str {
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
pub(super) fn uuid_string(high: i64, low: i64) -> String {
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
