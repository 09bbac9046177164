//! AWS Signature Version 4 in the `Authorization` header, for S3 requests sent by
//! [`super::HttpStorage`] (its `S3` target). The wasm build talks to S3 this way instead of
//! through object_store's client, which brought an HTTP stack it never used there.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use super::Request;
use crate::error::{HudiError, Result};
use crate::storage::listing::uri_encode;

/// Keys to sign S3 requests with. `Debug` shows neither the secret nor the token.
#[derive(Clone)]
pub struct SigV4 {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
    region: String,
}

impl std::fmt::Debug for SigV4 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigV4")
            .field("region", &self.region)
            .finish_non_exhaustive()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hmac(key: &[u8], data: &str) -> Result<Vec<u8>> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key)
        .map_err(|e| HudiError::invalid(format!("S3 signing key: {e}")))?;
    mac.update(data.as_bytes());
    Ok(mac.finalize().into_bytes().to_vec())
}

/// `%XX`-decoding without turning `+` into a space (S3 keys may hold a literal `+`).
fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

impl SigV4 {
    pub fn new(
        access_key_id: &str,
        secret_access_key: &str,
        session_token: Option<&str>,
        region: &str,
    ) -> Self {
        SigV4 {
            access_key_id: access_key_id.to_string(),
            secret_access_key: secret_access_key.to_string(),
            session_token: session_token.map(str::to_string),
            region: region.to_string(),
        }
    }

