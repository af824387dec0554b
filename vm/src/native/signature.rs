//! Op signatures in PyTorch's declaration syntax
//! (`add(Tensor input, Tensor other, *, Scalar alpha=1)`), parsed once, and the
//! binding of Python call arguments against them.

use rustpython_vm::builtins::{PyList, PyStr, PyTuple};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::tensor::ops::elementwise::Arg;
use crate::tensor::{DType, Scalar, Tensor};

use super::convert::{dtype_from_py, scalar};
use super::tensor::PyTensor;

/// A parameter type, as PyTorch's declarations spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    Tensor,
    TensorList,
    Int,
    IntList,
    Float,
    Scalar,
    /// A tensor or a Python number (`Tensor other` of binary ops).
    TensorOrScalar,
    Bool,
    DType,
    Str,
    Any,
}

#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub name: &'static str,
    pub ty: Ty,
    pub optional: bool,
    pub default: Option<&'static str>,
    pub kw_only: bool,
    /// `*name`: takes every remaining positional argument as a tuple.
    pub varargs: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Signature {
    pub name: &'static str,
    pub params: Vec<Param>,
    int_varargs: Option<usize>,
}

impl Signature {
    /// Parses a declaration; the table is static, so a malformed one is a bug.
    pub fn parse(decl: &'static str) -> Signature {
        let open = decl
            .find('(')
            .unwrap_or_else(|| panic!("bad signature {decl}"));
        let name = &decl[..open];
        let inner = decl[open + 1..]
            .strip_suffix(')')
            .unwrap_or_else(|| panic!("bad signature {decl}"));
        let mut params = Vec::new();
        let mut kw_only = false;
        for part in inner.split(", ").filter(|p| !p.is_empty()) {
            if part == "*" {
                kw_only = true;
                continue;
            }
            let (ty, rest) = part
                .split_once(' ')
                .unwrap_or_else(|| panic!("bad param {part} in {decl}"));
            let (pname, default) = match rest.split_once('=') {
                Some((n, d)) => (n, Some(d)),
                None => (rest, None),
            };
            let (pname, varargs) = match pname.strip_prefix('*') {
                Some(n) => (n, true),
                None => (pname, false),
            };
            let optional = ty.ends_with('?');
            let ty = match ty.trim_end_matches('?') {
                "Tensor" => Ty::Tensor,
                "Tensor[]" => Ty::TensorList,
                "int" => Ty::Int,
                "int[]" => Ty::IntList,
                "float" => Ty::Float,
                "Scalar" => Ty::Scalar,
                "TensorOrScalar" => Ty::TensorOrScalar,
                "bool" => Ty::Bool,
                "ScalarType" => Ty::DType,
                "str" => Ty::Str,
                "Any" => Ty::Any,
                other => panic!("unknown type {other} in {decl}"),
            };
            params.push(Param {
                name: pname,
                ty,
                optional,
                default,
                kw_only,
                varargs,
            });
        }
        // PyTorch lets ints arrive as varargs (`view(2, 3)`) only for an `int[]`
        // that is the one positional parameter besides `self`.
        let positional: Vec<usize> = (0..params.len())
            .filter(|&i| !params[i].kw_only && (i != 0 || params[i].ty != Ty::Tensor))
            .collect();
        let int_varargs = match positional[..] {
            [i] if params[i].ty == Ty::IntList => Some(i),
            _ => None,
        };
        Signature {
            name,
            params,
            int_varargs,
        }
    }

