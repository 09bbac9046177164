//! Avro binary datums → Arrow, straight into column buffers.
//!
//! [`AvroToArrow`] compiles the writer schema against a target Arrow schema once into a tree
//! of decoders, each owning its output buffer; every datum is then a walk over that tree with
//! no per-record allocation. Resolution follows Avro's rules by field name: target fields the
//! writer lacks come back null, writer fields the target lacks are skipped, and leaves are
//! promoted (int→long/float/double, long→float/double, float→double, string↔bytes, plus
//! int→int8/int16, timestamp unit/zone changes and decimal widening) with one vectorized
//! cast per column at the end.

use std::sync::Arc;

use apache_avro::schema::{RecordSchema, UnionSchema, UuidSchema};
use apache_avro::Schema;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time32MillisecondType, Time64MicrosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType,
};
use arrow_array::{
    new_null_array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, FixedSizeBinaryArray,
    ListArray, MapArray, PrimitiveArray, RecordBatch, RecordBatchOptions, StringArray, StructArray,
};
use arrow_buffer::{
    ArrowNativeType, BooleanBufferBuilder, NullBufferBuilder, OffsetBuffer, ScalarBuffer,
};
use arrow_schema::{ArrowError, DataType, FieldRef, Fields, SchemaRef, TimeUnit};

use super::binary::{
    be_i128, read_bool, read_bytes, read_f32, read_f64, read_fixed, read_int, read_len, read_long,
    read_union_branch,
};
use super::to_arrow::{
    avro_schema_to_arrow, decimal_fixed_size, kind_name, leaf_type, union_shape, Names, UnionShape,
    MAX_DEPTH,
};
use crate::error::{malformed, HudiError, Result};

mod leaf;
mod nested;

pub(crate) use nested::{each_item, Skip};

use leaf::*;
use nested::*;

/// Decodes Avro binary datums of one writer schema into batches of a target schema.
pub struct AvroToArrow {
    writer: Schema,
    target: SchemaRef,
    root: StructDecoder,
    /// A datum failed half-way, so columns may be uneven until the next `finish`.
    failed: bool,
}

impl AvroToArrow {
    /// `writer` must be a record schema; `target` may be newer (added, dropped or promoted
    /// columns).
    pub fn new(writer: &Schema, target: SchemaRef) -> Result<Self> {
        crate::avro::guard::Checked::new(writer)?;
        let root = plan_root(writer, &target)?;
        Ok(AvroToArrow {
            writer: writer.clone(),
            target,
            root,
            failed: false,
        })
    }

    /// Decodes into the writer schema's own Arrow form ([`avro_schema_to_arrow`]).
    pub fn for_writer(writer: &Schema) -> Result<Self> {
        Self::new(writer, Arc::new(avro_schema_to_arrow(writer)?))
    }

    pub fn schema(&self) -> &SchemaRef {
        &self.target
    }

    pub fn reserve(&mut self, rows: usize) {
        self.root.reserve(rows);
    }

    /// Decodes one datum. Bytes after the datum are ignored, as Java's decoder does. After an
    /// error the rows so far are lost: the next `finish` fails and empties the decoder.
    pub fn append(&mut self, datum: &[u8]) -> Result<()> {
        let result = self.root.decode(&mut &datum[..]);
        self.failed |= result.is_err();
        result
    }

    /// Rows appended since the last `finish`.
    pub fn rows(&self) -> usize {
        self.root.len
    }

    /// The rows appended so far as one batch; the decoder is then empty and reusable, also
    /// after an error.
    pub fn finish(&mut self) -> Result<RecordBatch> {
        let result = if std::mem::take(&mut self.failed) {
            Err(malformed("an Avro datum of this batch failed to decode"))
        } else {
            self.take_batch()
        };
        if result.is_err() {
            self.root = plan_root(&self.writer, &self.target)?;
        }
        result
    }

