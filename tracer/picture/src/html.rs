//! The HTML page: one self-contained file (no network, no scripts from
//! elsewhere) holding the SVG, a search box, and the nodes as a table
//! grouped in a module tree that folds (`<details>` by module path).

use std::fmt::Write;

use indexmap::IndexMap;

use super::{Picture, escape, to_svg};

const STYLE: &str = "body{margin:0;font:13px system-ui,sans-serif;display:flex;height:100vh}\
#side{width:34%;min-width:280px;overflow:auto;border-right:1px solid #ccc;padding:8px;box-sizing:border-box}\
#view{flex:1;overflow:auto;background:#fafafa}\
#q{width:100%;box-sizing:border-box;padding:4px;margin-bottom:6px}\
table{border-collapse:collapse;width:100%;font:12px monospace}td{padding:1px 4px;border-bottom:1px solid #eee;white-space:nowrap}\
tr[data-name]{cursor:pointer}tr[data-name]:hover,tr.sel{background:#ffe9a8}\
details{margin-left:10px}summary{cursor:pointer;font-weight:600}.count{color:#888;font-weight:400}\
g.node{cursor:pointer}g.node.dim{opacity:.2}g.node.sel rect{stroke:#d00;stroke-width:3}path.edge.sel{stroke:#d00;stroke-width:2.5}";

const SCRIPT: &str = "const q=document.getElementById('q');\
const rows=[...document.querySelectorAll('tr[data-name]')];\
const nodes=new Map([...document.querySelectorAll('g.node')].map(g=>[g.dataset.name,g]));\
const edges=[...document.querySelectorAll('path.edge')];\
function openTo(e){for(let d=e.closest('details');d;d=d.parentElement.closest('details'))d.open=true;}\
function select(name,fromTable){document.querySelectorAll('.sel').forEach(e=>e.classList.remove('sel'));\
const g=nodes.get(name);if(g){g.classList.add('sel');if(fromTable)g.scrollIntoView({block:'center',inline:'center'});}\
edges.forEach(p=>{if(p.dataset.from===name||p.dataset.to===name)p.classList.add('sel');});\
const r=rows.find(r=>r.dataset.name===name);if(r){r.classList.add('sel');if(!fromTable){openTo(r);r.scrollIntoView({block:'center'});}}}\
q.addEventListener('input',()=>{const s=q.value.toLowerCase();for(const r of rows){const hit=!s||r.textContent.toLowerCase().includes(s);\
r.hidden=!hit;const g=nodes.get(r.dataset.name);if(g)g.classList.toggle('dim',!!s&&!hit);if(s&&hit)openTo(r);}});\
rows.forEach(r=>r.addEventListener('click',()=>select(r.dataset.name,true)));\
nodes.forEach((g,name)=>g.addEventListener('click',()=>select(name,false)));";

/// Nodes grouped by module path, one level per path component.
#[derive(Default)]
struct Tree {
    nodes: Vec<usize>,
    children: IndexMap<String, Tree>,
}

impl Tree {
    fn count(&self) -> usize {
        self.nodes.len() + self.children.values().map(Tree::count).sum::<usize>()
    }

    fn write(&self, picture: &Picture, out: &mut String) {
        if !self.nodes.is_empty() {
            out.push_str("<table>");
            for &i in &self.nodes {
                let n = &picture.nodes[i];
                let _ = write!(
                    out,
                    "<tr data-name=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&n.name),
                    escape(&n.name),
                    escape(&n.op),
                    escape(&n.target),
                    escape(&n.shape),
                    escape(&n.source)
                );
            }
            out.push_str("</table>");
        }
        for (name, child) in &self.children {
            let _ = write!(
                out,
                "<details><summary>{} <span class=\"count\">({})</span></summary>",
                escape(name),
                child.count()
            );
            child.write(picture, out);
            out.push_str("</details>");
        }
    }
}

/// The picture as a single HTML page that works offline.
pub fn to_html(picture: &Picture) -> String {
    let mut tree = Tree::default();
    for (i, node) in picture.nodes.iter().enumerate() {
        let mut at = &mut tree;
        for part in node.module.split('.').filter(|p| !p.is_empty()) {
            at = at.children.entry(part.to_owned()).or_default();
        }
        at.nodes.push(i);
    }
    let title = escape(&picture.title);
    let mut side = String::new();
    tree.write(picture, &mut side);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{STYLE}</style></head>\n<body><div id=\"side\"><h3>{title} <span class=\"count\">({} nodes)</span></h3><input id=\"q\" type=\"search\" placeholder=\"search nodes, ops, targets, shapes, lines\">{side}</div>\n<div id=\"view\">{}</div>\n<script>{SCRIPT}</script></body></html>\n",
        picture.nodes.len(),
        to_svg(picture)
    )
}

#[cfg(test)]
mod tests {
    use super::super::Node;
    use super::*;

    #[test]
    fn nodes_are_listed_under_their_module_path() {
        let node = |name: &str, module: &str| Node {
            name: name.into(),
            op: "call_module".into(),
            module: module.into(),
            ..Default::default()
        };
        let picture = Picture {
            title: "m".into(),
            nodes: vec![
                node("x", ""),
                node("layer1_0_conv1", "layer1.0.conv1"),
                node("layer1_0_bn1", "layer1.0.bn1"),
                node("fc", "fc"),
            ],
            edges: vec![(0, 1), (1, 2), (2, 3)],
        };
        let html = to_html(&picture);
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains("<summary>layer1 <span class=\"count\">(2)</span></summary>"));
        assert!(html.contains("<summary>0 <span class=\"count\">(2)</span></summary>"));
        assert_eq!(html.matches("<tr data-name=").count(), 4);
        assert!(
            !html.contains("http://") || html.matches("http://").count() == 1,
            "only the SVG namespace"
        );
    }
}
