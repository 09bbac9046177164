//! Read options as the JS package sends them:
//! `{ query, asOf, start, end, columns, filters: [[col, op, value], ...] | ["col op value"],
//!    limit, dataSkipping, useMetadataTable, batchSize, concurrency, readAheadBytes }`,
//! and write options: `{ operation, options: { "hoodie.*": "value" } }`.
//! Other keys (the package's `signal`, `onProgress`) are ignored.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{HudiError, Result};
use crate::expr::{parse_filter, Expr, Op, Predicate};
use crate::read::{self, QueryType};

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(target_arch = "wasm32", derive(tsify_next::Tsify))]
pub struct ReadOptions {
    query: Option<String>,
    as_of: Option<String>,
    start: Option<String>,
    end: Option<String>,
    columns: Option<Vec<String>>,
    #[cfg_attr(target_arch = "wasm32", tsify(type = "unknown[] | undefined"))]
    filters: Option<Vec<Value>>,
    limit: Option<usize>,
    data_skipping: Option<bool>,
    use_metadata_table: Option<bool>,
    batch_size: Option<usize>,
    concurrency: Option<usize>,
    read_ahead_bytes: Option<u64>,
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn filter_from_json(v: &Value) -> Result<Expr> {
    match v {
        Value::String(s) => parse_filter(s),
        Value::Array(parts) if parts.len() >= 2 => {
            let column = text(&parts[0]);
            let op = Op::parse(&text(&parts[1]))
                .ok_or_else(|| HudiError::invalid(format!("unknown operator in filter {v}")))?;
            let values = match parts.get(2) {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items.iter().map(text).collect(),
                Some(one) => vec![text(one)],
            };
            Ok(Expr::Pred(Predicate { column, op, values }))
        }
        other => Err(HudiError::invalid(format!(
            "a filter is \"col op value\" or [col, op, value], not {other}"
        ))),
    }
}

impl ReadOptions {
    pub fn into_options(self) -> Result<read::ReadOptions> {
        let o = self;
        let d = read::ReadOptions::default();
        Ok(read::ReadOptions {
            query: o
                .query
                .as_deref()
                .map(QueryType::parse)
                .transpose()?
                .unwrap_or_default(),
            as_of: o.as_of,
            start: o.start,
            end: o.end,
            columns: o.columns,
            filters: o
                .filters
                .iter()
                .flatten()
                .map(filter_from_json)
                .collect::<Result<_>>()?,
            limit: o.limit,
            data_skipping: o.data_skipping.unwrap_or(d.data_skipping),
            use_metadata_table: o.use_metadata_table.unwrap_or(d.use_metadata_table),
            batch_size: o.batch_size.unwrap_or(d.batch_size),
            concurrency: o.concurrency.unwrap_or(d.concurrency),
            read_ahead_bytes: o.read_ahead_bytes.unwrap_or(d.read_ahead_bytes),
            ..d
        })
    }
}

/// `write()`'s options: the operation and Hudi write configs by their Java names.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(target_arch = "wasm32", derive(tsify_next::Tsify))]
pub struct WriteOptions {
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "\"upsert\" | \"insert\" | \"delete\"")
    )]
    operation: String,
    #[serde(default)]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "Record<string, string> | undefined")
    )]
    options: Option<BTreeMap<String, String>>,
    /// Multi-writer: tries again after losing a conflict, this many times.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    commit_retries: Option<u32>,
    /// Input columns the table lacks are added to its schema instead of refused.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    add_columns: Option<bool>,
    /// The write ends at its commit point; its table services are run later, on their own.
    #[serde(default)]
    #[cfg_attr(target_arch = "wasm32", tsify(optional))]
    defer_services: Option<bool>,
}

impl WriteOptions {
    pub fn into_options(self) -> Result<crate::write::WriteOptions> {
        Ok(crate::write::WriteOptions {
            operation: crate::write::Operation::parse(&self.operation)?,
            options: self.options.unwrap_or_default(),
            commit_retries: self.commit_retries.unwrap_or(0),
            add_columns: self.add_columns.unwrap_or(false),
            defer_services: self.defer_services.unwrap_or(false),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_js_write_options() {
        let parse = |text: &str| {
            serde_json::from_str::<WriteOptions>(text)
                .map_err(HudiError::invalid)
                .and_then(WriteOptions::into_options)
        };
        let o = parse(r#"{"operation":"delete","options":{"hoodie.x":"1"},"signal":{}}"#).unwrap();
        assert_eq!(o.operation, crate::write::Operation::Delete);
        assert_eq!(o.options["hoodie.x"], "1");
        assert_eq!(parse(r#"{"operation":"upsert"}"#).unwrap().options.len(), 0);
        let retried = parse(r#"{"operation":"upsert","commitRetries":3}"#).unwrap();
        assert_eq!(retried.commit_retries, 3);
        for bad in [
            r#"{"operation":"merge"}"#,
            r#"{}"#,
            r#"{"operation":"insert","options":{"a":1}}"#,
        ] {
            assert_eq!(parse(bad).unwrap_err().code(), "INVALID_ARGUMENT", "{bad}");
        }
    }

    fn read_options_from_json(text: &str) -> Result<read::ReadOptions> {
        serde_json::from_str::<ReadOptions>(text)
            .map_err(HudiError::invalid)?
            .into_options()
    }

    #[test]
    fn parses_js_options() {
        let o = read_options_from_json(r#"{"query":"incremental","start":"1","filters":[["a","in",["x","y"]],"b > 2"],"limit":5}"#).unwrap();
        assert_eq!(o.query, QueryType::Incremental);
        assert_eq!(o.filters.len(), 2);
        assert_eq!(o.filters[0], Expr::pred("a", Op::In, &["x", "y"]));
        assert!(read_options_from_json(r#"{"query":"nope"}"#).is_err());
    }
}
