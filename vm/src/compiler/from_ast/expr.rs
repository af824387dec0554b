//! Expressions of a Python AST as RustPython's, with constants as the
//! literals the parser would have made.

use rustpython_ruff_text_size::TextRange;
use rustpython_vm::builtins::{PyBytes, PyFloat, PyInt, PyStr};
use rustpython_vm::compiler::ast::{self as ast, AtomicNodeIndex, Expr};
use rustpython_vm::{AsObject, PyObjectRef};

use super::{Conv, R, Unsupported, class_name};

impl Conv<'_> {
    pub(super) fn exprs(&self, obj: &PyObjectRef, name: &'static str) -> R<Vec<Expr>> {
        self.list(obj, name)?.iter().map(|e| self.expr(e)).collect()
    }

    pub(super) fn expr_field(&self, obj: &PyObjectRef, name: &'static str) -> R<Box<Expr>> {
        Ok(Box::new(self.expr(&self.get(obj, name)?)?))
    }

    pub(super) fn opt_expr(&self, obj: &PyObjectRef, name: &'static str) -> R<Option<Box<Expr>>> {
        match self.opt(obj, name)? {
            Some(e) => Ok(Some(Box::new(self.expr(&e)?))),
            None => Ok(None),
        }
    }

    pub(super) fn ctx(&self, e: &PyObjectRef) -> R<ast::ExprContext> {
        let ctx = match self.opt(e, "ctx")? {
            Some(ctx) => class_name(&ctx),
            None => "Load".to_owned(),
        };
        Ok(match ctx.as_str() {
            "Load" => ast::ExprContext::Load,
            "Store" => ast::ExprContext::Store,
            "Del" => ast::ExprContext::Del,
            _ => return Err(Unsupported),
        })
    }

    pub(super) fn comprehensions(&self, e: &PyObjectRef) -> R<Vec<ast::Comprehension>> {
        self.list(e, "generators")?
            .iter()
            .map(|g| {
                Ok(ast::Comprehension {
                    range: self.range(g),
                    node_index: AtomicNodeIndex::NONE,
                    target: self.expr(&self.get(g, "target")?)?,
                    iter: self.expr(&self.get(g, "iter")?)?,
                    ifs: self.exprs(g, "ifs")?,
                    is_async: self.int(g, "is_async")? != 0,
                })
            })
            .collect()
    }

    pub(super) fn expr(&self, e: &PyObjectRef) -> R<Expr> {
        let range = self.range(e);
        let kind = class_name(e);
        Ok(match kind.as_str() {
            "BoolOp" => Expr::BoolOp(ast::ExprBoolOp {
                node_index: AtomicNodeIndex::NONE,
                range,
                op: match class_name(&self.get(e, "op")?).as_str() {
                    "And" => ast::BoolOp::And,
                    "Or" => ast::BoolOp::Or,
                    _ => return Err(Unsupported),
                },
                values: self.exprs(e, "values")?,
            }),
            "NamedExpr" => Expr::Named(ast::ExprNamed {
                node_index: AtomicNodeIndex::NONE,
                range,
                target: self.expr_field(e, "target")?,
                value: self.expr_field(e, "value")?,
            }),
            "BinOp" => Expr::BinOp(ast::ExprBinOp {
                node_index: AtomicNodeIndex::NONE,
                range,
                left: self.expr_field(e, "left")?,
                op: operator(&self.get(e, "op")?)?,
                right: self.expr_field(e, "right")?,
            }),
            "UnaryOp" => Expr::UnaryOp(ast::ExprUnaryOp {
                node_index: AtomicNodeIndex::NONE,
                range,
                op: match class_name(&self.get(e, "op")?).as_str() {
                    "Invert" => ast::UnaryOp::Invert,
                    "Not" => ast::UnaryOp::Not,
                    "UAdd" => ast::UnaryOp::UAdd,
                    "USub" => ast::UnaryOp::USub,
                    _ => return Err(Unsupported),
                },
                operand: self.expr_field(e, "operand")?,
            }),
            "Lambda" => {
                let parameters = self.parameters(&self.get(e, "args")?)?;
                let empty = parameters.posonlyargs.is_empty()
                    && parameters.args.is_empty()
                    && parameters.vararg.is_none()
                    && parameters.kwonlyargs.is_empty()
                    && parameters.kwarg.is_none();
                Expr::Lambda(ast::ExprLambda {
                    node_index: AtomicNodeIndex::NONE,
                    range,
                    parameters: (!empty).then(|| Box::new(parameters)),
                    body: self.expr_field(e, "body")?,
                })
            }
            "IfExp" => Expr::If(ast::ExprIf {
                node_index: AtomicNodeIndex::NONE,
                range,
                test: self.expr_field(e, "test")?,
                body: self.expr_field(e, "body")?,
                orelse: self.expr_field(e, "orelse")?,
            }),
            "Dict" => {
                let keys = self.list(e, "keys")?;
                let values = self.list(e, "values")?;
                if keys.len() != values.len() {
                    return Err(Unsupported);
                }
                let items = keys
                    .iter()
                    .zip(&values)
                    .map(|(k, v)| {
                        Ok(ast::DictItem {
                            key: if self.vm.is_none(k) {
                                None
                            } else {
                                Some(self.expr(k)?)
                            },
                            value: self.expr(v)?,
                        })
                    })
                    .collect::<R<_>>()?;
                Expr::Dict(ast::ExprDict {
                    node_index: AtomicNodeIndex::NONE,
                    range,
                    items,
                })
            }
            "Set" => Expr::Set(ast::ExprSet {
                node_index: AtomicNodeIndex::NONE,
                range,
                elts: self.exprs(e, "elts")?,
            }),
            "ListComp" => Expr::ListComp(ast::ExprListComp {
                node_index: AtomicNodeIndex::NONE,
                range,
                elt: self.expr_field(e, "elt")?,
                generators: self.comprehensions(e)?,
            }),
            "SetComp" => Expr::SetComp(ast::ExprSetComp {
                node_index: AtomicNodeIndex::NONE,
                range,
                elt: self.expr_field(e, "elt")?,
                generators: self.comprehensions(e)?,
            }),
            "DictComp" => Expr::DictComp(ast::ExprDictComp {
                node_index: AtomicNodeIndex::NONE,
                range,
                key: self.expr_field(e, "key")?,
                value: self.expr_field(e, "value")?,
                generators: self.comprehensions(e)?,
            }),
            "GeneratorExp" => Expr::Generator(ast::ExprGenerator {
                node_index: AtomicNodeIndex::NONE,
                range,
                elt: self.expr_field(e, "elt")?,
                generators: self.comprehensions(e)?,
                parenthesized: true,
            }),
            "Await" => Expr::Await(ast::ExprAwait {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: self.expr_field(e, "value")?,
            }),
            "Yield" => Expr::Yield(ast::ExprYield {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: self.opt_expr(e, "value")?,
            }),
            "YieldFrom" => Expr::YieldFrom(ast::ExprYieldFrom {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: self.expr_field(e, "value")?,
            }),
            "Compare" => Expr::Compare(ast::ExprCompare {
                node_index: AtomicNodeIndex::NONE,
                range,
                left: self.expr_field(e, "left")?,
                ops: self
                    .list(e, "ops")?
                    .iter()
                    .map(cmp_op)
                    .collect::<R<Vec<_>>>()?
                    .into(),
                comparators: self.exprs(e, "comparators")?.into(),
            }),
            "Call" => Expr::Call(ast::ExprCall {
                node_index: AtomicNodeIndex::NONE,
                range,
                func: self.expr_field(e, "func")?,
                arguments: ast::Arguments {
                    range,
                    node_index: AtomicNodeIndex::NONE,
                    args: self.exprs(e, "args")?.into(),
                    keywords: self.keywords(e)?.into(),
                },
            }),
            "JoinedStr" => Expr::FString(ast::ExprFString {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: ast::FStringValue::single(ast::FString {
                    range,
                    node_index: AtomicNodeIndex::NONE,
                    elements: self.fstring_elements(e)?,
                    flags: ast::FStringFlags::empty(),
                }),
            }),
            // A lone replacement field is an f-string of one element.
            "FormattedValue" => Expr::FString(ast::ExprFString {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: ast::FStringValue::single(ast::FString {
                    range,
                    node_index: AtomicNodeIndex::NONE,
                    elements: vec![self.interpolation(e)?].into(),
                    flags: ast::FStringFlags::empty(),
                }),
            }),
            "Constant" => self.constant(&self.get(e, "value")?, range)?,
            "Attribute" => Expr::Attribute(ast::ExprAttribute {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: self.expr_field(e, "value")?,
                attr: self.ident(e, "attr", range)?,
                ctx: self.ctx(e)?,
            }),
            "Subscript" => Expr::Subscript(ast::ExprSubscript {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: self.expr_field(e, "value")?,
                slice: self.expr_field(e, "slice")?,
                ctx: self.ctx(e)?,
            }),
            "Starred" => Expr::Starred(ast::ExprStarred {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: self.expr_field(e, "value")?,
                ctx: self.ctx(e)?,
            }),
            "Name" => Expr::Name(ast::ExprName {
                node_index: AtomicNodeIndex::NONE,
                range,
                id: self.string(&self.get(e, "id")?)?.into(),
                ctx: self.ctx(e)?,
            }),
            "List" => Expr::List(ast::ExprList {
                node_index: AtomicNodeIndex::NONE,
                range,
                elts: self.exprs(e, "elts")?,
                ctx: self.ctx(e)?,
            }),
            "Tuple" => Expr::Tuple(ast::ExprTuple {
                node_index: AtomicNodeIndex::NONE,
                range,
                elts: self.exprs(e, "elts")?,
                ctx: self.ctx(e)?,
                parenthesized: true,
            }),
            "Slice" => Expr::Slice(ast::ExprSlice {
                node_index: AtomicNodeIndex::NONE,
                range,
                lower: self.opt_expr(e, "lower")?,
                upper: self.opt_expr(e, "upper")?,
                step: self.opt_expr(e, "step")?,
            }),
            _ => return Err(Unsupported),
        })
    }

    pub(super) fn fstring_elements(
        &self,
        joined: &PyObjectRef,
    ) -> R<ast::InterpolatedStringElements> {
        self.list(joined, "values")?
            .iter()
            .map(|part| match class_name(part).as_str() {
                "Constant" => Ok(ast::InterpolatedStringElement::Literal(
                    ast::InterpolatedStringLiteralElement {
                        range: self.range(part),
                        node_index: AtomicNodeIndex::NONE,
                        value: self.string(&self.get(part, "value")?)?.into(),
                    },
                )),
                "FormattedValue" => self.interpolation(part),
                _ => Err(Unsupported),
            })
            .collect::<R<Vec<_>>>()
            .map(Into::into)
    }

    pub(super) fn interpolation(&self, value: &PyObjectRef) -> R<ast::InterpolatedStringElement> {
        let range = self.range(value);
        let conversion = match self.int(value, "conversion")? {
            -1 => ast::ConversionFlag::None,
            115 => ast::ConversionFlag::Str,
            114 => ast::ConversionFlag::Repr,
            97 => ast::ConversionFlag::Ascii,
            _ => return Err(Unsupported),
        };
        let format_spec = match self.opt(value, "format_spec")? {
            Some(spec) => Some(Box::new(ast::InterpolatedStringFormatSpec {
                range: self.range(&spec),
                node_index: AtomicNodeIndex::NONE,
                elements: self.fstring_elements(&spec)?,
            })),
            None => None,
        };
        Ok(ast::InterpolatedStringElement::Interpolation(
            ast::InterpolatedElement {
                range,
                node_index: AtomicNodeIndex::NONE,
                expression: self.expr_field(value, "value")?,
                debug_text: None,
                conversion,
                format_spec,
            },
        ))
    }

    /// A constant as the literal the parser would have made; a negative
    /// number as its negation, which evaluates to the same value.
    pub(super) fn constant(&self, value: &PyObjectRef, range: TextRange) -> R<Expr> {
        let vm = self.vm;
        let number = |value: ast::Number| {
            Expr::NumberLiteral(ast::ExprNumberLiteral {
                node_index: AtomicNodeIndex::NONE,
                range,
                value,
            })
        };
        let negate = |operand: Expr| {
            Expr::UnaryOp(ast::ExprUnaryOp {
                node_index: AtomicNodeIndex::NONE,
                range,
                op: ast::UnaryOp::USub,
                operand: Box::new(operand),
            })
        };
        if vm.is_none(value) {
            return Ok(Expr::NoneLiteral(ast::ExprNoneLiteral {
                node_index: AtomicNodeIndex::NONE,
                range,
            }));
        }
        if value.is(&vm.ctx.ellipsis) {
            return Ok(Expr::EllipsisLiteral(ast::ExprEllipsisLiteral {
                node_index: AtomicNodeIndex::NONE,
                range,
            }));
        }
        if value.class().is(vm.ctx.types.bool_type) {
            return Ok(Expr::BooleanLiteral(ast::ExprBooleanLiteral {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: value.is(&vm.ctx.true_value),
            }));
        }
        if let Some(int) = value.downcast_ref_if_exact::<PyInt>(vm) {
            let decimal = int.as_bigint().to_string();
            let (negative, digits) = match decimal.strip_prefix('-') {
                Some(digits) => (true, digits),
                None => (false, decimal.as_str()),
            };
            let literal = number(ast::Number::Int(digits.parse().map_err(|_| Unsupported)?));
            return Ok(if negative { negate(literal) } else { literal });
        }
        if let Some(float) = value.downcast_ref_if_exact::<PyFloat>(vm) {
            let x = float.to_f64();
            return Ok(if x.is_sign_negative() && !x.is_nan() {
                negate(number(ast::Number::Float(-x)))
            } else {
                number(ast::Number::Float(x))
            });
        }
        if let Some(s) = value.downcast_ref_if_exact::<PyStr>(vm) {
            let text = s.to_str().ok_or(Unsupported)?;
            return Ok(Expr::StringLiteral(ast::ExprStringLiteral {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: ast::StringLiteralValue::single(ast::StringLiteral {
                    range,
                    node_index: AtomicNodeIndex::NONE,
                    value: text.into(),
                    flags: ast::StringLiteralFlags::empty(),
                }),
            }));
        }
        if let Some(b) = value.downcast_ref_if_exact::<PyBytes>(vm) {
            return Ok(Expr::BytesLiteral(ast::ExprBytesLiteral {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: ast::BytesLiteralValue::single(ast::BytesLiteral {
                    range,
                    node_index: AtomicNodeIndex::NONE,
                    value: b.as_bytes().into(),
                    flags: ast::BytesLiteralFlags::empty(),
                }),
            }));
        }
        Err(Unsupported)
    }
}

pub(super) fn operator(op: &PyObjectRef) -> R<ast::Operator> {
    use ast::Operator::*;
    Ok(match class_name(op).as_str() {
        "Add" => Add,
        "Sub" => Sub,
        "Mult" => Mult,
        "MatMult" => MatMult,
        "Div" => Div,
        "Mod" => Mod,
        "Pow" => Pow,
        "LShift" => LShift,
        "RShift" => RShift,
        "BitOr" => BitOr,
        "BitXor" => BitXor,
        "BitAnd" => BitAnd,
        "FloorDiv" => FloorDiv,
        _ => return Err(Unsupported),
    })
}

fn cmp_op(op: &PyObjectRef) -> R<ast::CmpOp> {
    use ast::CmpOp::*;
    Ok(match class_name(op).as_str() {
        "Eq" => Eq,
        "NotEq" => NotEq,
        "Lt" => Lt,
        "LtE" => LtE,
        "Gt" => Gt,
        "GtE" => GtE,
        "Is" => Is,
        "IsNot" => IsNot,
        "In" => In,
        "NotIn" => NotIn,
        _ => return Err(Unsupported),
    })
}
