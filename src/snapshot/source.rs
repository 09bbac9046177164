//! Where a plan's data files come from: the metadata table's `files` partition when it can
//! be used (no listing of data partitions), else a listing of storage (which a listing
//! manifest may answer). The plan notes say which, and why.

use std::sync::Arc;

use super::listing::{check_latest_commit_files, list_data_files};
use super::Source;
use crate::error::{HudiError, Result};
use crate::file_group::view::DataFile;
use crate::meta_client::MetaClient;
use crate::metadata::{MetadataCache, MetadataTable};
use crate::timeline::Visibility;

/// The data files to plan from and, when it planned, the metadata table (its indexes
/// prune next).
/// `opened` is [`metadata_for_planning`]'s answer.
pub(super) async fn data_files(
    client: &MetaClient,
    opened: std::result::Result<Arc<MetadataTable>, String>,
    visibility: &Visibility,
    source: &mut Source,
) -> Result<(Vec<DataFile>, Option<Arc<MetadataTable>>)> {
    if visibility.instants().next().is_none() {
        source.kind = "timeline".into();
        source
            .notes
            .push("no completed commit is visible: nothing to read".into());
        return Ok((Vec::new(), None));
    }
    let reason = match opened {
        Ok(mdt) => match files_from_metadata(client, &mdt, visibility).await {
            Ok(Ok(files)) => {
                source.kind = "metadata_table".into();
                source.notes.push(format!(
                    "data files from the metadata table's files partition (latest valid metadata instant {}): no listing of data partitions",
                    mdt.latest_instant().unwrap_or_default()
                ));
                if !mdt.orphan_instants().is_empty() {
                    source.notes.push(format!(
                        "metadata delta commit(s) {} have no completed data instant: their files are not committed data",
                        mdt.orphan_instants().join(", ")
                    ));
                }
                return Ok((files, Some(mdt)));
            }
            Ok(Err(missing)) => missing,
            Err(e) => format!("the metadata table's files partition cannot be read ({e})"),
        },
        Err(reason) => reason,
    };
    source.kind = "listing".into();
    source.notes.push(format!("listing storage: {reason}"));
    let files: Vec<DataFile> = list_data_files(client)
        .await?
        .into_iter()
        .map(|(partition, m)| DataFile {
            name: m.name().to_string(),
            partition,
            size: m.size,
        })
        .collect();
    check_latest_commit_files(client, visibility, &files).await?;
    Ok((files, None))
}

/// Every partition's files from the `files` partition, or why they cannot be trusted: like
/// a listing, they must hold every file the newest visible commit wrote.
async fn files_from_metadata(
    client: &MetaClient,
    mdt: &MetadataTable,
    visibility: &Visibility,
) -> Result<std::result::Result<Vec<DataFile>, String>> {
    let partitions = mdt.all_partitions().await?;
    let files = mdt.files(&partitions).await?;
    match check_latest_commit_files(client, visibility, &files).await {
        Ok(()) => Ok(Ok(files)),
        Err(HudiError::NotFound { path }) => Ok(Err(format!(
            "the metadata table's files partition misses {path}"
        ))),
        Err(e) => Err(e),
    }
}

/// The metadata table when the options and the table allow planning with it, else why not.
/// Its open also lists the MDT partitions in `prefetch`, in the same round trip; with no
/// visible commit there is nothing to plan and it is not opened.
pub(super) async fn metadata_for_planning(
    client: &MetaClient,
    metadata: &MetadataCache,
    use_metadata_table: bool,
    visibility: &Visibility,
    prefetch: &[&str],
) -> std::result::Result<Arc<MetadataTable>, String> {
    let config = client.config();
    if visibility.instants().next().is_none() {
        return Err("no completed commit is visible".into());
    }
    if !use_metadata_table {
        return Err("the metadata table is turned off by the read options".into());
    }
    if !config.metadata_files_available() {
        return Err(
            "the table has no complete metadata `files` partition (hoodie.table.metadata.partitions)"
                .into(),
        );
    }
    if config.version < 8 {
        return Err(format!(
            "metadata tables of table version {} (0.x layout) are not read",
            config.version
        ));
    }
    metadata.get(client, prefetch).await.map_err(|e| match e {
        HudiError::NotFound { path } => format!("no metadata table ({path} not found)"),
        other => format!("the metadata table is unusable ({other})"),
    })
}
