//! Delete block content (docs: hudi-format §5.7): `int version | int length | payload`, where a
//! version-3 payload is Avro `HoodieDeleteRecordList` whose ordering value is a union of
//! wrapper records (Java `HoodieDeleteRecordList.avsc`, `HoodieMetadata.avsc` wrappers).

use crate::avro::binary::{
    be_i128, i128_to_be_min, read_block_count, read_bool, read_bytes, read_f32, read_f64, read_int,
    read_long, read_string, write_bytes, write_long,
};
use crate::error::{malformed, HudiError, Result};

/// Current delete block content version (Avro); 1 and 2 were Java/Kryo serialized.
pub const DELETE_BLOCK_VERSION: i32 = 3;
/// Precision and scale of `DecimalWrapper` values.
pub const DECIMAL_WRAPPER_PRECISION: u8 = 30;
pub const DECIMAL_WRAPPER_SCALE: i8 = 15;

/// One record key to delete.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DeleteRecord {
    pub record_key: Option<String>,
    pub partition_path: Option<String>,
    pub ordering: OrderingValue,
}

/// The ordering value a delete carries, one variant per wrapper-union branch.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum OrderingValue {
    None,
    Bool(bool),
    Int(i32),
    Long(i64),
    Float(f32),
    Double(f64),
    Bytes(Vec<u8>),
    String(String),
    /// Days since the epoch.
    Date(i32),
    /// Unscaled value of a decimal(30, 15).
    Decimal(i128),
    TimeMicros(i64),
    TimestampMicros(i64),
    /// Multi-field ordering (Hudi 1.1+ `ArrayWrapper`).
    Array(Vec<OrderingValue>),
}

impl OrderingValue {
    /// Whether this is the "no ordering value" default (`IntWrapper(0)` or null) that makes a
    /// delete apply by commit order (docs: hudi-format §6.5). An array is default when all its
    /// values are [unverified against Java].
    pub fn is_natural_order(&self) -> bool {
        match self {
            OrderingValue::None | OrderingValue::Int(0) => true,
            OrderingValue::Array(items) => items.iter().all(Self::is_natural_order),
            _ => false,
        }
    }

    /// Branch index in the ordering-value union (0 = null … 12 = ArrayWrapper).
    pub fn branch(&self) -> i64 {
        match self {
            OrderingValue::None => 0,
            OrderingValue::Bool(_) => 1,
            OrderingValue::Int(_) => 2,
            OrderingValue::Long(_) => 3,
            OrderingValue::Float(_) => 4,
            OrderingValue::Double(_) => 5,
            OrderingValue::Bytes(_) => 6,
            OrderingValue::String(_) => 7,
            OrderingValue::Date(_) => 8,
            OrderingValue::Decimal(_) => 9,
            OrderingValue::TimeMicros(_) => 10,
            OrderingValue::TimestampMicros(_) => 11,
            OrderingValue::Array(_) => 12,
        }
    }
}

/// Decodes a delete block's content into its records.
pub fn decode_delete_block(content: &[u8], path: &str) -> Result<Vec<DeleteRecord>> {
    decode(content).map_err(|e| e.in_file(path))
}

fn decode(content: &[u8]) -> Result<Vec<DeleteRecord>> {
    let (head, rest) = content
        .split_at_checked(8)
        .ok_or_else(|| malformed("delete block shorter than its 8-byte prefix"))?;
    let version = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let len = i32::from_be_bytes([head[4], head[5], head[6], head[7]]);
    if matches!(version, 1 | 2) {
        return Err(HudiError::unsupported(format!(
            "delete block version {version} (Java-serialized keys from old Hudi releases)"
        )));
    }
    let payload = usize::try_from(len)
        .ok()
        .and_then(|n| rest.get(..n))
        .ok_or_else(|| malformed(format!("delete block payload length {len} is wrong")))?;
    decode_record_list(&mut &payload[..])
}

