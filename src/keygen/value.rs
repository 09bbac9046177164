//! Values as Java's key generators print them (after Hudi's Avro conversion): shared by the
//! writer's key generator and the reader's keys of tables without meta fields.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};
use chrono::NaiveDate;

/// Java's string form of a value after Hudi's Avro conversion; `Err` names the type.
pub fn value_string(array: &dyn Array, row: usize) -> std::result::Result<Option<String>, String> {
    if array.is_null(row) {
        return Ok(None);
    }
    let s = match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(row).to_string(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(row).to_string(),
        DataType::Utf8View => array.as_string_view().value(row).to_string(),
        DataType::Boolean => array.as_boolean().value(row).to_string(),
        DataType::Int8 => array.as_primitive::<Int8Type>().value(row).to_string(),
        DataType::Int16 => array.as_primitive::<Int16Type>().value(row).to_string(),
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row).to_string(),
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row).to_string(),
        DataType::Float32 => java_double(array.as_primitive::<Float32Type>().value(row) as f64),
        DataType::Float64 => java_double(array.as_primitive::<Float64Type>().value(row)),
        DataType::Date32 => {
            let days = array.as_primitive::<Date32Type>().value(row);
            NaiveDate::from_num_days_from_ce_opt(days + 719_163)
                .map(|d| d.format("%Y-%m-%d").to_string())
                .ok_or("a date out of range")?
        }
        DataType::Decimal128(_, scale) => {
            let v = array.as_primitive::<Decimal128Type>().value(row);
            plain_decimal(v, *scale)
        }
        // Hudi keeps timestamps as their Avro long unless consistent logical timestamps are on.
        DataType::Timestamp(TimeUnit::Microsecond, _) => array
            .as_primitive::<TimestampMicrosecondType>()
            .value(row)
            .to_string(),
        DataType::Timestamp(TimeUnit::Millisecond, _) => array
            .as_primitive::<TimestampMillisecondType>()
            .value(row)
            .to_string(),
        other => return Err(format!("a value of type {other}")),
    };
    Ok(Some(s))
}

/// `BigDecimal.toPlainString`.
fn plain_decimal(unscaled: i128, scale: i8) -> String {
    if scale <= 0 {
        return (unscaled * 10i128.pow((-scale) as u32)).to_string();
    }
    let neg = unscaled < 0;
    let digits = unscaled.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{}{int}.{frac}", if neg { "-" } else { "" })
}

/// `Double.toString` for the values keys hold in practice (integral values keep `.0`).
fn java_double(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e7 {
        format!("{v:.1}")
    } else if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        v.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_and_doubles() {
        assert_eq!(plain_decimal(125000, 2), "1250.00");
        assert_eq!(plain_decimal(-5, 3), "-0.005");
        assert_eq!(java_double(3.0), "3.0");
    }
}
