//! Avro from a table is hostile until checked. Every schema decoded here — by our decoder
//! or by apache-avro (instant files, archived entries, metadata records) — is planned as a
//! `Skip` first, which refuses recursive and too-deep types, arrays of items that take no
//! bytes and oversized `fixed`s; datums that a library decodes are walked first, so every
//! count and length they declare is backed by bytes before anything is allocated for it.

use std::sync::Arc;

use apache_avro::Schema;

use super::decode::Skip;
use super::to_arrow::Names;
use crate::error::Result;

/// Most bytes apache-avro may allocate for one value (a string, bytes, or a collection's
/// reservation); the walk bounds them by the datum first, this bounds them absolutely.
pub const MAX_VALUE_BYTES: usize = 64 << 20;

/// A schema that passed the checks, ready to check datums.
#[derive(Clone)]
pub struct Checked {
    walk: Arc<Skip>,
}

impl std::fmt::Debug for Checked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Checked")
    }
}

impl Checked {
    pub fn new(schema: &Schema) -> Result<Checked> {
        apache_avro::util::max_allocation_bytes(MAX_VALUE_BYTES);
        let names = Names::of(schema)?;
        Ok(Checked {
            walk: Arc::new(Skip::plan(schema, &names, 0)?),
        })
    }

    /// Checks that `datum` holds one value of the schema whose every count and length fits
    /// its bytes (trailing bytes are ignored, as Java's decoder does).
    pub fn datum(&self, datum: &[u8]) -> Result<()> {
        self.walk.skip(&mut &datum[..])
    }

    /// [`Self::datum`], returning how many bytes follow the value.
    pub fn datum_trailing(&self, datum: &[u8]) -> Result<usize> {
        let mut rest = datum;
        self.walk.skip(&mut rest)?;
        Ok(rest.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avro::binary::write_long;

    fn check(schema: &str) -> Result<Checked> {
        Checked::new(&Schema::parse_str(schema).unwrap())
    }

    #[test]
    fn refuses_what_could_recurse_or_cost_nothing() {
        let recursive =
            r#"{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]}"#;
        let e = check(recursive).unwrap_err();
        assert_eq!(e.code(), "UNSUPPORTED", "{e}");
        let mut deep = String::from(r#""long""#);
        for _ in 0..70 {
            deep = format!(r#"{{"type":"array","items":{deep}}}"#);
        }
        let deep =
            format!(r#"{{"type":"record","name":"r","fields":[{{"name":"f","type":{deep}}}]}}"#);
        assert_eq!(check(&deep).unwrap_err().code(), "UNSUPPORTED");
        let nulls = r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"array","items":"null"}}]}"#;
        assert_eq!(check(nulls).unwrap_err().code(), "UNSUPPORTED");
        let empty = r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"array","items":{"type":"record","name":"e","fields":[]}}}]}"#;
        assert_eq!(check(empty).unwrap_err().code(), "UNSUPPORTED");
        let wide = r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"fixed","name":"f","size":1073741824}}]}"#;
        assert_eq!(check(wide).unwrap_err().code(), "UNSUPPORTED");
    }

    #[test]
    fn walks_datums_before_anything_is_allocated_for_them() {
        let c = check(r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"array","items":"long"}},{"name":"b","type":"bytes"}]}"#).unwrap();
        let mut ok = Vec::new();
        write_long(&mut ok, 2);
        write_long(&mut ok, 7);
        write_long(&mut ok, 8);
        write_long(&mut ok, 0);
        write_long(&mut ok, 1);
        ok.push(b'x');
        c.datum(&ok).unwrap();
        // A count of 2^40 items in a few bytes, and a 1 GiB string in one byte.
        let mut many = Vec::new();
        write_long(&mut many, 1 << 40);
        write_long(&mut many, 1);
        assert_eq!(c.datum(&many).unwrap_err().code(), "CORRUPT");
        let mut long_bytes = Vec::new();
        write_long(&mut long_bytes, 0);
        write_long(&mut long_bytes, 1 << 30);
        long_bytes.push(b'x');
        assert_eq!(c.datum(&long_bytes).unwrap_err().code(), "CORRUPT");
    }
}
