//! Record keys and partition paths of incoming rows, as Hudi's key generators derive them
//! (docs/hudi-format.md §9): the values Java would see after its Avro conversion (dates as
//! `yyyy-MM-dd`, decimals as plain numbers, timestamps as their raw long), simple and
//! complex keys, hive-style and URL-encoded partition paths, and timestamp partitioning.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeZone, Utc};

use crate::config::{KeyGeneratorType, TableConfig};
use crate::error::{HudiError, Result};
use crate::keygen::{value_string, HIVE_DEFAULT_PARTITION};

/// How one table turns rows into keys and partition paths.
#[derive(Debug, Clone)]
pub struct KeyGen {
    record_fields: Vec<String>,
    partition_fields: Vec<String>,
    kind: KeyGeneratorType,
    hive_style: bool,
    url_encode: bool,
    timestamp: Option<TimestampPartitioning>,
}

#[derive(Debug, Clone)]
struct TimestampPartitioning {
    input: TimestampInput,
    output_format: String,
    /// Offset from UTC the output is formatted in, in seconds.
    output_offset_secs: i32,
}

#[derive(Debug, Clone)]
enum TimestampInput {
    EpochMillis,
    UnixSeconds,
    Scalar { unit_micros: i64 },
    DateString { formats: Vec<String> },
}

impl KeyGen {
    /// The table's key generator, or `UNSUPPORTED` for the ones this writer cannot
    /// reproduce exactly.
    pub fn of(config: &TableConfig) -> Result<KeyGen> {
        if config.record_key_fields.is_empty() {
            return Err(HudiError::unsupported(
                "writing a table without record key fields (hoodie.table.recordkey.fields)",
            ));
        }
        let timestamp = match config.key_generator {
            KeyGeneratorType::Timestamp => Some(TimestampPartitioning::of(config)?),
            KeyGeneratorType::Custom | KeyGeneratorType::HoodieTableMetadata => {
                return Err(HudiError::unsupported(format!(
                    "writing with the {:?} key generator",
                    config.key_generator
                )))
            }
            _ => None,
        };
        Ok(KeyGen {
            record_fields: config.record_key_fields.clone(),
            partition_fields: if config.key_generator == KeyGeneratorType::NonPartition {
                Vec::new()
            } else {
                config.partition_fields.clone()
            },
            kind: config.key_generator,
            hive_style: config.hive_style_partitioning,
            url_encode: config.url_encode_partitions,
            timestamp,
        })
    }

    pub fn record_fields(&self) -> &[String] {
        &self.record_fields
    }

    pub fn partition_fields(&self) -> &[String] {
        &self.partition_fields
    }

    /// The record key of `row`; a null or empty key is `INVALID_INPUT`.
    pub fn record_key(&self, batch: &RecordBatch, row: usize) -> Result<String> {
        let values: Vec<Option<String>> = self
            .record_fields
            .iter()
            .map(|f| field_string(batch, f, row))
            .collect::<Result<_>>()?;
        let single = self.record_fields.len() == 1 && self.kind != KeyGeneratorType::Complex;
        if single {
            return match values.into_iter().next().flatten() {
                Some(v) if !v.is_empty() => Ok(v),
                _ => Err(HudiError::invalid_input(format!(
                    "row {row}: record key field {} is null or empty",
                    self.record_fields[0]
                ))),
            };
        }
        if values
            .iter()
            .all(|v| v.as_deref().is_none_or(str::is_empty))
        {
            return Err(HudiError::invalid_input(format!(
                "row {row}: every record key field ({}) is null or empty",
                self.record_fields.join(", ")
            )));
        }
        Ok(crate::keygen::record_key_from_values(
            &self.record_fields,
            &values,
            self.kind,
        ))
    }

    /// The partition path of `row` (`""` for non-partitioned tables).
    pub fn partition_path(&self, batch: &RecordBatch, row: usize) -> Result<String> {
        let mut segments = Vec::with_capacity(self.partition_fields.len());
        for field in &self.partition_fields {
            let value = match &self.timestamp {
                Some(ts) => ts.format(batch, field, row)?,
                None => field_string(batch, field, row)?,
            };
            let value = match value {
                Some(v) if !v.is_empty() => {
                    if self.url_encode {
                        escape_path_name(&v)
                    } else {
                        v
                    }
                }
                _ => HIVE_DEFAULT_PARTITION.to_string(),
            };
            let segment = if self.hive_style {
                format!("{field}={value}")
            } else {
                value
            };
            check_partition_segment(&segment, row, field)?;
            segments.push(segment);
        }
        Ok(segments.join("/"))
    }
}

