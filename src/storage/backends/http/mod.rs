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
//!   [`RANGE_IGNORED_LIMIT`] (counted while reading) are sliced locally and noted in the
//!   answer's warnings; larger ones are an `Unsupported` error naming the object, never a
//!   silent multi-GB download; a `206` is read no further than the bytes asked for;
//! - redirects followed by [`Client`], never to another origin with the table's headers;
//!   object paths that would leave the base are refused before a URL is built;
//! - errors name the object by its location without query strings or credentials (403 →
//!   `AccessDenied`, 404 → `NotFound`);
//! - listing (see [`crate::storage::listing`]): S3 `ListObjectsV2`, JSON autoindex, or the
//!   manifest;
//! - presigned URLs: with a [`Presigner`], every request asks it for the URL of the object
//!   (`GET`, `HEAD`, `PUT`, `DELETE`, and `LIST` for a listing page), so secrets stay on
//!   whichever server signs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::{HudiError, Result};
use crate::storage::listing::{self, ListingMode, Manifest, MANIFEST_PATH};
use crate::storage::{
    conditional_put, join, read_each, ByteRange, Capabilities, Fetched, ListedAfter, ObjectMeta,
    Purpose, PutMode, Storage,
};

mod client;
mod list;
mod read;
mod sigv4;

pub use client::*;
pub use sigv4::SigV4;

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
    /// An S3 bucket through its REST API (`bucket_url/root/path`): requests signed with
    /// SigV4, or unsigned without a signer (a public bucket); listed with `ListObjectsV2`.
    S3 {
        bucket: String,
        root: String,
        bucket_url: url::Url,
        signer: Option<SigV4>,
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
    /// What the listings running now have spent (see [`list::Spent`]).
    listing_spent: Mutex<std::sync::Weak<list::Spent>>,
}

fn encode_path(path: &str) -> String {
    path.split('/')
        .map(listing::uri_encode)
        .collect::<Vec<_>>()
        .join("/")
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
            listing_spent: Mutex::new(std::sync::Weak::new()),
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

    /// An S3 bucket (`s3://bucket/prefix`) over its REST API on `transport` (see
    /// [`Target::S3`]): signed with the options' keys, unsigned without keys or when
    /// `anonymous`.
    pub fn for_s3(
        transport: Arc<dyn Transport>,
        url: &str,
        o: &crate::storage::s3::S3Options,
        options: HttpOptions,
    ) -> Result<Self> {
        let (bucket, root) = crate::storage::s3::parse_s3_url(url)?;
        let bucket_url = url::Url::parse(&o.bucket_url(&bucket))
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| {
                HudiError::invalid(format!(
                    "S3 endpoint {:?} for {url} (an http(s):// URL)",
                    o.endpoint.as_deref().unwrap_or_default()
                ))
            })?;
        let signer = o
            .keys()?
            .map(|(id, secret)| SigV4::new(id, secret, o.session_token.as_deref(), o.region()));
        let target = Target::S3 {
            bucket,
            root,
            bucket_url,
            signer,
        };
        let options = HttpOptions {
            listing: ListingMode::S3,
            ..options
        };
        Ok(HttpStorage::new(transport, target, options))
    }

    /// S3 listings signed here take `start-after`. A presigner's URL carries only the
    /// parameters it knows; a directory index has no order to skip in; a loaded manifest
    /// answers every listing before the store is asked ([`Capabilities::listing`]).
    fn skips_ahead(&self) -> bool {
        let signed_here = matches!(self.target, Target::S3 { .. } | Target::Url { .. });
        signed_here && (self.listing_mode() == ListingMode::S3 || self.is_bucket())
    }

    /// An S3 bucket (presigned or signed), not a plain HTTP(S) base URL.
    fn is_bucket(&self) -> bool {
        matches!(self.target, Target::Presigned { .. } | Target::S3 { .. })
    }

    /// Signs `req` when the target is a bucket with keys.
    fn sign(&self, req: &mut Request) -> Result<()> {
        match &self.target {
            Target::S3 {
                signer: Some(s), ..
            } => s.sign(req, chrono::Utc::now()),
            _ => Ok(()),
        }
    }

    /// The object's name for messages: location + path, no query, no credentials.
    fn object(&self, path: &str) -> String {
        format!("{}/{}", self.location(), path.trim_start_matches('/'))
    }

    fn key(&self, path: &str) -> String {
        match &self.target {
            Target::Presigned { root, .. } | Target::S3 { root, .. } => join(root, path),
            Target::Url { .. } => path.to_string(),
        }
    }

    /// The URL of `path`, refused (`CORRUPT`) when the path would leave the root: a second
    /// line behind the checks on paths from table content, as requests carry the headers.
    async fn url(&self, method: &'static str, path: &str) -> Result<String> {
        crate::storage::path::within_table(path.trim_start_matches('/'), &self.location())?;
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
            Target::S3 { bucket_url, .. } => Ok(format!(
                "{}/{}",
                bucket_url.as_str().trim_end_matches('/'),
                encode_path(&self.key(path))
            )),
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
        req.credentials = !self.headers.is_empty();
        self.sign(&mut req)?;
        self.client
            .send(req)
            .await
            .map_err(|e| transport_error(&self.object(path), e))
    }

    /// `UNSUPPORTED`: `what` of `path` is over `limit` bytes.
    fn over_limit(&self, path: &str, what: &str, limit: u64) -> HudiError {
        HudiError::unsupported_in(
            format!("{what} over {} MiB", limit >> 20),
            self.object(path),
        )
    }
}

