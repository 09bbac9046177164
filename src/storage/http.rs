//! Tables over plain HTTP(S) — a web server, a CDN, an S3-compatible endpoint or presigned
//! URLs — with one set of semantics whatever carries the requests: a [`Transport`] is
//! `fetch` in wasm (`super::fetch`) and object_store's reqwest client natively
//! (`super::object_store`). What lives here, once:
//!
//! - ranged `GET` (`Range: bytes=a-b`), one-request tails (`Range: bytes=-n`, total size from
//!   `Content-Range`), `HEAD`, conditional `PUT` (`If-None-Match: *` / `If-Match: etag`; 412
//!   is [`HudiError::Conflict`]) and `DELETE`;
//! - retries with exponential backoff on 408/429/5xx and network errors (bounded; honours a
//!   short `Retry-After`), and a limit on requests in flight;
//! - servers that ignore `Range` (answer 200 with the whole body): bodies up to
//!   [`RANGE_IGNORED_LIMIT`] are sliced locally and noted in the answer's warnings; larger
//!   ones are an `Unsupported` error naming the object, never a silent multi-GB download;
//! - errors name the object by its location without query strings or credentials (403 →
//!   `AccessDenied`, 404 → `NotFound`);
//! - listing (see [`super::listing`]): S3 `ListObjectsV2`, JSON autoindex, or the manifest;
//! - presigned URLs: with a [`Presigner`], every request asks it for the URL of the object
//!   (`GET`, `HEAD`, `PUT`, `DELETE`, and `LIST` for a listing page), so secrets stay on
//!   whichever server signs.

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::channel::oneshot;

use super::listing::{self, ListingMode, Manifest, MANIFEST_PATH};
use super::{read_each, ByteRange, Capabilities, Fetched, ObjectMeta, Purpose, PutMode, Storage};
use crate::error::{HudiError, Result};

/// Largest body accepted from a server that ignored `Range` (sliced locally).
pub const RANGE_IGNORED_LIMIT: u64 = 32 * 1024 * 1024;
pub const DEFAULT_CONCURRENCY: usize = 8;
pub const DEFAULT_RETRIES: u32 = 3;
const BACKOFF_BASE: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct Request {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Bytes>,
    /// A ranged GET: a transport may skip reading a 200 body larger than this.
    pub skip_full_body_over: Option<u64>,
}

impl Request {
    pub fn new(method: &'static str, url: impl Into<String>) -> Self {
        Request {
            method,
            url: url.into(),
            headers: Vec::new(),
            body: None,
            skip_full_body_over: None,
        }
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    /// Whether a transport should leave this answer's body unread: a whole-object 200 larger
    /// than [`Request::skip_full_body_over`] (headers keyed in lower case).
    pub fn skips_body(&self, status: u16, headers: &HashMap<String, String>) -> bool {
        status == 200
            && self.skip_full_body_over.is_some_and(|limit| {
                headers
                    .get("content-length")
                    .and_then(|l| l.parse::<u64>().ok())
                    .is_some_and(|l| l > limit)
            })
    }
}

#[derive(Debug, Clone, Default)]
pub struct Response {
    pub status: u16,
    /// Lower-case names.
    pub headers: HashMap<String, String>,
    pub body: Bytes,
    /// The transport did not read the body (see [`Request::skip_full_body_over`]).
    pub body_skipped: bool,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// A request that got no HTTP answer (connection refused or reset, body cut short, aborted).
#[derive(Debug, Clone)]
pub struct TransportError {
    pub detail: String,
    pub aborted: bool,
}

/// Carries one HTTP request. Implementations read the whole body, and stop their request
/// when the returned future is dropped.
#[async_trait]
pub trait Transport: Send + Sync + std::fmt::Debug {
    async fn send(&self, request: Request) -> std::result::Result<Response, TransportError>;
    async fn sleep(&self, duration: Duration);
}

/// Asks a signer (e.g. a JS callback talking to a server that holds the secrets) for the URL
/// of one operation. `method` is `GET`, `HEAD`, `PUT`, `DELETE` or `LIST`; `key` is the
/// object key (for `LIST`, the key prefix ending in `/`).
#[async_trait]
pub trait Presigner: Send + Sync + std::fmt::Debug {
    async fn presign(&self, method: &str, key: &str, list: Option<&ListPage>) -> Result<String>;
}

/// A listing page asked of a presigner: the delimiter and continuation token go into the
/// signed URL, so they are passed in rather than appended.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPage {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
}

// ---------------------------------------------------------------------------------------
// Concurrency limit and retries (shared with the wasm S3 connector)

/// A counting semaphore that works on any executor (wasm has no tokio).
#[derive(Debug)]
pub struct Semaphore {
    state: Mutex<(usize, VecDeque<oneshot::Sender<()>>)>,
}

pub struct Permit<'a>(&'a Semaphore);

