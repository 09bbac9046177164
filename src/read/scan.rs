//! The one read driver: the rows of a plan as a stream of batches, with the row limit,
//! the number of slices read at once and progress applied here and nowhere else. Every
//! face (the CLI, the wasm API, and through it the package) reads through a [`Scan`].
//! Cancelling is dropping it: nothing it started outlives it.

use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use futures::channel::mpsc;
use futures::future::{AbortHandle, Abortable, BoxFuture};
use futures::stream::{self, BoxStream, Stream, StreamExt};
use futures::SinkExt;
use serde::Serialize;

use super::slice::SliceReader;
use super::{Plan, ReadOptions};
use crate::error::Result;
use crate::meta_client::MetaClient;
use crate::storage::IoSnapshot;

/// How far a scan got: requests and bytes since its plan started (the plan's own included),
/// and file slices read of those planned.
/// Crosses to JS as it is (`onProgress`; camelCase on wasm).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify_next::Tsify),
    serde(rename_all = "camelCase")
)]
pub struct ScanProgress {
    pub requests: u64,
    pub bytes: u64,
    pub files_done: usize,
    pub files_total: usize,
}

/// Runs a future elsewhere, e.g. on a native runtime's worker threads, so file slices
/// decode on every core. The core never picks a runtime: faces hand one in.
#[derive(Clone)]
pub struct Spawner(Arc<dyn Fn(BoxFuture<'static, ()>) + Send + Sync>);

impl Spawner {
    pub fn new(spawn: impl Fn(BoxFuture<'static, ()>) + Send + Sync + 'static) -> Spawner {
        Spawner(Arc::new(spawn))
    }

    /// `batches` produced by a spawned task, at most two batches ahead of the reader.
    /// Dropping the returned stream aborts the task.
    fn run(
        &self,
        mut batches: BoxStream<'static, Result<RecordBatch>>,
    ) -> BoxStream<'static, Result<RecordBatch>> {
        let (mut tx, rx) = mpsc::channel(1);
        let (abort, registration) = AbortHandle::new_pair();
        let pump = async move {
            while let Some(item) = batches.next().await {
                let stop = item.is_err();
                if tx.send(item).await.is_err() || stop {
                    break;
                }
            }
        };
        (self.0)(Box::pin(async move {
            let _ = Abortable::new(pump, registration).await;
        }));
        struct AbortOnDrop(AbortHandle);
        impl Drop for AbortOnDrop {
            fn drop(&mut self) {
                self.0.abort();
            }
        }
        let guard = AbortOnDrop(abort);
        rx.map(move |item| {
            let _ = &guard;
            item
        })
        .boxed()
    }
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spawner")
    }
}

pub struct Scan {
    schema: SchemaRef,
    batches: BoxStream<'static, Result<RecordBatch>>,
    /// Rows still allowed by the limit.
    left: usize,
    slices_done: Arc<AtomicUsize>,
    slices_total: usize,
    client: Arc<MetaClient>,
    plan_io: IoSnapshot,
    started: IoSnapshot,
    /// Held while the scan lives: its data files, when more than the session cache holds,
    /// are read around it.
    _around_cache: Option<crate::storage::cache::PassThrough>,
}

impl Scan {
    /// Reads `plan`'s slices, up to `options.concurrency` at once, each one batch at a time,
    /// so memory stays bounded by a few slices' log records and a few batches; ends once
    /// `options.limit` rows came out.
    pub fn new(client: Arc<MetaClient>, plan: Arc<Plan>, options: &ReadOptions) -> Scan {
        let (mut data_files, mut data_bytes) = (Vec::new(), 0);
        for slice in &plan.file_slices {
            if let Some(base) = slice.base_path() {
                data_bytes += slice.base_size().unwrap_or(0);
                data_files.push(base);
            }
            for log in &slice.log_files {
                data_bytes += log.size;
                data_files.push(crate::storage::join(&slice.partition, &log.name));
            }
        }
        let around_cache = client.around_cache(data_files, data_bytes);
        let slices_done = Arc::new(AtomicUsize::new(0));
        let slices_total = plan.file_slices.len();
        let reader = Arc::new(SliceReader::new(
            client.clone(),
            plan.clone(),
            options.batch_size,
        ));
        let done = slices_done.clone();
        let spawner = options.spawner.clone();
        let batches = stream::iter(0..slices_total)
            .map(move |i| {
                let done = done.clone();
                let finished = stream::once(async move {
                    done.fetch_add(1, Ordering::Relaxed);
                })
                .filter_map(|()| futures::future::ready(None));
                let slice = match &spawner {
                    Some(spawner) => spawner.run(reader.batches(i)),
                    None => reader.batches(i),
                };
                slice.chain(finished).boxed()
            })
            .flatten_unordered(options.concurrency.max(1))
            .boxed();
        Scan {
            schema: plan.output_schema.clone(),
            batches,
            left: options.limit.unwrap_or(usize::MAX),
            slices_done,
            slices_total,
            started: client.io(),
            client,
            plan_io: plan.io.clone(),
            _around_cache: around_cache,
        }
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Cheap; callable between batches.
    pub fn progress(&self) -> ScanProgress {
        let data = self.client.io().since(&self.started);
        ScanProgress {
            requests: self.plan_io.requests + data.requests,
            bytes: self.plan_io.bytes + data.bytes,
            files_done: self.slices_done.load(Ordering::Relaxed),
            files_total: self.slices_total,
        }
    }

    /// I/O of the data phase so far (the plan's own is in the plan).
    pub fn io(&self) -> IoSnapshot {
        self.client.io().since(&self.started)
    }

    /// The next batch, or `None` at the end (or once the limit is reached).
    pub async fn next(&mut self) -> Option<Result<RecordBatch>> {
        StreamExt::next(self).await
    }

    /// Every remaining batch.
    pub async fn collect(&mut self) -> Result<Vec<RecordBatch>> {
        let mut out = Vec::new();
        while let Some(b) = self.next().await {
            out.push(b?);
        }
        Ok(out)
    }
}

impl Stream for Scan {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.left == 0 {
            return Poll::Ready(None);
        }
        match self.batches.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(batch))) => {
                let take = batch.num_rows().min(self.left);
                self.left -= take;
                if self.left == 0 {
                    // Stop reading the other slices at once.
                    self.batches = stream::empty().boxed();
                }
                Poll::Ready(Some(Ok(if take == batch.num_rows() {
                    batch
                } else {
                    batch.slice(0, take)
                })))
            }
            Poll::Ready(Some(Err(e))) => {
                self.left = 0;
                Poll::Ready(Some(Err(e)))
            }
            other => other,
        }
    }
}
