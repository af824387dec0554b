//! Replacement templates (`regex.sub(pattern, r"\1-\g<name>", text)`):
//! group references by number and name, and the escapes Python expands.

use crate::Error;

/// A parsed template: literal text and group references, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pub pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Literal(String),
    Group(usize),
}

impl Template {
    /// Parses `text` against a pattern's `groups` and `names`.
    pub fn parse(text: &str, groups: usize, names: &[(String, usize)]) -> Result<Template, Error> {
        let chars: Vec<char> = text.chars().collect();
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut i = 0;
        let group = |pieces: &mut Vec<Piece>, literal: &mut String, g: usize| {
            if !literal.is_empty() {
                pieces.push(Piece::Literal(std::mem::take(literal)));
            }
            pieces.push(Piece::Group(g));
        };
        while i < chars.len() {
            let c = chars[i];
            if c != '\\' {
                literal.push(c);
                i += 1;
                continue;
            }
            let Some(&e) = chars.get(i + 1) else {
                return Err(Error::at("bad escape (end of pattern)", i + 1));
            };
            match e {
                'g' => {
                    if chars.get(i + 2) != Some(&'<') {
                        return Err(Error::at("missing <", i + 2));
                    }
                    let Some(close) = chars[i + 3..].iter().position(|&c| c == '>') else {
                        let name_len = chars.len() - (i + 3);
                        return Err(match name_len {
                            0 => Error::at("missing group name", i + 3),
                            _ => Error::at("missing >", chars.len()),
                        });
                    };
                    let name: String = chars[i + 3..i + 3 + close].iter().collect();
                    let end = i + 3 + close;
                    if name.is_empty() {
                        return Err(Error::at("missing group name", i + 3));
                    }
                    let number = if name.chars().all(|c| c.is_ascii_digit()) {
                        match name.parse::<usize>() {
                            Ok(n) if n <= groups => n,
                            _ => return Err(Error::at("invalid group reference", end + 1)),
                        }
                    } else if name
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphabetic() || c == '_')
                        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
                    {
                        match names.iter().find(|(n, _)| *n == name) {
                            Some((_, n)) => *n,
                            None => {
                                return Err(Error {
                                    message: "unknown group".into(),
                                    pos: None,
                                    no_such_group: true,
                                });
                            }
                        }
                    } else {
                        return Err(Error::at("bad character in group name", end));
                    };
                    group(&mut pieces, &mut literal, number);
                    i = end + 1;
                }
                '0'..='9' => {
                    // `\0` and three octal digits are characters; else one or two digits are a group.
                    let octal = |k: usize| chars.get(k).is_some_and(|d| d.is_digit(8));
                    if e == '0' || (e.is_digit(8) && octal(i + 2) && octal(i + 3)) {
                        let mut code = 0;
                        let mut k = i + 1;
                        while k < i + 4 && octal(k) {
                            code = code * 8 + chars[k].to_digit(8).unwrap();
                            k += 1;
                        }
                        literal.push(char::from_u32(code).unwrap_or('\0'));
                        i = k;
                    } else {
                        let mut number = e.to_digit(10).unwrap() as usize;
                        let mut k = i + 2;
                        if let Some(d) = chars.get(k).and_then(|d| d.to_digit(10)) {
                            number = number * 10 + d as usize;
                            k += 1;
                        }
                        if number > groups {
                            return Err(Error::bare("invalid group reference"));
                        }
                        group(&mut pieces, &mut literal, number);
                        i = k;
                    }
                }
                'n' | 't' | 'r' | 'f' | 'v' | 'a' | 'b' | '\\' => {
                    literal.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'f' => '\x0c',
                        'v' => '\x0b',
                        'a' => '\x07',
                        'b' => '\x08',
                        _ => '\\',
                    });
                    i += 2;
                }
                e if e.is_ascii_alphabetic() => {
                    return Err(Error::at(format!("bad escape \\{e}"), i + 2));
                }
                e => {
                    literal.push('\\');
                    literal.push(e);
                    i += 2;
                }
            }
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(literal));
        }
        Ok(Template { pieces })
    }

    /// The template filled from `spans`, a match's character spans into `text`.
    pub fn expand_chars(&self, text: &str, spans: &[Option<(usize, usize)>]) -> String {
        let offsets = crate::offsets::Offsets::new(text);
        let mut out = String::new();
        self.expand(text, &offsets.bytes(spans), &mut out);
        out
    }

    /// The template filled from `spans` (byte spans into `text`).
    pub(crate) fn expand(&self, text: &str, spans: &[Option<(usize, usize)>], out: &mut String) {
        for piece in &self.pieces {
            match piece {
                Piece::Literal(s) => out.push_str(s),
                Piece::Group(g) => {
                    if let Some((a, b)) = spans[*g] {
                        out.push_str(&text[a..b]);
                    }
                }
            }
        }
    }
}