    fn take_batch(&mut self) -> Result<RecordBatch> {
        let rows = self.root.len;
        let columns = self.root.finish_columns()?;
        self.root.nulls.finish(); // the top level has no validity
        let opts = RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.target.clone(), columns, &opts).map_err(arrow_err)
    }
}

fn plan_root(writer: &Schema, target: &SchemaRef) -> Result<StructDecoder> {
    let names = Names::of(writer)?;
    let Schema::Record(record) = names.resolve(writer)? else {
        return Err(HudiError::unsupported(
            "Avro data whose schema is not a record",
        ));
    };
    StructDecoder::plan(record, target.fields(), &names, 0)
}

fn arrow_err(e: ArrowError) -> HudiError {
    HudiError::corrupt_by("", "decoded Avro data does not fit Arrow", e)
}

fn mismatch(schema: &Schema, target: &DataType) -> HudiError {
    HudiError::unsupported(format!(
        "reading Avro {} as Arrow {target}",
        kind_name(schema)
    ))
}

/// Prefixes a planning error with the field it is about.
fn in_field(name: &str) -> impl Fn(HudiError) -> HudiError + '_ {
    move |e| match e {
        HudiError::Unsupported { what, path } => HudiError::Unsupported {
            what: format!("field `{name}`: {what}"),
            path,
        },
        other => other,
    }
}

/// Largest `fixed` read into a column (null slots are zero-filled at this width).
pub(crate) const MAX_FIXED: usize = 1 << 20;

/// Bounds an array/map block count: every item takes at least a byte (schemas whose array
/// items may take none are refused when the decoder is planned).
fn check_count(n: usize, buf: &[u8]) -> Result<()> {
    if n > buf.len() {
        return Err(malformed(format!(
            "Avro block of {n} items in {} bytes",
            buf.len()
        )));
    }
    Ok(())
}

/// A record read into a struct (or into the batch's columns at the top).
struct StructDecoder {
    pub(super) fields: Fields,
    pub(super) steps: Vec<FieldStep>,
    pub(super) len: usize,
    pub(super) nulls: NullBufferBuilder,
}

enum FieldStep {
    Read { target: usize, node: Node },
    Skip(Skip),
}

impl StructDecoder {
    fn plan(record: &RecordSchema, fields: &Fields, names: &Names, depth: usize) -> Result<Self> {
        let targets = match_fields(record, fields);
        let mut fed = vec![false; fields.len()];
        let mut steps = Vec::with_capacity(record.fields.len());
        for (wf, target) in record.fields.iter().zip(targets) {
            let step = match target {
                Some(i) => {
                    fed[i] = true;
                    let node = Node::plan(&wf.schema, fields[i].data_type(), names, depth + 1)
                        .map_err(in_field(&wf.name))?;
                    FieldStep::Read { target: i, node }
                }
                None => FieldStep::Skip(Skip::plan(&wf.schema, names, depth + 1)?),
            };
            steps.push(step);
        }
        if let Some(f) = fields
            .iter()
            .zip(&fed)
            .find(|(f, fed)| !**fed && !f.is_nullable())
        {
            return Err(HudiError::unsupported(format!(
                "field `{}` is missing from the Avro data and not nullable",
                f.0.name()
            )));
        }
        Ok(StructDecoder {
            fields: fields.clone(),
            steps,
            len: 0,
            nulls: NullBufferBuilder::new(0),
        })
    }

    fn reserve(&mut self, rows: usize) {
        for step in &mut self.steps {
            if let FieldStep::Read { node, .. } = step {
                node.kind.reserve(rows);
            }
        }
    }

    #[inline]
    fn decode(&mut self, buf: &mut &[u8]) -> Result<()> {
        for step in &mut self.steps {
            match step {
                FieldStep::Read { node, .. } => node.decode(buf)?,
                FieldStep::Skip(skip) => skip.skip(buf)?,
            }
        }
        self.len += 1;
        self.nulls.append_non_null();
        Ok(())
    }

