//! Pictures of graphs without graphviz: a layered layout, an SVG and a
//! self-contained HTML page (the SVG, a searchable node table, and a module
//! tree that folds). VM-free; `torch._C._fx.render_picture` binds it.

mod html;
mod layout;
mod svg;

pub use html::to_html;
pub use svg::to_svg;

/// One node as drawn: its name, opcode, what it calls, and what is known
/// of its value and origin.
#[derive(Debug, Clone, Default)]
pub struct Node {
    pub name: String,
    pub op: String,
    pub target: String,
    /// Dtype and sizes, e.g. `f32[1, 64, 56, 56]`, when known.
    pub shape: String,
    /// The user's `file:line` that made the node, when known.
    pub source: String,
    /// The module path the node belongs to (from `nn_module_stack`).
    pub module: String,
}

impl Node {
    /// The lines written in the node's box.
    fn lines(&self) -> Vec<&str> {
        [&self.name, &self.target, &self.shape, &self.source]
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(String::as_str)
            .collect()
    }
}

/// A graph to draw: nodes in graph order and edges as (from, to) indices.
#[derive(Debug, Clone, Default)]
pub struct Picture {
    pub title: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<(usize, usize)>,
}

/// Fill colours by opcode, as torch.fx's FxGraphDrawer colours them
/// (`call_function` gets its default, `call_method` one of its palette).
fn fill(op: &str) -> &'static str {
    match op {
        "placeholder" => "#F0F8FF",
        "call_module" => "#FFFACD",
        "get_attr" => "#D3D3D3",
        "output" => "#B0E0E6",
        "call_method" => "#FFF68F",
        _ => "#CAFFE3",
    }
}

/// `&`, `<`, `>` and quotes escaped for XML text and attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
