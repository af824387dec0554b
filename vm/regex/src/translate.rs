//! Python's regex syntax (the `regex` package's, version 0) rewritten in
//! fancy-regex's, with the capture groups counted and named on the way.
//!
//! Where the two differ: Python's `$` also matches before a final newline
//! and `\Z` is the very end; `{` that starts no quantifier is a literal;
//! inside a class `[`, `&&`, `--` and `~~` are literals; `\<`, `\>` are
//! plain characters; `(?#...)` is a comment; verbose mode keeps whitespace
//! inside classes; the ASCII flag narrows `\w \d \s \b`; octal and
//! `\u`/`\U` escapes.

use crate::{Error, Flags};

/// A translated pattern.
#[derive(Debug)]
pub(crate) struct Translated {
    pub pattern: String,
    /// Capture groups, not counting group 0.
    pub groups: usize,
    /// Named groups and their numbers, in pattern order.
    pub names: Vec<(String, usize)>,
    /// Flags set inline at the pattern's start (`(?i)`), which Python adds to the pattern's.
    pub inline: Flags,
}

pub(crate) fn translate(pattern: &str, flags: Flags) -> Result<Translated, Error> {
    let mut t = Translator {
        chars: pattern.chars().collect(),
        at: 0,
        out: String::with_capacity(pattern.len() + 16),
        flags,
        inline: Flags::empty(),
        groups: 0,
        names: Vec::new(),
        open: Vec::new(),
    };
    t.leading_flags()?;
    t.run()?;
    if !t.open.is_empty() {
        return Err(Error::at("missing )", t.chars.len()));
    }
    let mut prefix = String::new();
    let all = t.flags | t.inline;
    for (flag, letter) in [
        (Flags::IGNORECASE, 'i'),
        (Flags::MULTILINE, 'm'),
        (Flags::DOTALL, 's'),
    ] {
        if all.contains(flag) {
            prefix.push(letter);
        }
    }
    let pattern = if prefix.is_empty() {
        t.out
    } else {
        format!("(?{prefix}){}", t.out)
    };
    Ok(Translated {
        pattern,
        groups: t.groups,
        names: t.names,
        inline: t.inline,
    })
}

struct Translator {
    chars: Vec<char>,
    at: usize,
    out: String,
    flags: Flags,
    inline: Flags,
    groups: usize,
    names: Vec<(String, usize)>,
    /// Where each open group started, for "missing )".
    open: Vec<usize>,
}

impl Translator {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn all_flags(&self) -> Flags {
        self.flags | self.inline
    }

    fn verbose(&self) -> bool {
        self.all_flags().contains(Flags::VERBOSE)
    }

    fn ascii(&self) -> bool {
        self.all_flags().contains(Flags::ASCII)
    }

    /// Global flags written at the start (`(?ix)`, possibly several groups).
    fn leading_flags(&mut self) -> Result<(), Error> {
        loop {
            if self.peek(0) != Some('(') || self.peek(1) != Some('?') {
                return Ok(());
            }
            let mut k = 2;
            let mut flags = Flags::empty();
            while let Some(c) = self.peek(k) {
                match Flags::from_letter(c) {
                    Some(f) => flags |= f,
                    None => break,
                }
                k += 1;
            }
            if k == 2 || self.peek(k) != Some(')') {
                return Ok(());
            }
            self.inline |= flags;
            self.at += k + 1;
            // Comments and whitespace may follow in verbose mode.
            if self.verbose() {
                self.skip_verbose();
            }
        }
    }