    fn push_null(&mut self) {
        for step in &mut self.steps {
            if let FieldStep::Read { node, .. } = step {
                node.kind.push_null();
            }
        }
        self.len += 1;
        self.nulls.append_null();
    }

    /// One array per target field (all-null for fields the writer lacks); resets.
    fn finish_columns(&mut self) -> Result<Vec<ArrayRef>> {
        let mut cols: Vec<Option<ArrayRef>> = vec![None; self.fields.len()];
        for step in &mut self.steps {
            if let FieldStep::Read { target, node } = step {
                cols[*target] = Some(node.finish()?);
            }
        }
        let len = std::mem::take(&mut self.len);
        Ok(cols
            .into_iter()
            .zip(self.fields.iter())
            .map(|(c, f)| c.unwrap_or_else(|| new_null_array(f.data_type(), len)))
            .collect())
    }

    fn finish_struct(&mut self) -> Result<ArrayRef> {
        let len = self.len;
        let columns = self.finish_columns()?;
        let nulls = self.nulls.finish();
        StructArray::try_new_with_length(self.fields.clone(), columns, nulls, len)
            .map(|a| Arc::new(a) as ArrayRef)
            .map_err(arrow_err)
    }
}

/// The target field each writer field feeds: exact names first, then a unique
/// case-insensitive match among the rest (Spark/Hudi column names are case-insensitive).
fn match_fields(record: &RecordSchema, fields: &Fields) -> Vec<Option<usize>> {
    let mut taken = vec![false; fields.len()];
    let mut targets: Vec<Option<usize>> = record
        .fields
        .iter()
        .map(|wf| {
            let i = fields.iter().position(|f| f.name() == &wf.name)?;
            (!std::mem::replace(&mut taken[i], true)).then_some(i)
        })
        .collect();
    for (wf, target) in record.fields.iter().zip(targets.iter_mut()) {
        if target.is_some() {
            continue;
        }
        let mut candidates = (0..fields.len())
            .filter(|i| !taken[*i] && fields[*i].name().eq_ignore_ascii_case(&wf.name));
        if let (Some(i), None) = (candidates.next(), candidates.next()) {
            taken[i] = true;
            *target = Some(i);
        }
    }
    targets
}

/// One value position: how to read it and where it goes.
struct Node {
    pub(super) prefix: Prefix,
    pub(super) kind: Kind,
    /// The Arrow type `kind` produces.
    pub(super) natural: DataType,
    /// Target type when it differs from `natural` (promotion cast at finish).
    pub(super) cast_to: Option<DataType>,
}

/// Union branch index read before the value, for `[null, T]`-style unions.
#[derive(Clone, Copy)]
enum Prefix {
    Plain,
    Union { null: Option<i64>, value: i64 },
}

impl Node {
    fn new(kind: Kind, natural: DataType, target: &DataType) -> Node {
        let cast_to = (natural != *target).then(|| target.clone());
        Node {
            prefix: Prefix::Plain,
            kind,
            natural,
            cast_to,
        }
    }

    fn plan(schema: &Schema, target: &DataType, names: &Names, depth: usize) -> Result<Node> {
        if depth > MAX_DEPTH {
            return Err(HudiError::unsupported("recursive Avro types"));
        }
        let schema = names.resolve(schema)?;
        let kind = match (schema, target) {
            (Schema::Union(u), _) => return plan_union(u, target, names, depth),
            (Schema::Null, _) => Kind::Null(0),
            (Schema::Record(r), DataType::Struct(fields)) => {
                Kind::Struct(Box::new(StructDecoder::plan(r, fields, names, depth + 1)?))
            }
            (Schema::Array(a), DataType::List(item)) => Kind::List(Box::new(ListDecoder {
                item: Node::plan(&a.items, item.data_type(), names, depth + 1)?,
                field: item.clone(),
                offsets: vec![0],
                nulls: NullBufferBuilder::new(0),
            })),
            (Schema::Map(m), DataType::Map(entries, _)) => {
                Kind::Map(Box::new(MapDecoder::plan(&m.types, entries, names, depth)?))
            }
            (Schema::Record(_) | Schema::Array(_) | Schema::Map(_), _) => {
                return Err(mismatch(schema, target))
            }
            (leaf, _) => return plan_leaf(leaf, target),
        };
        Ok(Node::new(kind, target.clone(), target))
    }

