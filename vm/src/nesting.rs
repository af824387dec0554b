//! Nesting limits on Python source, checked before RustPython parses it.
//!
//! RustPython's parser and compiler recurse once per nesting level with no
//! limit of their own, so a hostile or generated source (5,000 nested
//! parentheses, a 20,000-term sum) overflows the native stack. CPython refuses
//! such sources with a SyntaxError ("too many nested parentheses", over 200
//! levels), an IndentationError ("too many levels of indentation", over 100)
//! or a RecursionError during compilation (its AST walk is capped at three
//! times the recursion limit). This module applies the same three limits with
//! one linear, non-recursive scan of the tokens.
//!
//! The expression depth is an upper bound of the AST's: every operator,
//! keyword operator, attribute dot and closed bracket counts one level until a
//! comma or a statement boundary at the same bracket level ends the operand.

use std::fmt;

/// CPython's tokenizer limit on open brackets (`MAXLEVEL`).
pub const MAX_PARENS: usize = 200;
/// CPython's tokenizer limit on indentation levels (`MAXINDENT`), counting the unindented level.
pub const MAX_INDENT: usize = 100;
/// CPython's compiler scales the recursion limit by 3 for AST depth.
pub const COMPILER_DEPTH_SCALE: usize = 3;

/// Which limit a source broke, and where (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NestingError {
    pub kind: Limit,
    pub line: usize,
    pub column: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// More than [`MAX_PARENS`] open brackets: a SyntaxError.
    Parens,
    /// More than [`MAX_INDENT`] indentation levels: an IndentationError.
    Indent,
    /// An expression deeper than the compiler's budget: a RecursionError.
    Depth,
}

impl fmt::Display for NestingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            Limit::Parens => "too many nested parentheses",
            Limit::Indent => "too many levels of indentation",
            Limit::Depth => "maximum recursion depth exceeded during compilation",
        })
    }
}

/// Where the scanner is: in code (inside `brackets` open brackets), or in a
/// string literal, which for f-strings may open replacement fields (code
/// again, closed by the `}` matching their `{`).
enum Mode {
    Code,
    Str {
        quote: u8,
        triple: bool,
        raw: bool,
        format: bool,
    },
    /// A replacement field of an f-string; the string it belongs to is the
    /// mode below it on the stack.
    Field {
        bracket_level: usize,
    },
}

/// Checks `source` against the three limits; `depth_budget` is the
/// expression depth allowed (CPython: 3 × the recursion limit left).
/// `source` may be bytes of any encoding CPython accepts: every token that
/// matters here is ASCII.
pub fn check(source: &[u8], depth_budget: usize) -> Result<(), NestingError> {
    Scanner::new(source, depth_budget).run()
}

/// The expression depth CPython's compiler allows at `depth` frames into a
/// recursion limit of `limit`, capped at its default (3000) because
/// RustPython's parser recursion is bounded by the native stack, not the limit.
pub fn depth_budget(limit: usize, depth: usize) -> usize {
    (COMPILER_DEPTH_SCALE * limit.saturating_sub(depth)).min(COMPILER_DEPTH_SCALE * 1000)
}

struct Scanner<'a> {
    src: &'a [u8],
    pos: usize,
    line: usize,
    line_start: usize,
    modes: Vec<Mode>,
    /// Operator count of the current operand at each open bracket level
    /// (index 0 is the statement level).
    ops: Vec<usize>,
    /// Sum of `ops` plus the open brackets: the depth bound right now.
    depth: usize,
    budget: usize,
    indents: Vec<usize>,
    /// At the start of a physical line that may begin a logical line.
    at_line_start: bool,
}

const KEYWORD_OPS: [&[u8]; 10] = [
    b"not", b"and", b"or", b"in", b"is", b"if", b"else", b"lambda", b"await", b"yield",
];

