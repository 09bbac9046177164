//! What the table handle answers beside reads, in both modules: whether the storage takes
//! writes, the schema to check rows against before a write, reloads, the listing manifest,
//! and the storage's objects the timeline does not describe (lock, heartbeats); the calls'
//! Hudi config maps.

use std::sync::Arc;

use js_sys::Uint8Array;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::{abortable, js_value, to_js, WasmTable};
use crate::error::HudiError;
use crate::storage::{Purpose, StorageExt};
use crate::table::Table;

#[wasm_bindgen]
impl WasmTable {
    /// Whether the table's storage takes writes (S3, presigned URLs, a JS storage with `put`
    /// and `delete`); plain HTTP(S), zips and copied files do not.
    #[wasm_bindgen(getter)]
    pub fn writable(&self) -> bool {
        self.table().storage().capabilities().writable
    }

    /// Whether instant times are UTC wall-clock times (`hoodie.table.timeline.timezone=UTC`);
    /// `false`: the writer's local zone (`LOCAL`, Hudi's default), which the caller names.
    #[wasm_bindgen(getter, js_name = timelineUtc)]
    pub fn timeline_utc(&self) -> bool {
        self.table().config().timezone == crate::api::TimelineTimezone::Utc
    }

    /// Reopens the table: later calls see the timeline as it is now. One reopen, also
    /// when a write since the open left this handle behind.
    pub async fn reload(&self, signal: Option<AbortSignal>) -> Result<(), JsValue> {
        let writes = self.writes.get();
        let held = self.table();
        let fresh = abortable(signal.as_ref(), async {
            held.reopen().await.map_err(to_js)
        })
        .await?;
        *self.table.borrow_mut() = Arc::new(fresh);
        *self.latest.borrow_mut() = None;
        // A write that committed during the reopen may not show in it.
        if self.shows.get() < writes {
            self.shows.set(writes);
        }
        Ok(())
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
        let whole = |t: Arc<Table>| async move {
            let bytes = t.storage().get(&path, Purpose::Other).await;
            bytes.map_err(to_js)
        };
        let bytes = self.on_table(signal, whole).await?;
        Ok(Uint8Array::from(&bytes[..]))
    }

    /// The listing manifest (`.hoodie/hudi-edge-manifest.json`) of the table as the storage
    /// lists it now, as `hudi-edge manifest` writes it; stored in the table when `put`.
    /// `createdAt` comes from the caller (the clock is the host's).
    pub async fn manifest(
        &self,
        #[wasm_bindgen(js_name = createdAt)] created_at: String,
        put: bool,
        signal: Option<AbortSignal>,
    ) -> Result<Uint8Array, JsValue> {
        use crate::storage::listing::MANIFEST_PATH;
        let bytes = self
            .on_table(signal, |t| async move {
                let bytes = t.manifest(created_at).await.map_err(to_js)?.to_json();
                if put {
                    let data = bytes::Bytes::from(bytes.clone());
                    let overwrite = crate::storage::PutMode::Overwrite;
                    t.storage()
                        .put(MANIFEST_PATH, data, overwrite)
                        .await
                        .map_err(to_js)?;
                }
                Ok(bytes)
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
        let schema = self
            .on_table(signal, |table| async move {
                table.schema_for_write().await.map_err(to_js)
            })
            .await?;
        let fields: Vec<_> = schema
            .iter()
            .flat_map(|s| s.fields())
            .map(|f| crate::api::commit::SchemaField {
                name: f.name().clone(),
                r#type: f.data_type().to_string(),
                nullable: f.is_nullable(),
            })
            .collect();
        js_value(&fields)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ObjectJs {
    path: String,
    size: u64,
    last_modified: Option<i64>,
}

/// A call's `Record<string, string>` of Hudi configs (none when undefined).
pub(super) fn hoodie_options(
    options: JsValue,
    call: &str,
) -> Result<std::collections::BTreeMap<String, String>, JsValue> {
    if options.is_undefined() {
        return Ok(Default::default());
    }
    serde_wasm_bindgen::from_value(options)
        .map_err(|e| to_js(HudiError::invalid(format!("{call} options: {e}"))))
}
