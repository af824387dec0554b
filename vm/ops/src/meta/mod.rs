//! Shape rules: an op's output sizes and dtype computed from its inputs'
//! sizes — symbolic expressions, constants included — without running the
//! kernel. Tracing with example shapes propagates these through a graph
//! (PyTorch's fake tensors do the same with meta kernels).
//!
//! A rule that must compare sizes (broadcasting, a view's element count)
//! asks an [`Oracle`], which answers from the example values and may record
//! the answer as a guard. An op without a rule leaves the caller to run the
//! kernel on real examples instead.

mod layers;
mod pointwise;
mod rules;
mod subscript;
mod views;

use fxvm_symbolic::{Expr, Relation, SymbolicError};
use fxvm_tensor::{DType, Result, TensorError};

use crate::op::Op;
use crate::value::Value;

pub(crate) use layers::*;
pub(crate) use pointwise::{like_first, pointwise};
pub(crate) use rules::*;
pub use subscript::Item;
pub(crate) use views::*;

/// A tensor as a rule sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorMeta {
    pub sizes: Vec<Expr>,
    pub dtype: DType,
}

impl TensorMeta {
    pub fn new(sizes: Vec<Expr>, dtype: DType) -> TensorMeta {
        TensorMeta { sizes, dtype }
    }

    /// A tensor of constant sizes.
    pub fn of(sizes: &[usize], dtype: DType) -> TensorMeta {
        TensorMeta::new(sizes.iter().map(|&s| Expr::int(s as i128)).collect(), dtype)
    }

    pub fn ndim(&self) -> usize {
        self.sizes.len()
    }
}

/// One bound parameter: tensors and sizes symbolically, anything else as
/// the typed value a call would bind.
#[derive(Clone, Debug)]
pub enum Meta {
    Tensor(TensorMeta),
    Tensors(Vec<TensorMeta>),
    Int(Expr),
    Ints(Vec<Expr>),
    Value(Value),
}

/// What an op returns, described.
#[derive(Clone, Debug, PartialEq)]
pub enum MetaOut {
    Tensor(TensorMeta),
    Tuple(Vec<TensorMeta>),
    /// The tensor passed for parameter `i` itself (in-place ops).
    Input(usize),
}

/// Answers questions about sizes from the example values.
pub trait Oracle {
    /// Whether `cond` holds; unless the known facts decide it, the answer
    /// is a guard the traced program now relies on.
    fn holds(&mut self, cond: &Expr) -> bool;
    /// The example value of an integer expression.
    fn hint(&mut self, e: &Expr) -> Option<i64>;
}

/// A rule: the op's outputs from its bound parameters.
pub(crate) type Rule = fn(&mut Ctx<'_>) -> Result<MetaOut>;

/// What a rule works with: the op, its bound parameters, the oracle.
pub struct Ctx<'a> {
    pub(crate) op: &'a Op,
    pub(crate) args: Vec<Meta>,
    oracle: &'a mut dyn Oracle,
}