impl Semaphore {
    pub fn new(permits: usize) -> Self {
        Semaphore {
            state: Mutex::new((permits.max(1), VecDeque::new())),
        }
    }

    pub async fn acquire(&self) -> Permit<'_> {
        let rx = {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if s.0 > 0 {
                s.0 -= 1;
                return Permit(self);
            }
            let (tx, rx) = oneshot::channel();
            s.1.push_back(tx);
            rx
        };
        let mut waiting = Waiting {
            sem: self,
            rx: Some(rx),
        };
        if let Some(rx) = waiting.rx.as_mut() {
            // The sender is only dropped after handing us the permit, or never.
            let _ = rx.await;
        }
        waiting.rx = None;
        Permit(self)
    }
}

/// A waiter dropped (its operation cancelled) right after being handed a permit passes it on.
struct Waiting<'a> {
    sem: &'a Semaphore,
    rx: Option<oneshot::Receiver<()>>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(mut rx) = self.rx.take() {
            if let Ok(Some(())) = rx.try_recv() {
                drop(Permit(self.sem));
            }
        }
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(waiter) = s.1.pop_front() {
            if waiter.send(()).is_ok() {
                return; // the permit moves to the waiter
            }
        }
        s.0 += 1;
    }
}

/// A transport with a limit on requests in flight and bounded retries.
#[derive(Debug, Clone)]
pub struct Client {
    transport: Arc<dyn Transport>,
    limit: Arc<Semaphore>,
    retries: u32,
}

pub fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502 | 503 | 504)
}

/// Exponential backoff: 100 ms, 200 ms, 400 ms, ... capped at 5 s; a `Retry-After` of a few
/// seconds wins.
pub fn backoff(attempt: u32, retry_after: Option<&str>) -> Duration {
    if let Some(secs) = retry_after.and_then(|v| v.trim().parse::<u64>().ok()) {
        return Duration::from_secs(secs).min(BACKOFF_MAX);
    }
    (BACKOFF_BASE * 2u32.saturating_pow(attempt)).min(BACKOFF_MAX)
}

impl Client {
    pub fn new(transport: Arc<dyn Transport>, concurrency: usize, retries: u32) -> Self {
        Client {
            transport,
            limit: Arc::new(Semaphore::new(concurrency)),
            retries,
        }
    }

    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    /// Sends `request`, retrying 408/429/5xx answers and network errors. The last answer
    /// (whatever its status) or the last network error comes back.
    pub async fn send(&self, request: Request) -> std::result::Result<Response, TransportError> {
        let mut attempt = 0;
        loop {
            let outcome = {
                let _permit = self.limit.acquire().await;
                self.transport.send(request.clone()).await
            };
            let wait = match &outcome {
                Err(e) if e.aborted => return outcome,
                Err(_) => backoff(attempt, None),
                Ok(r) if retryable_status(r.status) => backoff(attempt, r.header("retry-after")),
                Ok(_) => return outcome,
            };
            if attempt >= self.retries {
                return outcome;
            }
            attempt += 1;
            self.transport.sleep(wait).await;
        }
    }
}

// ---------------------------------------------------------------------------------------
// The storage

/// Where objects are: under a base URL, or behind a presigner (`s3://bucket/prefix`).
#[derive(Debug, Clone)]
pub enum Target {
    /// `base` ends with `/`; `s3_root` is where `ListObjectsV2` goes for `listing: s3`
    /// (bucket URL, key prefix of the table).
    Url {
        base: url::Url,
        /// The base URL's query (a CDN or SAS token), appended to every request.
        query: Option<String>,
        s3_root: Option<(url::Url, String)>,
    },
    Presigned {
        bucket: String,
        root: String,
        presigner: Arc<dyn Presigner>,
    },
}

