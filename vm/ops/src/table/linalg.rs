//! Matrix products and contractions.

use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary};
use fxvm_tensor::ops::extremum::{self, Extremum};
use fxvm_tensor::ops::qr::{self, QrMode};
use fxvm_tensor::ops::reduce;
use fxvm_tensor::ops::shape;
use fxvm_tensor::ops::{dense, einsum, linalg, products};
use fxvm_tensor::{Result, Scalar, Tensor, TensorError};

use crate::autograd::ops as o;
use crate::meta;
use crate::op::{NN, Op, Place, TM, op};
use crate::value::{Or, Value};

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

/// `matrix_power(A, n)`: repeated squaring; negative powers invert first.
fn matrix_power(a: &Tensor, n: i64) -> Result<Tensor> {
    let k = a.shape().last().copied().unwrap_or(0);
    if a.ndim() < 2 || a.shape()[a.ndim() - 2] != k {
        return Err(TensorError::runtime(
            "linalg.matrix_power",
            format!(
                "linalg.matrix_power: A must be batches of square matrices, but they are {} by {} matrices",
                a.shape()
                    .get(a.ndim().wrapping_sub(2))
                    .copied()
                    .unwrap_or(0),
                k
            ),
        ));
    }
    // Composite: the products (and inverse) are rows.
    let base = if n < 0 {
        o::call("linalg_inv", vec![Value::Tensor(a.clone())], vec![])?
    } else {
        a.clone()
    };
    let mut result: Option<Tensor> = None;
    let (mut square, mut e) = (base, n.unsigned_abs());
    if e == 0 {
        let eye = fxvm_tensor::ops::create::eye(k, k, a.dtype());
        return Ok(eye.broadcast_to(a.shape())?.contiguous());
    }
    while e > 0 {
        if e & 1 == 1 {
            result = Some(match result {
                None => square.clone(),
                Some(r) => o::matmul(&r, &square)?,
            });
        }
        e >>= 1;
        if e > 0 {
            square = o::matmul(&square, &square)?;
        }
    }
    Ok(result.expect("a positive power multiplies at least once"))
}

/// Which singular values `s` (of the matrices of `a`) count: those above
/// `max(atol, rtol·σ_max)`, rtol defaulting to `max(m, n)·eps` unless a
/// positive `atol` is given — PyTorch's rule for `pinv` and `matrix_rank`.
fn significant(a: &Tensor, s: &Tensor, atol: Option<f64>, rtol: Option<f64>) -> Result<Tensor> {
    let eps = if a.dtype() == fxvm_tensor::DType::F64 {
        f64::EPSILON
    } else {
        f32::EPSILON as f64
    };
    let (m, n) = (a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]);
    let rtol = rtol.unwrap_or(if atol.is_some_and(|t| t > 0.0) {
        0.0
    } else {
        m.max(n) as f64 * eps
    });
    let smax = extremum::extremum(s, Some(&[-1]), true, Extremum::Max)?;
    let relative = ew::binary(Binary::Mul, &smax.into(), &Arg::Scalar(Scalar::Float(rtol)))?;
    let absolute = Tensor::scalar(Scalar::Float(atol.unwrap_or(0.0)), s.dtype());
    let cutoff = ew::binary(Binary::Maximum, &relative.into(), &absolute.into())?;
    ew::binary(Binary::Gt, &s.into(), &cutoff.into())
}

/// `linalg.vander(x, N)`: the powers `x⁰ … x^(N-1)` along a new last dim,
/// as a row of ones and running products (as PyTorch, so integer inputs
/// give int64 and the gradient follows the products).
fn vander(x: &Tensor, n: Option<i64>) -> Result<Tensor> {
    let n = n.unwrap_or(x.shape().last().map_or(0, |&n| n as i64));
    if n <= 1 || x.ndim() == 0 {
        return Err(fxvm_tensor::TensorError::runtime(
            "linalg_vander",
            "N must be greater than 1.",
        ));
    }
    let mut size: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    size.push(n - 1);
    let spread = o::shape::expand(&o::unsqueeze(x, -1)?, &size)?;
    let powers = o::call("cumprod", vec![o::value(&spread), Value::Int(-1)], vec![])?;
    let mut ones_shape = x.shape().to_vec();
    ones_shape.push(1);
    let ones = o::full(&ones_shape, Scalar::Int(1), powers.dtype())?;
    o::cat(&[ones, powers], -1)
}

