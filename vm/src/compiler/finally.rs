//! Scopes inside a `finally` that a `return`, `break` or `continue` leaves
//! through, moved where RustPython 0.5's code generator compiles them once.
//!
//! The generator copies a `finally` body inline at every jump out of its
//! `try` (as CPython does), but the symbol table holds one entry per lambda,
//! comprehension, `def` or `class` in the source, consumed in order: the
//! second copy of such a scope finds no table ("no symbol table available",
//! pytest's own `pytester.py` stops there) or silently takes the next scope's.
//!
//! Each such scope becomes a call of a factory defined before the enclosing
//! top-level statement of its function (or module), where it is compiled
//! once: `{t for t in a}` becomes `__fxvm_finally_0()` after
//! `__fxvm_finally_0 = lambda: {t for t in a}`, and `def g(): ...` becomes
//! `g = __fxvm_finally_1()` after `def __fxvm_finally_1(): def g(): ...;
//! return g`. The factory runs where the scope stood, so defaults,
//! decorators and the values a comprehension reads are evaluated at the
//! same moment as before; the scope's variables are the same cells.
//! Left alone (still refused by the generator): scopes that bind in their
//! enclosing function (`:=` in a comprehension), async comprehensions, and
//! scopes in a class body's `finally` (a factory there would not see the
//! class's names).

use std::cell::{Cell, RefCell};

use rustpython_ruff_text_size::{Ranged, TextRange};
use rustpython_vm::compiler::ast::name::Name;
use rustpython_vm::compiler::ast::visitor::transformer::{self, Transformer};
use rustpython_vm::compiler::ast::visitor::{self, Visitor};
use rustpython_vm::compiler::ast::{
    self as ast, AtomicNodeIndex, ExceptHandler, Expr, ExprContext, Identifier, Stmt,
};

/// Rewrites every function body and the module body of `body`; true when
/// anything was moved.
pub(crate) fn rewrite_module(body: &mut Vec<Stmt>) -> bool {
    let factories = Cell::new(0);
    rewrite_scope(body, &factories);
    factories.get() > 0
}

fn is_scope(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::Lambda(_)
            | Expr::ListComp(_)
            | Expr::SetComp(_)
            | Expr::DictComp(_)
            | Expr::Generator(_)
    )
}

/// Hoists in one function or module body, then in the scopes it defines.
fn rewrite_scope(body: &mut Vec<Stmt>, factories: &Cell<usize>) {
    let mut i = 0;
    while i < body.len() {
        let hoisted = Hoister {
            factories,
            hoisted: RefCell::new(Vec::new()),
        };
        hoist_in(&mut body[i], &hoisted);
        let hoisted = hoisted.hoisted.into_inner();
        let n = hoisted.len();
        body.splice(i..i, hoisted);
        i += n + 1;
    }
    let nested = Nested(factories);
    for stmt in body.iter_mut() {
        nested.visit_stmt(stmt);
    }
}

/// Finds the `try` statements of one scope (not crossing into the functions
/// and classes it defines) and hoists out of their `finally` bodies.
fn hoist_in(stmt: &mut Stmt, hoister: &Hoister<'_>) {
    if let Stmt::Try(t) = stmt
        && !t.finalbody.is_empty()
        && leaves(t)
    {
        // Everything in this `finally` is copied, including nested `try`s.
        for s in &mut t.finalbody {
            hoister.visit_stmt(s);
        }
    }
    for body in bodies(stmt) {
        for s in body {
            hoist_in(s, hoister);
        }
    }
}

/// The statement lists a compound statement holds in its own scope.
fn bodies(stmt: &mut Stmt) -> Vec<&mut Vec<Stmt>> {
    match stmt {
        Stmt::For(s) => vec![&mut s.body, &mut s.orelse],
        Stmt::While(s) => vec![&mut s.body, &mut s.orelse],
        Stmt::If(s) => std::iter::once(&mut s.body)
            .chain(s.elif_else_clauses.iter_mut().map(|c| &mut c.body))
            .collect(),
        Stmt::With(s) => vec![&mut s.body],
        Stmt::Match(s) => s.cases.iter_mut().map(|c| &mut c.body).collect(),
        Stmt::Try(s) => {
            let mut out = vec![&mut s.body, &mut s.orelse, &mut s.finalbody];
            out.extend(s.handlers.iter_mut().map(|h| match h {
                ExceptHandler::ExceptHandler(h) => &mut h.body,
            }));
            out
        }
        _ => Vec::new(),
    }
}

