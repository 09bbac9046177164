//! One typed error for the whole engine. Every variant names the object it is about, so a
//! user sees *which* file was wrong and *why*; `code()` gives the stable string the JS face
//! and the CLI expose. The error underneath (a parser's, the network's) is kept as the
//! `source()`, so callers can walk the chain instead of reading it out of a string.

use std::fmt;
use std::sync::Arc;

pub type Result<T, E = HudiError> = std::result::Result<T, E>;

/// An underlying error, shared so that `HudiError` stays cheap to clone.
#[derive(Debug, Clone)]
pub struct Cause(Arc<dyn std::error::Error + Send + Sync>);

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Cause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Errors compare by what they say: the cause is already in the message.
impl PartialEq for Cause {
    fn eq(&self, _: &Cause) -> bool {
        true
    }
}

impl Eq for Cause {}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HudiError {
    #[error("not found: {path}")]
    NotFound { path: String },
    #[error("access denied to {path}: {detail}")]
    AccessDenied { path: String, detail: String },
    #[error("{path} is corrupt: {reason}")]
    Corrupt {
        path: String,
        reason: String,
        #[source]
        cause: Option<Cause>,
    },
    #[error("unsupported: {what}{}", at(path))]
    Unsupported { what: String, path: Option<String> },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Rows handed to a write that do not fit the table (named row and column).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("precondition failed for {path}: {detail}")]
    Conflict { path: String, detail: String },
    #[error("aborted: {0}")]
    Aborted(String),
    #[error("I/O error on {path}: {detail}")]
    Io {
        path: String,
        detail: String,
        #[source]
        cause: Option<Cause>,
    },
}

fn at(path: &Option<String>) -> String {
    path.as_ref()
        .map(|p| format!(" (in {p})"))
        .unwrap_or_default()
}

impl HudiError {
    /// Stable machine-readable code, shared with the CLI and the JS package.
    pub fn code(&self) -> &'static str {
        match self {
            HudiError::NotFound { .. } => "NOT_FOUND",
            HudiError::AccessDenied { .. } => "ACCESS_DENIED",
            HudiError::Corrupt { .. } => "CORRUPT",
            HudiError::Unsupported { .. } => "UNSUPPORTED",
            HudiError::InvalidArgument(_) => "INVALID_ARGUMENT",
            HudiError::InvalidInput(_) => "INVALID_INPUT",
            HudiError::Conflict { .. } => "CONFLICT",
            HudiError::Aborted(_) => "ABORTED",
            HudiError::Io { .. } => "IO",
        }
    }

    /// The object the error is about, when there is one.
    pub fn object(&self) -> Option<&str> {
        match self {
            HudiError::NotFound { path }
            | HudiError::AccessDenied { path, .. }
            | HudiError::Corrupt { path, .. }
            | HudiError::Conflict { path, .. }
            | HudiError::Io { path, .. } => Some(path),
            HudiError::Unsupported { path, .. } => path.as_deref(),
            _ => None,
        }
    }

    pub fn corrupt(path: impl Into<String>, reason: impl fmt::Display) -> Self {
        HudiError::Corrupt {
            path: path.into(),
            reason: reason.to_string(),
            cause: None,
        }
    }

    pub fn unsupported(what: impl Into<String>) -> Self {
        HudiError::Unsupported {
            what: what.into(),
            path: None,
        }
    }

    pub fn unsupported_in(what: impl Into<String>, path: impl Into<String>) -> Self {
        HudiError::Unsupported {
            what: what.into(),
            path: Some(path.into()),
        }
    }

    pub fn invalid(msg: impl fmt::Display) -> Self {
        HudiError::InvalidArgument(msg.to_string())
    }

    pub fn invalid_input(msg: impl fmt::Display) -> Self {
        HudiError::InvalidInput(msg.to_string())
    }

    pub fn io(path: impl Into<String>, detail: impl fmt::Display) -> Self {
        HudiError::Io {
            path: path.into(),
            detail: detail.to_string(),
            cause: None,
        }
    }

    /// `path` is corrupt: `what` failed with `e` (kept as the source).
    pub fn corrupt_by(
        path: impl Into<String>,
        what: &str,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        HudiError::Corrupt {
            path: path.into(),
            reason: format!("{what}: {e}"),
            cause: Some(Cause(Arc::new(e))),
        }
    }

    /// An I/O failure on `path`, keeping the error underneath as the source.
    pub fn io_caused(
        path: impl Into<String>,
        e: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        HudiError::Io {
            path: path.into(),
            detail: e.to_string(),
            cause: Some(Cause(Arc::new(e))),
        }
    }

    /// Re-labels an error that came out of a decoder with the file it was decoding.
    pub fn in_file(self, path: &str) -> Self {
        match self {
            HudiError::Corrupt {
                path: p,
                reason,
                cause,
            } if p.is_empty() => HudiError::Corrupt {
                path: path.into(),
                reason,
                cause,
            },
            HudiError::Unsupported { what, path: None } => HudiError::Unsupported {
                what,
                path: Some(path.into()),
            },
            other => other,
        }
    }
}

/// Lets decoders return `Corrupt` without knowing the file; callers add it with `in_file`.
pub fn malformed(reason: impl fmt::Display) -> HudiError {
    HudiError::corrupt("", reason)
}

/// [`malformed`] for a library's decoding error (Arrow, Parquet, Avro), kept as the source.
pub fn malformed_by(e: impl std::error::Error + Send + Sync + 'static) -> HudiError {
    HudiError::Corrupt {
        path: String::new(),
        reason: e.to_string(),
        cause: Some(Cause(Arc::new(e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn keeps_the_error_underneath_and_the_code() {
        let json = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let e = HudiError::corrupt_by(".hoodie/1.commit", "bad JSON", json).in_file("other");
        assert_eq!(e.code(), "CORRUPT");
        assert_eq!(e.object(), Some(".hoodie/1.commit"));
        assert!(e
            .to_string()
            .starts_with(".hoodie/1.commit is corrupt: bad JSON: EOF"));
        let source = e.source().expect("the JSON error is the source");
        assert!(source.to_string().contains("EOF"));

        let io = std::io::Error::other("disk gone");
        let e = HudiError::io_caused("a/b.parquet", io);
        assert_eq!((e.code(), e.object()), ("IO", Some("a/b.parquet")));
        assert_eq!(
            e.source().map(|s| s.to_string()).as_deref(),
            Some("disk gone")
        );
        // Decoders' errors get their file later and keep the source.
        let arrow = arrow_schema::ArrowError::ComputeError("overflow".into());
        let e = malformed_by(arrow).in_file("p/f.log.1");
        assert_eq!(e.object(), Some("p/f.log.1"));
        assert!(e.source().is_some());
    }
}