/// `pinv` via the SVD: `V · diag(1/σ) · Uᵀ` over the significant σ.
fn pinv(a: &Tensor, atol: Option<f64>, rtol: Option<f64>) -> Result<Tensor> {
    let (u, s, vh) = dense::svd(a, false)?;
    let keep = significant(a, &s, atol, rtol)?;
    let reciprocal = ew::binary(Binary::Div, &Arg::Scalar(Scalar::Float(1.0)), &s.into())?;
    let inv_s = ew::where_(&keep, &reciprocal.into(), &Arg::Scalar(Scalar::Float(0.0)))?;
    let v = shape::transpose(&vh, -2, -1)?;
    let scaled = ew::binary(
        Binary::Mul,
        &v.into(),
        &shape::unsqueeze(&inv_s, -2)?.into(),
    )?;
    linalg::matmul(&scaled, &shape::transpose(&u, -2, -1)?)
}

fn matrix_rank(a: &Tensor, atol: Option<f64>, rtol: Option<f64>) -> Result<Tensor> {
    let s = dense::svdvals(a)?;
    let kept = significant(a, &s, atol, rtol)?;
    reduce::sum(&kept, Some(&[-1]), false, None)
}

/// `outer`: composite, `a[:, None] * b[None, :]` (PyTorch's node is the
/// product's).
fn outer(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() != 1 || b.ndim() != 1 {
        return Err(TensorError::runtime(
            "outer",
            "outer: Expected 1-D argument self",
        ));
    }
    o::mul(&o::unsqueeze(a, 1)?, &o::unsqueeze(b, 0)?)
}

/// `inner`: sums over the last dims, `a[..., k]·b[..., k]`, giving
/// `a.shape[:-1] + b.shape[:-1]`.
/// Composite: written in rows.
fn inner(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return o::mul(a, b);
    }
    let (ka, kb) = (a.shape()[a.ndim() - 1], b.shape()[b.ndim() - 1]);
    if ka != kb {
        return Err(TensorError::runtime(
            "inner",
            format!(
                "inner() the last dimension must match on both input tensors but got shapes {:?} and {:?}",
                a.shape(),
                b.shape()
            ),
        ));
    }
    // Rows counted, not inferred: `-1` cannot be read off an empty `k`.
    let rows: usize = b.shape()[..b.ndim() - 1].iter().product();
    let rows_b = o::shape::reshape(b, &[rows as i64, ka as i64])?;
    let product = o::matmul(a, &o::shape::transpose(&rows_b, 0, 1)?)?;
    let mut out: Vec<i64> = a.shape()[..a.ndim() - 1]
        .iter()
        .map(|&s| s as i64)
        .collect();
    out.extend(b.shape()[..b.ndim() - 1].iter().map(|&s| s as i64));
    o::shape::reshape(&product, &out)
}

/// `cross` of 3-vectors along `dim`; composite (written in rows).
fn cross(a: &Tensor, b: &Tensor, dim: i64) -> Result<Tensor> {
    if a.ndim() != b.ndim() {
        return Err(TensorError::runtime(
            "cross",
            "linalg.cross: inputs must have the same number of dimensions.",
        ));
    }
    let shape = fxvm_tensor::layout::broadcast_shapes(a.shape(), b.shape())
        .ok_or_else(|| TensorError::broadcast(a.shape(), b.shape()))?;
    let (a, b) = (o::expand(a, &shape)?, o::expand(b, &shape)?);
    let d = a.dim_strict(dim)?;
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
    if a.dtype() == fxvm_tensor::DType::Bool {
        return Err(TensorError::not_implemented_for("cross", a.dtype()));
    }
    if a.dtype() != b.dtype() {
        return Err(TensorError::runtime(
            "cross",
            format!(
                "expected scalar type {} but found {}",
                fxvm_tensor::error::legacy_name(a.dtype()),
                fxvm_tensor::error::legacy_name(b.dtype())
            ),
        ));
    }
    let at = |t: &Tensor, k: i64| o::shape::narrow(t, d as i64, k, 1);
    let term = |i: i64, j: i64| -> Result<Tensor> {
        o::sub(
            &o::mul(&at(&a, i)?, &at(&b, j)?)?,
            &o::mul(&at(&a, j)?, &at(&b, i)?)?,
        )
    };
    o::cat(&[term(1, 2)?, term(2, 0)?, term(0, 1)?], d as i64)
}

