//! What a JS call needs around a read: an `AbortSignal` that stops it promptly (the Rust
//! future is dropped, which aborts its in-flight fetches), progress callbacks, and the
//! batch-by-batch stream.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::channel::oneshot;
use futures::stream::{self, LocalBoxStream, StreamExt, TryStreamExt};
use futures::FutureExt;
use js_sys::{Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::to_js;
use crate::error::{HudiError, Result};
use crate::read::{Plan, ReadOptions};
use crate::table::Table;

fn aborted_error(signal: &AbortSignal) -> JsValue {
    let reason = signal.reason();
    let why = Reflect::get(&reason, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| reason.as_string())
        .unwrap_or_else(|| "the operation was aborted".into());
    to_js(HudiError::Aborted(why))
}

/// Runs `work` until it finishes or `signal` fires, whichever is first. On abort the work
/// is dropped (its fetches are aborted) and the promise rejects with code `ABORTED`.
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

/// Calls `onProgress({requests, bytes, filesDone, filesTotal})`; requests and bytes are the
/// table's since this operation started.
pub struct Progress {
    callback: Option<Function>,
    table: Rc<Table>,
    start: crate::storage::IoSnapshot,
}

impl Progress {
    pub fn new(table: &Rc<Table>, callback: Option<Function>) -> Self {
        Progress {
            callback,
            table: table.clone(),
            start: table.io(),
        }
    }

    pub fn report(&self, files_done: usize, files_total: usize) {
        let Some(cb) = &self.callback else { return };
        let io = self.table.io().since(&self.start);
        let o = Object::new();
        let _ = Reflect::set(&o, &"requests".into(), &(io.requests as f64).into());
        let _ = Reflect::set(&o, &"bytes".into(), &(io.bytes as f64).into());
        let _ = Reflect::set(&o, &"filesDone".into(), &(files_done as f64).into());
        let _ = Reflect::set(&o, &"filesTotal".into(), &(files_total as f64).into());
        // A throwing callback must not break the read.
        let _ = cb.call1(&JsValue::UNDEFINED, &o);
    }
}

/// The batches of `plan`'s file slices, `concurrency` slices at a time, in order.
fn slice_batches(
    table: Rc<Table>,
    plan: Rc<Plan>,
    options: Rc<ReadOptions>,
) -> LocalBoxStream<'static, Result<Vec<RecordBatch>>> {
    let concurrency = options.concurrency.max(1);
    stream::iter(0..plan.file_slices.len())
        .map(move |i| {
            let (t, p, o) = (table.clone(), plan.clone(), options.clone());
            async move { t.read_slice(&p, &p.file_slices[i], &o).await }
        })
        .buffered(concurrency)
        .boxed_local()
}

/// Keeps at most `left` rows.
fn take_rows(batches: Vec<RecordBatch>, left: &mut usize) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    for b in batches {
        if *left == 0 {
            break;
        }
        let take = b.num_rows().min(*left);
        *left -= take;
        out.push(if take == b.num_rows() {
            b
        } else {
            b.slice(0, take)
        });
    }
    out
}

/// Plans and reads, reporting progress after the plan and after each file slice.
pub async fn read_batches(
    table: Rc<Table>,
    options: ReadOptions,
    progress: Progress,
) -> Result<(SchemaRef, Vec<RecordBatch>), JsValue> {
    let plan = Rc::new(table.plan(&options).await.map_err(to_js)?);
    let total = plan.file_slices.len();
    progress.report(0, total);
    let mut left = options.limit.unwrap_or(usize::MAX);
    let mut slices = slice_batches(table, plan.clone(), Rc::new(options));
    let mut out = Vec::new();
    let mut done = 0;
    while left > 0 {
        let Some(batches) = slices.next().await else {
            break;
        };
        out.extend(take_rows(batches.map_err(to_js)?, &mut left));
        done += 1;
        progress.report(done, total);
    }
    Ok((plan.output_schema.clone(), out))
}

struct StreamState {
    table: Rc<Table>,
    options: Option<ReadOptions>,
    batches: Option<(SchemaRef, LocalBoxStream<'static, Result<RecordBatch>>)>,
    left: usize,
    busy: bool,
}

/// `stream()`'s answer: `next()` gives one self-contained Arrow IPC stream per batch.
#[wasm_bindgen]
pub struct WasmStream {
    state: Rc<RefCell<StreamState>>,
    signal: Option<AbortSignal>,
}

impl WasmStream {
    pub fn new(table: Rc<Table>, options: ReadOptions, signal: Option<AbortSignal>) -> Self {
        let left = options.limit.unwrap_or(usize::MAX);
        WasmStream {
            state: Rc::new(RefCell::new(StreamState {
                table,
                options: Some(options),
                batches: None,
                left,
                busy: false,
            })),
            signal,
        }
    }
}

async fn next_batch(
    state: Rc<RefCell<StreamState>>,
) -> Result<Option<(SchemaRef, RecordBatch)>, JsValue> {
    let planned = state.borrow_mut().options.take();
    if let Some(options) = planned {
        let table = state.borrow().table.clone();
        let plan = Rc::new(table.plan(&options).await.map_err(to_js)?);
        let schema = plan.output_schema.clone();
        let batches = slice_batches(table, plan, Rc::new(options))
            .map_ok(|v| stream::iter(v.into_iter().map(Ok)))
            .try_flatten()
            .boxed_local();
        state.borrow_mut().batches = Some((schema, batches));
    }
    let taken = state.borrow_mut().batches.take();
    let Some((schema, mut batches)) = taken else {
        return Ok(None);
    };
    if state.borrow().left == 0 {
        return Ok(None);
    }
    let item = batches.next().await;
    let mut s = state.borrow_mut();
    match item {
        None => Ok(None),
        Some(Err(e)) => Err(to_js(e)),
        Some(Ok(batch)) => {
            let take = batch.num_rows().min(s.left);
            s.left -= take;
            let batch = if take == batch.num_rows() {
                batch
            } else {
                batch.slice(0, take)
            };
            s.batches = Some((schema.clone(), batches));
            Ok(Some((schema, batch)))
        }
    }
}

#[wasm_bindgen]
impl WasmStream {
    /// The next batch as an Arrow IPC stream, or `undefined` at the end. An error or an
    /// abort ends the stream.
    pub async fn next(&self) -> Result<JsValue, JsValue> {
        {
            let mut s = self.state.borrow_mut();
            if s.busy {
                return Err(to_js(HudiError::invalid(
                    "next() called before the previous next() settled",
                )));
            }
            s.busy = true;
        }
        let outcome = abortable(self.signal.as_ref(), next_batch(self.state.clone())).await;
        self.state.borrow_mut().busy = false;
        match outcome? {
            None => Ok(JsValue::UNDEFINED),
            Some((schema, batch)) => {
                let bytes = crate::output::arrow_ipc_bytes(&schema, &[batch]).map_err(to_js)?;
                Ok(Uint8Array::from(bytes.as_slice()).into())
            }
        }
    }

    /// Stops reading; later `next()` calls resolve to `undefined`.
    pub fn close(&self) {
        let mut s = self.state.borrow_mut();
        s.batches = None;
        s.options = None;
    }
}
