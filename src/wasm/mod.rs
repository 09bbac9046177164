//! The wasm-bindgen face: a table opened over bytes held in memory or over a storage
//! implemented in JavaScript, answering with JSON text and Arrow IPC bytes. The TypeScript
//! package wraps these calls; nothing here is meant to be called by users directly.

mod js_storage;

use std::sync::Arc;

use js_sys::{Array, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::error::HudiError;
use crate::read::ReadOptions;
use crate::storage::memory::MemoryStorage;
use crate::storage::Storage;
use crate::table::Table;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console)]
    fn error(s: &str);
}

#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        error(&format!("hudi-edge panicked: {info}"))
    }));
}

/// Errors cross to JS as `Error` objects with `code` and `object` properties.
pub(crate) fn to_js(e: HudiError) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let _ = js_sys::Reflect::set(&err, &"code".into(), &e.code().into());
    if let Some(o) = e.object() {
        let _ = js_sys::Reflect::set(&err, &"object".into(), &o.into());
    }
    err.into()
}

fn json<T: serde::Serialize>(v: &T) -> Result<String, JsValue> {
    serde_json::to_string(v).map_err(|e| to_js(HudiError::invalid(e)))
}

#[wasm_bindgen]
pub struct WasmTable {
    table: Table,
}

#[wasm_bindgen]
impl WasmTable {
    /// Opens a table from `[path, bytes, mtimeMillis?]` entries (paths relative to the base path).
    #[wasm_bindgen(js_name = openFiles)]
    pub async fn open_files(entries: Array) -> Result<WasmTable, JsValue> {
        let storage = MemoryStorage::new();
        for entry in entries.iter() {
            let entry = Array::from(&entry);
            let path = entry
                .get(0)
                .as_string()
                .ok_or_else(|| to_js(HudiError::invalid("file path must be a string")))?;
            let bytes = Uint8Array::new(&entry.get(1)).to_vec();
            let mtime = entry.get(2).as_f64().map(|m| m as i64);
            storage.insert(&path, bytes, mtime);
        }
        Self::open_storage(Arc::new(storage)).await
    }

    /// Opens a table from the bytes of a `.zip` of it (one top folder = the base path).
    #[wasm_bindgen(js_name = openZip)]
    pub async fn open_zip(bytes: Uint8Array, name: String) -> Result<WasmTable, JsValue> {
        let storage = MemoryStorage::from_zip(&bytes.to_vec(), &name).map_err(to_js)?;
        Self::open_storage(Arc::new(storage)).await
    }

    /// Opens a table over a JS object with async `get(path, start?, end?)`, `head(path)`,
    /// `list(prefix, recursive)` (and optionally `put`, `delete`).
    #[wasm_bindgen(js_name = openJs)]
    pub async fn open_js(storage: JsValue) -> Result<WasmTable, JsValue> {
        Self::open_storage(Arc::new(js_storage::JsStorage::new(storage))).await
    }

    async fn open_storage(storage: Arc<dyn Storage>) -> Result<WasmTable, JsValue> {
        let table = Table::open(storage).await.map_err(to_js)?;
        Ok(WasmTable { table })
    }

    /// `hoodie.properties`, parsed, as JSON.
    pub fn config(&self) -> Result<String, JsValue> {
        json(self.table.config())
    }

    /// Instants as JSON (`archived: true` loads the archive / LSM history first).
    pub async fn timeline(&self, archived: bool) -> Result<String, JsValue> {
        let t = if archived {
            self.table.load_history().await.map_err(to_js)?
        } else {
            self.table.timeline()
        };
        json(&*t)
    }

    /// Content of one instant (commit metadata, plans ...).
    pub async fn instant(&self, requested_time: String) -> Result<String, JsValue> {
        let timeline = self.table.load_history().await.map_err(to_js)?;
        let instant = timeline.get(&requested_time).ok_or_else(|| {
            to_js(HudiError::NotFound {
                path: format!("instant {requested_time}"),
            })
        })?;
        let content = self.table.instant_content(instant).await.map_err(to_js)?;
        json(&serde_json::json!({ "instant": instant, "content": content }))
    }

    #[wasm_bindgen(js_name = fileGroups)]
    pub async fn file_groups(&self, as_of: Option<String>) -> Result<String, JsValue> {
        json(
            &self
                .table
                .file_system_view(as_of.as_deref())
                .await
                .map_err(to_js)?,
        )
    }

    pub async fn plan(&self, options: String) -> Result<String, JsValue> {
        let options = ReadOptions::from_json(&options).map_err(to_js)?;
        let plan = self.table.plan(&options).await.map_err(to_js)?;
        json(&crate::read::plan::plan_json(&plan))
    }

    /// Rows as an Arrow IPC stream.
    #[wasm_bindgen(js_name = readArrow)]
    pub async fn read_arrow(&self, options: String) -> Result<Uint8Array, JsValue> {
        let options = ReadOptions::from_json(&options).map_err(to_js)?;
        let result = self.table.read(&options).await.map_err(to_js)?;
        let bytes =
            crate::output::arrow_ipc_bytes(&result.schema, &result.batches).map_err(to_js)?;
        Ok(Uint8Array::from(bytes.as_slice()))
    }

    /// Rows as a JSON array; `oracle: true` uses the fixtures' encoding.
    #[wasm_bindgen(js_name = readJson)]
    pub async fn read_json(&self, options: String, oracle: bool) -> Result<String, JsValue> {
        let options = ReadOptions::from_json(&options).map_err(to_js)?;
        let result = self.table.read(&options).await.map_err(to_js)?;
        let style = if oracle {
            crate::output::JsonStyle::ORACLE
        } else {
            Default::default()
        };
        let rows: Vec<_> = result
            .batches
            .iter()
            .flat_map(|b| crate::output::rows_as_json_with(b, style))
            .collect();
        json(&rows)
    }

    /// Requests and bytes since the table was opened.
    pub fn io(&self) -> Result<String, JsValue> {
        json(&self.table.io())
    }
}
