//! The native HTTP client under both remote backends: object_store's S3 client (without
//! redirects, bodies counted against the size limit) and reqwest as the transport of
//! [`crate::storage::http::HttpStorage`].

use std::time::Duration;

use async_trait::async_trait;
use object_store::client::{
    ClientOptions, HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpResponseBody, HttpService,
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
    ) -> std::task::Poll<Option<std::result::Result<http_body::Frame<Bytes>, HttpError>>> {
        let polled = std::pin::Pin::new(&mut self.body).poll_frame(cx);
        if let std::task::Poll::Ready(Some(Ok(frame))) = &polled {
            let len = frame.data_ref().map_or(0, |d| d.len() as u64);
            self.seen = self.seen.saturating_add(len);
            if self.seen > MAX_WHOLE_OBJECT_BYTES {
                let e =
                    HttpError::new(HttpErrorKind::Decode, crate::storage::response_over_limit());
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
