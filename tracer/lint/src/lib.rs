//! `fxvm lint`: a static pass over a script (parsed, never run) that finds,
//! in every `forward` method, what symbolic tracing cannot follow: values
//! derived from `forward`'s arguments are Proxies during a trace, so Python
//! control flow, `len`/`int`/`float`/`bool`, iteration and `try` on them fail.

use std::collections::HashSet;

use rustpython_ruff_python_ast::visitor::{self, Visitor};
use rustpython_ruff_python_ast::{self as ast, CmpOp, Expr, Stmt};
use rustpython_ruff_source_file::LineIndex;
use rustpython_ruff_text_size::{Ranged, TextSize};

/// One construct tracing cannot handle, at a 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Lints Python `source`; a syntax error is returned as `(line, column, message)`.
pub fn lint_source(source: &str) -> Result<Vec<Finding>, Finding> {
    let index = LineIndex::from_source_text(source);
    let position = |offset: TextSize| {
        let lc = index.line_column(offset, source);
        (lc.line.get(), lc.column.get())
    };
    // The parser recurses per nesting level: CPython's limits come first.
    let budget = fxvm_vm::nesting::depth_budget(1000, 0);
    fxvm_vm::nesting::check(source.as_bytes(), budget).map_err(|e| Finding {
        line: e.line,
        column: e.column,
        message: format!("syntax error: {e}"),
    })?;
    let parsed = rustpython_ruff_python_parser::parse_module(source).map_err(|e| {
        let (line, column) = position(e.location.start());
        Finding {
            line,
            column,
            message: format!("syntax error: {}", e.error),
        }
    })?;
    let mut raw = vec![];
    for stmt in &parsed.syntax().body {
        if let Stmt::ClassDef(class) = stmt {
            for item in &class.body {
                if let Stmt::FunctionDef(f) = item
                    && f.name.as_str() == "forward"
                {
                    let mut forward = Forward::new(f);
                    forward.body(&f.body);
                    raw.append(&mut forward.findings);
                }
            }
        }
    }
    let mut findings: Vec<Finding> = raw
        .into_iter()
        .map(|(offset, message)| {
            let (line, column) = position(offset);
            Finding {
                line,
                column,
                message,
            }
        })
        .collect();
    findings.sort_by_key(|f| (f.line, f.column));
    findings.dedup();
    Ok(findings)
}

/// The analysis of one `forward`: which names hold traced values.
struct Forward {
    traced: HashSet<String>,
    findings: Vec<(TextSize, String)>,
}

impl Forward {
    fn new(f: &ast::StmtFunctionDef) -> Forward {
        let p = &f.parameters;
        let mut names: Vec<String> = p
            .posonlyargs
            .iter()
            .chain(&p.args)
            .chain(&p.kwonlyargs)
            .map(|a| a.parameter.name.to_string())
            .collect();
        names.extend(p.vararg.iter().chain(&p.kwarg).map(|a| a.name.to_string()));
        // The first parameter is the module itself.
        let traced = names.into_iter().skip(1).collect();
        Forward {
            traced,
            findings: vec![],
        }
    }

    fn report(&mut self, at: &impl Ranged, message: String) {
        self.findings.push((at.start(), message));
    }

