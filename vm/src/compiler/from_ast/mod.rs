//! `compile()` of an `ast.Module` with its nodes' line and column numbers.
//!
//! RustPython 0.5 converts a Python AST to its own against an empty source
//! text, so every position becomes line 1: pytest's rewritten test modules
//! (it compiles the AST it rewrote) then report each failure at line 1 with
//! the file's first line as its source. This converter builds the same
//! RustPython AST but lays the nodes out in a synthetic source text — one
//! line per line number, as wide as its widest column — so that every
//! node's offset maps back to its own `lineno`/`col_offset` in the code
//! object's positions and tracebacks.
//!
//! A node this converter does not know (type parameters, t-strings, complex
//! or container constants, strings that are not UTF-8) sends the whole tree
//! back to RustPython's own conversion: correct code, positions lost.

mod expr;
mod pattern;

use expr::operator;
use rustpython_ruff_text_size::{TextRange, TextSize};
use rustpython_vm::builtins::{PyInt, PyList, PyStr, PyTuple};
use rustpython_vm::compiler::ast::{self as ast, AtomicNodeIndex, Expr, Identifier, Stmt};
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

/// Why a tree goes back to RustPython's own conversion.
#[derive(Debug)]
pub(crate) struct Unsupported;

type R<T> = Result<T, Unsupported>;

/// The module's statements and the synthetic source their ranges point into.
pub(crate) fn module(vm: &VirtualMachine, tree: &PyObjectRef) -> R<(ast::ModModule, String)> {
    if class_name(tree) != "Module" {
        return Err(Unsupported);
    }
    let mut widths = Vec::new();
    measure(vm, tree, &mut widths, 0)?;
    let mut starts = Vec::with_capacity(widths.len());
    let mut text = String::new();
    for &width in &widths {
        starts.push(u32::try_from(text.len()).map_err(|_| Unsupported)?);
        text.extend(std::iter::repeat_n(' ', width));
        text.push('\n');
    }
    let conv = Conv { vm, starts, widths };
    let body = conv.stmts(tree, "body")?;
    let end = TextSize::try_from(text.len()).map_err(|_| Unsupported)?;
    let module = ast::ModModule {
        node_index: AtomicNodeIndex::NONE,
        range: TextRange::new(TextSize::new(0), end),
        body,
    };
    Ok((module, text))
}

fn class_name(obj: &PyObjectRef) -> String {
    obj.class().name().to_string()
}

/// CPython's limit on AST depth is what RustPython's validation enforces
/// first; this bound only keeps a cyclic tree from recursing forever.
const MAX_DEPTH: usize = 10_000;

/// Records, per line, one more than the widest column any node uses.
fn measure(
    vm: &VirtualMachine,
    node: &PyObjectRef,
    widths: &mut Vec<usize>,
    depth: usize,
) -> R<()> {
    if depth > MAX_DEPTH {
        return Err(Unsupported);
    }
    let position = |name: &'static str| -> Option<usize> {
        let value = node.get_attr(name, vm).ok()?;
        let value = value
            .downcast_ref::<PyInt>()?
            .try_to_primitive::<i64>(vm)
            .ok()?;
        Some(usize::try_from(value).unwrap_or(0))
    };
    for (line, col) in [("lineno", "col_offset"), ("end_lineno", "end_col_offset")] {
        if let (Some(line), Some(col)) = (position(line), position(col)) {
            let line = line.max(1);
            if line > 10_000_000 || col > 1_000_000 {
                return Err(Unsupported);
            }
            if widths.len() < line {
                widths.resize(line, 0);
            }
            widths[line - 1] = widths[line - 1].max(col + 1);
        }
    }
    let fields = node
        .class()
        .as_object()
        .get_attr("_fields", vm)
        .map_err(|_| Unsupported)?;
    let fields = fields.downcast_ref::<PyTuple>().ok_or(Unsupported)?;
    for field in fields.iter() {
        let field = field.downcast_ref::<PyStr>().ok_or(Unsupported)?;
        let Ok(value) = node.get_attr(field, vm) else {
            continue;
        };
        if let Some(list) = value.downcast_ref::<PyList>() {
            for item in list.borrow_vec().iter() {
                if is_node(vm, item) {
                    measure(vm, item, widths, depth + 1)?;
                }
            }
        } else if is_node(vm, &value) {
            measure(vm, &value, widths, depth + 1)?;
        }
    }
    Ok(())
}

