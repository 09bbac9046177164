//! How an S3 bucket is reached: the options both S3 clients take (object_store natively,
//! [`crate::storage::http::HttpStorage`] with SigV4 in wasm) and, for the latter, the bucket's URL.

use serde::Deserialize;

use crate::error::{HudiError, Result};

/// How to reach an S3 bucket. Secrets are never printed (`Debug` redacts them).
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct S3Options {
    pub region: Option<String>,
    /// A custom endpoint (`http://127.0.0.1:9000`, R2, MinIO ...).
    pub endpoint: Option<String>,
    pub access_key_id: Option<String>,
    pub secret_access_key: Option<String>,
    pub session_token: Option<String>,
    /// `true`: `endpoint/bucket/key`; `false`: `bucket.endpoint/key`. Default: path-style
    /// with a custom endpoint, virtual-hosted on AWS.
    pub force_path_style: Option<bool>,
    /// Unsigned requests (public buckets).
    pub anonymous: bool,
}

impl std::fmt::Debug for S3Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3Options")
            .field("region", &self.region)
            .field("endpoint", &self.endpoint)
            .field(
                "access_key_id",
                &self.access_key_id.as_ref().map(|_| "<set>"),
            )
            .field(
                "secret_access_key",
                &self.secret_access_key.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .field("force_path_style", &self.force_path_style)
            .field("anonymous", &self.anonymous)
            .finish()
    }
}

/// `s3://bucket/prefix` → (bucket, prefix without slashes at either end).
pub fn parse_s3_url(url: &str) -> Result<(String, String)> {
    let rest = url
        .strip_prefix("s3://")
        .or_else(|| url.strip_prefix("s3a://"))
        .ok_or_else(|| HudiError::invalid(format!("not an s3:// URL: {url}")))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.len() < 3 {
        return Err(HudiError::invalid(format!(
            "bucket name {bucket:?} in {url}"
        )));
    }
    Ok((bucket.to_string(), prefix.trim_matches('/').to_string()))
}

impl S3Options {
    /// The bucket's REST endpoint as object_store builds it: virtual-hosted on AWS
    /// (`https://bucket.s3.region.amazonaws.com`) unless path-style is asked for; with a
    /// custom endpoint, `endpoint/bucket` (path-style) or the endpoint itself as the
    /// bucket's host (virtual-hosted). No trailing `/`.
    pub fn bucket_url(&self, bucket: &str) -> String {
        let region = self.region();
        let virtual_hosted = match self.force_path_style {
            Some(path_style) => !path_style,
            None => self.endpoint.is_none(),
        };
        let endpoint = self.endpoint.as_deref().map(|e| e.trim_end_matches('/'));
        match (virtual_hosted, endpoint) {
            (true, None) => format!("https://{bucket}.s3.{region}.amazonaws.com"),
            (true, Some(e)) => e.to_string(),
            (false, None) => format!("https://s3.{region}.amazonaws.com/{bucket}"),
            (false, Some(e)) => format!("{e}/{bucket}"),
        }
    }

    /// The region requests are signed for (`us-east-1` when not given).
    pub fn region(&self) -> &str {
        self.region.as_deref().unwrap_or("us-east-1")
    }

    /// The keys to sign with: `None` for unsigned requests (`anonymous`, or no keys at
    /// all); one key without the other is an error.
    pub fn keys(&self) -> Result<Option<(&str, &str)>> {
        if self.anonymous {
            return Ok(None);
        }
        match (&self.access_key_id, &self.secret_access_key) {
            (Some(id), Some(secret)) => Ok(Some((id, secret))),
            (None, None) => Ok(None),
            (Some(_), None) => Err(HudiError::invalid(
                "S3 options: accessKeyId without secretAccessKey",
            )),
            (None, Some(_)) => Err(HudiError::invalid(
                "S3 options: secretAccessKey without accessKeyId",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_urls() {
        let o = |endpoint: Option<&str>, path_style: Option<bool>| S3Options {
            region: Some("eu-west-3".into()),
            endpoint: endpoint.map(str::to_string),
            force_path_style: path_style,
            ..Default::default()
        };
        let cases = [
            (o(None, None), "https://b.s3.eu-west-3.amazonaws.com"),
            (o(None, Some(true)), "https://s3.eu-west-3.amazonaws.com/b"),
            (
                o(Some("http://127.0.0.1:9000/"), None),
                "http://127.0.0.1:9000/b",
            ),
            (
                o(Some("https://b.r2.example"), Some(false)),
                "https://b.r2.example",
            ),
        ];
        for (options, url) in cases {
            assert_eq!(options.bucket_url("b"), url);
        }
        let half = S3Options {
            access_key_id: Some("k".into()),
            ..Default::default()
        };
        assert_eq!(half.keys().unwrap_err().code(), "INVALID_ARGUMENT");
        let anonymous = S3Options {
            anonymous: true,
            ..half
        };
        assert!(anonymous.keys().unwrap().is_none());
    }
}
