//! `torch._C._symbolic.SymExpr`: a Python handle on an `fxvm-symbolic`
//! expression. `torch.fx.experimental.sym_node` builds SymNode, the
//! `SymInt`/`SymFloat`/`SymBool` magic methods and `ShapeEnv` on it, so the
//! arithmetic, simplification, evaluation and printing happen in Rust.

use std::collections::HashMap;

use fxvm_symbolic::{Expr, Relation, SymbolicError, Value};
use fxvm_vm::text::Utf8;
use rustpython_vm::builtins::{PyBaseExceptionRef, PyDictRef, PyFloat, PyInt, PyType};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::types::{Constructor, Representable};
use rustpython_vm::{
    AsObject, Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass,
};

#[pyclass(module = "torch._C._symbolic", name = "SymExpr")]
#[derive(Debug, PyPayload)]
pub(crate) struct PySymExpr {
    expr: Expr,
}

fn error(e: SymbolicError, vm: &VirtualMachine) -> PyBaseExceptionRef {
    let message = e.to_string();
    match e {
        SymbolicError::ZeroDivision(_) => vm.new_zero_division_error(message),
        SymbolicError::Overflow => vm.new_overflow_error(message),
        SymbolicError::Unbound(name) => vm.new_key_error(vm.ctx.new_str(name).into()),
        SymbolicError::Type(_) => vm.new_type_error(message),
    }
}

