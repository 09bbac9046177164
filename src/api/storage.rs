//! The one URL → storage factory of the CLI and the wasm face: a branch per scheme, each
//! calling the storage implementation's own constructor. What differs per host (how HTTP
//! requests are sent, who presigns S3 URLs) comes in as a [`Host`].

use std::sync::Arc;

use crate::error::{HudiError, Result};
use crate::storage::http::{
    HttpOptions, HttpStorage, Presigner, Transport, DEFAULT_CONCURRENCY, DEFAULT_RETRIES,
};
use crate::storage::listing::ListingMode;
use crate::storage::s3::S3Options;
use crate::storage::Storage;

/// How to reach remote tables (`http(s)://...`, `s3://bucket/prefix`); `openUrl`'s options.
/// Absent (or `undefined`) fields take the defaults.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[cfg_attr(target_arch = "wasm32", derive(tsify_next::Tsify))]
pub struct RemoteOptions {
    /// Sent with every HTTP request (`{name: value}` from JS).
    #[serde(deserialize_with = "header_map")]
    #[cfg_attr(
        target_arch = "wasm32",
        tsify(type = "Record<string, string> | undefined")
    )]
    pub headers: Option<Vec<(String, String)>>,
    #[cfg_attr(target_arch = "wasm32", tsify(type = "object | undefined"))]
    pub s3: Option<S3Options>,
    /// `auto` (default), `manifest`, `autoindex` or `s3`.
    pub listing: Option<String>,
    pub concurrency: Option<usize>,
    pub retries: Option<u32>,
}

impl RemoteOptions {
    fn s3(&self) -> S3Options {
        self.s3.clone().unwrap_or_default()
    }

    fn concurrency(&self) -> usize {
        self.concurrency.unwrap_or(DEFAULT_CONCURRENCY)
    }

    fn retries(&self) -> u32 {
        self.retries.unwrap_or(DEFAULT_RETRIES)
    }

    fn http(&self) -> Result<HttpOptions> {
        Ok(HttpOptions {
            headers: self.headers.clone().unwrap_or_default(),
            listing: ListingMode::parse(self.listing.as_deref().unwrap_or("auto"))?,
            concurrency: self.concurrency(),
            retries: self.retries(),
        })
    }
}

fn header_map<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<(String, String)>>, D::Error> {
    let map: Option<std::collections::BTreeMap<String, String>> =
        serde::Deserialize::deserialize(d)?;
    Ok(map.map(|m| m.into_iter().collect()))
}

/// What the host brings.
#[derive(Debug, Default)]
pub struct Host {
    /// How HTTP requests are sent; natively reqwest when absent.
    pub transport: Option<Arc<dyn Transport>>,
    /// For `s3://` tables: presigned URLs instead of SigV4 with secrets.
    pub presigner: Option<Arc<dyn Presigner>>,
}

/// Where a table is, by its location's scheme.
enum Scheme<'a> {
    S3,
    Http,
    /// A `.zip` of a table on the local file system.
    ZipFile,
    Local(&'a str),
}

