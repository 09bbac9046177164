//! The wasm-bindgen face: a table opened over bytes held in memory, over a storage
//! implemented in JavaScript, or over HTTP(S) / S3 / presigned URLs with `fetch`. Options
//! come in and answers go out as JS values of the wire types ([`crate::api::wire`]; the
//! build writes their TypeScript declarations into the `.d.ts`), rows as Arrow IPC bytes.
//! Async calls take an optional `AbortSignal` (it drops the Rust future, which aborts the
//! requests in flight); opens and reads take an optional `onProgress(Progress)`. The
//! TypeScript package wraps these calls; nothing here is meant to be called by users
//! directly.

mod js_storage;
mod session;

use std::cell::RefCell;
use std::sync::Arc;

use js_sys::{Array, Function, Uint8Array};
use serde::Serialize;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

pub use session::WasmStream;
use session::{abortable, plan_and_scan, read_all, read_ipc_pieces, OnProgress};

use crate::api::input::JS_MAX_SAFE_INTEGER;
use crate::api::wire::{self, ErrorInfo, Progress};
use crate::api::{Host, RemoteOptions};
use crate::error::HudiError;
use crate::file_group::view::FileSystemView;
use crate::read::ReadOptions;
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

fn read_options(options: JsValue) -> Result<ReadOptions, JsValue> {
    let o: crate::api::options::ReadOptions = if options.is_undefined() || options.is_null() {
        Default::default()
    } else {
        serde_wasm_bindgen::from_value(options)
            .map_err(|e| to_js(HudiError::invalid(format!("read options: {e}"))))?
    };
    o.into_options().map_err(to_js)
}