/// Whether a `return`, or a `break`/`continue` of a loop outside it, leaves
/// `t` from its body, handlers or `else` (each copies the `finally` inline).
fn leaves(t: &ast::StmtTry) -> bool {
    jumps(&t.body, false)
        || jumps(&t.orelse, false)
        || t.handlers.iter().any(|h| match h {
            ExceptHandler::ExceptHandler(h) => jumps(&h.body, false),
        })
}

fn jumps(stmts: &[Stmt], in_loop: bool) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Return(_) => true,
        Stmt::Break(_) | Stmt::Continue(_) => !in_loop,
        Stmt::For(s) => jumps(&s.body, true) || jumps(&s.orelse, in_loop),
        Stmt::While(s) => jumps(&s.body, true) || jumps(&s.orelse, in_loop),
        Stmt::If(s) => {
            jumps(&s.body, in_loop) || s.elif_else_clauses.iter().any(|c| jumps(&c.body, in_loop))
        }
        Stmt::With(s) => jumps(&s.body, in_loop),
        Stmt::Match(s) => s.cases.iter().any(|c| jumps(&c.body, in_loop)),
        Stmt::Try(s) => {
            jumps(&s.body, in_loop)
                || jumps(&s.orelse, in_loop)
                || jumps(&s.finalbody, in_loop)
                || s.handlers.iter().any(|h| match h {
                    ExceptHandler::ExceptHandler(h) => jumps(&h.body, in_loop),
                })
        }
        _ => false,
    })
}

/// Replaces the scopes of a copied `finally` body by factory calls.
struct Hoister<'a> {
    factories: &'a Cell<usize>,
    hoisted: RefCell<Vec<Stmt>>,
}

impl Hoister<'_> {
    fn next_name(&self) -> Name {
        let n = self.factories.get();
        self.factories.set(n + 1);
        Name::new(format!("__fxvm_finally_{n}"))
    }
}

impl Transformer for Hoister<'_> {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        let (name, range) = match stmt {
            Stmt::FunctionDef(f) => (f.name.id.clone(), f.range),
            Stmt::ClassDef(c) => (c.name.id.clone(), c.range),
            _ => return transformer::walk_stmt(self, stmt),
        };
        let factory = self.next_name();
        let call = call(&factory, range);
        let assign = Stmt::Assign(ast::StmtAssign {
            node_index: AtomicNodeIndex::NONE,
            range,
            targets: vec![name_expr(&name, ExprContext::Store, range)],
            value: Box::new(call),
        });
        let definition = std::mem::replace(stmt, assign);
        let ret = Stmt::Return(ast::StmtReturn {
            node_index: AtomicNodeIndex::NONE,
            range,
            value: Some(Box::new(name_expr(&name, ExprContext::Load, range))),
        });
        self.hoisted
            .borrow_mut()
            .push(Stmt::FunctionDef(ast::StmtFunctionDef {
                node_index: AtomicNodeIndex::NONE,
                range,
                is_async: false,
                decorator_list: Vec::new(),
                name: Identifier::new(factory, range),
                type_params: None,
                parameters: Box::default(),
                returns: None,
                body: vec![definition, ret],
            }));
    }

    fn visit_expr(&self, expr: &mut Expr) {
        if !is_scope(expr) {
            return transformer::walk_expr(self, expr);
        }
        if binds_outside(expr) {
            return;
        }
        let range = expr.range();
        let factory = self.next_name();
        let scope = std::mem::replace(expr, call(&factory, range));
        let lambda = Expr::Lambda(ast::ExprLambda {
            node_index: AtomicNodeIndex::NONE,
            range,
            parameters: None,
            body: Box::new(scope),
        });
        self.hoisted
            .borrow_mut()
            .push(Stmt::Assign(ast::StmtAssign {
                node_index: AtomicNodeIndex::NONE,
                range,
                targets: vec![name_expr(&factory, ExprContext::Store, range)],
                value: Box::new(lambda),
            }));
    }
}

