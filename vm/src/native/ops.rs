//! The op table: every `torch.X`, `Tensor.X` and `torch.nn.functional.X`
//! binding is generated from one row (a PyTorch-style declaration plus a
//! kernel), with `__torch_function__` dispatch in front of every call.

use std::sync::{Arc, OnceLock};

use rustpython_vm::builtins::{PyDict, PyType};
use rustpython_vm::function::{FuncArgs, IntoPyNativeFn, PyMethodDef, PyMethodFlags};
use rustpython_vm::{AsObject, Py, PyObjectRef, PyPayload, PyResult, VirtualMachine};

use crate::tensor::ops::elementwise::{self as ew, Arg, Binary, Unary};
use crate::tensor::ops::{create, index, linalg, reduce, shape};
use crate::tensor::{DType, Scalar, Tensor};

use super::convert::{IntoPy, scalar, tensor_from_data};
use super::signature::{Bound, Signature};
use super::tensor::{PyTensor, wrap, write_back};

/// Where a row's bindings appear.
#[derive(Clone, Copy, Debug)]
pub(super) struct Place {
    torch: bool,
    method: bool,
    functional: bool,
}

pub(super) const T: Place = Place {
    torch: true,
    method: false,
    functional: false,
};
pub(super) const M: Place = Place {
    torch: false,
    method: true,
    functional: false,
};
pub(super) const TM: Place = Place {
    torch: true,
    method: true,
    functional: false,
};
pub(super) const TMF: Place = Place {
    torch: true,
    method: true,
    functional: true,
};
pub(super) const F: Place = Place {
    torch: false,
    method: false,
    functional: true,
};
pub(super) const TF: Place = Place {
    torch: true,
    method: false,
    functional: true,
};

