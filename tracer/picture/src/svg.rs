//! The SVG: boxes coloured by opcode with their text lines, edges as
//! smooth paths with arrowheads; every node and edge carries data
//! attributes the HTML page uses to search and highlight.

use std::fmt::Write;

use super::layout::{Size, place};
use super::{Picture, escape, fill};

const FONT: f64 = 12.0;
const LINE: f64 = 15.0;
/// Average advance of the monospace font at `FONT` px.
const CHAR: f64 = 7.3;
const PAD: f64 = 8.0;

fn size(lines: &[&str], pinned_top: bool) -> Size {
    let chars = lines.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    Size {
        width: (chars as f64 * CHAR + 2.0 * PAD).max(48.0),
        height: lines.len().max(1) as f64 * LINE + PAD,
        pinned_top,
    }
}

/// A path through the points: straight when two, else a smooth curve with
/// vertical tangents at each point.
fn path(points: &[(f64, f64)]) -> String {
    let mut d = format!("M{:.1},{:.1}", points[0].0, points[0].1);
    for pair in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        let mid = (y0 + y1) / 2.0;
        let _ = write!(d, " C{x0:.1},{mid:.1} {x1:.1},{mid:.1} {x1:.1},{y1:.1}");
    }
    d
}

/// The picture as a standalone SVG document.
pub fn to_svg(picture: &Picture) -> String {
    let lines: Vec<Vec<&str>> = picture.nodes.iter().map(|n| n.lines()).collect();
    let sizes: Vec<Size> = picture
        .nodes
        .iter()
        .zip(&lines)
        .map(|(n, l)| size(l, n.op == "placeholder"))
        .collect();
    let placed = place(&sizes, &picture.edges);
    let mut out = String::with_capacity(256 * picture.nodes.len() + 1024);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"fx-graph\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.1} {h:.1}\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"{FONT}\">\n<title>{}</title>\n",
        escape(&picture.title),
        w = placed.width,
        h = placed.height,
    );
    out.push_str("<defs><marker id=\"fx-arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n<g class=\"edges\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.2\">\n");
    for (&(a, b), points) in picture.edges.iter().zip(&placed.edges) {
        let _ = writeln!(
            out,
            "<path class=\"edge\" data-from=\"{}\" data-to=\"{}\" d=\"{}\" marker-end=\"url(#fx-arrow)\"/>",
            escape(&picture.nodes[a].name),
            escape(&picture.nodes[b].name),
            path(points)
        );
    }
    out.push_str("</g>\n<g class=\"nodes\">\n");
    for (i, node) in picture.nodes.iter().enumerate() {
        let (cx, cy) = placed.centers[i];
        let s = sizes[i];
        let (x, y) = (cx - s.width / 2.0, cy - s.height / 2.0);
        let name = escape(&node.name);
        let _ = write!(
            out,
            "<g class=\"node op-{op}\" id=\"node-{name}\" data-name=\"{name}\" data-module=\"{module}\"><title>{name}: {op} {target}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"6\" fill=\"{fill}\" stroke=\"#333\"/>",
            op = escape(&node.op),
            module = escape(&node.module),
            target = escape(&node.target),
            w = s.width,
            h = s.height,
            fill = fill(&node.op),
        );
        for (k, line) in lines[i].iter().enumerate() {
            let weight = if k == 0 { " font-weight=\"bold\"" } else { "" };
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\"{weight}>{}</text>",
                cx,
                y + PAD / 2.0 + LINE * (k as f64 + 0.78),
                escape(line)
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</g>\n</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::super::Node;
    use super::*;

    fn node(name: &str, op: &str, target: &str) -> Node {
        Node {
            name: name.into(),
            op: op.into(),
            target: target.into(),
            ..Default::default()
        }
    }

    #[test]
    fn every_node_and_edge_is_drawn_and_text_is_escaped() {
        let picture = Picture {
            title: "a<b".into(),
            nodes: vec![
                node("x", "placeholder", "x"),
                node("add", "call_function", "operator.add & <more>"),
                node("output", "output", "output"),
            ],
            edges: vec![(0, 1), (1, 2), (0, 2)],
        };
        let svg = to_svg(&picture);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<g class=\"node ").count(), 3);
        assert_eq!(svg.matches("class=\"edge\"").count(), 3);
        assert!(svg.contains("operator.add &amp; &lt;more&gt;"));
        assert!(svg.contains("<title>a&lt;b</title>"));
        assert!(svg.contains("data-from=\"x\" data-to=\"output\""));
        assert!(!svg.contains("<more>"));
    }
}
