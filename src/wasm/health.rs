//! A table's health, its fixes, and the tables under a prefix. Health and discovery only read
//! (they ask each service whether it is due), so both modules have them; fixes are the full
//! module's.

use std::sync::Arc;

use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::objects::hoodie_options;
use super::session::abortable;
use super::{js_value, to_js, WasmTable};
use crate::api::{wire, Host, RemoteOptions};
use crate::error::HudiError;

/// The host's clock (epoch ms): the core has none of its own here.
fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

#[wasm_bindgen]
impl WasmTable {
    /// The table's health (`options`: the write configs its writers use) from its timeline,
    /// listings and instant files: no data block is read.
    #[wasm_bindgen(unchecked_return_type = "Health")]
    pub async fn health(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string> | undefined")]
        options: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let options = hoodie_options(options, "health")?;
        let report = self
            .on_table(signal, |t| async move {
                t.health(&options, now_ms()).await.map_err(to_js)
            })
            .await?;
        js_value(&report)
    }
}

// Fixes run the table services: only in the full module.
#[cfg(feature = "write")]
#[wasm_bindgen]
impl WasmTable {
    /// Runs the table service that fixes each finding of a fresh report that names one,
    /// then reports again: `{ before, fixes, after }`. A read-only store is refused.
    #[wasm_bindgen(
        unchecked_return_type = "{ before: Health; fixes: FixOutcome[]; after: Health }"
    )]
    pub async fn fix(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string> | undefined")]
        options: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let options = hoodie_options(options, "fix")?;
        let table = abortable(signal.as_ref(), self.current()).await?;
        let (before, fixes) = abortable(signal.as_ref(), async {
            let before = table.health(&options, now_ms()).await.map_err(to_js)?;
            let fixes = table.fix(&before, &options).await.map_err(to_js)?;
            Ok((before, fixes))
        })
        .await?;
        if !fixes.is_empty() {
            // The next call that reads reopens the table.
            self.writes.set(self.writes.get() + 1);
        }
        let after = self
            .on_table(None, |t| async move {
                t.health(&options, now_ms()).await.map_err(to_js)
            })
            .await?;
        js_value(&serde_json::json!({
            "before": serde_wasm_bindgen_value(&before)?,
            "fixes": serde_wasm_bindgen_value(&fixes)?,
            "after": serde_wasm_bindgen_value(&after)?,
        }))
    }
}

/// A wire value as JSON with the JS names (camelCase), to nest in another answer.
#[cfg(feature = "write")]
fn serde_wasm_bindgen_value<T: serde::Serialize>(v: &T) -> Result<serde_json::Value, JsValue> {
    serde_json::to_value(v).map_err(|e| to_js(HudiError::invalid(format!("report: {e}"))))
}

/// Every Hudi table under `url` (`s3://bucket/prefix`, or an http(s) store that lists),
/// each with its findings. `options.limits` bounds the search (`maxDepth`, `maxListings`,
/// `maxObjects`), `options.health: false` reads only each table's properties.
#[wasm_bindgen(js_name = discoverTables, unchecked_return_type = "Discovery")]
pub async fn discover_tables(
    url: String,
    #[wasm_bindgen(unchecked_param_type = "RemoteOptions | undefined")] options: JsValue,
    #[wasm_bindgen(
        unchecked_param_type = "{ maxDepth?: number; maxListings?: number; maxObjects?: number; health?: boolean; options?: Record<string, string> } | undefined"
    )]
    search: JsValue,
    fetch: Option<js_sys::Function>,
    presign: Option<js_sys::Function>,
    signal: Option<AbortSignal>,
) -> Result<JsValue, JsValue> {
    use crate::storage::fetch::{FetchTransport, JsPresigner};
    let remote: RemoteOptions = if options.is_undefined() || options.is_null() {
        RemoteOptions::default()
    } else {
        serde_wasm_bindgen::from_value(options)
            .map_err(|e| to_js(HudiError::invalid(format!("discover options: {e}"))))?
    };
    let limits = search_limits(&search)?;
    let host = Host {
        transport: Some(Arc::new(FetchTransport::new(fetch).map_err(to_js)?)),
        presigner: presign.map(|p| Arc::new(JsPresigner::new(p)) as _),
    };
    let storage = crate::api::storage_for(&url, &remote, host).map_err(to_js)?;
    let found = abortable(signal.as_ref(), async {
        crate::health::discover::discover(storage, &limits)
            .await
            .map_err(to_js)
    })
    .await?;
    js_value::<wire::Discovery>(&found)
}

/// [`discover_tables`] over a JS storage object (as `WasmTable.openJs` takes one; its root
/// is the prefix searched).
#[wasm_bindgen(js_name = discoverJs, unchecked_return_type = "Discovery")]
pub async fn discover_js(
    storage: JsValue,
    #[wasm_bindgen(
        unchecked_param_type = "{ maxDepth?: number; maxListings?: number; maxObjects?: number; health?: boolean; options?: Record<string, string> } | undefined"
    )]
    search: JsValue,
    signal: Option<AbortSignal>,
) -> Result<JsValue, JsValue> {
    let storage = Arc::new(super::js_storage::JsStorage::new(storage));
    let limits = search_limits(&search)?;
    let found = abortable(signal.as_ref(), async {
        crate::health::discover::discover(storage, &limits)
            .await
            .map_err(to_js)
    })
    .await?;
    js_value::<wire::Discovery>(&found)
}

/// The search's limits from the JS options (the defaults where absent).
fn search_limits(search: &JsValue) -> Result<crate::health::discover::DiscoverOptions, JsValue> {
    let mut limits = crate::health::discover::DiscoverOptions {
        now_ms: now_ms(),
        ..Default::default()
    };
    if !search.is_object() {
        return Ok(limits);
    }
    let get = |k: &str| js_sys::Reflect::get(search, &k.into()).ok();
    let count = |k: &str| get(k).and_then(|v| v.as_f64()).map(|n| n.max(0.0) as usize);
    if let Some(n) = count("maxDepth") {
        limits.max_depth = n;
    }
    if let Some(n) = count("maxListings") {
        limits.max_listings = n;
    }
    if let Some(n) = count("maxObjects") {
        limits.max_objects = n;
    }
    if let Some(h) = get("health").and_then(|v| v.as_bool()) {
        limits.health = h;
    }
    if let Some(o) = get("options").filter(|v| v.is_object()) {
        limits.options = hoodie_options(o, "discover")?;
    }
    Ok(limits)
}
