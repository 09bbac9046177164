//! The one I/O seam of the engine. The core (timeline, file groups, log files, HFiles, the
//! metadata table, readers and writers) never touches a file system or network: it asks a
//! [`Storage`] for bytes by path relative to the table's base path, and is handed them.
//! The verbs are few (ranged `read` of several ranges at once, `head`, `list`, conditional
//! `put`, `delete`); what a host can do is one [`Capabilities`] value. Format readers read
//! through a [`RangedFile`] (held tail, coalescing, short-read checks), and every read says
//! its [`Purpose`], so the counters tell where requests and bytes went.
//!
//! Layout — the seam here, everything else in a folder by the role it plays:
//! - [`backends`]: one implementation per kind of host — [`memory::MemoryStorage`] (tests,
//!   bytes handed in from JS), `local::LocalStorage` (native files), [`http::HttpStorage`]
//!   (plain HTTP(S), presigned URLs, and in wasm S3 with its own SigV4 signer; over `fetch`
//!   in wasm or reqwest natively) and, natively, `object_store::ObjectStoreStorage` (S3 via
//!   object_store);
//! - [`layers`]: wrappers that add one concern to any backend. Every store is wrapped in
//!   [`Instrumented`], which counts requests, bytes and dependent round trips, so any read
//!   can report what it cost, and then in [`cache::Cached`], which keeps immutable objects
//!   for the session so repeated reads cost nothing; also [`Prefixed`] (a sub-directory as a
//!   root, e.g. the metadata table), the metadata-table file cache and prefetch (here, not
//!   under `metadata`: the meta client stacks them, and `metadata` builds on the meta
//!   client), and test and benchmark wrappers (latency, crash injection);
//! - [`listing`]: answers `list` where a host has no list API (S3 XML pages, JSON
//!   directory indexes, a manifest), parsed once for every backend;
//! - [`ranged`] and [`path`]: how the core reads through the seam (held tails, coalescing)
//!   and which paths from table content it may follow.
//!
//! The old flat paths (`storage::memory`, `storage::cache`, …) stay as re-exports: callers
//! name what they use, not where it sits.

pub mod backends;
pub mod layers;
pub mod listing;
pub mod path;
pub mod ranged;

#[cfg(all(target_arch = "wasm32", feature = "http"))]
pub use backends::fetch;
#[cfg(feature = "http")]
pub use backends::http;
#[cfg(all(not(target_arch = "wasm32"), feature = "local"))]
pub use backends::local;
pub use backends::memory;
#[cfg(all(not(target_arch = "wasm32"), feature = "http"))]
pub use backends::object_store;
#[cfg(feature = "http")]
pub use backends::s3;
#[cfg(not(target_arch = "wasm32"))]
pub use layers::latency;
pub use layers::{cache, crash, js_failure, mdt_cache, prefixed, timer};

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use serde::Serialize;

use crate::error::{HudiError, Result};

pub use layers::{Instrumented, IoSnapshot, IoStats, Prefixed, PurposeIo};
pub use ranged::RangedFile;

/// What a listing or a `head` knows about one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectMeta {
    /// Path relative to the storage root, `/`-separated, no leading `/`.
    pub path: String,
    pub size: u64,
    /// Modification time in epoch milliseconds, when the store reports one.
    pub last_modified_ms: Option<i64>,
    pub etag: Option<String>,
    /// A "directory" (common prefix) in a non-recursive listing.
    pub is_dir: bool,
}

impl ObjectMeta {
    /// What a put of a folder marker (`dir/`, no bytes) answers where folders are not objects.
    pub fn folder(path: &str) -> ObjectMeta {
        ObjectMeta {
            path: path.to_string(),
            size: 0,
            last_modified_ms: None,
            etag: None,
            is_dir: true,
        }
    }