#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Sent with every request (e.g. `Authorization` for a private server).
    pub headers: Vec<(String, String)>,
    pub listing: ListingMode,
    pub concurrency: usize,
    pub retries: u32,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            headers: Vec::new(),
            listing: ListingMode::Auto,
            concurrency: DEFAULT_CONCURRENCY,
            retries: DEFAULT_RETRIES,
        }
    }
}

#[derive(Debug)]
pub struct HttpStorage {
    client: Client,
    target: Target,
    headers: Vec<(String, String)>,
    listing: Mutex<ListingMode>,
    /// `None` until looked for; `Some(None)` when the table has none.
    manifest: futures::lock::Mutex<Option<Option<Arc<Manifest>>>>,
    presigned: Mutex<HashMap<(String, String), String>>,
}

/// `https://user:pass@host/p?q#f` → `https://host/p` (for messages).
pub fn redact(url: &url::Url) -> String {
    let mut u = url.clone();
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    u.to_string().trim_end_matches('/').to_string()
}

fn encode_path(path: &str) -> String {
    path.split('/')
        .map(listing::uri_encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// The S3 error code of an error body (`<Code>NoSuchKey</Code>`); never its message, which
/// may echo the string to sign and the access key id.
fn s3_error_code(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body.get(..body.len().min(4096))?).ok()?;
    let start = text.find("<Code>")? + 6;
    let end = start + text[start..].find("</Code>")?;
    let code = &text[start..end];
    (code.len() < 64 && code.chars().all(|c| c.is_ascii_alphanumeric())).then(|| code.to_string())
}

/// Maps a non-success answer to the engine's error for `object`.
pub fn status_error(object: &str, r: &Response) -> HudiError {
    let code = s3_error_code(&r.body)
        .map(|c| format!(" ({c})"))
        .unwrap_or_default();
    let detail = format!("HTTP {}{code}", r.status);
    match r.status {
        404 | 410 => HudiError::NotFound {
            path: object.into(),
        },
        401 | 403 => HudiError::AccessDenied {
            path: object.into(),
            detail,
        },
        409 | 412 => HudiError::Conflict {
            path: object.into(),
            detail,
        },
        _ => HudiError::io(object, detail),
    }
}

fn transport_error(object: &str, e: TransportError) -> HudiError {
    if e.aborted {
        HudiError::Aborted(format!("request for {object}"))
    } else {
        HudiError::io(object, e.detail)
    }
}

/// `bytes a-b/total` → (a, b + 1, total).
pub fn parse_content_range(v: &str) -> Option<(u64, u64, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    let (span, total) = rest.split_once('/')?;
    let (a, b) = span.split_once('-')?;
    let a: u64 = a.trim().parse().ok()?;
    let b: u64 = b.trim().parse().ok()?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    Some((a, b.checked_add(1)?, total))
}

impl HttpStorage {
    pub fn new(transport: Arc<dyn Transport>, target: Target, options: HttpOptions) -> Self {
        HttpStorage {
            client: Client::new(transport, options.concurrency, options.retries),
            target,
            headers: options.headers,
            listing: Mutex::new(options.listing),
            manifest: futures::lock::Mutex::new(None),
            presigned: Mutex::new(HashMap::new()),
        }
    }

    /// A table under `base` (`http(s)://...`). For `listing: s3` the bucket is the first
    /// path segment when `path_style` (or the host is an IP address / localhost), else the
    /// host.
    pub fn for_url(
        transport: Arc<dyn Transport>,
        base: &str,
        path_style: Option<bool>,
        options: HttpOptions,
    ) -> Result<Self> {
        let mut base =
            url::Url::parse(base).map_err(|e| HudiError::invalid(format!("table URL: {e}")))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(HudiError::invalid(format!(
                "table URL scheme {:?} (http or https)",
                base.scheme()
            )));
        }
        if !base.path().ends_with('/') {
            let p = format!("{}/", base.path());
            base.set_path(&p);
        }
        let query = base.query().map(str::to_string).filter(|q| !q.is_empty());
        base.set_query(None);
        base.set_fragment(None);
        // `fetch` refuses URLs with credentials: send them as Basic auth instead.
        let mut options = options;
        if !base.username().is_empty() || base.password().is_some() {
            use base64::Engine;
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            let user_pass = format!(
                "{}:{}",
                decode(base.username()),
                decode(base.password().unwrap_or(""))
            );
            let token = base64::engine::general_purpose::STANDARD.encode(user_pass);
            options
                .headers
                .push(("Authorization".into(), format!("Basic {token}")));
            let _ = base.set_username("");
            let _ = base.set_password(None);
        }
        let s3_root = (options.listing == ListingMode::S3).then(|| {
            let host = base.host_str().unwrap_or("");
            let path_style = path_style.unwrap_or_else(|| {
                host == "localhost"
                    || host.parse::<std::net::IpAddr>().is_ok()
                    || host.starts_with('[')
            });
            let segments: Vec<&str> = base
                .path()
                .trim_matches('/')
                .split('/')
                .filter(|s| !s.is_empty())
                .collect();
            let mut bucket_url = base.clone();
            bucket_url.set_query(None);
            let (bucket_path, key) = if path_style && !segments.is_empty() {
                (format!("/{}", segments[0]), segments[1..].join("/"))
            } else {
                ("/".to_string(), segments.join("/"))
            };
            bucket_url.set_path(&bucket_path);
            (bucket_url, key)
        });
        Ok(HttpStorage::new(
            transport,
            Target::Url {
                base,
                query,
                s3_root,
            },
            options,
        ))
    }

    /// The object's name for messages: location + path, no query, no credentials.
    fn object(&self, path: &str) -> String {
        format!("{}/{}", self.location(), path.trim_start_matches('/'))
    }

    fn key(&self, path: &str) -> String {
        match &self.target {
            Target::Presigned { root, .. } => super::join(root, path),
            Target::Url { .. } => path.to_string(),
        }
    }

    async fn url(&self, method: &'static str, path: &str) -> Result<String> {
        match &self.target {
            Target::Url { base, query, .. } => {
                let mut u = format!("{base}{}", encode_path(path.trim_start_matches('/')));
                if path.ends_with('/') && !u.ends_with('/') {
                    u.push('/');
                }
                if let Some(q) = query {
                    u.push('?');
                    u.push_str(q);
                }
                Ok(u)
            }
            Target::Presigned { presigner, .. } => {
                let key = self.key(path);
                let cache_key = (method.to_string(), key.clone());
                if let Some(u) = self
                    .presigned
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&cache_key)
                {
                    return Ok(u.clone());
                }
                let u = presigner.presign(method, &key, None).await?;
                self.presigned
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(cache_key, u.clone());
                Ok(u)
            }
        }
    }

    /// One request for `path`; a presigned URL that was refused is asked for anew once
    /// (it may have expired).
    /// `GET` with `Range: bytes=<spec>`; a server that ignores the range answers 200 with the
    /// whole object, whose body is left unread above [`RANGE_IGNORED_LIMIT`].
    async fn get_ranged(&self, path: &str, spec: &str) -> Result<Response> {
        self.send("GET", path, |r| {
            let mut r = r.header("Range", format!("bytes={spec}"));
            r.skip_full_body_over = Some(RANGE_IGNORED_LIMIT);
            r
        })
        .await
    }

    async fn send(
        &self,
        method: &'static str,
        path: &str,
        build: impl Fn(Request) -> Request,
    ) -> Result<Response> {
        let r = self.send_once(method, path, &build).await?;
        let presigned = matches!(self.target, Target::Presigned { .. });
        if !presigned || !matches!(r.status, 401 | 403) {
            return Ok(r);
        }
        self.presigned
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&(method.to_string(), self.key(path)));
        self.send_once(method, path, &build).await
    }

    async fn send_once(
        &self,
        method: &'static str,
        path: &str,
        build: &impl Fn(Request) -> Request,
    ) -> Result<Response> {
        let url = self.url(method, path).await?;
        let mut req = build(Request::new(method, url));
        req.headers.extend(self.headers.iter().cloned());
        self.client
            .send(req)
            .await
            .map_err(|e| transport_error(&self.object(path), e))
    }

    /// A ranged `GET` answered with the whole object: `range` sliced from it, and a warning.
    fn range_ignored(&self, path: &str, r: Response, range: ByteRange) -> Result<Fetched> {
        if r.body_skipped || r.body.len() as u64 > RANGE_IGNORED_LIMIT {
            return Err(HudiError::unsupported_in(
                format!(
                    "a server that ignores Range requests, for an object over {} MiB",
                    RANGE_IGNORED_LIMIT >> 20
                ),
                self.object(path),
            ));
        }
        let len = r.body.len() as u64;
        let wanted = range.within(len);
        let mut fetched = Fetched::one(
            r.body.slice(wanted.start as usize..wanted.end as usize),
            Some(len),
        );
        fetched.warnings.push(format!(
            "the server ignored Range for {} (answered the whole object; sliced locally)",
            self.object(path)
        ));
        Ok(fetched)
    }

    // ---- reads (one range per request)

    async fn read_bounded(&self, path: &str, range: Range<u64>) -> Result<Fetched> {
        if range.start >= range.end {
            return Ok(Fetched::one(Bytes::new(), None));
        }
        let r = self
            .get_ranged(path, &format!("{}-{}", range.start, range.end - 1))
            .await?;
        match r.status {
            206 => {
                let start = r
                    .header("content-range")
                    .and_then(parse_content_range)
                    .map(|(a, _, _)| a)
                    .unwrap_or(range.start);
                if start != range.start {
                    return Err(HudiError::io(
                        self.object(path),
                        format!("asked for bytes from {}, got from {start}", range.start),
                    ));
                }
                let want = (range.end - range.start) as usize;
                let body = if r.body.len() > want {
                    r.body.slice(..want)
                } else {
                    r.body
                };
                Ok(Fetched::one(body, None))
            }
            200 => self.range_ignored(path, r, ByteRange::Bounded(range)),
            416 => Ok(Fetched::one(Bytes::new(), None)),
            _ => Err(status_error(&self.object(path), &r)),
        }
    }

    async fn read_whole(&self, path: &str) -> Result<Fetched> {
        let r = self.send("GET", path, |r| r).await?;
        match r.status {
            200 | 203 => {
                let len = r.body.len() as u64;
                Ok(Fetched::one(r.body, Some(len)))
            }
            _ => Err(status_error(&self.object(path), &r)),
        }
    }

    async fn read_suffix(&self, path: &str, n: u64) -> Result<Fetched> {
        if n == 0 {
            return Ok(Fetched::one(
                Bytes::new(),
                Some(self.head(path).await?.size),
            ));
        }
        let r = self.get_ranged(path, &format!("-{n}")).await?;
        match r.status {
            206 => {
                let total = r
                    .header("content-range")
                    .and_then(parse_content_range)
                    .and_then(|(_, _, t)| t)
                    .ok_or_else(|| {
                        HudiError::io(
                            self.object(path),
                            "a suffix range answer without the total size (Content-Range)",
                        )
                    })?;
                if r.body.len() as u64 > total.min(n) {
                    return Err(HudiError::io(
                        self.object(path),
                        format!(
                            "asked for the last {n} bytes of {total}, got {}",
                            r.body.len()
                        ),
                    ));
                }
                Ok(Fetched::one(r.body, Some(total)))
            }
            200 => self.range_ignored(path, r, ByteRange::Suffix(n)),
            // An empty object has no suffix to give.
            416 => Ok(Fetched::one(
                Bytes::new(),
                Some(self.head(path).await?.size),
            )),
            _ => Err(status_error(&self.object(path), &r)),
        }
    }

    // ---- listing

    async fn manifest(&self) -> Result<Option<Arc<Manifest>>> {
        let mut slot = self.manifest.lock().await;
        if let Some(m) = &*slot {
            return Ok(m.clone());
        }
        let r = self.send("GET", MANIFEST_PATH, |r| r).await?;
        let m = match r.status {
            200 => Some(Arc::new(Manifest::parse(
                &r.body,
                &self.object(MANIFEST_PATH),
            )?)),
            404 | 403 => None, // S3 answers 403 for a missing key without list permission
            _ => return Err(status_error(&self.object(MANIFEST_PATH), &r)),
        };
        *slot = Some(m.clone());
        Ok(m)
    }

    async fn list_autoindex(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        listing::autoindex_may_list(prefix)?;
        let dir = prefix.trim_matches('/');
        if dir.matches('/').count() > 32 {
            // A symlink loop on the server would otherwise recurse forever.
            return Err(HudiError::unsupported_in(
                "directory indexes nested over 32 levels",
                self.object(dir),
            ));
        }
        let url_path = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let r = self
            .send("GET", &url_path, |r| r.header("Accept", "application/json"))
            .await?;
        let mut out = match r.status {
            200 => listing::parse_autoindex(&r.body, dir)?,
            404 => return Ok(Vec::new()),
            _ => return Err(status_error(&self.object(&url_path), &r)),
        };
        if recursive {
            let dirs: Vec<String> = out
                .iter()
                .filter(|m| m.is_dir)
                .map(|m| m.path.clone())
                .collect();
            out.retain(|m| !m.is_dir);
            let nested = futures::future::try_join_all(
                dirs.iter().map(|d| Box::pin(self.list_autoindex(d, true))),
            )
            .await?;
            out.extend(nested.into_iter().flatten());
        }
        Ok(out)
    }

    async fn list_s3(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        let what = self.object(prefix);
        loop {
            let (url, root) = match &self.target {
                Target::Url {
                    s3_root: Some((bucket, root)),
                    query,
                    ..
                } => {
                    let mut q = listing::s3_list_query(root, prefix, recursive, token.as_deref());
                    if let Some(extra) = query {
                        q.push('&');
                        q.push_str(extra);
                    }
                    (format!("{bucket}?{q}"), root.clone())
                }
                Target::Url { .. } => {
                    return Err(HudiError::invalid("listing: s3 needs a bucket URL"));
                }
                Target::Presigned {
                    presigner, root, ..
                } => {
                    let page = ListPage {
                        delimiter: (!recursive).then(|| "/".to_string()),
                        continuation_token: token.clone(),
                    };
                    let key = listing::s3_dir_key(root, prefix);
                    (
                        presigner.presign("LIST", &key, Some(&page)).await?,
                        root.clone(),
                    )
                }
            };
            let mut req = Request::new("GET", url);
            req.headers.extend(self.headers.iter().cloned());
            let r = self
                .client
                .send(req)
                .await
                .map_err(|e| transport_error(&what, e))?;
            if r.status != 200 {
                return Err(status_error(&what, &r));
            }
            let page = listing::parse_s3_list(&r.body, &root, &what)?;
            out.extend(page.objects);
            match page.next_token {
                Some(t) => token = Some(t),
                None => return Ok(out),
            }
        }
    }

    fn listing_mode(&self) -> ListingMode {
        *self.listing.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait]
