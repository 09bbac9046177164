//! Every Hudi table under a prefix or folder: a folder holding `.hoodie/hoodie.properties`
//! is a table, and nothing inside a table is searched further (its metadata table, or a
//! table copied into one of its folders, are not separate tables). Listing is breadth first,
//! a bounded number of folders at once, and stops at a depth, a number of listings and a
//! number of objects seen, saying which limit it met.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use serde::Serialize;

use super::{Finding, Severity};
use crate::config::layout::{HOODIE_DIR, PROPERTIES_FILE};
use crate::error::{HudiError, Result};
use crate::meta_client::MetaClient;
use crate::storage::{Prefixed, Storage};

/// How far a discovery looks.
#[derive(Debug, Clone)]
pub struct DiscoverOptions {
    /// Folders below the root searched at most (the root is depth 0).
    pub max_depth: usize,
    /// Folder listings at most.
    pub max_listings: usize,
    /// Objects and folders seen at most.
    pub max_objects: usize,
    /// Listings (and table reports) in flight at once.
    pub concurrency: usize,
    /// Compute each table's health (its findings); else only its properties are read.
    pub health: bool,
    /// Write settings the health reports read (`hoodie.*`).
    pub options: BTreeMap<String, String>,
    /// The caller's clock (epoch ms).
    pub now_ms: i64,
}

impl Default for DiscoverOptions {
    fn default() -> Self {
        DiscoverOptions {
            max_depth: 6,
            max_listings: 2_000,
            max_objects: 100_000,
            concurrency: 16,
            health: true,
            options: BTreeMap::new(),
            now_ms: 0,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify_next::Tsify),
    serde(rename_all = "camelCase")
)]
pub struct Discovery {
    /// The root as given.
    pub root: String,
    pub tables: Vec<DiscoveredTable>,
    pub listings: usize,
    pub objects_seen: usize,
    /// A limit stopped the search: tables beyond it were not looked for.
    pub truncated: bool,
    /// Which limits were met, in words.
    pub limits: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(
    target_arch = "wasm32",
    derive(tsify_next::Tsify),
    serde(rename_all = "camelCase")
)]
pub struct DiscoveredTable {
    /// The table's root: the root as given plus `path`.
    pub location: String,
    /// Relative to the root (`""`: the root is a table).
    pub path: String,
    pub name: String,
    pub table_type: String,
    pub version: u32,
    /// Bytes of the latest file slices (with health).
    pub bytes: Option<u64>,
    pub file_groups: Option<usize>,
    pub last_commit: Option<String>,
    /// Findings by severity (`info`, `warning`, `critical`).
    pub severities: BTreeMap<String, usize>,
    pub findings: Vec<Finding>,
    /// Why the table could not be read (its properties or its health).
    pub error: Option<String>,
}

