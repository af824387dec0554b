//! The VM-free half of fxvm's `regex` module: patterns in Python's syntax
//! (the `regex` package's), compiled to fancy-regex, matched with Python's
//! rules — positions in characters, `pos`/`endpos` windows, `match` and
//! `fullmatch` anchoring, and how `finditer`/`sub`/`split` step past empty
//! matches.

mod flags;
mod offsets;
mod template;
mod translate;

use std::sync::OnceLock;

pub use flags::Flags;
pub use template::{Piece, Template};

use offsets::Offsets;

/// A pattern that failed to compile, or a match that failed to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub message: String,
    /// Where in the pattern (in characters), for compile errors.
    pub pos: Option<usize>,
    /// A template naming a group the pattern lacks (the `regex` package's IndexError).
    pub no_such_group: bool,
}

impl Error {
    fn at(message: impl Into<String>, pos: usize) -> Error {
        Error {
            message: message.into(),
            pos: Some(pos),
            no_such_group: false,
        }
    }

    fn bare(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            pos: None,
            no_such_group: false,
        }
    }

    fn engine(e: fancy_regex::Error) -> Error {
        Error::bare(e.to_string())
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pos {
            Some(pos) => write!(f, "{} at position {pos}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// The spans of a match: group 0 (the whole match), then each group (in
/// characters through the API, in bytes inside); None for a group that did
/// not take part.
pub type Spans = Vec<Option<(usize, usize)>>;

/// Where a match may start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Anchor {
    /// Anywhere from `pos` (`search`).
    Search,
    /// At `pos` (`match`).
    Start,
    /// At `pos`, ending at `endpos` (`fullmatch`).
    Full,
}

/// A compiled pattern.
#[derive(Debug)]
pub struct Regex {
    re: fancy_regex::Regex,
    /// The same pattern refusing empty matches, for stepping past one
    /// (made on first need).
    not_empty: OnceLock<Result<fancy_regex::Regex, Error>>,
    /// The pattern followed by the end of the text, for `fullmatch`.
    full: OnceLock<Result<fancy_regex::Regex, Error>>,
    translated: String,
    groups: usize,
    names: Vec<(String, usize)>,
    flags: Flags,
}

impl Regex {
    /// Compiles `pattern` (Python syntax) with `flags`.
    pub fn new(pattern: &str, flags: Flags) -> Result<Regex, Error> {
        let t = translate::translate(pattern, flags)?;
        let re = build(&t.pattern, false)?;
        Ok(Regex {
            re,
            not_empty: OnceLock::new(),
            full: OnceLock::new(),
            translated: t.pattern,
            groups: t.groups,
            names: t.names,
            flags: flags | t.inline,
        })
    }

    /// Capture groups, not counting the whole match.
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// Named groups and their numbers.
    pub fn names(&self) -> &[(String, usize)] {
        &self.names
    }

    /// The pattern's flags, with those set inline.
    pub fn flags(&self) -> Flags {
        self.flags
    }

    /// The first match in `text[pos..endpos]` (characters), as `anchor` allows.
    pub fn find(
        &self,
        text: &str,
        pos: usize,
        endpos: usize,
        anchor: Anchor,
    ) -> Result<Option<Spans>, Error> {
        let offsets = Offsets::new(text);
        let (start, end) = offsets.window(pos, endpos);
        let hay = &text[..end];
        let found = match anchor {
            Anchor::Search => self.captures(&self.re, hay, start, false)?,
            Anchor::Start => self.captures(&self.re, hay, start, true)?,
            Anchor::Full => {
                let full = self
                    .full
                    .get_or_init(|| build(&format!("(?:{})\\z", self.translated), false))
                    .as_ref()
                    .map_err(Clone::clone)?;
                self.captures(full, hay, start, true)?
            }
        };
        Ok(found.map(|spans| offsets.chars(&spans)))
    }

    /// Every match in `text[pos..endpos]`, in order, stepping as Python
    /// does: after an empty match the next one must not be empty at the
    /// same place; at most `limit` matches (0: all).
    pub fn find_all(
        &self,
        text: &str,
        pos: usize,
        endpos: usize,
        limit: usize,
    ) -> Result<Vec<Spans>, Error> {
        let offsets = Offsets::new(text);
        let (start, end) = offsets.window(pos, endpos);
        let found = self.find_all_bytes(text, start, end, limit)?;
        Ok(found.iter().map(|spans| offsets.chars(spans)).collect())
    }

    /// What `findall` gives: each match in `text[pos..endpos]` (characters)
    /// as the text of its groups (group 0 alone when there are none), ""
    /// for a group that did not take part.
    pub fn find_texts<'t>(
        &self,
        text: &'t str,
        pos: usize,
        endpos: usize,
    ) -> Result<Vec<Vec<&'t str>>, Error> {
        let (start, end) = Offsets::new(text).window(pos, endpos);
        let found = self.find_all_bytes(text, start, end, 0)?;
        let groups = if self.groups == 0 {
            0..1
        } else {
            1..self.groups + 1
        };
        Ok(found
            .iter()
            .map(|spans| {
                spans[groups.clone()]
                    .iter()
                    .map(|s| s.map_or("", |(a, b)| &text[a..b]))
                    .collect()
            })
            .collect())
    }

    /// `text` with the first `count` matches (0: all) replaced by `template`,
    /// and how many were.
    pub fn sub(
        &self,
        text: &str,
        template: &Template,
        count: usize,
    ) -> Result<(String, usize), Error> {
        let found = self.find_all_bytes(text, 0, text.len(), count)?;
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for spans in &found {
            let (s, e) = spans[0].expect("group 0 takes part in every match");
            out.push_str(&text[last..s]);
            template.expand(text, spans, &mut out);
            last = e;
        }
        out.push_str(&text[last..]);
        Ok((out, found.len()))
    }

    /// `text` split at the first `maxsplit` matches (0: all), each match's
    /// groups between the pieces (None for a group that did not take part).
    pub fn split(&self, text: &str, maxsplit: usize) -> Result<Vec<Option<String>>, Error> {
        let found = self.find_all_bytes(text, 0, text.len(), maxsplit)?;
        let mut out = Vec::with_capacity(found.len() * (1 + self.groups) + 1);
        let mut last = 0;
        for spans in &found {
            let (s, e) = spans[0].expect("group 0 takes part in every match");
            out.push(Some(text[last..s].to_owned()));
            out.extend(
                spans[1..]
                    .iter()
                    .map(|g| g.map(|(a, b)| text[a..b].to_owned())),
            );
            last = e;
        }
        out.push(Some(text[last..].to_owned()));
        Ok(out)
    }

    /// [`Regex::find_all`] in bytes, from byte `at` to byte `end`.
    fn find_all_bytes(
        &self,
        text: &str,
        mut at: usize,
        end: usize,
        limit: usize,
    ) -> Result<Vec<Spans>, Error> {
        let hay = &text[..end];
        let mut out = Vec::new();
        let mut must_advance = false;
        while at <= end && (limit == 0 || out.len() < limit) {
            let found = if must_advance {
                self.step_past_empty(hay, at)?
            } else {
                self.captures(&self.re, hay, at, false)?
            };
            let Some(spans) = found else { break };
            let (s, e) = spans[0].expect("group 0 takes part in every match");
            must_advance = s == e;
            at = e;
            out.push(spans);
        }
        Ok(out)
    }

    /// After an empty match at `at`: a non-empty match starting there, else
    /// the first match starting after it.
    fn step_past_empty(&self, hay: &str, at: usize) -> Result<Option<Spans>, Error> {
        let not_empty = self
            .not_empty
            .get_or_init(|| build(&self.translated, true))
            .as_ref();
        // A pattern that can only match empty text has no such variant.
        if let Ok(re) = not_empty
            && let Some(found) = self.captures(re, hay, at, true)?
        {
            return Ok(Some(found));
        }
        match hay[at..].chars().next() {
            Some(c) => self.captures(&self.re, hay, at + c.len_utf8(), false),
            None => Ok(None),
        }
    }

    /// Group spans in bytes of the first match from `at` (anchored there or not).
    fn captures(
        &self,
        re: &fancy_regex::Regex,
        hay: &str,
        at: usize,
        anchored: bool,
    ) -> Result<Option<Spans>, Error> {
        let input = fancy_regex::RegexInput::new(hay)
            .from_pos(at)
            .anchored(anchored);
        let Some(caps) = re.captures_input(input).map_err(Error::engine)? else {
            return Ok(None);
        };
        Ok(Some(
            (0..=self.groups)
                .map(|i| caps.get(i).map(|m| (m.start(), m.end())))
                .collect(),
        ))
    }
}

fn build(pattern: &str, not_empty: bool) -> Result<fancy_regex::Regex, Error> {
    fancy_regex::RegexBuilder::new(pattern)
        .find_not_empty(not_empty)
        .backtrack_limit(10_000_000)
        .build()
        .map_err(Error::engine)
}

#[cfg(test)]
mod tests;
