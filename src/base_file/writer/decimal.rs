//! Decimal columns at the size the table's Avro schema gives them. A `fixed(n)` decimal is a
//! `FIXED_LEN_BYTE_ARRAY(n)`, whatever `n` is (parquet-avro's mapping). A `bytes` decimal has
//! no size: it takes the fewest bytes its precision needs, as Spark's fixed decimals and
//! hudi-rs' wide ones do. parquet-avro would write `BINARY` there, which Spark 3.5's vectorized
//! reader refuses below precision 19 (Apache Hudi 1.1.1 cannot read back its own such files);
//! fixed-length bytes are read by Spark, parquet-avro and arrow-rs alike. arrow-rs sizes fixed
//! decimals by precision only, so the arrays reach it as fixed-size binary and the Parquet
//! leaves are typed here.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::Decimal128Type;
use arrow_array::{
    Array, ArrayRef, FixedSizeBinaryArray, LargeListArray, ListArray, MapArray, RecordBatch,
    StructArray,
};
use arrow_schema::{DataType, FieldRef, Fields, Schema};
use parquet::basic::{LogicalType, Type as PhysicalType};
use parquet::schema::types::{Type, TypePtr};
use serde_json::Value as Json;

use crate::error::{HudiError, Result};

/// A Decimal128's unscaled value takes at most 16 bytes; wider fixed sizes would need
/// readers (arrow-rs among them) to take more than they do.
const MAX_FIXED: usize = 16;

/// The size of every decimal leaf of `schema`, in Parquet's leaf order, from the Avro record
/// `avro` whose fields the schema's are.
pub(super) fn sizes(avro: &Json, schema: &Schema) -> Result<Vec<usize>> {
    let mut names = HashMap::new();
    named_types(avro, "", &mut names);
    let fields = avro.get("fields").and_then(Json::as_array);
    let mut out = Vec::new();
    for (i, field) in schema.fields().iter().enumerate() {
        let ty = fields.and_then(|f| f.get(i)).and_then(|f| f.get("type"));
        walk(field.name(), field.data_type(), ty, &names, &mut out)?;
    }
    Ok(out)
}

/// Named types by full and by short name, so references resolve.
fn named_types<'a>(ty: &'a Json, namespace: &str, names: &mut HashMap<String, &'a Json>) {
    match ty {
        Json::Array(branches) => branches
            .iter()
            .for_each(|b| named_types(b, namespace, names)),
        Json::Object(o) => {
            let ns = o
                .get("namespace")
                .and_then(Json::as_str)
                .unwrap_or(namespace);
            if let Some(name) = o.get("name").and_then(Json::as_str) {
                if matches!(
                    o.get("type").and_then(Json::as_str),
                    Some("record" | "fixed" | "enum")
                ) {
                    let short = name.rsplit('.').next().unwrap_or(name);
                    names.insert(short.to_string(), ty);
                    if !ns.is_empty() && !name.contains('.') {
                        names.insert(format!("{ns}.{name}"), ty);
                    }
                    names.insert(name.to_string(), ty);
                }
            }
            for f in o
                .get("fields")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(t) = f.get("type") {
                    named_types(t, ns, names);
                }
            }
            for key in ["type", "items", "values"] {
                if let Some(t) = o.get(key).filter(|t| !t.is_string()) {
                    named_types(t, ns, names);
                }
            }
        }
        _ => {}
    }
}

/// The type behind a nullable union and a name reference.
fn resolve<'a>(ty: Option<&'a Json>, names: &HashMap<String, &'a Json>) -> Option<&'a Json> {
    match ty? {
        Json::Array(branches) => {
            let mut values = branches.iter().filter(|b| b.as_str() != Some("null"));
            match (values.next(), values.next()) {
                (Some(t), None) => resolve(Some(t), names),
                _ => None,
            }
        }
        Json::String(name) => names.get(name.as_str()).copied().or(ty),
        Json::Object(o) if o.get("type").is_some_and(|t| !t.is_string()) => {
            resolve(o.get("type"), names)
        }
        t => Some(t),
    }
}

