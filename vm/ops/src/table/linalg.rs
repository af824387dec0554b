//! Matrix products and contractions.

use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary};
use fxvm_tensor::ops::qr::{self, QrMode};
use fxvm_tensor::ops::shape;
use fxvm_tensor::ops::{einsum, linalg, products};
use fxvm_tensor::{Result, Scalar, Tensor, TensorError};

use crate::op::{NN, Op, Place, TM, op};
use crate::value::Value;

/// `beta·input + alpha·product`; with `beta` 0 the input is ignored (its
/// NaNs too), as PyTorch's BLAS-style ops do.
fn blas_sum(x: Tensor, product: Tensor, beta: Scalar, alpha: Scalar) -> Result<Tensor> {
    let scaled = ew::binary(Binary::Mul, &Arg::Tensor(product), &Arg::Scalar(alpha))?;
    if beta.to_f64() == 0.0 {
        let shape = fxvm_tensor::layout::broadcast_shapes(x.shape(), scaled.shape())
            .ok_or_else(|| TensorError::broadcast(x.shape(), scaled.shape()))?;
        return Ok(scaled.broadcast_to(&shape)?.contiguous());
    }
    let bias = ew::binary(Binary::Mul, &Arg::Tensor(x), &Arg::Scalar(beta))?;
    ew::binary(Binary::Add, &Arg::Tensor(bias), &Arg::Tensor(scaled))
}

fn vector(op: &'static str, name: &str, t: &Tensor) -> Result<()> {
    if t.ndim() == 1 {
        return Ok(());
    }
    Err(TensorError::runtime(
        op,
        format!("{op}: Expected 1-D argument {name}, but got {}-D", t.ndim()),
    ))
}

/// `mv`: a matrix times a vector.
fn mv(m: &Tensor, v: &Tensor) -> Result<Tensor> {
    if m.ndim() != 2 || v.ndim() != 1 {
        return Err(TensorError::runtime(
            "mv",
            format!(
                "vector + matrix @ vector expected, got {}, {}, {}",
                1,
                m.ndim(),
                v.ndim()
            ),
        ));
    }
    linalg::matmul(m, v)
}

fn dot(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    vector("dot", "self", a)?;
    vector("dot", "tensor", b)?;
    if a.numel() != b.numel() {
        return Err(TensorError::runtime(
            "dot",
            format!(
                "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                a.numel(),
                b.numel(),
                a.numel(),
                b.numel()
            ),
        ));
    }
    linalg::matmul(a, b)
}

/// `inner`: sums over the last dims, `a[..., k]·b[..., k]`, giving
/// `a.shape[:-1] + b.shape[:-1]`.
fn inner(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return ew::binary(Binary::Mul, &a.into(), &b.into());
    }
    let k = *a.shape().last().unwrap_or(&0) as i64;
    let rows_b = shape::reshape(b, &[-1, k])?;
    let product = linalg::matmul(a, &shape::transpose(&rows_b, 0, 1)?)?;
    let mut out: Vec<i64> = a.shape()[..a.ndim() - 1]
        .iter()
        .map(|&s| s as i64)
        .collect();
    out.extend(b.shape()[..b.ndim() - 1].iter().map(|&s| s as i64));
    shape::reshape(&product, &out)
}

/// `cross` of 3-vectors along `dim`.
fn cross(a: &Tensor, b: &Tensor, dim: i64) -> Result<Tensor> {
    let shape = fxvm_tensor::layout::broadcast_shapes(a.shape(), b.shape())
        .ok_or_else(|| TensorError::broadcast(a.shape(), b.shape()))?;
    let (a, b) = (a.broadcast_to(&shape)?, b.broadcast_to(&shape)?);
    let d = a.dim(dim)?;
    if shape[d] != 3 {
        return Err(TensorError::runtime(
            "cross",
            format!(
                "linalg.cross: inputs dimension {dim} must have length 3. Got {} and {}",
                a.shape()[d],
                b.shape()[d]
            ),
        ));
    }
    let at = |t: &Tensor, k: i64| shape::narrow(t, d as i64, k, 1);
    let term = |i: i64, j: i64| -> Result<Tensor> {
        let left = ew::binary(Binary::Mul, &at(&a, i)?.into(), &at(&b, j)?.into())?;
        let right = ew::binary(Binary::Mul, &at(&a, j)?.into(), &at(&b, i)?.into())?;
        ew::binary(Binary::Sub, &left.into(), &right.into())
    };
    shape::cat(&[term(1, 2)?, term(2, 0)?, term(0, 1)?], d as i64)
}