fn is_node(vm: &VirtualMachine, obj: &PyObjectRef) -> bool {
    obj.class()
        .as_object()
        .get_attr("_fields", vm)
        .is_ok_and(|f| f.downcast_ref::<PyTuple>().is_some())
}

struct Conv<'a> {
    vm: &'a VirtualMachine,
    starts: Vec<u32>,
    widths: Vec<usize>,
}

impl Conv<'_> {
    // ---- reading fields ----

    fn get(&self, obj: &PyObjectRef, name: &'static str) -> R<PyObjectRef> {
        obj.get_attr(name, self.vm).map_err(|_| Unsupported)
    }

    fn opt(&self, obj: &PyObjectRef, name: &'static str) -> R<Option<PyObjectRef>> {
        let value = obj.get_attr(name, self.vm).ok();
        Ok(value.filter(|v| !self.vm.is_none(v)))
    }

    fn list(&self, obj: &PyObjectRef, name: &'static str) -> R<Vec<PyObjectRef>> {
        let value = self.get(obj, name)?;
        let list = value.downcast_ref::<PyList>().ok_or(Unsupported)?;
        Ok(list.borrow_vec().to_vec())
    }

    fn string(&self, obj: &PyObjectRef) -> R<String> {
        let s = obj.downcast_ref::<PyStr>().ok_or(Unsupported)?;
        s.to_str().map(str::to_owned).ok_or(Unsupported)
    }

    fn int(&self, obj: &PyObjectRef, name: &'static str) -> R<i64> {
        let value = self.get(obj, name)?;
        let value = value.downcast_ref::<PyInt>().ok_or(Unsupported)?;
        value.try_to_primitive(self.vm).map_err(|_| Unsupported)
    }

    fn ident(&self, obj: &PyObjectRef, name: &'static str, range: TextRange) -> R<Identifier> {
        Ok(Identifier::new(self.string(&self.get(obj, name)?)?, range))
    }

    fn opt_ident(
        &self,
        obj: &PyObjectRef,
        name: &'static str,
        range: TextRange,
    ) -> R<Option<Identifier>> {
        match self.opt(obj, name)? {
            Some(v) => Ok(Some(Identifier::new(self.string(&v)?, range))),
            None => Ok(None),
        }
    }

    /// The node's span in the synthetic text (line 1, column 0 without one).
    fn range(&self, obj: &PyObjectRef) -> TextRange {
        let read = |name: &'static str| -> Option<i64> {
            let value = obj.get_attr(name, self.vm).ok()?;
            value
                .downcast_ref::<PyInt>()?
                .try_to_primitive(self.vm)
                .ok()
        };
        let (Some(line), Some(col)) = (read("lineno"), read("col_offset")) else {
            return TextRange::default();
        };
        let end_line = read("end_lineno").unwrap_or(line);
        let end_col = read("end_col_offset").unwrap_or(col);
        let start = self.offset(line, col);
        let end = self.offset(end_line, end_col).max(start);
        TextRange::new(start, end)
    }

    fn offset(&self, line: i64, col: i64) -> TextSize {
        let line = usize::try_from(line).unwrap_or(0).max(1) - 1;
        let (Some(&start), Some(&width)) = (self.starts.get(line), self.widths.get(line)) else {
            return TextSize::new(0);
        };
        let col = usize::try_from(col).unwrap_or(0).min(width);
        TextSize::new(start + col as u32)
    }

    // ---- statements ----

    fn stmts(&self, obj: &PyObjectRef, name: &'static str) -> R<Vec<Stmt>> {
        self.list(obj, name)?.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&self, s: &PyObjectRef) -> R<Stmt> {
        let kind = class_name(s);
        let range = match kind.as_str() {
            // The parser's span of a decorated definition starts at its first
            // decorator (CPython's co_firstlineno); the tree's `lineno` is
            // the `def` line.
            "FunctionDef" | "AsyncFunctionDef" | "ClassDef" => {
                let first = self
                    .list(s, "decorator_list")?
                    .first()
                    .map(|d| self.range(d));
                let range = self.range(s);
                match first {
                    Some(d) if d.start() < range.start() => TextRange::new(d.start(), range.end()),
                    _ => range,
                }
            }
            _ => self.range(s),
        };
        Ok(match kind.as_str() {
            "FunctionDef" | "AsyncFunctionDef" => {
                if !self.list(s, "type_params").unwrap_or_default().is_empty() {
                    return Err(Unsupported);
                }
                Stmt::FunctionDef(ast::StmtFunctionDef {
                    node_index: AtomicNodeIndex::NONE,
                    range,
                    is_async: kind == "AsyncFunctionDef",
                    decorator_list: self.decorators(s)?,
                    name: self.ident(s, "name", range)?,
                    type_params: None,
                    parameters: Box::new(self.parameters(&self.get(s, "args")?)?),
                    returns: self.opt_expr(s, "returns")?,
                    body: self.stmts(s, "body")?,
                })
            }
            "ClassDef" => {
                if !self.list(s, "type_params").unwrap_or_default().is_empty() {
                    return Err(Unsupported);
                }
                let args = self.exprs(s, "bases")?;
                let keywords = self.keywords(s)?;
                let arguments = (!args.is_empty() || !keywords.is_empty()).then(|| {
                    Box::new(ast::Arguments {
                        range,
                        node_index: AtomicNodeIndex::NONE,
                        args: args.into(),
                        keywords: keywords.into(),
                    })
                });
                Stmt::ClassDef(ast::StmtClassDef {
                    node_index: AtomicNodeIndex::NONE,
                    range,
                    decorator_list: self.decorators(s)?,
                    name: self.ident(s, "name", range)?,
                    type_params: None,
                    arguments,
                    body: self.stmts(s, "body")?,
                })
            }
            "Return" => Stmt::Return(ast::StmtReturn {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: self.opt_expr(s, "value")?,
            }),
            "Delete" => Stmt::Delete(ast::StmtDelete {
                node_index: AtomicNodeIndex::NONE,
                range,
                targets: self.exprs(s, "targets")?,
            }),
            "Assign" => Stmt::Assign(ast::StmtAssign {
                node_index: AtomicNodeIndex::NONE,
                range,
                targets: self.exprs(s, "targets")?,
                value: self.expr_field(s, "value")?,
            }),
            "AugAssign" => Stmt::AugAssign(ast::StmtAugAssign {
                node_index: AtomicNodeIndex::NONE,
                range,
                target: self.expr_field(s, "target")?,
                op: operator(&self.get(s, "op")?)?,
                value: self.expr_field(s, "value")?,
            }),
            "AnnAssign" => Stmt::AnnAssign(ast::StmtAnnAssign {
                node_index: AtomicNodeIndex::NONE,
                range,
                target: self.expr_field(s, "target")?,
                annotation: self.expr_field(s, "annotation")?,
                value: self.opt_expr(s, "value")?,
                simple: self.int(s, "simple")? != 0,
            }),
            "For" | "AsyncFor" => Stmt::For(ast::StmtFor {
                node_index: AtomicNodeIndex::NONE,
                range,
                is_async: kind == "AsyncFor",
                target: self.expr_field(s, "target")?,
                iter: self.expr_field(s, "iter")?,
                body: self.stmts(s, "body")?,
                orelse: self.stmts(s, "orelse")?,
            }),
            "While" => Stmt::While(ast::StmtWhile {
                node_index: AtomicNodeIndex::NONE,
                range,
                test: self.expr_field(s, "test")?,
                body: self.stmts(s, "body")?,
                orelse: self.stmts(s, "orelse")?,
            }),
            "If" => {
                // `else:` holding an `if` means what `elif` means.
                let orelse = self.stmts(s, "orelse")?;
                let elif_else_clauses = if orelse.is_empty() {
                    Vec::new()
                } else {
                    vec![ast::ElifElseClause {
                        range,
                        node_index: AtomicNodeIndex::NONE,
                        test: None,
                        body: orelse,
                    }]
                };
                Stmt::If(ast::StmtIf {
                    node_index: AtomicNodeIndex::NONE,
                    range,
                    test: self.expr_field(s, "test")?,
                    body: self.stmts(s, "body")?,
                    elif_else_clauses,
                })
            }
            "With" | "AsyncWith" => Stmt::With(ast::StmtWith {
                node_index: AtomicNodeIndex::NONE,
                range,
                is_async: kind == "AsyncWith",
                items: self
                    .list(s, "items")?
                    .iter()
                    .map(|item| {
                        Ok(ast::WithItem {
                            range,
                            node_index: AtomicNodeIndex::NONE,
                            context_expr: self.expr(&self.get(item, "context_expr")?)?,
                            optional_vars: self.opt_expr(item, "optional_vars")?,
                        })
                    })
                    .collect::<R<_>>()?,
                body: self.stmts(s, "body")?,
            }),
            "Match" => Stmt::Match(ast::StmtMatch {
                node_index: AtomicNodeIndex::NONE,
                range,
                subject: self.expr_field(s, "subject")?,
                cases: self
                    .list(s, "cases")?
                    .iter()
                    .map(|c| {
                        Ok(ast::MatchCase {
                            range: self.range(c),
                            node_index: AtomicNodeIndex::NONE,
                            pattern: self.pattern(&self.get(c, "pattern")?)?,
                            guard: self.opt_expr(c, "guard")?,
                            body: self.stmts(c, "body")?,
                        })
                    })
                    .collect::<R<_>>()?,
            }),
            "Raise" => Stmt::Raise(ast::StmtRaise {
                node_index: AtomicNodeIndex::NONE,
                range,
                exc: self.opt_expr(s, "exc")?,
                cause: self.opt_expr(s, "cause")?,
            }),
            "Try" | "TryStar" => Stmt::Try(ast::StmtTry {
                node_index: AtomicNodeIndex::NONE,
                range,
                body: self.stmts(s, "body")?,
                handlers: self
                    .list(s, "handlers")?
                    .iter()
                    .map(|h| {
                        let range = self.range(h);
                        Ok(ast::ExceptHandler::ExceptHandler(
                            ast::ExceptHandlerExceptHandler {
                                range,
                                node_index: AtomicNodeIndex::NONE,
                                type_: self.opt_expr(h, "type")?,
                                name: self.opt_ident(h, "name", range)?,
                                body: self.stmts(h, "body")?,
                            },
                        ))
                    })
                    .collect::<R<_>>()?,
                orelse: self.stmts(s, "orelse")?,
                finalbody: self.stmts(s, "finalbody")?,
                is_star: kind == "TryStar",
            }),
            "Assert" => Stmt::Assert(ast::StmtAssert {
                node_index: AtomicNodeIndex::NONE,
                range,
                test: self.expr_field(s, "test")?,
                msg: self.opt_expr(s, "msg")?,
            }),
            "Import" => Stmt::Import(ast::StmtImport {
                node_index: AtomicNodeIndex::NONE,
                range,
                names: self.aliases(s)?,
                is_lazy: false,
            }),
            "ImportFrom" => Stmt::ImportFrom(ast::StmtImportFrom {
                node_index: AtomicNodeIndex::NONE,
                range,
                module: self.opt_ident(s, "module", range)?,
                names: self.aliases(s)?,
                level: match self.opt(s, "level")? {
                    Some(_) => u32::try_from(self.int(s, "level")?).map_err(|_| Unsupported)?,
                    None => 0,
                },
                is_lazy: false,
            }),
            "Global" | "Nonlocal" => {
                let names = self
                    .list(s, "names")?
                    .iter()
                    .map(|n| Ok(Identifier::new(self.string(n)?, range)))
                    .collect::<R<_>>()?;
                if kind == "Global" {
                    Stmt::Global(ast::StmtGlobal {
                        node_index: AtomicNodeIndex::NONE,
                        range,
                        names,
                    })
                } else {
                    Stmt::Nonlocal(ast::StmtNonlocal {
                        node_index: AtomicNodeIndex::NONE,
                        range,
                        names,
                    })
                }
            }
            "Expr" => Stmt::Expr(ast::StmtExpr {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: self.expr_field(s, "value")?,
            }),
            "Pass" => Stmt::Pass(ast::StmtPass {
                node_index: AtomicNodeIndex::NONE,
                range,
            }),
            "Break" => Stmt::Break(ast::StmtBreak {
                node_index: AtomicNodeIndex::NONE,
                range,
            }),
            "Continue" => Stmt::Continue(ast::StmtContinue {
                node_index: AtomicNodeIndex::NONE,
                range,
            }),
            _ => return Err(Unsupported),
        })
    }

    fn decorators(&self, s: &PyObjectRef) -> R<Vec<ast::Decorator>> {
        self.list(s, "decorator_list")?
            .iter()
            .map(|d| {
                Ok(ast::Decorator {
                    range: self.range(d),
                    node_index: AtomicNodeIndex::NONE,
                    expression: self.expr(d)?,
                })
            })
            .collect()
    }

    fn aliases(&self, s: &PyObjectRef) -> R<Vec<ast::Alias>> {
        self.list(s, "names")?
            .iter()
            .map(|a| {
                let range = self.range(a);
                Ok(ast::Alias {
                    range,
                    node_index: AtomicNodeIndex::NONE,
                    name: self.ident(a, "name", range)?,
                    asname: self.opt_ident(a, "asname", range)?,
                })
            })
            .collect()
    }

    fn keywords(&self, obj: &PyObjectRef) -> R<Vec<ast::Keyword>> {
        self.list(obj, "keywords")?
            .iter()
            .map(|k| {
                let range = self.range(k);
                Ok(ast::Keyword {
                    range,
                    node_index: AtomicNodeIndex::NONE,
                    arg: self.opt_ident(k, "arg", range)?,
                    value: self.expr(&self.get(k, "value")?)?,
                })
            })
            .collect()
    }

    /// Python's `arguments`: `defaults` belong to the last positional
    /// parameters, `kw_defaults` pair with `kwonlyargs` (None for none).
    fn parameters(&self, a: &PyObjectRef) -> R<ast::Parameters> {
        let posonly = self.list(a, "posonlyargs")?;
        let args = self.list(a, "args")?;
        let defaults = self.list(a, "defaults")?;
        let positional = posonly.len() + args.len();
        let first_default = positional.checked_sub(defaults.len()).ok_or(Unsupported)?;
        let mut with_defaults = posonly
            .iter()
            .chain(&args)
            .enumerate()
            .map(|(i, p)| {
                let default = match i.checked_sub(first_default) {
                    Some(d) => Some(Box::new(self.expr(&defaults[d])?)),
                    None => None,
                };
                self.parameter_with_default(p, default)
            })
            .collect::<R<Vec<_>>>()?;
        let args = with_defaults.split_off(posonly.len());
        let kwonly = self.list(a, "kwonlyargs")?;
        let kw_defaults = self.list(a, "kw_defaults")?;
        if kw_defaults.len() != kwonly.len() {
            return Err(Unsupported);
        }
        let kwonlyargs = kwonly
            .iter()
            .zip(&kw_defaults)
            .map(|(p, d)| {
                let default = if self.vm.is_none(d) {
                    None
                } else {
                    Some(Box::new(self.expr(d)?))
                };
                self.parameter_with_default(p, default)
            })
            .collect::<R<_>>()?;
        let variadic = |name: &'static str| -> R<Option<Box<ast::Parameter>>> {
            Ok(match self.opt(a, name)? {
                Some(p) => Some(Box::new(self.parameter(&p)?)),
                None => None,
            })
        };
        Ok(ast::Parameters {
            range: TextRange::default(),
            node_index: AtomicNodeIndex::NONE,
            posonlyargs: with_defaults,
            args,
            vararg: variadic("vararg")?,
            kwonlyargs,
            kwarg: variadic("kwarg")?,
        })
    }

    fn parameter(&self, p: &PyObjectRef) -> R<ast::Parameter> {
        let range = self.range(p);
        Ok(ast::Parameter {
            range,
            node_index: AtomicNodeIndex::NONE,
            name: self.ident(p, "arg", range)?,
            annotation: self.opt_expr(p, "annotation")?,
        })
    }

    fn parameter_with_default(
        &self,
        p: &PyObjectRef,
        default: Option<Box<Expr>>,
    ) -> R<ast::ParameterWithDefault> {
        let parameter = self.parameter(p)?;
        Ok(ast::ParameterWithDefault {
            range: parameter.range,
            node_index: AtomicNodeIndex::NONE,
            parameter,
            default,
        })
    }
}
