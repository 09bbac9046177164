//! A new table's schema as Hudi records it: Arrow (or a Spark SQL column list) to the Avro
//! schema a Spark DataFrame write of the same columns would put in its commit metadata
//! (`AvroConversionUtils.convertStructTypeToAvroSchema`, then nullable fields as
//! `["null", T]` with `default: null`), so Spark's next write finds the schema unchanged.

use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use serde_json::{json, Value};

use crate::error::{HudiError, Result};

/// The Avro record `hoodie.<table>.<table>_record` for `schema`'s fields.
pub fn avro_schema_for_table(table: &str, schema: &Schema) -> Result<Value> {
    let namespace = format!("hoodie.{table}");
    record(&format!("{table}_record"), &namespace, schema.fields())
}

fn record(name: &str, namespace: &str, fields: &Fields) -> Result<Value> {
    // Children are named under "<namespace>.<name>", as Spark's converter names them.
    let child_namespace = format!("{namespace}.{name}");
    let fields: Result<Vec<Value>> = fields
        .iter()
        .map(|f| avro_field(f, &child_namespace))
        .collect();
    Ok(json!({"type": "record", "name": name, "namespace": namespace, "fields": fields?}))
}

fn avro_field(f: &Field, namespace: &str) -> Result<Value> {
    check_name(f.name())?;
    let ty = nullable_if(f, avro_type(f.data_type(), f.name(), namespace)?);
    Ok(if f.is_nullable() {
        json!({"name": f.name(), "type": ty, "default": null})
    } else {
        json!({"name": f.name(), "type": ty})
    })
}

/// A table's Avro record schema with `added` appended as nullable fields (`default: null`,
/// what Avro's schema resolution needs to read older files without them), named as a
/// Spark write of the wider schema names them.
pub fn with_added_fields(table_schema: &Value, added: &[Field]) -> Result<Value> {
    let bad = || HudiError::invalid("the table's Avro schema is not a record");
    let name = table_schema
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(bad)?;
    let child_namespace = match table_schema.get("namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() => format!("{ns}.{name}"),
        _ => name.to_string(),
    };
    let mut wider = table_schema.clone();
    let fields = wider
        .get_mut("fields")
        .and_then(Value::as_array_mut)
        .ok_or_else(bad)?;
    for f in added {
        let nullable = f.as_ref().clone().with_nullable(true);
        fields.push(avro_field(&nullable, &child_namespace)?);
    }
    Ok(wider)
}

fn nullable_if(field: &Field, ty: Value) -> Value {
    if field.is_nullable() {
        json!(["null", ty])
    } else {
        ty
    }
}

/// Avro names: Hudi (and Avro) refuse anything else at write time.
pub(crate) fn is_avro_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_name(name: &str) -> Result<()> {
    if !is_avro_name(name) {
        return Err(HudiError::invalid(format!(
            "column name {name:?}: Avro names start with a letter or `_` and hold only \
             letters, digits and `_`"
        )));
    }
    Ok(())
}

fn avro_type(dt: &DataType, name: &str, namespace: &str) -> Result<Value> {
    Ok(match dt {
        DataType::Boolean => json!("boolean"),
        DataType::Int8 | DataType::Int16 | DataType::Int32 => json!("int"),
        DataType::Int64 => json!("long"),
        DataType::Float32 => json!("float"),
        DataType::Float64 => json!("double"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => json!("string"),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => json!("bytes"),
        DataType::Date32 | DataType::Date64 => json!({"type": "int", "logicalType": "date"}),
        // Spark's TIMESTAMP (an instant, stored in UTC micros) whatever the unit or zone.
        DataType::Timestamp(_, _) => json!({"type": "long", "logicalType": "timestamp-micros"}),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) if *s >= 0 && *p <= 38 => json!({
            "type": "fixed",
            "name": "fixed",
            "namespace": format!("{namespace}.{name}"),
            "size": fixed_size_for_precision(*p),
            "logicalType": "decimal",
            "precision": p,
            "scale": s,
        }),
        DataType::List(item) | DataType::LargeList(item) => json!({
            "type": "array",
            "items": nullable_if(item, avro_type(item.data_type(), name, namespace)?),
        }),
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(unsupported(name, dt));
            };
            if kv.len() != 2 || !matches!(kv[0].data_type(), DataType::Utf8 | DataType::LargeUtf8) {
                return Err(HudiError::invalid(format!(
                    "column {name:?}: Avro maps have string keys ({dt})"
                )));
            }
            json!({
                "type": "map",
                "values": nullable_if(&kv[1], avro_type(kv[1].data_type(), name, namespace)?),
            })
        }
        DataType::Struct(fields) => record(name, namespace, fields)?,
        DataType::Dictionary(_, value) => avro_type(value, name, namespace)?,
        _ => return Err(unsupported(name, dt)),
    })
}

fn unsupported(name: &str, dt: &DataType) -> HudiError {
    HudiError::unsupported(format!(
        "column {name:?} of Arrow type {dt} in a Hudi table (Spark has no such type)"
    ))
}