type BlasArgs = (Tensor, Tensor, Tensor, Scalar, Scalar);

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "mv(Tensor input, Tensor vec)",
            TM,
            |(m, v): (Tensor, Tensor)| mv(&m, &v),
        ),
        op(
            "dot(Tensor input, Tensor tensor)",
            TM,
            |(a, b): (Tensor, Tensor)| dot(&a, &b),
        ),
        op(
            "vdot(Tensor input, Tensor other)",
            TM,
            |(a, b): (Tensor, Tensor)| dot(&a, &b),
        ),
        op(
            "inner(Tensor input, Tensor other)",
            TM,
            |(a, b): (Tensor, Tensor)| inner(&a, &b),
        ),
        op(
            "addmv(Tensor input, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, m, v, beta, alpha): BlasArgs| blas_sum(x, mv(&m, &v)?, beta, alpha),
        ),
        op(
            "addr(Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, a, b, beta, alpha): BlasArgs| blas_sum(x, linalg::outer(&a, &b)?, beta, alpha),
        ),
        op(
            "baddbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, a, b, beta, alpha): BlasArgs| blas_sum(x, linalg::bmm(&a, &b)?, beta, alpha),
        ),
        op(
            "addbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, a, b, beta, alpha): BlasArgs| {
                let summed =
                    fxvm_tensor::ops::reduce::sum(&linalg::bmm(&a, &b)?, Some(&[0]), false, None)?;
                blas_sum(x, summed, beta, alpha)
            },
        ),
        op(
            "cross(Tensor input, Tensor other, int? dim=None)",
            TM,
            |(a, b, dim): (Tensor, Tensor, Option<i64>)| {
                // Without a dim, PyTorch takes the first of size 3.
                let dim = match dim {
                    Some(d) => d,
                    None => a
                        .shape()
                        .iter()
                        .position(|&s| s == 3)
                        .map_or(-1, |d| d as i64),
                };
                cross(&a, &b, dim)
            },
        ),
        op(
            "linalg_cross(Tensor input, Tensor other, *, int dim=-1)",
            &[Place::Linalg],
            |(a, b, dim): (Tensor, Tensor, i64)| cross(&a, &b, dim),
        ),
        op(
            "matmul(Tensor input, Tensor other)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::matmul(&a, &b),
        ),
        op(
            "mm(Tensor input, Tensor mat2)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::mm(&a, &b),
        ),
        op(
            "bmm(Tensor input, Tensor mat2)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::bmm(&a, &b),
        ),
        op(
            "outer(Tensor input, Tensor vec2)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::outer(&a, &b),
        ),
        op(
            "addmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, m1, m2, beta, alpha): (Tensor, Tensor, Tensor, Scalar, Scalar)| {
                let prod = linalg::mm(&m1, &m2)?;
                let scaled = ew::binary(Binary::Mul, &Arg::Tensor(prod), &Arg::Scalar(alpha))?;
                let bias = ew::binary(Binary::Mul, &Arg::Tensor(x), &Arg::Scalar(beta))?;
                ew::binary(Binary::Add, &Arg::Tensor(bias), &Arg::Tensor(scaled))
            },
        ),
        op(
            "linear(Tensor input, Tensor weight, Tensor? bias=None)",
            NN,
            |(x, w, b): (Tensor, Tensor, Option<Tensor>)| linalg::linear(&x, &w, b.as_ref()),
        ),
        op(
            "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None)",
            &[Place::Torch, Place::FunctionalIsTorch],
            |(x1, x2, w, b): (Tensor, Tensor, Tensor, Option<Tensor>)| {
                products::bilinear(&x1, &x2, &w, b.as_ref())
            },
        ),
        op(
            "_grouped_mm(Tensor input, Tensor mat2, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None)",
            &[Place::Torch],
            |(a, b, offs, bias, out_dtype): (
                Tensor,
                Tensor,
                Option<Tensor>,
                Option<Tensor>,
                Option<fxvm_tensor::DType>,
            )| {
                if bias.is_some() {
                    return Err(fxvm_tensor::TensorError::runtime(
                        "_grouped_mm",
                        "Bias not supported yet",
                    ));
                }
                let y = products::grouped_mm(&a, &b, offs.as_ref())?;
                Ok(match out_dtype {
                    Some(d) => y.to_dtype(d),
                    None => y,
                })
            },
        ),
        op(
            "linalg_qr(Tensor A, str mode='reduced')",
            &[Place::Linalg],
            |(a, mode): (Tensor, String)| {
                let (q, r) = qr::qr(&a, QrMode::parse(&mode)?)?;
                Ok(Value::ReturnType(
                    "linalg_qr",
                    vec![Value::Tensor(q), Value::Tensor(r)],
                ))
            },
        ),
        op(
            "einsum(str equation, Tensor[] *operands)",
            &[Place::TorchFunctional(2)],
            |(equation, operands): (String, Vec<Tensor>)| einsum::einsum(&equation, &operands),
        ),
    ]
}