impl Storage for HttpStorage {
    fn location(&self) -> String {
        match &self.target {
            Target::Url { base, .. } => redact(base),
            Target::Presigned { bucket, root, .. } => format!("s3://{bucket}/{root}")
                .trim_end_matches('/')
                .to_string(),
        }
    }

    fn capabilities(&self) -> Capabilities {
        let manifest = match self.listing_mode() {
            ListingMode::Auto | ListingMode::Manifest => {
                self.manifest.try_lock().and_then(|m| m.clone().flatten())
            }
            _ => None,
        };
        // Only a JSON autoindex hides dot files; a manifest or an S3 listing shows them.
        let lists_dot_files = match self.listing_mode() {
            ListingMode::S3 | ListingMode::Manifest => true,
            _ if matches!(self.target, Target::Presigned { .. }) => true,
            ListingMode::Autoindex => false,
            ListingMode::Auto => manifest.is_some(),
        };
        Capabilities {
            suffix_ranges: true,
            lists_dot_files,
            listing: manifest,
        }
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], _: Purpose) -> Result<Fetched> {
        read_each(ranges, |r| async move {
            match r {
                ByteRange::Bounded(r) => self.read_bounded(path, r).await,
                ByteRange::Suffix(n) => self.read_suffix(path, n).await,
                ByteRange::Whole => self.read_whole(path).await,
            }
        })
        .await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        let r = self.send("HEAD", path, |r| r).await?;
        if !(200..300).contains(&r.status) {
            return Err(status_error(&self.object(path), &r));
        }
        let size = r
            .header("content-length")
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| {
                HudiError::io(self.object(path), "HEAD answered without Content-Length")
            })?;
        Ok(ObjectMeta {
            path: path.to_string(),
            size,
            last_modified_ms: r
                .header("last-modified")
                .and_then(|t| chrono::DateTime::parse_from_rfc2822(t).ok())
                .map(|t| t.timestamp_millis()),
            etag: r.header("etag").map(str::to_string),
            is_dir: false,
        })
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        let mode = self.listing_mode();
        if matches!(mode, ListingMode::Auto | ListingMode::Manifest) {
            if let Some(m) = self.manifest().await? {
                return Ok(m.list(prefix, recursive));
            }
            if mode == ListingMode::Manifest {
                return Err(HudiError::NotFound {
                    path: format!(
                        "{} (listing: manifest; none at .hoodie/hudi-edge-manifest.json)",
                        self.object(MANIFEST_PATH)
                    ),
                });
            }
        }
        let s3 = mode == ListingMode::S3 || matches!(self.target, Target::Presigned { .. });
        if s3 {
            self.list_s3(prefix, recursive).await
        } else {
            self.list_autoindex(prefix, recursive).await
        }
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        let size = data.len() as u64;
        let r = self
            .send("PUT", path, |r| {
                let mut r = match &mode {
                    PutMode::Overwrite => r,
                    PutMode::Create => r.header("If-None-Match", "*"),
                    PutMode::UpdateIfMatch(etag) => r.header("If-Match", etag.clone()),
                };
                r.body = Some(data.clone());
                r
            })
            .await?;
        if !(200..300).contains(&r.status) {
            return Err(status_error(&self.object(path), &r));
        }
        Ok(ObjectMeta {
            path: path.to_string(),
            size,
            last_modified_ms: None,
            etag: r.header("etag").map(str::to_string),
            is_dir: false,
        })
    }

    async fn delete(&self, path: &str) -> Result<()> {
        let r = self.send("DELETE", path, |r| r).await?;
        match r.status {
            200..=299 | 404 => Ok(()),
            _ => Err(status_error(&self.object(path), &r)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges() {
        assert_eq!(
            parse_content_range("bytes 0-9/100"),
            Some((0, 10, Some(100)))
        );
        assert_eq!(parse_content_range("bytes 90-99/*"), Some((90, 100, None)));
        assert_eq!(parse_content_range("bytes x-9/100"), None);
        assert_eq!(parse_content_range("items 0-9/100"), None);
    }

    #[test]
    fn errors_name_the_object_without_secrets() {
        let r = Response {
            status: 403,
            body: Bytes::from_static(b"<Error><Code>SignatureDoesNotMatch</Code><AWSAccessKeyId>AKIA1</AWSAccessKeyId></Error>"),
            ..Default::default()
        };
        let e = status_error("s3://b/t/x.parquet", &r);
        assert_eq!(e.code(), "ACCESS_DENIED");
        let text = e.to_string();
        assert!(text.contains("s3://b/t/x.parquet") && text.contains("SignatureDoesNotMatch"));
        assert!(!text.contains("AKIA1"));
        let u = url::Url::parse("https://u:secret@h.example/t/?X-Amz-Signature=abc#f").unwrap();
        assert_eq!(redact(&u), "https://h.example/t");
    }

    #[test]
    fn backoff_is_bounded() {
        assert_eq!(backoff(0, None), Duration::from_millis(100));
        assert_eq!(backoff(3, None), Duration::from_millis(800));
        assert_eq!(backoff(30, None), BACKOFF_MAX);
        assert_eq!(backoff(0, Some("2")), Duration::from_secs(2));
        assert_eq!(backoff(0, Some("3600")), BACKOFF_MAX);
    }

    #[test]
    fn semaphore_hands_permits_over() {
        futures::executor::block_on(async {
            let s = Semaphore::new(1);
            let p = s.acquire().await;
            let waiting = s.acquire();
            drop(p);
            let _p2 = waiting.await;
        });
    }
}
