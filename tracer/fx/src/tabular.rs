//! `Graph.print_tabular`'s table, laid out as the `tabulate` package's
//! default ("simple") format lays it out.

/// Formats `rows` under `headers`: columns two spaces apart, each at least
/// two wider than its header, numbers right-aligned, text left-aligned.
pub(crate) fn simple_table(headers: &[String], rows: &[Vec<String>]) -> String {
    let width = |s: &str| s.chars().count();
    let columns = headers.len();
    let numeric: Vec<bool> = (0..columns)
        .map(|c| {
            !rows.is_empty()
                && rows
                    .iter()
                    .all(|r| r.get(c).is_some_and(|v| v.trim().parse::<f64>().is_ok()))
        })
        .collect();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|v| width(v))
                .max()
                .unwrap_or(0)
                .max(width(&headers[c]) + 2)
        })
        .collect();
    let line = |cells: &mut dyn Iterator<Item = (usize, &str)>| -> String {
        let parts: Vec<String> = cells
            .map(|(c, v)| {
                let pad = " ".repeat(widths[c].saturating_sub(width(v)));
                if numeric[c] {
                    format!("{pad}{v}")
                } else {
                    format!("{v}{pad}")
                }
            })
            .collect();
        parts.join("  ").trim_end().to_owned()
    };
    let mut out = vec![line(
        &mut headers.iter().enumerate().map(|(c, h)| (c, h.as_str())),
    )];
    out.push(
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  "),
    );
    for row in rows {
        out.push(line(
            &mut row.iter().enumerate().map(|(c, v)| (c, v.as_str())),
        ));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn matches_tabulates_simple_format() {
        let t = simple_table(
            &s(&["opcode", "name", "target", "args"]),
            &[
                s(&["a", "bb", "(1, 2)", "{}"]),
                s(&["ccccccccc", "d", "x", "{'k': 1}"]),
            ],
        );
        assert_eq!(
            t,
            "opcode     name    target    args\n---------  ------  --------  --------\na          bb      (1, 2)    {}\nccccccccc  d       x         {'k': 1}"
        );
        let t = simple_table(&s(&["h", "n"]), &[s(&["ab", "1"]), s(&["c", "22"])]);
        assert_eq!(t, "h      n\n---  ---\nab     1\nc     22");
    }
}
