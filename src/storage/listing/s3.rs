//! S3 `ListObjectsV2`: the request's query and the XML pages of its answer, keys made
//! relative to the table's root.

use super::trim;
#[cfg(feature = "http")]
use crate::error::{HudiError, Result};
#[cfg(feature = "http")]
use crate::storage::path::within_table;
#[cfg(feature = "http")]
use crate::storage::ObjectMeta;

/// One page of a `ListObjectsV2` answer, keys made relative to `root` (the table's key
/// prefix, without a trailing `/`).
#[cfg(feature = "http")]
#[derive(Debug, Default)]
pub struct S3Page {
    pub objects: Vec<ObjectMeta>,
    pub next_token: Option<String>,
}

/// The query of a `ListObjectsV2` request for `prefix` under `root`; `start_after` (a path
/// under `root`) skips every key that sorts before it.
pub fn s3_list_query(
    root: &str,
    prefix: &str,
    recursive: bool,
    token: Option<&str>,
    start_after: Option<&str>,
) -> String {
    let mut q = format!(
        "list-type=2&prefix={}",
        uri_encode(&s3_dir_key(root, prefix))
    );
    if !recursive {
        q.push_str("&delimiter=%2F");
    }
    if let Some(after) = start_after {
        q.push_str("&start-after=");
        q.push_str(&uri_encode(&format!("{}{after}", s3_dir_key(root, ""))));
    }
    if let Some(t) = token {
        q.push_str("&continuation-token=");
        q.push_str(&uri_encode(t));
    }
    q
}

/// RFC 3986 percent-encoding of everything but unreserved characters (what S3 expects).
pub fn uri_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The key prefix of directory `prefix` under `root`: `root/prefix/` (or `""`).
pub fn s3_dir_key(root: &str, prefix: &str) -> String {
    let (root, prefix) = (trim(root), trim(prefix));
    let k = match (root.is_empty(), prefix.is_empty()) {
        (_, true) => root.to_string(),
        (true, false) => prefix.to_string(),
        (false, false) => format!("{root}/{prefix}"),
    };
    if k.is_empty() {
        k
    } else {
        format!("{k}/")
    }
}

#[cfg(feature = "http")]
fn relative(root: &str, key: &str) -> Option<String> {
    let root = trim(root);
    let rel = if root.is_empty() {
        key
    } else {
        key.strip_prefix(root)?.strip_prefix('/')?
    };
    let rel = rel.trim_end_matches('/');
    (!rel.is_empty()).then(|| rel.to_string())
}

#[cfg(feature = "http")]
pub fn parse_s3_list(body: &[u8], root: &str, what: &str) -> Result<S3Page> {
    use quick_xml::events::Event;
    let corrupt = |e: &dyn std::fmt::Display| {
        HudiError::corrupt(what, format!("bad ListObjectsV2 answer: {e}"))
    };
    let mut reader = quick_xml::Reader::from_reader(body);
    let mut page = S3Page::default();
    let mut stack: Vec<String> = Vec::new();
    let mut text = String::new();
    let mut key = String::new();
    let mut size = 0u64;
    let mut etag: Option<String> = None;
    let mut modified: Option<i64> = None;
    let mut truncated = false;
    let mut saw_root = false;
    let mut buf = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| corrupt(&e))?;
        match event {
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                if stack.is_empty() {
                    if name == "Error" {
                        return Err(HudiError::io(
                            what,
                            "the listing answered an S3 error document",
                        ));
                    }
                    saw_root = name == "ListBucketResult";
                }
                stack.push(name);
                text.clear();
            }
            Event::Text(t) => text.push_str(&t.decode().map_err(|e| corrupt(&e))?),
            Event::CData(t) => text.push_str(&String::from_utf8_lossy(&t)),
            Event::GeneralRef(r) => {
                let name = r.decode().map_err(|e| corrupt(&e))?;
                if let Some(num) = name.strip_prefix('#') {
                    let code = match num.strip_prefix('x') {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => num.parse().ok(),
                    };
                    text.extend(code.and_then(char::from_u32));
                } else if let Some(s) = quick_xml::escape::resolve_predefined_entity(&name) {
                    text.push_str(s);
                }
            }
            Event::End(_) => {
                let name = stack.pop().unwrap_or_default();
                let parent = stack.last().map(String::as_str).unwrap_or("");
                match (parent, name.as_str()) {
                    ("Contents", "Key") | ("CommonPrefixes", "Prefix") => key = text.clone(),
                    ("Contents", "Size") => size = text.trim().parse().map_err(|e| corrupt(&e))?,
                    ("Contents", "ETag") => etag = Some(text.clone()),
                    ("Contents", "LastModified") => {
                        modified = chrono::DateTime::parse_from_rfc3339(text.trim())
                            .ok()
                            .map(|t| t.timestamp_millis())
                    }
                    ("ListBucketResult", "IsTruncated") => truncated = text.trim() == "true",
                    ("ListBucketResult", "NextContinuationToken") => {
                        page.next_token = Some(text.clone())
                    }
                    ("ListBucketResult", "Contents") | ("ListBucketResult", "CommonPrefixes") => {
                        let is_dir = name == "CommonPrefixes";
                        let path = relative(root, &key)
                            .map(|p| within_table(&p, what))
                            .transpose()?;
                        if let Some(path) = path {
                            // Skip "folder marker" objects (keys ending in `/`).
                            if is_dir || !key.ends_with('/') {
                                page.objects.push(ObjectMeta {
                                    path,
                                    size: if is_dir { 0 } else { size },
                                    last_modified_ms: if is_dir { None } else { modified },
                                    etag: if is_dir { None } else { etag.take() },
                                    is_dir,
                                });
                            }
                        }
                        key.clear();
                        size = 0;
                        etag = None;
                        modified = None;
                    }
                    _ => {}
                }
                text.clear();
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !saw_root {
        return Err(corrupt(&"no ListBucketResult element"));
    }
    if !truncated {
        page.next_token = None;
    } else if page.next_token.is_none() {
        return Err(corrupt(&"truncated without a NextContinuationToken"));
    }
    Ok(page)
}