    /// Adds `x-amz-date`, `x-amz-content-sha256`, the session token and `Authorization` to
    /// `r`, signing every header it carries plus `host` (the transport sets `Host` itself,
    /// from the same URL).
    pub fn sign(&self, r: &mut Request, now: DateTime<Utc>) -> Result<()> {
        let url = url::Url::parse(&r.url)
            .map_err(|e| HudiError::invalid(format!("S3 request URL: {e}")))?;
        let host = match (url.host_str(), url.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            (None, _) => return Err(HudiError::invalid("S3 request URL without a host")),
        };
        let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
        let day = &amz_date[..8];
        let payload = hex(&Sha256::digest(r.body.as_deref().unwrap_or_default()));
        r.headers.push(("x-amz-date".into(), amz_date.clone()));
        r.headers
            .push(("x-amz-content-sha256".into(), payload.clone()));
        if let Some(t) = &self.session_token {
            r.headers.push(("x-amz-security-token".into(), t.clone()));
        }

        let mut headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        headers.entry("host".into()).or_default().push(host);
        for (k, v) in &r.headers {
            // What transports may set or change on their own.
            if ["authorization", "content-length", "user-agent"]
                .iter()
                .any(|h| k.eq_ignore_ascii_case(h))
            {
                continue;
            }
            let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
            headers.entry(k.to_ascii_lowercase()).or_default().push(v);
        }
        let canonical_headers: String = headers
            .iter()
            .map(|(k, v)| format!("{k}:{}\n", v.join(",")))
            .collect();
        let signed_headers = headers.keys().cloned().collect::<Vec<_>>().join(";");

        // The path and query as S3 rebuilds them: each part decoded, then encoded strictly.
        let canonical_uri = url
            .path()
            .split('/')
            .map(|segment| uri_encode(&decode(segment)))
            .collect::<Vec<_>>()
            .join("/");
        let mut query: Vec<(String, String)> = url
            .query()
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (uri_encode(&decode(k)), uri_encode(&decode(v)))
            })
            .collect();
        query.sort();
        let canonical_query = query
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");

        let canonical_request = format!(
            "{}\n{canonical_uri}\n{canonical_query}\n{canonical_headers}\n{signed_headers}\n{payload}",
            r.method
        );
        let scope = format!("{day}/{}/s3/aws4_request", self.region);
        let string_to_sign = format!(
            "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
            hex(&Sha256::digest(canonical_request.as_bytes()))
        );
        let mut key = hmac(format!("AWS4{}", self.secret_access_key).as_bytes(), day)?;
        for part in [self.region.as_str(), "s3", "aws4_request"] {
            key = hmac(&key, part)?;
        }
        let signature = hex(&hmac(&key, &string_to_sign)?);
        r.headers.push((
            "authorization".into(),
            format!(
                "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
                self.access_key_id
            ),
        ));
        // Signed: `Client` follows no redirect of it to another origin.
        r.credentials = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rfc3339: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(rfc3339).unwrap().into()
    }

    fn authorization(r: &Request) -> &str {
        r.headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .map(|(_, v)| v.as_str())
            .unwrap()
    }

    /// The worked example of AWS's SigV4 documentation for S3 (a ranged GET).
    #[test]
    fn aws_documented_example() {
        let s = SigV4::new(
            "AKIAIOSFODNN7EXAMPLE",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            None,
            "us-east-1",
        );
        let mut r = Request::new("GET", "https://examplebucket.s3.amazonaws.com/test.txt")
            .header("Range", "bytes=0-9");
        s.sign(&mut r, at("2013-05-24T00:00:00Z")).unwrap();
        assert_eq!(
            authorization(&r),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, \
             SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, \
             Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
        assert!(r.credentials);
    }

    /// The same requests signed by object_store's signer (natively present) and by ours:
    /// keys with reserved characters, a listing query, a conditional PUT with a body, a
    /// session token, a port.
    #[cfg(not(target_arch = "wasm32"))]
    #[test]
    fn signs_as_object_store_does() {
        use object_store::aws::{AwsAuthorizer, AwsCredential};
        use object_store::client::HttpRequestBody;
        let credential = AwsCredential {
            key_id: "AKIDEXAMPLE".into(),
            secret_key: "a/secret+key".into(),
            token: Some("tok/en=".into()),
        };
        let ours = SigV4::new("AKIDEXAMPLE", "a/secret+key", Some("tok/en="), "eu-west-3");
        type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], &'a [u8]);
        let cases: [Case; 4] = [
            (
                "GET",
                "http://127.0.0.1:5000/bucket/t/region%3Dus/a%20b%2Bc.parquet",
                &[("range", "bytes=-65536")],
                b"",
            ),
            (
                "GET",
                "http://127.0.0.1:5000/bucket?list-type=2&prefix=t%2F.hoodie%2F&delimiter=%2F&continuation-token=a%2Bb%3D",
                &[],
                b"",
            ),
            (
                "PUT",
                "https://bucket.s3.eu-west-3.amazonaws.com/t/.hoodie/timeline/1.commit",
                &[("if-none-match", "*")],
                b"{\"k\": 1}",
            ),
            (
                "HEAD",
                "https://s3.eu-west-3.amazonaws.com/bucket/t/hoodie.properties",
                &[("if-match", "\"abc\"")],
                b"",
            ),
        ];
        for (method, url, headers, body) in cases {
            let mut theirs = http::Request::builder().method(method).uri(url);
            for (k, v) in headers {
                theirs = theirs.header(*k, *v);
            }
            let mut theirs = theirs.body(HttpRequestBody::from(body.to_vec())).unwrap();
            AwsAuthorizer::new(&credential, "s3", "eu-west-3")
                .try_authorize(&mut theirs, None)
                .unwrap();
            let date = theirs.headers()["x-amz-date"].to_str().unwrap();
            let date = chrono::NaiveDateTime::parse_from_str(date, "%Y%m%dT%H%M%SZ")
                .unwrap()
                .and_utc();
            let mut r = Request::new(
                match method {
                    "GET" => "GET",
                    "PUT" => "PUT",
                    _ => "HEAD",
                },
                url,
            );
            for (k, v) in headers {
                r = r.header(k, *v);
            }
            if !body.is_empty() {
                r.body = Some(bytes::Bytes::copy_from_slice(body));
            }
            ours.sign(&mut r, date).unwrap();
            assert_eq!(
                authorization(&r),
                theirs.headers()["authorization"].to_str().unwrap(),
                "{method} {url}"
            );
        }
    }
}
