//! The wasm-bindgen face: a table opened over bytes held in memory, over a storage
//! implemented in JavaScript, or over HTTP(S) / S3 / presigned URLs with `fetch`, answering
//! with JSON text and Arrow IPC bytes. Reads and plans take an optional `AbortSignal` and
//! an optional `onProgress({requests, bytes, filesDone, filesTotal})` callback. The
//! TypeScript package wraps these calls; nothing here is meant to be called by users
//! directly.

mod js_storage;
mod session;

use std::rc::Rc;
use std::sync::Arc;

use js_sys::{Array, Function, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

pub use session::WasmStream;
use session::{abortable, read_batches, Progress};

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
    table: Rc<Table>,
}

/// `openUrl`'s options (JSON).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct UrlOptions {
    headers: std::collections::BTreeMap<String, String>,
    s3: Option<crate::storage::object_store::S3Options>,
    listing: Option<String>,
    concurrency: Option<usize>,
    retries: Option<u32>,
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

    /// Opens a table at `url`: `http(s)://...` (ranged GETs; listing by manifest, JSON
    /// autoindex or S3 `ListObjectsV2`), or `s3://bucket/prefix` (SigV4 with `options.s3`,
    /// or, with `presign`, URLs asked of `presign(method, key, page?)` so secrets stay on a
    /// server). `fetch` replaces the global one; `signal` aborts the open.
    #[wasm_bindgen(js_name = openUrl)]
    pub async fn open_url(
        url: String,
        options_json: String,
        fetch: Option<Function>,
        presign: Option<Function>,
        signal: Option<AbortSignal>,
    ) -> Result<WasmTable, JsValue> {
        let storage = url_storage(&url, &options_json, fetch, presign).map_err(to_js)?;
        abortable(signal.as_ref(), Self::open_storage(storage)).await
    }

    async fn open_storage(storage: Arc<dyn Storage>) -> Result<WasmTable, JsValue> {
        let table = Table::open(storage).await.map_err(to_js)?;
        Ok(WasmTable {
            table: Rc::new(table),
        })
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

    /// The plan of a read as JSON.
    pub async fn plan(
        &self,
        options: String,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> Result<String, JsValue> {
        let options = ReadOptions::from_json(&options).map_err(to_js)?;
        let progress = Progress::new(&self.table, on_progress);
        let plan = abortable(signal.as_ref(), async {
            self.table.plan(&options).await.map_err(to_js)
        })
        .await?;
        progress.report(0, plan.file_slices.len());
        json(&crate::read::plan::plan_json(&plan))
    }

    /// Rows as an Arrow IPC stream.
    #[wasm_bindgen(js_name = readArrow)]
    pub async fn read_arrow(
        &self,
        options: String,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> Result<Uint8Array, JsValue> {
        let options = ReadOptions::from_json(&options).map_err(to_js)?;
        let progress = Progress::new(&self.table, on_progress);
        let (schema, batches) = abortable(
            signal.as_ref(),
            read_batches(self.table.clone(), options, progress),
        )
        .await?;
        let bytes = crate::output::arrow_ipc_bytes(&schema, &batches).map_err(to_js)?;
        Ok(Uint8Array::from(bytes.as_slice()))
    }

    /// Rows as a JSON array; `oracle: true` uses the fixtures' encoding.
    #[wasm_bindgen(js_name = readJson)]
    pub async fn read_json(
        &self,
        options: String,
        oracle: Option<bool>,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> Result<String, JsValue> {
        let options = ReadOptions::from_json(&options).map_err(to_js)?;
        let progress = Progress::new(&self.table, on_progress);
        let (_, batches) = abortable(
            signal.as_ref(),
            read_batches(self.table.clone(), options, progress),
        )
        .await?;
        let style = if oracle.unwrap_or(false) {
            crate::output::JsonStyle::ORACLE
        } else {
            Default::default()
        };
        let rows: Vec<_> = batches
            .iter()
            .flat_map(|b| crate::output::rows_as_json_with(b, style))
            .collect();
        json(&rows)
    }

    /// Rows batch by batch: `next()` resolves to one Arrow IPC stream (schema + one record
    /// batch) per batch, then to `undefined`. Planning happens on the first `next()`.
    pub fn stream(
        &self,
        options_json: String,
        signal: Option<AbortSignal>,
    ) -> Result<WasmStream, JsValue> {
        let options = ReadOptions::from_json(&options_json).map_err(to_js)?;
        Ok(WasmStream::new(self.table.clone(), options, signal))
    }

    /// Requests, bytes and dependent round trips since the table was opened (also by
    /// purpose), and what the storage worked around (`warnings`).
    pub fn io(&self) -> Result<String, JsValue> {
        json(&self.table.io())
    }
}

/// The storage `openUrl` asks for.
fn url_storage(
    url: &str,
    options_json: &str,
    fetch: Option<Function>,
    presign: Option<Function>,
) -> crate::error::Result<Arc<dyn Storage>> {
    use crate::storage::fetch::{FetchTransport, JsPresigner};
    use crate::storage::http::{
        Client, HttpOptions, HttpStorage, Target, DEFAULT_CONCURRENCY, DEFAULT_RETRIES,
    };
    use crate::storage::listing::ListingMode;
    let o: UrlOptions = if options_json.trim().is_empty() {
        UrlOptions::default()
    } else {
        serde_json::from_str(options_json)
            .map_err(|e| HudiError::invalid(format!("openUrl options: {e}")))?
    };
    let transport = Arc::new(FetchTransport::new(fetch)?);
    let options = HttpOptions {
        headers: o.headers.into_iter().collect(),
        listing: ListingMode::parse(o.listing.as_deref().unwrap_or("auto"))?,
        concurrency: o.concurrency.unwrap_or(DEFAULT_CONCURRENCY),
        retries: o.retries.unwrap_or(DEFAULT_RETRIES),
    };
    let s3 = o.s3.unwrap_or_default();
    let is_s3 = url.starts_with("s3://") || url.starts_with("s3a://");
    if let Some(presign) = presign {
        if !is_s3 {
            return Err(HudiError::invalid(
                "a presigned table is opened with an s3://bucket/prefix URL",
            ));
        }
        let (bucket, root) = crate::storage::object_store::parse_s3_url(url)?;
        let target = Target::Presigned {
            bucket,
            root,
            presigner: Arc::new(JsPresigner::new(presign)),
        };
        return Ok(Arc::new(HttpStorage::new(transport, target, options)));
    }
    if is_s3 {
        let client = Client::new(transport, options.concurrency, options.retries);
        return Ok(Arc::new(crate::storage::fetch::s3_storage(
            url, &s3, client,
        )?));
    }
    Ok(Arc::new(HttpStorage::for_url(
        transport,
        url,
        s3.force_path_style,
        options,
    )?))
}