/// What a partition field's value makes of the path must stay a folder inside the table,
/// as Java writes it: slashes nest folders (unless URL-encoding is on), but no empty, `.`
/// or `..` folder, no absolute path, no control characters. Checked before any request,
/// so a hostile value is refused as input rather than met by the storage boundary mid-write.
fn check_partition_segment(segment: &str, row: usize, field: &str) -> Result<()> {
    let why = if segment.chars().any(|c| c.is_control()) {
        Some("holds a control character")
    } else if segment.starts_with(['/', '\\']) {
        Some("is an absolute path")
    } else if segment.split('/').any(str::is_empty) {
        Some("makes an empty folder name")
    } else if segment.split(['/', '\\']).any(|s| s == "." || s == "..") {
        Some("makes a `.` or `..` folder, outside its partition")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(HudiError::invalid_input(format!(
            "row {row}, column {field:?}: the partition path {segment:?} {why}"
        ))),
    }
}

/// The record keys of rows read back from the table file `path`: `_hoodie_record_key`, or,
/// where the table does not populate meta fields, what the key generator makes of the key
/// fields (as Java's virtual keys are). A row without one is `CORRUPT` naming the file.
pub fn stored_keys(rows: &RecordBatch, config: &TableConfig, path: &str) -> Result<Vec<String>> {
    let corrupt = |what: String| HudiError::corrupt(path, format!("record keys: {what}"));
    if config.populate_meta_fields {
        let column = rows
            .column_by_name(crate::schema::RECORD_KEY)
            .ok_or_else(|| corrupt("no record key column".into()))?;
        return (0..rows.num_rows())
            .map(|row| {
                value_string(column.as_ref(), row)
                    .map_err(&corrupt)?
                    .ok_or_else(|| corrupt(format!("row {row} has none")))
            })
            .collect();
    }
    let keygen = KeyGen::of(config)?;
    (0..rows.num_rows())
        .map(|row| {
            keygen
                .record_key(rows, row)
                .map_err(|e| corrupt(e.to_string()))
        })
        .collect()
}

/// `row`'s value of `field` as Java's key generators print it; `None` for null.
fn field_string(batch: &RecordBatch, field: &str, row: usize) -> Result<Option<String>> {
    let column = batch.column_by_name(field).ok_or_else(|| {
        HudiError::invalid_input(format!("the input has no column {field:?} (a key field)"))
    })?;
    value_string(column.as_ref(), row).map_err(|what| {
        HudiError::invalid_input(format!(
            "row {row}, column {field:?}: {what} cannot be a key or partition value"
        ))
    })
}