/// Comprehensions whose meaning a wrapping lambda would change: `:=` binds
/// in the enclosing function, `await` and `async for` need its coroutine.
fn binds_outside(expr: &Expr) -> bool {
    struct Binds(bool);
    impl<'a> Visitor<'a> for Binds {
        fn visit_expr(&mut self, expr: &'a Expr) {
            match expr {
                Expr::Named(_) | Expr::Await(_) => self.0 = true,
                // A lambda is a scope of its own: what it binds stays inside.
                Expr::Lambda(_) => {}
                _ if async_comprehension(expr) => self.0 = true,
                _ => visitor::walk_expr(self, expr),
            }
        }
    }
    let mut binds = Binds(false);
    binds.visit_expr(expr);
    binds.0
}

fn async_comprehension(expr: &Expr) -> bool {
    let generators = match expr {
        Expr::ListComp(c) => &c.generators,
        Expr::SetComp(c) => &c.generators,
        Expr::DictComp(c) => &c.generators,
        Expr::Generator(c) => &c.generators,
        _ => return false,
    };
    generators.iter().any(|g| g.is_async)
}

/// Visits the functions a scope defines (through class bodies, which are
/// left as they are) and rewrites their bodies.
struct Nested<'a>(&'a Cell<usize>);

impl Transformer for Nested<'_> {
    fn visit_stmt(&self, stmt: &mut Stmt) {
        match stmt {
            Stmt::FunctionDef(f) => rewrite_scope(&mut f.body, self.0),
            _ => transformer::walk_stmt(self, stmt),
        }
    }

    // Expressions hold no statements (lambdas have none).
    fn visit_expr(&self, _: &mut Expr) {}
}

fn call(factory: &Name, range: TextRange) -> Expr {
    Expr::Call(ast::ExprCall {
        node_index: AtomicNodeIndex::NONE,
        range,
        func: Box::new(name_expr(factory, ExprContext::Load, range)),
        arguments: ast::Arguments {
            range,
            node_index: AtomicNodeIndex::NONE,
            args: Box::new([]),
            keywords: Box::new([]),
        },
    })
}

fn name_expr(id: &Name, ctx: ExprContext, range: TextRange) -> Expr {
    Expr::Name(ast::ExprName {
        node_index: AtomicNodeIndex::NONE,
        range,
        id: id.clone(),
        ctx,
    })
}

#[cfg(test)]
mod tests {
    use rustpython_vm::compiler::core::SourceFileBuilder;
    use rustpython_vm::compiler::{CompileOpts, Mode, ast, codegen, parser};

    fn rewrite(source: &str) -> (bool, Result<(), String>) {
        let mut module = parser::parse_module(source).unwrap().into_syntax();
        let changed = super::rewrite_module(&mut module.body);
        let file = SourceFileBuilder::new("t.py", source).finish();
        let compiled = codegen::compile::compile_top(
            ast::Mod::Module(module),
            file,
            Mode::Exec,
            CompileOpts::default(),
        );
        (changed, compiled.map(drop).map_err(|e| e.to_string()))
    }

    #[test]
    fn scopes_in_a_finally_left_by_return_break_or_continue_compile() {
        for source in [
            "def f(a):\n    try:\n        return 1\n    finally:\n        s = {t for t in a}\n",
            "def f(a):\n    try:\n        return (yield)\n    finally:\n        g = lambda: [x for x in a]\n",
            "for x in y:\n    try:\n        continue\n    finally:\n        def g(): pass\n",
            "def f():\n    while 1:\n        try:\n            break\n        except E:\n            return\n        finally:\n            class K: pass\n",
            "def f(a):\n    try:\n        try:\n            return 0\n        finally:\n            [v for v in a]\n    finally:\n        (v for v in a)\n",
        ] {
            assert_eq!(rewrite(source), (true, Ok(())), "{source}");
        }
    }

    #[test]
    fn finally_bodies_without_jump_copies_are_left_alone() {
        for source in [
            // No jump out of the try: the finally is compiled once per path.
            "def f(a):\n    try:\n        pass\n    finally:\n        s = [t for t in a]\n",
            // The break belongs to a loop inside the try.
            "def f(a):\n    try:\n        for x in a:\n            break\n    finally:\n        s = [t for t in a]\n",
            // No scope in the finally.
            "def f(a):\n    try:\n        return 1\n    finally:\n        print(a)\n",
            // `:=` in a comprehension binds in f: a lambda would change that.
            "def f(a):\n    try:\n        return 1\n    finally:\n        [y := t for t in a]\n",
        ] {
            assert!(!rewrite(source).0, "{source}");
        }
    }
}