/// Bytes of the smallest two's complement that holds `precision` decimal digits (Spark's
/// `Decimal.minBytesForPrecision`).
fn fixed_size_for_precision(precision: u8) -> usize {
    (1..)
        .find(|bytes: &usize| 2f64.powi((8 * bytes - 1) as i32) >= 10f64.powi(precision as i32))
        .unwrap_or(16)
}

/// A Spark SQL column list (`id BIGINT NOT NULL, amount DECIMAL(12,2), tags ARRAY<STRING>`)
/// as Arrow. Types: BOOLEAN, TINYINT/BYTE, SMALLINT/SHORT, INT/INTEGER, BIGINT/LONG, FLOAT/REAL,
/// DOUBLE, STRING/VARCHAR(n)/CHAR(n), BINARY, DATE, TIMESTAMP, DECIMAL(p,s)/NUMERIC,
/// ARRAY<T>, MAP<STRING,T>, STRUCT<name: T, ...>. Columns are nullable unless `NOT NULL`.
pub fn schema_from_ddl(text: &str) -> Result<Schema> {
    let mut p = Ddl {
        tokens: tokenize(text)?,
        at: 0,
    };
    let mut fields = Vec::new();
    loop {
        fields.push(p.column(false)?);
        if !p.eat(",") {
            break;
        }
    }
    if let Some(t) = p.tokens.get(p.at) {
        return Err(ddl_error(format!("unexpected {t:?}")));
    }
    Ok(Schema::new(fields))
}

fn ddl_error(msg: String) -> HudiError {
    HudiError::invalid(format!("table schema: {msg}"))
}

fn tokenize(text: &str) -> Result<Vec<String>> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '`' {
            chars.next();
            let mut quoted = String::from("`");
            loop {
                match chars.next() {
                    Some('`') => break,
                    Some(c) => quoted.push(c),
                    None => return Err(ddl_error("unclosed `".into())),
                }
            }
            tokens.push(quoted);
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if !(c.is_ascii_alphanumeric() || c == '_') {
                    break;
                }
                word.push(c);
                chars.next();
            }
            tokens.push(word);
        } else if "(),<>:".contains(c) {
            tokens.push(c.to_string());
            chars.next();
        } else {
            return Err(ddl_error(format!("unexpected character {c:?}")));
        }
    }
    Ok(tokens)
}

struct Ddl {
    tokens: Vec<String>,
    at: usize,
}

