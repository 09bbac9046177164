//! Java `.properties` text: comments, `=`/`:`/space separators, backslash escapes,
//! `\uXXXX`, and line continuations; and written as Java's `Properties.store` writes them.

use std::collections::BTreeMap;

pub fn parse(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut logical = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if logical.is_empty()
            && (trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!'))
        {
            continue;
        }
        logical.push_str(trimmed);
        if ends_with_continuation(&logical) {
            logical.pop();
            continue;
        }
        let (k, v) = split_entry(&logical);
        out.insert(unescape(&k), unescape(&v));
        logical.clear();
    }
    if !logical.is_empty() {
        let (k, v) = split_entry(&logical);
        out.insert(unescape(&k), unescape(&v));
    }
    out
}

fn ends_with_continuation(s: &str) -> bool {
    s.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

fn split_entry(line: &str) -> (String, String) {
    let mut key = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                key.push('\\');
                if let Some(n) = chars.next() {
                    key.push(n);
                }
            }
            '=' | ':' => break,
            c if c.is_whitespace() => {
                while matches!(chars.peek(), Some(c) if c.is_whitespace()) {
                    chars.next();
                }
                if matches!(chars.peek(), Some('=') | Some(':')) {
                    chars.next();
                }
                break;
            }
            c => key.push(c),
        }
    }
    let rest: String = chars.collect();
    (key, rest.trim_start().to_string())
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// `entries` as `Properties.store` writes them after its comment line: `key=value`, with
/// `=`, `:`, `#`, `!`, `\` (and spaces in keys, a leading one in values) escaped, control
/// and non-ASCII characters as `\uXXXX`.
pub fn store<'a>(comment: &str, entries: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = format!("#{comment}\n");
    for (key, value) in entries {
        escape_into(&mut out, key, true);
        out.push('=');
        escape_into(&mut out, value, false);
        out.push('\n');
    }
    out
}

fn escape_into(out: &mut String, text: &str, is_key: bool) {
    for (i, c) in text.chars().enumerate() {
        match c {
            ' ' if is_key || i == 0 => out.push_str("\\ "),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x0c' => out.push_str("\\f"),
            '=' | ':' | '#' | '!' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if (' '..='~').contains(&c) => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescapes_java_properties() {
        let p = parse("#c\nhoodie.a=x\\:y\\=z\nb : v\\u00e9\nlong=one\\\n   two\n");
        assert_eq!(p["hoodie.a"], "x:y=z");
        assert_eq!(p["b"], "vé");
        assert_eq!(p["long"], "onetwo");
    }

    #[test]
    fn stores_what_java_and_parse_read_back() {
        let entries = [("hoodie.s", "{\"a\":1}"), ("k", " lead#!\\é\n")];
        let text = store("c", entries);
        assert!(text.contains("hoodie.s={\"a\"\\:1}"), "{text}");
        let back = parse(&text);
        for (k, v) in entries {
            assert_eq!(back[k], v);
        }
    }
}
