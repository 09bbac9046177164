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
use super::{Plan, QueryType, ReadOptions};
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
    /// Reads `plan`'s slices, `options.concurrency` at once and more while small (see
    /// [`Window`]), each one batch at a time, so memory stays bounded by a few slices' log
    /// records and a few batches; ends once `options.limit` rows came out.
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
        let spawner = options.spawner.clone();
        let footer_len = client.footer_len_hint();
        let costs = plan
            .file_slices
            .iter()
            .map(|slice| {
                let share = plan.expected_share_of(slice);
                planned_cost(slice, plan.query, share, footer_len)
            })
            .collect();
        let open = move |i: usize| match &spawner {
            Some(spawner) => spawner.run(reader.batches(i)),
            None => reader.batches(i),
        };
        // Slices started beyond what the store sends at once would queue their requests
        // ahead of the first slices' second ones.
        let most = client
            .storage()
            .capabilities()
            .requests_at_once
            .unwrap_or(usize::MAX);
        // A limit is mostly met by the first slices: the others would be read for nothing.
        let read_ahead = match options.limit {
            Some(_) => 0,
            None => options.read_ahead_bytes,
        };
        let done = slices_done.clone();
        let window = Window::new(costs, open, options.concurrency, most, read_ahead, done);
        let batches = window.boxed();
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

/// Most slices read at once, however small, where the store sends any number of requests.
const MOST_AT_ONCE: usize = 64;
/// As many again while the slices beyond it are expected to match few rows.
const MOST_AT_ONCE_SELECTIVE: usize = 128;
/// The share of a file's rows the column statistics may expect to match for its slice to
/// count as selective whatever it fetches (its decoded rows are then an eighth of its bytes).
const FEW_ROWS: f64 = 1.0 / 64.0;
/// Arrow arrays are several times the Parquet bytes they decode from (dictionaries,
/// compression); 8 is a generous ratio.
const DECODED_PER_FETCHED: f64 = 8.0;
/// The tail and the head a footer read fetches when it knows the footer's length, rounded up.
const HINTED_FOOTER_READS: u64 = 32 << 10;

/// What starting a slice early takes: the bytes its read is expected to hold, and how many
/// slices may run at most while it does.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Cost {
    bytes: u64,
    most: usize,
}

/// A base file read alone holds what it fetches and the rows it decodes: its size bounds
/// both, while nothing better is known. A merge holds its log records decoded, several times
/// their size, so a slice with log files counts as too big to start early, as does a base
/// file of unknown size. Where column statistics expect few rows to match, and the footers'
/// length is known (their bloom filters are not fetched), the fetched bytes and that share
/// of their decoded rows count instead, and more such slices may run at once.
fn planned_cost(
    slice: &crate::file_group::FileSlice,
    query: QueryType,
    expected_share: Option<f64>,
    footer_len: Option<u64>,
) -> Cost {
    let plain = |bytes| Cost {
        bytes,
        most: MOST_AT_ONCE,
    };
    if query != QueryType::ReadOptimized && !slice.log_files.is_empty() {
        return plain(u64::MAX);
    }
    if slice.base_path().is_none() {
        return plain(0);
    }
    let Some(size) = slice.base_size() else {
        return plain(u64::MAX);
    };
    let estimate = match (expected_share, footer_len) {
        (Some(share), Some(footer)) if footer < size => {
            // A footer short enough for the tail read (no bloom filter) skips nothing: a
            // small file is read whole.
            let fetched = if crate::base_file::fits_tail(footer) {
                size
            } else {
                (size - footer).saturating_add(HINTED_FOOTER_READS)
            };
            let held = (fetched as f64 * (1.0 + DECODED_PER_FETCHED * share)) as u64;
            Some((held, share))
        }
        _ => None,
    };
    match estimate {
        Some((held, share)) if held < size || share <= FEW_ROWS => Cost {
            bytes: held,
            most: MOST_AT_ONCE_SELECTIVE,
        },
        _ => plain(size),
    }
}

/// Slices started in plan order, `at_once` of them at a time, and more, up to `most` (what
/// the store sends at once) and each slice's own [`Cost::most`], while the bytes those
/// running are expected to hold stay within `read_ahead`.
/// A slice of a selective query is a couple of dependent requests for little data; a fixed
/// number at a time would make a hundred small files a dozen round trips in a row.
struct Window<F> {
    costs: Vec<Cost>,
    next: usize,
    open: F,
    at_once: usize,
    most: usize,
    read_ahead: u64,
    running: futures::stream::SelectAll<BoxStream<'static, Step>>,
    running_count: usize,
    running_bytes: u64,
    /// Slices read to their end (progress).
    ended: Arc<AtomicUsize>,
}

enum Step {
    Batch(Result<RecordBatch>),
    Ended(u64),
}

