//! The data files of a table found by listing its partitions (tables without a `files`
//! partition in their metadata table, and checks of one).

use super::*;

impl MetaClient {
    /// Every data file under the table's partitions, by directory listing. Where the store
    /// can start a listing past a key (S3 `start-after`), one listing past `.hoodie/` covers
    /// every directory that sorts after it, beside the root's own listing (root files, and
    /// directories that sort before `.hoodie`, listed next). Hive-style partition
    /// directories all start with a field name, which sorts after `.hoodie/`: that one
    /// listing is all. When it stops at its first page, the directories from the last one
    /// it reached are listed one by one and concurrently, as on stores that cannot skip.
    pub async fn list_data_files(&self) -> Result<Vec<(String, ObjectMeta)>> {
        if !self.storage.capabilities().lists_dot_files
            && self.config.table_type == crate::config::TableType::MergeOnRead
        {
            // A JSON directory index hides log files (`.<fileId>_<instant>.log.*`): listing
            // would silently drop every update since the last compaction.
            return Err(HudiError::unsupported_in(
                "listing partitions of a Merge-On-Read table through a directory index that hides dot-files (log files); \
                 write a listing manifest (.hoodie/hudi-edge-manifest.json), use an S3 listing, or plan from the metadata table",
                self.storage.location(),
            ));
        }
        // `.hoodie0` sorts right after every `.hoodie/…` key ('0' follows '/').
        const PAST_HOODIE: &str = ".hoodie0";
        let top_dir = |path: &str| path.split_once('/').map(|(d, _)| d.to_string());
        let capabilities = self.storage.capabilities();
        let skips_ahead = capabilities.lists_after || capabilities.listing.is_some();
        let hive_only = self.config.is_partitioned() && self.config.hive_style_partitioning;
        let (mut root, mut after) = (None, None);
        if skips_ahead && hive_only {
            after = self.storage.list_after(PAST_HOODIE).await?;
        } else if skips_ahead {
            let (r, a) = futures::try_join!(
                self.storage.list("", false),
                self.storage.list_after(PAST_HOODIE)
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
                        !d.starts_with(".hoodie")
                            && relist_from.as_ref().is_none_or(|from| d < *from)
                    }
                    None => false,
                })
                .collect();
        }
        let root = match root {
            Some(r) => r,
            // Hudi writes no data at the root of a partitioned table.
            None if relist_from.is_none() => Vec::new(),
            None => self.storage.list("", false).await?,
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
            futures::future::try_join_all(dirs.iter().map(|d| self.storage.list(&d.path, true)))
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
}
