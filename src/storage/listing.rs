//! Listing a table on hosts without a native list API: the three sources a plain HTTP host
//! can offer, parsed here once for every storage that needs them.
//!
//! - **S3 `ListObjectsV2`** XML (an S3-compatible endpoint, or a presigned listing URL);
//! - **nginx `autoindex_format json`** directory pages. They never show names starting with
//!   a dot, so they are trusted only where Hudi writes no dot-files: timeline folders and
//!   partitions of Copy-On-Write tables. Listing the v6 archive (`.commits_.archive.*`) or a
//!   metadata-table partition (log files are `.<fileId>_<instant>.log.*`) through them is
//!   refused here, and [`crate::meta_client::MetaClient::list_data_files`] refuses Merge-On-Read
//!   partitions (see [`super::Capabilities::lists_dot_files`]);
//! - a **static manifest** (`.hoodie/hudi-edge-manifest.json`, written by
//!   `hudi-edge manifest TABLE`) naming every file under the table with its size.
//!
//! The manifest (format version 1):
//! ```json
//! { "format": "hudi-edge-manifest", "version": 1,
//!   "table": "trips", "tableVersion": 9, "createdAt": "2026-01-02T03:04:05Z",
//!   "latestInstant": "20260102030400123",
//!   "dirs": { ".hoodie/timeline": [["20260102030400123_20260102030401456.commit", 2741, 1767323041000]],
//!             "region=us": [["6f1c...-0_0-8-9_20260102030400123.parquet", 435122]] } }
//! ```
//! `dirs` maps each directory (relative to the table's base path, `""` = the base path) to
//! its files as `[name, size]` or `[name, size, mtimeMillis]`; a directory's sub-directories
//! are the other keys under it. Readers see the table as of the manifest: rewrite it after
//! each commit (and clean). `.hoodie/.temp` (in-flight markers) is not listed.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::path::{plain_name, within_table};
use super::{join, ObjectMeta};
use crate::error::{HudiError, Result};

/// Deepest directory an autoindex listing descends to (a symlink loop on a server would
/// otherwise recurse forever).
pub const MAX_LISTING_DEPTH: usize = 32;
/// Most requests (autoindex directories, S3 pages) the listings a storage runs at once make
/// together.
pub const MAX_LISTING_REQUESTS: usize = 5_000;
/// Most entries they gather together.
pub const MAX_LISTING_ENTRIES: usize = 1_000_000;
/// Largest listing page, manifest or JSON directory index read.
pub const MAX_LISTING_PAGE_BYTES: u64 = 64 * 1024 * 1024;

/// Where the manifest lives, relative to the table's base path.
pub const MANIFEST_PATH: &str = ".hoodie/hudi-edge-manifest.json";
pub const MANIFEST_FORMAT: &str = "hudi-edge-manifest";

/// How a storage without a native list API answers `list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListingMode {
    /// The manifest when the table has one, else the host's JSON directory index.
    #[default]
    Auto,
    /// S3 `ListObjectsV2` (paginated).
    S3,
    /// nginx `autoindex_format json` pages (hide dot-files; see the module doc).
    Autoindex,
    /// Only the manifest.
    Manifest,
}

impl ListingMode {
    pub fn parse(s: &str) -> Result<ListingMode> {
        match s {
            "auto" | "" => Ok(ListingMode::Auto),
            "s3" => Ok(ListingMode::S3),
            "autoindex" => Ok(ListingMode::Autoindex),
            "manifest" => Ok(ListingMode::Manifest),
            other => Err(HudiError::invalid(format!(
                "unknown listing {other:?} (auto, s3, autoindex, manifest)"
            ))),
        }
    }
}

fn trim(prefix: &str) -> &str {
    prefix.trim_matches('/')
}

// ---------------------------------------------------------------------------------------
// The manifest

/// One file: name, size, optional modification time (epoch millis).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry(pub String, pub u64, #[serde(default)] pub Option<i64>);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    #[serde(default)]
    pub table: Option<String>,
    #[serde(default)]
    pub table_version: Option<u32>,
    #[serde(default)]
    pub created_at: Option<String>,
    #[serde(default)]
    pub latest_instant: Option<String>,
    pub dirs: BTreeMap<String, Vec<ManifestEntry>>,
}

