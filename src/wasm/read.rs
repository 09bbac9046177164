//! The table handle's reads: properties, timeline, instants, file groups, plans and rows
//! (Arrow IPC whole or in pieces, JS objects, a stream), and what they cost.

use std::sync::Arc;

use js_sys::{Array, Function, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::session::{
    abortable, plan_and_scan, read_all, read_ipc_pieces, OnProgress, StreamQuery,
};
use super::{js_value, to_js, WasmStream, WasmTable};
use crate::api::input::JS_MAX_SAFE_INTEGER;
use crate::api::wire;
use crate::error::HudiError;
use crate::read::ReadOptions;

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

#[wasm_bindgen]
impl WasmTable {
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
        let work = read_ipc_pieces(&table, &options, &progress, |p| bytes.extend_from_slice(p));
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
        let piece = |bytes: &[u8]| {
            pieces.push(&Uint8Array::from(bytes));
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

    /// Which commits of `(start, end]` changed which file groups, and where each change is
    /// read (a change-feed plan).
    #[wasm_bindgen(js_name = changePlan, unchecked_return_type = "ChangePlan")]
    pub async fn change_plan(
        &self,
        start: Option<String>,
        end: Option<String>,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let table = abortable(signal.as_ref(), self.current()).await?;
        let work =
            async { (table.plan_changes(start.as_deref(), end.as_deref()).await).map_err(to_js) };
        let plan = abortable(signal.as_ref(), work).await?;
        js_value(&wire::ChangePlan::from(&plan))
    }

    /// The change feed of `(start, end]` as an Arrow IPC stream (`op`, `ts_ms`, `before`,
    /// `after`, as Spark's CDC query returns them), then its cost (`ChangeStats`).
    #[wasm_bindgen(js_name = changesArrow, unchecked_return_type = "[Uint8Array, ChangeStats]")]
    pub async fn changes_arrow(
        &self,
        start: Option<String>,
        end: Option<String>,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> Result<JsValue, JsValue> {
        let progress = OnProgress(on_progress);
        let table = abortable(signal.as_ref(), self.current()).await?;
        let work = async {
            let plan = table.plan_changes(start.as_deref(), end.as_deref()).await;
            let scan = table.scan_changes(Arc::new(plan.map_err(to_js)?));
            scan.into_feed(|p| progress.report(p)).await.map_err(to_js)
        };
        let feed = abortable(signal.as_ref(), work).await?;
        let mut bytes = Vec::new();
        crate::api::output::write_arrow_ipc(&feed.schema, &feed.batches, &mut bytes)
            .map_err(to_js)?;
        let out = Array::new();
        out.push(&Uint8Array::from(bytes.as_slice()));
        out.push(&js_value(&wire::ChangeStats::from(&feed))?);
        Ok(out.into())
    }

    /// The change feed of `(start, end]` split by split: `next()` resolves to one Arrow IPC
    /// stream (schema + the rows of one file-group change) per split that changed rows, in
    /// commit order, then to `undefined`. Planning happens on the first `next()`.
    #[wasm_bindgen(js_name = changeStream)]
    pub fn change_stream(
        &self,
        start: Option<String>,
        end: Option<String>,
        signal: Option<AbortSignal>,
        on_progress: Option<Function>,
    ) -> WasmStream {
        let behind = self.shows.get() < self.writes.get();
        let query = StreamQuery::Changes { start, end };
        WasmStream::new(self.table(), behind, query, signal, OnProgress(on_progress))
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
            StreamQuery::Read(options),
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
}