pub(super) type Kernel = Arc<dyn Fn(&Bound<'_>, &VirtualMachine) -> PyResult + Send + Sync>;

pub(super) struct Row {
    decl: &'static str,
    place: Place,
    kernel: Kernel,
}

pub(super) fn row(
    decl: &'static str,
    place: Place,
    kernel: impl Fn(&Bound<'_>, &VirtualMachine) -> PyResult + Send + Sync + 'static,
) -> Row {
    Row {
        decl,
        place,
        kernel: Arc::new(kernel),
    }
}

pub(super) fn out(r: crate::tensor::Result<Tensor>, vm: &VirtualMachine) -> PyResult {
    r.py(vm).map(|t| wrap(t, vm))
}

pub(super) fn tuple(ts: Vec<Tensor>, vm: &VirtualMachine) -> PyResult {
    Ok(vm
        .ctx
        .new_tuple(ts.into_iter().map(|t| wrap(t, vm)).collect())
        .into())
}

/// The `size` and `dtype` (else `default`) of a tensor to create, checked:
/// non-negative sizes, an element count within int64, and a buffer the
/// system can provide for that dtype.
fn new_shape(b: &Bound, default: DType, vm: &VirtualMachine) -> PyResult<(Vec<usize>, DType)> {
    let dtype = dtype_or(b, default, vm)?;
    let sizes = b
        .ints("size", vm)?
        .into_iter()
        .map(|d| {
            usize::try_from(d).map_err(|_| {
                vm.new_runtime_error(format!("{}: Dimension size must be non-negative.", b.op()))
            })
        })
        .collect::<PyResult<Vec<usize>>>()?;
    crate::tensor::alloc::new_numel(&sizes, dtype).py(vm)?;
    Ok((sizes, dtype))
}

fn dtype_or(b: &Bound, default: DType, vm: &VirtualMachine) -> PyResult<DType> {
    Ok(b.dtype("dtype", vm)?.unwrap_or(default))
}

/// The `(values, indices)` pair of `max(dim)`-style reductions, as the
/// `torch.return_types.<name>` named tuple.
fn values_indices(
    name: &'static str,
    r: crate::tensor::Result<(Tensor, Tensor)>,
    vm: &VirtualMachine,
) -> PyResult {
    let (v, i) = r.py(vm)?;
    let pair = tuple(vec![v, i], vm)?;
    let class = vm
        .import("torch.return_types", 0)?
        .get_attr("return_types", vm)?
        .get_attr(name, vm)?;
    class.call((pair,), vm)
}

fn extremum(b: &Bound, which: reduce::Extremum, vm: &VirtualMachine) -> PyResult {
    let t = b.tensor("input", vm)?;
    match b.obj("dim") {
        None => out(reduce::extremum(&t, None, false, which), vm),
        Some(o) => match o.downcast_ref::<PyTensor>() {
            Some(other) => {
                let op = if which == reduce::Extremum::Max {
                    Binary::Maximum
                } else {
                    Binary::Minimum
                };
                out(
                    ew::binary(op, &Arg::Tensor(t), &Arg::Tensor(other.tensor())),
                    vm,
                )
            }
            None => values_indices(
                b.op(),
                reduce::extremum_dim(&t, b.int("dim", vm)?, b.bool("keepdim", vm)?, which),
                vm,
            ),
        },
    }
}

fn rows() -> Vec<Row> {
    use reduce::Extremum::{Max, Min};
    let mut rows = vec![
        // Reductions.
        row(
            "sum(Tensor input, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            TM,
            |b, vm| {
                out(
                    reduce::sum(
                        &b.tensor("input", vm)?,
                        b.opt_ints("dim", vm)?.as_deref(),
                        b.bool("keepdim", vm)?,
                        b.dtype("dtype", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "mean(Tensor input, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            TM,
            |b, vm| {
                out(
                    reduce::mean(
                        &b.tensor("input", vm)?,
                        b.opt_ints("dim", vm)?.as_deref(),
                        b.bool("keepdim", vm)?,
                        b.dtype("dtype", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "prod(Tensor input, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            TM,
            |b, vm| {
                let dim = b.opt_int("dim", vm)?.map(|d| vec![d]);
                out(
                    reduce::prod(
                        &b.tensor("input", vm)?,
                        dim.as_deref(),
                        b.bool("keepdim", vm)?,
                        b.dtype("dtype", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "max(Tensor input, Any? dim=None, bool keepdim=False)",
            TM,
            |b, vm| extremum(b, Max, vm),
        ),
        row(
            "min(Tensor input, Any? dim=None, bool keepdim=False)",
            TM,
            |b, vm| extremum(b, Min, vm),
        ),
        row(
            "amax(Tensor input, int[] dim=[], bool keepdim=False)",
            TM,
            |b, vm| {
                out(
                    reduce::extremum(
                        &b.tensor("input", vm)?,
                        Some(&b.ints("dim", vm)?),
                        b.bool("keepdim", vm)?,
                        Max,
                    ),
                    vm,
                )
            },
        ),
        row(
            "amin(Tensor input, int[] dim=[], bool keepdim=False)",
            TM,
            |b, vm| {
                out(
                    reduce::extremum(
                        &b.tensor("input", vm)?,
                        Some(&b.ints("dim", vm)?),
                        b.bool("keepdim", vm)?,
                        Min,
                    ),
                    vm,
                )
            },
        ),
        row(
            "argmax(Tensor input, int? dim=None, bool keepdim=False)",
            TM,
            |b, vm| {
                out(
                    reduce::arg_extremum_dim(
                        &b.tensor("input", vm)?,
                        b.opt_int("dim", vm)?,
                        b.bool("keepdim", vm)?,
                        Max,
                    ),
                    vm,
                )
            },
        ),
        row(
            "argmin(Tensor input, int? dim=None, bool keepdim=False)",
            TM,
            |b, vm| {
                out(
                    reduce::arg_extremum_dim(
                        &b.tensor("input", vm)?,
                        b.opt_int("dim", vm)?,
                        b.bool("keepdim", vm)?,
                        Min,
                    ),
                    vm,
                )
            },
        ),
        row(
            "var(Tensor input, int[]? dim=None, Any? unbiased=None, bool keepdim=False, *, Scalar? correction=None)",
            TM,
            |b, vm| variance(b, false, vm),
        ),
        row(
            "std(Tensor input, int[]? dim=None, Any? unbiased=None, bool keepdim=False, *, Scalar? correction=None)",
            TM,
            |b, vm| variance(b, true, vm),
        ),
        row(
            "norm(Tensor input, Any? p=None, int[]? dim=None, bool keepdim=False)",
            TM,
            |b, vm| {
                let p = match b.obj("p") {
                    None => 2.0,
                    Some(o)
                        if o.downcast_ref::<rustpython_vm::builtins::PyStr>()
                            .is_some_and(|s| s.expect_str() == "fro") =>
                    {
                        2.0
                    }
                    Some(o) => scalar(&o, vm)
                        .map(Scalar::to_f64)
                        .ok_or_else(|| vm.new_type_error("norm(): p must be a number or 'fro'"))?,
                };
                out(
                    reduce::norm(
                        &b.tensor("input", vm)?,
                        p,
                        b.opt_ints("dim", vm)?.as_deref(),
                        b.bool("keepdim", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "all(Tensor input, int? dim=None, bool keepdim=False)",
            TM,
            |b, vm| {
                let dim = b.opt_int("dim", vm)?.map(|d| vec![d]);
                out(
                    reduce::all(
                        &b.tensor("input", vm)?,
                        dim.as_deref(),
                        b.bool("keepdim", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "any(Tensor input, int? dim=None, bool keepdim=False)",
            TM,
            |b, vm| {
                let dim = b.opt_int("dim", vm)?.map(|d| vec![d]);
                out(
                    reduce::any(
                        &b.tensor("input", vm)?,
                        dim.as_deref(),
                        b.bool("keepdim", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "cumsum(Tensor input, int dim, *, ScalarType? dtype=None)",
            TM,
            |b, vm| {
                out(
                    reduce::cumsum(
                        &b.tensor("input", vm)?,
                        b.int("dim", vm)?,
                        b.dtype("dtype", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "softmax(Tensor input, int dim, ScalarType? dtype=None)",
            TM,
            |b, vm| {
                out(
                    reduce::softmax(
                        &b.tensor("input", vm)?,
                        b.int("dim", vm)?,
                        b.dtype("dtype", vm)?,
                        reduce::SoftmaxKind::Softmax,
                    ),
                    vm,
                )
            },
        ),
        row(
            "log_softmax(Tensor input, int dim, ScalarType? dtype=None)",
            TM,
            |b, vm| {
                out(
                    reduce::softmax(
                        &b.tensor("input", vm)?,
                        b.int("dim", vm)?,
                        b.dtype("dtype", vm)?,
                        reduce::SoftmaxKind::LogSoftmax,
                    ),
                    vm,
                )
            },
        ),
        row(
            "logsumexp(Tensor input, int[] dim, bool keepdim=False)",
            TM,
            |b, vm| {
                out(
                    reduce::logsumexp(
                        &b.tensor("input", vm)?,
                        &b.ints("dim", vm)?,
                        b.bool("keepdim", vm)?,
                    ),
                    vm,
                )
            },
        ),
        // Products.
        row("matmul(Tensor input, Tensor other)", TM, |b, vm| {
            out(
                linalg::matmul(&b.tensor("input", vm)?, &b.tensor("other", vm)?),
                vm,
            )
        }),
        row("mm(Tensor input, Tensor mat2)", TM, |b, vm| {
            out(
                linalg::mm(&b.tensor("input", vm)?, &b.tensor("mat2", vm)?),
                vm,
            )
        }),
        row("bmm(Tensor input, Tensor mat2)", TM, |b, vm| {
            out(
                linalg::bmm(&b.tensor("input", vm)?, &b.tensor("mat2", vm)?),
                vm,
            )
        }),
        row("outer(Tensor input, Tensor vec2)", TM, |b, vm| {
            out(
                linalg::outer(&b.tensor("input", vm)?, &b.tensor("vec2", vm)?),
                vm,
            )
        }),
        row(
            "addmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |b, vm| {
                let prod = linalg::mm(&b.tensor("mat1", vm)?, &b.tensor("mat2", vm)?).py(vm)?;
                let scaled = ew::binary(
                    Binary::Mul,
                    &Arg::Tensor(prod),
                    &Arg::Scalar(b.scalar("alpha", vm)?),
                )
                .py(vm)?;
                let bias = ew::binary(
                    Binary::Mul,
                    &Arg::Tensor(b.tensor("input", vm)?),
                    &Arg::Scalar(b.scalar("beta", vm)?),
                )
                .py(vm)?;
                out(
                    ew::binary(Binary::Add, &Arg::Tensor(bias), &Arg::Tensor(scaled)),
                    vm,
                )
            },
        ),
        row(
            "linear(Tensor input, Tensor weight, Tensor? bias=None)",
            F,
            |b, vm| {
                out(
                    linalg::linear(
                        &b.tensor("input", vm)?,
                        &b.tensor("weight", vm)?,
                        b.opt_tensor("bias", vm)?.as_ref(),
                    ),
                    vm,
                )
            },
        ),
        // Views and joins.
        row("view(Tensor input, int[] size)", M, |b, vm| {
            out(
                shape::view(&b.tensor("input", vm)?, &b.ints("size", vm)?),
                vm,
            )
        }),
        row("reshape(Tensor input, int[] shape)", TM, |b, vm| {
            out(
                shape::reshape(&b.tensor("input", vm)?, &b.ints("shape", vm)?),
                vm,
            )
        }),
        row("view_as(Tensor input, Tensor other)", M, |b, vm| {
            let dims: Vec<i64> = b
                .tensor("other", vm)?
                .shape()
                .iter()
                .map(|&d| d as i64)
                .collect();
            out(shape::view(&b.tensor("input", vm)?, &dims), vm)
        }),
        row("reshape_as(Tensor input, Tensor other)", M, |b, vm| {
            let dims: Vec<i64> = b
                .tensor("other", vm)?
                .shape()
                .iter()
                .map(|&d| d as i64)
                .collect();
            out(shape::reshape(&b.tensor("input", vm)?, &dims), vm)
        }),
        row(
            "flatten(Tensor input, int start_dim=0, int end_dim=-1)",
            TM,
            |b, vm| {
                out(
                    shape::flatten(
                        &b.tensor("input", vm)?,
                        b.int("start_dim", vm)?,
                        b.int("end_dim", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "unflatten(Tensor input, int dim, int[] sizes)",
            TM,
            |b, vm| {
                out(
                    shape::unflatten(
                        &b.tensor("input", vm)?,
                        b.int("dim", vm)?,
                        &b.ints("sizes", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row("squeeze(Tensor input, int[]? dim=None)", TM, |b, vm| {
            out(
                shape::squeeze(&b.tensor("input", vm)?, b.opt_ints("dim", vm)?.as_deref()),
                vm,
            )
        }),
        row("unsqueeze(Tensor input, int dim)", TM, |b, vm| {
            out(
                shape::unsqueeze(&b.tensor("input", vm)?, b.int("dim", vm)?),
                vm,
            )
        }),
        row("permute(Tensor input, int[] dims)", TM, |b, vm| {
            out(
                shape::permute(&b.tensor("input", vm)?, &b.ints("dims", vm)?),
                vm,
            )
        }),
        row(
            "transpose(Tensor input, int dim0, int dim1)",
            TM,
            |b, vm| {
                out(
                    shape::transpose(
                        &b.tensor("input", vm)?,
                        b.int("dim0", vm)?,
                        b.int("dim1", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row("t(Tensor input)", TM, |b, vm| {
            out(shape::matrix_t(&b.tensor("input", vm)?), vm)
        }),
        row("expand(Tensor input, int[] size)", M, |b, vm| {
            out(
                shape::expand(&b.tensor("input", vm)?, &b.ints("size", vm)?),
                vm,
            )
        }),
        row("expand_as(Tensor input, Tensor other)", M, |b, vm| {
            out(
                b.tensor("input", vm)?
                    .broadcast_to(b.tensor("other", vm)?.shape()),
                vm,
            )
        }),
        row(
            "narrow(Tensor input, int dim, int start, int length)",
            TM,
            |b, vm| {
                out(
                    shape::narrow(
                        &b.tensor("input", vm)?,
                        b.int("dim", vm)?,
                        b.int("start", vm)?,
                        b.int("length", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row("select(Tensor input, int dim, int index)", TM, |b, vm| {
            out(
                shape::select(
                    &b.tensor("input", vm)?,
                    b.int("dim", vm)?,
                    b.int("index", vm)?,
                ),
                vm,
            )
        }),
        row("chunk(Tensor input, int chunks, int dim=0)", TM, |b, vm| {
            let n = usize::try_from(b.int("chunks", vm)?)
                .map_err(|_| vm.new_runtime_error("chunk expects `chunks` to be greater than 0"))?;
            tuple(
                shape::chunk(&b.tensor("input", vm)?, n, b.int("dim", vm)?).py(vm)?,
                vm,
            )
        }),
        row(
            "split(Tensor input, Any split_size_or_sections, int dim=0)",
            TM,
            |b, vm| {
                let spec = b
                    .obj("split_size_or_sections")
                    .ok_or_else(|| vm.new_type_error("split(): missing split_size_or_sections"))?;
                let how = match scalar(&spec, vm) {
                    Some(Scalar::Int(n)) if n >= 0 => shape::Split::Every(n as usize),
                    Some(Scalar::Int(n)) => {
                        return Err(vm.new_runtime_error(format!(
                            "split expects split_size be non-negative, but got split_size={n}"
                        )));
                    }
                    _ => shape::Split::Sizes(
                        b.ints("split_size_or_sections", vm)?
                            .into_iter()
                            .map(|d| d.max(0) as usize)
                            .collect(),
                    ),
                };
                tuple(
                    shape::split(&b.tensor("input", vm)?, how, b.int("dim", vm)?).py(vm)?,
                    vm,
                )
            },
        ),
        row("unbind(Tensor input, int dim=0)", TM, |b, vm| {
            tuple(
                shape::unbind(&b.tensor("input", vm)?, b.int("dim", vm)?).py(vm)?,
                vm,
            )
        }),
        row("cat(Tensor[] tensors, int dim=0)", T, |b, vm| {
            out(
                shape::cat(&b.tensors("tensors", vm)?, b.int("dim", vm)?),
                vm,
            )
        }),
        row("concat(Tensor[] tensors, int dim=0)", T, |b, vm| {
            out(
                shape::cat(&b.tensors("tensors", vm)?, b.int("dim", vm)?),
                vm,
            )
        }),
        row("stack(Tensor[] tensors, int dim=0)", T, |b, vm| {
            out(
                shape::stack(&b.tensors("tensors", vm)?, b.int("dim", vm)?),
                vm,
            )
        }),
        row("repeat(Tensor input, int[] repeats)", M, |b, vm| {
            out(
                shape::repeat(&b.tensor("input", vm)?, &b.ints("repeats", vm)?),
                vm,
            )
        }),
        row("contiguous(Tensor input)", M, |b, vm| {
            Ok(wrap(b.tensor("input", vm)?.contiguous(), vm))
        }),
        row("clone(Tensor input)", TM, |b, vm| {
            Ok(wrap(b.tensor("input", vm)?.copy(), vm))
        }),
        row("detach(Tensor input)", TM, |b, vm| {
            Ok(wrap(b.tensor("input", vm)?, vm))
        }),
        // Selection and indexing.
        row(
            "where(Tensor condition, TensorOrScalar input, TensorOrScalar other)",
            T,
            |b, vm| {
                out(
                    ew::where_(
                        &b.tensor("condition", vm)?,
                        &b.arg("input", vm)?,
                        &b.arg("other", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "clamp(Tensor input, Scalar? min=None, Scalar? max=None)",
            TM,
            |b, vm| {
                out(
                    ew::clamp(
                        &b.tensor("input", vm)?,
                        b.opt_scalar("min", vm)?,
                        b.opt_scalar("max", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "clip(Tensor input, Scalar? min=None, Scalar? max=None)",
            TM,
            |b, vm| {
                out(
                    ew::clamp(
                        &b.tensor("input", vm)?,
                        b.opt_scalar("min", vm)?,
                        b.opt_scalar("max", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "masked_fill(Tensor input, Tensor mask, Scalar value)",
            TM,
            |b, vm| {
                out(
                    index::masked_fill(
                        &b.tensor("input", vm)?,
                        &b.tensor("mask", vm)?,
                        b.scalar("value", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "masked_fill_(Tensor input, Tensor mask, Scalar value)",
            M,
            |b, vm| {
                let r = index::masked_fill(
                    &b.tensor("input", vm)?,
                    &b.tensor("mask", vm)?,
                    b.scalar("value", vm)?,
                )
                .py(vm)?;
                write_back(&b.obj("input").expect("self"), r, vm)
            },
        ),
        row("tril(Tensor input, int diagonal=0)", TM, |b, vm| {
            out(
                index::triangle(&b.tensor("input", vm)?, b.int("diagonal", vm)?, true),
                vm,
            )
        }),
        row("triu(Tensor input, int diagonal=0)", TM, |b, vm| {
            out(
                index::triangle(&b.tensor("input", vm)?, b.int("diagonal", vm)?, false),
                vm,
            )
        }),
        row("tril_(Tensor input, int diagonal=0)", M, |b, vm| {
            let r =
                index::triangle(&b.tensor("input", vm)?, b.int("diagonal", vm)?, true).py(vm)?;
            write_back(&b.obj("input").expect("self"), r, vm)
        }),
        row("triu_(Tensor input, int diagonal=0)", M, |b, vm| {
            let r =
                index::triangle(&b.tensor("input", vm)?, b.int("diagonal", vm)?, false).py(vm)?;
            write_back(&b.obj("input").expect("self"), r, vm)
        }),
        row("equal(Tensor input, Tensor other)", TM, |b, vm| {
            let (x, y) = (b.tensor("input", vm)?, b.tensor("other", vm)?);
            let same = x.shape() == y.shape() && x.to_vec::<f64>() == y.to_vec::<f64>();
            Ok(vm.ctx.new_bool(same).into())
        }),
        row("masked_select(Tensor input, Tensor mask)", TM, |b, vm| {
            out(
                index::masked_select(&b.tensor("input", vm)?, &b.tensor("mask", vm)?),
                vm,
            )
        }),
        row(
            "gather(Tensor input, int dim, Tensor index)",
            TM,
            |b, vm| {
                out(
                    index::gather(
                        &b.tensor("input", vm)?,
                        b.int("dim", vm)?,
                        &b.tensor("index", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "scatter(Tensor input, int dim, Tensor index, Any src, *, str? reduce=None)",
            TM,
            |b, vm| {
                let src = b
                    .obj("src")
                    .ok_or_else(|| vm.new_type_error("scatter(): missing src"))?;
                let src = match src.downcast_ref::<PyTensor>() {
                    Some(t) => index::ScatterSrc::Tensor(t.tensor()),
                    None => index::ScatterSrc::Scalar(scalar(&src, vm).ok_or_else(|| {
                        vm.new_type_error("scatter(): src must be a Tensor or a number")
                    })?),
                };
                let reduce = b.obj("reduce").map(|_| b.str("reduce", vm)).transpose()?;
                out(
                    index::scatter(
                        &b.tensor("input", vm)?,
                        b.int("dim", vm)?,
                        &b.tensor("index", vm)?,
                        src,
                        reduce.as_deref(),
                    ),
                    vm,
                )
            },
        ),
        row(
            "index_select(Tensor input, int dim, Tensor index)",
            TM,
            |b, vm| {
                out(
                    index::index_select(
                        &b.tensor("input", vm)?,
                        b.int("dim", vm)?,
                        &b.tensor("index", vm)?,
                    ),
                    vm,
                )
            },
        ),
        // In-place fills and copies.
        row("copy_(Tensor input, Tensor src)", M, |b, vm| {
            b.tensor("input", vm)?
                .copy_from(&b.tensor("src", vm)?)
                .py(vm)?;
            Ok(b.obj("input").expect("self"))
        }),
        row("fill_(Tensor input, Scalar value)", M, |b, vm| {
            let t = b.tensor("input", vm)?;
            t.fill(Tensor::fill_value(b.scalar("value", vm)?, t.dtype()).py(vm)?);
            Ok(b.obj("input").expect("self"))
        }),
        row("zero_(Tensor input)", M, |b, vm| {
            b.tensor("input", vm)?.fill(Scalar::Int(0));
            Ok(b.obj("input").expect("self"))
        }),
        // Conversions.
        row(
            "to(Tensor input, Any? dtype=None, Any? other=None, bool non_blocking=False, bool copy=False)",
            M,
            |b, vm| {
                let t = b.tensor("input", vm)?;
                let target = [b.obj("dtype"), b.obj("other")]
                    .into_iter()
                    .flatten()
                    .find_map(|o| {
                        if let Some(other) = o.downcast_ref::<PyTensor>() {
                            return Some(Ok(other.tensor().dtype()));
                        }
                        super::convert::dtype_from_py(&o, vm).ok().map(Ok)
                    });
                match target.transpose()? {
                    Some(d) if d != t.dtype() || b.bool("copy", vm)? => {
                        Ok(wrap(t.to_dtype(d).copy(), vm))
                    }
                    _ => Ok(b.obj("input").expect("self")),
                }
            },
        ),
        row("type_as(Tensor input, Tensor other)", M, |b, vm| {
            Ok(wrap(
                b.tensor("input", vm)?
                    .to_dtype(b.tensor("other", vm)?.dtype()),
                vm,
            ))
        }),
        row("float(Tensor input)", M, |b, vm| {
            Ok(wrap(b.tensor("input", vm)?.to_dtype(DType::F32), vm))
        }),
        row("double(Tensor input)", M, |b, vm| {
            Ok(wrap(b.tensor("input", vm)?.to_dtype(DType::F64), vm))
        }),
        row("long(Tensor input)", M, |b, vm| {
            Ok(wrap(b.tensor("input", vm)?.to_dtype(DType::I64), vm))
        }),
        row("int(Tensor input)", M, |b, vm| {
            Ok(wrap(b.tensor("input", vm)?.to_dtype(DType::I32), vm))
        }),
        row("bool(Tensor input)", M, |b, vm| {
            Ok(wrap(b.tensor("input", vm)?.to_dtype(DType::Bool), vm))
        }),
        row("cpu(Tensor input)", M, |b, _vm| {
            Ok(b.obj("input").expect("self"))
        }),
        // Creation.
        row(
            "tensor(Any data, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let data = b
                    .obj("data")
                    .ok_or_else(|| vm.new_runtime_error("Could not infer dtype of NoneType"))?;
                Ok(wrap(
                    tensor_from_data(&data, b.dtype("dtype", vm)?, vm)?,
                    vm,
                ))
            },
        ),
        row(
            "as_tensor(Any data, ScalarType? dtype=None, Any? device=None)",
            T,
            |b, vm| {
                let data = b
                    .obj("data")
                    .ok_or_else(|| vm.new_runtime_error("Could not infer dtype of NoneType"))?;
                if let Some(t) = data.downcast_ref::<PyTensor>() {
                    let t = t.tensor();
                    return Ok(wrap(
                        t.to_dtype(b.dtype("dtype", vm)?.unwrap_or(t.dtype())),
                        vm,
                    ));
                }
                Ok(wrap(
                    tensor_from_data(&data, b.dtype("dtype", vm)?, vm)?,
                    vm,
                ))
            },
        ),
        row(
            "zeros(int[] size, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let (size, dtype) = new_shape(b, DType::F32, vm)?;
                Ok(wrap(Tensor::zeros(&size, dtype), vm))
            },
        ),
        row(
            "empty(int[] size, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let (size, dtype) = new_shape(b, DType::F32, vm)?;
                Ok(wrap(Tensor::zeros(&size, dtype), vm))
            },
        ),
        row(
            "ones(int[] size, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let (size, dtype) = new_shape(b, DType::F32, vm)?;
                Ok(wrap(Tensor::full(&size, Scalar::Int(1), dtype), vm))
            },
        ),
        row(
            "full(int[] size, Scalar fill_value, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let v = b.scalar("fill_value", vm)?;
                let (size, dtype) = new_shape(b, v.category().default_dtype(), vm)?;
                let v = Tensor::fill_value(v, dtype).py(vm)?;
                Ok(wrap(Tensor::full(&size, v, dtype), vm))
            },
        ),
        row(
            "zeros_like(Tensor input, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let t = b.tensor("input", vm)?;
                Ok(wrap(
                    Tensor::zeros(t.shape(), dtype_or(b, t.dtype(), vm)?),
                    vm,
                ))
            },
        ),
        row(
            "empty_like(Tensor input, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let t = b.tensor("input", vm)?;
                Ok(wrap(
                    Tensor::zeros(t.shape(), dtype_or(b, t.dtype(), vm)?),
                    vm,
                ))
            },
        ),
        row(
            "ones_like(Tensor input, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let t = b.tensor("input", vm)?;
                Ok(wrap(
                    Tensor::full(t.shape(), Scalar::Int(1), dtype_or(b, t.dtype(), vm)?),
                    vm,
                ))
            },
        ),
        row(
            "full_like(Tensor input, Scalar fill_value, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let t = b.tensor("input", vm)?;
                let dtype = dtype_or(b, t.dtype(), vm)?;
                let v = Tensor::fill_value(b.scalar("fill_value", vm)?, dtype).py(vm)?;
                Ok(wrap(Tensor::full(t.shape(), v, dtype), vm))
            },
        ),
        row(
            "arange(Scalar start, Scalar? end=None, Scalar step=1, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let (start, end) = match b.opt_scalar("end", vm)? {
                    Some(end) => (b.scalar("start", vm)?, end),
                    None => (Scalar::Int(0), b.scalar("start", vm)?),
                };
                out(
                    create::arange(start, end, b.scalar("step", vm)?, b.dtype("dtype", vm)?),
                    vm,
                )
            },
        ),
        row(
            "linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                out(
                    create::linspace(
                        b.float("start", vm)?,
                        b.float("end", vm)?,
                        b.int("steps", vm)?,
                        b.dtype("dtype", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "eye(int n, int? m=None, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let size = |name: &str, v: i64| {
                    usize::try_from(v).map_err(|_| {
                        vm.new_runtime_error(format!(
                            "{name} must be greater or equal to 0, got {v}"
                        ))
                    })
                };
                let n = size("n", b.int("n", vm)?)?;
                let m = match b.opt_int("m", vm)? {
                    Some(m) => size("m", m)?,
                    None => n,
                };
                Ok(wrap(create::eye(n, m, dtype_or(b, DType::F32, vm)?), vm))
            },
        ),
        row(
            "rand(int[] size, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let (size, dtype) = new_shape(b, DType::F32, vm)?;
                Ok(wrap(create::rand(&size, dtype), vm))
            },
        ),
        row(
            "randn(int[] size, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let (size, dtype) = new_shape(b, DType::F32, vm)?;
                Ok(wrap(create::randn(&size, dtype), vm))
            },
        ),
        row(
            "randint(int low, int high, int[] size, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                let (size, dtype) = new_shape(b, DType::I64, vm)?;
                out(
                    create::randint(b.int("low", vm)?, b.int("high", vm)?, &size, dtype),
                    vm,
                )
            },
        ),
        row(
            "randperm(int n, *, ScalarType? dtype=None, Any? device=None, bool requires_grad=False)",
            T,
            |b, vm| {
                Ok(wrap(
                    create::randperm(
                        b.int("n", vm)?.max(0) as usize,
                        dtype_or(b, DType::I64, vm)?,
                    ),
                    vm,
                ))
            },
        ),
        row("manual_seed(int seed)", T, |b, vm| {
            create::manual_seed(b.int("seed", vm)? as u64);
            Ok(vm.ctx.none())
        }),
    ];
    // Every elementwise op in the core's tables becomes a function and a
    // method, plus its in-place `op_` method variant.
    for &op in Unary::ALL {
        if op == Unary::Gelu || op == Unary::GeluTanh {
            continue;
        }
        let decl: &'static str = Box::leak(format!("{}(Tensor input)", op.name()).into_boxed_str());
        // `F.relu` & co. take `inplace`; their rows are in `ops_nn`.
        let place = if matches!(op, Unary::Sigmoid | Unary::Tanh) {
            TMF
        } else {
            TM
        };
        rows.push(row(decl, place, move |b, vm| {
            out(ew::unary(op, &b.tensor("input", vm)?), vm)
        }));
        let decl: &'static str =
            Box::leak(format!("{}_(Tensor input)", op.name()).into_boxed_str());
        rows.push(row(decl, M, move |b, vm| {
            let r = ew::unary(op, &b.tensor("input", vm)?).py(vm)?;
            write_back(&b.obj("input").expect("self"), r, vm)
        }));
    }
    for &op in Binary::ALL {
        let alpha = if matches!(op, Binary::Add | Binary::Sub) {
            ", *, Scalar alpha=1"
        } else {
            ""
        };
        let other = if op.tensor_other_only() {
            "Tensor"
        } else {
            "TensorOrScalar"
        };
        let decl: &'static str = Box::leak(
            format!("{}(Tensor input, {other} other{alpha})", op.name()).into_boxed_str(),
        );
        rows.push(row(decl, TM, move |b, vm| {
            Ok(wrap(binary_alpha(op, b, vm)?, vm))
        }));
        let decl: &'static str = Box::leak(
            format!("{}_(Tensor input, {other} other{alpha})", op.name()).into_boxed_str(),
        );
        rows.push(row(decl, M, move |b, vm| {
            let r = binary_alpha(op, b, vm)?;
            write_back(&b.obj("input").expect("self"), r, vm)
        }));
    }
    for (alias, op) in [
        ("true_divide", Binary::Div),
        ("multiply", Binary::Mul),
        ("subtract", Binary::Sub),
        ("divide", Binary::Div),
        ("greater", Binary::Gt),
        ("less", Binary::Lt),
        ("not_equal", Binary::Ne),
    ] {
        let decl: &'static str =
            Box::leak(format!("{alias}(Tensor input, TensorOrScalar other)").into_boxed_str());
        rows.push(row(decl, TM, move |b, vm| {
            out(
                ew::binary(
                    op,
                    &Arg::Tensor(b.tensor("input", vm)?),
                    &b.arg("other", vm)?,
                ),
                vm,
            )
        }));
    }
    rows.extend(super::ops_nn::rows());
    rows
}

fn binary_alpha(op: Binary, b: &Bound, vm: &VirtualMachine) -> PyResult<Tensor> {
    let x = b.tensor("input", vm)?;
    let mut y = if op.tensor_other_only() {
        Arg::Tensor(b.tensor("other", vm)?)
    } else {
        b.arg("other", vm)?
    };
    if matches!(op, Binary::Add | Binary::Sub) {
        let alpha = b.scalar("alpha", vm)?;
        if alpha != Scalar::Int(1) {
            y = Arg::Tensor(ew::binary(Binary::Mul, &y, &Arg::Scalar(alpha)).py(vm)?);
        }
    }
    ew::binary(op, &Arg::Tensor(x), &y).py(vm)
}

fn variance(b: &Bound, sqrt: bool, vm: &VirtualMachine) -> PyResult {
    let t = b.tensor("input", vm)?;
    // `unbiased` may arrive positionally in the `dim` slot (`x.var(False)`).
    let (dims, unbiased) = match b.obj("dim") {
        Some(o) if o.class().is(vm.ctx.types.bool_type) => (None, Some(o.try_to_bool(vm)?)),
        _ => (
            b.opt_ints("dim", vm)?,
            b.obj("unbiased").map(|o| o.try_to_bool(vm)).transpose()?,
        ),
    };
    let correction = match (b.opt_float("correction", vm)?, unbiased) {
        (Some(c), _) => c,
        (None, Some(false)) => 0.0,
        _ => 1.0,
    };
    out(
        reduce::var(
            &t,
            dims.as_deref(),
            correction,
            b.bool("keepdim", vm)?,
            sqrt,
        ),
        vm,
    )
}

/// Types among the arguments that override `__torch_function__`, subclasses
/// before their bases, then left to right.
fn overloaded_types(args: &FuncArgs, vm: &VirtualMachine) -> Vec<PyObjectRef> {
    let tensor_type = PyTensor::class(&vm.ctx);
    let mut types: Vec<PyObjectRef> = Vec::new();
    let mut visit = |obj: &PyObjectRef| {
        let cls = obj.class();
        if cls.is(tensor_type) || scalar(obj, vm).is_some() || vm.is_none(obj) {
            return;
        }
        if cls
            .get_attr(vm.ctx.intern_str("__torch_function__"))
            .is_none()
        {
            return;
        }
        let cls_obj: PyObjectRef = cls.to_owned().into();
        if types.iter().any(|t| t.is(&cls_obj)) {
            return;
        }
        let at = types.iter().position(|t| {
            t.downcast_ref::<PyType>()
                .is_some_and(|base| cls.fast_issubclass(base))
        });
        match at {
            Some(i) => types.insert(i, cls_obj),
            None => types.push(cls_obj),
        }
    };
    for a in args.args.iter().chain(args.kwargs.values()) {
        visit(a);
        if let Some(items) = super::signature::seq(a) {
            items.iter().for_each(&mut visit);
        }
    }
    types
}

/// Calls each override in turn; `None` when there were no overrides.
pub(super) fn torch_function(
    func: &PyObjectRef,
    name: &str,
    args: &FuncArgs,
    vm: &VirtualMachine,
) -> PyResult<Option<PyObjectRef>> {
    let types = overloaded_types(args, vm);
    if types.is_empty() {
        return Ok(None);
    }
    dispatch(func, name, types, args, vm).map(Some)
}

fn dispatch(
    func: &PyObjectRef,
    name: &str,
    types: Vec<PyObjectRef>,
    args: &FuncArgs,
    vm: &VirtualMachine,
) -> PyResult {
    let types_tuple = vm.ctx.new_tuple(types.clone());
    let pos = vm.ctx.new_tuple(args.args.clone());
    let kwargs = PyDict::default().into_ref(&vm.ctx);
    for (k, v) in &args.kwargs {
        kwargs.set_item(k.as_str(), v.clone(), vm)?;
    }
    for t in &types {
        let handler = t.get_attr("__torch_function__", vm)?;
        let r = handler.call(
            (
                func.clone(),
                types_tuple.clone(),
                pos.clone(),
                kwargs.clone(),
            ),
            vm,
        )?;
        if !r.is(&vm.ctx.not_implemented) {
            return Ok(r);
        }
    }
    let names: Vec<String> = types
        .iter()
        .map(|t| {
            t.repr(vm)
                .map(|s| s.expect_str().to_owned())
                .unwrap_or_default()
        })
        .collect();
    Err(vm.new_type_error(format!(
        "no implementation found for '{name}' on types that implement __torch_function__: [{}]",
        names.join(", ")
    )))
}

/// How a function hands its arguments to `__torch_function__` when PyTorch
/// writes it in Python: these parameters positionally, these by keyword
/// (defaults filled in). Traced graphs record exactly these.
pub(super) struct Form {
    pub positional: &'static [&'static str],
    pub keywords: &'static [&'static str],
}

impl Form {
    fn reshape(&self, sig: &Signature, args: &FuncArgs, vm: &VirtualMachine) -> PyResult<FuncArgs> {
        let values = sig.bind_values(args.clone(), vm)?;
        let value = |name: &str| match sig.position(name) {
            Some(i) => values[i]
                .clone()
                .unwrap_or_else(|| sig.default_value(name, vm)),
            None => vm.ctx.none(),
        };
        let positional: Vec<PyObjectRef> = self.positional.iter().map(|n| value(n)).collect();
        let kwargs = self
            .keywords
            .iter()
            .map(|n| ((*n).to_owned(), value(n)))
            .collect::<rustpython_vm::function::KwArgs>();
        Ok(FuncArgs::new(positional, kwargs))
    }
}

/// A callable for one row: dispatches `__torch_function__`, binds, runs the kernel.
fn make_call(
    sig: Arc<Signature>,
    kernel: Kernel,
    me: Arc<OnceLock<PyObjectRef>>,
    qualname: String,
    form: Option<&'static Form>,
) -> impl Fn(FuncArgs, &VirtualMachine) -> PyResult + Send + Sync + 'static {
    move |args: FuncArgs, vm: &VirtualMachine| {
        if let Some(func) = me.get() {
            let types = overloaded_types(&args, vm);
            if !types.is_empty() {
                return match form {
                    Some(f) => dispatch(func, &qualname, types, &f.reshape(&sig, &args, vm)?, vm),
                    None => dispatch(func, &qualname, types, &args, vm),
                };
            }
        }
        let bound = sig.bind(args, vm)?;
        super::guard::guard(&qualname, vm, || kernel(&bound, vm))
    }
}

/// The `__module__` of `torch.nn.functional.<name>` in PyTorch, where it is
/// not `torch.<name>` itself: graphs print call targets by module and name.
fn functional_module(name: &str) -> &'static str {
    match name {
        "avg_pool2d" | "gelu" | "linear" | "scaled_dot_product_attention" | "softplus" => {
            "torch._C._nn"
        }
        "adaptive_avg_pool1d" | "avg_pool1d" | "conv1d" | "conv2d" => "torch",
        _ => "torch.nn.functional",
    }
}

/// A builtin function whose `__module__` reads `module`, as PyTorch's do.
fn native_function<Kind>(
    name: &'static str,
    module: &'static str,
    call: impl IntoPyNativeFn<Kind>,
    vm: &VirtualMachine,
) -> PyObjectRef {
    // Op tables live as long as the process, so their method defs may too.
    let def: &'static PyMethodDef = Box::leak(Box::new(PyMethodDef {
        name,
        func: Box::leak(Box::new(call.into_func())),
        flags: PyMethodFlags::empty(),
        doc: None,
    }));
    def.to_function()
        .with_module(vm.ctx.intern_str(module))
        .into_ref(&vm.ctx)
        .into()
}

/// Builds every binding: installs `Tensor` methods and returns the
/// `torch` and `torch.nn.functional` functions by name.
pub(crate) fn bind(vm: &VirtualMachine) -> PyResult<(PyObjectRef, PyObjectRef)> {
    let torch = PyDict::default().into_ref(&vm.ctx);
    let functional = PyDict::default().into_ref(&vm.ctx);
    let class: &'static Py<PyType> = PyTensor::class(&vm.ctx);
    for r in rows() {
        let sig = Arc::new(Signature::parse(r.decl));
        let name = sig.name;
        let function = |module: &'static str| {
            let me = Arc::new(OnceLock::new());
            let form = if module == "torch.nn.functional" {
                super::ops_nn::dispatch_form(name)
            } else {
                None
            };
            let f = native_function(
                name,
                module,
                make_call(
                    sig.clone(),
                    r.kernel.clone(),
                    me.clone(),
                    format!("{module}.{name}"),
                    form,
                ),
                vm,
            );
            let _ = me.set(f.clone());
            f
        };
        let torch_fn = r.place.torch.then(|| function("torch"));
        if let Some(f) = &torch_fn {
            torch.set_item(name, f.clone(), vm)?;
        }
        if r.place.functional {
            let f = match (functional_module(name), &torch_fn) {
                ("torch", Some(f)) => f.clone(),
                (module, _) => function(module),
            };
            functional.set_item(name, f, vm)?;
        }
        if r.place.method {
            let me = Arc::new(OnceLock::new());
            let m: PyObjectRef = vm
                .new_method(
                    name,
                    class,
                    make_call(sig, r.kernel, me.clone(), format!("Tensor.{name}"), None),
                )
                .into();
            let _ = me.set(m.clone());
            class.set_attr(vm.ctx.intern_str(name), m);
        }
    }
    Ok((torch.into(), functional.into()))
}