impl<'a> Scanner<'a> {
    fn new(source: &'a [u8], budget: usize) -> Self {
        Scanner {
            src: source,
            pos: 0,
            line: 1,
            line_start: 0,
            modes: vec![Mode::Code],
            ops: vec![0],
            depth: 0,
            budget,
            indents: Vec::new(),
            at_line_start: true,
        }
    }

    fn error(&self, kind: Limit) -> NestingError {
        self.error_at(kind, self.pos)
    }

    fn error_at(&self, kind: Limit, pos: usize) -> NestingError {
        let column = String::from_utf8_lossy(&self.src[self.line_start..pos.min(self.src.len())])
            .chars()
            .count()
            + 1;
        NestingError {
            kind,
            line: self.line,
            column,
        }
    }

    fn peek(&self, k: usize) -> u8 {
        self.src.get(self.pos + k).copied().unwrap_or(0)
    }

    fn newline(&mut self) {
        self.pos += 1;
        self.line += 1;
        self.line_start = self.pos;
    }

    fn run(mut self) -> Result<(), NestingError> {
        while self.pos < self.src.len() {
            match self.modes.last().expect("the code mode is never popped") {
                Mode::Str { .. } => self.string()?,
                Mode::Code | Mode::Field { .. } => self.code()?,
            }
        }
        Ok(())
    }

    /// Counts one nesting level for the current operand.
    fn op(&mut self) -> Result<(), NestingError> {
        *self.ops.last_mut().expect("statement level") += 1;
        self.depth += 1;
        if self.depth > self.budget {
            return Err(self.error(Limit::Depth));
        }
        Ok(())
    }

    /// Ends the operand at the current level (a comma, a statement end).
    fn reset_level(&mut self) {
        let level = self.ops.last_mut().expect("statement level");
        self.depth -= *level;
        *level = 0;
    }

    fn open(&mut self) -> Result<(), NestingError> {
        if self.ops.len() > MAX_PARENS {
            // At the bracket just consumed, as CPython's caret shows it.
            return Err(self.error_at(Limit::Parens, self.pos - 1));
        }
        self.ops.push(0);
        self.depth += 1;
        if self.depth > self.budget {
            return Err(self.error(Limit::Depth));
        }
        Ok(())
    }

    /// Closes a bracket: its contents are done, and the bracketed atom (a
    /// call, a subscript, a parenthesised operand) is one level of the
    /// operand around it. An unmatched closer is the parser's to report.
    fn close(&mut self) -> Result<(), NestingError> {
        if self.ops.len() > 1 {
            let inner = self.ops.pop().expect("checked");
            self.depth -= inner + 1;
            self.op()?;
        }
        Ok(())
    }

    fn indentation(&mut self) -> Result<(), NestingError> {
        self.at_line_start = false;
        let mut width = 0;
        while let b' ' | b'\t' | b'\x0c' = self.peek(0) {
            width = match self.peek(0) {
                b'\t' => (width / 8 + 1) * 8,
                b'\x0c' => 0,
                _ => width + 1,
            };
            self.pos += 1;
        }
        // Blank and comment-only lines do not change the indentation.
        if matches!(self.peek(0), b'\n' | b'\r' | b'#' | 0) {
            return Ok(());
        }
        while self.indents.last().is_some_and(|&w| w > width) {
            self.indents.pop();
        }
        if self.indents.last().is_none_or(|&w| w < width) && width > 0 {
            self.indents.push(width);
            if self.indents.len() >= MAX_INDENT {
                return Err(self.error(Limit::Indent));
            }
        }
        Ok(())
    }

