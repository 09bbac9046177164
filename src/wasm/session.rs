//! What a JS call needs around the engine: an `AbortSignal` that stops it (the Rust future
//! is dropped, which aborts its in-flight requests), the `onProgress` callback, and the
//! batch-by-batch stream of a read or a change feed. Reads go through [`crate::read::scan`].

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::channel::oneshot;
use futures::FutureExt;
use js_sys::{Function, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::{js_value, to_js};
use crate::api::wire::Progress;
use crate::error::HudiError;
use crate::read::cdc::ChangeScan;
use crate::read::{Plan, ReadOptions, Scan, ScanProgress};
use crate::table::Table;

fn aborted_error(signal: &AbortSignal) -> JsValue {
    let reason = signal.reason();
    let why = js_sys::Reflect::get(&reason, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| reason.as_string())
        .unwrap_or_else(|| "the operation was aborted".into());
    to_js(HudiError::Aborted(why))
}

/// Runs `work` until it finishes or `signal` fires, whichever is first. On abort the work
/// is dropped (its requests are aborted) and the promise rejects with code `ABORTED`.
pub async fn abortable<T>(
    signal: Option<&AbortSignal>,
    work: impl Future<Output = Result<T, JsValue>>,
) -> Result<T, JsValue> {
    let Some(signal) = signal else {
        return work.await;
    };
    if signal.aborted() {
        return Err(aborted_error(signal));
    }
    let (tx, rx) = oneshot::channel::<()>();
    let tx = RefCell::new(Some(tx));
    let on_abort = Closure::<dyn FnMut()>::new(move || {
        if let Some(tx) = tx.borrow_mut().take() {
            let _ = tx.send(());
        }
    });
    let _ = signal.add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
    let work = work.fuse();
    let rx = rx.fuse();
    futures::pin_mut!(work, rx);
    let outcome = futures::select! {
        r = work => r,
        _ = rx => Err(aborted_error(signal)),
    };
    let _ = signal.remove_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
    outcome
}

/// `onProgress(Progress)`, when given.
pub struct OnProgress(pub Option<Function>);

impl OnProgress {
    pub fn report(&self, p: Progress) {
        let Some(cb) = &self.0 else { return };
        if let Ok(v) = js_value(&p) {
            // A throwing callback must not break the read.
            let _ = cb.call1(&JsValue::UNDEFINED, &v);
        }
    }

    fn scanned(&self, scan: &Scan) {
        self.report(scan.progress());
    }
}

/// Plans `options` and starts scanning (lazily), reporting progress after the plan.
pub async fn plan_and_scan(
    table: &Arc<Table>,
    options: &ReadOptions,
    progress: &OnProgress,
) -> Result<(Arc<Plan>, Scan), JsValue> {
    let plan = Arc::new(table.plan(options).await.map_err(to_js)?);
    let scan = table.scan(plan.clone(), options);
    progress.scanned(&scan);
    Ok((plan, scan))
}

/// Every batch of a read, reporting progress after each.
pub async fn read_all(
    table: &Arc<Table>,
    options: &ReadOptions,
    progress: &OnProgress,
) -> Result<(SchemaRef, Vec<RecordBatch>), JsValue> {
    let (_, mut scan) = plan_and_scan(table, options, progress).await?;
    let mut batches = Vec::new();
    while let Some(batch) = scan.next().await {
        batches.push(batch.map_err(to_js)?);
        progress.scanned(&scan);
    }
    progress.scanned(&scan);
    Ok((scan.schema(), batches))
}

/// The read as an Arrow IPC stream in pieces (schema, one message per batch, end marker), each
/// handed to `piece` as its batch is read, the batch then dropped.
pub async fn read_ipc_pieces(
    table: &Arc<Table>,
    options: &ReadOptions,
    progress: &OnProgress,
    mut piece: impl FnMut(&[u8]),
) -> Result<(), JsValue> {
    use crate::api::output::IpcPieces;
    let (_, mut scan) = plan_and_scan(table, options, progress).await?;
    let (mut writer, head) = IpcPieces::new(&scan.schema()).map_err(to_js)?;
    piece(&head);
    while let Some(batch) = scan.next().await {
        piece(writer.batch(&batch.map_err(to_js)?).map_err(to_js)?);
        progress.scanned(&scan);
    }
    progress.scanned(&scan);
    piece(&writer.finish().map_err(to_js)?);
    Ok(())
}

/// What a stream reads.
pub enum StreamQuery {
    Read(ReadOptions),
    /// The change feed of `(start, end]`.
    Changes {
        start: Option<String>,
        end: Option<String>,
    },
}

/// A stream's rows once planned.
enum Rows {
    Read(Scan),
    Changes(ChangeScan),
}

impl Rows {
    async fn plan(
        table: &Arc<Table>,
        query: StreamQuery,
        progress: &OnProgress,
    ) -> Result<Rows, JsValue> {
        Ok(match query {
            StreamQuery::Read(options) => {
                Rows::Read(plan_and_scan(table, &options, progress).await?.1)
            }
            StreamQuery::Changes { start, end } => {
                let plan = table.plan_changes(start.as_deref(), end.as_deref());
                let scan = table.scan_changes(Arc::new(plan.await.map_err(to_js)?));
                progress.report(scan.progress());
                Rows::Changes(scan)
            }
        })
    }

    async fn next(&mut self) -> Option<crate::error::Result<RecordBatch>> {
        match self {
            Rows::Read(scan) => scan.next().await,
            Rows::Changes(scan) => scan.next().await,
        }
    }

    fn progress(&self) -> ScanProgress {
        match self {
            Rows::Read(scan) => scan.progress(),
            Rows::Changes(scan) => scan.progress(),
        }
    }

    fn schema(&self) -> SchemaRef {
        match self {
            Rows::Read(scan) => scan.schema(),
            Rows::Changes(_) => crate::read::cdc::feed_schema(),
        }
    }
}

struct StreamState {
    table: Arc<Table>,
    /// The table is behind a write made through its handle: reopened before planning.
    reopen: bool,
    /// Until the first `next()` plans.
    query: Option<StreamQuery>,
    /// Out of the state while a `next()` awaits it.
    rows: Option<Rows>,
    busy: bool,
    closed: bool,
}

/// `stream()`'s and `changeStream()`'s answer: `next()` gives one self-contained Arrow IPC
/// stream per batch.
#[wasm_bindgen]
pub struct WasmStream {
    state: Rc<RefCell<StreamState>>,
    signal: Option<AbortSignal>,
    progress: Rc<OnProgress>,
}

impl WasmStream {
    pub fn new(
        table: Arc<Table>,
        reopen: bool,
        query: StreamQuery,
        signal: Option<AbortSignal>,
        progress: OnProgress,
    ) -> Self {
        WasmStream {
            state: Rc::new(RefCell::new(StreamState {
                table,
                reopen,
                query: Some(query),
                rows: None,
                busy: false,
                closed: false,
            })),
            signal,
            progress: Rc::new(progress),
        }
    }
}

async fn next_batch(
    state: Rc<RefCell<StreamState>>,
    progress: Rc<OnProgress>,
) -> Result<Option<(SchemaRef, RecordBatch)>, JsValue> {
    let (query, rows) = {
        let mut s = state.borrow_mut();
        (s.query.take(), s.rows.take())
    };
    let mut rows = match (rows, query) {
        (Some(rows), _) => rows,
        (None, Some(query)) => {
            let (mut table, reopen) = {
                let s = state.borrow();
                (s.table.clone(), s.reopen)
            };
            if reopen {
                table = Arc::new(table.reopen().await.map_err(to_js)?);
            }
            Rows::plan(&table, query, &progress).await?
        }
        (None, None) => return Ok(None),
    };
    let item = rows.next().await;
    progress.report(rows.progress());
    let batch = match item {
        None => return Ok(None),
        Some(b) => b.map_err(to_js)?,
    };
    let schema = rows.schema();
    let mut s = state.borrow_mut();
    if !s.closed {
        s.rows = Some(rows);
    }
    Ok(Some((schema, batch)))
}

#[wasm_bindgen]
impl WasmStream {
    /// The next batch as an Arrow IPC stream, or `undefined` at the end. An error or an
    /// abort ends the stream.
    pub async fn next(&self) -> Result<Option<Uint8Array>, JsValue> {
        {
            let mut s = self.state.borrow_mut();
            if s.busy {
                return Err(to_js(HudiError::invalid(
                    "next() called before the previous next() settled",
                )));
            }
            s.busy = true;
        }
        let work = next_batch(self.state.clone(), self.progress.clone());
        let outcome = abortable(self.signal.as_ref(), work).await;
        self.state.borrow_mut().busy = false;
        let Some((schema, batch)) = outcome? else {
            return Ok(None);
        };
        let bytes = crate::api::output::arrow_ipc_bytes(&schema, &[batch]).map_err(to_js)?;
        Ok(Some(Uint8Array::from(bytes.as_slice())))
    }

    /// Stops reading; later `next()` calls resolve to `undefined`.
    pub fn close(&self) {
        let mut s = self.state.borrow_mut();
        s.rows = None;
        s.query = None;
        s.closed = true;
    }
}
