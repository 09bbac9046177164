//! The table handle's writes and table services: the write, rollbacks of pending writes,
//! metadata-table builds, cleaning, compaction, clustering, archival. Only in the full
//! module (cargo feature `write`).

use js_sys::Uint8Array;
use serde::Serialize;
use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use super::objects::hoodie_options;
use super::session::abortable;
use super::{js_value, to_js, WasmTable};
use crate::api::wire;
use crate::error::HudiError;

#[wasm_bindgen]
impl WasmTable {
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
        let limits = crate::api::InputLimits::of(&options.options).map_err(to_js)?;
        // Measured before the copy into wasm memory.
        limits
            .check_input(rows.length() as u64, "rows")
            .map_err(to_js)?;
        let batches = crate::api::input::decode_arrow_ipc(&rows.to_vec())
            .map_err(|e| to_js(HudiError::invalid_input(format!("rows (Arrow IPC): {e}"))))?;
        limits.check_batches(&batches, "rows").map_err(to_js)?;
        let table = abortable(signal.as_ref(), self.current()).await?;
        // Columns JS typed otherwise are taken in the table's types
        // ([`crate::api::input::js_types`]); none while the table has no schema yet.
        let retype = |schema: Option<&_>| match schema {
            Some(schema) => crate::api::input::js_types(batches, schema),
            None => Ok(batches),
        };
        let write = table.write_retyped(retype, &options);
        let result = abortable(signal.as_ref(), async { write.await.map_err(to_js) }).await?;
        // The commit landed: the next call that reads reopens the table (not this one, so
        // a failed reopen cannot turn the commit into an error, and a caller that only
        // writes makes no request for it).
        self.writes.set(self.writes.get() + 1);
        js_value(&wire::WriteResult::from(result))
    }

    /// The table services a write made with `deferServices` left (cleaning, archival, inline
    /// compaction and clustering as `options` configure them, each only when due), run on
    /// the table as it is now. Afterwards this handle shows what they did.
    #[wasm_bindgen(js_name = runServices, unchecked_return_type = "ServicesRun")]
    pub async fn run_services(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] options: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let options = hoodie_options(options, "runServices")?;
        let table = abortable(signal.as_ref(), self.current()).await?;
        let (done, rolled_back) = abortable(signal.as_ref(), async {
            table.services_after_write(&options).await.map_err(to_js)
        })
        .await?;
        let run = wire::ServicesRun::of(done, rolled_back);
        let changed = !run.clean.is_empty()
            || !run.service_errors.is_empty()
            || !run.rolled_back.is_empty()
            || run.archival.is_some()
            || run.compaction.is_some()
            || run.clustering.is_some()
            || run.metadata_table_compaction.is_some();
        if changed {
            // The next call that reads reopens the table.
            self.writes.set(self.writes.get() + 1);
        }
        js_value(&run)
    }

    /// Builds the metadata-table `partitions` (none: Spark's defaults) and those `options`
    /// (`hoodie.metadata.*`, lock configs) ask for that the table lacks, then reloads.
    /// `null` when none was missing.
    #[wasm_bindgen(
        unchecked_return_type = "{ partitions: { partition: string; instant: string; fileGroups: number; records: number }[]; requests: number; bytes: number; elapsedMs: number } | null"
    )]
    pub async fn index(
        &self,
        partitions: Vec<String>,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] options: JsValue,
    ) -> Result<JsValue, JsValue> {
        let options = hoodie_options(options, "index")?;
        let table = self.current().await?;
        let built = table.index(&partitions, &options).await.map_err(to_js)?;
        self.reload(None).await?;
        js_value(&built.map(|b| {
            BuiltJs {
                partitions: b
                    .partitions
                    .into_iter()
                    .map(|p| BuiltPartitionJs {
                        partition: p.partition,
                        instant: p.instant,
                        file_groups: p.file_groups,
                        records: p.records,
                    })
                    .collect(),
                requests: b.io.requests,
                bytes: b.io.bytes,
                elapsed_ms: b.elapsed_ms,
            }
        }))
    }

    /// Cleans the table as Apache Hudi 1.1 does (`hoodie.clean.*` options, lock configs):
    /// finishes a pending clean or plans one when due, deletes the old file slices it names
    /// and commits it; then the metadata table's own clean when due. An abort leaves a
    /// started clean pending: the next clean (or write) finishes it from its plan.
    #[wasm_bindgen(unchecked_return_type = "CleanResult[]")]
    pub async fn clean(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] options: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let options = hoodie_options(options, "clean")?;
        let table = abortable(signal.as_ref(), self.current()).await?;
        let done = abortable(signal.as_ref(), async {
            table
                .clean_reporting_rollbacks(&options)
                .await
                .map_err(to_js)
        })
        .await?;
        if !done.cleans.is_empty() || !done.rolled_back.is_empty() {
            // The next call that reads reopens the table.
            self.writes.set(self.writes.get() + 1);
        }
        let done: Vec<wire::CleanResult> = (done.cleans.into_iter())
            .map(wire::CleanResult::from)
            .collect();
        js_value(&done)
    }

    /// Compacts a Merge-On-Read table (`options`: `hoodie.compaction.*`, lock configs):
    /// executes pending plans (or `instant` alone), then schedules one over every slice with
    /// log files and, unless `scheduleOnly`, executes it. An abort leaves a started
    /// compaction pending: the next compaction (or write) finishes it from its plan.
    #[wasm_bindgen(unchecked_return_type = "CompactReport")]
    pub async fn compact(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] options: JsValue,
        schedule_only: bool,
        instant: Option<String>,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let options = hoodie_options(options, "compact")?;
        let table = abortable(signal.as_ref(), self.current()).await?;
        let request = crate::api::CompactRequest {
            schedule_only,
            instant,
        };
        let done = abortable(signal.as_ref(), async {
            table.compact(&request, &options).await.map_err(to_js)
        })
        .await?;
        if !done.completed.is_empty() || done.scheduled.is_some() {
            // The next call that reads reopens the table.
            self.writes.set(self.writes.get() + 1);
        }
        js_value(&wire::CompactReport::from(done))
    }

    /// Clusters the table (`options`: `hoodie.clustering.*`, lock configs): schedules a plan
    /// over the small file slices, then executes it and every pending plan (or `instant`
    /// alone; `scheduleOnly` writes the plan and stops). An abort leaves a started
    /// clustering pending: the next clustering finishes it from its plan.
    #[wasm_bindgen(unchecked_return_type = "ClusterReport")]
    pub async fn cluster(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] options: JsValue,
        schedule_only: bool,
        instant: Option<String>,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let options = hoodie_options(options, "cluster")?;
        let table = abortable(signal.as_ref(), self.current()).await?;
        let request = crate::api::ClusterRequest {
            schedule_only,
            instant,
        };
        let done = abortable(signal.as_ref(), async {
            table.cluster(&request, &options).await.map_err(to_js)
        })
        .await?;
        if !done.completed.is_empty() || done.scheduled.is_some() {
            // The next call that reads reopens the table.
            self.writes.set(self.writes.get() + 1);
        }
        js_value(&wire::ClusterReport::from(done))
    }

    /// Moves old instants of both timelines to their LSM histories where due (Java's
    /// archiver; `options`: archival, cleaner and lock configs); later calls see the table
    /// as it is then.
    #[wasm_bindgen(unchecked_return_type = "ArchiveResult")]
    pub async fn archive(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] options: JsValue,
        signal: Option<AbortSignal>,
    ) -> Result<JsValue, JsValue> {
        let options = hoodie_options(options, "archive")?;
        let table = abortable(signal.as_ref(), self.current()).await?;
        let done = abortable(signal.as_ref(), async {
            table.archive(&options).await.map_err(to_js)
        })
        .await?;
        if done.archived_anything() {
            // The next call that reads reopens the table.
            self.writes.set(self.writes.get() + 1);
        }
        js_value(&wire::ArchiveResult::from(done))
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
struct BuiltJs {
    partitions: Vec<BuiltPartitionJs>,
    requests: u64,
    bytes: u64,
    elapsed_ms: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BuiltPartitionJs {
    partition: String,
    instant: String,
    file_groups: usize,
    records: u64,
}
