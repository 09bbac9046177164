//! S3 (and S3-compatible stores) natively, through the `object_store` crate: SigV4 signing,
//! paginated `ListObjectsV2`, path-style or virtual-hosted addressing, custom endpoints,
//! session tokens, anonymous access, conditional puts, over reqwest with its own retries.
//! (The wasm build reaches S3 through [`super::http::HttpStorage`] and its SigV4 signer.)
//!
//! This module also gives [`super::http::HttpStorage`] its transport, reqwest
//! ([`ReqwestTransport`]).

use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutPayload, UpdateVersion};

use super::{read_each, ByteRange, Capabilities, Fetched, ObjectMeta, Purpose, PutMode, Storage};
use crate::error::{HudiError, Result};

pub use super::s3::{parse_s3_url, S3Options};

/// An `AmazonS3Builder` for `bucket` with everything but the transport set.
pub fn s3_builder(bucket: &str, o: &S3Options) -> object_store::aws::AmazonS3Builder {
    let mut b = object_store::aws::AmazonS3Builder::new()
        .with_bucket_name(bucket)
        .with_region(o.region.clone().unwrap_or_else(|| "us-east-1".into()));
    if let Some(e) = &o.endpoint {
        b = b
            .with_endpoint(e.trim_end_matches('/'))
            .with_allow_http(e.starts_with("http://"));
    }
    let virtual_hosted = match o.force_path_style {
        Some(path_style) => !path_style,
        None => o.endpoint.is_none(),
    };
    b = b.with_virtual_hosted_style_request(virtual_hosted);
    if let Some(k) = &o.access_key_id {
        b = b.with_access_key_id(k);
    }
    if let Some(s) = &o.secret_access_key {
        b = b.with_secret_access_key(s);
    }
    if let Some(t) = &o.session_token {
        b = b.with_token(t);
    }
    if o.anonymous {
        b = b.with_skip_signature(true);
    }
    b
}

/// Any `ObjectStore` as a [`Storage`] rooted at `root` (a key prefix).
#[derive(Debug)]
pub struct ObjectStoreStorage {
    store: Arc<dyn ObjectStore>,
    root: String,
    location: String,
    requests_at_once: Option<usize>,
}

/// Our error for an object_store error about `object`. object_store's messages can carry
/// the server's error document (S3's echoes the access key id and string to sign), so only
/// the kind and status travel.
fn map_err(object: &str, e: object_store::Error) -> HudiError {
    use object_store::Error as E;
    let text = e.to_string();
    let status = text
        .split(|c: char| !c.is_ascii_digit())
        .find(|w| w.len() == 3 && w.starts_with(['4', '5']))
        .map(|s| format!("HTTP {s}"));
    let brief = |t: &str| -> String {
        let cut = t.find(['<', '?', '{']).unwrap_or(t.len());
        t[..cut.min(200)].trim().to_string()
    };
    match e {
        E::NotFound { .. } => HudiError::NotFound {
            path: object.into(),
        },
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => HudiError::AccessDenied {
            path: object.into(),
            detail: status.unwrap_or_else(|| "HTTP 403".into()),
        },
        E::Precondition { .. } | E::AlreadyExists { .. } => HudiError::Conflict {
            path: object.into(),
            detail: status.unwrap_or_else(|| "HTTP 412".into()),
        },
        E::NotSupported { .. } | E::NotImplemented { .. } => {
            HudiError::unsupported_in(brief(&text), object)
        }
        _ if text.contains("403 Forbidden") => HudiError::AccessDenied {
            path: object.into(),
            detail: "HTTP 403".into(),
        },
        _ => HudiError::io(object, status.unwrap_or_else(|| brief(&text))),
    }
}

impl ObjectStoreStorage {
    pub fn new(store: Arc<dyn ObjectStore>, root: &str, location: impl Into<String>) -> Self {
        ObjectStoreStorage {
            store,
            root: root.trim_matches('/').to_string(),
            location: location.into(),
            requests_at_once: None,
        }
    }

    /// The store sends at most `n` requests at once (object_store's `LimitStore`).
    pub fn limited_to(self, n: usize) -> Self {
        ObjectStoreStorage {
            requests_at_once: Some(n),
            ..self
        }
    }

