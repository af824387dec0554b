//! Creation: from data, filled, ranges, identity, random.

use fxvm_tensor::dtype::default_float;
use fxvm_tensor::layout::MemoryFormat;
use fxvm_tensor::ops::create;
use fxvm_tensor::{DType, Result, Scalar, Tensor, TensorError};

use crate::meta;
use crate::op::{M, Op, T, op};
use crate::value::{Data, Device};

/// The sizes of a tensor to create, checked: non-negative, an element count
/// within int64, and a buffer the system can provide for `dtype`.
pub(super) fn new_shape(op: &'static str, size: &[i64], dtype: DType) -> Result<Vec<usize>> {
    let sizes = size
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                TensorError::runtime(op, format!("{op}: Dimension size must be non-negative."))
            })
        })
        .collect::<Result<Vec<usize>>>()?;
    fxvm_tensor::alloc::new_numel(&sizes, dtype)?;
    Ok(sizes)
}

type Sized = (Vec<i64>, Option<DType>, Device, bool);
/// `*_like(input, *, dtype, device, requires_grad, memory_format)`.
pub(super) type Like = (Tensor, Option<DType>, Device, bool, MemoryFormat);
type New = (Tensor, Vec<i64>, Option<DType>, Device, bool);

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "tensor(Data data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(data, dtype, _, _): (Data, Option<DType>, Device, bool)| data.into_tensor(dtype),
        ),
        op(
            "as_tensor(Data data, *, ScalarType? dtype=None, Device? device=None)",
            T,
            |(data, dtype, _): (Data, Option<DType>, Device)| match data {
                Data::Tensor(t) => Ok(t.to_dtype(dtype.unwrap_or(t.dtype()))),
                data => data.into_tensor(dtype),
            },
        ),
        op(
            "zeros(int[] size, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(size, dtype, _, _): Sized| {
                let dtype = dtype.unwrap_or(default_float());
                Ok(Tensor::zeros(&new_shape("zeros", &size, dtype)?, dtype))
            },
        ).meta(meta::create),
        op(
            "empty(int[] size, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(size, dtype, _, _): Sized| {
                let dtype = dtype.unwrap_or(default_float());
                Ok(Tensor::zeros(&new_shape("empty", &size, dtype)?, dtype))
            },
        ).meta(meta::create),
        op(
            "ones(int[] size, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(size, dtype, _, _): Sized| {
                let dtype = dtype.unwrap_or(default_float());
                Ok(Tensor::full(
                    &new_shape("ones", &size, dtype)?,
                    Scalar::Int(1),
                    dtype,
                ))
            },
        ).meta(meta::create),
        op(
            "full(int[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(size, v, dtype, _, _): (Vec<i64>, Scalar, Option<DType>, Device, bool)| {
                let dtype = dtype.unwrap_or(v.category().default_dtype());
                let shape = new_shape("full", &size, dtype)?;
                Ok(Tensor::full(&shape, Tensor::fill_value(v, dtype)?, dtype))
            },
        ).meta(meta::create),
        op(
            "new_tensor(Tensor input, Data data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            M,
            |(x, data, dtype, _, _): (Tensor, Data, Option<DType>, Device, bool)| {
                data.into_tensor(Some(dtype.unwrap_or(x.dtype())))
            },
        ),
        op(
            "new_zeros(Tensor input, int[] size, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            M,
            |(x, size, dtype, _, _): New| {
                let dtype = dtype.unwrap_or(x.dtype());
                Ok(Tensor::zeros(&new_shape("new_zeros", &size, dtype)?, dtype))
            },
        ).meta(meta::new_like),
        op(
            "new_empty(Tensor input, int[] size, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            M,
            |(x, size, dtype, _, _): New| {
                let dtype = dtype.unwrap_or(x.dtype());
                Ok(Tensor::zeros(&new_shape("new_empty", &size, dtype)?, dtype))
            },
        ).meta(meta::new_like),
        op(
            "new_ones(Tensor input, int[] size, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            M,
            |(x, size, dtype, _, _): New| {
                let dtype = dtype.unwrap_or(x.dtype());
                Ok(Tensor::full(
                    &new_shape("new_ones", &size, dtype)?,
                    Scalar::Int(1),
                    dtype,
                ))
            },
        ).meta(meta::new_like),
        op(
            "new_full(Tensor input, int[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            M,
            |(x, size, v, dtype, _, _): (Tensor, Vec<i64>, Scalar, Option<DType>, Device, bool)| {
                let dtype = dtype.unwrap_or(x.dtype());
                let shape = new_shape("new_full", &size, dtype)?;
                Ok(Tensor::full(&shape, Tensor::fill_value(v, dtype)?, dtype))
            },
        ).meta(meta::new_like),
        op(
            "zeros_like(Tensor input, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False, MemoryFormat? memory_format=None)",
            T,
            |(x, dtype, _, _, format): Like| x.zeros_in(dtype.unwrap_or(x.dtype()), format),
        ).meta(meta::like),
        op(
            "empty_like(Tensor input, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False, MemoryFormat? memory_format=None)",
            T,
            // PyTorch leaves the contents unspecified; here they are the
            // input's values. fxvm has no meta device, so a model built
            // under `torch.device("meta")` holds real tensors, and libraries
            // that then "move" its buffers off meta with `empty_like`
            // (transformers' non-persistent buffers) keep their values.
            |(x, dtype, _, _, format): Like| {
                let t = x.zeros_in(dtype.unwrap_or(x.dtype()), format)?;
                t.copy_from(&x)?;
                Ok(t)
            },
        ).meta(meta::like),
        op(
            "ones_like(Tensor input, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False, MemoryFormat? memory_format=None)",
            T,
            |(x, dtype, _, _, format): Like| {
                let t = x.zeros_in(dtype.unwrap_or(x.dtype()), format)?;
                t.fill(Scalar::Int(1));
                Ok(t)
            },
        ).meta(meta::like),
        op(
            "full_like(Tensor input, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False, MemoryFormat? memory_format=None)",
            T,
            |(x, v, dtype, _, _, format): (Tensor, Scalar, Option<DType>, Device, bool, MemoryFormat)| {
                let dtype = dtype.unwrap_or(x.dtype());
                let t = x.zeros_in(dtype, format)?;
                t.fill(Tensor::fill_value(v, dtype)?);
                Ok(t)
            },
        ).meta(meta::like),
        op(
            "arange(Scalar start, Scalar? end=None, Scalar step=1, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(start, end, step, dtype, _, _): (
                Scalar,
                Option<Scalar>,
                Scalar,
                Option<DType>,
                Device,
                bool,
            )| {
                let (start, end) = match end {
                    Some(end) => (start, end),
                    None => (Scalar::Int(0), start),
                };
                create::arange(start, end, step, dtype)
            },
        ).meta(meta::arange),
        op(
            "linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(start, end, steps, dtype, _, _): (
                Scalar,
                Scalar,
                i64,
                Option<DType>,
                Device,
                bool,
            )| { create::linspace(start.to_f64(), end.to_f64(), steps, dtype) },
        ),
        op(
            "logspace(Scalar start, Scalar end, int steps, float base=10.0, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(start, end, steps, base, dtype, _, _): (
                Scalar,
                Scalar,
                i64,
                f64,
                Option<DType>,
                Device,
                bool,
            )| {
                let (start, end) =
                    create::bounds_in(start.to_f64(), end.to_f64(), dtype.unwrap_or(default_float()));
                let exponents = create::linspace(start, end, steps, Some(DType::F64))?;
                let values: Vec<f64> = exponents
                    .to_vec::<f64>()
                    .into_iter()
                    .map(|e| base.powf(e))
                    .collect();
                let n = values.len();
                Ok(Tensor::from_vec(values, &[n]).to_dtype(dtype.unwrap_or(default_float())))
            },
        ),
        op(
            "eye(int n, int? m=None, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(n, m, dtype, _, _): (i64, Option<i64>, Option<DType>, Device, bool)| {
                let size = |name: &str, v: i64| {
                    usize::try_from(v).map_err(|_| {
                        TensorError::runtime(
                            "eye",
                            format!("{name} must be greater or equal to 0, got {v}"),
                        )
                    })
                };
                let n = size("n", n)?;
                let m = match m {
                    Some(m) => size("m", m)?,
                    None => n,
                };
                Ok(create::eye(n, m, dtype.unwrap_or(default_float())))
            },
        ),
    ]
}
