//! Nested columns: lists, maps, and skipping writer fields the target does not read.

use super::*;

pub(super) struct ListDecoder {
    pub(super) item: Node,
    pub(super) field: FieldRef,
    pub(super) offsets: Vec<i32>,
    pub(super) nulls: NullBufferBuilder,
}

impl ListDecoder {
    pub(super) fn decode(&mut self, buf: &mut &[u8]) -> Result<()> {
        let item = &mut self.item;
        decode_entries(&mut self.offsets, &mut self.nulls, buf, |buf| {
            item.decode(buf)
        })
    }

    pub(super) fn push_null(&mut self) {
        push_null_entry(&mut self.offsets, &mut self.nulls);
    }

    pub(super) fn finish(&mut self) -> Result<ArrayRef> {
        let offsets = OffsetBuffer::new(std::mem::replace(&mut self.offsets, vec![0]).into());
        let values = self.item.finish()?;
        let list = ListArray::try_new(self.field.clone(), offsets, values, self.nulls.finish());
        Ok(Arc::new(list.map_err(arrow_err)?))
    }
}

pub(super) struct MapDecoder {
    pub(super) entries: FieldRef,
    pub(super) keys: Var,
    pub(super) value: Node,
    pub(super) offsets: Vec<i32>,
    pub(super) nulls: NullBufferBuilder,
}

impl MapDecoder {
    pub(super) fn plan(
        values: &Schema,
        entries: &FieldRef,
        names: &Names,
        depth: usize,
    ) -> Result<Self> {
        let bad = || HudiError::unsupported(format!("Arrow map type {}", entries.data_type()));
        let DataType::Struct(kv) = entries.data_type() else {
            return Err(bad());
        };
        if kv.len() != 2 || kv[0].data_type() != &DataType::Utf8 {
            return Err(bad());
        }
        Ok(MapDecoder {
            entries: entries.clone(),
            keys: Var::default(),
            value: Node::plan(values, kv[1].data_type(), names, depth + 1)?,
            offsets: vec![0],
            nulls: NullBufferBuilder::new(0),
        })
    }

    pub(super) fn decode(&mut self, buf: &mut &[u8]) -> Result<()> {
        let (keys, value) = (&mut self.keys, &mut self.value);
        decode_entries(&mut self.offsets, &mut self.nulls, buf, |buf| {
            keys.push(read_bytes(buf)?);
            value.decode(buf)
        })
    }

    pub(super) fn push_null(&mut self) {
        push_null_entry(&mut self.offsets, &mut self.nulls);
    }

    pub(super) fn finish(&mut self) -> Result<ArrayRef> {
        let DataType::Struct(kv) = self.entries.data_type() else {
            return Err(malformed("map entries are not a struct"));
        };
        let keys = self.keys.utf8()?;
        let values = self.value.finish()?;
        let entries =
            StructArray::try_new(kv.clone(), vec![keys, values], None).map_err(arrow_err)?;
        let offsets = OffsetBuffer::new(std::mem::replace(&mut self.offsets, vec![0]).into());
        let map = MapArray::try_new(
            self.entries.clone(),
            offsets,
            entries,
            self.nulls.finish(),
            false,
        );
        Ok(Arc::new(map.map_err(arrow_err)?))
    }
}

/// One array or map value: its blocks of entries, then its end offset.
fn decode_entries(
    offsets: &mut Vec<i32>,
    nulls: &mut NullBufferBuilder,
    buf: &mut &[u8],
    mut entry: impl FnMut(&mut &[u8]) -> Result<()>,
) -> Result<()> {
    let count = *offsets.last().unwrap_or(&0) as usize + each_item(buf, &mut entry)?;
    offsets.push(offset(count)?);
    nulls.append_non_null();
    Ok(())
}

/// One array or map value's blocks, `item` called for each item in turn; the item count.
pub(crate) fn each_item(
    buf: &mut &[u8],
    mut item: impl FnMut(&mut &[u8]) -> Result<()>,
) -> Result<usize> {
    let mut count = 0;
    loop {
        let n = read_block(buf)?;
        if n == 0 {
            return Ok(count);
        }
        check_count(n, buf)?;
        for _ in 0..n {
            item(buf)?;
        }
        count += n;
    }
}

fn push_null_entry(offsets: &mut Vec<i32>, nulls: &mut NullBufferBuilder) {
    offsets.push(*offsets.last().unwrap_or(&0));
    nulls.append_null();
}

pub(super) fn read_block(buf: &mut &[u8]) -> Result<usize> {
    crate::avro::binary::read_block_count(buf)
}