type BlasArgs = (Tensor, Tensor, Tensor, Scalar, Scalar);

fn pair(name: &'static str, a: Tensor, b: Tensor) -> Value {
    Value::ReturnType(name, vec![Value::Tensor(a), Value::Tensor(b)])
}

/// `linalg.vector_norm`: `ord` ∞ / -∞ / 0 / p over `dim` (all dims by default).
/// `amax`/`amin` over `dims` through their rows.
fn extremum(x: &Tensor, dims: &[i64], keepdim: bool, which: Extremum) -> Result<Tensor> {
    let name = match which {
        Extremum::Max => "amax",
        Extremum::Min => "amin",
    };
    o::call(
        name,
        vec![
            Value::Tensor(x.clone()),
            Value::Ints(dims.to_vec()),
            Value::Bool(keepdim),
        ],
        vec![],
    )
}

fn vector_norm(x: &Tensor, ord: f64, dim: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    if !x.dtype().is_float() {
        return Err(TensorError::not_implemented(format!(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}",
            fxvm_tensor::error::legacy_name(x.dtype())
        )));
    }
    let dims = dim.filter(|d| !d.is_empty());
    let abs = o::unary("abs", x)?;
    if ord.is_infinite() {
        let which = if ord > 0.0 {
            Extremum::Max
        } else {
            Extremum::Min
        };
        return extremum(&abs, dims.unwrap_or(&[]), keepdim, which);
    }
    if ord == 0.0 {
        let nonzero = o::to_dtype(&o::cmp_s("ne", &abs, 0.0)?, x.dtype())?;
        return o::sum(&nonzero, dims.unwrap_or(&[]), keepdim);
    }
    o::norm(x, ord, dims, keepdim)
}

/// `linalg.matrix_norm`: Frobenius, nuclear, and the induced 1/∞/2 norms
/// (and their minimum forms) over the two `dim`s.
fn matrix_norm(a: &Tensor, ord: &MatrixOrd, dim: (i64, i64), keepdim: bool) -> Result<Tensor> {
    if a.ndim() < 2 {
        return Err(TensorError::runtime(
            "linalg.matrix_norm",
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.",
        ));
    }
    let (r, c) = (a.dim(dim.0)? as i64, a.dim(dim.1)? as i64);
    let abs = o::unary("abs", a)?;
    let keep = |t: Tensor| -> Result<Tensor> {
        if !keepdim {
            return Ok(t);
        }
        let (lo, hi) = if r < c { (r, c) } else { (c, r) };
        o::unsqueeze(&o::unsqueeze(&t, lo)?, hi)
    };
    match *ord {
        MatrixOrd::Fro => o::norm(a, 2.0, Some(&[r, c]), keepdim),
        MatrixOrd::Nuc => spectral(a, (r, c), |s| o::sum(s, &[-1], false)).and_then(keep),
        MatrixOrd::Num(p) if p.abs() == 2.0 => {
            let which = if p > 0.0 {
                Extremum::Max
            } else {
                Extremum::Min
            };
            spectral(a, (r, c), |s| extremum(s, &[-1], false, which)).and_then(keep)
        }
        MatrixOrd::Num(p) if p.abs() == 1.0 || p.is_infinite() => {
            // Column sums for 1, row sums for ∞; then the max (or min).
            let (sum_dim, pick_dim) = if p.abs() == 1.0 { (r, c) } else { (c, r) };
            let sums = o::sum(&abs, &[sum_dim], keepdim)?;
            let which = if p > 0.0 {
                Extremum::Max
            } else {
                Extremum::Min
            };
            // Without keepdim the summed dim is gone (as PyTorch composes it).
            let pick = if !keepdim && sum_dim < pick_dim {
                pick_dim - 1
            } else {
                pick_dim
            };
            extremum(&sums, &[pick], keepdim, which)
        }
        MatrixOrd::Num(p) => Err(TensorError::runtime(
            "linalg.matrix_norm",
            format!("linalg.matrix_norm: Order {p} not supported."),
        )),
    }
}

