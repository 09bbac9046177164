//! Reads, one range per request: ranged `GET`s, one-request tails, whole objects, and what
//! to make of servers that ignore `Range` or answer past the bytes asked for.

use std::ops::Range;

use bytes::Bytes;

use super::{parse_content_range, status_error, BodyLimit, HttpStorage, Response};
use super::{MAX_WHOLE_OBJECT_BYTES, RANGE_IGNORED_LIMIT};
use crate::error::{HudiError, Result};
use crate::storage::{ByteRange, Fetched, Storage};

impl HttpStorage {
    /// `GET` with `Range: bytes=<spec>` for `len` bytes; a `206` body is read up to `len`, a
    /// server that ignores the range (a whole-object 200) up to [`RANGE_IGNORED_LIMIT`].
    async fn get_ranged(&self, path: &str, spec: &str, len: u64) -> Result<Response> {
        self.send("GET", path, |r| {
            let mut r = r.header("Range", format!("bytes={spec}"));
            r.limit = Some(BodyLimit {
                partial: len,
                other: RANGE_IGNORED_LIMIT,
            });
            r
        })
        .await
    }

    /// A ranged `GET` answered with the whole object: `range` sliced from it, and a warning.
    fn range_ignored(&self, path: &str, r: Response, range: ByteRange) -> Result<Fetched> {
        if r.over_limit {
            return Err(self.over_limit(
                path,
                "a server that ignores Range requests, for an object",
                RANGE_IGNORED_LIMIT,
            ));
        }
        let len = r.body.len() as u64;
        let wanted = range.within(len);
        // Both ends are within the body held in memory, so they fit a usize.
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

    /// A `206` whose body ran past the bytes `range` asked for.
    fn partial_over(&self, path: &str, r: &Response, range: ByteRange) -> Result<()> {
        if !r.over_limit {
            return Ok(());
        }
        Err(range.body_over(&self.object(path)))
    }

    pub(super) async fn read_bounded(&self, path: &str, range: Range<u64>) -> Result<Fetched> {
        if range.start >= range.end {
            return Ok(Fetched::one(Bytes::new(), None));
        }
        let want = range.end - range.start;
        let r = self
            .get_ranged(path, &format!("{}-{}", range.start, range.end - 1), want)
            .await?;
        match r.status {
            206 => {
                self.partial_over(path, &r, ByteRange::Bounded(range.clone()))?;
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
                Ok(Fetched::one(r.body, None))
            }
            200 => self.range_ignored(path, r, ByteRange::Bounded(range)),
            416 => Ok(Fetched::one(Bytes::new(), None)),
            _ => Err(status_error(&self.object(path), &r)),
        }
    }

    pub(super) async fn read_whole(&self, path: &str) -> Result<Fetched> {
        let (bytes, _) = self.read_whole_versioned(path).await?;
        let len = bytes.len() as u64;
        Ok(Fetched::one(bytes, Some(len)))
    }

    /// The whole object and its ETag from one GET.
    pub(super) async fn read_whole_versioned(&self, path: &str) -> Result<(Bytes, Option<String>)> {
        let r = self
            .send("GET", path, |mut r| {
                r.limit = Some(BodyLimit {
                    partial: MAX_WHOLE_OBJECT_BYTES,
                    other: MAX_WHOLE_OBJECT_BYTES,
                });
                r
            })
            .await?;
        if r.over_limit {
            return Err(ByteRange::Whole.body_over(&self.object(path)));
        }
        match r.status {
            200 | 203 => {
                let etag = r.header("etag").map(str::to_string);
                Ok((r.body, etag))
            }
            _ => Err(status_error(&self.object(path), &r)),
        }
    }

    pub(super) async fn read_suffix(&self, path: &str, n: u64) -> Result<Fetched> {
        if n == 0 {
            return Ok(Fetched::one(
                Bytes::new(),
                Some(self.head(path).await?.size),
            ));
        }
        let r = self.get_ranged(path, &format!("-{n}"), n).await?;
        match r.status {
            206 => {
                self.partial_over(path, &r, ByteRange::Suffix(n))?;
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
            // Only an empty object has no suffix to give (`Content-Range: bytes */0`, or a
            // HEAD saying so); a 416 for anything else is the server's error.
            416 => {
                let size = match r.header("content-range").and_then(unsatisfied_size) {
                    Some(size) => size,
                    None => self.head(path).await?.size,
                };
                if size != 0 {
                    return Err(HudiError::io(
                        self.object(path),
                        format!("HTTP 416 for the last {n} bytes of a {size}-byte object"),
                    ));
                }
                Ok(Fetched::one(Bytes::new(), Some(0)))
            }
            _ => Err(status_error(&self.object(path), &r)),
        }
    }
}

/// The size in a 416's `Content-Range: bytes */<size>`.
fn unsatisfied_size(v: &str) -> Option<u64> {
    v.trim()
        .strip_prefix("bytes")?
        .trim()
        .strip_prefix("*/")?
        .trim()
        .parse()
        .ok()
}
