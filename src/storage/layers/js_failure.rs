//! How a failure reported by a JavaScript storage object maps to the engine's errors. The
//! JS side may be anything (Node's `fs`, the AWS SDK, `fetch`, a hand-written adapter), so a
//! failed condition is recognised however it is told: HTTP 409/412, an error `code` / `name`
//! such as `EEXIST`, `PreconditionFailed`, `ConditionalRequestConflict` or our `CONFLICT`,
//! or an answer `{conflict: true}`. Pure data here, so it is tested natively; the wasm side
//! only reads the fields off the JS value.

use crate::error::HudiError;

/// The fields of a rejected call's error, or of a put's answer, that tell what happened.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JsFailure {
    /// `error.code` (Node: `EEXIST`, `ENOENT`; ours: `CONFLICT`, `NOT_FOUND`), or S3's `Code`.
    pub code: Option<String>,
    /// `error.name` (AWS SDK v3: `PreconditionFailed`, `NoSuchKey`; DOM: `AbortError`).
    pub name: Option<String>,
    /// `status`, `statusCode` or `$metadata.httpStatusCode`.
    pub status: Option<f64>,
    /// `conflict: true`.
    pub conflict: bool,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Conflict,
    NotFound,
    AccessDenied,
    Aborted,
    Other,
}

/// `PreconditionFailed`, `precondition-failed`, `PRECONDITION_FAILED` → `preconditionfailed`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn kind_of_word(word: &str) -> Option<Kind> {
    Some(match squash(word).as_str() {
        "conflict"
        | "preconditionfailed"
        | "conditionalrequestconflict"
        | "eexist"
        | "alreadyexists"
        | "objectalreadyexists"
        | "preconditionfailederror" => Kind::Conflict,
        "enoent" | "notfound" | "nosuchkey" => Kind::NotFound,
        "eacces" | "eperm" | "accessdenied" | "forbidden" => Kind::AccessDenied,
        "aborted" | "aborterror" | "aborterr" => Kind::Aborted,
        _ => return None,
    })
}

impl JsFailure {
    fn kind(&self) -> Kind {
        if self.conflict {
            return Kind::Conflict;
        }
        let by_word = [&self.code, &self.name]
            .into_iter()
            .flatten()
            .find_map(|w| kind_of_word(w));
        if let Some(k) = by_word {
            return k;
        }
        match self.status.map(|s| s as i64) {
            Some(409 | 412) => Kind::Conflict,
            Some(404 | 410) => Kind::NotFound,
            Some(401 | 403) => Kind::AccessDenied,
            _ => Kind::Other,
        }
    }

    /// Whether a put's (resolved) answer reports a refusal instead of the object written.
    pub fn is_refusal(&self) -> bool {
        self.conflict || self.status.is_some_and(|s| s >= 400.0)
    }

    /// The engine's error for `path`. `conditional`: the call was a conditional put, where
    /// "not found" means the object to update is gone — a failed condition too.
    pub fn to_error(&self, path: &str, conditional: bool) -> HudiError {
        let detail = if self.message.is_empty() {
            [&self.code, &self.name]
                .into_iter()
                .flatten()
                .next()
                .cloned()
                .or_else(|| self.status.map(|s| format!("HTTP {s}")))
                .unwrap_or_else(|| "storage call failed".into())
        } else {
            self.message.clone()
        };
        match self.kind() {
            Kind::Conflict => HudiError::Conflict {
                path: path.into(),
                detail,
            },
            Kind::NotFound if conditional => HudiError::Conflict {
                path: path.into(),
                detail: format!("object is gone ({detail})"),
            },
            Kind::NotFound => HudiError::NotFound { path: path.into() },
            Kind::AccessDenied => HudiError::AccessDenied {
                path: path.into(),
                detail,
            },
            Kind::Aborted => HudiError::Aborted(detail),
            Kind::Other => HudiError::io(path, detail),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(f: JsFailure, conditional: bool) -> &'static str {
        f.to_error("t/x.commit", conditional).code()
    }

    #[test]
    fn conditional_failures_are_conflicts_however_told() {
        let by = |c: Option<&str>, n: Option<&str>, s: Option<f64>| JsFailure {
            code: c.map(str::to_string),
            name: n.map(str::to_string),
            status: s,
            ..Default::default()
        };
        for f in [
            by(Some("CONFLICT"), None, None),
            by(Some("EEXIST"), None, None),
            by(None, Some("PreconditionFailed"), Some(412.0)),
            by(None, Some("ConditionalRequestConflict"), Some(409.0)),
            by(Some("PRECONDITION_FAILED"), None, None),
            by(None, None, Some(412.0)),
            by(None, None, Some(409.0)),
            // A generic name loses to the status.
            by(None, Some("Error"), Some(412.0)),
            JsFailure {
                conflict: true,
                ..Default::default()
            },
        ] {
            assert_eq!(code(f.clone(), false), "CONFLICT", "{f:?}");
        }
        let f = by(Some("ENOENT"), None, None);
        assert_eq!(code(f.clone(), false), "NOT_FOUND");
        assert_eq!(code(f, true), "CONFLICT");
        assert_eq!(
            code(by(None, Some("NoSuchKey"), Some(404.0)), false),
            "NOT_FOUND"
        );
        assert_eq!(code(by(None, None, Some(403.0)), false), "ACCESS_DENIED");
        assert_eq!(code(by(Some("EACCES"), None, None), false), "ACCESS_DENIED");
        assert_eq!(code(by(None, Some("AbortError"), None), false), "ABORTED");
        assert_eq!(code(by(None, None, Some(500.0)), false), "IO");
        assert_eq!(code(JsFailure::default(), false), "IO");
    }

    #[test]
    fn put_answers_that_are_refusals() {
        assert!(JsFailure {
            conflict: true,
            ..Default::default()
        }
        .is_refusal());
        assert!(JsFailure {
            status: Some(412.0),
            ..Default::default()
        }
        .is_refusal());
        assert!(!JsFailure {
            status: Some(200.0),
            ..Default::default()
        }
        .is_refusal());
        assert!(!JsFailure::default().is_refusal());
    }
}