    #[inline]
    fn decode(&mut self, buf: &mut &[u8]) -> Result<()> {
        if let Prefix::Union { null, value } = self.prefix {
            let branch = read_long(buf)?;
            if Some(branch) == null {
                self.kind.push_null();
                return Ok(());
            }
            if branch != value {
                return Err(malformed(format!("bad Avro union branch {branch}")));
            }
        }
        self.kind.decode(buf)
    }

    fn finish(&mut self) -> Result<ArrayRef> {
        let array = self.kind.finish(&self.natural)?;
        match &self.cast_to {
            None => Ok(array),
            Some(t) => crate::cast::cast(array.as_ref(), t, false).map_err(arrow_err),
        }
    }
}

fn plan_leaf(leaf: &Schema, target: &DataType) -> Result<Node> {
    let natural = leaf_type(leaf)?;
    if !promotable(&natural, target) {
        return Err(mismatch(leaf, target));
    }
    let kind = match leaf {
        Schema::Boolean => Kind::Bool(BooleanBufferBuilder::new(0), NullBufferBuilder::new(0)),
        Schema::Int | Schema::Date | Schema::TimeMillis => Kind::Int(Prim::default()),
        Schema::Float => Kind::Float(Prim::default()),
        Schema::Double => Kind::Double(Prim::default()),
        Schema::Bytes | Schema::String | Schema::Uuid(UuidSchema::String | UuidSchema::Bytes) => {
            Kind::Bytes(Var::default())
        }
        Schema::Enum(e) => Kind::Enum(Var::default(), e.symbols.clone()),
        Schema::Fixed(f) | Schema::Uuid(UuidSchema::Fixed(f)) => {
            if f.size > MAX_FIXED {
                return Err(HudiError::unsupported(format!(
                    "Avro fixed of {} bytes",
                    f.size
                )));
            }
            Kind::Fixed(f.size, Prim::default())
        }
        Schema::Decimal(d) => Kind::Decimal(decimal_fixed_size(&d.inner), Prim::default()),
        // Longs and every long-based logical type.
        _ => Kind::Long(Prim::default()),
    };
    Ok(Node::new(kind, natural, target))
}

/// Leaf promotions allowed when the target type differs from the writer's.
fn promotable(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    from == to
        || match (from, to) {
            (Int32, Int8 | Int16 | Int64 | Float32 | Float64) => true,
            (Int64, Float32 | Float64) | (Float32, Float64) => true,
            (Utf8, Binary | LargeUtf8 | LargeBinary) | (Binary, Utf8 | LargeBinary | LargeUtf8) => {
                true
            }
            (FixedSizeBinary(_), Binary | LargeBinary) => true,
            (Timestamp(..), Timestamp(..)) | (Time32(_), Time64(_)) => true,
            (Decimal128(p1, s1), Decimal128(p2, s2)) => {
                s2 >= s1 && (*p2 as i16 - *s2 as i16) >= (*p1 as i16 - *s1 as i16)
            }
            _ => false,
        }
}

