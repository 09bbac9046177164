//! The request side of HTTP storage, whatever carries it: requests and answers, the
//! [`Transport`] and [`Presigner`] a host provides, and a [`Client`] that bounds requests in
//! flight and retries with backoff.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::channel::oneshot;

use crate::error::{HudiError, Result};

/// Largest body accepted from a server that ignored `Range` (sliced locally), counted while
/// reading when the server sends no length.
pub const RANGE_IGNORED_LIMIT: u64 = 32 * 1024 * 1024;
pub use crate::storage::MAX_WHOLE_OBJECT_BYTES;
/// Redirects followed for one request.
pub const MAX_REDIRECTS: u32 = 10;
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
    /// How much of an answer's body a transport reads (see [`Request::body_limit`]).
    pub limit: Option<BodyLimit>,
    /// `headers` carry the table's credentials: a redirect to another origin is refused
    /// rather than followed with them (see [`Client::send`]).
    pub credentials: bool,
}

/// Most body bytes read from an answer: a `206` is the range asked for, anything else (a
/// server that ignored `Range`, an error page) the other bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimit {
    pub partial: u64,
    pub other: u64,
}

impl Request {
    pub fn new(method: &'static str, url: impl Into<String>) -> Self {
        Request {
            method,
            url: url.into(),
            headers: Vec::new(),
            body: None,
            limit: None,
            credentials: false,
        }
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    /// Most body bytes a transport reads for an answer of `status`. A transport stops at
    /// the first byte past it (or before reading, when `Content-Length` says so; headers
    /// keyed in lower case) and answers [`Response::over_limit`] with no body.
    pub fn body_limit(&self, status: u16) -> Option<u64> {
        self.limit
            .map(|l| if status == 206 { l.partial } else { l.other })
    }

    /// Whether a `Content-Length` already says the body is over [`Request::body_limit`].
    pub fn declared_over_limit(&self, status: u16, headers: &HashMap<String, String>) -> bool {
        self.body_limit(status).is_some_and(|limit| {
            headers
                .get("content-length")
                .and_then(|l| l.trim().parse::<u64>().ok())
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
    /// The body was over [`Request::body_limit`]: not read (or not past the limit), empty.
    pub over_limit: bool,
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

/// Carries one HTTP request. Implementations read the body up to [`Request::body_limit`],
/// stop their request when the returned future is dropped, and follow no redirect of a
/// request with [`Request::credentials`] ([`Client`] decides which to follow).
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
    requests_at_once: usize,
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
            requests_at_once: concurrency.max(1),
            retries,
        }
    }

    /// Requests sent at once; the rest wait for a permit.
    pub fn requests_at_once(&self) -> usize {
        self.requests_at_once
    }

    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    /// Sends `request`, retrying 408/429/5xx answers and network errors and following
    /// redirects of `GET`/`HEAD`. The last answer (whatever its status) or the last network
    /// error comes back. A redirect to another origin is refused when the request carries
    /// the table's credentials (custom headers, Basic auth): they must not reach another
    /// host, and dropping them would read a different (public) object than the one asked.
    pub async fn send(&self, request: Request) -> std::result::Result<Response, TransportError> {
        let mut request = request;
        for _ in 0..=MAX_REDIRECTS {
            let r = self.send_retrying(&request).await?;
            let Some(next) = redirect_target(&request, &r)? else {
                return Ok(r);
            };
            request.url = next;
        }
        Err(TransportError {
            detail: format!("more than {MAX_REDIRECTS} redirects"),
            aborted: false,
        })
    }

    async fn send_retrying(
        &self,
        request: &Request,
    ) -> std::result::Result<Response, TransportError> {
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

/// Where a redirect answer sends `request`, when it is one to follow.
fn redirect_target(
    request: &Request,
    r: &Response,
) -> std::result::Result<Option<String>, TransportError> {
    let follows =
        matches!(r.status, 301 | 302 | 303 | 307 | 308) && matches!(request.method, "GET" | "HEAD");
    let Some(location) = r.header("location").filter(|_| follows) else {
        return Ok(None);
    };
    let refuse = |detail: String| TransportError {
        detail,
        aborted: false,
    };
    let from = url::Url::parse(&request.url).map_err(|e| refuse(format!("request URL: {e}")))?;
    let to = from
        .join(location)
        .map_err(|e| refuse(format!("bad redirect Location: {e}")))?;
    if !matches!(to.scheme(), "http" | "https") {
        return Err(refuse(format!(
            "redirect to a {:?} URL not followed",
            to.scheme()
        )));
    }
    if request.credentials && to.origin() != from.origin() {
        return Err(refuse(format!(
            "redirect to another origin ({}) not followed: the table's headers would go with it",
            to.origin().ascii_serialization()
        )));
    }
    Ok(Some(to.to_string()))
}

// Answers → the engine's errors, naming the object without secrets.

/// `text` with every URL in it redacted (see [`redact`]): transports' messages may quote
/// the URL, with a presigned query or credentials.
pub fn strip_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |i| i + 1);
        let end = at
            + rest[at..]
                .find(|c: char| c.is_whitespace() || matches!(c, ')' | '"' | '\'' | '<' | '>'))
                .unwrap_or(rest.len() - at);
        out.push_str(&rest[..start]);
        match url::Url::parse(&rest[start..end]) {
            Ok(u) => out.push_str(&redact(&u)),
            Err(_) => out.push_str("<url>"),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
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

/// The S3 error code of an error body (`<Code>NoSuchKey</Code>`); never its message, which
/// may echo the string to sign and the access key id.
pub(super) fn s3_error_code(body: &[u8]) -> Option<String> {
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

pub(super) fn transport_error(object: &str, e: TransportError) -> HudiError {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_bounded() {
        assert_eq!(backoff(0, None), Duration::from_millis(100));
        assert_eq!(backoff(3, None), Duration::from_millis(800));
        assert_eq!(backoff(30, None), BACKOFF_MAX);
        assert_eq!(backoff(0, Some("2")), Duration::from_secs(2));
        assert_eq!(backoff(0, Some("3600")), BACKOFF_MAX);
    }

    #[test]
    fn messages_lose_queries_and_credentials() {
        let text =
            "error sending request for url (https://u:pw@h.example/t/f?X-Amz-Signature=abc): reset";
        assert_eq!(
            strip_urls(text),
            "error sending request for url (https://h.example/t/f): reset"
        );
        assert_eq!(strip_urls("no url here"), "no url here");
        assert_eq!(strip_urls("bad http://[::1?x"), "bad <url>");
    }

    #[test]
    fn redirects_with_credentials_stay_in_their_origin() {
        let answer = |location: &str| Response {
            status: 302,
            headers: HashMap::from([("location".to_string(), location.to_string())]),
            ..Default::default()
        };
        let mut r = Request::new("GET", "http://127.0.0.1:8000/t/a?tok=1");
        r.credentials = true;
        let same = redirect_target(&r, &answer("/t/b")).unwrap();
        assert_eq!(same.as_deref(), Some("http://127.0.0.1:8000/t/b"));
        let e = redirect_target(&r, &answer("http://127.0.0.1:9000/x?sig=2")).unwrap_err();
        assert!(e.detail.contains("http://127.0.0.1:9000") && !e.detail.contains("sig"));
        assert!(redirect_target(&r, &answer("file:///etc/passwd")).is_err());
        r.credentials = false;
        assert!(redirect_target(&r, &answer("http://other/x"))
            .unwrap()
            .is_some());
        // A PUT's redirect is its answer, not followed.
        let put = Request::new("PUT", "http://127.0.0.1:8000/t/a");
        assert!(redirect_target(&put, &answer("/t/b")).unwrap().is_none());
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