    /// Whether a put of `path` with `data` is a folder marker, as S3 clients (Hadoop's S3A)
    /// write one for a directory.
    pub fn is_folder_marker(path: &str, data: &[u8]) -> bool {
        path.ends_with('/') && data.is_empty()
    }

    pub fn file(path: impl Into<String>, size: u64) -> Self {
        ObjectMeta {
            path: path.into(),
            size,
            last_modified_ms: None,
            etag: None,
            is_dir: false,
        }
    }

    /// Last path segment.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// How a `put` treats an existing object. Conditional modes are what make commits atomic on
/// object stores (`If-None-Match: *` / `If-Match: <etag>`); a failed condition is
/// `HudiError::Conflict`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutMode {
    Overwrite,
    Create,
    UpdateIfMatch(String),
}

/// Which bytes of an object a read asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ByteRange {
    /// `start..end`; past the end is clamped to the object's end.
    Bounded(Range<u64>),
    /// The last `n` bytes (fewer when the object is smaller).
    Suffix(u64),
    /// The whole object.
    Whole,
}

/// Largest object read whole (instants, properties, commit metadata, history files): every
/// store counts a body against [`ByteRange::body_limit`] while reading it.
pub const MAX_WHOLE_OBJECT_BYTES: u64 = 256 * 1024 * 1024;

/// A response body past [`MAX_WHOLE_OBJECT_BYTES`] where the store has no object to name
/// (object_store's own requests: listings, error documents).
#[cfg(all(not(target_arch = "wasm32"), feature = "http"))]
fn response_over_limit() -> std::io::Error {
    std::io::Error::other(format!(
        "a response body over {} MiB",
        MAX_WHOLE_OBJECT_BYTES >> 20
    ))
}

impl ByteRange {
    /// Most body bytes a store may hand back for this range: those asked for, or
    /// [`MAX_WHOLE_OBJECT_BYTES`] for a whole object.
    pub fn body_limit(&self) -> u64 {
        match self {
            ByteRange::Bounded(r) => r.end.saturating_sub(r.start),
            ByteRange::Suffix(n) => *n,
            ByteRange::Whole => MAX_WHOLE_OBJECT_BYTES,
        }
    }

    /// The error for an answer from `object` past [`ByteRange::body_limit`]: more than a
    /// range asked for is a broken store (`IO`); an object too big to read whole,
    /// `UNSUPPORTED`.
    pub fn body_over(&self, object: &str) -> HudiError {
        match self {
            ByteRange::Whole => HudiError::unsupported_in(
                format!(
                    "reading whole an object over {} MiB",
                    MAX_WHOLE_OBJECT_BYTES >> 20
                ),
                object,
            ),
            _ => HudiError::io(
                object,
                format!(
                    "an answer longer than the {} bytes asked for",
                    self.body_limit()
                ),
            ),
        }
    }

    /// The same bytes as a bounded range of an object of `size` bytes.
    pub fn within(&self, size: u64) -> Range<u64> {
        match self {
            ByteRange::Bounded(r) => r.start.min(size)..r.end.min(size),
            ByteRange::Suffix(n) => size.saturating_sub(*n)..size,
            ByteRange::Whole => 0..size,
        }
    }
}

/// The answer to [`Storage::read`].
#[derive(Debug, Clone, Default)]
pub struct Fetched {
    /// One per range asked, in order.
    pub parts: Vec<Bytes>,
    /// The object's total size, when an answer told it (suffix and whole reads always do).
    pub size: Option<u64>,
    /// What the store worked around to answer (e.g. a server that ignores `Range`); the
    /// counters keep them for the io report.
    pub warnings: Vec<String>,
}

impl Fetched {
    /// The answer for one range.
    pub fn one(bytes: Bytes, size: Option<u64>) -> Self {
        Fetched {
            parts: vec![bytes],
            size,
            warnings: Vec::new(),
        }
    }
}