/// Files a manifest leaves out: in-flight markers and itself.
fn excluded(path: &str) -> bool {
    path == MANIFEST_PATH || path.starts_with(".hoodie/.temp/") || path.contains("/.hoodie/.temp/")
}

impl Manifest {
    /// A manifest of `files` (a recursive listing of the base path).
    pub fn from_files<'a>(files: impl IntoIterator<Item = &'a ObjectMeta>) -> Manifest {
        let mut dirs: BTreeMap<String, Vec<ManifestEntry>> = BTreeMap::new();
        for f in files {
            if f.is_dir || excluded(&f.path) {
                continue;
            }
            let (dir, name) = match f.path.rfind('/') {
                Some(i) => (&f.path[..i], &f.path[i + 1..]),
                None => ("", f.path.as_str()),
            };
            dirs.entry(dir.to_string()).or_default().push(ManifestEntry(
                name.to_string(),
                f.size,
                f.last_modified_ms,
            ));
        }
        for entries in dirs.values_mut() {
            entries.sort_by(|a, b| a.0.cmp(&b.0));
        }
        Manifest {
            format: MANIFEST_FORMAT.into(),
            version: 1,
            table: None,
            table_version: None,
            created_at: None,
            latest_instant: None,
            dirs,
        }
    }

    /// Parses a manifest; every directory is normalised inside the table and every name is
    /// a plain file name, or the manifest is `CORRUPT` (requests carry the table's headers).
    pub fn parse(bytes: &[u8], path: &str) -> Result<Manifest> {
        let mut m: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| HudiError::corrupt(path, format!("not a hudi-edge manifest: {e}")))?;
        if m.format != MANIFEST_FORMAT {
            return Err(HudiError::corrupt(
                path,
                format!("format is {:?}, expected {MANIFEST_FORMAT:?}", m.format),
            ));
        }
        if m.version != 1 {
            return Err(HudiError::unsupported_in(
                format!("manifest version {}", m.version),
                path,
            ));
        }
        let mut dirs: BTreeMap<String, Vec<ManifestEntry>> = BTreeMap::new();
        for (dir, entries) in std::mem::take(&mut m.dirs) {
            for e in &entries {
                plain_name(&e.0, path)?;
            }
            dirs.entry(within_table(&dir, path)?)
                .or_default()
                .extend(entries);
        }
        m.dirs = dirs;
        Ok(m)
    }

    pub fn to_json(&self) -> Vec<u8> {
        // A manifest is plain data: serializing it cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn num_files(&self) -> usize {
        self.dirs.values().map(Vec::len).sum()
    }

    fn files_of(&self, dir: &str, out: &mut Vec<ObjectMeta>) {
        if let Some(entries) = self.dirs.get(dir) {
            out.extend(
                entries
                    .iter()
                    .map(|ManifestEntry(name, size, mtime)| ObjectMeta {
                        path: join(dir, name),
                        size: *size,
                        last_modified_ms: *mtime,
                        etag: None,
                        is_dir: false,
                    }),
            );
        }
    }

    /// `Storage::list` answered from the manifest.
    pub fn list(&self, prefix: &str, recursive: bool) -> Vec<ObjectMeta> {
        let prefix = trim(prefix);
        let under =
            |d: &str| prefix.is_empty() || d == prefix || d.starts_with(&format!("{prefix}/"));
        let mut out = Vec::new();
        if recursive {
            for dir in self.dirs.keys().filter(|d| under(d)) {
                self.files_of(dir, &mut out);
            }
            return out;
        }
        self.files_of(prefix, &mut out);
        let mut subdirs = BTreeSet::new();
        for dir in self
            .dirs
            .keys()
            .filter(|d| under(d) && d.as_str() != prefix)
        {
            let rest = if prefix.is_empty() {
                dir.as_str()
            } else {
                &dir[prefix.len() + 1..]
            };
            if let Some(first) = rest.split('/').next().filter(|s| !s.is_empty()) {
                subdirs.insert(join(prefix, first));
            }
        }
        out.extend(subdirs.into_iter().map(|path| ObjectMeta {
            path,
            size: 0,
            last_modified_ms: None,
            etag: None,
            is_dir: true,
        }));
        out
    }
}

