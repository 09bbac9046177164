//! Record-index file ids as Hudi stores them: a `<uuid>-<index>` id as the UUID's two
//! 64-bit halves and the index (Java `createRecordIndexUpdate`).

/// `(high bits, low bits, file index)` of a `<uuid>-<index>` file id; a bare UUID has
/// index -1 (Java's missing-index fallback).
pub fn split_file_id(file_id: &str) -> Option<(i64, i64, i32)> {
    if let Some((hi, lo)) = parse_uuid(file_id) {
        return Some((hi, lo, -1));
    }
    let (uuid, index) = file_id.rsplit_once('-')?;
    let (hi, lo) = parse_uuid(uuid)?;
    // Java's Integer.parseInt: optional sign, decimal digits.
    let index: i32 = index.parse().ok()?;
    Some((hi, lo, index))
}

/// The canonical 8-4-4-4-12 hex form only (Java's `UUID.fromString` is laxer; a writer of
/// its own ids uses this form).
fn parse_uuid(s: &str) -> Option<(i64, i64)> {
    let groups: Vec<&str> = s.split('-').collect();
    let lens = [8, 4, 4, 4, 12];
    if groups.len() != 5
        || groups
            .iter()
            .zip(lens)
            .any(|(g, l)| g.len() != l || !g.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return None;
    }
    let hex: String = groups.concat();
    let v = u128::from_str_radix(&hex, 16).ok()?;
    Some(((v >> 64) as u64 as i64, v as u64 as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_ids_split_like_java() {
        let (hi, lo, i) = split_file_id("5fa27133-7a82-4124-9a6b-8a94c18ff8ef-0").unwrap();
        assert_eq!((hi, lo, i), (6891194845742907684, -7319604397853378321, 0));
        assert_eq!(
            split_file_id("5fa27133-7a82-4124-9a6b-8a94c18ff8ef").map(|t| t.2),
            Some(-1)
        );
        assert_eq!(split_file_id("files-0000-0"), None);
        assert_eq!(split_file_id("not-a-uuid-at-all-0"), None);
    }
}