/// Hive's `escapePathName`: characters that break paths as `%XX`.
pub fn escape_path_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let escape = matches!(
            c,
            '\u{1}'
                ..='\u{1f}'
                    | '"'
                    | '#'
                    | '%'
                    | '\''
                    | '*'
                    | '/'
                    | ':'
                    | '='
                    | '?'
                    | '\\'
                    | '\u{7f}'
                    | '{'
                    | '['
                    | ']'
                    | '^'
        );
        if escape {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

impl TimestampPartitioning {
    fn of(config: &TableConfig) -> Result<TimestampPartitioning> {
        let prop = |k: &str| config.property(k).map(str::trim).filter(|s| !s.is_empty());
        let kind = prop("hoodie.keygen.timebased.timestamp.type").unwrap_or("");
        let input = match kind {
            "EPOCHMILLISECONDS" => TimestampInput::EpochMillis,
            "UNIX_TIMESTAMP" => TimestampInput::UnixSeconds,
            "SCALAR" => {
                let unit =
                    prop("hoodie.keygen.timebased.timestamp.scalar.time.unit").unwrap_or("SECONDS");
                let unit_micros = match unit.to_ascii_uppercase().as_str() {
                    "NANOSECONDS" => 0,
                    "MICROSECONDS" => 1,
                    "MILLISECONDS" => 1_000,
                    "SECONDS" => 1_000_000,
                    "MINUTES" => 60_000_000,
                    "HOURS" => 3_600_000_000,
                    "DAYS" => 86_400_000_000,
                    other => {
                        return Err(HudiError::unsupported(format!(
                            "timestamp key generator scalar unit {other}"
                        )))
                    }
                };
                if unit_micros == 0 {
                    return Err(HudiError::unsupported(
                        "timestamp key generator scalar unit NANOSECONDS",
                    ));
                }
                TimestampInput::Scalar { unit_micros }
            }
            "DATE_STRING" => {
                let formats = prop("hoodie.keygen.timebased.input.dateformat")
                    .ok_or_else(|| {
                        HudiError::unsupported(
                            "DATE_STRING timestamp partitioning without hoodie.keygen.timebased.input.dateformat",
                        )
                    })?
                    .split(prop("hoodie.keygen.timebased.input.dateformat.list.delimiter.regex").unwrap_or(","))
                    .map(|f| java_pattern_to_chrono(f.trim()))
                    .collect::<Result<Vec<_>>>()?;
                TimestampInput::DateString { formats }
            }
            other => {
                return Err(HudiError::unsupported(format!(
                    "timestamp key generator type {other:?}"
                )))
            }
        };
        let output = prop("hoodie.keygen.timebased.output.dateformat").unwrap_or("yyyy-MM-dd hh");
        let zone = prop("hoodie.keygen.timebased.output.timezone")
            .or(prop("hoodie.keygen.timebased.timezone"))
            .unwrap_or("UTC");
        Ok(TimestampPartitioning {
            input,
            output_format: java_pattern_to_chrono(output)?,
            output_offset_secs: fixed_offset(zone)?,
        })
    }

    fn format(&self, batch: &RecordBatch, field: &str, row: usize) -> Result<Option<String>> {
        let column = batch.column_by_name(field).ok_or_else(|| {
            HudiError::invalid_input(format!(
                "the input has no column {field:?} (a partition field)"
            ))
        })?;
        if column.is_null(row) {
            return Ok(None);
        }
        let bad =
            |what: &str| HudiError::invalid_input(format!("row {row}, column {field:?}: {what}"));
        let micros: i64 = match &self.input {
            TimestampInput::DateString { formats } => {
                let text = value_string(column.as_ref(), row)
                    .map_err(|w| bad(&format!("{w} is not a date string")))?
                    .unwrap_or_default();
                parse_date_string(&text, formats).ok_or_else(|| {
                    bad(&format!(
                        "{text:?} does not match the table's input date format"
                    ))
                })?
            }
            input => {
                let n =
                    integral(column.as_ref(), row).ok_or_else(|| bad("not an integral number"))?;
                let factor = match input {
                    TimestampInput::EpochMillis => 1_000,
                    TimestampInput::UnixSeconds => 1_000_000,
                    TimestampInput::Scalar { unit_micros } => *unit_micros,
                    TimestampInput::DateString { .. } => 1,
                };
                n.checked_mul(factor)
                    .ok_or_else(|| bad("timestamp out of range"))?
            }
        };
        let t = DateTime::<Utc>::from_timestamp_micros(micros)
            .ok_or_else(|| bad("timestamp out of range"))?;
        let offset = chrono::FixedOffset::east_opt(self.output_offset_secs)
            .unwrap_or_else(|| chrono::FixedOffset::east_opt(0).expect("zero offset"));
        Ok(Some(
            t.with_timezone(&offset)
                .format(&self.output_format)
                .to_string(),
        ))
    }
}

fn integral(array: &dyn Array, row: usize) -> Option<i64> {
    Some(match array.data_type() {
        DataType::Int32 => array.as_primitive::<Int32Type>().value(row) as i64,
        DataType::Int64 => array.as_primitive::<Int64Type>().value(row),
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            array.as_primitive::<TimestampMillisecondType>().value(row)
        }
        DataType::Utf8 => array.as_string::<i32>().value(row).trim().parse().ok()?,
        _ => return None,
    })
}

fn parse_date_string(text: &str, formats: &[String]) -> Option<i64> {
    // Joda (Java's parser here) reads a `Z` offset as UTC; chrono's `%z` wants digits.
    let zulu;
    let text = match text.strip_suffix('Z') {
        Some(rest)
            if formats
                .iter()
                .any(|f| f.ends_with("%z") || f.ends_with("%:z")) =>
        {
            zulu = format!("{rest}+0000");
            zulu.as_str()
        }
        _ => text,
    };
    for f in formats {
        if let Ok(t) = DateTime::parse_from_str(text, f) {
            return Some(t.timestamp_micros());
        }
        if let Ok(t) = NaiveDateTime::parse_from_str(text, f) {
            return Some(Utc.from_utc_datetime(&t).timestamp_micros());
        }
        if let Ok(d) = NaiveDate::parse_from_str(text, f) {
            return Some(
                Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0)?)
                    .timestamp_micros(),
            );
        }
    }
    None
}