    /// Binds positional and keyword arguments to parameters, as Python would,
    /// letting an `int[]` parameter also take its ints as varargs (`view(2, 3)`).
    pub fn bind(&self, args: FuncArgs, vm: &VirtualMachine) -> PyResult<Bound<'_>> {
        let mut values = self.bind_values(args, vm)?;
        for v in &mut values {
            if v.as_ref().is_some_and(|v| vm.is_none(v)) {
                *v = None;
            }
        }
        Ok(Bound { sig: self, values })
    }

    /// The value given for each parameter (explicit `None`s kept), in order.
    pub fn bind_values(
        &self,
        args: FuncArgs,
        vm: &VirtualMachine,
    ) -> PyResult<Vec<Option<PyObjectRef>>> {
        let FuncArgs {
            args: positional,
            kwargs,
        } = args;
        let mut values: Vec<Option<PyObjectRef>> = vec![None; self.params.len()];
        let mut given = vec![false; self.params.len()];
        let positional_params: Vec<usize> = (0..self.params.len())
            .filter(|&i| !self.params[i].kw_only)
            .collect();
        let mut pos = positional.into_iter().peekable();
        let mut slot = 0;
        while let Some(arg) = pos.next() {
            let Some(&i) = positional_params.get(slot) else {
                return Err(vm.new_type_error(format!(
                    "{}() takes {} positional arguments but more were given",
                    self.name,
                    positional_params.len()
                )));
            };
            let is_int =
                |o: &PyObjectRef| scalar(o, vm).is_some_and(|s| matches!(s, Scalar::Int(_)));
            if self.params[i].varargs {
                let mut rest = vec![arg];
                rest.extend(pos.by_ref());
                values[i] = Some(match rest.len() {
                    1 if seq(&rest[0]).is_some() => rest.pop().expect("one item"),
                    _ => vm.ctx.new_tuple(rest).into(),
                });
            } else if self.int_varargs == Some(i) && is_int(&arg) && pos.peek().is_some_and(is_int)
            {
                let mut ints = vec![arg];
                while pos.peek().is_some_and(is_int) {
                    ints.push(pos.next().expect("peeked"));
                }
                values[i] = Some(vm.ctx.new_tuple(ints).into());
            } else {
                values[i] = Some(arg);
            }
            given[i] = true;
            slot += 1;
        }
        for (key, value) in kwargs {
            let Some(i) = self.params.iter().position(|p| p.name == key) else {
                return Err(vm.new_type_error(format!(
                    "{}() got an unexpected keyword argument '{key}'",
                    self.name
                )));
            };
            if given[i] {
                return Err(vm.new_type_error(format!(
                    "{}() got multiple values for argument '{key}'",
                    self.name
                )));
            }
            values[i] = Some(value);
            given[i] = true;
        }
        for (i, p) in self.params.iter().enumerate() {
            if !given[i] && p.default.is_none() && !p.optional {
                return Err(vm.new_type_error(format!(
                    "{}() missing 1 required positional argument: \"{}\"",
                    self.name, p.name
                )));
            }
        }
        Ok(values)
    }

    /// A parameter's declared default as a Python value (`None` if none).
    pub fn default_value(&self, name: &str, vm: &VirtualMachine) -> PyObjectRef {
        let Some(d) = self
            .params
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.default)
        else {
            return vm.ctx.none();
        };
        match d {
            "None" => vm.ctx.none(),
            "True" => vm.ctx.new_bool(true).into(),
            "False" => vm.ctx.new_bool(false).into(),
            _ if d.starts_with('\'') => vm.ctx.new_str(d.trim_matches('\'')).into(),
            _ => match (d.parse::<i64>(), d.parse::<f64>()) {
                (Ok(i), _) => vm.ctx.new_int(i).into(),
                (_, Ok(f)) => vm.ctx.new_float(f).into(),
                _ => vm.ctx.none(),
            },
        }
    }

    pub fn position(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name == name)
    }
}

/// Arguments bound to a signature, read back with typed getters.
pub(crate) struct Bound<'s> {
    sig: &'s Signature,
    values: Vec<Option<PyObjectRef>>,
}

