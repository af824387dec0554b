//! Python calls bound to an op's schema: arguments matched to parameters as
//! Python would, each converted once into the typed value its declared
//! type names, and kernel results converted back to Python objects.

use fxvm_ops::{Data, Schema, Ty, Value};
use rustpython_vm::builtins::{PyBaseExceptionRef, PyInt, PyList, PyStr, PyTuple};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::types::PyComparisonOp;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::tensor::ops::elementwise::Arg;
use crate::tensor::{Scalar, Tensor};

use super::convert::{IntoPy, flatten_data, scalar, scalar_to_py};
use super::dtype::{PyDType, dtype_from_py, dtype_to_py};
use super::generator::PyGenerator;
use super::tensor::{PyTensor, wrap};
use crate::text::Utf8;

/// The object given for each parameter (explicit `None`s kept), in order,
/// letting an `int[]` parameter also take its ints as varargs (`view(2, 3)`).
pub(crate) fn bind_objects(
    schema: &Schema,
    args: FuncArgs,
    vm: &VirtualMachine,
) -> PyResult<Vec<Option<PyObjectRef>>> {
    let FuncArgs {
        args: positional,
        kwargs,
    } = args;
    let params = &schema.params;
    let mut values: Vec<Option<PyObjectRef>> = vec![None; params.len()];
    let positional_params: Vec<usize> = (0..params.len()).filter(|&i| !params[i].kw_only).collect();
    // A SymInt counts as an int (`x.view(B, T, C)` with traced sizes).
    let is_int = |o: &PyObjectRef| {
        matches!(scalar(o, vm), Some(Scalar::Int(_))) || &*o.class().name() == "SymInt"
    };
    let mut pos = positional.into_iter().peekable();
    let mut slot = 0;
    while let Some(arg) = pos.next() {
        let Some(&i) = positional_params.get(slot) else {
            return Err(vm.new_type_error(format!(
                "{}() takes {} positional arguments but more were given",
                schema.name,
                positional_params.len()
            )));
        };
        if params[i].varargs {
            let mut rest = vec![arg];
            rest.extend(pos.by_ref());
            values[i] = Some(match rest.len() {
                1 if seq(&rest[0]).is_some() => rest.pop().expect("one item"),
                _ => vm.ctx.new_tuple(rest).into(),
            });
        } else if schema.int_varargs == Some(i) && is_int(&arg) && pos.peek().is_some_and(is_int) {
            let mut ints = vec![arg];
            while pos.peek().is_some_and(is_int) {
                ints.push(pos.next().expect("peeked"));
            }
            values[i] = Some(vm.ctx.new_tuple(ints).into());
        } else {
            values[i] = Some(arg);
        }
        slot += 1;
    }
    // PyTorch's parser reports a missing argument before a keyword it does
    // not know (`torch.dropout(x, 0.5, training=False)` lacks "train").
    let mut unknown = None;
    for (key, value) in kwargs {
        let Some(i) = schema.position(&key) else {
            unknown.get_or_insert(key);
            continue;
        };
        if values[i].is_some() {
            return Err(vm.new_type_error(format!(
                "{}() got multiple values for argument '{key}'",
                schema.name
            )));
        }
        values[i] = Some(value);
    }
    for (p, v) in params.iter().zip(&values) {
        if v.is_none() && p.default.is_none() && !p.optional {
            // Plural whatever the count, as PyTorch prints it.
            return Err(vm.new_type_error(format!(
                "{}() missing 1 required positional arguments: \"{}\"",
                schema.name, p.name
            )));
        }
    }
    if let Some(key) = unknown {
        return Err(vm.new_type_error(format!(
            "{}() got an unexpected keyword argument '{key}'",
            schema.name
        )));
    }
    if let Some(message) = schema.combination_error(|i| values[i].is_some()) {
        return Err(vm.new_type_error(format!("{}() {message}", schema.name)));
    }
    Ok(values)
}

/// The typed value of every parameter: given objects converted, omitted
/// ones defaulted. An explicit `None` for a parameter that is not optional
/// is refused, as PyTorch's argument parser refuses it (its Python-written
/// functionals pass their arguments on to it).
pub(crate) fn bind_values(
    schema: &Schema,
    objects: &[Option<PyObjectRef>],
    vm: &VirtualMachine,
) -> PyResult<Vec<Value>> {
    schema
        .params
        .iter()
        .zip(objects)
        .enumerate()
        .map(|(i, (p, obj))| match obj {
            Some(o) if !vm.is_none(o) => convert(schema, i, o, vm),
            // PyTorch's parser takes the factories' `requires_grad=None`.
            Some(_) if !p.optional && p.name != "requires_grad" => Err(missing(schema, i, vm)),
            _ => match p.default_value() {
                Some(v) => Ok(v),
                None => Err(missing(schema, i, vm)),
            },
        })
        .collect()
}