// ---------------------------------------------------------------------------------------
// nginx JSON autoindex

#[derive(Deserialize)]
struct AutoindexEntry {
    name: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    mtime: Option<String>,
    #[serde(default)]
    size: Option<u64>,
}

/// Refuses directories whose Hudi files start with a dot, which a JSON autoindex hides:
/// a wrong (short) answer there would be silent.
pub fn autoindex_may_list(prefix: &str) -> Result<()> {
    let p = trim(prefix);
    let refused = p == ".hoodie/archived"
        || p.starts_with(".hoodie/archived/")
        || p.strip_prefix(".hoodie/metadata/")
            .is_some_and(|rest| !(rest == ".hoodie" || rest.starts_with(".hoodie/")));
    if refused {
        return Err(HudiError::unsupported_in(
            "listing this folder through a JSON directory index: it hides dot-files (Hudi log and archive files); \
             use an S3 listing or write a listing manifest (.hoodie/hudi-edge-manifest.json)",
            p,
        ));
    }
    Ok(())
}

/// Parses one autoindex page (the listing of directory `dir`): `.` and `..` are skipped,
/// any other name that is not a plain file name makes the page `CORRUPT`.
pub fn parse_autoindex(body: &[u8], dir: &str) -> Result<Vec<ObjectMeta>> {
    let page = format!("{}/", trim(dir));
    let entries: Vec<AutoindexEntry> = serde_json::from_slice(body).map_err(|e| {
        HudiError::corrupt(
            &page,
            format!("not a JSON directory index (nginx `autoindex_format json`): {e}"),
        )
    })?;
    entries
        .into_iter()
        .filter(|e| e.name != "." && e.name != "..")
        .map(|e| {
            plain_name(&e.name, &page)?;
            Ok(ObjectMeta {
                path: join(trim(dir), &e.name),
                size: e.size.unwrap_or(0),
                last_modified_ms: e
                    .mtime
                    .as_deref()
                    .and_then(|t| chrono::DateTime::parse_from_rfc2822(t).ok())
                    .map(|t| t.timestamp_millis()),
                etag: None,
                is_dir: e.kind == "directory",
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// S3 ListObjectsV2

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

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<ObjectMeta> {
        vec![
            ObjectMeta::file(".hoodie/hoodie.properties", 10),
            ObjectMeta::file(".hoodie/timeline/1_2.commit", 20),
            ObjectMeta::file(".hoodie/.temp/1/marker", 1),
            ObjectMeta::file(MANIFEST_PATH, 1),
            ObjectMeta::file("a=1/b=2/f.parquet", 30),
            ObjectMeta::file("a=1/.f.log.1_0", 40),
            ObjectMeta::file("root.parquet", 50),
        ]
    }

    #[test]
    fn manifest_round_trip_and_listing() {
        let m = Manifest::from_files(&files());
        let m = Manifest::parse(&m.to_json(), MANIFEST_PATH).unwrap();
        assert_eq!(m.num_files(), 5);
        let names = |v: Vec<ObjectMeta>| {
            let mut v: Vec<_> = v.into_iter().map(|m| (m.path, m.is_dir)).collect();
            v.sort();
            v
        };
        assert_eq!(
            names(m.list("", false)),
            vec![
                (".hoodie".into(), true),
                ("a=1".into(), true),
                ("root.parquet".into(), false)
            ]
        );
        assert_eq!(
            names(m.list("a=1", false)),
            vec![("a=1/.f.log.1_0".into(), false), ("a=1/b=2".into(), true)]
        );
        assert_eq!(names(m.list("a=1/", true)).len(), 2);
        assert_eq!(names(m.list(".hoodie/timeline", false)).len(), 1);
        assert!(m.list("nope", true).is_empty());
        assert!(Manifest::parse(b"{}", "m").is_err());
        assert!(Manifest::parse(br#"{"format":"x","version":1,"dirs":{}}"#, "m").is_err());
    }

    #[test]
    fn manifest_and_listing_entries_stay_in_the_table() {
        let parse = |dirs: &str| {
            let json = format!(r#"{{"format":"hudi-edge-manifest","version":1,"dirs":{dirs}}}"#);
            Manifest::parse(json.as_bytes(), MANIFEST_PATH)
        };
        let m = parse(r#"{"a/./b/":[["f",1]]}"#).unwrap();
        assert_eq!(m.list("a/b", false)[0].path, "a/b/f");
        for bad in [
            r#"{"../x":[["f",1]]}"#,
            r#"{"a":[["../f",1]]}"#,
            r#"{"/etc":[]}"#,
        ] {
            let e = parse(bad).unwrap_err();
            assert_eq!(
                (e.code(), e.object()),
                ("CORRUPT", Some(MANIFEST_PATH)),
                "{bad}"
            );
        }
        let page = br#"[{"name":"..","type":"directory"},{"name":"a/../../b","type":"file"}]"#;
        assert_eq!(parse_autoindex(page, "p").unwrap_err().code(), "CORRUPT");
        #[cfg(feature = "http")]
        {
            let xml = br#"<ListBucketResult><IsTruncated>false</IsTruncated>
<Contents><Key>t/../../x</Key><Size>1</Size></Contents></ListBucketResult>"#;
            let e = parse_s3_list(xml, "t", "s3://b/t").unwrap_err();
            assert_eq!((e.code(), e.object()), ("CORRUPT", Some("s3://b/t")));
        }
    }

    #[test]
    fn autoindex_pages() {
        let body = br#"[{ "name":"timeline", "type":"directory", "mtime":"Tue, 10 Oct 2023 10:00:00 GMT" },
            { "name":"hoodie.properties", "type":"file", "mtime":"Tue, 10 Oct 2023 10:00:00 GMT", "size":942 }]"#;
        let v = parse_autoindex(body, ".hoodie/").unwrap();
        assert_eq!(v[0].path, ".hoodie/timeline");
        assert!(v[0].is_dir);
        assert_eq!(v[1].size, 942);
        assert_eq!(v[1].last_modified_ms, Some(1696932000000));
        assert!(parse_autoindex(b"<html>", "x").is_err());
        assert!(autoindex_may_list(".hoodie/timeline").is_ok());
        assert!(autoindex_may_list(".hoodie/metadata/.hoodie/timeline").is_ok());
        assert!(autoindex_may_list(".hoodie/metadata/files").is_err());
        assert!(autoindex_may_list(".hoodie/archived").is_err());
    }

    #[cfg(feature = "http")]
    #[test]
    fn s3_pages() {
        let xml = br#"<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>t/</Prefix>
<IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;1</NextContinuationToken>
<Contents><Key>t/a&amp;b.parquet</Key><LastModified>2024-01-02T03:04:05.000Z</LastModified><ETag>&quot;e1&quot;</ETag><Size>12</Size></Contents>
<CommonPrefixes><Prefix>t/.hoodie/</Prefix></CommonPrefixes></ListBucketResult>"#;
        let p = parse_s3_list(xml, "t", "list").unwrap();
        assert_eq!(p.next_token.as_deref(), Some("tok&1"));
        assert_eq!(p.objects[0].path, "a&b.parquet");
        assert_eq!(p.objects[0].etag.as_deref(), Some("\"e1\""));
        assert_eq!(p.objects[0].size, 12);
        assert_eq!(p.objects[1].path, ".hoodie");
        assert!(p.objects[1].is_dir);
        assert!(parse_s3_list(b"<Error><Code>AccessDenied</Code></Error>", "", "l").is_err());
        assert!(parse_s3_list(b"junk", "", "l").is_err());
        assert_eq!(s3_dir_key("t/x", ""), "t/x/");
        assert_eq!(s3_dir_key("", ""), "");
        assert_eq!(s3_dir_key("", "p=1"), "p=1/");
        assert_eq!(
            s3_list_query("t", ".hoodie", false, Some("a b"), None),
            "list-type=2&prefix=t%2F.hoodie%2F&delimiter=%2F&continuation-token=a%20b"
        );
        assert_eq!(
            s3_list_query("t", "", true, None, Some(".hoodie0")),
            "list-type=2&prefix=t%2F&start-after=t%2F.hoodie0"
        );
    }
}
