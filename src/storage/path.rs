//! Paths that come from table content (`hoodie.properties`, LSM manifests, metadata-table
//! records) are checked before any request: a table must not make the engine read — or send
//! its credentials for — anything outside its own root.

use crate::error::{HudiError, Result};

/// `path` relative to the table root, normalised (`.` and empty segments dropped); refused
/// as `CORRUPT` in `carried_by` when it is absolute, holds a NUL, or climbs out with `..`
/// (backslashes count as separators for that check: some servers treat them so).
pub fn within_table(path: &str, carried_by: &str) -> Result<String> {
    let bad = |why: &str| HudiError::corrupt(carried_by, format!("path {path:?} {why}"));
    if path.starts_with(['/', '\\']) || path.contains('\0') {
        return Err(bad("is not relative to the table"));
    }
    let mut depth = 0usize;
    for segment in path.split(['/', '\\']) {
        match segment {
            "" | "." => {}
            ".." => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| bad("leaves the table"))?
            }
            _ => depth += 1,
        }
    }
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(bad("leaves the table"));
                }
            }
            s => parts.push(s),
        }
    }
    Ok(parts.join("/"))
}

/// A single file or folder name from table content: no separators, not `.` or `..`.
pub fn plain_name<'a>(name: &'a str, carried_by: &str) -> Result<&'a str> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(HudiError::corrupt(
            carried_by,
            format!("{name:?} is not a plain file name"),
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_paths_inside_the_table() {
        assert_eq!(
            within_table(".hoodie/./timeline/", "p").unwrap(),
            ".hoodie/timeline"
        );
        assert_eq!(within_table("a/b/../c", "p").unwrap(), "a/c");
        for bad in ["../etc", "a/../../b", "/etc/passwd", "..\\..\\b", "a/\0"] {
            let e = within_table(bad, "hoodie.properties").unwrap_err();
            assert_eq!(
                (e.code(), e.object()),
                ("CORRUPT", Some("hoodie.properties")),
                "{bad}"
            );
        }
        assert_eq!(plain_name("f.parquet", "m").unwrap(), "f.parquet");
        for bad in ["..", "../x", "a/b", ""] {
            assert!(plain_name(bad, "m").is_err(), "{bad}");
        }
    }
}
