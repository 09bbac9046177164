//! Delete block content (docs/hudi-format.md §5.7): `int version | int length | payload`, where a
//! version-3 payload is Avro `HoodieDeleteRecordList` whose ordering value is a union of
//! wrapper records (Java `HoodieDeleteRecordList.avsc`, `HoodieMetadata.avsc` wrappers).

use crate::avro::binary::{
    be_i128, i128_to_be_min, read_block_count, read_bool, read_bytes, read_f32, read_f64, read_int,
    read_long, read_string, write_bytes, write_long,
};
use crate::error::{malformed, HudiError, Result};
use crate::value::Value;

/// Current delete block content version (Avro); 1 and 2 were Java/Kryo serialized.
pub const DELETE_BLOCK_VERSION: i32 = 3;
/// Precision and scale of `DecimalWrapper` values.
const DECIMAL_WRAPPER_PRECISION: u8 = 30;
const DECIMAL_WRAPPER_SCALE: i8 = 15;

/// One record key to delete.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DeleteRecord {
    pub record_key: Option<String>,
    pub partition_path: Option<String>,
    pub ordering: Value,
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
/// rather than a nested array.
fn read_ordering(buf: &mut &[u8], in_array: bool) -> Result<Value> {
    Ok(match read_long(buf)? {
        0 => Value::Null,
        1 => Value::Boolean(read_bool(buf)?),
        2 => Value::Int(read_int(buf)?),
        3 => Value::Long(read_long(buf)?),
        4 => Value::Float(read_f32(buf)?),
        5 => Value::Double(read_f64(buf)?),
        6 => Value::Bytes(read_bytes(buf)?.to_vec()),
        7 => Value::String(read_string(buf)?.to_string()),
        8 => Value::Date(read_int(buf)?),
        9 => Value::Decimal {
            unscaled: be_i128(read_bytes(buf)?)?,
            precision: DECIMAL_WRAPPER_PRECISION,
            scale: DECIMAL_WRAPPER_SCALE,
        },
        10 => Value::TimeMicros(read_long(buf)?),
        11 => Value::TimestampMicros(read_long(buf)?),
        12 if in_array => Value::LocalDate(read_int(buf)?),
        12 => Value::Array(read_array_wrapper(buf)?),
        b => return Err(malformed(format!("bad ordering value union branch {b}"))),
    })
}

fn read_array_wrapper(buf: &mut &[u8]) -> Result<Vec<Value>> {
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
            write_ordering(&mut payload, &r.ordering, false);
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

/// Writes `v` as the wrapper union holds it. A nested array has no branch, nor has a decimal
/// that `DecimalWrapper`'s scale 15 cannot hold exactly: both are written as null.
fn write_ordering(out: &mut Vec<u8>, v: &Value, in_array: bool) {
    let (v, decimal) = match v {
        Value::Decimal {
            unscaled, scale, ..
        } => match wrapper_decimal(*unscaled, *scale) {
            Some(d) => (v, d),
            None => (&Value::Null, 0),
        },
        Value::Array(_) if in_array => (&Value::Null, 0),
        v => (v, 0),
    };
    write_long(out, branch(v, in_array));
    match v {
        Value::Null => {}
        Value::Boolean(b) => out.push(*b as u8),
        Value::Int(i) | Value::Date(i) | Value::LocalDate(i) => write_long(out, i64::from(*i)),
        Value::Long(l) | Value::TimeMicros(l) | Value::TimestampMicros(l) => write_long(out, *l),
        Value::Float(f) => out.extend_from_slice(&f.to_le_bytes()),
        Value::Double(f) => out.extend_from_slice(&f.to_le_bytes()),
        Value::Bytes(b) => write_bytes(out, b),
        Value::String(s) => write_bytes(out, s.as_bytes()),
        Value::Decimal { .. } => write_bytes(out, &i128_to_be_min(decimal)),
        Value::Array(items) => write_array_wrapper(out, items),
    }
}

/// Branch index in the wrapper union (0 = null … 12 = ArrayWrapper). Inside an array 12 is
/// `LocalDateWrapper`; outside one a `LocalDate` is the `DateWrapper` of the same day.
fn branch(v: &Value, in_array: bool) -> i64 {
    match v {
        Value::Null => 0,
        Value::Boolean(_) => 1,
        Value::Int(_) => 2,
        Value::Long(_) => 3,
        Value::Float(_) => 4,
        Value::Double(_) => 5,
        Value::Bytes(_) => 6,
        Value::String(_) => 7,
        Value::Date(_) => 8,
        Value::LocalDate(_) if !in_array => 8,
        Value::Decimal { .. } => 9,
        Value::TimeMicros(_) => 10,
        Value::TimestampMicros(_) => 11,
        Value::Array(_) | Value::LocalDate(_) => 12,
    }
}

/// The unscaled value at `DecimalWrapper`'s scale, if exact.
fn wrapper_decimal(unscaled: i128, scale: i8) -> Option<i128> {
    let up = u32::try_from(DECIMAL_WRAPPER_SCALE - scale).ok()?;
    unscaled.checked_mul(10i128.checked_pow(up)?)
}

fn write_array_wrapper(out: &mut Vec<u8>, items: &[Value]) {
    out.push(2); // wrappedValues: the array branch
    if !items.is_empty() {
        write_long(out, items.len() as i64);
        for item in items {
            write_ordering(out, item, true);
        }
    }
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/hudi-format.md §5.7 worked example (v9 `DELETE … WHERE txn_id='TXN-002'`).
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
                ordering: Value::Int(0),
            }]
        );
        assert!(recs[0].ordering.is_natural_order());
        assert_eq!(encode_delete_block(&recs), TXN_002);
    }

    #[test]
    fn every_wrapper_round_trips() {
        let values = vec![
            Value::Null,
            Value::Boolean(true),
            Value::Int(-7),
            Value::Long(1 << 40),
            Value::Float(1.5),
            Value::Double(-2.25),
            Value::Bytes(vec![0, 1, 255]),
            Value::String("ts".into()),
            Value::Date(19000),
            Value::Decimal {
                unscaled: -12_345_000_000_000_000,
                precision: 30,
                scale: 15,
            },
            Value::TimeMicros(3_600_000_000),
            Value::TimestampMicros(1_700_000_000_000_000),
            Value::Array(vec![Value::Long(5), Value::String("a".into())]),
            Value::Array(vec![]),
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
    fn dates_and_decimals_take_the_wrappers_form() {
        let round_trip = |ordering: Value| {
            let rec = DeleteRecord {
                record_key: None,
                partition_path: None,
                ordering,
            };
            let bytes = encode_delete_block(&[rec]);
            decode_delete_block(&bytes, "f").unwrap().remove(0).ordering
        };
        let in_array = Value::Array(vec![Value::LocalDate(3), Value::Date(4)]);
        assert_eq!(round_trip(in_array.clone()), in_array);
        assert_eq!(round_trip(Value::LocalDate(3)), Value::Date(3));
        let dec = |unscaled, precision, scale| Value::Decimal {
            unscaled,
            precision,
            scale,
        };
        assert_eq!(
            round_trip(dec(125, 5, 2)),
            dec(1_250_000_000_000_000, 30, 15)
        );
        // More fraction digits than the wrapper's 15: no exact wrapper value.
        assert_eq!(round_trip(dec(1, 17, 16)), Value::Null);
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