fn decode_record_list(buf: &mut &[u8]) -> Result<Vec<DeleteRecord>> {
    let mut out = Vec::new();
    loop {
        let n = read_block_count(buf)?;
        if n == 0 {
            return Ok(out);
        }
        out.reserve(n.min(buf.len()));
        for _ in 0..n {
            out.push(DeleteRecord {
                record_key: read_optional_string(buf)?,
                partition_path: read_optional_string(buf)?,
                ordering: read_ordering(buf, false)?,
            });
        }
    }
}

fn read_optional_string(buf: &mut &[u8]) -> Result<Option<String>> {
    match read_long(buf)? {
        0 => Ok(None),
        1 => Ok(Some(read_string(buf)?.to_string())),
        b => Err(malformed(format!(
            "bad union branch {b} for a nullable string"
        ))),
    }
}

/// One value of the wrapper union. Inside an `ArrayWrapper` branch 12 is `LocalDateWrapper`
/// (days, like `DateWrapper`) rather than a nested array.
fn read_ordering(buf: &mut &[u8], in_array: bool) -> Result<OrderingValue> {
    Ok(match read_long(buf)? {
        0 => OrderingValue::None,
        1 => OrderingValue::Bool(read_bool(buf)?),
        2 => OrderingValue::Int(read_int(buf)?),
        3 => OrderingValue::Long(read_long(buf)?),
        4 => OrderingValue::Float(read_f32(buf)?),
        5 => OrderingValue::Double(read_f64(buf)?),
        6 => OrderingValue::Bytes(read_bytes(buf)?.to_vec()),
        7 => OrderingValue::String(read_string(buf)?.to_string()),
        8 => OrderingValue::Date(read_int(buf)?),
        9 => OrderingValue::Decimal(be_i128(read_bytes(buf)?)?),
        10 => OrderingValue::TimeMicros(read_long(buf)?),
        11 => OrderingValue::TimestampMicros(read_long(buf)?),
        12 if in_array => OrderingValue::Date(read_int(buf)?),
        12 => OrderingValue::Array(read_array_wrapper(buf)?),
        b => return Err(malformed(format!("bad ordering value union branch {b}"))),
    })
}

fn read_array_wrapper(buf: &mut &[u8]) -> Result<Vec<OrderingValue>> {
    let mut items = Vec::new();
    if read_long(buf)? == 0 {
        return Ok(items); // wrappedValues: null
    }
    loop {
        let n = read_block_count(buf)?;
        if n == 0 {
            return Ok(items);
        }
        for _ in 0..n {
            items.push(read_ordering(buf, true)?);
        }
    }
}

/// Serializes delete records as version-3 delete block content (what Java writes).
pub fn encode_delete_block(records: &[DeleteRecord]) -> Vec<u8> {
    let mut payload = Vec::new();
    if !records.is_empty() {
        write_long(&mut payload, records.len() as i64);
        for r in records {
            write_optional_string(&mut payload, r.record_key.as_deref());
            write_optional_string(&mut payload, r.partition_path.as_deref());
            write_ordering(&mut payload, &r.ordering);
        }
    }
    payload.push(0);
    let mut out = Vec::with_capacity(8 + payload.len());
    out.extend_from_slice(&DELETE_BLOCK_VERSION.to_be_bytes());
    out.extend_from_slice(&(payload.len() as i32).to_be_bytes());
    out.extend_from_slice(&payload);
    out
}

fn write_optional_string(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(2);
            write_bytes(out, s.as_bytes());
        }
    }
}

fn write_ordering(out: &mut Vec<u8>, v: &OrderingValue) {
    write_long(out, v.branch());
    match v {
        OrderingValue::None => {}
        OrderingValue::Bool(b) => out.push(*b as u8),
        OrderingValue::Int(i) | OrderingValue::Date(i) => write_long(out, *i as i64),
        OrderingValue::Long(l)
        | OrderingValue::TimeMicros(l)
        | OrderingValue::TimestampMicros(l) => write_long(out, *l),
        OrderingValue::Float(f) => out.extend_from_slice(&f.to_le_bytes()),
        OrderingValue::Double(f) => out.extend_from_slice(&f.to_le_bytes()),
        OrderingValue::Bytes(b) => write_bytes(out, b),
        OrderingValue::String(s) => write_bytes(out, s.as_bytes()),
        OrderingValue::Decimal(d) => write_bytes(out, &i128_to_be_min(*d)),
        OrderingValue::Array(items) => write_array_wrapper(out, items),
    }
}

