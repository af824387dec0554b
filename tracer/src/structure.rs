//! The structure behind a printed graph — its nodes (by name, with what each
//! computes) and its edges — read back from `--format graph`, `dot`, `svg`
//! or `html` text, so `fxvm check` can say which nodes were added, removed
//! or changed besides the line diff.

use std::collections::BTreeSet;
use std::fmt::Write;

use indexmap::IndexMap;

/// Nodes in order, each with a one-line description, and `(from, to)` edges.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Structure {
    pub nodes: IndexMap<String, String>,
    pub edges: BTreeSet<(String, String)>,
}

/// `%name` references in a graph line.
fn references(text: &str) -> Vec<String> {
    text.split('%')
        .skip(1)
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

/// `print(graph)`: `%name : [num_users=N] = op[target=T](args = …)` lines
/// and the `return` line.
fn from_graph(text: &str) -> Option<Structure> {
    let mut s = Structure::default();
    let mut seen_header = false;
    for line in text.lines() {
        let line = line.trim();
        if line == "graph():" {
            seen_header = true;
            continue;
        }
        if let Some(rest) = line.strip_prefix('%') {
            let (name, tail) = rest.split_once(" : ")?;
            let desc = tail.split_once("] = ").map_or(tail, |(_, d)| d);
            for r in references(desc) {
                s.edges.insert((r, name.to_owned()));
            }
            s.nodes.insert(name.to_owned(), desc.to_owned());
        } else if let Some(ret) = line.strip_prefix("return ") {
            // The output names its values bare: every known name in it.
            for word in ret.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                if s.nodes.contains_key(word) {
                    s.edges.insert((word.to_owned(), "output".to_owned()));
                }
            }
            s.nodes.insert("output".to_owned(), format!("return {ret}"));
        }
    }
    seen_header.then_some(s)
}

fn unquote(id: &str) -> String {
    id.trim().trim_matches('"').replace("\\\"", "\"")
}