    /// The key of `path`, refused (`CORRUPT`) when the path would leave the root.
    fn key(&self, path: &str) -> Result<Path> {
        let rel = super::path::within_table(path.trim_start_matches('/'), &self.location)?;
        let full = super::join(&self.root, &rel);
        Ok(Path::parse(&full).unwrap_or_else(|_| Path::from(full.as_str())))
    }

    fn object(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.location.trim_end_matches('/'),
            path.trim_start_matches('/')
        )
    }

    fn relative(&self, key: &Path) -> Option<String> {
        let k = key.as_ref();
        let rel = if self.root.is_empty() {
            k
        } else {
            k.strip_prefix(self.root.as_str())?.strip_prefix('/')?
        };
        (!rel.is_empty()).then(|| rel.to_string())
    }

    async fn read_bounded(&self, path: &str, range: Range<u64>) -> Result<Fetched> {
        if range.start >= range.end {
            return Ok(Fetched::one(Bytes::new(), None));
        }
        match self.get_opts(path, ByteRange::Bounded(range)).await {
            Ok((b, size)) => Ok(Fetched::one(b, Some(size))),
            // Asked from past the end: nothing there.
            Err(HudiError::Io { detail, .. }) if detail.contains("416") => {
                Ok(Fetched::one(Bytes::new(), None))
            }
            Err(e) => Err(e),
        }
    }

    async fn read_suffix(&self, path: &str, n: u64) -> Result<Fetched> {
        if n == 0 {
            return Ok(Fetched::one(
                Bytes::new(),
                Some(self.head(path).await?.size),
            ));
        }
        let (b, size) = self.get_opts(path, ByteRange::Suffix(n)).await?;
        Ok(Fetched::one(b, Some(size)))
    }

    fn meta(&self, m: object_store::ObjectMeta) -> Option<ObjectMeta> {
        Some(ObjectMeta {
            path: self.relative(&m.location)?,
            size: m.size,
            last_modified_ms: Some(m.last_modified.timestamp_millis()),
            etag: m.e_tag,
            is_dir: false,
        })
    }

    /// The body of `range`, counted against [`ByteRange::body_limit`] as it arrives: a
    /// server's length is not trusted (`GetResult::bytes` reserves whatever length the
    /// server declares, and keeps reading past it).
    async fn get_opts(&self, path: &str, range: ByteRange) -> Result<(Bytes, u64)> {
        let (bytes, meta) = self.get_with_meta(path, range).await?;
        Ok((bytes, meta.size))
    }

    /// One GET: the bytes and the object's metadata (its ETag) from the same answer.
    async fn get_with_meta(
        &self,
        path: &str,
        range: ByteRange,
    ) -> Result<(Bytes, object_store::ObjectMeta)> {
        let object = self.object(path);
        let options = GetOptions {
            range: match &range {
                ByteRange::Bounded(r) => Some(GetRange::Bounded(r.clone())),
                ByteRange::Suffix(n) => Some(GetRange::Suffix(*n)),
                ByteRange::Whole => None,
            },
            ..Default::default()
        };
        let r = self
            .store
            .get_opts(&self.key(path)?, options)
            .await
            .map_err(|e| map_err(&object, e))?;
        let meta = r.meta.clone();
        let limit = range.body_limit();
        if r.range.end.saturating_sub(r.range.start) > limit {
            return Err(range.body_over(&object));
        }
        let mut stream = r.into_stream();
        let mut chunks = Vec::new();
        let mut len = 0u64;
        while let Some(chunk) = stream.try_next().await.map_err(|e| map_err(&object, e))? {
            len = len.saturating_add(chunk.len() as u64);
            if len > limit {
                return Err(range.body_over(&object));
            }
            chunks.push(chunk);
        }
        let bytes = match &chunks[..] {
            [] => Bytes::new(),
            [one] => one.clone(),
            _ => Bytes::from(chunks.concat()),
        };
        Ok((bytes, meta))
    }
}