/// Finds the tables under the root of `storage` (which must be able to list).
pub async fn discover(storage: Arc<dyn Storage>, options: &DiscoverOptions) -> Result<Discovery> {
    if options.concurrency == 0 {
        return Err(HudiError::invalid(
            "discovery needs a concurrency of at least 1",
        ));
    }
    let root = storage.location();
    let mut out = Discovery {
        root: root.clone(),
        tables: Vec::new(),
        listings: 0,
        objects_seen: 0,
        truncated: false,
        limits: Vec::new(),
    };
    let mut found: Vec<String> = Vec::new();
    let mut level: Vec<String> = vec![String::new()];
    let mut depth = 0;
    while !level.is_empty() {
        let room = options.max_listings.saturating_sub(out.listings);
        if level.len() > room {
            out.truncated = true;
            out.limits.push(format!(
                "stopped after {} folder listings (the listing limit); {} folders at depth {depth} not listed",
                options.max_listings,
                level.len() - room
            ));
            level.truncate(room);
        }
        // A listing that hides dot-files (a JSON directory index) never shows `.hoodie`:
        // each folder is asked for its properties beside its listing instead.
        let probe = !storage.capabilities().lists_dot_files;
        let listed: Vec<(String, Result<Vec<crate::storage::ObjectMeta>>, bool)> =
            futures::stream::iter(level.drain(..).map(|dir| {
                let storage = storage.clone();
                async move {
                    let properties = crate::storage::join(&dir, PROPERTIES_FILE);
                    let (listed, found) = futures::join!(storage.list(&dir, false), async {
                        probe && storage.head(&properties).await.is_ok()
                    });
                    (dir, listed, found)
                }
            }))
            .buffer_unordered(options.concurrency)
            .collect()
            .await;
        out.listings += listed.len();
        let mut next = Vec::new();
        for (dir, listed, probed) in listed {
            if probed {
                found.push(dir);
                continue;
            }
            let entries = match listed {
                Ok(e) => e,
                // A folder gone between its parent's listing and its own.
                Err(HudiError::NotFound { .. }) => continue,
                Err(e) => return Err(e),
            };
            out.objects_seen += entries.len();
            let is_table = entries
                .iter()
                .any(|m| m.is_dir && m.name_trimmed() == HOODIE_DIR);
            if is_table {
                found.push(dir);
                continue;
            }
            next.extend(
                entries
                    .into_iter()
                    .filter(|m| m.is_dir && !m.name_trimmed().starts_with('.'))
                    .map(|m| m.path.trim_end_matches('/').to_string()),
            );
        }
        if out.objects_seen > options.max_objects {
            out.truncated = true;
            out.limits.push(format!(
                "stopped after seeing {} objects (the object limit {}); folders below depth {depth} not listed",
                out.objects_seen, options.max_objects
            ));
            break;
        }
        depth += 1;
        if depth > options.max_depth && !next.is_empty() {
            out.truncated = true;
            out.limits.push(format!(
                "stopped at depth {} (the depth limit); {} folders below it not listed",
                options.max_depth,
                next.len()
            ));
            break;
        }
        next.sort();
        level = next;
    }
    found.sort();
    let reports: Vec<DiscoveredTable> = futures::stream::iter(found.into_iter().map(|path| {
        let storage = storage.clone();
        let root = root.clone();
        async move { describe(storage, &root, path, options).await }
    }))
    .buffered(options.concurrency.min(4))
    .collect()
    .await;
    out.tables = reports;
    Ok(out)
}

trait NameTrimmed {
    fn name_trimmed(&self) -> &str;
}

impl NameTrimmed for crate::storage::ObjectMeta {
    /// The last segment of a folder's path, whether or not it ends in `/`.
    fn name_trimmed(&self) -> &str {
        let p = self.path.trim_end_matches('/');
        p.rsplit('/').next().unwrap_or(p)
    }
}

/// One table's row: its properties, and its health when asked.
async fn describe(
    storage: Arc<dyn Storage>,
    root: &str,
    path: String,
    options: &DiscoverOptions,
) -> DiscoveredTable {
    let location = if path.is_empty() {
        root.to_string()
    } else {
        format!("{}/{path}", root.trim_end_matches('/'))
    };
    let mut row = DiscoveredTable {
        location,
        path: path.clone(),
        name: String::new(),
        table_type: String::new(),
        version: 0,
        bytes: None,
        file_groups: None,
        last_commit: None,
        severities: BTreeMap::new(),
        findings: Vec::new(),
        error: None,
    };
    let table: Arc<dyn Storage> = if path.is_empty() {
        storage
    } else {
        Arc::new(Prefixed::new(storage, &path))
    };
    let client = match MetaClient::open(table).await {
        Ok(c) => c,
        Err(e) => {
            row.error = Some(e.to_string());
            return row;
        }
    };
    let config = client.config();
    row.name = config.name.clone();
    row.table_type = config.table_type.as_str().to_string();
    row.version = config.version;
    row.last_commit = client
        .timeline()
        .completed()
        .rfind(|i| !i.archived && i.is_write())
        .map(|i| i.requested_time.clone());
    if !options.health {
        return row;
    }
    match super::health(&client, &options.options, options.now_ms).await {
        Ok(h) => {
            row.bytes = Some(h.base_bytes + h.log_bytes);
            row.file_groups = Some(h.file_groups);
            for f in &h.findings {
                let name = match f.severity {
                    Severity::Info => "info",
                    Severity::Warning => "warning",
                    Severity::Critical => "critical",
                };
                *row.severities.entry(name.to_string()).or_default() += 1;
            }
            row.findings = h.findings;
        }
        Err(e) => row.error = Some(e.to_string()),
    }
    row
}
