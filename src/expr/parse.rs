//! Text filters: `col op value`, `col in (a, b)`, `col is [not] null`, combined with
//! `and` / `or` and parentheses. Values may be quoted; unquoted values run to the next
//! `and` / `or` / `)` so `city = san francisco` works.

use super::{Expr, Op, Predicate};
use crate::error::{HudiError, Result};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Quoted(String),
    Sym(&'static str),
}

fn tokenize(s: &str) -> Result<Vec<Tok>> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '\'' || c == '"' {
            let mut j = i + 1;
            let mut text = String::new();
            loop {
                match chars.get(j) {
                    None => {
                        return Err(HudiError::invalid(format!(
                            "unterminated quote in filter {s:?}"
                        )))
                    }
                    Some(&q) if q == c && chars.get(j + 1) == Some(&c) => {
                        text.push(c);
                        j += 2;
                    }
                    Some(&q) if q == c => break,
                    Some(&q) => {
                        text.push(q);
                        j += 1;
                    }
                }
            }
            out.push(Tok::Quoted(text));
            i = j + 1;
            continue;
        }
        let two: String = chars[i..chars.len().min(i + 2)].iter().collect();
        let sym = match two.as_str() {
            "!=" => Some("!="),
            "<>" => Some("!="),
            "<=" => Some("<="),
            ">=" => Some(">="),
            "==" => Some("="),
            _ => None,
        };
        if let Some(sym) = sym {
            out.push(Tok::Sym(sym));
            i += 2;
            continue;
        }
        let one = match c {
            '=' => Some("="),
            '<' => Some("<"),
            '>' => Some(">"),
            '(' => Some("("),
            ')' => Some(")"),
            ',' => Some(","),
            _ => None,
        };
        if let Some(sym) = one {
            out.push(Tok::Sym(sym));
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() && !"=<>!(),'\"".contains(chars[i]) {
            i += 1;
        }
        if i == start {
            return Err(HudiError::invalid(format!(
                "unexpected {c:?} in filter {s:?}"
            )));
        }
        out.push(Tok::Word(chars[start..i].iter().collect()));
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    text: String,
}

impl Parser {
    fn peek_word(&self, w: &str) -> bool {
        matches!(self.toks.get(self.pos), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w))
    }

    fn peek_sym(&self, s: &str) -> bool {
        matches!(self.toks.get(self.pos), Some(Tok::Sym(x)) if *x == s)
    }

    fn err(&self, what: &str) -> HudiError {
        HudiError::invalid(format!("{what} in filter {:?}", self.text))
    }

    fn expr(&mut self) -> Result<Expr> {
        let mut parts = vec![self.and_expr()?];
        while self.peek_word("or") {
            self.pos += 1;
            parts.push(self.and_expr()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Expr::Or(parts)
        })
    }

    fn and_expr(&mut self) -> Result<Expr> {
        let mut parts = vec![self.atom()?];
        while self.peek_word("and") {
            self.pos += 1;
            parts.push(self.atom()?);
        }
        Ok(if parts.len() == 1 {
            parts.remove(0)
        } else {
            Expr::And(parts)
        })
    }

    fn atom(&mut self) -> Result<Expr> {
        if self.peek_sym("(") {
            self.pos += 1;
            let e = self.expr()?;
            if !self.peek_sym(")") {
                return Err(self.err("missing ')'"));
            }
            self.pos += 1;
            return Ok(e);
        }
        let column = match self.toks.get(self.pos) {
            Some(Tok::Word(w)) | Some(Tok::Quoted(w)) => w.clone(),
            _ => return Err(self.err("expected a column name")),
        };
        self.pos += 1;
        let op = self.op()?;
        let values = match op {
            Op::IsNull | Op::IsNotNull => Vec::new(),
            Op::In | Op::NotIn => self.list()?,
            _ => vec![self.value()?],
        };
        Ok(Expr::Pred(Predicate { column, op, values }))
    }

    fn op(&mut self) -> Result<Op> {
        match self.toks.get(self.pos).cloned() {
            Some(Tok::Sym(s)) if !matches!(s, "(" | ")" | ",") => {
                self.pos += 1;
                Op::parse(s).ok_or_else(|| self.err("unknown operator"))
            }
            Some(Tok::Word(w)) => {
                self.pos += 1;
                match w.to_ascii_lowercase().as_str() {
                    "in" => Ok(Op::In),
                    "not" if self.peek_word("in") => {
                        self.pos += 1;
                        Ok(Op::NotIn)
                    }
                    "is" => {
                        let negated = self.peek_word("not");
                        if negated {
                            self.pos += 1;
                        }
                        if !self.peek_word("null") {
                            return Err(self.err("expected 'null' after 'is'"));
                        }
                        self.pos += 1;
                        Ok(if negated { Op::IsNotNull } else { Op::IsNull })
                    }
                    other => Op::parse(other)
                        .ok_or_else(|| self.err(&format!("unknown operator {other:?}"))),
                }
            }
            _ => Err(self.err("expected an operator")),
        }
    }

    fn value(&mut self) -> Result<String> {
        match self.toks.get(self.pos).cloned() {
            Some(Tok::Quoted(q)) => {
                self.pos += 1;
                Ok(q)
            }
            Some(Tok::Word(_)) => {
                let mut words = Vec::new();
                while let Some(Tok::Word(w)) = self.toks.get(self.pos) {
                    if !words.is_empty()
                        && (w.eq_ignore_ascii_case("and") || w.eq_ignore_ascii_case("or"))
                    {
                        break;
                    }
                    words.push(w.clone());
                    self.pos += 1;
                }
                Ok(words.join(" "))
            }
            _ => Err(self.err("expected a value")),
        }
    }

    fn list(&mut self) -> Result<Vec<String>> {
        if !self.peek_sym("(") {
            return Err(self.err("expected '(' after in"));
        }
        self.pos += 1;
        let mut values = Vec::new();
        loop {
            values.push(self.value()?);
            if self.peek_sym(",") {
                self.pos += 1;
            } else if self.peek_sym(")") {
                self.pos += 1;
                return Ok(values);
            } else {
                return Err(self.err("expected ',' or ')' in list"));
            }
        }
    }
}

pub fn parse_filter(text: &str) -> Result<Expr> {
    let mut p = Parser {
        toks: tokenize(text)?,
        pos: 0,
        text: text.to_string(),
    };
    let e = p.expr()?;
    if p.pos != p.toks.len() {
        return Err(p.err("unexpected trailing text"));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_forms() {
        assert_eq!(
            parse_filter("city = san francisco").unwrap(),
            Expr::pred("city", Op::Eq, &["san francisco"])
        );
        assert_eq!(
            parse_filter("a>=5").unwrap(),
            Expr::pred("a", Op::Ge, &["5"])
        );
        assert_eq!(
            parse_filter("k in ('x', y)").unwrap(),
            Expr::pred("k", Op::In, &["x", "y"])
        );
        assert_eq!(
            parse_filter("k is not null").unwrap(),
            Expr::pred("k", Op::IsNotNull, &[])
        );
        let e = parse_filter("(a = 1 or b = 2) and c != 'it''s'").unwrap();
        assert_eq!(e.columns(), vec!["a", "b", "c"]);
        assert!(parse_filter("a = ").is_err());
        assert!(parse_filter("a ~ 3").is_err());
    }
}
