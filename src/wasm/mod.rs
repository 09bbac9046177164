//! The wasm-bindgen face: a table opened over bytes held in memory, over a storage
//! implemented in JavaScript, or over HTTP(S) / S3 / presigned URLs with `fetch`. Options
//! come in and answers go out as JS values of the wire types ([`crate::api::wire`]; the
//! build writes their TypeScript declarations into the `.d.ts`), rows as Arrow IPC bytes.
//! Async calls take an optional `AbortSignal` (it drops the Rust future, which aborts the
//! requests in flight); opens and reads take an optional `onProgress(Progress)`. The
//! TypeScript package wraps these calls; nothing here is meant to be called by users
//! directly. Here: errors and values crossing to JS, the metadata-table cache, and the
//! table handle's opens; its reads are in `read` and `objects`, its writes in `write` (the
//! full module's only: cargo feature `write`). Each call turns JS values into the core's
//! options, makes one call into the core, and hands the answer back.

// Writes and services only in the full module: without them the writers' code (Parquet, Avro
// and HFile writers) is not reachable, so not linked.
mod health;
mod js_storage;
mod objects;
mod read;
mod session;
#[cfg(feature = "write")]
mod write;

use std::cell::RefCell;
use std::sync::Arc;

use js_sys::{Array, Function, Uint8Array};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

pub use session::WasmStream;
use session::{abortable, OnProgress};

use crate::api::wire::{ErrorInfo, Progress};
use crate::api::{Host, RemoteOptions};
use crate::error::HudiError;
use crate::file_group::view::FileSystemView;
use crate::storage::mdt_cache::MdtFileCache;
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

/// Bytes of linear memory the module holds now (it only grows): what an isolate's memory
/// limit is measured against.
#[wasm_bindgen(js_name = memoryBytes)]
pub fn memory_bytes() -> f64 {
    wasm_bindgen::memory()
        .unchecked_into::<js_sys::WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64
}

/// Errors cross to JS as `Error` objects with the [`ErrorInfo`] properties.
pub(crate) fn to_js(e: HudiError) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    if let Ok(info) = js_value(&ErrorInfo::from(&e)) {
        js_sys::Object::assign(&err, &info.unchecked_into());
    }
    err.into()
}

/// A wire value as a plain JS value (objects, not `Map`s; `None` as `null`).
pub(crate) fn js_value<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| to_js(HudiError::invalid(e)))
}

/// A metadata-table file cache that outlives table handles (a worker keeps one at module
/// level, so each request's open reuses the MDT files earlier requests read or wrote).
#[wasm_bindgen]
pub struct WasmMdtCache {
    inner: Arc<MdtFileCache>,
}

#[wasm_bindgen]
impl WasmMdtCache {
    /// A cache of at most `max_bytes` (0 keeps nothing).
    #[wasm_bindgen(constructor)]
    pub fn new(max_bytes: f64) -> WasmMdtCache {
        WasmMdtCache {
            inner: Arc::new(MdtFileCache::new(max_bytes.max(0.0) as u64)),
        }
    }

    /// Another handle on the same cache (an open takes the one it is given).
    pub fn share(&self) -> WasmMdtCache {
        WasmMdtCache {
            inner: self.inner.clone(),
        }
    }

    #[wasm_bindgen(unchecked_return_type = "MdtCacheStats")]
    pub fn stats(&self) -> Result<JsValue, JsValue> {
        js_value(&self.inner.stats())
    }

    /// Drops every file held.
    pub fn clear(&self) {
        self.inner.clear()
    }
}

/// The package's `NewTableSpec`: the fields of [`crate::api::create::TableSpec`], with the
/// columns as Spark SQL (`columns`) or as Arrow IPC bytes of an empty table (`schemaIpc`).
#[cfg(feature = "write")]
fn table_spec(create: &JsValue) -> Result<Option<crate::api::create::TableSpec>, JsValue> {
    if create.is_undefined() || create.is_null() {
        return Ok(None);
    }
    let bad = |e: &dyn std::fmt::Display| to_js(HudiError::invalid(format!("new table: {e}")));
    let ipc = js_sys::Reflect::get(create, &"schemaIpc".into()).map_err(|_| bad(&"unreadable"))?;
    // Only the struct's own fields are read (`schemaIpc` and misspelt keys are passed over;
    // the package refuses the latter).
    let mut spec: crate::api::create::TableSpec =
        serde_wasm_bindgen::from_value(create.clone()).map_err(|e| bad(&e))?;
    if !ipc.is_undefined() && !ipc.is_null() {
        let bytes = Uint8Array::new(&ipc).to_vec();
        spec.schema = Some(crate::api::input::arrow_ipc_schema(&bytes).map_err(|e| bad(&e))?);
    }
    Ok(Some(spec))
}

