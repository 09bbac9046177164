//! Listing a table over plain HTTP: the listing manifest when there is one, S3
//! `ListObjectsV2` pages, or a JSON autoindex (see [`crate::storage::listing`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::storage::listing::{
    MAX_LISTING_DEPTH, MAX_LISTING_ENTRIES, MAX_LISTING_PAGE_BYTES, MAX_LISTING_REQUESTS,
};

/// What listings running at the same time have spent: requests and entries. A caller
/// that lists each folder it finds at once spends one budget, not one per folder.
#[derive(Debug, Default)]
pub(super) struct Spent {
    requests: AtomicUsize,
    entries: AtomicUsize,
}

/// One listing's view of the budget it shares, naming it in errors.
pub(super) struct Budget {
    what: String,
    spent: Arc<Spent>,
}

impl Budget {
    /// The listing of `what`, sharing what listings still running have spent (a fresh
    /// budget when none runs).
    pub(super) fn new(what: String, running: &Mutex<std::sync::Weak<Spent>>) -> Self {
        let mut running = running.lock().unwrap_or_else(|e| e.into_inner());
        let spent = running.upgrade().unwrap_or_else(|| {
            let fresh = Arc::new(Spent::default());
            *running = Arc::downgrade(&fresh);
            fresh
        });
        Budget { what, spent }
    }

    fn over(&self, what: String) -> HudiError {
        HudiError::unsupported_in(
            format!("{what}; write a listing manifest (.hoodie/hudi-edge-manifest.json)"),
            self.what.clone(),
        )
    }

    fn request(&self) -> Result<()> {
        if self.spent.requests.fetch_add(1, Ordering::Relaxed) >= MAX_LISTING_REQUESTS {
            return Err(self.over(format!(
                "a listing of more than {MAX_LISTING_REQUESTS} requests"
            )));
        }
        Ok(())
    }

    fn entries(&self, n: usize) -> Result<()> {
        if self.spent.entries.fetch_add(n, Ordering::Relaxed) + n > MAX_LISTING_ENTRIES {
            return Err(self.over(format!(
                "a listing of more than {MAX_LISTING_ENTRIES} entries"
            )));
        }
        Ok(())
    }
}

/// A page, manifest or index read whole, up to [`MAX_LISTING_PAGE_BYTES`].
fn page_limit(mut r: Request) -> Request {
    r.limit = Some(BodyLimit {
        partial: MAX_LISTING_PAGE_BYTES,
        other: MAX_LISTING_PAGE_BYTES,
    });
    r
}

impl HttpStorage {
    fn page_too_big(&self, path: &str) -> HudiError {
        self.over_limit(path, "a listing page", MAX_LISTING_PAGE_BYTES)
    }

    pub(super) async fn manifest(&self) -> Result<Option<Arc<Manifest>>> {
        let mut slot = self.manifest.lock().await;
        if let Some(m) = &*slot {
            return Ok(m.clone());
        }
        let r = self.send("GET", MANIFEST_PATH, page_limit).await?;
        if r.over_limit {
            return Err(self.page_too_big(MANIFEST_PATH));
        }
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

    pub(super) async fn list_autoindex(
        &self,
        prefix: &str,
        recursive: bool,
        budget: &Budget,
    ) -> Result<Vec<ObjectMeta>> {
        listing::autoindex_may_list(prefix)?;
        let dir = prefix.trim_matches('/');
        if dir.matches('/').count() >= MAX_LISTING_DEPTH {
            return Err(budget.over(format!(
                "directory indexes nested over {MAX_LISTING_DEPTH} levels (at {dir})"
            )));
        }
        budget.request()?;
        let url_path = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let r = self
            .send("GET", &url_path, |r| {
                page_limit(r.header("Accept", "application/json"))
            })
            .await?;
        if r.over_limit {
            return Err(self.page_too_big(&url_path));
        }
        let mut out = match r.status {
            200 => listing::parse_autoindex(&r.body, dir)?,
            404 => return Ok(Vec::new()),
            _ => return Err(status_error(&self.object(&url_path), &r)),
        };
        budget.entries(out.len())?;
        if recursive {
            let dirs: Vec<String> = out
                .iter()
                .filter(|m| m.is_dir)
                .map(|m| m.path.clone())
                .collect();
            out.retain(|m| !m.is_dir);
            // A few directories at a time, so a page of many creates few futures at once.
            for some in dirs.chunks(DEFAULT_CONCURRENCY) {
                let nested = futures::future::try_join_all(
                    some.iter()
                        .map(|d| Box::pin(self.list_autoindex(d, true, budget))),
                )
                .await?;
                out.extend(nested.into_iter().flatten());
            }
        }
        Ok(out)
    }

    /// Every page of the listing; with `start_after`, its first page only, and whether
    /// that was all.
    pub(super) async fn list_s3(
        &self,
        prefix: &str,
        recursive: bool,
        start_after: Option<&str>,
        budget: &Budget,
    ) -> Result<(Vec<ObjectMeta>, bool)> {
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
                    let mut q = listing::s3_list_query(
                        root,
                        prefix,
                        recursive,
                        token.as_deref(),
                        start_after,
                    );
                    if let Some(extra) = query {
                        q.push('&');
                        q.push_str(extra);
                    }
                    (format!("{bucket}?{q}"), root.clone())
                }
                Target::Url { .. } => {
                    return Err(HudiError::invalid("listing: s3 needs a bucket URL"));
                }
                Target::S3 {
                    bucket_url, root, ..
                } => {
                    let q = listing::s3_list_query(
                        root,
                        prefix,
                        recursive,
                        token.as_deref(),
                        start_after,
                    );
                    (format!("{bucket_url}?{q}"), root.clone())
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
            budget.request()?;
            let mut req = page_limit(Request::new("GET", url));
            req.headers.extend(self.headers.iter().cloned());
            req.credentials = !self.headers.is_empty();
            self.sign(&mut req)?;
            let r = self
                .client
                .send(req)
                .await
                .map_err(|e| transport_error(&what, e))?;
            if r.over_limit {
                return Err(self.page_too_big(prefix));
            }
            if r.status != 200 {
                return Err(status_error(&what, &r));
            }
            let page = listing::parse_s3_list(&r.body, &root, &what)?;
            budget.entries(page.objects.len())?;
            out.extend(page.objects);
            match page.next_token {
                Some(_) if start_after.is_some() => return Ok((out, false)),
                Some(t) => token = Some(t),
                None => return Ok((out, true)),
            }
        }
    }

    pub(super) fn listing_mode(&self) -> ListingMode {
        *self.listing.lock().unwrap_or_else(|e| e.into_inner())
    }
}
