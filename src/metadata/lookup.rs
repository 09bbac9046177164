//! Lookups of metadata records: by exact keys, key prefixes or a full scan, with the versions
//! of each key folded in merge order (base file, then log blocks in log order).

use std::collections::BTreeMap;

use bytes::Bytes;

use super::merge::merge_payloads;
use super::records::MetadataPayload;
use crate::error::Result;
use crate::hfile::{Cell, HFileReader};

/// Which keys a lookup wants.
#[derive(Debug, Clone, Copy)]
pub enum Lookup<'a> {
    Keys(&'a [String]),
    Prefixes(&'a [String]),
    All,
}

impl Lookup<'_> {
    pub(super) fn matches(&self, key: &str) -> bool {
        match self {
            Lookup::Keys(keys) => keys.iter().any(|k| k == key),
            Lookup::Prefixes(prefixes) => prefixes.iter().any(|p| key.starts_with(p.as_str())),
            Lookup::All => true,
        }
    }

    pub(super) async fn cells(&self, reader: &HFileReader) -> Result<Vec<Cell>> {
        match self {
            Lookup::Keys([]) => Ok(Vec::new()),
            Lookup::Keys(keys) => {
                let values = reader.get_many(keys).await?;
                Ok(keys
                    .iter()
                    .zip(values)
                    .filter_map(|(k, v)| {
                        v.map(|value| Cell {
                            key: Bytes::from(k.clone()),
                            value,
                        })
                    })
                    .collect())
            }
            Lookup::Prefixes(prefixes) => reader.scan_prefixes(prefixes).await,
            Lookup::All => reader.scan_all().await,
        }
    }
}

/// Merged records of a lookup, and the keys that had to be left out (a value that does not
/// decode, versions that do not merge) with the reason.
#[derive(Debug, Default)]
pub struct Records {
    pub values: BTreeMap<String, MetadataPayload>,
    pub problems: Vec<String>,
}

/// Versions of keys folded in commit order.
#[derive(Default)]
pub(super) struct Fold {
    values: BTreeMap<String, MetadataPayload>,
    spoiled: BTreeMap<String, String>,
}

impl Fold {
    pub(super) fn apply(&mut self, decoded: Vec<(String, Result<MetadataPayload>)>, source: &str) {
        for (key, payload) in decoded {
            if self.spoiled.contains_key(&key) {
                continue;
            }
            // Taken out to merge without a copy; a failed merge spoils the key anyway.
            let merged = payload.map_err(|e| e.in_file(source)).and_then(|newer| {
                match self.values.remove(&key) {
                    Some(older) => merge_payloads(older, &newer),
                    None => Ok(newer),
                }
            });
            match merged {
                Ok(p) => {
                    self.values.insert(key, p);
                }
                Err(e) => {
                    self.values.remove(&key);
                    self.spoiled.insert(key, e.to_string());
                }
            }
        }
    }

    /// A delete fully defines the key's state, even after a bad version.
    pub(super) fn delete(&mut self, key: &str) {
        self.values.remove(key);
        self.spoiled.remove(key);
    }

    pub(super) fn into_records(self) -> Records {
        Records {
            values: self.values,
            problems: self
                .spoiled
                .into_iter()
                .map(|(k, why)| format!("key {k:?}: {why}"))
                .collect(),
        }
    }
}