/// The read module creates no tables (the package creates them with the full module).
#[cfg(not(feature = "write"))]
fn table_spec(create: &JsValue) -> Result<Option<crate::api::create::TableSpec>, JsValue> {
    match create.is_undefined() || create.is_null() {
        true => Ok(None),
        false => Err(to_js(HudiError::unsupported(
            "this module only reads: create tables with the full module",
        ))),
    }
}

#[wasm_bindgen]
pub struct WasmTable {
    /// Replaced after a write (reopened), so later calls see the commit; calls in flight
    /// keep the table they started with.
    table: RefCell<Arc<Table>>,
    /// Writes committed through this handle, and how many of them `table` shows: a call
    /// that reads reopens the table first when it is behind (a worker that writes and
    /// closes never pays for the reopen).
    writes: std::cell::Cell<u64>,
    shows: std::cell::Cell<u64>,
    /// The latest file-system view, shared by `fileGroups()` and `info()`.
    latest: RefCell<Option<Arc<FileSystemView>>>,
}

#[wasm_bindgen]
impl WasmTable {
    /// Opens a table from `[path, bytes, mtimeMillis?]` entries (paths relative to the base path).
    #[wasm_bindgen(js_name = openFiles)]
    pub async fn open_files(entries: Array) -> Result<WasmTable, JsValue> {
        // Files copied into memory: a write would vanish with the table handle.
        let storage = MemoryStorage::new().read_only();
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
        Self::open_storage(Arc::new(storage), &OnProgress(None), None, false, None).await
    }

    /// Opens a table from the bytes of a `.zip` of it (one top folder = the base path).
    #[wasm_bindgen(js_name = openZip)]
    pub async fn open_zip(bytes: Uint8Array, name: String) -> Result<WasmTable, JsValue> {
        let storage = MemoryStorage::from_zip(&bytes.to_vec(), &name).map_err(to_js)?;
        Self::open_storage(Arc::new(storage), &OnProgress(None), None, false, None).await
    }