/// A Python int, float or bool as a constant; None for anything else.
fn constant(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<Expr>> {
    if obj.class().is(vm.ctx.types.bool_type) {
        return Ok(Some(Expr::boolean(obj.clone().try_to_bool(vm)?)));
    }
    if let Some(i) = obj.downcast_ref::<PyInt>() {
        let v = i128::try_from(i.as_bigint()).map_err(|_| error(SymbolicError::Overflow, vm))?;
        return Ok(Some(Expr::int(v)));
    }
    if let Some(f) = obj.downcast_ref::<PyFloat>() {
        return Ok(Some(Expr::float(f.to_f64())));
    }
    Ok(None)
}

/// The other operand: an expression, or a constant.
fn operand(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Expr> {
    if let Some(e) = obj.downcast_ref::<PySymExpr>() {
        return Ok(e.expr.clone());
    }
    constant(obj, vm)?.ok_or_else(|| {
        vm.new_type_error(format!(
            "a symbolic expression operand must be an int, float, bool or SymExpr, not {}",
            obj.class().name()
        ))
    })
}

fn value_to_py(v: Value, vm: &VirtualMachine) -> PyObjectRef {
    match v {
        Value::Int(i) => vm.ctx.new_int(i).into(),
        Value::Float(x) => vm.ctx.new_float(x).into(),
        Value::Bool(b) => vm.ctx.new_bool(b).into(),
    }
}

impl PySymExpr {
    pub(crate) fn expr(&self) -> &Expr {
        &self.expr
    }

    pub(crate) fn wrap(expr: Expr, vm: &VirtualMachine) -> PyRef<PySymExpr> {
        PySymExpr { expr }.into_ref(&vm.ctx)
    }

    fn binary(
        &self,
        other: PyObjectRef,
        vm: &VirtualMachine,
        f: impl FnOnce(&Expr, &Expr) -> fxvm_symbolic::Result<Expr>,
    ) -> PyResult<PyRef<PySymExpr>> {
        let other = operand(&other, vm)?;
        f(&self.expr, &other)
            .map(|e| Self::wrap(e, vm))
            .map_err(|e| error(e, vm))
    }
}

#[pyclass(with(Constructor, Representable))]
impl PySymExpr {
    /// A size symbol named `name` (`s0`).
    #[pystaticmethod]
    fn symbol(name: String, vm: &VirtualMachine) -> PyRef<PySymExpr> {
        Self::wrap(Expr::symbol(&name), vm)
    }

    #[pymethod]
    fn add(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, Expr::add)
    }

    #[pymethod]
    fn sub(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, Expr::sub)
    }

    #[pymethod]
    fn mul(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, Expr::mul)
    }

    #[pymethod]
    fn floordiv(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, Expr::floor_div)
    }

    #[pymethod(name = "mod")]
    fn modulo(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, Expr::modulo)
    }

    #[pymethod]
    fn truediv(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, Expr::true_div)
    }

    #[pymethod]
    fn pow(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, Expr::pow)
    }

    #[pymethod]
    fn sym_min(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, Expr::minimum)
    }

    #[pymethod]
    fn sym_max(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, Expr::maximum)
    }

    /// `self R other` for `R` one of `eq ne lt le gt ge`.
    #[pymethod]
    fn compare(
        &self,
        relation: String,
        other: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<Self>> {
        let r = match relation.as_str() {
            "eq" => Relation::Eq,
            "ne" => Relation::Ne,
            "lt" => Relation::Lt,
            "le" => Relation::Le,
            "gt" => Relation::Gt,
            "ge" => Relation::Ge,
            other => return Err(vm.new_value_error(format!("unknown comparison {other}"))),
        };
        self.binary(other, vm, |a, b| a.compare(r, b))
    }

    #[pymethod]
    fn and_(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, |a, b| Ok(a.and(b)))
    }

    #[pymethod]
    fn or_(&self, other: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.binary(other, vm, |a, b| Ok(a.or(b)))
    }

    #[pymethod]
    fn neg(&self, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        self.expr
            .neg()
            .map(|e| Self::wrap(e, vm))
            .map_err(|e| error(e, vm))
    }

    /// This int as a float (`ToFloat`), where ints and floats meet.
    #[pymethod]
    fn to_float(&self, vm: &VirtualMachine) -> PyRef<Self> {
        Self::wrap(self.expr.to_float(), vm)
    }

    /// This float rounded to an int: `how` is `floor`, `ceil` or `trunc`.
    #[pymethod]
    fn round_to_int(&self, how: String, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        let how = match how.as_str() {
            "floor" => fxvm_symbolic::Rounding::Floor,
            "ceil" => fxvm_symbolic::Rounding::Ceil,
            "trunc" => fxvm_symbolic::Rounding::Trunc,
            other => return Err(vm.new_value_error(format!("unknown rounding {other}"))),
        };
        self.expr
            .round_to_int(how)
            .map(|e| Self::wrap(e, vm))
            .map_err(|e| error(e, vm))
    }

    #[pymethod]
    fn sym_not(&self, vm: &VirtualMachine) -> PyRef<Self> {
        Self::wrap(self.expr.not(), vm)
    }

    /// The Python value of a constant expression, else None.
    #[pymethod]
    fn constant(&self, vm: &VirtualMachine) -> PyObjectRef {
        if let Some(b) = self.expr.as_bool() {
            return vm.ctx.new_bool(b).into();
        }
        match self.expr.as_number() {
            Some(fxvm_symbolic::Number::Int(i)) => vm.ctx.new_int(i).into(),
            Some(fxvm_symbolic::Number::Float(x)) => vm.ctx.new_float(x).into(),
            None => vm.ctx.none(),
        }
    }

    /// Whether the value is an integer whatever the symbols are.
    #[pymethod]
    fn is_integer(&self) -> bool {
        self.expr.is_integer()
    }

    /// The value with `bindings` (symbol name → int/float/bool).
    #[pymethod]
    fn eval(&self, bindings: PyDictRef, vm: &VirtualMachine) -> PyResult {
        let mut values = HashMap::new();
        for (k, v) in &bindings {
            let name = k.str(vm)?.text(vm)?.to_owned();
            let value = match constant(&v, vm)? {
                Some(c) => match (c.as_bool(), c.as_number()) {
                    (Some(b), _) => Value::Bool(b),
                    (_, Some(fxvm_symbolic::Number::Int(i))) => Value::Int(i),
                    (_, Some(fxvm_symbolic::Number::Float(x))) => Value::Float(x),
                    _ => unreachable!("constants are numbers or booleans"),
                },
                None => {
                    return Err(vm.new_type_error(format!("symbol {name} bound to a non-number")));
                }
            };
            values.insert(name, value);
        }
        self.expr
            .eval(&values)
            .map(|v| value_to_py(v, vm))
            .map_err(|e| error(e, vm))
    }

    /// The expression with symbols replaced (name → SymExpr or number).
    #[pymethod]
    fn subs(&self, replacements: PyDictRef, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        let mut map = HashMap::new();
        for (k, v) in &replacements {
            map.insert(k.str(vm)?.text(vm)?.to_owned(), operand(&v, vm)?);
        }
        self.expr
            .subs(&map)
            .map(|e| Self::wrap(e, vm))
            .map_err(|e| error(e, vm))
    }

    /// `(name, value)` pinning the one symbol of `a*s + b` so it equals
    /// `value`, or None.
    #[pymethod]
    fn solve_linear(&self, value: PyObjectRef, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
        let Some(v) = constant(&value, vm)?.and_then(|c| c.as_int()) else {
            return Ok(vm.ctx.none());
        };
        Ok(match self.expr.solve_linear(v) {
            Some((name, x)) => vm
                .ctx
                .new_tuple(vec![vm.ctx.new_str(name).into(), vm.ctx.new_int(x).into()])
                .into(),
            None => vm.ctx.none(),
        })
    }

    /// Whether this condition holds for all values in the symbols' ranges
    /// (name → `(lo, hi)`, either end None for unbounded): True, False, or
    /// None when it depends on the values.
    #[pymethod]
    fn static_truth(&self, ranges: PyDictRef, vm: &VirtualMachine) -> PyResult<Option<bool>> {
        let end = |v: PyObjectRef| -> PyResult<Option<i128>> {
            if vm.is_none(&v) {
                return Ok(None);
            }
            Ok(constant(&v, vm)?.and_then(|c| c.as_int()))
        };
        let mut map = HashMap::new();
        for (k, v) in &ranges {
            let pair: Vec<PyObjectRef> = v.try_to_value(vm)?;
            let [lo, hi] = <[PyObjectRef; 2]>::try_from(pair)
                .map_err(|_| vm.new_type_error("a range is a (lo, hi) pair"))?;
            map.insert(
                k.str(vm)?.text(vm)?.to_owned(),
                fxvm_symbolic::Range {
                    lo: end(lo)?,
                    hi: end(hi)?,
                },
            );
        }
        Ok(self.expr.static_truth(&map))
    }

    /// `(symbol, lo, hi)` for a relation linear in one symbol (see
    /// `Expr::bound`); None otherwise.
    #[pymethod]
    fn bound(&self, vm: &VirtualMachine) -> PyObjectRef {
        let Some((name, range)) = self.expr.bound() else {
            return vm.ctx.none();
        };
        let end = |e: Option<i128>| e.map_or_else(|| vm.ctx.none(), |v| vm.ctx.new_int(v).into());
        vm.ctx
            .new_tuple(vec![
                vm.ctx.new_str(name).into(),
                end(range.lo),
                end(range.hi),
            ])
            .into()
    }

    /// The names of the symbols it contains, sorted.
    #[pymethod]
    fn free_symbols(&self, vm: &VirtualMachine) -> PyObjectRef {
        let names = self
            .expr
            .free_symbols()
            .into_iter()
            .map(|n| vm.ctx.new_str(n).into())
            .collect();
        vm.ctx.new_list(names).into()
    }

    #[pymethod]
    fn __str__(&self) -> String {
        self.expr.to_string()
    }

    /// Structural equality (`s0 + 1` built twice is equal), for guards and caches.
    #[pymethod]
    fn same(&self, other: PyRef<PySymExpr>) -> bool {
        self.expr == other.expr
    }

    /// A hash consistent with `same`.
    #[pymethod]
    fn key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.expr.hash(&mut h);
        h.finish()
    }
}