/// What a host can do, reported as one value: the core branches on it, never on the kind
/// of store.
#[derive(Debug, Clone)]
pub struct Capabilities {
    /// A [`ByteRange::Suffix`] costs one request; without, it costs a `head` first.
    pub suffix_ranges: bool,
    /// `list` sees names starting with a dot. A JSON directory index hides them, and Hudi
    /// log files are such names, so Merge-On-Read partitions must not be listed there.
    pub lists_dot_files: bool,
    /// A listing of the whole tree already in memory (a loaded manifest): listings are
    /// answered from it without a request.
    pub listing: Option<Arc<listing::Manifest>>,
    /// Writes can land and last: false for plain HTTP(S), a `.zip` and files handed in from
    /// JS, so a write is refused before its first request.
    pub writable: bool,
    /// [`Storage::list_after`] answers in one listing (S3 `start-after`, local files).
    pub lists_after: bool,
    /// Requests the store sends at once, the rest waiting their turn; `None`: no limit here.
    /// A read starts no more file slices early than can be fetched at once.
    pub requests_at_once: Option<usize>,
    /// A listing may not show yet what was written a moment ago (remote object stores, some
    /// of which list lazily): a writer confirms a failed write with a second listing before
    /// rolling it back.
    pub listing_lags: bool,
}

impl Capabilities {
    /// One request per verb, every name listed, nothing held; no [`Storage::list_after`].
    pub fn full() -> Self {
        Capabilities {
            suffix_ranges: true,
            lists_dot_files: true,
            listing: None,
            writable: true,
            lists_after: false,
            requests_at_once: None,
            listing_lags: false,
        }
    }
}

/// Why bytes are read: requests and bytes are counted per purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// Instant files read for their plan (`.requested`).
    Timeline,
    Properties,
    CommitMetadata,
    /// Directory listings (and the manifest that answers them).
    Listing,
    /// An HFile's trailer and index blocks (the metadata table).
    MdtIndexBlock,
    /// An HFile's data blocks and the metadata table's log blocks.
    MdtDataBlock,
    /// A Parquet footer.
    Footer,
    ColumnChunk,
    LogBlock,
    /// The archived timeline (v6 archive, LSM history).
    History,
    Other,
}

impl Purpose {
    /// The name reports use (as serialized).
    pub fn as_str(&self) -> &'static str {
        match self {
            Purpose::Timeline => "timeline",
            Purpose::Properties => "properties",
            Purpose::CommitMetadata => "commit_metadata",
            Purpose::Listing => "listing",
            Purpose::MdtIndexBlock => "mdt_index_block",
            Purpose::MdtDataBlock => "mdt_data_block",
            Purpose::Footer => "footer",
            Purpose::ColumnChunk => "column_chunk",
            Purpose::LogBlock => "log_block",
            Purpose::History => "history",
            Purpose::Other => "other",
        }
    }

    const ALL: [Purpose; 11] = [
        Purpose::Timeline,
        Purpose::Properties,
        Purpose::CommitMetadata,
        Purpose::Listing,
        Purpose::MdtIndexBlock,
        Purpose::MdtDataBlock,
        Purpose::Footer,
        Purpose::ColumnChunk,
        Purpose::LogBlock,
        Purpose::History,
        Purpose::Other,
    ];
}

/// The verbs a host answers. Paths are relative to the storage root.
#[async_trait]
pub trait Storage: Send + Sync + fmt::Debug {
    /// Where the root is, for messages (never carries credentials).
    fn location(&self) -> String;

    fn capabilities(&self) -> Capabilities;

    /// Several ranges of `path` at once (stores send them concurrently). `purpose` is for
    /// the counters.
    async fn read(&self, path: &str, ranges: &[ByteRange], purpose: Purpose) -> Result<Fetched>;

    async fn head(&self, path: &str) -> Result<ObjectMeta>;

    /// Objects under the directory `prefix` ("" = root). Non-recursive listings also return
    /// sub-directories (`is_dir`).
    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>>;