    fn skip_verbose(&mut self) {
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() {
                self.at += 1;
            } else if c == '#' {
                while let Some(c) = self.peek(0) {
                    self.at += 1;
                    if c == '\n' {
                        break;
                    }
                }
            } else {
                break;
            }
        }
    }

    fn run(&mut self) -> Result<(), Error> {
        // Whether the last thing written can take a quantifier, and whether
        // it was one.
        let mut repeatable = false;
        let mut quantified = false;
        while self.at < self.chars.len() {
            if self.verbose() {
                self.skip_verbose();
                if self.at >= self.chars.len() {
                    break;
                }
            }
            let c = self.chars[self.at];
            let was_quantified = std::mem::take(&mut quantified);
            match c {
                '\\' => {
                    repeatable = self.escape(false)?;
                }
                '[' => {
                    self.class()?;
                    repeatable = true;
                }
                '(' => {
                    repeatable = self.group()?;
                }
                ')' => {
                    if self.open.pop().is_none() {
                        return Err(Error::at("unbalanced parenthesis", self.at));
                    }
                    self.out.push(')');
                    self.at += 1;
                    repeatable = true;
                }
                '$' => {
                    if self.all_flags().contains(Flags::MULTILINE) {
                        self.out.push('$');
                    } else {
                        self.out.push_str(r"(?=\n?\z)");
                    }
                    self.at += 1;
                    repeatable = false;
                }
                '^' => {
                    self.out.push('^');
                    self.at += 1;
                    repeatable = false;
                }
                '*' | '+' | '?' => {
                    self.check_repeatable(repeatable, was_quantified)?;
                    self.out.push(c);
                    self.at += 1;
                    self.quantifier_suffix();
                    repeatable = false;
                    quantified = true;
                }
                '{' => {
                    if let Some((text, len)) = self.counted_repeat()? {
                        self.check_repeatable(repeatable, was_quantified)?;
                        self.out.push_str(&text);
                        self.at += len;
                        self.quantifier_suffix();
                        repeatable = false;
                        quantified = true;
                    } else {
                        self.out.push_str(r"\{");
                        self.at += 1;
                        repeatable = true;
                    }
                }
                '}' => {
                    self.out.push_str(r"\}");
                    self.at += 1;
                    repeatable = true;
                }
                '|' => {
                    self.out.push('|');
                    self.at += 1;
                    repeatable = false;
                }
                '.' => {
                    self.out.push('.');
                    self.at += 1;
                    repeatable = true;
                }
                _ => {
                    literal(&mut self.out, c);
                    self.at += 1;
                    repeatable = true;
                }
            }
        }
        Ok(())
    }

    fn check_repeatable(&self, repeatable: bool, quantified: bool) -> Result<(), Error> {
        match (repeatable, quantified) {
            (true, _) => Ok(()),
            (false, true) => Err(Error::at("multiple repeat", self.at)),
            (false, false) => Err(Error::at("nothing to repeat", self.at)),
        }
    }

    /// A lazy `?` or possessive `+` after a quantifier.
    fn quantifier_suffix(&mut self) {
        if let Some(c @ ('?' | '+')) = self.peek(0) {
            self.out.push(c);
            self.at += 1;
        }
    }

    /// `{m}`, `{m,}`, `{,n}`, `{m,n}` at the cursor, as fancy-regex spells
    /// it, and its length; None when the brace starts no quantifier.
    fn counted_repeat(&self) -> Result<Option<(String, usize)>, Error> {
        let mut k = 1;
        let mut low = String::new();
        while let Some(c) = self.peek(k).filter(char::is_ascii_digit) {
            low.push(c);
            k += 1;
        }
        let mut high = None;
        if self.peek(k) == Some(',') {
            k += 1;
            let mut h = String::new();
            while let Some(c) = self.peek(k).filter(char::is_ascii_digit) {
                h.push(c);
                k += 1;
            }
            high = Some(h);
        }
        if self.peek(k) != Some('}')
            || (low.is_empty() && high.as_ref().is_none_or(String::is_empty))
        {
            return Ok(None);
        }
        let low = if low.is_empty() { "0".to_owned() } else { low };
        if let Some(h) = high.as_ref().filter(|h| !h.is_empty())
            && h.parse::<u64>().ok() < low.parse::<u64>().ok()
        {
            return Err(Error::at("min repeat greater than max repeat", self.at + 1));
        }
        let text = match high {
            None => format!("{{{low}}}"),
            Some(h) => format!("{{{low},{h}}}"),
        };
        Ok(Some((text, k + 1)))
    }

    /// A group at the cursor; returns whether what follows may be repeated.
    fn group(&mut self) -> Result<bool, Error> {
        let start = self.at;
        if self.peek(1) != Some('?') {
            self.groups += 1;
            self.open.push(start);
            self.out.push('(');
            self.at += 1;
            return Ok(false);
        }
        let rest: String = self.chars[self.at + 2..].iter().take(3).collect();
        let simple = |t: &mut Self, written: &str, len: usize| {
            t.open.push(start);
            t.out.push_str(written);
            t.at += len;
            Ok(false)
        };
        if rest.starts_with(':') {
            return simple(self, "(?:", 3);
        }
        if rest.starts_with('=') || rest.starts_with('!') || rest.starts_with('>') {
            let written = format!("(?{}", &rest[..1]);
            return simple(self, &written, 3);
        }
        if rest.starts_with("<=") || rest.starts_with("<!") {
            let written = format!("(?{}", &rest[..2]);
            return simple(self, &written, 4);
        }
        if rest.starts_with('#') {
            // A comment: skipped to its `)`.
            while let Some(c) = self.peek(0) {
                self.at += 1;
                if c == ')' {
                    return Ok(false);
                }
            }
            return Err(Error::at("missing )", self.chars.len()));
        }
        if rest.starts_with("P=") {
            let name = self.name_until(self.at + 4, ')')?;
            let len = name.chars().count();
            if !self.names.iter().any(|(n, _)| *n == name) {
                return Err(Error::at("unknown group", self.at + 3));
            }
            self.out.push_str(&format!(r"\k<{name}>"));
            self.at += 4 + len + 1;
            return Ok(true);
        }
        if rest.starts_with("P<")
            || (rest.starts_with('<') && !rest.starts_with("<=") && !rest.starts_with("<!"))
        {
            let name_at = self.at + if rest.starts_with('P') { 4 } else { 3 };
            let name = self.name_until(name_at, '>')?;
            if !is_identifier(&name) {
                return Err(Error::at(
                    "bad character in group name",
                    name_at + name.chars().count(),
                ));
            }
            // The `regex` package makes a repeated name one group; the
            // engine has no such groups.
            if self.names.iter().any(|(n, _)| *n == name) {
                return Err(Error::at(
                    format!("fxvm's regex: the group name '{name}' is used twice"),
                    name_at,
                ));
            }
            self.groups += 1;
            self.names.push((name.clone(), self.groups));
            self.open.push(start);
            self.out.push_str(&format!("(?P<{name}>"));
            self.at = name_at + name.chars().count() + 1;
            return Ok(false);
        }
        // Scoped flags: (?i:...), (?-i:...), (?i-s:...).
        let mut k = 2;
        let (mut on, mut off) = (String::new(), String::new());
        let mut negative = false;
        while let Some(c) = self.peek(k) {
            if c == '-' && !negative {
                negative = true;
            } else if let Some(f) = Flags::from_letter(c) {
                let letter = match f {
                    Flags::IGNORECASE => Some('i'),
                    Flags::MULTILINE => Some('m'),
                    Flags::DOTALL => Some('s'),
                    Flags::VERBOSE | Flags::ASCII => {
                        return Err(Error::at(
                            "fxvm's regex: verbose and ASCII flags can only apply to the whole pattern",
                            start,
                        ));
                    }
                    _ => None,
                };
                if let Some(l) = letter {
                    if negative { off.push(l) } else { on.push(l) }
                }
            } else {
                break;
            }
            k += 1;
        }
        if k > 2 && self.peek(k) == Some(':') {
            self.open.push(start);
            let sep = if off.is_empty() {
                String::new()
            } else {
                format!("-{off}")
            };
            self.out.push_str(&format!("(?{on}{sep}:"));
            self.at += k + 1;
            return Ok(false);
        }
        if k > 2 && self.peek(k) == Some(')') {
            return Err(Error::at(
                "global flags not at the start of the expression",
                start,
            ));
        }
        let at = if self.peek(2) == Some('P') {
            start + 3
        } else {
            start + 2
        };
        Err(Error::at("unknown extension", at))
    }

    /// The text from `from` to the next `end` (the name of a group).
    fn name_until(&self, from: usize, end: char) -> Result<String, Error> {
        let mut name = String::new();
        let mut k = from;
        while let Some(&c) = self.chars.get(k) {
            if c == end {
                if name.is_empty() {
                    return Err(Error::at("missing group name", from));
                }
                return Ok(name);
            }
            name.push(c);
            k += 1;
        }
        Err(Error::at(format!("missing {end}"), self.chars.len()))
    }

    /// An escape at the cursor; returns whether it can be repeated. Inside a
    /// class only class escapes (`\d`, `\p{L}`, …) and errors reach here:
    /// escapes of one character are `class_code`'s.
    fn escape(&mut self, in_class: bool) -> Result<bool, Error> {
        let start = self.at;
        let Some(c) = self.peek(1) else {
            return Err(Error::at("bad escape (end of pattern)", start + 1));
        };
        self.at += 2;
        let ascii = self.ascii();
        match c {
            'd' | 'D' | 'w' | 'W' | 's' | 'S' if ascii => {
                let class = match c.to_ascii_lowercase() {
                    'd' => "0-9",
                    'w' => "0-9A-Za-z_",
                    _ => r"\t\n\x0B\x0C\r ",
                };
                let negated = c.is_ascii_uppercase();
                match (in_class, negated) {
                    (true, false) => self.out.push_str(class),
                    (true, true) => self.out.push_str(&format!("[^{class}]")),
                    (false, false) => self.out.push_str(&format!("[{class}]")),
                    (false, true) => self.out.push_str(&format!("[^{class}]")),
                }
            }
            'd' | 'D' | 'w' | 'W' | 's' | 'S' => {
                self.out.push('\\');
                self.out.push(c);
            }
            'b' | 'B' => {
                self.out.push_str(if ascii { "(?-u:\\" } else { "\\" });
                self.out.push(c);
                if ascii {
                    self.out.push(')');
                }
                return Ok(false);
            }
            'A' if !in_class => {
                self.out.push_str(r"\A");
                return Ok(false);
            }
            'Z' if !in_class => {
                self.out.push_str(r"\z");
                return Ok(false);
            }
            'n' => self.out.push_str(r"\n"),
            't' => self.out.push_str(r"\t"),
            'r' => self.out.push_str(r"\r"),
            'f' => self.out.push_str(r"\x0C"),
            'v' => self.out.push_str(r"\x0B"),
            'a' => self.out.push_str(r"\x07"),
            'x' => {
                let code = self.hex(2, start)?;
                push_code(&mut self.out, code);
            }
            'u' => {
                let code = self.hex(4, start)?;
                push_code(&mut self.out, code);
            }
            'U' => {
                let code = self.hex(8, start)?;
                if char::from_u32(code).is_none() {
                    return Err(Error::at(format!("bad escape \\U{code:08x}"), start));
                }
                push_code(&mut self.out, code);
            }
            'p' | 'P' => {
                let body = if self.peek(0) == Some('{') {
                    let name = self.name_until(self.at + 1, '}')?;
                    self.at += name.chars().count() + 2;
                    name
                } else {
                    let Some(letter) = self.peek(0) else {
                        return Err(Error::at("missing property name", start));
                    };
                    self.at += 1;
                    letter.to_string()
                };
                let (negated, body) = match body.strip_prefix('^') {
                    Some(rest) => (c == 'p', rest.to_owned()),
                    None => (c == 'P', body),
                };
                self.out.push_str(if negated { r"\P{" } else { r"\p{" });
                self.out.push_str(&body);
                self.out.push('}');
            }
            '0' => {
                // Up to two more octal digits.
                let mut code = 0;
                for _ in 0..2 {
                    match self.peek(0).and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            code = code * 8 + d;
                            self.at += 1;
                        }
                        None => break,
                    }
                }
                push_code(&mut self.out, code);
            }
            '1'..='9' => {
                // Three octal digits are a character; otherwise a group
                // reference of one or two digits.
                let d2 = self.peek(0);
                let d3 = self.peek(1);
                let octal = |d: Option<char>| d.is_some_and(|d| d.is_digit(8));
                if c.is_digit(8) && octal(d2) && octal(d3) {
                    let code = [c, d2.unwrap(), d3.unwrap()]
                        .iter()
                        .fold(0, |n, d| n * 8 + d.to_digit(8).unwrap());
                    if code > 0o377 {
                        return Err(Error::at(
                            format!(
                                "octal escape value \\{c}{}{} outside of range 0-0o377",
                                d2.unwrap(),
                                d3.unwrap()
                            ),
                            start,
                        ));
                    }
                    self.at += 2;
                    push_code(&mut self.out, code);
                } else if in_class {
                    return Err(Error::at(format!("bad escape \\{c}"), start));
                } else {
                    let mut number = c.to_digit(10).unwrap() as usize;
                    if let Some(d) = d2.and_then(|d| d.to_digit(10)) {
                        number = number * 10 + d as usize;
                        self.at += 1;
                    }
                    if number > self.groups {
                        return Err(Error::at("invalid group reference", self.at));
                    }
                    self.out.push_str(&format!(r"\{number}"));
                }
            }
            c if c.is_ascii_alphanumeric() => {
                return Err(Error::at(format!("bad escape \\{c}"), start + 2));
            }
            c => literal(&mut self.out, c),
        }
        Ok(true)
    }

    fn hex(&mut self, digits: usize, start: usize) -> Result<u32, Error> {
        let text: String = self.chars[self.at..].iter().take(digits).collect();
        if text.chars().count() < digits || !text.chars().all(|c| c.is_ascii_hexdigit()) {
            let escape: String = self.chars[start..(self.at + digits).min(self.chars.len())]
                .iter()
                .collect();
            return Err(Error::at(format!("incomplete escape {escape}"), start + 2));
        }
        self.at += digits;
        Ok(u32::from_str_radix(&text, 16).expect("checked hex digits"))
    }

    /// A character class at the cursor (`[` ... `]`).
    fn class(&mut self) -> Result<(), Error> {
        self.at += 1;
        let negated = self.peek(0) == Some('^');
        if negated {
            self.at += 1;
        }
        let mut items: Vec<Item> = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek(0) else {
                return Err(Error::at("unterminated character set", self.chars.len()));
            };
            if c == ']' && !first {
                self.at += 1;
                break;
            }
            first = false;
            if c == '[' && self.peek(1) == Some(':') {
                let name = self.name_until(self.at + 2, ':')?;
                if self.chars.get(self.at + 2 + name.chars().count() + 1) == Some(&']') {
                    let Some(class) = posix_class(&name) else {
                        return Err(Error::at(
                            format!("fxvm's regex does not support the POSIX class [:{name}:]"),
                            self.at,
                        ));
                    };
                    items.push(Item::Raw(class.to_owned()));
                    self.at += name.chars().count() + 4;
                    continue;
                }
            }
            if c == '-'
                && self.peek(1).is_some_and(|n| n != ']')
                && let Some(&Item::Range(lo, hi)) = items.last()
                && lo == hi
            {
                self.at += 1;
                let Some(end) = self.class_code()? else {
                    return Err(Error::at("bad character range", self.at + 2));
                };
                if end < lo {
                    return Err(Error::at("bad character range", self.at));
                }
                items.pop();
                items.push(Item::Range(lo, end));
                continue;
            }
            match self.class_code()? {
                Some(code) => items.push(Item::Range(code, code)),
                None => {
                    // A class escape (\d, \p{L}, …), written as it is.
                    let mut written = std::mem::take(&mut self.out);
                    self.escape(true)?;
                    std::mem::swap(&mut written, &mut self.out);
                    items.push(Item::Raw(written));
                }
            }
        }
        let mut body = String::new();
        for item in &items {
            match *item {
                Item::Raw(ref raw) => body.push_str(raw),
                // Surrogates are no characters of UTF-8 text: ranges lose them.
                Item::Range(lo, hi) => {
                    for (a, b) in [(lo, hi.min(0xD7FF)), (lo.max(0xE000), hi)] {
                        if a <= b {
                            push_class_code(&mut body, a);
                            if b > a {
                                body.push('-');
                                push_class_code(&mut body, b);
                            }
                        }
                    }
                }
            }
        }
        match (body.is_empty(), negated) {
            // Only surrogates: nothing, or everything when negated.
            (true, false) => self.out.push_str(r"[^\x{0}-\x{10FFFF}]"),
            (true, true) => self.out.push_str(r"[\x{0}-\x{10FFFF}]"),
            (false, _) => {
                self.out.push('[');
                if negated {
                    self.out.push('^');
                }
                self.out.push_str(&body);
                self.out.push(']');
            }
        }
        Ok(())
    }

    /// The one code point a class item at the cursor stands for — a
    /// character, or an escape of one — consumed; None (nothing consumed)
    /// for a class escape such as `\d`.
    fn class_code(&mut self) -> Result<Option<u32>, Error> {
        let Some(c) = self.peek(0) else {
            return Err(Error::at("unterminated character set", self.chars.len()));
        };
        if c != '\\' {
            self.at += 1;
            return Ok(Some(c as u32));
        }
        let start = self.at;
        let Some(e) = self.peek(1) else {
            return Err(Error::at("bad escape (end of pattern)", start + 1));
        };
        let simple = match e {
            'n' => Some(0x0A),
            't' => Some(0x09),
            'r' => Some(0x0D),
            'f' => Some(0x0C),
            'v' => Some(0x0B),
            'a' => Some(0x07),
            'b' => Some(0x08),
            e if !e.is_ascii_alphanumeric() => Some(e as u32),
            _ => None,
        };
        if let Some(code) = simple {
            self.at += 2;
            return Ok(Some(code));
        }
        let digits = match e {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            '0'..='7' => {
                self.at += 1;
                let mut code = 0;
                let mut n = 0;
                while n < 3
                    && let Some(d) = self.peek(0).and_then(|d| d.to_digit(8))
                {
                    code = code * 8 + d;
                    self.at += 1;
                    n += 1;
                }
                return Ok(Some(code));
            }
            _ => return Ok(None),
        };
        self.at += 2;
        let code = self.hex(digits, start)?;
        if code > 0x10FFFF {
            return Err(Error::at(format!("bad escape \\U{code:08x}"), start));
        }
        Ok(Some(code))
    }
}