    fn code(&mut self) -> Result<(), NestingError> {
        if self.at_line_start
            && self.ops.len() == 1
            && matches!(self.modes.last(), Some(Mode::Code))
        {
            return self.indentation();
        }
        let c = self.peek(0);
        match c {
            b'\n' => {
                if self.ops.len() == 1 {
                    self.reset_level();
                    self.at_line_start = true;
                }
                self.newline();
            }
            b'\\' if matches!(self.peek(1), b'\n' | b'\r') => {
                self.pos += 1;
                if self.peek(0) == b'\r' && self.peek(1) == b'\n' {
                    self.pos += 1;
                }
                self.newline();
            }
            b'#' => {
                while !matches!(self.peek(0), b'\n' | 0) {
                    self.pos += 1;
                }
            }
            b'(' | b'[' | b'{' => {
                self.pos += 1;
                self.open()?;
            }
            b')' | b']' => {
                self.pos += 1;
                self.close()?;
            }
            b'}' => {
                if let Some(&Mode::Field { bracket_level }) = self.modes.last()
                    && bracket_level == self.ops.len()
                {
                    // The end of an f-string replacement field.
                    self.modes.pop();
                }
                self.pos += 1;
                self.close()?;
            }
            b',' | b';' => {
                self.pos += 1;
                self.reset_level();
            }
            b'\'' | b'"' => self.start_string(0),
            b'.' if !self.peek(1).is_ascii_digit() => {
                self.pos += 1;
                self.op()?;
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'@' | b'<' | b'>' | b'&' | b'|' | b'^' | b'~'
            | b'=' | b'!' | b':' => {
                // `==`, `**`, `//=`…: one token, one level (the ends do not matter for a bound).
                let single = matches!(c, b'=' | b':') && !matches!(self.peek(1), b'=');
                self.pos += 1;
                while matches!(self.peek(0), b'=' | b'*' | b'/' | b'<' | b'>') && !single {
                    self.pos += 1;
                }
                if !single {
                    self.op()?;
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => self.word()?,
            c if c.is_ascii_digit() || c == b'.' => {
                while self.peek(0).is_ascii_alphanumeric() || matches!(self.peek(0), b'.' | b'_') {
                    // An exponent's sign belongs to the number (`1e-5`).
                    if matches!(self.peek(0), b'e' | b'E') && matches!(self.peek(1), b'+' | b'-') {
                        self.pos += 1;
                    }
                    self.pos += 1;
                }
            }
            _ => self.pos += 1,
        }
        Ok(())
    }

    /// A name or keyword, or the prefix of a string literal.
    fn word(&mut self) -> Result<(), NestingError> {
        let start = self.pos;
        while self.peek(0).is_ascii_alphanumeric() || self.peek(0) == b'_' || self.peek(0) >= 0x80 {
            self.pos += 1;
        }
        let word = &self.src[start..self.pos];
        if matches!(self.peek(0), b'\'' | b'"')
            && word.len() <= 2
            && word.iter().all(|c| b"rRbBuUfF".contains(c))
        {
            let raw = word.iter().any(|c| matches!(c, b'r' | b'R'));
            let format = word.iter().any(|c| matches!(c, b'f' | b'F'));
            self.start_string(u8::from(raw) | u8::from(format) << 1);
            return Ok(());
        }
        if KEYWORD_OPS.contains(&word) {
            self.op()?;
        }
        Ok(())
    }

    /// Enters a string literal at its opening quote; `flags` bit 0 is raw,
    /// bit 1 is an f-string.
    fn start_string(&mut self, flags: u8) {
        let quote = self.peek(0);
        let triple = self.peek(1) == quote && self.peek(2) == quote;
        self.pos += if triple { 3 } else { 1 };
        self.modes.push(Mode::Str {
            quote,
            triple,
            raw: flags & 1 != 0,
            format: flags & 2 != 0,
        });
    }

    fn string(&mut self) -> Result<(), NestingError> {
        let Some(&Mode::Str {
            quote,
            triple,
            raw,
            format,
        }) = self.modes.last()
        else {
            unreachable!("string() runs in string mode")
        };
        let c = self.peek(0);
        match c {
            b'\\' => {
                // An escape (raw strings keep the backslash but still skip the quote).
                self.pos += 1;
                if self.peek(0) == b'\n' {
                    self.newline();
                } else if !raw || self.peek(0) == quote || self.peek(0) == b'\\' {
                    self.pos += 1;
                }
            }
            b'\n' => {
                if triple {
                    self.newline();
                } else {
                    // An unterminated string: the parser reports it.
                    self.modes.pop();
                }
            }
            b'{' if format => {
                if self.peek(1) == b'{' {
                    self.pos += 2;
                } else {
                    self.pos += 1;
                    self.open()?;
                    self.modes.push(Mode::Field {
                        bracket_level: self.ops.len(),
                    });
                }
            }
            c if c == quote => {
                if !triple {
                    self.pos += 1;
                    self.modes.pop();
                } else if self.peek(1) == quote && self.peek(2) == quote {
                    self.pos += 3;
                    self.modes.pop();
                } else {
                    self.pos += 1;
                }
            }
            _ => self.pos += 1,
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: usize = 3000;

    fn kind(source: &str) -> Option<Limit> {
        check(source.as_bytes(), BUDGET).err().map(|e| e.kind)
    }

    #[test]
    fn ordinary_code_passes() {
        let source = "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return (x + 1) * 2 if x.dim() else -x\n";
        assert_eq!(kind(source), None);
        let flat = format!("data = [{}]\n", vec!["1 + 2"; 50_000].join(", "));
        assert_eq!(kind(&flat), None, "a long flat list is shallow");
    }

    #[test]
    fn parentheses_over_200_are_a_syntax_error() {
        let ok = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(kind(&ok), None);
        let deep = format!("x = {}1{}", "(".repeat(201), ")".repeat(201));
        let e = check(deep.as_bytes(), BUDGET).unwrap_err();
        assert_eq!((e.kind, e.line, e.column), (Limit::Parens, 1, 205));
        assert_eq!(e.to_string(), "too many nested parentheses");
    }

    #[test]
    fn long_operator_chains_exceed_the_compiler_depth() {
        assert_eq!(kind(&vec!["1"; 20_000].join("+")), Some(Limit::Depth));
        assert_eq!(
            kind(&format!("{}1", "-".repeat(20_000))),
            Some(Limit::Depth)
        );
        assert_eq!(kind(&format!("x{}", ".a".repeat(5000))), Some(Limit::Depth));
        assert_eq!(kind(&format!("f{}", "()".repeat(5000))), Some(Limit::Depth));
        assert_eq!(kind(&vec!["1"; 2000].join("+")), None);
        // The budget shrinks with the Python frames already on the stack.
        assert_eq!(
            check(vec!["1"; 2000].join("+").as_bytes(), 1500)
                .unwrap_err()
                .kind,
            Limit::Depth
        );
    }

    #[test]
    fn indentation_over_100_levels_is_refused() {
        let mut source = String::new();
        for level in 0..101 {
            source += &format!("{}if x:\n", " ".repeat(level));
        }
        source += &format!("{}pass\n", " ".repeat(101));
        let e = check(source.as_bytes(), BUDGET).unwrap_err();
        assert_eq!((e.kind, e.line), (Limit::Indent, 101));
    }

    #[test]
    fn strings_and_comments_do_not_count() {
        let parens = "(".repeat(500);
        assert_eq!(
            kind(&format!("s = '{parens}'\n# {parens}\nt = r'\\'{parens}'\n")),
            None
        );
        assert_eq!(kind(&format!("s = \"\"\"\n{parens}\n\"\"\"\n")), None);
        assert_eq!(kind(&format!("s = f'{{{{{parens}}}}}'\n")), None);
    }

    #[test]
    fn f_string_fields_are_code() {
        let deep = format!("s = f'{{{}1{}}}'\n", "(".repeat(300), ")".repeat(300));
        assert_eq!(kind(&deep), Some(Limit::Parens));
        assert_eq!(
            kind("s = f'{x!r:>{width}} {y[\"k\"]}' + f\"{'{'}\"\n"),
            None
        );
    }
}