impl Bound<'_> {
    /// The op's name, for messages that start with it.
    pub fn op(&self) -> &'static str {
        self.sig.name
    }

    /// Whether the signature declares `name`.
    pub fn has(&self, name: &str) -> bool {
        self.sig.params.iter().any(|p| p.name == name)
    }

    fn index(&self, name: &str) -> usize {
        self.sig
            .params
            .iter()
            .position(|p| p.name == name)
            .unwrap_or_else(|| panic!("{} has no parameter {name}", self.sig.name))
    }

    fn type_error(
        &self,
        i: usize,
        expected: &str,
        got: &PyObjectRef,
        vm: &VirtualMachine,
    ) -> rustpython_vm::builtins::PyBaseExceptionRef {
        vm.new_type_error(format!(
            "{}(): argument '{}' (position {}) must be {expected}, not {}",
            self.sig.name,
            self.sig.params[i].name,
            i + 1,
            got.class().name()
        ))
    }

    /// The raw object (None when absent or None).
    pub fn obj(&self, name: &str) -> Option<PyObjectRef> {
        self.values[self.index(name)].clone()
    }

    fn default_str(&self, i: usize) -> Option<&'static str> {
        self.sig.params[i].default.filter(|d| *d != "None")
    }

    pub fn tensor(&self, name: &str, vm: &VirtualMachine) -> PyResult<Tensor> {
        self.opt_tensor(name, vm)?.ok_or_else(|| {
            vm.new_type_error(format!(
                "{}(): argument '{name}' must be Tensor, not NoneType",
                self.sig.name
            ))
        })
    }

    pub fn opt_tensor(&self, name: &str, vm: &VirtualMachine) -> PyResult<Option<Tensor>> {
        let i = self.index(name);
        match &self.values[i] {
            None => Ok(None),
            Some(o) => match o.downcast_ref::<PyTensor>() {
                Some(t) => Ok(Some(t.tensor())),
                None => Err(self.type_error(i, "Tensor", o, vm)),
            },
        }
    }

    pub fn tensors(&self, name: &str, vm: &VirtualMachine) -> PyResult<Vec<Tensor>> {
        let i = self.index(name);
        let o = self.values[i].clone().ok_or_else(|| {
            vm.new_type_error(format!(
                "{}(): argument '{name}' must be tuple of Tensors",
                self.sig.name
            ))
        })?;
        let items = seq(&o).ok_or_else(|| self.type_error(i, "tuple of Tensors", &o, vm))?;
        items
            .iter()
            .map(|x| {
                x.downcast_ref::<PyTensor>()
                    .map(|t| t.tensor())
                    .ok_or_else(|| {
                        vm.new_type_error(format!(
                            "expected Tensor as element 0 in argument {}, but got {}",
                            i,
                            x.class().name()
                        ))
                    })
            })
            .collect()
    }

    /// A tensor or a number (numbers stay scalars for type promotion).
    pub fn arg(&self, name: &str, vm: &VirtualMachine) -> PyResult<Arg> {
        let i = self.index(name);
        let o = self.values[i].clone().ok_or_else(|| {
            vm.new_type_error(format!(
                "{}(): argument '{name}' must be Tensor, not NoneType",
                self.sig.name
            ))
        })?;
        to_arg(&o, vm).ok_or_else(|| self.type_error(i, "Tensor", &o, vm))
    }

    pub fn opt_int(&self, name: &str, vm: &VirtualMachine) -> PyResult<Option<i64>> {
        let i = self.index(name);
        match (&self.values[i], self.default_str(i)) {
            (Some(o), _) => match scalar(o, vm) {
                Some(Scalar::Int(v)) => Ok(Some(v)),
                Some(Scalar::Bool(b)) => Ok(Some(b as i64)),
                _ => Err(self.type_error(i, "int", o, vm)),
            },
            (None, Some(d)) => Ok(Some(
                d.parse().unwrap_or_else(|_| panic!("bad int default {d}")),
            )),
            (None, None) => Ok(None),
        }
    }

    pub fn int(&self, name: &str, vm: &VirtualMachine) -> PyResult<i64> {
        self.opt_int(name, vm)?.ok_or_else(|| {
            vm.new_type_error(format!(
                "{}(): argument '{name}' must be int, not NoneType",
                self.sig.name
            ))
        })
    }

    /// An `int[]` (a single int counts as a one-element list, as in PyTorch).
    pub fn opt_ints(&self, name: &str, vm: &VirtualMachine) -> PyResult<Option<Vec<i64>>> {
        let i = self.index(name);
        let Some(o) = &self.values[i] else {
            return Ok(match self.default_str(i) {
                Some("[]") => Some(vec![]),
                Some(d) => Some(vec![
                    d.parse()
                        .unwrap_or_else(|_| panic!("bad int[] default {d}")),
                ]),
                None => None,
            });
        };
        if let Some(Scalar::Int(v)) = scalar(o, vm) {
            return Ok(Some(vec![v]));
        }
        let items = seq(o).ok_or_else(|| self.type_error(i, "tuple of ints", o, vm))?;
        items
            .iter()
            .map(|x| match scalar(x, vm) {
                Some(Scalar::Int(v)) => Ok(v),
                _ => match x.downcast_ref::<PyTensor>().map(|t| t.tensor()) {
                    Some(t) if t.numel() == 1 && !t.dtype().is_float() => {
                        Ok(t.item().map(|s| s.to_i64()).unwrap_or(0))
                    }
                    _ => Err(self.type_error(i, "tuple of ints", o, vm)),
                },
            })
            .collect::<PyResult<Vec<i64>>>()
            .map(Some)
    }

    pub fn ints(&self, name: &str, vm: &VirtualMachine) -> PyResult<Vec<i64>> {
        self.opt_ints(name, vm)?.ok_or_else(|| {
            vm.new_type_error(format!(
                "{}(): argument '{name}' must be tuple of ints, not NoneType",
                self.sig.name
            ))
        })
    }

    pub fn opt_scalar(&self, name: &str, vm: &VirtualMachine) -> PyResult<Option<Scalar>> {
        let i = self.index(name);
        match (&self.values[i], self.default_str(i)) {
            (Some(o), _) => match scalar(o, vm) {
                Some(s) => Ok(Some(s)),
                None => match o.downcast_ref::<PyTensor>().map(|t| t.tensor()) {
                    Some(t) if t.numel() == 1 => Ok(Some(
                        t.item().map_err(|e| super::convert::to_py_err(e, vm))?,
                    )),
                    _ => Err(self.type_error(i, "Number", o, vm)),
                },
            },
            (None, Some(d)) => Ok(Some(parse_scalar(d))),
            (None, None) => Ok(None),
        }
    }

    pub fn scalar(&self, name: &str, vm: &VirtualMachine) -> PyResult<Scalar> {
        self.opt_scalar(name, vm)?.ok_or_else(|| {
            vm.new_type_error(format!(
                "{}(): argument '{name}' must be Number, not NoneType",
                self.sig.name
            ))
        })
    }

    pub fn opt_float(&self, name: &str, vm: &VirtualMachine) -> PyResult<Option<f64>> {
        Ok(self.opt_scalar(name, vm)?.map(Scalar::to_f64))
    }

    pub fn float(&self, name: &str, vm: &VirtualMachine) -> PyResult<f64> {
        Ok(self.scalar(name, vm)?.to_f64())
    }

    pub fn bool(&self, name: &str, vm: &VirtualMachine) -> PyResult<bool> {
        let i = self.index(name);
        match &self.values[i] {
            Some(o) => o.clone().try_to_bool(vm),
            None => Ok(self.default_str(i) == Some("True")),
        }
    }

    pub fn dtype(&self, name: &str, vm: &VirtualMachine) -> PyResult<Option<DType>> {
        self.values[self.index(name)]
            .as_ref()
            .map(|o| dtype_from_py(o, vm))
            .transpose()
    }

    pub fn str(&self, name: &str, vm: &VirtualMachine) -> PyResult<String> {
        let i = self.index(name);
        match &self.values[i] {
            Some(o) => o
                .downcast_ref::<PyStr>()
                .map(|s| s.expect_str().to_owned())
                .ok_or_else(|| self.type_error(i, "str", o, vm)),
            None => Ok(self
                .default_str(i)
                .unwrap_or("")
                .trim_matches('\'')
                .to_owned()),
        }
    }
}

fn parse_scalar(d: &str) -> Scalar {
    match d {
        "True" => Scalar::Bool(true),
        "False" => Scalar::Bool(false),
        "inf" => Scalar::Float(f64::INFINITY),
        _ => d.parse().map(Scalar::Int).unwrap_or_else(|_| {
            Scalar::Float(
                d.parse()
                    .unwrap_or_else(|_| panic!("bad scalar default {d}")),
            )
        }),
    }
}

/// The items of a list or tuple.
pub(crate) fn seq(o: &PyObjectRef) -> Option<Vec<PyObjectRef>> {
    if let Some(l) = o.downcast_ref::<PyList>() {
        return Some(l.borrow_vec().to_vec());
    }
    o.downcast_ref::<PyTuple>().map(|t| t.as_slice().to_vec())
}

/// A tensor or Python number as an operand of an elementwise op.
pub(crate) fn to_arg(o: &PyObjectRef, vm: &VirtualMachine) -> Option<Arg> {
    if let Some(t) = o.downcast_ref::<PyTensor>() {
        return Some(Arg::Tensor(t.tensor()));
    }
    scalar(o, vm).map(Arg::Scalar)
}
