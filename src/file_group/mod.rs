//! Base and log file names, file groups and file slices (Hudi's `HoodieBaseFile`,
//! `HoodieLogFile`, `HoodieFileGroup`, `FileSlice`), and the view that builds them from a
//! listing and the timeline ([`view`]).

pub mod clustering;
pub mod compaction;
pub mod view;

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// `<fileId>_<writeToken>_<instant>.<ext>`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseFile {
    pub name: String,
    pub file_id: String,
    pub write_token: String,
    pub instant: String,
    pub extension: String,
    pub size: u64,
}

impl BaseFile {
    pub fn parse(name: &str, size: u64) -> Option<BaseFile> {
        if name.starts_with('.') {
            return None;
        }
        let (stem, ext) = name.rsplit_once('.')?;
        if !matches!(ext, "parquet" | "hfile" | "orc" | "lance") {
            return None;
        }
        let mut parts = stem.split('_');
        let (file_id, token, instant) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some()
            || file_id.is_empty()
            || instant.is_empty()
            || !instant.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        Some(BaseFile {
            name: name.to_string(),
            file_id: file_id.to_string(),
            write_token: token.to_string(),
            instant: instant.to_string(),
            extension: ext.to_string(),
            size,
        })
    }
}

/// `.<fileId>_<baseInstant>.log.<version>_<writeToken>[.cdc]`
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogFile {
    pub name: String,
    pub file_id: String,
    /// v6: the slice's base instant; v8+: the delta commit that wrote the file.
    pub instant: String,
    pub version: u32,
    pub write_token: String,
    pub cdc: bool,
    pub size: u64,
    /// v8+: completion time of the delta commit that wrote the file.
    pub completion_time: Option<String>,
}

impl LogFile {
    pub fn parse(name: &str, size: u64) -> Option<LogFile> {
        let rest = name.strip_prefix('.')?;
        let (rest, cdc) = match rest.strip_suffix(".cdc") {
            Some(r) => (r, true),
            None => (rest, false),
        };
        let (head, tail) = rest.split_once(".log.")?;
        let (file_id, instant) = head.rsplit_once('_')?;
        let (version, token) = match tail.split_once('_') {
            Some((v, t)) => (v, t),
            None => (tail, ""),
        };
        // Java matches the whole name (`FSUtils.LOG_FILE_PATTERN`): a token is `a-b-c`, so
        // Hadoop's `..<log>.crc` checksum files are not log files.
        let token_ok = token.is_empty() || {
            let parts: Vec<&str> = token.split('-').collect();
            parts.len() == 3
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        };
        let instant_ok = !instant.is_empty() && instant.bytes().all(|b| b.is_ascii_digit());
        if file_id.is_empty() || file_id.starts_with('.') || !instant_ok || !token_ok {
            return None;
        }
        Some(LogFile {
            name: name.to_string(),
            file_id: file_id.to_string(),
            instant: instant.to_string(),
            version: version.parse().ok()?,
            write_token: token.to_string(),
            cdc,
            size,
            completion_time: None,
        })
    }

    /// Order of log files inside a slice: v8+ by completion time of the writing commit,
    /// v6 by base instant; then version, then write token (hudi-rs and Java agree).
    pub fn log_order(&self, other: &LogFile) -> Ordering {
        let key = |l: &LogFile| {
            l.completion_time
                .clone()
                .unwrap_or_else(|| l.instant.clone())
        };
        key(self)
            .cmp(&key(other))
            .then(self.instant.cmp(&other.instant))
            .then(self.version.cmp(&other.version))
            .then(self.write_token.cmp(&other.write_token))
    }
}

/// A base file (optional) and the log files that apply on top of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSlice {
    pub partition: String,
    pub file_id: String,
    pub base_instant: String,
    pub base_file: Option<BaseFile>,
    pub log_files: Vec<LogFile>,
}

impl FileSlice {
    pub fn base_path(&self) -> Option<String> {
        self.base_file
            .as_ref()
            .map(|b| crate::storage::join(&self.partition, &b.name))
    }

    /// The base file's size as listed (0 where the listing did not say; a footer read takes
    /// 0 as unknown).
    pub fn base_size(&self) -> Option<u64> {
        self.base_file.as_ref().map(|b| b.size)
    }

    pub fn log_paths(&self) -> Vec<String> {
        self.log_files
            .iter()
            .map(|l| crate::storage::join(&self.partition, &l.name))
            .collect()
    }

    pub fn total_size(&self) -> u64 {
        self.base_file.as_ref().map_or(0, |b| b.size)
            + self.log_files.iter().map(|l| l.size).sum::<u64>()
    }

    /// Names of every file of the slice (base first).
    pub fn file_names(&self) -> impl Iterator<Item = &str> {
        self.base_file
            .iter()
            .map(|b| b.name.as_str())
            .chain(self.log_files.iter().map(|l| l.name.as_str()))
    }
}

/// All slices of one file id in one partition, keyed by base instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileGroup {
    pub partition: String,
    pub file_id: String,
    pub slices: Vec<FileSlice>,
}

impl FileGroup {
    pub fn latest_slice(&self) -> Option<&FileSlice> {
        self.slices.last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names() {
        let b = BaseFile::parse(
            "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_1-27-53_20260307162557587.parquet",
            5,
        )
        .unwrap();
        assert_eq!(b.file_id, "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0");
        assert_eq!(b.instant, "20260307162557587");
        let l = LogFile::parse(
            ".3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0_20260307162604102.log.1_0-52-126",
            9,
        )
        .unwrap();
        assert_eq!(
            (l.file_id.as_str(), l.instant.as_str(), l.version),
            (
                "3e93c8a9-fda0-4e8a-91dc-b4ade7dab76d-0",
                "20260307162604102",
                1
            )
        );
        assert!(BaseFile::parse(".hoodie_partition_metadata", 0).is_none());
        assert!(LogFile::parse(".hoodie_partition_metadata", 0).is_none());
        assert!(LogFile::parse(
            "..07a7e673-dded-45f1-afd6-00ab0a161567-0_20261130012810045.log.1_173-1536-7262.crc",
            0
        )
        .is_none());
        let m = BaseFile::parse("files-0000-0_0-5-4_00000000000000000.hfile", 1).unwrap();
        assert_eq!(m.file_id, "files-0000-0");
    }
}
