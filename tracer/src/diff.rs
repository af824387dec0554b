//! The unified diffs `fxvm check` prints, also used by the project's own
//! golden tests so that CI shows a mismatch exactly as a user sees it.

/// The unified diff from `expected` (the golden file `golden`) to `actual`
/// (labelled `label`), empty when equal; `color` adds ANSI colours.
pub fn unified_diff(
    expected: &str,
    actual: &str,
    golden: &str,
    label: &str,
    color: bool,
) -> String {
    if expected == actual {
        return String::new();
    }
    let diff = similar::TextDiff::from_lines(expected, actual);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(golden, label)
        .to_string();
    if !color {
        return text;
    }
    text.lines()
        .map(|line| {
            let code = if line.starts_with("+++") || line.starts_with("---") {
                "1"
            } else if line.starts_with('+') {
                "32"
            } else if line.starts_with('-') {
                "31"
            } else if line.starts_with("@@") {
                "36"
            } else {
                return format!("{line}\n");
            };
            format!("\x1b[{code}m{line}\x1b[0m\n")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::unified_diff;

    #[test]
    fn diffs_lines_and_colours_them_on_request() {
        assert_eq!(unified_diff("a\nb\n", "a\nb\n", "g", "t", false), "");
        let plain = unified_diff("a\nb\n", "a\nc\n", "g", "t", false);
        assert_eq!(plain, "--- g\n+++ t\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
        let coloured = unified_diff("a\nb\n", "a\nc\n", "g", "t", true);
        assert!(
            coloured.contains("\x1b[31m-b\x1b[0m\n\x1b[32m+c\x1b[0m\n"),
            "{coloured:?}"
        );
    }
}