/// A row value as JS: numbers as `JSON.parse` would give them, except integers past 2^53,
/// which are bigints (exact, where a number would be silently rounded).
fn row_value(v: &serde_json::Value) -> JsValue {
    use serde_json::Value;
    match v {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) if i.unsigned_abs() > JS_MAX_SAFE_INTEGER => {
                js_sys::BigInt::from(i).into()
            }
            (None, Some(u)) if u > JS_MAX_SAFE_INTEGER => js_sys::BigInt::from(u).into(),
            _ => n.as_f64().unwrap_or(f64::NAN).into(),
        },
        Value::String(s) => s.into(),
        Value::Array(a) => a.iter().map(row_value).collect::<Array>().into(),
        Value::Object(m) => {
            let o = js_sys::Object::new();
            for (k, v) in m {
                let _ = js_sys::Reflect::set(&o, &k.into(), &row_value(v));
            }
            o.into()
        }
    }
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
            Some(spec) => {
                let new = spec.new_table(&storage.location()).map_err(to_js)?;
                Table::create(storage, &new).await
            }
            None => Table::open_with(storage, mdt_cache, prefetch_metadata_table).await,
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

    /// Properties and size of the table.
    #[wasm_bindgen(unchecked_return_type = "TableInfo")]
    pub async fn info(&self, signal: Option<AbortSignal>) -> Result<JsValue, JsValue> {
        let latest = abortable(signal.as_ref(), self.latest()).await?;
        js_value(&wire::TableInfo::new(self.table().config(), &latest))
    }

    /// The instants (`archived: true` loads the archive / LSM history first).
    #[wasm_bindgen(unchecked_return_type = "Timeline")]
    pub async fn timeline(
        &self,
        archived: bool,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let table = abortable(signal.as_ref(), self.current()).await?;
        let t = if archived {
            abortable(signal.as_ref(), async {
                table.load_history().await.map_err(to_js)
            })
            .await?
        } else {
            table.timeline()
        };
        js_value(&wire::Timeline {
            table: table.config().name.clone(),
            instants: t.instants.iter().map(wire::Instant::from).collect(),
        })
    }

    /// What one instant wrote (loads the archived timeline first).
    #[wasm_bindgen(unchecked_return_type = "CommitDetail")]
    pub async fn instant(
        &self,
        requested_time: String,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let table = abortable(signal.as_ref(), self.current()).await?;
        let detail = abortable(signal.as_ref(), async {
            let timeline = table.load_history().await.map_err(to_js)?;
            let instant = timeline.get(&requested_time).ok_or_else(|| {
                to_js(HudiError::NotFound {
                    path: format!("instant {requested_time}"),
                })
            })?;
            let content = table.instant_content(instant).await.map_err(to_js)?;
            Ok(crate::api::commit::CommitDetail::new(
                instant.into(),
                Some(content),
            ))
        })
        .await?;
        js_value(&detail)
    }

    /// Partitions → file groups → file slices, latest or as of an instant.
    #[wasm_bindgen(js_name = fileGroups, unchecked_return_type = "FileLayout")]
    pub async fn file_groups(
        &self,
        as_of: Option<String>,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let view = abortable(signal.as_ref(), async {
            match as_of {
                None => self.latest().await,
                Some(t) => Ok(Arc::new(
                    self.current()
                        .await?
                        .file_system_view(Some(&t))
                        .await
                        .map_err(to_js)?,
                )),
            }
        })
        .await?;
        js_value(&wire::FileLayout::from(&*view))
    }

    /// The plan of a read.
    #[wasm_bindgen(unchecked_return_type = "Plan")]
    pub async fn plan(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ReadOptions")] options: JsValue,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> Result<JsValue, JsValue> {
        let options = read_options(options)?;
        let progress = OnProgress(on_progress);
        let table = abortable(signal.as_ref(), self.current()).await?;
        let work = plan_and_scan(&table, &options, &progress);
        let (plan, _) = abortable(signal.as_ref(), work).await?;
        js_value(&wire::Plan::from(&*plan))
    }

    /// Rows as an Arrow IPC stream.
    #[wasm_bindgen(js_name = readArrow)]
    pub async fn read_arrow(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ReadOptions")] options: JsValue,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> Result<Uint8Array, JsValue> {
        let options = read_options(options)?;
        let progress = OnProgress(on_progress);
        let table = abortable(signal.as_ref(), self.current()).await?;
        // Serialized as the batches arrive, so batches and bytes are never both held whole.
        let mut bytes = Vec::new();
        let work = read_ipc_pieces(&table, &options, &progress, |p| bytes.extend(p));
        abortable(signal.as_ref(), work).await?;
        Ok(Uint8Array::from(bytes.as_slice()))
    }

    /// Rows as an Arrow IPC stream in pieces (the schema message, one message per batch, the
    /// end marker), each copied out as its batch is read and the batch dropped: the result is
    /// held once, in JS, instead of as batches, then IPC bytes in wasm, then a JS copy.
    #[wasm_bindgen(js_name = readArrowPieces, unchecked_return_type = "Uint8Array[]")]
    pub async fn read_arrow_pieces(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ReadOptions")] options: JsValue,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> Result<JsValue, JsValue> {
        let (options, table) = (read_options(options)?, self.current());
        let table = abortable(signal.as_ref(), table).await?;
        let progress = OnProgress(on_progress);
        let pieces = Array::new();
        let piece = |bytes: Vec<u8>| {
            pieces.push(&Uint8Array::from(bytes.as_slice()));
        };
        let work = read_ipc_pieces(&table, &options, &progress, piece);
        abortable(signal.as_ref(), work).await?;
        Ok(pieces.into())
    }

    /// Rows as objects; `oracle: true` uses the fixtures' encoding.
    #[wasm_bindgen(js_name = readJson, unchecked_return_type = "Record<string, unknown>[]")]
    pub async fn read_json(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ReadOptions")] options: JsValue,
        oracle: Option<bool>,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> Result<JsValue, JsValue> {
        use crate::api::output::{rows_as_json_with, JsonStyle};
        let options = read_options(options)?;
        let progress = OnProgress(on_progress);
        let table = abortable(signal.as_ref(), self.current()).await?;
        let (_, batches) =
            abortable(signal.as_ref(), read_all(&table, &options, &progress)).await?;
        let style = if oracle.unwrap_or(false) {
            JsonStyle::ORACLE
        } else {
            JsonStyle::default()
        };
        let rows: Array = batches
            .iter()
            .flat_map(|b| rows_as_json_with(b, style))
            .map(|row| row_value(&serde_json::Value::Object(row)))
            .collect();
        Ok(rows.into())
    }

    /// Rows batch by batch: `next()` resolves to one Arrow IPC stream (schema + one record
    /// batch) per batch, then to `undefined`. Planning happens on the first `next()`.
    pub fn stream(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ReadOptions")] options: JsValue,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> Result<WasmStream, JsValue> {
        let options = read_options(options)?;
        // Behind a write: the stream reopens the table when it plans (on the first `next()`).
        let behind = self.shows.get() < self.writes.get();
        Ok(WasmStream::new(
            self.table(),
            behind,
            options,
            signal,
            OnProgress(on_progress),
        ))
    }

    /// Requests, bytes and dependent round trips since the table was opened, by purpose,
    /// and what the storage worked around.
    #[wasm_bindgen(unchecked_return_type = "IoSnapshot")]
    pub fn io(&self) -> Result<JsValue, JsValue> {
        js_value(&self.table().io())
    }

    /// What the storage worked around (a server ignoring `Range`, ...).
    pub fn warnings(&self) -> Vec<String> {
        self.table().io().warnings
    }

    /// Commits `rows` (Arrow IPC, stream or file format) as one upsert, insert or delete.
    /// JS-typed columns (Float64 numbers, dictionary strings, base64 binary) are taken in the
    /// table's types where no value changes. Afterwards this handle shows the new commit.
    /// An abort stops the write at its next request: before the commit point readers never
    /// see it; once the completed instant was sent, open the table again to see whether it
    /// landed (this handle is not refreshed after a failed write).
    #[wasm_bindgen(unchecked_return_type = "WriteResult")]
    pub async fn write(
        &self,
        rows: Uint8Array,
        #[wasm_bindgen(unchecked_param_type = "WriteOptions")] options: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let options: crate::api::options::WriteOptions = serde_wasm_bindgen::from_value(options)
            .map_err(|e| to_js(HudiError::invalid(format!("write options: {e}"))))?;
        let options = options.into_options().map_err(to_js)?;
        let batches = crate::api::input::decode_arrow_ipc(&rows.to_vec())
            .map_err(|e| to_js(HudiError::invalid_input(format!("rows (Arrow IPC): {e}"))))?;
        let table = abortable(signal.as_ref(), self.current()).await?;
        let result = abortable(signal.as_ref(), async {
            let batches = js_input(&table, batches).await.map_err(to_js)?;
            table.write(&batches, &options).await.map_err(to_js)
        })
        .await?;
        // The commit landed: the next call that reads reopens the table (not this one, so
        // a failed reopen cannot turn the commit into an error, and a caller that only
        // writes makes no request for it).
        self.writes.set(self.writes.get() + 1);
        js_value(&wire::WriteResult::from(result))
    }

    /// Whether the table's storage takes writes (S3, presigned URLs, a JS storage with `put`
    /// and `delete`); plain HTTP(S), zips and copied files do not.
    #[wasm_bindgen(getter)]
    pub fn writable(&self) -> bool {
        self.table().storage().capabilities().writable
    }

    /// Reopens the table: later calls see the timeline as it is now.
    pub async fn reload(&self, signal: Option<AbortSignal>) -> Result<(), JsValue> {
        let fresh = self
            .on_table(signal, |t| async move { t.reopen().await.map_err(to_js) })
            .await?;
        *self.table.borrow_mut() = Arc::new(fresh);
        *self.latest.borrow_mut() = None;
        self.shows.set(self.writes.get());
        Ok(())
    }

    /// Rolls back the pending writes requested at `times` (an aborted write's own instant),
    /// then reloads. Not abortable: a rollback cut short would be finished by the next write,
    /// but the caller asked for it to be done now.
    #[wasm_bindgen(
        js_name = rollbackPending,
        unchecked_return_type = "{ rollbackInstant: string; instant: string; action: string; filesDeleted: string[] }[]"
    )]
    pub async fn rollback_pending(&self, times: Vec<String>) -> Result<JsValue, JsValue> {
        let table = self.current().await?;
        let done = table.rollback_pending(&times).await.map_err(to_js)?;
        self.reload(None).await?;
        let done: Vec<RolledBackJs> = done
            .into_iter()
            .map(|r| RolledBackJs {
                rollback_instant: r.rollback_instant,
                instant: r.instant,
                action: r.action,
                files_deleted: r.files_deleted,
            })
            .collect();
        js_value(&done)
    }

    /// Objects under `prefix` (relative to the base path); none when it does not exist. For
    /// what the timeline does not describe: the storage lock and heartbeats.
    #[wasm_bindgen(
        js_name = listObjects,
        unchecked_return_type = "{ path: string; size: number; lastModified: number | null }[]"
    )]
    pub async fn list_objects(
        &self,
        prefix: String,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let listed = self
            .on_table(signal, |t| async move {
                match t.storage().list(&prefix, true).await {
                    Ok(l) => Ok(l),
                    Err(HudiError::NotFound { .. }) => Ok(Vec::new()),
                    Err(e) => Err(to_js(e)),
                }
            })
            .await?;
        let objects: Vec<ObjectJs> = listed
            .into_iter()
            .filter(|m| !m.is_dir)
            .map(|m| ObjectJs {
                path: m.path,
                size: m.size,
                last_modified: m.last_modified_ms,
            })
            .collect();
        js_value(&objects)
    }

    /// One object's bytes, whole (relative to the base path).
    #[wasm_bindgen(js_name = readObject)]
    pub async fn read_object(
        &self,
        path: String,
        signal: Option<AbortSignal>,
    ) -> Result<Uint8Array, JsValue> {
        use crate::storage::{Purpose, StorageExt};
        let bytes = self
            .on_table(signal, |t| async move {
                t.storage().get(&path, Purpose::Other).await.map_err(to_js)
            })
            .await?;
        Ok(Uint8Array::from(&bytes[..]))
    }

    /// The table's latest schema as Arrow fields (`type` as Arrow prints it), for checking
    /// rows before a write; empty when the timeline has no schema yet. On a writable table
    /// the metadata table is opened beside it (the write reads it next: one round trip
    /// fewer; its failures are left for the write to report).
    #[wasm_bindgen(unchecked_return_type = "SchemaField[]")]
    pub async fn schema(&self, signal: Option<AbortSignal>) -> Result<JsValue, JsValue> {
        let fields = self
            .on_table(signal, |table| async move {
                let client = table.client();
                let visibility = client.timeline().visibility_as_of(None);
                let config = client.config();
                let warm_metadata = async {
                    if table.storage().capabilities().writable
                        && !config.metadata_partitions.is_empty()
                    {
                        let _ = table
                            .metadata_table(&config.metadata_partition_names())
                            .await;
                    }
                };
                let (schema, ()) =
                    futures::future::join(client.table_avro_schema(&visibility), warm_metadata)
                        .await;
                let Some((avro, origin)) = schema.map_err(to_js)? else {
                    return Ok(Vec::new());
                };
                let schema =
                    crate::schema::arrow_schema_from_avro_text(&avro, &origin).map_err(to_js)?;
                Ok(schema
                    .fields()
                    .iter()
                    .map(|f| crate::api::commit::SchemaField {
                        name: f.name().clone(),
                        r#type: f.data_type().to_string(),
                        nullable: f.is_nullable(),
                    })
                    .collect::<Vec<_>>())
            })
            .await?;
        js_value(&fields)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RolledBackJs {
    rollback_instant: String,
    instant: String,
    action: String,
    files_deleted: Vec<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ObjectJs {
    path: String,
    size: u64,
    last_modified: Option<i64>,
}

/// The input in the table's types where JS typed it otherwise ([`crate::api::input::js_types`]).
/// A read-only storage is refused first, so that no request is made for it.
async fn js_input(
    table: &Table,
    batches: Vec<arrow_array::RecordBatch>,
) -> crate::error::Result<Vec<arrow_array::RecordBatch>> {
    if !table.storage().capabilities().writable {
        return Ok(batches);
    }
    let client = table.client();
    let visibility = client.timeline().visibility_as_of(None);
    let Some((avro, origin)) = client.table_avro_schema(&visibility).await? else {
        return Ok(batches);
    };
    let schema = crate::schema::arrow_schema_from_avro_text(&avro, &origin)?;
    crate::api::input::js_types(batches, &schema)
}