/// DOT from `FxGraphDrawer`: `name [label="…", …];` and `a -> b;`.
fn from_dot(text: &str) -> Option<Structure> {
    if !text.trim_start().starts_with("digraph ") {
        return None;
    }
    let mut s = Structure::default();
    for line in text.lines() {
        let Some(stmt) = line.strip_suffix(';') else {
            continue;
        };
        if let Some((a, b)) = stmt.split_once(" -> ") {
            s.edges.insert((unquote(a), unquote(b)));
        } else if let Some((name, attrs)) = stmt.split_once(" [label=") {
            let label = attrs
                .strip_prefix('"')
                .and_then(|l| l.split_once("\", "))
                .map_or(attrs, |(l, _)| l);
            s.nodes.insert(unquote(name), label.to_owned());
        }
    }
    Some(s)
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// fxvm's SVG (alone or inside the HTML page): nodes are `<g class="node …"
/// data-name=…><title>name: op target</title>`, edges carry `data-from`/`data-to`.
fn from_svg(text: &str) -> Option<Structure> {
    if !text.contains("class=\"fx-graph\"") {
        return None;
    }
    let mut s = Structure::default();
    for piece in text.split('<').skip(1) {
        let tag = piece.split('>').next().unwrap_or("");
        if tag.starts_with("g class=\"node ") {
            // The description follows in the node's <title>.
            s.nodes
                .insert(unescape(attribute(tag, "data-name")?), String::new());
        } else if tag == "title" {
            let body = piece.split_once('>').map_or("", |(_, b)| b);
            if let Some((name, desc)) = unescape(body).split_once(": ")
                && let Some(slot) = s.nodes.get_mut(name)
            {
                *slot = desc.to_owned();
            }
        } else if tag.starts_with("path class=\"edge\"") {
            let from = unescape(attribute(tag, "data-from")?);
            let to = unescape(attribute(tag, "data-to")?);
            s.edges.insert((from, to));
        }
    }
    Some(s)
}

/// The structure of a printed graph in any of the forms that show one.
pub fn parse(text: &str) -> Option<Structure> {
    from_graph(text)
        .or_else(|| from_dot(text))
        .or_else(|| from_svg(text))
}

/// What changed from `expected` to `actual`, one line per node or edge;
/// empty when the structures are equal.
pub fn structural_diff(expected: &Structure, actual: &Structure) -> String {
    let added: Vec<_> = actual
        .nodes
        .iter()
        .filter(|(n, _)| !expected.nodes.contains_key(*n))
        .collect();
    let removed: Vec<_> = expected
        .nodes
        .iter()
        .filter(|(n, _)| !actual.nodes.contains_key(*n))
        .collect();
    let changed: Vec<_> = expected
        .nodes
        .iter()
        .filter_map(|(n, before)| {
            actual
                .nodes
                .get(n)
                .filter(|after| *after != before)
                .map(|after| (n, before, after))
        })
        .collect();
    // Edges between nodes both graphs have (the others come with their nodes).
    let kept = |(a, b): &&(String, String)| {
        expected.nodes.contains_key(a)
            && expected.nodes.contains_key(b)
            && actual.nodes.contains_key(a)
            && actual.nodes.contains_key(b)
    };
    let new_edges: Vec<_> = actual
        .edges
        .difference(&expected.edges)
        .filter(kept)
        .collect();
    let gone_edges: Vec<_> = expected
        .edges
        .difference(&actual.edges)
        .filter(kept)
        .collect();
    if added.is_empty()
        && removed.is_empty()
        && changed.is_empty()
        && new_edges.is_empty()
        && gone_edges.is_empty()
    {
        return String::new();
    }
    let mut out = format!(
        "structure: {} nodes added, {} removed, {} changed; {} edges added, {} removed (between kept nodes)\n",
        added.len(),
        removed.len(),
        changed.len(),
        new_edges.len(),
        gone_edges.len()
    );
    for (name, desc) in added {
        let _ = writeln!(out, "+ {name}  {desc}");
    }
    for (name, desc) in removed {
        let _ = writeln!(out, "- {name}  {desc}");
    }
    for (name, before, after) in changed {
        let _ = writeln!(
            out,
            "~ {name}  {before}\n~ {:width$}→ {after}",
            "",
            width = name.len()
        );
    }
    for (a, b) in new_edges {
        let _ = writeln!(out, "+ edge {a} -> {b}");
    }
    for (a, b) in gone_edges {
        let _ = writeln!(out, "- edge {a} -> {b}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "graph():
    %x : [num_users=1] = placeholder[target=x]
    %lin : [num_users=1] = call_module[target=lin](args = (%x,), kwargs = {})
    %drop : [num_users=1] = call_module[target=drop](args = (%lin,), kwargs = {})
    return drop";
    const AFTER: &str = "graph():
    %x : [num_users=2] = placeholder[target=x]
    %lin : [num_users=1] = call_module[target=lin](args = (%x,), kwargs = {})
    %relu : [num_users=1] = call_function[target=torch.relu](args = (%lin,), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%relu, %x), kwargs = {})
    return add";

    #[test]
    fn graph_text_diffs_by_node() {
        let (a, b) = (parse(BEFORE).unwrap(), parse(AFTER).unwrap());
        assert_eq!(a.nodes.len(), 4);
        assert!(a.edges.contains(&("lin".into(), "drop".into())));
        assert!(a.edges.contains(&("drop".into(), "output".into())));
        let diff = structural_diff(&a, &b);
        assert!(
            diff.starts_with("structure: 2 nodes added, 1 removed, 1 changed;"),
            "{diff}"
        );
        assert!(
            diff.contains("+ relu  call_function[target=torch.relu](args = (%lin,), kwargs = {})")
        );
        assert!(diff.contains("- drop  call_module[target=drop]"));
        assert!(diff.contains("~ output  return drop\n~       → return add"));
        assert_eq!(structural_diff(&a, &a), "");
    }

    #[test]
    fn dot_and_svg_read_back() {
        let dot = "digraph m {\nrankdir=TB;\nx [label=\"{name=%x|op_code=placeholder\\n}\", shape=record];\n\"lin.weight\" [label=\"{w}\", shape=record];\nlin [label=\"{name=%lin}\", shape=record];\n\"lin.weight\" -> lin;\nx -> lin;\n}\n";
        let s = parse(dot).unwrap();
        assert_eq!(
            s.nodes.keys().collect::<Vec<_>>(),
            ["x", "lin.weight", "lin"]
        );
        assert!(s.edges.contains(&("lin.weight".into(), "lin".into())));
        let svg = "<svg class=\"fx-graph\"><path class=\"edge\" data-from=\"x\" data-to=\"a&amp;b\" d=\"\"/><g class=\"node op-placeholder\" id=\"node-x\" data-name=\"x\" data-module=\"\"><title>x: placeholder </title></g><g class=\"node op-call_function\" id=\"node-a\" data-name=\"a&amp;b\" data-module=\"\"><title>a&amp;b: call_function torch.relu</title></g></svg>";
        let s = parse(svg).unwrap();
        assert_eq!(s.nodes["a&b"], "call_function torch.relu");
        assert!(s.edges.contains(&("x".into(), "a&b".into())));
        assert!(parse("def forward(self, x):\n    return x").is_none());
    }
}