impl Constructor for PySymExpr {
    type Args = FuncArgs;

    /// `SymExpr(value)`: a constant (int, float or bool).
    fn py_new(_cls: &Py<PyType>, args: FuncArgs, vm: &VirtualMachine) -> PyResult<Self> {
        let value = args
            .args
            .first()
            .ok_or_else(|| vm.new_type_error("SymExpr() takes a constant"))?;
        let expr = constant(value, vm)?
            .ok_or_else(|| vm.new_type_error("SymExpr() takes an int, float or bool"))?;
        Ok(PySymExpr { expr })
    }
}

impl Representable for PySymExpr {
    fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(zelf.expr.to_string())
    }
}

#[rustpython_vm::pymodule(name = "torch._C._symbolic")]
pub mod module {
    use rustpython_vm::VirtualMachine;
    use rustpython_vm::builtins::PyTypeRef;
    use rustpython_vm::class::PyClassImpl;

    use rustpython_vm::{PyObjectRef, PyResult};

    /// See `crate::meta::infer`.
    #[pyfunction]
    fn infer(
        func: PyObjectRef,
        args: PyObjectRef,
        kwargs: PyObjectRef,
        holds: PyObjectRef,
        hint: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        crate::meta::infer(func, args, kwargs, holds, hint, vm)
    }

    /// See `crate::meta::fake_torch_function` (`types` is not needed).
    #[pyfunction]
    fn fake_torch_function(
        cls: PyObjectRef,
        func: PyObjectRef,
        _types: PyObjectRef,
        args: PyObjectRef,
        kwargs: rustpython_vm::function::OptionalArg<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult {
        let kwargs = kwargs
            .into_option()
            .filter(|k| !vm.is_none(k))
            .unwrap_or_else(|| vm.ctx.new_dict().into());
        crate::meta::fake_torch_function(cls, func, args, kwargs, vm)
    }

    /// See `crate::meta::infer_subscript`.
    #[pyfunction]
    fn infer_subscript(
        x: PyObjectRef,
        index: PyObjectRef,
        holds: PyObjectRef,
        hint: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        crate::meta::infer_subscript(x, index, holds, hint, vm)
    }

    #[pyattr(name = "SymExpr")]
    fn sym_expr(_vm: &VirtualMachine) -> PyTypeRef {
        super::PySymExpr::make_static_type()
    }
}
