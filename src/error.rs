//! One typed error for the whole engine. Every variant names the object it is about, so a
//! user sees *which* file was wrong and *why*; `code()` gives the stable string the JS face
//! and the CLI expose.

use std::fmt;

pub type Result<T, E = HudiError> = std::result::Result<T, E>;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HudiError {
    #[error("not found: {path}")]
    NotFound { path: String },
    #[error("access denied to {path}: {detail}")]
    AccessDenied { path: String, detail: String },
    #[error("{path} is corrupt: {reason}")]
    Corrupt { path: String, reason: String },
    #[error("unsupported: {what}{}", at(path))]
    Unsupported { what: String, path: Option<String> },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("precondition failed for {path}: {detail}")]
    Conflict { path: String, detail: String },
    #[error("aborted: {0}")]
    Aborted(String),
    #[error("I/O error on {path}: {detail}")]
    Io { path: String, detail: String },
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

    pub fn io(path: impl Into<String>, detail: impl fmt::Display) -> Self {
        HudiError::Io {
            path: path.into(),
            detail: detail.to_string(),
        }
    }

    /// Re-labels an error that came out of a decoder with the file it was decoding.
    pub fn in_file(self, path: &str) -> Self {
        match self {
            HudiError::Corrupt { path: p, reason } if p.is_empty() => HudiError::Corrupt {
                path: path.into(),
                reason,
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
