//! Java `.properties` text: comments, `=`/`:`/space separators, backslash escapes,
//! `\uXXXX`, and line continuations.

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
}