    /// Opens a table over a JS object with async `get(path, start?, end?, signal)`,
    /// `head(path, signal)`, `list(prefix, recursive, signal)` (and optionally `put`,
    /// `delete`); `signal` aborts when the engine no longer needs the answer. Metadata-table
    /// files are read through `cache` when given. With `prefetch_metadata_table`, the
    /// metadata table's properties and listing are asked for in the open's round trip.
    /// With `create`, the table is created there first ([`table_spec`]).
    #[wasm_bindgen(js_name = openJs)]
    pub async fn open_js(
        storage: JsValue,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
        cache: Option<WasmMdtCache>,
        prefetch_metadata_table: Option<bool>,
        #[wasm_bindgen(
            unchecked_param_type = "(TableSpec & { schemaIpc?: Uint8Array }) | undefined"
        )]
        create: JsValue,
    ) -> Result<WasmTable, JsValue> {
        let create = table_spec(&create)?;
        let storage = Arc::new(js_storage::JsStorage::new(storage));
        let progress = OnProgress(on_progress);
        let cache = cache.map(|c| c.inner);
        let prefetch = prefetch_metadata_table.unwrap_or(false);
        abortable(
            signal.as_ref(),
            Self::open_storage(storage, &progress, cache, prefetch, create),
        )
        .await
    }

    /// Opens a table at `url`: `http(s)://...` (ranged GETs; listing by manifest, JSON
    /// autoindex or S3 `ListObjectsV2`), or `s3://bucket/prefix` (SigV4 with `options.s3`,
    /// or, with `presign`, URLs asked of `presign(method, key, page?)` so secrets stay on a
    /// server). `fetch` replaces the global one. Metadata-table files are read through
    /// `cache` when given (a [`WasmMdtCache::share`] of one kept across opens).
    /// `options.prefetchMetadataTable` and `create` as in [`WasmTable::open_js`].
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = openUrl)]
    pub async fn open_url(
        url: String,
        #[wasm_bindgen(unchecked_param_type = "RemoteOptions | undefined")] options: JsValue,
        fetch: Option<Function>,
        presign: Option<Function>,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
        cache: Option<WasmMdtCache>,
        #[wasm_bindgen(
            unchecked_param_type = "(TableSpec & { schemaIpc?: Uint8Array }) | undefined"
        )]
        create: JsValue,
    ) -> Result<WasmTable, JsValue> {
        let create = table_spec(&create)?;
        use crate::storage::fetch::{FetchTransport, JsPresigner};
        // Not a storage setting: read beside the options that are.
        let prefetch = options.is_object()
            && js_sys::Reflect::get(&options, &"prefetchMetadataTable".into())
                .is_ok_and(|v| v.is_truthy());
        let remote: RemoteOptions = if options.is_undefined() || options.is_null() {
            RemoteOptions::default()
        } else {
            serde_wasm_bindgen::from_value(options)
                .map_err(|e| to_js(HudiError::invalid(format!("openUrl options: {e}"))))?
        };
        let host = Host {
            transport: Some(Arc::new(FetchTransport::new(fetch).map_err(to_js)?)),
            presigner: presign.map(|p| Arc::new(JsPresigner::new(p)) as _),
        };
        let storage = crate::api::storage_for(&url, &remote, host).map_err(to_js)?;
        let progress = OnProgress(on_progress);
        let cache = cache.map(|c| c.inner);
        abortable(
            signal.as_ref(),
            Self::open_storage(storage, &progress, cache, prefetch, create),
        )
        .await
    }

    async fn open_storage(
        storage: Arc<dyn Storage>,
        progress: &OnProgress,
        mdt_cache: Option<Arc<MdtFileCache>>,
        prefetch_metadata_table: bool,
        create: Option<crate::api::create::TableSpec>,
    ) -> Result<WasmTable, JsValue> {
        let table = match create {
            #[cfg(feature = "write")]
            Some(spec) => {
                let new = spec.new_table(&storage.location()).map_err(to_js)?;
                Table::create(storage, &new).await
            }
            _ => Table::open_with(storage, mdt_cache, prefetch_metadata_table).await,
        }
        .map_err(to_js)?;
        let io = table.io();
        progress.report(Progress {
            requests: io.requests,
            bytes: io.bytes,
            files_done: 0,
            files_total: 0,
        });
        Ok(WasmTable {
            table: RefCell::new(Arc::new(table)),
            writes: std::cell::Cell::new(0),
            shows: std::cell::Cell::new(0),
            latest: RefCell::new(None),
        })
    }

    /// The table as last opened, without reopening after a write (no borrow is held
    /// across an await).
    fn table(&self) -> Arc<Table> {
        self.table.borrow().clone()
    }

    /// The table as of now: reopened first when a write committed since it was opened.
    async fn current(&self) -> Result<Arc<Table>, JsValue> {
        let writes = self.writes.get();
        if self.shows.get() >= writes {
            return Ok(self.table());
        }
        let fresh = Arc::new(self.table().reopen().await.map_err(to_js)?);
        // Kept unless another call reopened it meanwhile (as of a later write, maybe).
        if self.shows.get() < writes {
            *self.table.borrow_mut() = fresh.clone();
            *self.latest.borrow_mut() = None;
            self.shows.set(writes);
        }
        Ok(fresh)
    }

    /// `work` on the table as of now, until it finishes or `signal` fires.
    async fn on_table<T, F, Fut>(&self, signal: Option<AbortSignal>, work: F) -> Result<T, JsValue>
    where
        F: FnOnce(Arc<Table>) -> Fut,
        Fut: std::future::Future<Output = Result<T, JsValue>>,
    {
        abortable(signal.as_ref(), async { work(self.current().await?).await }).await
    }

    /// The latest file-system view (computed once).
    async fn latest(&self) -> Result<Arc<FileSystemView>, JsValue> {
        if self.shows.get() >= self.writes.get() {
            if let Some(v) = self.latest.borrow().clone() {
                return Ok(v);
            }
        }
        let table = self.current().await?;
        let view = Arc::new(table.file_system_view(None).await.map_err(to_js)?);
        // A write that finished meanwhile made this view stale: hand it out, do not keep it.
        if Arc::ptr_eq(&table, &self.table()) {
            *self.latest.borrow_mut() = Some(view.clone());
        }
        Ok(view)
    }
}