/// `UTC`, `GMT`, `GMT+8`, `+05:30` as a fixed offset; named regional zones are refused.
fn fixed_offset(zone: &str) -> Result<i32> {
    let z = zone.trim();
    if matches!(z.to_ascii_uppercase().as_str(), "UTC" | "GMT" | "Z") {
        return Ok(0);
    }
    let rest = z
        .strip_prefix("GMT")
        .or_else(|| z.strip_prefix("UTC"))
        .unwrap_or(z);
    let (sign, rest) = match rest.as_bytes().first() {
        Some(b'+') => (1, &rest[1..]),
        Some(b'-') => (-1, &rest[1..]),
        _ => {
            return Err(HudiError::unsupported(format!(
                "timestamp partitioning in time zone {zone:?} (fixed offsets only)"
            )))
        }
    };
    let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
    match (h.parse::<i32>(), m.parse::<i32>()) {
        (Ok(h), Ok(m)) if h <= 18 && m < 60 => Ok(sign * (h * 3600 + m * 60)),
        _ => Err(HudiError::unsupported(format!("time zone {zone:?}"))),
    }
}

/// A Java `SimpleDateFormat` / `DateTimeFormatter` pattern as a chrono format string, for
/// the letters partition formats use.
pub fn java_pattern_to_chrono(pattern: &str) -> Result<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            let end = chars[i + 1..].iter().position(|&x| x == '\'');
            match end {
                Some(0) => out.push('\''),
                Some(n) => chars[i + 1..i + 1 + n]
                    .iter()
                    .for_each(|&x| push_literal(&mut out, x)),
                None => {
                    return Err(HudiError::unsupported(format!(
                        "date format {pattern:?} (unterminated quote)"
                    )))
                }
            }
            i += end.unwrap_or(0) + 2;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            push_literal(&mut out, c);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|&&x| x == c).count();
        let spec = match (c, run) {
            ('y', 2) => "%y",
            ('y', _) | ('u', _) => "%Y",
            ('M', 1) => "%-m",
            ('M', 2) => "%m",
            ('M', 3) => "%b",
            ('M', _) => "%B",
            ('d', 1) => "%-d",
            ('d', _) => "%d",
            ('H', 1) => "%-H",
            ('H', _) => "%H",
            ('h', _) => "%I",
            ('m', _) => "%M",
            ('s', _) => "%S",
            ('S', 3) => "%3f",
            ('S', 6) => "%6f",
            ('S', 9) => "%9f",
            ('a', _) => "%p",
            ('Z', _) => "%z",
            ('X', 1) | ('x', _) => "%z",
            ('X', _) => "%:z",
            ('D', _) => "%j",
            ('E', 1..=3) => "%a",
            ('E', _) => "%A",
            _ => {
                return Err(HudiError::unsupported(format!(
                    "date format {pattern:?} (letter {c:?} x{run})"
                )))
            }
        };
        out.push_str(spec);
        i += run;
    }
    Ok(out)
}

fn push_literal(out: &mut String, c: char) {
    if c == '%' {
        out.push_str("%%");
    } else {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_patterns() {
        assert_eq!(
            java_pattern_to_chrono("yyyy/MM/dd/HH").unwrap(),
            "%Y/%m/%d/%H"
        );
        assert_eq!(
            java_pattern_to_chrono("yyyy-MM-dd'T'HH:mm:ss.SSSZ").unwrap(),
            "%Y-%m-%dT%H:%M:%S.%3f%z"
        );
        let f = java_pattern_to_chrono("yyyy-MM-dd'T'HH:mm:ss.SSSZ").unwrap();
        assert_eq!(
            parse_date_string("2024-01-15T10:30:00.000+0000", &[f]),
            Some(1_705_314_600_000_000)
        );
    }

    #[test]
    fn partition_paths_stay_inside_the_table() {
        for ok in ["eu", "us/west", "a b", "region=..", "2024/01/02", "x\\y"] {
            assert!(check_partition_segment(ok, 0, "p").is_ok(), "{ok:?}");
        }
        for bad in [
            "..", ".", "../x", "a/../..", "/etc", "a//b", "a/", "", "a\u{0}b", "..\\x",
        ] {
            let e = check_partition_segment(bad, 3, "p").unwrap_err();
            assert_eq!(e.code(), "INVALID_INPUT", "{bad:?}");
            assert!(e.to_string().contains("row 3, column \"p\""), "{e}");
        }
    }

    #[test]
    fn escapes() {
        assert_eq!(escape_path_name("a/b=c"), "a%2Fb%3Dc");
    }
}
