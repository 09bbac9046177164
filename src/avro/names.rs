//! Avro's naming rules (names `[A-Za-z_][A-Za-z0-9_]*`, namespaces of dotted names) checked
//! by hand. apache-avro checks every name, namespace, field and enum symbol of a schema it
//! parses with a regex, compiled on first use: a visible share of a cold first query in wasm.
//! The rules, the answers and the errors are the specification's, as apache-avro gives them.

use std::sync::Once;

use apache_avro::error::Details;
use apache_avro::validator::{
    set_enum_symbol_name_validator, set_record_field_name_validator, set_schema_name_validator,
    set_schema_namespace_validator, EnumSymbolNameValidator, RecordFieldNameValidator,
    SchemaNameValidator, SchemaNamespaceValidator,
};
use apache_avro::AvroResult;

/// apache-avro's patterns, which its errors quote.
const NAME_PATTERN: &str = r"^((?P<namespace>([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)?)\.)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)$";
const NAMESPACE_PATTERN: &str = r"^([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)?$";

fn is_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_namespace(s: &str) -> bool {
    s.is_empty() || s.split('.').all(is_name)
}

/// `Ok` when `ok`, else apache-avro's error.
fn check(ok: bool, error: impl FnOnce() -> Details) -> AvroResult<()> {
    if ok {
        Ok(())
    } else {
        Err(error().into())
    }
}

struct Specification;

impl SchemaNameValidator for Specification {
    /// A full name: an optional namespace and a dot, then the name; answers where the name starts.
    fn validate(&self, full_name: &str) -> AvroResult<usize> {
        let start = match full_name.rfind('.') {
            Some(dot) if is_namespace(&full_name[..dot]) => dot + 1,
            Some(_) => full_name.len() + 1,
            None => 0,
        };
        match full_name.get(start..) {
            Some(name) if is_name(name) => Ok(start),
            _ => Err(Details::InvalidSchemaName(full_name.to_string(), NAME_PATTERN).into()),
        }
    }
}

impl SchemaNamespaceValidator for Specification {
    fn validate(&self, namespace: &str) -> AvroResult<()> {
        check(is_namespace(namespace), || {
            Details::InvalidNamespace(namespace.to_string(), NAMESPACE_PATTERN)
        })
    }
}

impl EnumSymbolNameValidator for Specification {
    fn validate(&self, symbol: &str) -> AvroResult<()> {
        check(is_name(symbol), || {
            Details::EnumSymbolName(symbol.to_string())
        })
    }
}

impl RecordFieldNameValidator for Specification {
    fn validate(&self, field: &str) -> AvroResult<()> {
        check(is_name(field), || Details::FieldName(field.to_string()))
    }
}

/// Installs the hand-written checks, before the first schema is parsed. apache-avro takes a
/// validator once per process; one already set (a test that parsed first) stays, and it
/// answers the same.
pub(crate) fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = set_schema_name_validator(Box::new(Specification));
        let _ = set_schema_namespace_validator(Box::new(Specification));
        let _ = set_enum_symbol_name_validator(Box::new(Specification));
        let _ = set_record_field_name_validator(Box::new(Specification));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// apache-avro's own checks: the traits' regex-based defaults.
    struct Regexes;
    impl SchemaNameValidator for Regexes {}
    impl SchemaNamespaceValidator for Regexes {}
    impl EnumSymbolNameValidator for Regexes {}
    impl RecordFieldNameValidator for Regexes {}

    #[test]
    fn names_are_checked_as_apache_avro_checks_them() {
        let inputs = [
            "",
            "a",
            "_",
            "_a",
            "a1",
            "A_z9",
            "1a",
            "a-b",
            "a b",
            "é",
            "aé",
            ".",
            "..",
            ".a",
            "a.",
            "a.b",
            "a..b",
            "a.b.c",
            "a.1b",
            "1a.b",
            "a.b.",
            ".a.b",
            "ns.Name",
            "a\n",
            "\na",
            "a.b\n",
            "org.apache.hudi.avro.model.HoodieCommitMetadata",
            "a.-b",
            "$a",
            "a$",
        ];
        for s in inputs {
            let ours = SchemaNameValidator::validate(&Specification, s);
            let theirs = SchemaNameValidator::validate(&Regexes, s);
            assert_eq!(ours.as_ref().ok(), theirs.as_ref().ok(), "name {s:?}");
            if let (Err(a), Err(b)) = (ours, theirs) {
                assert_eq!(a.to_string(), b.to_string(), "name {s:?}");
            }
            let ours = SchemaNamespaceValidator::validate(&Specification, s);
            let theirs = SchemaNamespaceValidator::validate(&Regexes, s);
            assert_eq!(ours.is_ok(), theirs.is_ok(), "namespace {s:?}");
            if let (Err(a), Err(b)) = (ours, theirs) {
                assert_eq!(a.to_string(), b.to_string(), "namespace {s:?}");
            }
            let ours =
                EnumSymbolNameValidator::validate(&Specification, s).map_err(|e| e.to_string());
            let theirs = EnumSymbolNameValidator::validate(&Regexes, s).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "symbol {s:?}");
            let ours =
                RecordFieldNameValidator::validate(&Specification, s).map_err(|e| e.to_string());
            let theirs = RecordFieldNameValidator::validate(&Regexes, s).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "field {s:?}");
        }
    }

    #[test]
    fn schemas_parse_with_the_checks_installed() {
        let schema = crate::avro::parse_schema(
            r#"{"type":"record","name":"r","namespace":"a.b","fields":[{"name":"x","type":{"type":"enum","name":"E","symbols":["A","_b"]}}]}"#,
        )
        .unwrap();
        assert_eq!(
            schema.name().map(|n| n.fullname(None)),
            Some("a.b.r".to_string())
        );
        let bad = crate::avro::parse_schema(
            r#"{"type":"record","name":"r","fields":[{"name":"1x","type":"int"}]}"#,
        );
        assert!(bad.unwrap_err().to_string().contains("1x"));
    }
}