pub(super) fn offset(count: usize) -> Result<i32> {
    i32::try_from(count)
        .map_err(|_| HudiError::unsupported("more than 2^31 list items in one block"))
}

/// Skips a value the target does not want; also walks whole datums to check them
/// ([`crate::avro::guard`]). Planning one refuses what no Hudi schema holds and a hostile
/// one could use: recursion past [`MAX_DEPTH`], arrays of items that take no bytes (a huge
/// count would cost nothing), and `fixed` wider than [`MAX_FIXED`].
pub(crate) enum Skip {
    Nothing,
    Bool,
    Varint,
    Bytes,
    Fixed(usize),
    Union(Vec<Skip>),
    Record(Vec<Skip>),
    Array(Box<Skip>),
    Map(Box<Skip>),
}

impl Skip {
    pub(crate) fn plan(schema: &Schema, names: &Names, depth: usize) -> Result<Skip> {
        if depth > MAX_DEPTH {
            return Err(HudiError::unsupported("recursive Avro types"));
        }
        let plan = |s: &Schema| Skip::plan(s, names, depth + 1);
        Ok(match names.resolve(schema)? {
            Schema::Null => Skip::Nothing,
            Schema::Boolean => Skip::Bool,
            Schema::Float => Skip::Fixed(4),
            Schema::Double => Skip::Fixed(8),
            Schema::Bytes
            | Schema::String
            | Schema::BigDecimal
            | Schema::Uuid(UuidSchema::String | UuidSchema::Bytes) => Skip::Bytes,
            Schema::Fixed(f) | Schema::Duration(f) | Schema::Uuid(UuidSchema::Fixed(f)) => {
                if f.size > MAX_FIXED {
                    return Err(HudiError::unsupported(format!(
                        "Avro fixed of {} bytes (at most {MAX_FIXED})",
                        f.size
                    )));
                }
                Skip::Fixed(f.size)
            }
            Schema::Decimal(d) => decimal_fixed_size(&d.inner).map_or(Skip::Bytes, Skip::Fixed),
            Schema::Union(u) => Skip::Union(u.variants().iter().map(plan).collect::<Result<_>>()?),
            Schema::Record(r) => Skip::Record(
                r.fields
                    .iter()
                    .map(|f| plan(&f.schema))
                    .collect::<Result<_>>()?,
            ),
            Schema::Array(a) => {
                let item = plan(&a.items)?;
                if item.takes_no_bytes() {
                    return Err(HudiError::unsupported(
                        "Avro arrays of items that take no bytes (null, empty records)",
                    ));
                }
                Skip::Array(Box::new(item))
            }
            Schema::Map(m) => Skip::Map(Box::new(plan(&m.types)?)),
            // int, long, enum and their logical types.
            _ => Skip::Varint,
        })
    }

    /// Whether a value can be encoded in zero bytes.
    fn takes_no_bytes(&self) -> bool {
        match self {
            Skip::Nothing | Skip::Fixed(0) => true,
            Skip::Record(fields) => fields.iter().all(Skip::takes_no_bytes),
            _ => false,
        }
    }

    pub(crate) fn skip(&self, buf: &mut &[u8]) -> Result<()> {
        match self {
            Skip::Nothing => {}
            Skip::Bool => {
                read_fixed(buf, 1)?;
            }
            Skip::Varint => {
                read_long(buf)?;
            }
            Skip::Bytes => {
                read_bytes(buf)?;
            }
            Skip::Fixed(n) => {
                read_fixed(buf, *n)?;
            }
            Skip::Union(branches) => read_union_branch(buf, branches)?.skip(buf)?,
            Skip::Record(fields) => {
                for f in fields {
                    f.skip(buf)?;
                }
            }
            Skip::Array(item) => skip_blocks(buf, |buf| item.skip(buf))?,
            Skip::Map(value) => skip_blocks(buf, |buf| {
                read_bytes(buf)?;
                value.skip(buf)
            })?,
        }
        Ok(())
    }
}

/// Skips array/map blocks, jumping over sized blocks without reading their items.
pub(super) fn skip_blocks(
    buf: &mut &[u8],
    mut item: impl FnMut(&mut &[u8]) -> Result<()>,
) -> Result<()> {
    loop {
        let n = read_long(buf)?;
        if n == 0 {
            return Ok(());
        }
        if n < 0 {
            let size = read_len(buf)?;
            read_fixed(buf, size)?;
            continue;
        }
        let n = n as usize;
        check_count(n, buf)?;
        for _ in 0..n {
            item(buf)?;
        }
    }
}
