//! Unique, legal Python names for nodes and globals, chosen exactly as
//! torch.fx's `_Namespace` chooses them (graph text and code depend on it).

use std::collections::{HashMap, HashSet};

/// Names that no node may take: keywords, builtins and the globals every
/// generated module has. A global may still take one if it *is* that object.
pub(crate) struct Reserved {
    names: HashSet<String>,
}

/// `keyword.kwlist` of Python 3.11, the grammar torch.fx is generated for.
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Globals bundled into every generated module (torch.fx's custom builtins).
pub(crate) const CUSTOM_BUILTINS: &[&str] = &[
    "inf",
    "nan",
    "NoneType",
    "torch",
    "device",
    "fx_pytree",
    "pytree",
];

impl Reserved {
    pub(crate) fn new<'a>(builtins: impl IntoIterator<Item = &'a str>) -> Reserved {
        let names = KEYWORDS
            .iter()
            .chain(CUSTOM_BUILTINS)
            .copied()
            .chain(builtins)
            .map(str::to_owned)
            .collect();
        Reserved { names }
    }

    pub(crate) fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }
}

/// Maps objects (by identity) to unique names.
#[derive(Default, Clone)]
pub(crate) struct Namespace {
    obj_to_name: HashMap<usize, String>,
    used: HashSet<String>,
    base_count: HashMap<String, u64>,
}

/// Splits `name` into its base and numeric suffix (`add_12` → `add`, 12) if it
/// is already a valid identifier; the base is the shortest prefix possible.
fn split_suffix(name: &str) -> Option<(&str, Option<&str>)> {
    let bytes = name.as_bytes();
    let first = *bytes.first()?;
    if !(first.is_ascii_alphabetic() || first == b'_')
        || !bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        return None;
    }
    // `^(base*?)(?:_(\d+))?$`: the suffix is the last `_` followed only by digits.
    if let Some(i) = name.rfind('_')
        && i > 0
        && i + 1 < name.len()
        && bytes[i + 1..].iter().all(u8::is_ascii_digit)
    {
        return Some((&name[..i], Some(&name[i + 1..])));
    }
    Some((name, None))
}

/// Replaces each run of characters illegal in an identifier with `_`.
fn sanitize(candidate: &str) -> String {
    let mut out = String::with_capacity(candidate.len());
    let mut in_run = false;
    for c in candidate.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
            in_run = false;
        } else if !in_run {
            out.push('_');
            in_run = true;
        }
    }
    if out.is_empty() {
        out.push_str("_unnamed");
    }
    if out.as_bytes()[0].is_ascii_digit() {
        out.insert(0, '_');
    }
    out
}

impl Namespace {
    /// The name of `obj` if it has one, else a fresh unique name built from
    /// `candidate`; `illegal` says whether a name would shadow something.
    pub(crate) fn create_name(
        &mut self,
        candidate: &str,
        obj: Option<usize>,
        illegal: impl Fn(&str) -> bool,
    ) -> String {
        if let Some(name) = obj.and_then(|o| self.obj_to_name.get(&o)) {
            return name.clone();
        }
        let sanitized;
        let (base, suffix) = match split_suffix(candidate) {
            Some(split) => split,
            None => {
                sanitized = sanitize(candidate);
                split_suffix(&sanitized).expect("a sanitized name is an identifier")
            }
        };
        let mut candidate = match suffix {
            Some(s) => format!("{base}_{s}"),
            None => base.to_owned(),
        };
        let mut num = match suffix {
            Some(s) if !self.used.contains(&candidate) => s.parse().unwrap_or(u64::MAX),
            _ => {
                let mut num = self.base_count.get(base).copied().unwrap_or(0);
                if illegal(&candidate) {
                    num += 1;
                    candidate = format!("{base}_{num}");
                }
                num
            }
        };
        while self.used.contains(&candidate) {
            num += 1;
            candidate = format!("{base}_{num}");
        }
        self.used.insert(candidate.clone());
        self.base_count.insert(base.to_owned(), num);
        if let Some(o) = obj {
            self.obj_to_name.insert(o, candidate.clone());
        }
        candidate
    }

    pub(crate) fn associate(&mut self, name: &str, obj: usize) {
        self.obj_to_name
            .entry(obj)
            .or_insert_with(|| name.to_owned());
    }

    /// Records that `obj` is now called `name` (`Node._rename`).
    pub(crate) fn rename(&mut self, obj: usize, name: &str) {
        self.obj_to_name.insert(obj, name.to_owned());
        self.used.insert(name.to_owned());
    }
}

/// `_snake_case`: `_` before each capital that follows a lower-case ASCII
/// letter, then everything lower-cased (`BatchNorm2d` → `batch_norm2d`).
pub(crate) fn snake_case(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    let mut prev_lower = false;
    for c in s.chars() {
        if prev_lower && c.is_ascii_uppercase() {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase();
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(candidates: &[&str]) -> Vec<String> {
        let reserved = Reserved::new(["sum", "input", "getattr"]);
        let mut ns = Namespace::default();
        candidates
            .iter()
            .map(|c| ns.create_name(c, None, |n| reserved.contains(n)))
            .collect()
    }

    #[test]
    fn suffixes_count_per_base_and_skip_reserved_names() {
        assert_eq!(
            names(&["add", "add", "add_1", "add"]),
            ["add", "add_1", "add_2", "add_3"]
        );
        assert_eq!(
            names(&["sum", "sum", "input", "torch", "if"]),
            ["sum_1", "sum_2", "input_1", "torch_1", "if_1"]
        );
        assert_eq!(names(&["add_5", "add", "add"]), ["add_5", "add", "add_6"]);
    }

    #[test]
    fn illegal_characters_become_underscores() {
        assert_eq!(
            names(&["*args", "**kwargs", "layers.0", "0x", "", "a-b.c"]),
            ["_args", "_kwargs", "layers_0", "_0x", "_unnamed", "a_b_c"]
        );
    }

    #[test]
    fn objects_keep_their_first_name() {
        let mut ns = Namespace::default();
        assert_eq!(ns.create_name("x", Some(1), |_| false), "x");
        assert_eq!(ns.create_name("y", Some(1), |_| false), "x");
        assert_eq!(ns.create_name("x", Some(2), |_| false), "x_1");
    }

    #[test]
    fn snake_case_splits_camel_case_only_after_lower_case() {
        assert_eq!(snake_case("BatchNorm2d"), "batch_norm2d");
        assert_eq!(snake_case("ALL_CAPS"), "all_caps");
        assert_eq!(snake_case("pascalCase"), "pascal_case");
    }
}
