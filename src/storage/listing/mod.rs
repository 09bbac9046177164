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

mod autoindex;
mod manifest;
mod s3;

pub use autoindex::{autoindex_may_list, parse_autoindex};
pub use manifest::{Manifest, ManifestEntry};
#[cfg(feature = "http")]
pub use s3::{parse_s3_list, S3Page};
pub use s3::{s3_dir_key, s3_list_query, uri_encode};

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

#[cfg(test)]
mod tests;