impl Ddl {
    fn next(&mut self) -> Result<String> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t.ok_or_else(|| ddl_error("unexpected end".into()))
    }

    fn eat(&mut self, token: &str) -> bool {
        let hit = self
            .tokens
            .get(self.at)
            .is_some_and(|t| t.eq_ignore_ascii_case(token));
        self.at += usize::from(hit);
        hit
    }

    fn expect(&mut self, token: &str) -> Result<()> {
        if self.eat(token) {
            return Ok(());
        }
        let found = self.tokens.get(self.at).map_or("the end", |t| t.as_str());
        Err(ddl_error(format!("expected {token:?}, found {found:?}")))
    }

    fn number(&mut self) -> Result<u8> {
        let t = self.next()?;
        t.parse()
            .map_err(|_| ddl_error(format!("expected a number, found {t:?}")))
    }

    /// `name TYPE [NOT NULL] [COMMENT ...]`; in a STRUCT the name may be followed by `:`.
    fn column(&mut self, in_struct: bool) -> Result<Field> {
        let name = self.next()?;
        let name = name.strip_prefix('`').unwrap_or(&name).to_string();
        if in_struct {
            self.eat(":");
        }
        let ty = self.data_type()?;
        let nullable = !(self.eat("NOT") && {
            self.expect("NULL")?;
            true
        });
        Ok(Field::new(name, ty, nullable))
    }

    fn data_type(&mut self) -> Result<DataType> {
        let word = self.next()?.to_ascii_uppercase();
        Ok(match word.as_str() {
            "BOOLEAN" | "BOOL" => DataType::Boolean,
            "TINYINT" | "BYTE" => DataType::Int8,
            "SMALLINT" | "SHORT" => DataType::Int16,
            "INT" | "INTEGER" => DataType::Int32,
            "BIGINT" | "LONG" => DataType::Int64,
            "FLOAT" | "REAL" => DataType::Float32,
            "DOUBLE" => DataType::Float64,
            "STRING" => DataType::Utf8,
            "VARCHAR" | "CHAR" => {
                if self.eat("(") {
                    self.number()?;
                    self.expect(")")?;
                }
                DataType::Utf8
            }
            "BINARY" => DataType::Binary,
            "DATE" => DataType::Date32,
            "TIMESTAMP" => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            "DECIMAL" | "DEC" | "NUMERIC" => {
                let (mut precision, mut scale) = (10, 0);
                if self.eat("(") {
                    precision = self.number()?;
                    if self.eat(",") {
                        scale = self.number()?;
                    }
                    self.expect(")")?;
                }
                if precision == 0 || precision > 38 || scale > precision {
                    return Err(ddl_error(format!(
                        "DECIMAL({precision},{scale}): precision 1 to 38, scale at most the precision"
                    )));
                }
                DataType::Decimal128(precision, scale as i8)
            }
            "ARRAY" => {
                self.expect("<")?;
                let item = self.data_type()?;
                self.expect(">")?;
                DataType::List(Field::new("element", item, true).into())
            }
            "MAP" => {
                self.expect("<")?;
                let key = self.data_type()?;
                self.expect(",")?;
                let value = self.data_type()?;
                self.expect(">")?;
                let entries = Field::new(
                    "key_value",
                    DataType::Struct(Fields::from(vec![
                        Field::new("key", key, false),
                        Field::new("value", value, true),
                    ])),
                    false,
                );
                DataType::Map(entries.into(), false)
            }
            "STRUCT" => {
                self.expect("<")?;
                let mut fields = Vec::new();
                loop {
                    fields.push(self.column(true)?);
                    if !self.eat(",") {
                        break;
                    }
                }
                self.expect(">")?;
                DataType::Struct(Fields::from(fields))
            }
            other => {
                return Err(HudiError::unsupported(format!(
                "column type {other} in a table schema (see `schema_from_ddl` for the types taken)"
            )))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_sizes_are_sparks() {
        // Spark's minBytesForPrecision for 9, 10, 12, 15, 18, 38 digits.
        let sizes: Vec<usize> = [9, 10, 12, 15, 18, 38]
            .iter()
            .map(|p| fixed_size_for_precision(*p))
            .collect();
        assert_eq!(sizes, vec![4, 5, 6, 7, 8, 16]);
    }

    #[test]
    fn spark_ddl_becomes_the_schema_spark_writes() {
        let schema = schema_from_ddl(
            "id BIGINT NOT NULL, amount DECIMAL(12,2), tags ARRAY<STRING>, \
             `at` TIMESTAMP, attrs MAP<STRING, INT>, address STRUCT<city: STRING, zip INT>",
        )
        .unwrap();
        let avro = avro_schema_for_table("orders", &schema).unwrap();
        let fields = avro["fields"].as_array().unwrap();
        assert_eq!(avro["name"], "orders_record");
        assert_eq!(avro["namespace"], "hoodie.orders");
        assert_eq!(fields[0], json!({"name": "id", "type": "long"}));
        // The decimal's fixed is named as Spark names it (hudi-format fixtures, bench tables).
        assert_eq!(
            fields[1]["type"][1]["namespace"],
            "hoodie.orders.orders_record.amount"
        );
        assert_eq!(fields[1]["type"][1]["size"], 6);
        assert_eq!(fields[1]["default"], Value::Null);
        assert_eq!(
            fields[5]["type"][1]["namespace"],
            "hoodie.orders.orders_record"
        );
        // It reads back as the columns asked for.
        let text = avro.to_string();
        let back = crate::schema::arrow_schema_from_avro_text(&text, "t").unwrap();
        let names: Vec<&str> = back.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["id", "amount", "tags", "at", "attrs", "address"]);
        assert!(!back.field(0).is_nullable());
        assert_eq!(back.field(1).data_type(), &DataType::Decimal128(12, 2));
    }

    #[test]
    fn added_fields_are_nullable_and_named_under_the_tables_record() {
        let table =
            avro_schema_for_table("t", &schema_from_ddl("id BIGINT NOT NULL").unwrap()).unwrap();
        let added = schema_from_ddl("price DECIMAL(10,2) NOT NULL, tags ARRAY<STRING>").unwrap();
        let fields: Vec<Field> = added.fields().iter().map(|f| f.as_ref().clone()).collect();
        let wider = with_added_fields(&table, &fields).unwrap();
        let f = wider["fields"].as_array().unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0], table["fields"][0], "the old field as it was");
        // Nullable whatever the input said: older rows have no value.
        assert_eq!(f[1]["type"][0], "null");
        assert_eq!(f[1]["default"], Value::Null);
        assert_eq!(f[1]["type"][1]["namespace"], "hoodie.t.t_record.price");
        assert!(f[2]["type"][1]["type"] == "array", "{}", f[2]);
        // A spec Avro cannot name is refused.
        let bad = [Field::new("my col", DataType::Utf8, true)];
        assert_eq!(
            with_added_fields(&table, &bad).unwrap_err().code(),
            "INVALID_ARGUMENT"
        );
    }

    #[test]
    fn refuses_what_avro_cannot_name_or_hold() {
        for (ddl, code) in [
            ("`my col` STRING", "INVALID_ARGUMENT"),
            ("x INTERVAL", "UNSUPPORTED"),
            ("x DECIMAL(40,2)", "INVALID_ARGUMENT"),
            ("m MAP<INT, STRING>", "INVALID_ARGUMENT"),
            ("x STRING,", "INVALID_ARGUMENT"),
        ] {
            let e = schema_from_ddl(ddl)
                .and_then(|s| avro_schema_for_table("t", &s))
                .unwrap_err();
            assert_eq!(e.code(), code, "{ddl}: {e}");
        }
    }
}