/// The error for a required parameter given `None`.
fn missing(schema: &Schema, i: usize, vm: &VirtualMachine) -> PyBaseExceptionRef {
    let p = &schema.params[i];
    if p.ty == Ty::Data {
        return vm.new_runtime_error("Could not infer dtype of NoneType");
    }
    vm.new_type_error(format!(
        "{}(): argument '{}' must be {}, not NoneType",
        schema.name,
        p.name,
        first(&p.ty).describe()
    ))
}

/// The type messages name: a union reports its first alternative, as
/// PyTorch's first overload does.
fn first(ty: &Ty) -> &Ty {
    match ty {
        Ty::Union(alts) => &alts[0],
        t => t,
    }
}

fn convert(schema: &Schema, i: usize, o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Value> {
    let p = &schema.params[i];
    // `torch.nn.functional`'s Python branches on `if inplace:`.
    if p.name == "inplace" && p.ty == Ty::Bool {
        return Ok(Value::Bool(o.clone().try_to_bool(vm)?));
    }
    let converted = convert_to(&p.ty, o, vm);
    // An item of an `int[]` past int64 (`int_list`'s overflow error) is
    // PyTorch's TypeError naming the argument and the item's position; a
    // lone int past it keeps its ValueError.
    if converted.is_err()
        && p.ty == Ty::IntList
        && let Some(k) = seq(o).and_then(|items| {
            items.iter().position(|x| {
                x.downcast_ref::<PyInt>()
                    .is_some_and(|n| n.try_to_primitive::<i64>(vm).is_err())
            })
        })
    {
        return Err(vm.new_type_error(format!(
            "{}(): argument '{}' failed to unpack the object at pos {} with error \"Overflow when unpacking long long\"",
            schema.name,
            p.name,
            k + 1
        )));
    }
    converted?.ok_or_else(|| {
        vm.new_type_error(format!(
            "{}(): argument '{}' (position {}) must be {}, not {}",
            schema.name,
            p.name,
            i + 1,
            first(&p.ty).describe(),
            o.class().name()
        ))
    })
}

/// `o` as a value of `ty`; `Ok(None)` when it is not one.
pub(crate) fn convert_to(ty: &Ty, o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<Value>> {
    let tensor = || o.downcast_ref::<PyTensor>().map(|t| t.tensor());
    // A one-element tensor stands for a number, as in PyTorch.
    let number = || -> PyResult<Option<Scalar>> {
        if let Some(s) = scalar(o, vm) {
            return Ok(Some(s));
        }
        match tensor() {
            Some(t) if t.numel() == 1 => t.item().py(vm).map(Some),
            _ => Ok(None),
        }
    };
    Ok(match ty {
        Ty::Tensor => tensor().map(Value::Tensor),
        Ty::TensorList => match seq(o) {
            Some(items) => Some(Value::Tensors(
                items
                    .iter()
                    .enumerate()
                    .map(|(j, x)| {
                        x.downcast_ref::<PyTensor>()
                            .map(|t| t.tensor())
                            .ok_or_else(|| {
                                vm.new_type_error(format!(
                                    "expected Tensor as element {j} in argument 0, but got {}",
                                    x.class().name()
                                ))
                            })
                    })
                    .collect::<PyResult<Vec<Tensor>>>()?,
            )),
            None => None,
        },
        Ty::Int => match scalar(o, vm) {
            Some(Scalar::Int(v)) => Some(Value::Int(v)),
            Some(Scalar::Bool(b)) => Some(Value::Int(b as i64)),
            _ => {
                unpack_overflow(o, vm)?;
                None
            }
        },
        Ty::IntList => int_list(o, vm)?.map(Value::Ints),
        Ty::OptIntList => {
            let items = seq(o).unwrap_or_else(|| vec![o.clone()]);
            items
                .iter()
                .map(|x| match scalar(x, vm) {
                    _ if vm.is_none(x) => Some(None),
                    Some(Scalar::Int(v)) => Some(Some(v)),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .map(Value::OptInts)
        }
        Ty::Float => match number()? {
            Some(s) => Some(Value::Float(s.to_f64())),
            None => wide_int(o, vm)?.map(Value::Float),
        },
        Ty::FloatList => {
            let items = seq(o).unwrap_or_else(|| vec![o.clone()]);
            items
                .iter()
                .map(|x| scalar(x, vm).map(Scalar::to_f64))
                .collect::<Option<Vec<f64>>>()
                .map(Value::Floats)
        }
        Ty::Scalar => match number()? {
            Some(s) => Some(Value::Scalar(s)),
            // PyTorch takes [2**63, 2**64) as an unsigned 64-bit scalar;
            // fxvm's scalars hold it as a float, the same answer with float
            // tensors (integer tensors promote where PyTorch keeps or
            // refuses their dtype).
            None => wide_int(o, vm)?.map(|u| Value::Scalar(Scalar::Float(u))),
        },
        // Only a Python bool: PyTorch refuses `keepdim=1`, `training=None`.
        Ty::Bool => o
            .class()
            .is(vm.ctx.types.bool_type)
            .then(|| Value::Bool(o.is(&vm.ctx.true_value))),
        Ty::DType => match o.downcast_ref::<PyDType>() {
            Some(d) => Some(Value::DType(d.dtype(vm)?)),
            None => dtype_from_py(o, vm).ok().map(Value::DType),
        },
        Ty::Str => match o.downcast_ref::<PyStr>() {
            Some(s) => Some(Value::Str(s.text(vm)?.to_owned())),
            None => None,
        },
        Ty::Device => {
            let name = if o.downcast_ref::<PyStr>().is_some() || &*o.class().name() == "device" {
                o.str(vm)?
            } else if o.downcast_ref::<PyInt>().is_some() {
                // A bare index, read as `torch.device(index)` reads it.
                crate::native::classes::attr("torch", "device", vm)?
                    .call((o.clone(),), vm)?
                    .str(vm)?
            } else {
                return Ok(None);
            };
            let name = name.text(vm)?.to_owned();
            check_device(&name, vm)?;
            Some(Value::Device(name))
        }
        Ty::Data => Some(Value::Data(match tensor() {
            Some(t) => Data::Tensor(t),
            None if let Some(t) = super::numpy::array_tensor(o, vm) => Data::Tensor(t?),
            None => flatten_data(o, vm)?,
        })),
        Ty::Generator => o
            .downcast_ref::<PyGenerator>()
            .map(|g| Value::Generator(g.generator.clone())),
        Ty::MemoryFormat => {
            if &*o.class().name() != "memory_format" {
                return Ok(None);
            }
            let name = o.repr(vm)?.text(vm)?.to_owned();
            name.strip_prefix("torch.")
                .and_then(crate::tensor::layout::MemoryFormat::from_name)
                .map(Value::MemoryFormat)
        }
        Ty::Union(alts) => {
            for t in alts {
                if let Some(v) = convert_to(t, o, vm)? {
                    return Ok(Some(v));
                }
            }
            None
        }
    })
}

/// PyTorch's error for a Python int past int64 where it reads one.
pub(crate) fn unpack_overflow(o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    match o.downcast_ref::<PyInt>() {
        Some(i) if i.try_to_primitive::<i64>(vm).is_err() => {
            Err(vm.new_value_error("Overflow when unpacking long long"))
        }
        _ => Ok(()),
    }
}

/// A Python int past int64 where PyTorch reads a number: in [2**63, 2**64)
/// it is that number; further out, PyTorch's OverflowError.
fn wide_int(o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<f64>> {
    let Some(i) = o.downcast_ref::<PyInt>() else {
        return Ok(None);
    };
    if let Ok(u) = u64::try_from(i.as_bigint()) {
        return Ok(Some(u as f64));
    }
    let negative = o.rich_compare_bool(vm.ctx.new_int(0).as_object(), PyComparisonOp::Lt, vm)?;
    Err(vm.new_overflow_error(if negative {
        "can't convert negative int to unsigned"
    } else {
        "int too big to convert"
    }))
}

/// An `int[]`: a sequence of ints (or integer one-element tensors), or one
/// int standing for a one-item list, as in PyTorch; any item past int64 is
/// PyTorch's overflow error.
fn int_list(o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<Vec<i64>>> {
    if let Some(Scalar::Int(v)) = scalar(o, vm) {
        return Ok(Some(vec![v]));
    }
    let Some(items) = seq(o) else {
        unpack_overflow(o, vm)?;
        return Ok(None);
    };
    let items = items
        .iter()
        .map(|x| match scalar(x, vm) {
            Some(Scalar::Int(v)) => Ok(Some(v)),
            _ => match x.downcast_ref::<PyTensor>().map(|t| t.tensor()) {
                Some(t) if t.numel() == 1 && !t.dtype().is_float() => {
                    Ok(Some(t.item().map(|s| s.to_i64()).unwrap_or(0)))
                }
                _ => unpack_overflow(x, vm).map(|()| None),
            },
        })
        .collect::<PyResult<Vec<Option<i64>>>>()?;
    Ok(items.into_iter().collect())
}

/// A declared default as the Python value a Python-level signature holds.
pub(crate) fn default_to_py(text: Option<&str>, vm: &VirtualMachine) -> PyObjectRef {
    match text {
        None | Some("None") => vm.ctx.none(),
        Some("True") => vm.ctx.new_bool(true).into(),
        Some("False") => vm.ctx.new_bool(false).into(),
        Some(d) if d.starts_with('\'') => vm.ctx.new_str(d.trim_matches('\'')).into(),
        Some(d) => match (d.parse::<i64>(), d.parse::<f64>()) {
            (Ok(i), _) => vm.ctx.new_int(i).into(),
            (_, Ok(f)) => vm.ctx.new_float(f).into(),
            _ => vm.ctx.none(),
        },
    }
}

/// A kernel's result as a Python object; `Input(i)` is the object passed
/// for parameter `i`.
pub(crate) fn to_py(v: Value, objects: &[Option<PyObjectRef>], vm: &VirtualMachine) -> PyResult {
    let list = |items: Vec<PyObjectRef>| -> PyObjectRef { vm.ctx.new_list(items).into() };
    Ok(match v {
        Value::None => vm.ctx.none(),
        Value::Bool(b) => vm.ctx.new_bool(b).into(),
        Value::Int(i) => vm.ctx.new_int(i).into(),
        Value::Float(f) => vm.ctx.new_float(f).into(),
        Value::Scalar(s) => scalar_to_py(s, vm),
        Value::Str(s) | Value::Device(s) => vm.ctx.new_str(s).into(),
        Value::DType(d) => dtype_to_py(d, vm)?,
        Value::Ints(v) => list(v.into_iter().map(|i| vm.ctx.new_int(i).into()).collect()),
        Value::OptInts(v) => list(
            v.into_iter()
                .map(|i| i.map_or(vm.ctx.none(), |i| vm.ctx.new_int(i).into()))
                .collect(),
        ),
        Value::Floats(v) => list(v.into_iter().map(|f| vm.ctx.new_float(f).into()).collect()),
        Value::Tensor(t) => wrap(t, vm),
        Value::Data(data) => wrap(data.into_tensor(None).py(vm)?, vm),
        Value::Generator(g) => PyGenerator::wrap(g, vm),
        Value::MemoryFormat(f) => vm.import("torch", 0)?.get_attr(f.name(), vm)?,
        Value::Tensors(ts) => vm
            .ctx
            .new_tuple(ts.into_iter().map(|t| wrap(t, vm)).collect())
            .into(),
        Value::Tuple(items) => vm
            .ctx
            .new_tuple(
                items
                    .into_iter()
                    .map(|x| to_py(x, objects, vm))
                    .collect::<PyResult<_>>()?,
            )
            .into(),
        Value::ReturnType(name, items) => {
            let pair = to_py(Value::Tuple(items), objects, vm)?;
            super::classes::return_type(name, vm)?.call((pair,), vm)?
        }
        Value::Input(i) => objects[i]
            .clone()
            .expect("a kernel returns only an input that was given"),
    })
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

/// The device types PyTorch names (`torch.device` accepts them all, as
/// `torch._C._device_types`).
pub(crate) const DEVICE_TYPES: &[&str] = &[
    "cpu",
    "cuda",
    "ipu",
    "xpu",
    "mkldnn",
    "opengl",
    "opencl",
    "ideep",
    "hip",
    "ve",
    "fpga",
    "maia",
    "xla",
    "lazy",
    "vulkan",
    "mps",
    "meta",
    "hpu",
    "mtia",
    "privateuseone",
];

/// Tensors live on the CPU: any other device raises the error a CPU-only
/// PyTorch raises for it, but for meta, whose tensors are made on the CPU.
fn check_device(name: &str, vm: &VirtualMachine) -> PyResult<()> {
    let kind = name.split(':').next().unwrap_or(name);
    let not_compiled = |what: &str| {
        vm.new_exception_msg(
            vm.ctx.exceptions.assertion_error.to_owned(),
            format!("Torch not compiled with {what} enabled").into(),
        )
    };
    match kind {
        "cpu" => Ok(()),
        "cuda" => Err(not_compiled("CUDA")),
        "xpu" => Err(not_compiled("XPU")),
        // No meta device: such tensors are made on the CPU, said once (as
        // under `with torch.device("meta")`; transformers asks for them).
        "meta" => {
            super::classes::attr("torch._device", "_warn_meta_once", vm)?.call((), vm)?;
            Ok(())
        }
        _ if DEVICE_TYPES.contains(&kind) => Err(vm.new_runtime_error(format!(
            "PyTorch is not linked with support for {kind} devices"
        ))),
        _ => Err(vm.new_runtime_error(format!(
            "Expected one of {} device type at start of device string: {name}",
            DEVICE_TYPES.join(", ")
        ))),
    }
}