/// A reduction of the singular values over the matrices at dims `r`, `c`.
fn spectral(
    a: &Tensor,
    (r, c): (i64, i64),
    reduce_s: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let moved = o::permute(a, &moved_last(a.ndim(), r as usize, c as usize))?;
    reduce_s(&o::call(
        "linalg_svdvals",
        vec![Value::Tensor(moved)],
        vec![],
    )?)
}

/// The permutation that moves dims `r`, `c` to the end.
fn moved_last(n: usize, r: usize, c: usize) -> Vec<i64> {
    (0..n)
        .filter(|&d| d != r && d != c)
        .chain([r, c])
        .map(|d| d as i64)
        .collect()
}

/// A matrix norm's `ord`: a name or a number.
#[derive(Clone, Copy)]
enum MatrixOrd {
    Fro,
    Nuc,
    Num(f64),
}

impl MatrixOrd {
    fn parse(ord: Or<Scalar, String>) -> Result<MatrixOrd> {
        match ord {
            Or::A(p) => Ok(MatrixOrd::Num(p.to_f64())),
            Or::B(s) if s == "fro" => Ok(MatrixOrd::Fro),
            Or::B(s) if s == "nuc" => Ok(MatrixOrd::Nuc),
            Or::B(s) => Err(TensorError::runtime(
                "linalg.matrix_norm",
                format!("linalg.matrix_norm: Order {s} not supported."),
            )),
        }
    }
}

fn dims2(dim: &[i64]) -> Result<(i64, i64)> {
    match dim {
        [a, b] => Ok((*a, *b)),
        _ => Err(TensorError::runtime(
            "linalg.matrix_norm",
            format!("linalg.matrix_norm: dim must be a 2-tuple. Got {dim:?}"),
        )),
    }
}