impl<'a> Scheme<'a> {
    fn of(location: &'a str) -> Result<Scheme<'a>> {
        Ok(match location.split_once("://") {
            Some(("s3" | "s3a", _)) => Scheme::S3,
            Some(("http" | "https", _)) => Scheme::Http,
            Some(("file", path)) => Scheme::Local(path),
            Some(_) => {
                return Err(HudiError::unsupported(format!(
                    "table location {location} (use a local path, file://, http(s):// or s3://)"
                )))
            }
            None if location.ends_with(".zip") => Scheme::ZipFile,
            None => Scheme::Local(location),
        })
    }
}

/// A storage for a table location: `s3://bucket/prefix`, `http(s)://...`, and natively a
/// `.zip` of a table, a `file://` URL or a local path. One branch per scheme, each calling
/// its storage's constructor.
pub fn storage_for(location: &str, remote: &RemoteOptions, host: Host) -> Result<Arc<dyn Storage>> {
    let scheme = Scheme::of(location)?;
    if host.presigner.is_some() && !matches!(scheme, Scheme::S3) {
        return Err(HudiError::invalid(
            "a presigned table is opened with an s3://bucket/prefix URL",
        ));
    }
    match scheme {
        Scheme::S3 => s3_storage(location, remote, host),
        Scheme::Http => http_storage(location, remote, host),
        Scheme::ZipFile => zip_file_storage(location),
        Scheme::Local(path) => local_storage(path),
    }
}

fn http_storage(location: &str, remote: &RemoteOptions, host: Host) -> Result<Arc<dyn Storage>> {
    Ok(Arc::new(HttpStorage::for_url(
        transport(host)?,
        location,
        remote.s3().force_path_style,
        remote.http()?,
    )?))
}

fn transport(host: Host) -> Result<Arc<dyn Transport>> {
    if let Some(t) = host.transport {
        return Ok(t);
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        Ok(Arc::new(
            crate::storage::object_store::ReqwestTransport::new()?,
        ))
    }
    #[cfg(target_arch = "wasm32")]
    Err(HudiError::unsupported("HTTP without a fetch transport"))
}

fn s3_storage(location: &str, remote: &RemoteOptions, host: Host) -> Result<Arc<dyn Storage>> {
    if let Some(presigner) = host.presigner.clone() {
        let (bucket, root) = crate::storage::s3::parse_s3_url(location)?;
        let target = crate::storage::http::Target::Presigned {
            bucket,
            root,
            presigner,
        };
        return Ok(Arc::new(HttpStorage::new(
            transport(host)?,
            target,
            remote.http()?,
        )));
    }
    // object_store's client natively; in wasm the engine's own HTTP storage signs.
    #[cfg(target_arch = "wasm32")]
    {
        Ok(Arc::new(HttpStorage::for_s3(
            transport(host)?,
            location,
            &remote.s3(),
            remote.http()?,
        )?))
    }
    #[cfg(not(target_arch = "wasm32"))]
    Ok(Arc::new(crate::storage::object_store::s3_storage(
        location,
        &remote.s3(),
        remote.retries(),
        remote.concurrency(),
    )?))
}

#[cfg(all(not(target_arch = "wasm32"), feature = "zip"))]
fn zip_file_storage(location: &str) -> Result<Arc<dyn Storage>> {
    let bytes = std::fs::read(location).map_err(|e| HudiError::io(location, e))?;
    Ok(Arc::new(crate::storage::memory::MemoryStorage::from_zip(
        &bytes, location,
    )?))
}

#[cfg(all(not(target_arch = "wasm32"), feature = "local"))]
fn local_storage(path: &str) -> Result<Arc<dyn Storage>> {
    Ok(Arc::new(crate::storage::local::LocalStorage::new(path)))
}

/// No file system on wasm (or no `zip` feature).
#[cfg(any(target_arch = "wasm32", not(feature = "zip")))]
fn zip_file_storage(location: &str) -> Result<Arc<dyn Storage>> {
    local_storage(location)
}

#[cfg(any(target_arch = "wasm32", not(feature = "local")))]
fn local_storage(location: &str) -> Result<Arc<dyn Storage>> {
    Err(HudiError::unsupported(format!(
        "table location {location} (use http(s):// or s3://)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_branch_per_scheme() {
        let remote = RemoteOptions::default();
        let open = |location: &str| storage_for(location, &remote, Host::default());
        assert_eq!(open("ftp://host/t").unwrap_err().code(), "UNSUPPORTED");
        assert!(open("/tmp/a-table").is_ok() && open("file:///tmp/a-table").is_ok());
        let bad_listing = RemoteOptions {
            listing: Some("sideways".into()),
            ..Default::default()
        };
        let http = storage_for("http://127.0.0.1:1/t", &bad_listing, Host::default());
        assert_eq!(http.unwrap_err().code(), "INVALID_ARGUMENT");
    }
}