fn plan_union(u: &UnionSchema, target: &DataType, names: &Names, depth: usize) -> Result<Node> {
    let branch_of = |pred: &dyn Fn(&Schema) -> bool| -> Option<i64> {
        u.variants()
            .iter()
            .position(|v| names.resolve(v).is_ok_and(pred))
            .map(|i| i as i64)
    };
    let null = branch_of(&|s| matches!(s, Schema::Null));
    let value = branch_of(&|s| !matches!(s, Schema::Null)).unwrap_or(-1);
    let mut node = match union_shape(u, names)? {
        UnionShape::Null => Node::new(Kind::Null(0), target.clone(), target),
        UnionShape::Single(s) => Node::plan(s, target, names, depth + 1)?,
        UnionShape::Numeric(natural) => {
            if !promotable(&natural, target) {
                return Err(mismatch(&Schema::Union(u.clone()), target));
            }
            let branches = numeric_branches(u, names)?;
            let kind = match natural {
                DataType::Int64 => Kind::IntUnion(branches, Prim::default()),
                _ => Kind::FloatUnion(branches, Prim::default()),
            };
            return Ok(Node::new(kind, natural, target));
        }
        UnionShape::Members(_) => {
            let kind = Kind::Members(Box::new(MembersDecoder::plan(u, target, names, depth)?));
            return Ok(Node::new(kind, target.clone(), target));
        }
    };
    node.prefix = Prefix::Union { null, value };
    Ok(node)
}

/// One `Var` column per member; which one a value goes to is the union branch.
struct MembersDecoder {
    /// Per union branch: `None` for `null`, else the member index.
    pub(super) branches: Vec<Option<usize>>,
    pub(super) members: Vec<Node>,
    pub(super) fields: Fields,
    pub(super) len: usize,
    pub(super) nulls: NullBufferBuilder,
}

impl MembersDecoder {
    fn plan(u: &UnionSchema, target: &DataType, names: &Names, depth: usize) -> Result<Self> {
        let DataType::Struct(fields) = target else {
            return Err(mismatch(&Schema::Union(u.clone()), target));
        };
        let mut branches = Vec::new();
        let mut members = Vec::new();
        for v in u.variants() {
            let v = names.resolve(v)?;
            if matches!(v, Schema::Null) {
                branches.push(None);
                continue;
            }
            let field = fields
                .get(members.len())
                .ok_or_else(|| mismatch(&Schema::Union(u.clone()), target))?;
            branches.push(Some(members.len()));
            members.push(Node::plan(v, field.data_type(), names, depth + 1)?);
        }
        if members.len() != fields.len() {
            return Err(mismatch(&Schema::Union(u.clone()), target));
        }
        Ok(MembersDecoder {
            branches,
            members,
            fields: fields.clone(),
            len: 0,
            nulls: NullBufferBuilder::new(0),
        })
    }

    fn decode(&mut self, buf: &mut &[u8]) -> Result<()> {
        let Some(chosen) = *read_union_branch(buf, &self.branches)? else {
            self.push_null();
            return Ok(());
        };
        for (i, m) in self.members.iter_mut().enumerate() {
            if i == chosen {
                m.decode(buf)?;
            } else {
                m.kind.push_null();
            }
        }
        self.len += 1;
        self.nulls.append_non_null();
        Ok(())
    }

    fn push_null(&mut self) {
        self.members.iter_mut().for_each(|m| m.kind.push_null());
        self.len += 1;
        self.nulls.append_null();
    }

    fn finish(&mut self) -> Result<ArrayRef> {
        let columns: Result<Vec<ArrayRef>> = self.members.iter_mut().map(Node::finish).collect();
        let len = std::mem::take(&mut self.len);
        StructArray::try_new_with_length(self.fields.clone(), columns?, self.nulls.finish(), len)
            .map(|a| Arc::new(a) as ArrayRef)
            .map_err(arrow_err)
    }
}

/// What each branch of an all-numeric union holds.
#[derive(Clone, Copy)]
enum NumBranch {
    Null,
    Int,
    Long,
    Float,
    Double,
}

fn numeric_branches(u: &UnionSchema, names: &Names) -> Result<Vec<NumBranch>> {
    u.variants()
        .iter()
        .map(|v| {
            Ok(match names.resolve(v)? {
                Schema::Null => NumBranch::Null,
                Schema::Int => NumBranch::Int,
                Schema::Long => NumBranch::Long,
                Schema::Float => NumBranch::Float,
                _ => NumBranch::Double,
            })
        })
        .collect()
}
