//! nginx `autoindex_format json` directory pages, and the folders they may not list (they
//! hide dot-files).

use serde::Deserialize;

use super::{trim, MANIFEST_PATH};
use crate::error::{HudiError, Result};
use crate::storage::path::plain_name;
use crate::storage::{join, ObjectMeta};

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
    // A page that is not a JSON index says what the host can do, not that the table is
    // damaged: an HTML index (python -m http.server, Apache) or no index at all.
    let entries: Vec<AutoindexEntry> = serde_json::from_slice(body).map_err(|_| {
        let what = if body.trim_ascii_start().starts_with(b"<") {
            "an HTML page"
        } else {
            "a page that is not a JSON directory index"
        };
        HudiError::unsupported_in(
            format!(
                "listing a table on a host that does not list directories as JSON ({page} answered {what}; \
                 nginx `autoindex_format json` or S3 ListObjectsV2 lists): write a listing manifest \
                 ({MANIFEST_PATH}, `npx hudi-edge manifest TABLE_DIR` or the CLI's `hudi-edge manifest`) \
                 and serve it with the table"
            ),
            &page,
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
