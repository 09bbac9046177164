//! The data files of a table found by listing its partitions (tables without a `files`
//! partition in their metadata table, and checks of one), and the file-system view built
//! from them.

use std::collections::HashSet;

use crate::error::{HudiError, Result};
use crate::file_group::view::{DataFile, FileSystemView};
use crate::meta_client::MetaClient;
use crate::storage::ObjectMeta;
use crate::timeline::Visibility;

/// Every data file under the table's partitions, by directory listing. Where the store
/// can start a listing past a key (S3 `start-after`), one listing past `.hoodie/` covers
/// every directory that sorts after it, beside the root's own listing (root files, and
/// directories that sort before `.hoodie`, listed next). Hive-style partition
/// directories all start with a field name, which sorts after `.hoodie/`: that one
/// listing is all. When it stops at its first page, the directories from the last one
/// it reached are listed one by one and concurrently, as on stores that cannot skip.
pub async fn list_data_files(client: &MetaClient) -> Result<Vec<(String, ObjectMeta)>> {
    if !client.storage().capabilities().lists_dot_files
        && client.config().table_type == crate::config::TableType::MergeOnRead
    {
        // A JSON directory index hides log files (`.<fileId>_<instant>.log.*`): listing
        // would silently drop every update since the last compaction.
        return Err(HudiError::unsupported_in(
            "listing partitions of a Merge-On-Read table through a directory index that hides dot-files (log files); \
             write a listing manifest (.hoodie/hudi-edge-manifest.json), use an S3 listing, or plan from the metadata table",
            client.storage().location(),
        ));
    }
    // `.hoodie0` sorts right after every `.hoodie/…` key ('0' follows '/').
    const PAST_HOODIE: &str = ".hoodie0";
    let top_dir = |path: &str| path.split_once('/').map(|(d, _)| d.to_string());
    let capabilities = client.storage().capabilities();
    let skips_ahead = capabilities.lists_after || capabilities.listing.is_some();
    let hive_only = client.config().is_partitioned() && client.config().hive_style_partitioning;
    let (mut root, mut after) = (None, None);
    if skips_ahead && hive_only {
        after = client.storage().list_after(PAST_HOODIE).await?;
    } else if skips_ahead {
        let (r, a) = futures::try_join!(
            client.storage().list("", false),
            client.storage().list_after(PAST_HOODIE)
        )?;
        (root, after) = (Some(r), a);
    }
    // Directories from `relist_from` on (all, without a listing past `.hoodie/`) and
    // those before `.hoodie` are listed one by one.
    let mut relist_from = Some(String::new());
    let mut files = Vec::new();
    if let Some(after) = after {
        // The last directory a first page reached may go on in the next page.
        let last = || after.objects.iter().map(|m| m.path.as_str()).max();
        relist_from = (!after.complete).then(|| last().and_then(top_dir).unwrap_or_default());
        files = after
            .objects
            .into_iter()
            .filter(|m| match top_dir(&m.path) {
                Some(d) => {
                    !d.starts_with(".hoodie") && relist_from.as_ref().is_none_or(|from| d < *from)
                }
                None => false,
            })
            .collect();
    }
    let root = match root {
        Some(r) => r,
        // Hudi writes no data at the root of a partitioned table.
        None if relist_from.is_none() => Vec::new(),
        None => client.storage().list("", false).await?,
    };
    let mut out: Vec<(String, ObjectMeta)> = root
        .iter()
        .filter(|m| !m.is_dir)
        .map(|m| (String::new(), m.clone()))
        .collect();
    let dirs: Vec<&ObjectMeta> = root
        .iter()
        .filter(|m| m.is_dir && !m.name().starts_with(".hoodie"))
        .filter(|m| {
            let d = m.path.as_str();
            d < PAST_HOODIE || relist_from.as_deref().is_some_and(|from| d >= from)
        })
        .collect();
    let listed =
        futures::future::try_join_all(dirs.iter().map(|d| client.storage().list(&d.path, true)))
            .await?;
    files.extend(listed.into_iter().flatten().filter(|m| !m.is_dir));
    for m in files {
        let partition = match m.path.rfind('/') {
            Some(i) => m.path[..i].to_string(),
            None => String::new(),
        };
        out.push((partition, m));
    }
    Ok(out)
}

/// A listing must hold every file the newest visible commit wrote: otherwise the view
/// would silently fall back to older file versions. (Replaced groups and cleaned older
/// versions are fine; a missing file of the latest commit means damage.)
pub async fn check_latest_commit_files(
    client: &MetaClient,
    visibility: &Visibility,
    listed: &[DataFile],
) -> Result<()> {
    let timeline = client.timeline();
    let Some(latest) = timeline
        .completed_writes()
        .rev()
        .find(|i| visibility.is_committed(&i.requested_time))
    else {
        return Ok(());
    };
    let meta = client.commit_metadata(latest).await?;
    let present: HashSet<String> = listed
        .iter()
        .map(|f| crate::storage::join(&f.partition, &f.name))
        .collect();
    for (_, stat) in meta.write_stats() {
        let Some(path) = stat.path.as_deref().map(|p| p.trim_start_matches('/')) else {
            continue;
        };
        if !path.is_empty() && !present.contains(path) {
            return Err(HudiError::NotFound {
                path: format!(
                    "{path} (written by commit {}, listed in {})",
                    latest.requested_time, latest.file
                ),
            });
        }
    }
    Ok(())
}

/// File groups and slices as of an instant (latest when `None`), by listing.
pub async fn file_system_view(client: &MetaClient, as_of: Option<&str>) -> Result<FileSystemView> {
    let as_of = as_of
        .map(|t| crate::timeline::time::resolve_time(t, client.config().timezone))
        .transpose()?;
    let visibility = client.timeline().visibility_as_of(as_of.as_deref());
    // The replacecommits' metadata is read beside the listings: one round trip fewer.
    let (listed, replaced) = futures::try_join!(
        list_data_files(client),
        replaced_file_groups(client, &visibility)
    )?;
    let files = listed.into_iter().map(|(partition, m)| DataFile {
        name: m.name().to_string(),
        partition,
        size: m.size,
    });
    Ok(crate::file_group::view::build(
        files,
        &visibility,
        client.config(),
        &replaced,
    ))
}

/// File groups replaced (insert overwrite, clustering) by replace commits visible at
/// `visibility`: the view leaves them out.
pub async fn replaced_file_groups(
    client: &MetaClient,
    visibility: &Visibility,
) -> Result<HashSet<(String, String)>> {
    let timeline = client.timeline();
    let replaces: Vec<&crate::timeline::Instant> = timeline
        .completed_writes()
        .filter(|i| {
            i.action == crate::timeline::action::REPLACE_COMMIT
                && visibility.is_committed(&i.requested_time)
        })
        .collect();
    let metas = client.commit_metadata_of(&replaces).await?;
    Ok(metas
        .iter()
        .flat_map(|m| {
            m.replaced_file_ids()
                .map(|(p, f)| (p.to_string(), f.to_string()))
                .collect::<Vec<_>>()
        })
        .collect())
}

#[cfg(test)]
#[path = "listing_tests.rs"]
mod tests;
