//! The `regex` package's flag bits (the values `regex.I`, `regex.M`, …
//! have), of which fxvm's engine honours the ones patterns use.

/// A set of pattern flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags(u32);

impl Flags {
    pub const TEMPLATE: Flags = Flags(0x1);
    pub const IGNORECASE: Flags = Flags(0x2);
    pub const LOCALE: Flags = Flags(0x4);
    pub const MULTILINE: Flags = Flags(0x8);
    pub const DOTALL: Flags = Flags(0x10);
    pub const UNICODE: Flags = Flags(0x20);
    pub const VERBOSE: Flags = Flags(0x40);
    pub const ASCII: Flags = Flags(0x80);
    pub const VERSION1: Flags = Flags(0x100);
    pub const DEBUG: Flags = Flags(0x200);
    pub const REVERSE: Flags = Flags(0x400);
    pub const WORD: Flags = Flags(0x800);
    pub const BESTMATCH: Flags = Flags(0x1000);
    pub const VERSION0: Flags = Flags(0x2000);
    pub const FULLCASE: Flags = Flags(0x4000);
    pub const ENHANCEMATCH: Flags = Flags(0x8000);
    pub const POSIX: Flags = Flags(0x10000);

    pub const fn empty() -> Flags {
        Flags(0)
    }

    pub const fn from_bits(bits: u32) -> Flags {
        Flags(bits)
    }

    pub const fn bits(self) -> u32 {
        self.0
    }

    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    /// The flag an inline letter sets (`(?i)`), as the `regex` package reads them.
    pub fn from_letter(c: char) -> Option<Flags> {
        Some(match c {
            'a' => Flags::ASCII,
            'i' => Flags::IGNORECASE,
            'L' => Flags::LOCALE,
            'm' => Flags::MULTILINE,
            's' => Flags::DOTALL,
            'u' => Flags::UNICODE,
            'x' => Flags::VERBOSE,
            'f' => Flags::FULLCASE,
            _ => return None,
        })
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}