/// `linalg.norm`: a vector norm of the flattened input, or the norm `ord`
/// and `dim` select (one dim: vector, two: matrix).
fn norm(
    x: &Tensor,
    ord: Option<Or<Scalar, String>>,
    dim: Option<Vec<i64>>,
    keepdim: bool,
) -> Result<Tensor> {
    match (ord, dim) {
        (None, None) => vector_norm(x, 2.0, None, keepdim),
        (None, Some(d)) if d.len() == 2 => matrix_norm(x, &MatrixOrd::Fro, dims2(&d)?, keepdim),
        (None, Some(d)) => vector_norm(x, 2.0, Some(&d), keepdim),
        (Some(o), Some(d)) if d.len() == 2 => {
            matrix_norm(x, &MatrixOrd::parse(o)?, dims2(&d)?, keepdim)
        }
        (Some(Or::A(p)), Some(d)) => vector_norm(x, p.to_f64(), Some(&d), keepdim),
        (Some(o), None) if x.ndim() == 2 => {
            matrix_norm(x, &MatrixOrd::parse(o)?, (-2, -1), keepdim)
        }
        (Some(Or::A(p)), None) if x.ndim() == 1 => vector_norm(x, p.to_f64(), None, keepdim),
        _ => Err(TensorError::runtime(
            "linalg.norm",
            format!(
                "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {}D.",
                x.ndim()
            ),
        )),
    }
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "mv(Tensor input, Tensor vec)",
            TM,
            |(m, v): (Tensor, Tensor)| mv(&m, &v),
        )
        .grad(crate::derivatives::linalg::matmul()),
        op(
            "dot(Tensor input, Tensor tensor)",
            TM,
            |(a, b): (Tensor, Tensor)| dot(&a, &b),
        )
        .grad(crate::derivatives::linalg::matmul()),
        op(
            "vdot(Tensor input, Tensor other)",
            TM,
            |(a, b): (Tensor, Tensor)| dot(&a, &b),
        )
        .grad(crate::derivatives::linalg::matmul()),
        op(
            "inner(Tensor input, Tensor other)",
            TM,
            |(a, b): (Tensor, Tensor)| inner(&a, &b),
        )
        .composite(),
        op(
            "addmv(Tensor input, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, m, v, beta, alpha): BlasArgs| {
                let product = mv(&m, &v)?;
                // PyTorch's empty-matrix shortcut answers `beta * input` in
                // the input's own shape (a 0-d input stays 0-d).
                if m.numel() == 0 && beta.to_f64() != 0.0 {
                    fxvm_tensor::layout::broadcast_shapes(x.shape(), product.shape())
                        .ok_or_else(|| TensorError::broadcast(x.shape(), product.shape()))?;
                    return ew::binary(Binary::Mul, &Arg::Tensor(x), &Arg::Scalar(beta));
                }
                blas_sum(x, product, beta, alpha)
            },
        )
        .grad(crate::derivatives::linalg::blas(crate::derivatives::linalg::Blas::Mv)),
        op(
            "addr(Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, a, b, beta, alpha): BlasArgs| blas_sum(x, linalg::outer(&a, &b)?, beta, alpha),
        )
        .grad(crate::derivatives::linalg::blas(crate::derivatives::linalg::Blas::Outer)),
        op(
            "baddbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, a, b, beta, alpha): BlasArgs| blas_sum(x, linalg::bmm(&a, &b)?, beta, alpha),
        )
        .grad(crate::derivatives::linalg::blas(crate::derivatives::linalg::Blas::Bmm))
        .meta(meta::add_product),
        op(
            "addbmm(Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, a, b, beta, alpha): BlasArgs| {
                let summed =
                    fxvm_tensor::ops::reduce::sum(&linalg::bmm(&a, &b)?, Some(&[0]), false, None)?;
                blas_sum(x, summed, beta, alpha)
            },
        )
        .grad(crate::derivatives::linalg::blas(crate::derivatives::linalg::Blas::SummedBmm)),
        op(
            "cross(Tensor input, Tensor other, int? dim=None)",
            TM,
            |(a, b, dim): (Tensor, Tensor, Option<i64>)| {
                // Without a dim, PyTorch takes the first of size 3.
                let dim = match dim {
                    Some(d) => d,
                    None => match a.shape().iter().position(|&s| s == 3) {
                        Some(d) => d as i64,
                        None => {
                            return Err(TensorError::runtime(
                                "cross",
                                "no dimension of size 3 in input",
                            ));
                        }
                    },
                };
                cross(&a, &b, dim)
            },
        )
        .composite(),
        op(
            "linalg_inv(Tensor A)",
            &[Place::Linalg],
            |(a,): (Tensor,)| dense::inv(&a),
        )
        .grad(crate::derivatives::linalg::inverse("LinalgInvExBackward0")),
        op("inverse(Tensor input)", TM, |(a,): (Tensor,)| {
            dense::inv(&a)
        })
        .grad(crate::derivatives::linalg::inverse("LinalgInvExBackward0")),
        op(
            "linalg_det(Tensor A)",
            &[Place::Linalg],
            |(a,): (Tensor,)| dense::det(&a),
        )
        .grad(crate::derivatives::linalg::det("LinalgDetBackward0")),
        op("det(Tensor input)", TM, |(a,): (Tensor,)| dense::det(&a))
        .grad(crate::derivatives::linalg::det("LinalgDetBackward0")),
        op("logdet(Tensor input)", TM, |(a,): (Tensor,)| {
            let d = dense::det(&a)?;
            ew::unary(fxvm_tensor::ops::elementwise::Unary::Log, &d)
        })
        .grad(crate::derivatives::linalg::log_det("LogdetBackward0", 0)),
        op(
            "linalg_slogdet(Tensor A)",
            &[Place::Linalg],
            |(a,): (Tensor,)| {
                let (s, l) = dense::slogdet(&a)?;
                Ok(pair("linalg_slogdet", s, l))
            },
        )
        .grad(crate::derivatives::linalg::log_det("LinalgSlogdetBackward0", 1)),
        op("slogdet(Tensor input)", TM, |(a,): (Tensor,)| {
            let (s, l) = dense::slogdet(&a)?;
            Ok(pair("slogdet", s, l))
        })
        .grad(crate::derivatives::linalg::log_det("LinalgSlogdetBackward0", 1)),
        op(
            "linalg_solve(Tensor A, Tensor B, *, bool left=True)",
            &[Place::Linalg],
            |(a, b, left): (Tensor, Tensor, bool)| dense::solve(&a, &b, left),
        )
        .grad(crate::derivatives::linalg::solve()),
        op(
            "linalg_cholesky(Tensor A, *, bool upper=False)",
            &[Place::Linalg],
            |(a, upper): (Tensor, bool)| dense::cholesky(&a, upper),
        )
        .grad(crate::derivatives::linalg::cholesky("LinalgCholeskyExBackward0")),
        // Removed from PyTorch: only its refusal remains.
        op(
            "cholesky(Tensor input, bool upper=False)",
            TM,
            |(_a, _upper): (Tensor, bool)| -> Result<Tensor> {
                Err(TensorError::runtime(
                    "cholesky",
                    "This function was deprecated since version 1.9 and is now removed. `torch.cholesky` is deprecated in favor of `torch.linalg.cholesky`.\nL = torch.cholesky(A) should be replaced with:\nL = torch.linalg.cholesky(A)\nU = torch.cholesky(A, upper=True) should be replaced with:\nU = torch.linalg.cholesky(A).mH",
                ))
            },
        )
        .nondiff(),
        op(
            "linalg_eigh(Tensor A, str UPLO='L')",
            &[Place::Linalg],
            |(a, uplo): (Tensor, String)| {
                let (w, v) = dense::eigh(&a, uplo == "U", true)?;
                Ok(pair(
                    "linalg_eigh",
                    w,
                    v.expect("eigenvectors were asked for"),
                ))
            },
        )
        .grad(crate::derivatives::decompositions::eigh()),
        op(
            "linalg_eigvalsh(Tensor A, str UPLO='L')",
            &[Place::Linalg],
            |(a, uplo): (Tensor, String)| Ok(dense::eigh(&a, uplo == "U", false)?.0),
        )
        .grad(crate::derivatives::decompositions::eigvalsh()),
        op(
            "linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None)",
            &[Place::Linalg],
            |(a, full, _driver): (Tensor, bool, Option<String>)| {
                let (u, s, vh) = dense::svd(&a, full)?;
                Ok(Value::ReturnType(
                    "linalg_svd",
                    vec![Value::Tensor(u), Value::Tensor(s), Value::Tensor(vh)],
                ))
            },
        )
        .grad(crate::derivatives::decompositions::linalg_svd()),
        op(
            "linalg_svdvals(Tensor A, *, str? driver=None)",
            &[Place::Linalg],
            |(a, _driver): (Tensor, Option<String>)| dense::svdvals(&a),
        )
        .grad(crate::derivatives::decompositions::svdvals()),
        // The legacy `torch.svd`: reduced by default, and `V` rather than `Vh`.
        op(
            "svd(Tensor input, bool some=True, bool compute_uv=True)",
            TM,
            |(a, some, _uv): (Tensor, bool, bool)| {
                let (u, s, vh) = dense::svd(&a, !some)?;
                let v = shape::transpose(&vh, -2, -1)?;
                Ok(Value::ReturnType(
                    "svd",
                    vec![Value::Tensor(u), Value::Tensor(s), Value::Tensor(v)],
                ))
            },
        )
        .grad(crate::derivatives::decompositions::svd()),
        op(
            "linalg_vector_norm(Tensor x, Scalar ord=2, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            &[Place::Linalg],
            |(x, ord, dim, keepdim, dtype): (
                Tensor,
                Scalar,
                Option<Vec<i64>>,
                bool,
                Option<fxvm_tensor::DType>,
            )| {
                let x = dtype.map_or(x.clone(), |d| x.to_dtype(d));
                vector_norm(&x, ord.to_f64(), dim.as_deref(), keepdim)
            },
        )
        .grad(crate::derivatives::select::vector_norm()),
        op(
            "linalg_matrix_norm(Tensor A, Scalar|str ord='fro', int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            &[Place::Linalg],
            |(a, ord, dim, keepdim, dtype): (
                Tensor,
                Or<Scalar, String>,
                Option<Vec<i64>>,
                bool,
                Option<fxvm_tensor::DType>,
            )| {
                let a = match dtype {
                    Some(d) => o::to_dtype(&a, d)?,
                    None => a,
                };
                let dim = dim.unwrap_or(vec![-2, -1]);
                matrix_norm(&a, &MatrixOrd::parse(ord)?, dims2(&dim)?, keepdim)
            },
        )
        .composite(),
        op(
            "linalg_norm(Tensor A, Scalar|str? ord=None, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            &[Place::Linalg],
            |(a, ord, dim, keepdim, dtype): (
                Tensor,
                Option<Or<Scalar, String>>,
                Option<Vec<i64>>,
                bool,
                Option<fxvm_tensor::DType>,
            )| {
                let a = match dtype {
                    Some(d) => o::to_dtype(&a, d)?,
                    None => a,
                };
                norm(&a, ord, dim, keepdim)
            },
        )
        .composite(),
        op(
            "tensordot(Tensor a, Tensor b, int|Data dims=2, Tensor? out=None)",
            &[Place::TorchFunctional(2)],
            |(a, b, dims, _out): (Tensor, Tensor, Or<i64, crate::value::Data>, Option<Tensor>)| {
                let (da, db): (Vec<i64>, Vec<i64>) = match dims {
                    Or::A(n) if n < 0 => {
                        return Err(TensorError::runtime(
                            "tensordot",
                            format!("tensordot expects dims >= 0, but got dims={n}"),
                        ));
                    }
                    Or::A(n) if n as usize > a.ndim().min(b.ndim()) => {
                        return Err(TensorError::runtime(
                            "tensordot",
                            format!("tensordot expects dims < ndim_a or ndim_b, but got dims={n}"),
                        ));
                    }
                    // The last `n` dims of `a` against the first `n` of `b`.
                    Or::A(n) => ((-n..0).collect(), (0..n).collect()),
                    Or::B(data) => {
                        let v: Vec<i64> = data.into_tensor(Some(fxvm_tensor::DType::I64))?.to_vec();
                        let half = v.len() / 2;
                        (v[..half].to_vec(), v[half..].to_vec())
                    }
                };
                products::tensordot(&a, &b, &da, &db)
            },
        )
        .grad(crate::derivatives::linalg::tensordot()),
        op(
            "linalg_matmul(Tensor input, Tensor other)",
            &[Place::Linalg],
            |(a, b): (Tensor, Tensor)| o::matmul(&a, &b),
        )
        .composite(),
        op(
            "linalg_diagonal(Tensor A, *, int offset=0, int dim1=-2, int dim2=-1)",
            &[Place::Linalg],
            |(a, offset, d1, d2): (Tensor, i64, i64, i64)| {
                o::call(
                    "diagonal",
                    vec![Value::Tensor(a), Value::Int(offset), Value::Int(d1), Value::Int(d2)],
                    vec![],
                )
            },
        )
        .composite(),
        op(
            "linalg_multi_dot(Tensor[] tensors)",
            &[Place::Linalg],
            |(ts,): (Vec<Tensor>,)| {
                let mut it = ts.into_iter();
                let first = it.next().ok_or_else(|| {
                    TensorError::runtime(
                        "linalg.multi_dot",
                        "multi_dot(): expected at least 2 tensors but got 0",
                    )
                })?;
                it.try_fold(first, |acc, t| o::matmul(&acc, &t))
            },
        )
        .composite(),
        op(
            "linalg_matrix_power(Tensor A, int n)",
            &[Place::Linalg],
            |(a, n): (Tensor, i64)| matrix_power(&a, n),
        )
        .composite(),
        op(
            "matrix_power(Tensor input, int n)",
            TM,
            |(a, n): (Tensor, i64)| matrix_power(&a, n),
        )
        .composite(),
        op(
            "linalg_vecdot(Tensor x, Tensor y, *, int dim=-1)",
            &[Place::Linalg],
            |(x, y, dim): (Tensor, Tensor, i64)| {
                if !x.dtype().is_float() {
                    return Err(TensorError::not_implemented(format!(
                        "linalg.vecdot: Expected a floating point or complex tensor as input. Got {}",
                        fxvm_tensor::error::legacy_name(x.dtype())
                    )));
                }
                if x.dtype() != y.dtype() {
                    return Err(TensorError::runtime(
                        "linalg_vecdot",
                        format!(
                            "linalg.vecdot: Expected x and y to have the same dtype, but found x of type {} and y of type {} instead",
                            fxvm_tensor::error::legacy_name(x.dtype()),
                            fxvm_tensor::error::legacy_name(y.dtype())
                        ),
                    ));
                }
                o::sum(&o::mul(&x, &y)?, &[dim], false)
            },
        )
        .composite(),
        op(
            "linalg_pinv(Tensor A, *, float? atol=None, float? rtol=None, bool hermitian=False)",
            &[Place::Linalg],
            |(a, atol, rtol, _h): (Tensor, Option<f64>, Option<f64>, bool)| pinv(&a, atol, rtol),
        )
        .grad(crate::derivatives::decompositions::pinv()),
        op(
            "pinverse(Tensor input, float rcond=1e-15)",
            TM,
            |(a, rcond): (Tensor, f64)| pinv(&a, None, Some(rcond)),
        )
        .grad(crate::derivatives::decompositions::pinv()),
        op(
            "linalg_matrix_rank(Tensor A, *, float? atol=None, float? rtol=None, bool hermitian=False)",
            &[Place::Linalg],
            |(a, atol, rtol, _h): (Tensor, Option<f64>, Option<f64>, bool)| {
                matrix_rank(&a, atol, rtol)
            },
        )
        .nondiff(),
        op(
            "linalg_vander(Tensor x, *, int? N=None)",
            &[Place::Linalg],
            |(x, n): (Tensor, Option<i64>)| vander(&x, n),
        )
        .composite(),
        op(
            "linalg_cross(Tensor input, Tensor other, *, int dim=-1)",
            &[Place::Linalg],
            |(a, b, dim): (Tensor, Tensor, i64)| cross(&a, &b, dim),
        )
        .composite(),
        op(
            "matmul(Tensor input, Tensor other)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::matmul(&a, &b),
        )
        .grad(crate::derivatives::linalg::matmul())
        .meta(meta::product),
        op(
            "mm(Tensor input, Tensor mat2)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::mm(&a, &b),
        )
        .grad(crate::derivatives::linalg::mm("MmBackward0"))
        .meta(meta::product),
        op(
            "bmm(Tensor input, Tensor mat2)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::bmm(&a, &b),
        )
        .grad(crate::derivatives::linalg::mm("BmmBackward0"))
        .meta(meta::product),
        op(
            "ger(Tensor input, Tensor vec2)",
            TM,
            |(a, b): (Tensor, Tensor)| outer(&a, &b),
        )
        .composite(),
        op(
            "outer(Tensor input, Tensor vec2)",
            TM,
            |(a, b): (Tensor, Tensor)| outer(&a, &b),
        )
        .composite(),
        op(
            "addmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, m1, m2, beta, alpha): (Tensor, Tensor, Tensor, Scalar, Scalar)| {
                let prod = linalg::mm(&m1, &m2)?;
                let scaled = ew::binary(Binary::Mul, &Arg::Tensor(prod), &Arg::Scalar(alpha))?;
                let bias = ew::binary(Binary::Mul, &Arg::Tensor(x), &Arg::Scalar(beta))?;
                ew::binary(Binary::Add, &Arg::Tensor(bias), &Arg::Tensor(scaled))
            },
        )
        .grad(crate::derivatives::linalg::addmm())
        .meta(meta::add_product),
        op(
            "linear(Tensor input, Tensor weight, Tensor? bias=None)",
            NN,
            |(x, w, b): (Tensor, Tensor, Option<Tensor>)| linalg::linear(&x, &w, b.as_ref()),
        )
        .grad(crate::derivatives::linalg::linear())
        .meta(meta::linear),
        op(
            "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None)",
            &[Place::Torch, Place::FunctionalIsTorch],
            |(x1, x2, w, b): (Tensor, Tensor, Tensor, Option<Tensor>)| {
                products::bilinear(&x1, &x2, &w, b.as_ref())
            },
        )
        .grad(crate::derivatives::linalg::bilinear()),
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
        )
        .grad(crate::derivatives::decompositions::qr()),
        op(
            "einsum(str equation, Tensor[] *operands) -> Tensor",
            &[Place::TorchFunctional(2)],
            |(equation, operands): (String, Vec<Tensor>)| einsum::einsum(&equation, &operands),
        )
        .grad(crate::derivatives::einsum::einsum())
        .meta(meta::einsum),
    ]
}