fn write_array_wrapper(out: &mut Vec<u8>, items: &[OrderingValue]) {
    out.push(2); // wrappedValues: the array branch
    if !items.is_empty() {
        write_long(out, items.len() as i64);
        for item in items {
            // Inside the array, branch 12 means LocalDateWrapper; nested arrays cannot occur.
            match item {
                OrderingValue::Array(_) => out.push(0),
                other => write_ordering(out, other),
            }
        }
    }
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// hudi-format §5.7 worked example (v9 `DELETE … WHERE txn_id='TXN-002'`).
    const TXN_002: &[u8] =
        b"\x00\x00\x00\x03\x00\x00\x00\x18\x02\x02\x0eTXN-002\x02\x12region=us\x04\x00\x00";

    #[test]
    fn decodes_the_documented_example() {
        let recs = decode_delete_block(TXN_002, "f").unwrap();
        assert_eq!(
            recs,
            vec![DeleteRecord {
                record_key: Some("TXN-002".into()),
                partition_path: Some("region=us".into()),
                ordering: OrderingValue::Int(0),
            }]
        );
        assert!(recs[0].ordering.is_natural_order());
        assert_eq!(encode_delete_block(&recs), TXN_002);
    }

    #[test]
    fn every_wrapper_round_trips() {
        let values = vec![
            OrderingValue::None,
            OrderingValue::Bool(true),
            OrderingValue::Int(-7),
            OrderingValue::Long(1 << 40),
            OrderingValue::Float(1.5),
            OrderingValue::Double(-2.25),
            OrderingValue::Bytes(vec![0, 1, 255]),
            OrderingValue::String("ts".into()),
            OrderingValue::Date(19000),
            OrderingValue::Decimal(-12_345_000_000_000_000),
            OrderingValue::TimeMicros(3_600_000_000),
            OrderingValue::TimestampMicros(1_700_000_000_000_000),
            OrderingValue::Array(vec![
                OrderingValue::Long(5),
                OrderingValue::String("a".into()),
            ]),
            OrderingValue::Array(vec![]),
        ];
        let recs: Vec<_> = values
            .into_iter()
            .enumerate()
            .map(|(i, ordering)| DeleteRecord {
                record_key: Some(format!("k{i}")),
                partition_path: (i % 2 == 0).then(|| "p".to_string()),
                ordering,
            })
            .collect();
        let bytes = encode_delete_block(&recs);
        assert_eq!(decode_delete_block(&bytes, "f").unwrap(), recs);
        assert!(!recs[2].ordering.is_natural_order());
        assert!(recs[0].ordering.is_natural_order());
    }

    #[test]
    fn empty_list_and_bad_input() {
        let empty = encode_delete_block(&[]);
        assert_eq!(empty, b"\x00\x00\x00\x03\x00\x00\x00\x01\x00");
        assert!(decode_delete_block(&empty, "f").unwrap().is_empty());
        let kryo = b"\x00\x00\x00\x02\x00\x00\x00\x00";
        let err = decode_delete_block(kryo, "dir/.f.log.1_0-0-0").unwrap_err();
        assert_eq!(err.code(), "UNSUPPORTED");
        assert_eq!(err.object(), Some("dir/.f.log.1_0-0-0"));
        let err = decode_delete_block(&TXN_002[..20], "f").unwrap_err();
        assert_eq!((err.code(), err.object()), ("CORRUPT", Some("f")));
        let mut bad_branch = TXN_002.to_vec();
        bad_branch[29] = 0x40;
        assert!(decode_delete_block(&bad_branch, "f").is_err());
    }
}