#[async_trait]
impl Storage for ObjectStoreStorage {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            lists_after: true,
            requests_at_once: self.requests_at_once,
            ..Capabilities::full()
        }
    }

    async fn read(&self, path: &str, ranges: &[ByteRange], _: Purpose) -> Result<Fetched> {
        read_each(ranges, |r| async move {
            match r {
                ByteRange::Bounded(r) => self.read_bounded(path, r).await,
                ByteRange::Suffix(n) => self.read_suffix(path, n).await,
                ByteRange::Whole => {
                    let (b, size) = self.get_opts(path, ByteRange::Whole).await?;
                    Ok(Fetched::one(b, Some(size)))
                }
            }
        })
        .await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        let object = self.object(path);
        let m = self
            .store
            .head(&self.key(path)?)
            .await
            .map_err(|e| map_err(&object, e))?;
        Ok(ObjectMeta {
            path: path.to_string(),
            size: m.size,
            last_modified_ms: Some(m.last_modified.timestamp_millis()),
            etag: m.e_tag,
            is_dir: false,
        })
    }

    async fn list(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
        let object = self.object(prefix);
        let dir = self.key(prefix.trim_matches('/'))?;
        let dir = (!dir.as_ref().is_empty()).then_some(dir);
        if recursive {
            let listed: Vec<object_store::ObjectMeta> = self
                .store
                .list(dir.as_ref())
                .try_collect()
                .await
                .map_err(|e| map_err(&object, e))?;
            return Ok(listed.into_iter().filter_map(|m| self.meta(m)).collect());
        }
        let r = self
            .store
            .list_with_delimiter(dir.as_ref())
            .await
            .map_err(|e| map_err(&object, e))?;
        let mut out: Vec<ObjectMeta> = r.objects.into_iter().filter_map(|m| self.meta(m)).collect();
        out.extend(r.common_prefixes.iter().filter_map(|p| {
            Some(ObjectMeta {
                path: self.relative(p)?,
                size: 0,
                last_modified_ms: None,
                etag: None,
                is_dir: true,
            })
        }));
        Ok(out)
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<super::ListedAfter>> {
        let object = self.object("");
        let root = (!self.root.is_empty()).then(|| self.key("")).transpose()?;
        // S3's `start-after`: what sorts before is never sent. One page (S3's is 1,000
        // keys): a full one may have more behind it, left to the caller.
        const PAGE: usize = 1000;
        let offset = Path::from(super::join(&self.root, start_after).as_str());
        let listed: Vec<object_store::ObjectMeta> = self
            .store
            .list_with_offset(root.as_ref(), &offset)
            .take(PAGE)
            .try_collect()
            .await
            .map_err(|e| map_err(&object, e))?;
        let complete = listed.len() < PAGE;
        let files = listed.into_iter().filter_map(|m| self.meta(m)).collect();
        Ok(Some(super::ListedAfter::new(files, start_after, complete)))
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        let object = self.object(path);
        let size = data.len() as u64;
        let mode = match mode {
            PutMode::Overwrite => object_store::PutMode::Overwrite,
            PutMode::Create => object_store::PutMode::Create,
            PutMode::UpdateIfMatch(e_tag) => object_store::PutMode::Update(UpdateVersion {
                e_tag: Some(e_tag),
                version: None,
            }),
        };
        let conditional = !matches!(mode, object_store::PutMode::Overwrite);
        let r = match self
            .store
            .put_opts(
                &self.key(path)?,
                PutPayload::from(data.clone()),
                mode.into(),
            )
            .await
        {
            Ok(r) => r,
            // object_store retries 5xx (and 409 for If-Match) inside: a refusal may be about
            // our own earlier attempt.
            Err(e) if conditional => {
                return super::confirm_own_write(self, path, &data, map_err(&object, e)).await
            }
            Err(e) => return Err(map_err(&object, e)),
        };
        Ok(ObjectMeta {
            path: path.to_string(),
            size,
            last_modified_ms: None,
            etag: r.e_tag,
            is_dir: false,
        })
    }

    async fn delete(&self, path: &str) -> Result<()> {
        let object = self.object(path);
        match self.store.delete(&self.key(path)?).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(map_err(&object, e)),
        }
    }

    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        let (bytes, m) = self.get_with_meta(path, ByteRange::Whole).await?;
        Ok((
            bytes,
            ObjectMeta {
                path: path.to_string(),
                size: m.size,
                last_modified_ms: Some(m.last_modified.timestamp_millis()),
                etag: m.e_tag,
                is_dir: false,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::StorageExt;

    #[test]
    fn keys_never_leave_the_root() {
        let store = Arc::new(object_store::memory::InMemory::new());
        let s = ObjectStoreStorage::new(store, "t", "s3://b/t");
        futures::executor::block_on(async {
            for bad in ["../x", "a/../../x"] {
                let e = s.get(bad, Purpose::Other).await.unwrap_err();
                assert_eq!(
                    (e.code(), e.object()),
                    ("CORRUPT", Some("s3://b/t")),
                    "{bad}"
                );
            }
            s.put("a/f", Bytes::from_static(b"f"), PutMode::Create)
                .await
                .unwrap();
            assert_eq!(&s.get("a/./f", Purpose::Other).await.unwrap()[..], b"f");
        });
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub use native::*;

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::time::Duration;

    use async_trait::async_trait;
    use object_store::client::{
        ClientOptions, HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest,
        HttpResponse, HttpResponseBody, HttpService,
    };
    use object_store::RetryConfig;

    use crate::storage::MAX_WHOLE_OBJECT_BYTES;

    use super::*;
    use crate::storage::http::{strip_urls, Request, Response, Transport, TransportError};

    /// reqwest (via rustls) needs a process-wide crypto provider: ring.
    fn init_tls() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
        });
    }

    fn client_options() -> ClientOptions {
        ClientOptions::new()
            .with_allow_http(true)
            .with_timeout(Duration::from_secs(60))
            .with_connect_timeout(Duration::from_secs(10))
    }

    /// An S3 bucket (`s3://bucket/prefix`), natively. object_store retries 429/5xx and
    /// network errors `retries` times with exponential backoff; `concurrency` bounds the
    /// requests in flight.
    pub fn s3_storage(
        url: &str,
        o: &S3Options,
        retries: u32,
        concurrency: usize,
    ) -> Result<ObjectStoreStorage> {
        init_tls();
        let (bucket, prefix) = parse_s3_url(url)?;
        let store = s3_builder(&bucket, o)
            .with_client_options(client_options())
            .with_http_connector(NoRedirects)
            .with_retry(RetryConfig {
                max_retries: retries as usize,
                retry_timeout: Duration::from_secs(120),
                ..Default::default()
            })
            .build()
            .map_err(|e| map_err(url, e))?;
        let store: Arc<dyn ObjectStore> = Arc::new(object_store::limit::LimitStore::new(
            store,
            concurrency.max(1),
        ));
        let location = format!("s3://{bucket}/{prefix}")
            .trim_end_matches('/')
            .to_string();
        Ok(ObjectStoreStorage::new(store, &prefix, location).limited_to(concurrency.max(1)))
    }

    /// object_store's S3 client over a reqwest client that follows no redirect: a signed
    /// request (its session token among the headers) must not go to another host, and S3
    /// answers API calls without redirecting them. Its bodies are [`Counted`].
    #[derive(Debug)]
    struct NoRedirects;

    impl HttpConnector for NoRedirects {
        fn connect(&self, _: &ClientOptions) -> object_store::Result<HttpClient> {
            let client = reqwest_client().map_err(|e| object_store::Error::Generic {
                store: "S3",
                source: Box::new(e),
            })?;
            Ok(HttpClient::new(CountedBodies(client)))
        }
    }

    /// reqwest as object_store's `HttpService`, each response body [`Counted`].
    #[derive(Debug)]
    struct CountedBodies(reqwest::Client);

    #[async_trait]
    impl HttpService for CountedBodies {
        async fn call(&self, req: HttpRequest) -> std::result::Result<HttpResponse, HttpError> {
            let (parts, body) = HttpService::call(&self.0, req).await?.into_parts();
            let body = HttpResponseBody::new(Counted { body, seen: 0 });
            Ok(HttpResponse::from_parts(parts, body))
        }
    }

    /// A body that ends in an error past [`MAX_WHOLE_OBJECT_BYTES`] and hints no size:
    /// object_store collects listings and error documents with `bytes()`, which reserves
    /// the length a server declares before reading (2⁶² aborts).
    struct Counted {
        body: HttpResponseBody,
        seen: u64,
    }

    impl http_body::Body for Counted {
        type Data = Bytes;
        type Error = HttpError;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<std::result::Result<http_body::Frame<Bytes>, HttpError>>>
        {
            let polled = std::pin::Pin::new(&mut self.body).poll_frame(cx);
            if let std::task::Poll::Ready(Some(Ok(frame))) = &polled {
                let len = frame.data_ref().map_or(0, |d| d.len() as u64);
                self.seen = self.seen.saturating_add(len);
                if self.seen > MAX_WHOLE_OBJECT_BYTES {
                    let e = HttpError::new(
                        HttpErrorKind::Decode,
                        crate::storage::response_over_limit(),
                    );
                    return std::task::Poll::Ready(Some(Err(e)));
                }
            }
            polled
        }

        fn is_end_stream(&self) -> bool {
            self.body.is_end_stream()
        }
    }

    /// A reqwest client that follows no redirect, with the timeouts of [`client_options`].
    fn reqwest_client() -> reqwest::Result<reqwest::Client> {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(60))
            .connect_timeout(Duration::from_secs(10))
            .build()
    }

    /// reqwest as the transport of [`crate::storage::http::HttpStorage`]: it follows no
    /// redirect itself (the client decides, see `http::Client::send`) and reads bodies in
    /// chunks, counting, up to the request's limit.
    #[derive(Debug)]
    pub struct ReqwestTransport {
        client: reqwest::Client,
    }

    impl ReqwestTransport {
        pub fn new() -> Result<Self> {
            init_tls();
            let client = reqwest_client().map_err(|e| HudiError::io("<http client>", e))?;
            Ok(ReqwestTransport { client })
        }
    }

    /// A reqwest error's message and causes, with no URL in them.
    fn transport_error(e: reqwest::Error) -> TransportError {
        let e = e.without_url();
        let mut detail = e.to_string();
        let mut cause = std::error::Error::source(&e);
        while let Some(c) = cause {
            detail.push_str(": ");
            detail.push_str(&c.to_string());
            cause = c.source();
        }
        TransportError {
            detail: strip_urls(&detail),
            aborted: false,
        }
    }

    #[async_trait]
    impl Transport for ReqwestTransport {
        async fn send(&self, r: Request) -> std::result::Result<Response, TransportError> {
            let method =
                reqwest::Method::from_bytes(r.method.as_bytes()).map_err(|e| TransportError {
                    detail: e.to_string(),
                    aborted: false,
                })?;
            let mut b = self.client.request(method, r.url.as_str());
            for (k, v) in &r.headers {
                b = b.header(k.as_str(), v.as_str());
            }
            if let Some(body) = &r.body {
                b = b.body(body.clone());
            }
            let mut resp = b.send().await.map_err(transport_error)?;
            let headers = resp
                .headers()
                .iter()
                .filter_map(|(k, v)| {
                    Some((
                        k.as_str().to_ascii_lowercase(),
                        v.to_str().ok()?.to_string(),
                    ))
                })
                .collect::<std::collections::HashMap<_, _>>();
            let status = resp.status().as_u16();
            let over = Response {
                status,
                headers: headers.clone(),
                body: Bytes::new(),
                over_limit: true,
            };
            if r.declared_over_limit(status, &headers) {
                return Ok(over);
            }
            let limit = r.body_limit(status).unwrap_or(u64::MAX);
            let mut body = bytes::BytesMut::new();
            if r.method != "HEAD" {
                while let Some(chunk) = resp.chunk().await.map_err(transport_error)? {
                    if (body.len() + chunk.len()) as u64 > limit {
                        return Ok(over);
                    }
                    body.extend_from_slice(&chunk);
                }
            }
            Ok(Response {
                status,
                headers,
                body: body.freeze(),
                over_limit: false,
            })
        }

        async fn sleep(&self, d: Duration) {
            tokio::time::sleep(d).await
        }
    }
}