pub(crate) fn sym_error(op: &'static str, e: SymbolicError) -> TensorError {
    TensorError::Runtime {
        op,
        message: e.to_string(),
    }
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(op: &'a Op, args: Vec<Meta>, oracle: &'a mut dyn Oracle) -> Ctx<'a> {
        Ctx { op, args, oracle }
    }

    pub(crate) fn name(&self) -> &'static str {
        self.op.name()
    }

    /// The parameter named `param`; a parameter the op does not declare
    /// reads as `None`.
    fn arg(&self, param: &str) -> &Meta {
        const ABSENT: Meta = Meta::Value(Value::None);
        match self.op.schema.position(param) {
            Some(i) if i < self.args.len() => &self.args[i],
            _ => &ABSENT,
        }
    }

    fn bad(&self, what: &str) -> TensorError {
        TensorError::Argument {
            op: self.name(),
            message: format!("cannot describe {what} symbolically"),
        }
    }

    pub(crate) fn tensor(&self, param: &str) -> Result<TensorMeta> {
        match self.arg(param) {
            Meta::Tensor(t) => Ok(t.clone()),
            _ => Err(self.bad(param)),
        }
    }

    pub(crate) fn tensors(&self, param: &str) -> Result<Vec<TensorMeta>> {
        match self.arg(param) {
            Meta::Tensors(t) => Ok(t.clone()),
            _ => Err(self.bad(param)),
        }
    }

    pub(crate) fn int(&self, param: &str) -> Result<Expr> {
        match self.arg(param) {
            Meta::Int(e) => Ok(e.clone()),
            Meta::Value(Value::Int(i)) => Ok(Expr::int(*i as i128)),
            _ => Err(self.bad(param)),
        }
    }

    /// An int parameter that must be a constant (a dim, a count of chunks).
    pub(crate) fn const_int(&self, param: &str) -> Result<i64> {
        self.int(param)?
            .as_int()
            .and_then(|i| i64::try_from(i).ok())
            .ok_or_else(|| self.bad(param))
    }

    pub(crate) fn ints(&self, param: &str) -> Result<Vec<Expr>> {
        match self.arg(param) {
            Meta::Ints(v) => Ok(v.clone()),
            Meta::Int(e) => Ok(vec![e.clone()]),
            Meta::Value(Value::Ints(v)) => Ok(v.iter().map(|&i| Expr::int(i as i128)).collect()),
            Meta::Value(Value::Int(i)) => Ok(vec![Expr::int(*i as i128)]),
            _ => Err(self.bad(param)),
        }
    }

    /// An `int[]?` parameter: `None` when not given.
    pub(crate) fn opt_ints(&self, param: &str) -> Result<Option<Vec<Expr>>> {
        match self.arg(param) {
            Meta::Value(Value::None) => Ok(None),
            _ => self.ints(param).map(Some),
        }
    }

    pub(crate) fn const_ints(&self, param: &str) -> Result<Vec<i64>> {
        self.ints(param)?
            .iter()
            .map(|e| e.as_int().and_then(|i| i64::try_from(i).ok()))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| self.bad(param))
    }

    /// A parameter bound to a plain value (`None` also for sizes, which
    /// are read with `int`/`ints`).
    pub(crate) fn value(&self, param: &str) -> &Value {
        match self.arg(param) {
            Meta::Value(v) => v,
            _ => &Value::None,
        }
    }

    pub(crate) fn bool(&self, param: &str) -> bool {
        matches!(self.value(param), Value::Bool(true))
    }

    /// A `ScalarType?` parameter.
    pub(crate) fn dtype(&self, param: &str) -> Option<DType> {
        match self.value(param) {
            Value::DType(d) => Some(*d),
            _ => None,
        }
    }

    /// Whether `a == b`, by constant folding or by asking the oracle.
    pub(crate) fn equal(&mut self, a: &Expr, b: &Expr) -> Result<bool> {
        let cond = a
            .compare(Relation::Eq, b)
            .map_err(|e| sym_error(self.name(), e))?;
        Ok(match cond.as_bool() {
            Some(known) => known,
            None => self.oracle.holds(&cond),
        })
    }

    /// Whether `a <= b`.
    pub(crate) fn at_most(&mut self, a: &Expr, b: &Expr) -> Result<bool> {
        let cond = a
            .compare(Relation::Le, b)
            .map_err(|e| sym_error(self.name(), e))?;
        Ok(match cond.as_bool() {
            Some(known) => known,
            None => self.oracle.holds(&cond),
        })
    }

    pub(crate) fn hint(&mut self, e: &Expr) -> Option<i64> {
        match e.as_int() {
            Some(i) => i64::try_from(i).ok(),
            None => self.oracle.hint(e),
        }
    }

    /// The example sizes of `sizes` (for error messages).
    pub(crate) fn hints(&mut self, sizes: &[Expr]) -> Vec<usize> {
        sizes
            .iter()
            .map(|e| self.hint(e).unwrap_or(0).max(0) as usize)
            .collect()
    }

    pub(crate) fn sym<T>(&self, r: fxvm_symbolic::Result<T>) -> Result<T> {
        r.map_err(|e| sym_error(self.name(), e))
    }

    /// `dim` wrapped into `[0, ndim)` (PyTorch's message otherwise).
    pub(crate) fn wrap_dim(&self, dim: i64, ndim: usize) -> Result<usize> {
        fxvm_tensor::tensor::wrap_dim(dim, ndim.max(1))
    }
}