fn walk(
    path: &str,
    data_type: &DataType,
    avro: Option<&Json>,
    names: &HashMap<String, &Json>,
    out: &mut Vec<usize>,
) -> Result<()> {
    let ty = || resolve(avro, names);
    let child = |key: &str| ty().and_then(|t| t.get(key));
    match data_type {
        DataType::Decimal128(precision, _) => out.push(size(path, *precision, ty())?),
        DataType::Decimal32(..) | DataType::Decimal64(..) | DataType::Decimal256(..) => {
            return Err(HudiError::unsupported(format!(
                "decimal column {path} of Arrow type {data_type}: only Decimal128 (precision \
                 up to 38) is written"
            )))
        }
        DataType::Struct(fields) => {
            let avro_fields = child("fields").and_then(Json::as_array);
            for (i, f) in fields.iter().enumerate() {
                let t = avro_fields
                    .and_then(|a| a.get(i))
                    .and_then(|f| f.get("type"));
                walk(
                    &format!("{path}.{}", f.name()),
                    f.data_type(),
                    t,
                    names,
                    out,
                )?;
            }
        }
        DataType::List(f) | DataType::LargeList(f) => {
            walk(path, f.data_type(), child("items"), names, out)?
        }
        DataType::Map(entries, _) => {
            if let DataType::Struct(kv) = entries.data_type() {
                let values = child("values");
                for (i, f) in kv.iter().enumerate() {
                    walk(
                        path,
                        f.data_type(),
                        (i == 1).then_some(values).flatten(),
                        names,
                        out,
                    )?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn size(path: &str, precision: u8, ty: Option<&Json>) -> Result<usize> {
    let decimal = ty.filter(|t| t.get("logicalType").and_then(Json::as_str) == Some("decimal"));
    let min = decimal_bytes(precision);
    let refused = |why: String| {
        HudiError::unsupported(format!(
            "decimal column {path} as Avro {}: {why}",
            ty.map(Json::to_string).unwrap_or_else(|| "(none)".into())
        ))
    };
    match decimal.and_then(|t| t.get("type")).and_then(Json::as_str) {
        Some("bytes") => Ok(min),
        Some("fixed") => match decimal.and_then(|t| t.get("size")).and_then(Json::as_u64) {
            Some(n) if (min as u64..=MAX_FIXED as u64).contains(&n) => Ok(n as usize),
            Some(n) => Err(refused(format!(
                "a fixed of {n} bytes; written are {min} to {MAX_FIXED}"
            ))),
            None => Err(refused("a fixed without a size".into())),
        },
        _ => Err(refused("not a decimal `bytes` or `fixed`".into())),
    }
}

/// The fewest bytes holding any unscaled value of `precision` digits, signed: Spark's
/// `minBytesForPrecision` (the size Spark declares its fixed decimals at).
pub(super) fn decimal_bytes(precision: u8) -> usize {
    let max = 10u128.saturating_pow(precision.min(38) as u32) - 1;
    (1..=16usize)
        .find(|n| (1u128 << (8 * n - 1)) > max)
        .unwrap_or(16)
}

/// `batch` with every decimal leaf as fixed-size binary of its size, in the order of `sizes`.
pub(super) fn encode(batch: &RecordBatch, sizes: &[usize]) -> Result<RecordBatch> {
    let mut next = sizes.iter().copied();
    let schema = batch.schema();
    let mut fields = Vec::with_capacity(schema.fields().len());
    let mut columns = Vec::with_capacity(fields.capacity());
    for (f, column) in schema.fields().iter().zip(batch.columns()) {
        let (field, array) = encode_array(f, column, &mut next)?;
        fields.push(field);
        columns.push(array);
    }
    let schema = Schema::new(fields).with_metadata(schema.metadata().clone());
    RecordBatch::try_new(Arc::new(schema), columns).map_err(arrow_err)
}

fn arrow_err(e: arrow_schema::ArrowError) -> HudiError {
    HudiError::invalid(format!("base file decimal columns: {e}"))
}

fn encode_array(
    field: &FieldRef,
    array: &ArrayRef,
    next: &mut impl Iterator<Item = usize>,
) -> Result<(FieldRef, ArrayRef)> {
    let with_type = |t: DataType| Arc::new(field.as_ref().clone().with_data_type(t));
    let array: ArrayRef = match field.data_type() {
        DataType::Decimal128(..) => {
            let values = array.as_primitive::<Decimal128Type>();
            let missing = || HudiError::invalid("base file: a decimal leaf without its size");
            let n = next.next().ok_or_else(missing)?;
            let mut bytes = Vec::with_capacity(values.len());
            for v in values.iter() {
                let too_wide = |v| {
                    HudiError::invalid_input(format!(
                        "decimal column {}: unscaled value {v} does not fit {n} bytes",
                        field.name()
                    ))
                };
                bytes.push(match v {
                    Some(v) => Some(sign_extended(v, n).ok_or_else(|| too_wide(v))?),
                    None => None,
                });
            }
            let encoded: ArrayRef = Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(bytes.into_iter(), n as i32)
                    .map_err(arrow_err)?,
            );
            return Ok((with_type(encoded.data_type().clone()), encoded));
        }
        DataType::Struct(_) => {
            let s = array.as_struct();
            let mut fields = Vec::new();
            let mut children = Vec::new();
            for (f, c) in s.fields().iter().zip(s.columns()) {
                let (f, c) = encode_array(f, c, next)?;
                fields.push(f);
                children.push(c);
            }
            let fields = Fields::from(fields);
            Arc::new(StructArray::try_new(fields, children, s.nulls().cloned()).map_err(arrow_err)?)
        }
        DataType::List(f) => {
            let l = array.as_list::<i32>();
            let (f, values) = encode_array(f, l.values(), next)?;
            let offsets = l.offsets().clone();
            Arc::new(ListArray::try_new(f, offsets, values, l.nulls().cloned()).map_err(arrow_err)?)
        }
        DataType::LargeList(f) => {
            let l = array.as_list::<i64>();
            let (f, values) = encode_array(f, l.values(), next)?;
            let offsets = l.offsets().clone();
            Arc::new(
                LargeListArray::try_new(f, offsets, values, l.nulls().cloned())
                    .map_err(arrow_err)?,
            )
        }
        DataType::Map(entries_field, ordered) => {
            let m = array.as_map();
            let entries: ArrayRef = Arc::new(m.entries().clone());
            let (f, entries) = encode_array(entries_field, &entries, next)?;
            let offsets = m.offsets().clone();
            Arc::new(
                MapArray::try_new(
                    f,
                    offsets,
                    entries.as_struct().clone(),
                    m.nulls().cloned(),
                    *ordered,
                )
                .map_err(arrow_err)?,
            )
        }
        _ => return Ok((field.clone(), array.clone())),
    };
    Ok((with_type(array.data_type().clone()), array))
}

/// Big-endian two's complement of `v` in `n` (at most 16) bytes, if it fits.
fn sign_extended(v: i128, n: usize) -> Option<Vec<u8>> {
    let n = n.clamp(1, 16);
    let rest = v >> (8 * n - 1);
    (n == 16 || rest == 0 || rest == -1).then(|| v.to_be_bytes()[16 - n..].to_vec())
}

/// The Parquet type arrow-rs gives `t`, with each decimal leaf fixed-length at its size.
pub(super) fn parquet_type(t: &TypePtr, next: &mut impl Iterator<Item = usize>) -> Result<TypePtr> {
    let info = t.get_basic_info();
    let err = |e: parquet::errors::ParquetError| {
        HudiError::unsupported(format!("base file column {}: {e}", info.name()))
    };
    if t.is_group() {
        let fields = t
            .get_fields()
            .iter()
            .map(|f| parquet_type(f, next))
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
    if !matches!(info.logical_type_ref(), Some(LogicalType::Decimal { .. })) {
        return Ok(t.clone());
    }
    let missing = || HudiError::invalid(format!("base file: no size for decimal {}", info.name()));
    let length = next.next().ok_or_else(missing)? as i32;
    let ty = Type::primitive_type_builder(info.name(), PhysicalType::FIXED_LEN_BYTE_ARRAY)
        .with_repetition(info.repetition())
        .with_logical_type(info.logical_type_ref().cloned())
        .with_precision(t.get_precision())
        .with_scale(t.get_scale())
        .with_length(length)
        .with_id(info.has_id().then(|| info.id()))
        .build()
        .map_err(err)?;
    Ok(Arc::new(ty))
}