#[async_trait]
impl Storage for HttpStorage {
    fn location(&self) -> String {
        match &self.target {
            Target::Url { base, .. } => redact(base),
            Target::Presigned { bucket, root, .. } | Target::S3 { bucket, root, .. } => {
                format!("s3://{bucket}/{root}")
                    .trim_end_matches('/')
                    .to_string()
            }
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
            _ if self.is_bucket() => true,
            ListingMode::Autoindex => false,
            ListingMode::Auto => manifest.is_some(),
        };
        Capabilities {
            suffix_ranges: true,
            lists_dot_files,
            listing: manifest,
            // A plain HTTP(S) server is read-only here; S3 (presigned or signed) can PUT.
            writable: self.is_bucket(),
            lists_after: self.skips_ahead(),
            requests_at_once: Some(self.client.requests_at_once()),
            listing_lags: self.is_bucket(),
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
        let s3 = mode == ListingMode::S3 || self.is_bucket();
        let budget = list::Budget::new(self.object(prefix), &self.listing_spent);
        if s3 {
            Ok(self.list_s3(prefix, recursive, None, &budget).await?.0)
        } else {
            self.list_autoindex(prefix, recursive, &budget).await
        }
    }

    async fn list_after(&self, start_after: &str) -> Result<Option<ListedAfter>> {
        if !self.skips_ahead() {
            return Ok(None);
        }
        let budget = list::Budget::new(self.object(""), &self.listing_spent);
        let (listed, complete) = self.list_s3("", true, Some(start_after), &budget).await?;
        Ok(Some(ListedAfter::new(listed, start_after, complete)))
    }

    async fn put(&self, path: &str, data: Bytes, mode: PutMode) -> Result<ObjectMeta> {
        let size = data.len() as u64;
        let attempt = || async {
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
        };
        match &mode {
            PutMode::Overwrite => attempt().await,
            // The client retries 5xx and network errors: a 412 may be about our own object,
            // or wrong.
            conditional => conditional_put(self, path, &data, conditional, attempt).await,
        }
    }

    async fn delete(&self, path: &str) -> Result<()> {
        let r = self.send("DELETE", path, |r| r).await?;
        match r.status {
            200..=299 | 404 => Ok(()),
            _ => Err(status_error(&self.object(path), &r)),
        }
    }

    async fn get_versioned(&self, path: &str) -> Result<(Bytes, ObjectMeta)> {
        let (bytes, etag) = self.read_whole_versioned(path).await?;
        match etag {
            Some(etag) => {
                let mut meta = ObjectMeta::file(path, bytes.len() as u64);
                meta.etag = Some(etag);
                Ok((bytes, meta))
            }
            // A host (or CORS policy) that hides the ETag: ask for it separately.
            None => {
                let meta = self.head(path).await?;
                let (bytes, _) = self.read_whole_versioned(path).await?;
                Ok((bytes, meta))
            }
        }
    }
}

#[cfg(test)]
mod tests;