/// The product of `sizes` (1 for none).
pub(crate) fn numel(sizes: &[Expr]) -> fxvm_symbolic::Result<Expr> {
    sizes.iter().try_fold(Expr::int(1), |acc, s| acc.mul(s))
}

/// The sizes of `x[items]` (asked of `oracle` as `select` would).
pub fn subscript_of(x: &TensorMeta, items: &[Item], oracle: &mut dyn Oracle) -> Result<TensorMeta> {
    let select = crate::registry()
        .function("select")
        .expect("select is a row");
    subscript::subscript(&mut Ctx::new(select, Vec::new(), oracle), x, items)
}

impl Op {
    /// The op's outputs for symbolic inputs, by its shape rule; `None` for
    /// an op that has none (the caller runs the kernel on examples).
    pub fn infer(&self, args: Vec<Meta>, oracle: &mut dyn Oracle) -> Option<Result<MetaOut>> {
        let rule = self.meta?;
        Some(rule(&mut Ctx::new(self, args, oracle)))
    }

    pub fn has_meta(&self) -> bool {
        self.meta.is_some()
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use std::collections::HashMap;

    use fxvm_symbolic::{Expr, Value as SymValue};

    use super::Oracle;

    /// Answers from fixed example values, remembering what it was asked.
    #[derive(Default)]
    pub(crate) struct Examples {
        pub values: HashMap<String, SymValue>,
        pub guards: Vec<String>,
    }

    impl Examples {
        pub(crate) fn with(values: &[(&str, i128)]) -> Examples {
            Examples {
                values: values
                    .iter()
                    .map(|&(n, v)| (n.to_owned(), SymValue::Int(v)))
                    .collect(),
                guards: Vec::new(),
            }
        }
    }

    impl Oracle for Examples {
        fn holds(&mut self, cond: &Expr) -> bool {
            let v = matches!(cond.eval(&self.values), Ok(SymValue::Bool(true)));
            self.guards.push(if v {
                cond.to_string()
            } else {
                format!("Not({cond})")
            });
            v
        }

        fn hint(&mut self, e: &Expr) -> Option<i64> {
            match e.eval(&self.values) {
                Ok(SymValue::Int(i)) => i64::try_from(i).ok(),
                _ => None,
            }
        }
    }

    pub(crate) fn s(name: &str) -> Expr {
        Expr::symbol(name)
    }

    pub(crate) fn n(v: i128) -> Expr {
        Expr::int(v)
    }
}

#[cfg(test)]
mod tests {
    use fxvm_tensor::DType;

    use super::testing::{Examples, n, s};
    use super::*;
    use crate::schema::Ty;

    /// A plausible value for a parameter of type `ty`.
    fn sample(ty: &Ty) -> Meta {
        match ty {
            Ty::Tensor => Meta::Tensor(TensorMeta::new(vec![s("s0"), n(3)], DType::F32)),
            Ty::TensorList => {
                Meta::Tensors(vec![TensorMeta::new(vec![s("s0"), n(3)], DType::F32); 2])
            }
            Ty::Int => Meta::Value(Value::Int(1)),
            Ty::IntList => Meta::Ints(vec![n(1)]),
            Ty::Union(alts) => sample(&alts[0]),
            _ => Meta::Value(Value::None),
        }
    }

    /// Every rule, given arguments of its declared kinds, answers with a
    /// result or an error — never a panic (a rule reading a parameter its
    /// op does not declare would panic here).
    #[test]
    fn every_rule_answers_arguments_of_its_declared_kinds() {
        let mut ruled = 0;
        for op in crate::registry().ops().iter().filter(|op| op.has_meta()) {
            let args = op
                .schema
                .params
                .iter()
                .map(|p| match p.default_value() {
                    Some(v) if !matches!(p.ty, Ty::Tensor) => Meta::Value(v),
                    _ => sample(&p.ty),
                })
                .collect();
            let mut ex = Examples::with(&[("s0", 4)]);
            let _ = op.infer(args, &mut ex).expect("a rule");
            ruled += 1;
        }
        assert!(ruled > 200, "only {ruled} ops have shape rules");
    }
}
