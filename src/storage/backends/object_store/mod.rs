//! S3 (and S3-compatible stores) natively, through the `object_store` crate: SigV4 signing,
//! paginated `ListObjectsV2`, path-style or virtual-hosted addressing, custom endpoints,
//! session tokens, anonymous access, conditional puts, over reqwest with its own retries.
//! (The wasm build reaches S3 through [`crate::storage::http::HttpStorage`] and its SigV4 signer.)
//!
//! This module also gives [`crate::storage::http::HttpStorage`] its transport, reqwest
//! ([`ReqwestTransport`]).

use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt, PutPayload, UpdateVersion};

use crate::error::{HudiError, Result};
use crate::storage::{
    conditional_put, join, read_each, ByteRange, Capabilities, Fetched, ListedAfter, ObjectMeta,
    Purpose, PutMode, Storage,
};

pub use crate::storage::s3::{parse_s3_url, S3Options};

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
        let rel = crate::storage::path::within_table(path.trim_start_matches('/'), &self.location)?;
        let full = join(&self.root, &rel);
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
            listing_lags: true,
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

    async fn list_after(&self, start_after: &str) -> Result<Option<ListedAfter>> {
        let object = self.object("");
        let root = (!self.root.is_empty()).then(|| self.key("")).transpose()?;
        // S3's `start-after`: what sorts before is never sent. One page (S3's is 1,000
        // keys): a full one may have more behind it, left to the caller.
        const PAGE: usize = 1000;
        let offset = Path::from(join(&self.root, start_after).as_str());
        let listed: Vec<object_store::ObjectMeta> = self
            .store
            .list_with_offset(root.as_ref(), &offset)
            .take(PAGE)
            .try_collect()
            .await
            .map_err(|e| map_err(&object, e))?;
        let complete = listed.len() < PAGE;
        let files = listed.into_iter().filter_map(|m| self.meta(m)).collect();
        Ok(Some(ListedAfter::new(files, start_after, complete)))
    }

    async fn put(&self, path: &str, data: Bytes, asked: PutMode) -> Result<ObjectMeta> {
        let object = self.object(path);
        let size = data.len() as u64;
        let mode = match asked.clone() {
            PutMode::Overwrite => object_store::PutMode::Overwrite,
            PutMode::Create => object_store::PutMode::Create,
            PutMode::UpdateIfMatch(e_tag) => object_store::PutMode::Update(UpdateVersion {
                e_tag: Some(e_tag),
                version: None,
            }),
        };
        let key = self.key(path)?;
        let attempt = || async {
            let r = self
                .store
                .put_opts(&key, PutPayload::from(data.clone()), mode.clone().into())
                .await
                .map_err(|e| map_err(&object, e))?;
            Ok(ObjectMeta {
                path: path.to_string(),
                size,
                last_modified_ms: None,
                etag: r.e_tag,
                is_dir: false,
            })
        };
        match &asked {
            PutMode::Overwrite => attempt().await,
            // object_store retries 5xx (and 409 for If-Match) inside: a refusal may be about
            // our own earlier attempt, or wrong.
            conditional => conditional_put(self, path, &data, conditional, attempt).await,
        }
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
mod native;