/// An item of a character class.
enum Item {
    /// Code points `lo..=hi` (one character when equal).
    Range(u32, u32),
    /// A class escape or POSIX class, already written.
    Raw(String),
}

/// A code point inside a class.
fn push_class_code(out: &mut String, code: u32) {
    match char::from_u32(code) {
        Some(c) if c.is_ascii_alphanumeric() || (!c.is_ascii() && !c.is_whitespace()) => {
            out.push(c)
        }
        _ => push_code(out, code),
    }
}

/// A POSIX class as the `regex` package reads it (over Unicode), written
/// for inside a class.
fn posix_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "alpha" => r"\p{Alphabetic}",
        "alnum" => r"\p{Alphabetic}\p{Nd}",
        "digit" => r"\p{Nd}",
        "punct" => r"\p{P}\p{S}",
        "space" => r"\s",
        "upper" => r"\p{Uppercase}",
        "lower" => r"\p{Lowercase}",
        "xdigit" => "0-9A-Fa-f",
        "word" => r"\w",
        "cntrl" => r"\p{Cc}",
        "blank" => r"\p{Zs}\t",
        _ => return None,
    })
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// A code point outside a class; a surrogate, which no UTF-8 text holds,
/// is a class matching nothing.
fn push_code(out: &mut String, code: u32) {
    if (0xD800..=0xDFFF).contains(&code) {
        out.push_str(r"[^\x{0}-\x{10FFFF}]");
    } else {
        out.push_str(&format!(r"\x{{{code:X}}}"));
    }
}

/// `c` matched literally outside a class.
fn literal(out: &mut String, c: char) {
    if r"\.+*?()|[]{}^$#".contains(c) {
        out.push('\\');
    }
    out.push(c);
}