    /// Objects under the root, recursively, whose paths sort after `start_after` (byte
    /// order, as S3's `start-after`), e.g. everything past the `.hoodie/` tree. One request:
    /// a paged store answers its first page, [`ListedAfter::complete`] false when more
    /// follow. Stores that answer say so in [`Capabilities::lists_after`]; the others
    /// answer `None`.
    async fn list_after(&self, _start_after: &str) -> Result<Option<ListedAfter>> {
        Ok(None)
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta>;

    async fn delete(&self, path: &str) -> Result<()>;

    /// Removes the directory `dir` if no file is left under it (only empty directories
    /// beneath), as Java removes an instant's marker directory. Stores without directories —
    /// object stores, where a directory is its objects' common prefix — have nothing to do
    /// and send no request.
    async fn delete_empty_dir(&self, _dir: &str) -> Result<()> {
        Ok(())
    }

    /// The whole object with its version (`etag`), for a conditional update that follows
    /// (the table lock). Stores that hand both back in one answer override this; the
    /// default costs a `head` then a read — the bytes are then as new as the ETag or newer,
    /// so an update conditioned on that ETag can only be refused, never wrongly accepted.
    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        let meta = self.head(path).await?;
        let bytes = one(
            self.read(path, &[ByteRange::Whole], Purpose::Other).await?,
            path,
        )?;
        Ok((bytes, meta))
    }
}

/// One-range conveniences over [`Storage::read`].
#[async_trait]
pub trait StorageExt: Storage {
    /// The whole object.
    async fn get(&self, path: &str, purpose: Purpose) -> Result<Bytes> {
        one(self.read(path, &[ByteRange::Whole], purpose).await?, path)
    }

    /// Bytes `range` of `path`, clamped to the object's end.
    async fn get_range(&self, path: &str, range: Range<u64>, purpose: Purpose) -> Result<Bytes> {
        one(
            self.read(path, &[ByteRange::Bounded(range)], purpose)
                .await?,
            path,
        )
    }
}

impl<S: Storage + ?Sized> StorageExt for S {}

fn one(fetched: Fetched, path: &str) -> Result<Bytes> {
    fetched
        .parts
        .into_iter()
        .next()
        .ok_or_else(|| HudiError::io(path, "a read answered no bytes"))
}

/// Answers each range with `one_range` (concurrently), for stores whose requests carry one
/// range each.
#[cfg(feature = "http")]
pub(crate) async fn read_each<F, Fut>(ranges: &[ByteRange], one_range: F) -> Result<Fetched>
where
    F: Fn(ByteRange) -> Fut,
    Fut: std::future::Future<Output = Result<Fetched>>,
{
    let answers = futures::future::try_join_all(ranges.iter().cloned().map(one_range)).await?;
    let mut all = Fetched::default();
    for a in answers {
        all.parts.extend(a.parts);
        all.size = all.size.or(a.size);
        all.warnings.extend(a.warnings);
    }
    Ok(all)
}

/// Whether `ranges` hold a suffix that `store` cannot answer in one request.
fn needs_size(store: &dyn Storage, ranges: &[ByteRange]) -> bool {
    ranges.iter().any(|r| matches!(r, ByteRange::Suffix(_))) && !store.capabilities().suffix_ranges
}

/// Reads suffixes from a store without suffix ranges as bounded ranges once `head` gave the
/// size; both requests go through `via`, the wrapper that counts or delays them.
async fn read_with_size(
    via: &dyn Storage,
    path: &str,
    ranges: &[ByteRange],
    purpose: Purpose,
    head: impl std::future::Future<Output = Result<ObjectMeta>>,
) -> Result<Fetched> {
    let size = head.await?.size;
    let bounded: Vec<ByteRange> = ranges
        .iter()
        .map(|r| ByteRange::Bounded(r.within(size)))
        .collect();
    let mut fetched = via.read(path, &bounded, purpose).await?;
    fetched.size = Some(size);
    Ok(fetched)
}