    /// The first traced name `expr` reads, if any.
    fn traced_name(&self, expr: &Expr) -> Option<String> {
        struct Find<'s> {
            traced: &'s HashSet<String>,
            found: Option<String>,
        }
        impl<'a> Visitor<'a> for Find<'_> {
            fn visit_expr(&mut self, expr: &'a Expr) {
                if self.found.is_some() {
                    return;
                }
                if let Expr::Name(n) = expr
                    && self.traced.contains(n.id.as_str())
                {
                    self.found = Some(n.id.to_string());
                    return;
                }
                visitor::walk_expr(self, expr);
            }
        }
        let mut find = Find {
            traced: &self.traced,
            found: None,
        };
        find.visit_expr(expr);
        find.found
    }

    /// The traced name a condition branches on; `x is None`, `isinstance(x, …)`
    /// and `hasattr` are plain Python tests even on a Proxy.
    fn branches_on(&self, test: &Expr) -> Option<String> {
        match test {
            Expr::Compare(c)
                if c.ops
                    .iter()
                    .all(|op| matches!(op, CmpOp::Is | CmpOp::IsNot)) =>
            {
                None
            }
            Expr::Call(call) if matches!(&*call.func, Expr::Name(n) if ["isinstance", "hasattr", "callable", "type"].contains(&n.id.as_str())) => {
                None
            }
            Expr::UnaryOp(u) if matches!(u.op, ast::UnaryOp::Not) => self.branches_on(&u.operand),
            Expr::BoolOp(b) => b.values.iter().find_map(|v| self.branches_on(v)),
            _ => self.traced_name(test),
        }
    }

    fn taint_target(&mut self, target: &Expr) {
        match target {
            Expr::Name(n) => {
                self.traced.insert(n.id.to_string());
            }
            Expr::Tuple(t) => t.elts.iter().for_each(|e| self.taint_target(e)),
            Expr::List(l) => l.elts.iter().for_each(|e| self.taint_target(e)),
            Expr::Starred(s) => self.taint_target(&s.value),
            _ => {}
        }
    }

    fn condition(&mut self, keyword: &str, test: &Expr) {
        if let Some(name) = self.branches_on(test) {
            self.report(test, format!("`{keyword}` depends on the traced value '{name}': symbolic tracing cannot branch on it (pass it in concrete_args, or compute both sides with torch.where)"));
        }
    }

    fn body(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Assign(a) => {
                self.expr(&a.value);
                if self.traced_name(&a.value).is_some() {
                    a.targets.iter().for_each(|t| self.taint_target(t));
                }
            }
            Stmt::AnnAssign(a) => {
                if let Some(value) = &a.value {
                    self.expr(value);
                    if self.traced_name(value).is_some() {
                        self.taint_target(&a.target);
                    }
                }
            }
            Stmt::AugAssign(a) => {
                self.expr(&a.value);
                if self.traced_name(&a.value).is_some() {
                    self.taint_target(&a.target);
                }
            }
            Stmt::If(s) => {
                self.expr(&s.test);
                self.condition("if", &s.test);
                self.body(&s.body);
                for clause in &s.elif_else_clauses {
                    if let Some(test) = &clause.test {
                        self.expr(test);
                        self.condition("elif", test);
                    }
                    self.body(&clause.body);
                }
            }
            Stmt::While(s) => {
                self.expr(&s.test);
                self.condition("while", &s.test);
                self.body(&s.body);
                self.body(&s.orelse);
            }
            Stmt::For(s) => {
                self.expr(&s.iter);
                if let Some(name) = self.traced_name(&s.iter) {
                    self.report(&*s.iter, format!("`for` iterates over the traced value '{name}': a Proxy has no length to iterate by"));
                    self.taint_target(&s.target);
                }
                self.body(&s.body);
                self.body(&s.orelse);
            }
            Stmt::Assert(s) => {
                self.expr(&s.test);
                if let Some(name) = self.branches_on(&s.test) {
                    self.report(&*s.test, format!("`assert` tests the traced value '{name}': use torch._assert, which tracing records"));
                }
            }
            Stmt::Try(s) => {
                let mut uses = None;
                for inner in &s.body {
                    struct Exprs<'s>(&'s Forward, Option<String>);
                    impl<'a> Visitor<'a> for Exprs<'_> {
                        fn visit_expr(&mut self, expr: &'a Expr) {
                            if self.1.is_none() {
                                self.1 = self.0.traced_name(expr);
                            }
                        }
                    }
                    let mut find = Exprs(self, None);
                    find.visit_stmt(inner);
                    if uses.is_none() {
                        uses = find.1;
                    }
                }
                if let Some(name) = uses {
                    self.report(stmt, format!("`try` around code on the traced value '{name}': exceptions are not traced, so the handler never runs for the traced graph"));
                }
                self.body(&s.body);
                for handler in &s.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    self.body(&h.body);
                }
                self.body(&s.orelse);
                self.body(&s.finalbody);
            }
            Stmt::With(s) => {
                s.items
                    .iter()
                    .for_each(|item| self.expr(&item.context_expr));
                self.body(&s.body);
            }
            Stmt::Return(r) => {
                if let Some(value) = &r.value {
                    self.expr(value);
                }
            }
            Stmt::Expr(e) => self.expr(&e.value),
            _ => {}
        }
    }

    /// Expression-level problems: conversions, iteration, `and`/`or`,
    /// conditional expressions and `yield`.
    fn expr(&mut self, expr: &Expr) {
        struct Scan<'s> {
            forward: &'s Forward,
            found: Vec<(TextSize, String)>,
        }
        impl<'a> Visitor<'a> for Scan<'_> {
            fn visit_expr(&mut self, expr: &'a Expr) {
                let f = self.forward;
                match expr {
                    Expr::Call(call) => {
                        if let Expr::Name(n) = &*call.func
                            && ["len", "int", "float", "bool"].contains(&n.id.as_str())
                            && let Some(arg) = call.arguments.args.first()
                            && let Some(name) = f.traced_name(arg)
                        {
                            let hint = if n.id.as_str() == "len" {
                                " (call torch.fx.wrap('len') at module scope, or use .size())"
                            } else {
                                ""
                            };
                            self.found.push((expr.start(), format!("`{}()` of the traced value '{name}' needs a concrete value{hint}", n.id)));
                        }
                        for arg in &call.arguments.args {
                            if let Expr::Starred(s) = arg
                                && let Some(name) = f.traced_name(&s.value)
                            {
                                self.found.push((arg.start(), format!("`*` unpacks the traced value '{name}': a Proxy has no length to unpack by")));
                            }
                        }
                    }
                    Expr::List(ast::ExprList { elts, .. })
                    | Expr::Tuple(ast::ExprTuple { elts, .. })
                    | Expr::Set(ast::ExprSet { elts, .. }) => {
                        for e in elts {
                            if let Expr::Starred(s) = e
                                && let Some(name) = f.traced_name(&s.value)
                            {
                                self.found.push((e.start(), format!("`*` unpacks the traced value '{name}': a Proxy has no length to unpack by")));
                            }
                        }
                    }
                    Expr::If(e) => {
                        if let Some(name) = f.branches_on(&e.test) {
                            self.found.push((e.test.start(), format!("conditional expression depends on the traced value '{name}': symbolic tracing cannot branch on it")));
                        }
                    }
                    Expr::BoolOp(b) => {
                        // Every operand but the last is tested for truth.
                        for v in &b.values[..b.values.len().saturating_sub(1)] {
                            if let Some(name) = f.branches_on(v) {
                                self.found.push((
                                    v.start(),
                                    format!("`and`/`or` tests the traced value '{name}' for truth"),
                                ));
                            }
                        }
                    }
                    Expr::ListComp(ast::ExprListComp { generators, .. })
                    | Expr::SetComp(ast::ExprSetComp { generators, .. })
                    | Expr::DictComp(ast::ExprDictComp { generators, .. })
                    | Expr::Generator(ast::ExprGenerator { generators, .. }) => {
                        for g in generators {
                            if let Some(name) = f.traced_name(&g.iter) {
                                self.found.push((g.iter.start(), format!("comprehension iterates over the traced value '{name}': a Proxy has no length to iterate by")));
                            }
                        }
                    }
                    Expr::Yield(_) | Expr::YieldFrom(_) => {
                        self.found.push((expr.start(), "`forward` is a generator: tracing calls it once and needs a returned value".to_owned()));
                    }
                    _ => {}
                }
                visitor::walk_expr(self, expr);
            }
        }
        let mut scan = Scan {
            forward: self,
            found: vec![],
        };
        scan.visit_expr(expr);
        let found = scan.found;
        self.findings.extend(found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(source: &str) -> Vec<(usize, usize)> {
        lint_source(source)
            .unwrap()
            .iter()
            .map(|f| (f.line, f.column))
            .collect()
    }

    #[test]
    fn finds_branches_and_conversions_on_derived_values() {
        let src = "class M:\n    def forward(self, x, mask=None):\n        if mask is None:\n            pass\n        n = x.size(0)\n        if n > 2:\n            x = x * 2\n        return x[: int(n)]\n";
        assert_eq!(positions(src), [(6, 12), (8, 20)]);
    }

    #[test]
    fn clean_forward_has_no_findings() {
        let src = "class M:\n    def forward(self, x):\n        if self.training:\n            x = x + 1\n        for layer in self.layers:\n            x = layer(x)\n        return x\n";
        assert!(lint_source(src).unwrap().is_empty());
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let err =
            lint_source("class M:\n    def forward(self, x)\n        return x\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.starts_with("syntax error"), "{}", err.message);
    }
}
