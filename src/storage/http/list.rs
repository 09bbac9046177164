//! Listing a table over plain HTTP: the listing manifest when there is one, S3
//! `ListObjectsV2` pages, or a JSON autoindex (see [`super::super::listing`]).

use super::*;

impl HttpStorage {
    pub(super) async fn manifest(&self) -> Result<Option<Arc<Manifest>>> {
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

    pub(super) async fn list_autoindex(
        &self,
        prefix: &str,
        recursive: bool,
    ) -> Result<Vec<ObjectMeta>> {
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

    pub(super) async fn list_s3(&self, prefix: &str, recursive: bool) -> Result<Vec<ObjectMeta>> {
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

    pub(super) fn listing_mode(&self) -> ListingMode {
        *self.listing.lock().unwrap_or_else(|e| e.into_inner())
    }
}