/// Lower-case hex MD5 of `data`: S3's ETag of a single-part upload, and the local store's.
pub fn md5_hex(data: &[u8]) -> String {
    use md5::{Digest, Md5};
    Md5::digest(data)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A conditional put (`Create`, `UpdateIfMatch`) by `attempt`, judged when it is refused
/// (412 / "already exists"), since the store's client retries and a store may refuse wrongly:
/// - the object holds exactly `data`: an earlier attempt of this same put landed, and the put
///   succeeded (its ETag, when it is the MD5 of our bytes, saves the read). Empty payloads are
///   never claimed this way: two writers' empty files (`.requested` instants) cannot be told
///   apart, and a false success would hand one instant time to two writers, where a false
///   conflict only costs a new one;
/// - the precondition holds after all (nothing there for a create, the expected ETag for an
///   update): the refusal was spurious, and the put is attempted once more;
/// - otherwise the refusal stands.
#[cfg(feature = "http")]
pub(crate) async fn conditional_put<S, F, Fut>(
    store: &S,
    path: &str,
    data: &Bytes,
    mode: &PutMode,
    attempt: F,
) -> Result<ObjectMeta>
where
    S: Storage + ?Sized,
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<ObjectMeta>>,
{
    let mut retried = false;
    loop {
        let refusal = match attempt().await {
            Ok(meta) => return Ok(meta),
            Err(e @ HudiError::Conflict { .. }) => e,
            Err(e) => return Err(e),
        };
        let held = match store.head(path).await {
            Ok(meta) => Some(meta),
            Err(HudiError::NotFound { .. }) => None,
            Err(_) => return Err(refusal),
        };
        let unquoted = |e: &str| e.trim_matches('"').to_string();
        let precondition_holds = match (mode, &held) {
            (PutMode::Create, None) => true,
            (PutMode::UpdateIfMatch(expected), Some(meta)) => {
                meta.etag.as_deref().map(unquoted) == Some(unquoted(expected))
            }
            _ => false,
        };
        if precondition_holds {
            if retried {
                return Err(refusal);
            }
            retried = true;
            continue;
        }
        return match held {
            Some(meta) if is_own_object(store, path, data, &meta).await => Ok(meta),
            _ => Err(refusal),
        };
    }
}

/// Whether the object `meta` describes holds exactly `data` (never claimed for empty data).
#[cfg(feature = "http")]
async fn is_own_object<S: Storage + ?Sized>(
    store: &S,
    path: &str,
    data: &Bytes,
    meta: &ObjectMeta,
) -> bool {
    if data.is_empty() || meta.size != data.len() as u64 {
        return false;
    }
    let etag = meta.etag.as_deref().map(|e| e.trim_matches('"'));
    if etag == Some(md5_hex(data).as_str()) {
        return true;
    }
    matches!(
        store.read(path, &[ByteRange::Whole], Purpose::Other).await,
        Ok(f) if f.parts.first() == Some(data)
    )
}

/// Joins a directory and a name into a storage path.
/// What [`Storage::list_after`] answers.
#[derive(Debug, Clone, Default)]
pub struct ListedAfter {
    pub objects: Vec<ObjectMeta>,
    /// Nothing sorts after the last of `objects` beyond them; false when a paged store
    /// stopped at its first page.
    pub complete: bool,
}

impl ListedAfter {
    /// The files of `objects` that sort after `start_after`; `complete` as the store said.
    pub(crate) fn new(objects: Vec<ObjectMeta>, start_after: &str, complete: bool) -> Self {
        let objects = objects
            .into_iter()
            .filter(|m| !m.is_dir && m.path.as_str() > start_after)
            .collect();
        ListedAfter { objects, complete }
    }
}

pub fn join(dir: &str, name: &str) -> String {
    let (dir, name) = (dir.trim_end_matches('/'), name.trim_start_matches('/'));
    if dir.is_empty() {
        return name.to_string();
    }
    // Not `format!`: planning joins a path per data file, and formatting costs more in wasm.
    let mut path = String::with_capacity(dir.len() + 1 + name.len());
    path.push_str(dir);
    path.push('/');
    path.push_str(name);
    path
}

#[cfg(test)]
mod tests {
    use super::Purpose;

    #[cfg(feature = "http")]
    #[test]
    fn refused_conditional_puts_are_judged() {
        use super::*;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let s = memory::MemoryStorage::new();
        s.insert("t/x.commit", &b"ours"[..], None);
        s.insert("t/x.requested", &b""[..], None);
        let conflict = || HudiError::Conflict {
            path: "x".into(),
            detail: "HTTP 412".into(),
        };
        // Answers `answers` in turn (then success) and counts the attempts.
        let put =
            |path: &'static str, data: &'static [u8], mode: PutMode, answers: Vec<HudiError>| {
                let s = &s;
                async move {
                    let tries = AtomicUsize::new(0);
                    let answers = std::sync::Mutex::new(answers.into_iter());
                    let attempt = || {
                        tries.fetch_add(1, Ordering::SeqCst);
                        let next = answers.lock().unwrap().next();
                        async move {
                            match next {
                                Some(e) => Err(e),
                                None => Ok(ObjectMeta::file(path, data.len() as u64)),
                            }
                        }
                    };
                    let data = Bytes::from_static(data);
                    let r = conditional_put(s, path, &data, &mode, attempt).await;
                    (r.map_err(|e| e.code()), tries.load(Ordering::SeqCst))
                }
            };
        futures::executor::block_on(async {
            // An earlier attempt of ours landed.
            let (r, tries) = put("t/x.commit", b"ours", PutMode::Create, vec![conflict()]).await;
            assert_eq!((r.map(|m| m.size), tries), (Ok(4), 1));
            // Someone else's object, or an empty one: the refusal stands.
            for (path, data) in [
                ("t/x.commit", &b"them"[..]),
                ("t/x.commit", &b"ours!"[..]),
                ("t/x.requested", &b""[..]),
            ] {
                let (r, tries) = put(path, data, PutMode::Create, vec![conflict()]).await;
                assert_eq!((r.err(), tries), (Some("CONFLICT"), 1), "{path}");
            }
            // Nothing there, yet refused: tried once more.
            let (r, tries) = put("t/absent", b"", PutMode::Create, vec![conflict()]).await;
            assert_eq!((r.is_ok(), tries), (true, 2));
            let twice = vec![conflict(), conflict()];
            let (r, tries) = put("t/absent", b"", PutMode::Create, twice).await;
            assert_eq!((r.err(), tries), (Some("CONFLICT"), 2));
            // The expected ETag is there: the update is tried once more.
            let etag = s.head("t/x.commit").await.unwrap().etag.unwrap();
            let update = PutMode::UpdateIfMatch(etag);
            let (r, tries) = put("t/x.commit", b"next", update, vec![conflict()]).await;
            assert_eq!((r.is_ok(), tries), (true, 2));
            let stale = PutMode::UpdateIfMatch("\"stale\"".into());
            let (r, tries) = put("t/x.commit", b"next", stale, vec![conflict()]).await;
            assert_eq!((r.err(), tries), (Some("CONFLICT"), 1));
            // Other errors pass through untouched.
            let (r, tries) = put(
                "t/x.commit",
                b"ours",
                PutMode::Create,
                vec![HudiError::io("x", "boom")],
            )
            .await;
            assert_eq!((r.err(), tries), (Some("IO"), 1));
        });
    }

    #[test]
    fn purpose_names_are_their_serialized_form() {
        for p in Purpose::ALL {
            assert_eq!(serde_json::to_value(p).unwrap(), p.as_str());
        }
    }
}