impl<F> Window<F>
where
    F: FnMut(usize) -> BoxStream<'static, Result<RecordBatch>>,
{
    fn new(
        costs: Vec<Cost>,
        open: F,
        at_once: usize,
        most: usize,
        read_ahead: u64,
        ended: Arc<AtomicUsize>,
    ) -> Self {
        Window {
            costs,
            next: 0,
            open,
            at_once: at_once.max(1),
            most,
            read_ahead,
            running: futures::stream::SelectAll::new(),
            running_count: 0,
            running_bytes: 0,
            ended,
        }
    }

    fn start_what_fits(&mut self) {
        while let Some(&Cost { bytes: size, most }) = self.costs.get(self.next) {
            let fits = self.running_count < self.at_once
                || (self.running_count < self.most.min(most)
                    && self.running_bytes.saturating_add(size) <= self.read_ahead);
            if !fits {
                break;
            }
            let ended = stream::once(futures::future::ready(Step::Ended(size)));
            let slice = (self.open)(self.next).map(Step::Batch).chain(ended);
            self.running.push(slice.boxed());
            self.next += 1;
            self.running_count += 1;
            self.running_bytes = self.running_bytes.saturating_add(size);
        }
    }
}

impl<F> Stream for Window<F>
where
    F: FnMut(usize) -> BoxStream<'static, Result<RecordBatch>> + Unpin,
{
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            self.start_what_fits();
            match self.running.poll_next_unpin(cx) {
                Poll::Ready(Some(Step::Batch(batch))) => return Poll::Ready(Some(batch)),
                Poll::Ready(Some(Step::Ended(size))) => {
                    self.ended.fetch_add(1, Ordering::Relaxed);
                    self.running_count -= 1;
                    self.running_bytes = self.running_bytes.saturating_sub(size);
                }
                Poll::Ready(None) if self.next < self.costs.len() => {}
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::channel::oneshot;
    use std::sync::Mutex;

    /// Slices that end when told to; `started` says which have been opened.
    struct Slices {
        started: Arc<Mutex<Vec<usize>>>,
        finish: Vec<Option<oneshot::Sender<()>>>,
    }

    fn window(
        sizes: Vec<u64>,
        at_once: usize,
        most: usize,
        read_ahead: u64,
    ) -> (Slices, impl Stream<Item = Result<RecordBatch>> + Unpin) {
        let costs = sizes
            .into_iter()
            .map(|bytes| Cost {
                bytes,
                most: MOST_AT_ONCE,
            })
            .collect();
        window_of(costs, at_once, most, read_ahead)
    }

    fn window_of(
        sizes: Vec<Cost>,
        at_once: usize,
        most: usize,
        read_ahead: u64,
    ) -> (Slices, impl Stream<Item = Result<RecordBatch>> + Unpin) {
        let started = Arc::new(Mutex::new(Vec::new()));
        let (senders, receivers): (Vec<_>, Vec<_>) =
            sizes.iter().map(|_| oneshot::channel::<()>()).unzip();
        let mut receivers: Vec<_> = receivers.into_iter().map(Some).collect();
        let opened = started.clone();
        let open = move |i: usize| {
            opened.lock().unwrap().push(i);
            let done = receivers[i].take().unwrap();
            stream::once(done)
                .map(|_| {
                    Ok(RecordBatch::new_empty(Arc::new(
                        arrow_schema::Schema::empty(),
                    )))
                })
                .boxed()
        };
        let slices = Slices {
            started,
            finish: senders.into_iter().map(Some).collect(),
        };
        (
            slices,
            Window::new(sizes, open, at_once, most, read_ahead, Arc::default()),
        )
    }

    fn poll(stream: &mut (impl Stream<Item = Result<RecordBatch>> + Unpin)) -> usize {
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        let mut batches = 0;
        while let Poll::Ready(Some(b)) = stream.poll_next_unpin(&mut cx) {
            b.unwrap();
            batches += 1;
        }
        batches
    }

    impl Slices {
        fn started(&self) -> Vec<usize> {
            self.started.lock().unwrap().clone()
        }
        fn end(&mut self, i: usize) {
            self.finish[i].take().unwrap().send(()).unwrap();
        }
    }

    #[test]
    fn small_slices_start_together_within_the_read_ahead() {
        let (slices, mut w) = window(vec![100; 20], 2, MOST_AT_ONCE, 1_000);
        poll(&mut w);
        assert_eq!(slices.started(), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn without_read_ahead_only_the_floor_runs_and_a_finished_slice_makes_room() {
        let (mut slices, mut w) = window(vec![100; 5], 2, MOST_AT_ONCE, 0);
        poll(&mut w);
        assert_eq!(slices.started(), [0, 1]);
        slices.end(1);
        assert_eq!(poll(&mut w), 1);
        assert_eq!(slices.started(), [0, 1, 2]);
        for i in [0, 2, 3, 4] {
            slices.end(i);
            poll(&mut w);
        }
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        assert!(matches!(w.poll_next_unpin(&mut cx), Poll::Ready(None)));
    }

    #[test]
    fn big_or_unsized_slices_wait_for_the_floor_and_the_cap_holds() {
        let (slices, mut w) = window(vec![100, 100, 650, 100, 100], 2, MOST_AT_ONCE, 1_000);
        poll(&mut w);
        assert_eq!(slices.started(), [0, 1, 2, 3]); // 950 bytes: the fifth would pass 1000
        let (slices, mut w) = window(vec![100, u64::MAX, 100], 1, MOST_AT_ONCE, 1_000);
        poll(&mut w);
        assert_eq!(slices.started(), [0]);
        let (slices, mut w) = window(vec![1; 100], 1, MOST_AT_ONCE, 1_000);
        poll(&mut w);
        assert_eq!(slices.started().len(), MOST_AT_ONCE);
        // A store that sends 8 requests at once: no more slices than that start early.
        let (slices, mut w) = window(vec![1; 100], 2, 8, 1_000);
        poll(&mut w);
        assert_eq!(slices.started().len(), 8);
    }

    /// Slices the statistics expect to match few rows run up to the higher cap; ordinary
    /// ones keep the lower one, and the store's own limit holds for both.
    #[test]
    fn slices_expected_to_match_few_rows_may_run_more_at_once() {
        let selective = Cost {
            bytes: 1,
            most: MOST_AT_ONCE_SELECTIVE,
        };
        let (slices, mut w) = window_of(vec![selective; 200], 2, usize::MAX, 1_000);
        poll(&mut w);
        assert_eq!(slices.started().len(), MOST_AT_ONCE_SELECTIVE);
        let plain = Cost {
            bytes: 1,
            most: MOST_AT_ONCE,
        };
        let mut costs = vec![plain; 100];
        costs.extend(vec![selective; 100]);
        let (slices, mut w) = window_of(costs, 2, usize::MAX, 1_000);
        poll(&mut w);
        assert_eq!(
            slices.started().len(),
            MOST_AT_ONCE,
            "in plan order: a plain one waits"
        );
        let (slices, mut w) = window_of(vec![selective; 200], 2, 8, 1_000);
        poll(&mut w);
        assert_eq!(slices.started().len(), 8);
    }

    #[test]
    fn a_slice_counts_its_fetched_bytes_and_expected_rows_only_when_both_are_known() {
        use crate::file_group::{BaseFile, FileSlice, LogFile};
        let id = "4a3f2b1c-0000-4000-8000-000000000001-0";
        let slice = |logs: bool| FileSlice {
            partition: "p".into(),
            file_id: id.into(),
            base_instant: "20240101000000000".into(),
            base_file: BaseFile::parse(&format!("{id}_1-0-1_20240101000000000.parquet"), 540_000),
            log_files: if logs {
                LogFile::parse(&format!(".{id}_20240101000000000.log.1_1-0-1"), 1_000)
                    .into_iter()
                    .collect()
            } else {
                Vec::new()
            },
        };
        let cost = |logs, query, share, footer| planned_cost(&slice(logs), query, share, footer);
        let snapshot = QueryType::Snapshot;
        let plain = Cost {
            bytes: 540_000,
            most: MOST_AT_ONCE,
        };
        assert_eq!(
            cost(false, snapshot, None, Some(430_000)),
            plain,
            "no estimate"
        );
        assert_eq!(
            cost(false, snapshot, Some(0.001), None),
            plain,
            "the bloom filter may be fetched"
        );
        assert_eq!(
            cost(false, snapshot, Some(1.0), Some(430_000)),
            plain,
            "never more than its size"
        );
        // 110,000 fetched + 32 KiB of footer windows, and 0.1 % of eight times that decoded.
        let fetched = 110_000 + HINTED_FOOTER_READS;
        assert_eq!(
            cost(false, snapshot, Some(0.001), Some(430_000)),
            Cost {
                bytes: (fetched as f64 * 1.008) as u64,
                most: MOST_AT_ONCE_SELECTIVE
            }
        );
        assert_eq!(
            cost(true, snapshot, Some(0.001), Some(430_000)).bytes,
            u64::MAX,
            "a merge"
        );
        // A footer without a bloom filter: the file is read whole, and few rows still make
        // the slice selective.
        assert_eq!(
            cost(false, snapshot, Some(0.001), Some(3_000)),
            Cost {
                bytes: (540_000_f64 * 1.008) as u64,
                most: MOST_AT_ONCE_SELECTIVE
            }
        );
        assert_eq!(
            cost(false, snapshot, Some(0.5), Some(3_000)),
            plain,
            "many rows"
        );
        let read_optimized = cost(true, QueryType::ReadOptimized, Some(0.001), Some(430_000));
        assert_eq!(
            read_optimized.most, MOST_AT_ONCE_SELECTIVE,
            "logs are not read"
        );
    }
}
