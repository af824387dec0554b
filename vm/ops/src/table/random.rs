//! Random: sampled tensors and in-place random fills, each drawing from the
//! generator passed as `generator=` or the default one, as PyTorch does.

use fxvm_tensor::dtype::default_float;
use fxvm_tensor::layout::MemoryFormat;
use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary};
use fxvm_tensor::random::multinomial::multinomial;
use fxvm_tensor::random::{Generator, fill};
use fxvm_tensor::{DType, Result, Scalar, Tensor, TensorError};

use super::create::{Like, new_shape};
use super::{bin, maybe_in_place};
use crate::meta;
use crate::op::{M, Op, Place, T, TM, op};
use crate::value::{Device, Or, Value};

type Sampled = (Vec<i64>, Generator, Option<DType>, Device, bool);

/// An in-place fill's end: `x` itself.
fn filled(done: Result<()>) -> Result<Value> {
    done.map(|()| Value::Input(0))
}

/// A new tensor of `shape` and `dtype`, filled by `f`.
fn fresh(shape: &[usize], dtype: DType, f: impl FnOnce(&Tensor) -> Result<()>) -> Result<Tensor> {
    let t = Tensor::zeros(shape, dtype);
    f(&t)?;
    Ok(t)
}

/// A new tensor shaped like `x` (dtype overridable) in `format`, filled by `f`.
fn like(
    x: &Tensor,
    dtype: Option<DType>,
    format: MemoryFormat,
    f: impl FnOnce(&Tensor) -> Result<()>,
) -> Result<Tensor> {
    let t = x.zeros_in(dtype.unwrap_or(x.dtype()), format)?;
    f(&t)?;
    Ok(t)
}

/// `(high)` or `(low, high)`, as PyTorch's two overloads read them.
fn bounds(low: i64, high: Option<i64>) -> (i64, i64) {
    match high {
        Some(high) => (low, high),
        None => (0, low),
    }
}

/// What rrelu multiplies its input by: slopes drawn from `[lower, upper]`
/// for the elements ≤ 0 in training, their mean otherwise (a leaky relu);
/// 1 for the other elements.
fn rrelu_slopes(
    x: &Tensor,
    lower: f64,
    upper: f64,
    training: bool,
    g: &Generator,
) -> Result<Tensor> {
    if lower > upper {
        return Err(TensorError::runtime(
            "rrelu",
            "Lower bound should be less than or equal to the upper bound",
        ));
    }
    // Training draws through a kernel without float16; evaluation is a
    // leaky relu, floats only.
    let (kernel, dtypes) = if training {
        (
            "rrelu_with_noise_out_cpu",
            [DType::F32, DType::F64, DType::BF16].as_slice(),
        )
    } else {
        ("leaky_relu_cpu", crate::kernels::FLOATING)
    };
    if !dtypes.contains(&x.dtype()) {
        return Err(TensorError::not_implemented_for(kernel, x.dtype()));
    }
    if training {
        return fill::rrelu_slopes(x, lower, upper, g);
    }
    let full = |v: f64| Tensor::full(&[], Scalar::Float(v), x.dtype());
    ew::where_(
        &bin(Binary::Gt, x, 0.0)?,
        &Arg::Tensor(full(1.0)),
        &Arg::Tensor(full((lower + upper) / 2.0)),
    )
}

/// An rrelu row's slopes and whether it writes in place: `F.rrelu(input,
/// lower, upper, training, inplace)` and `torch.rrelu_(input, lower, upper,
/// training, generator)`.
fn rrelu_call(values: &[Value]) -> Result<(Tensor, bool)> {
    let (Value::Tensor(x), Value::Float(lower), Value::Float(upper), Value::Bool(training)) =
        (&values[0], &values[1], &values[2], &values[3])
    else {
        return Err(invalid("rrelu"));
    };
    let (g, in_place) = match &values[4] {
        Value::Bool(in_place) => (Generator::default_cpu(), *in_place),
        Value::Generator(g) => (g.clone(), true),
        _ => (Generator::default_cpu(), true),
    };
    Ok((rrelu_slopes(x, *lower, *upper, *training, &g)?, in_place))
}

fn rrelu(x: &Tensor, lower: f64, upper: f64, training: bool, g: &Generator) -> Result<Tensor> {
    bin(Binary::Mul, x, rrelu_slopes(x, lower, upper, training, g)?)
}

fn invalid(op: &'static str) -> TensorError {
    TensorError::Argument {
        op,
        message: "received an invalid combination of arguments".into(),
    }
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "rand(int[] size, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(size, g, dtype, _, _): Sampled| {
                let dtype = dtype.unwrap_or(default_float());
                fresh(&new_shape("rand", &size, dtype)?, dtype, |t| {
                    fill::uniform_(t, 0.0, 1.0, &g)
                })
            },
        ).meta(meta::create),
        op(
            "randn(int[] size, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(size, g, dtype, _, _): Sampled| {
                let dtype = dtype.unwrap_or(default_float());
                fresh(&new_shape("randn", &size, dtype)?, dtype, |t| {
                    fill::normal_(t, 0.0, 1.0, &g)
                })
            },
        ).meta(meta::create),
        op(
            "randint(int? low=None, int|int[]? high=None, int[]? size=None, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(low, high, size, g, dtype, _, _): (
                Option<i64>,
                Option<Or<i64, Vec<i64>>>,
                Option<Vec<i64>>,
                Generator,
                Option<DType>,
                Device,
                bool,
            )| {
                // PyTorch's two overloads: (low, high, size) and (high, size),
                // positional or by keyword.
                let (low, high, size) = match (low, high, size) {
                    (Some(low), Some(Or::A(high)), Some(size)) => (low, high, size),
                    (Some(high), Some(Or::B(size)), None)
                    | (Some(high), None, Some(size))
                    | (None, Some(Or::A(high)), Some(size)) => (0, high, size),
                    _ => return Err(invalid("randint")),
                };
                let dtype = dtype.unwrap_or(DType::I64);
                fresh(&new_shape("randint", &size, dtype)?, dtype, |t| {
                    fill::random_(t, low, Some(high), &g)
                })
            },
        ),
        op(
            "randperm(int n, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(n, g, dtype, _, _): (i64, Generator, Option<DType>, Device, bool)| {
                let n = usize::try_from(n).map_err(|_| {
                    TensorError::runtime("randperm", format!("n must be non-negative, got{n}"))
                })?;
                let dtype = dtype.unwrap_or(DType::I64);
                if dtype == DType::Bool {
                    return Err(TensorError::not_implemented_for("randperm", dtype));
                }
                Ok(fill::randperm(n, dtype, &g))
            },
        ),
        op(
            "rand_like(Tensor input, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False, MemoryFormat? memory_format=None)",
            T,
            |(x, dtype, _, _, format): Like| {
                like(&x, dtype, format, |t| {
                    fill::uniform_(t, 0.0, 1.0, &Generator::default_cpu())
                })
            },
        ).meta(meta::like),
        op(
            "randn_like(Tensor input, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False, MemoryFormat? memory_format=None)",
            T,
            |(x, dtype, _, _, format): Like| {
                like(&x, dtype, format, |t| {
                    fill::normal_(t, 0.0, 1.0, &Generator::default_cpu())
                })
            },
        ).meta(meta::like),
        op(
            "randint_like(Tensor input, int low, int? high=None, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False, MemoryFormat? memory_format=None)",
            T,
            |(x, low, high, dtype, _, _, format): (
                Tensor,
                i64,
                Option<i64>,
                Option<DType>,
                Device,
                bool,
                MemoryFormat,
            )| {
                let (low, high) = bounds(low, high);
                like(&x, dtype, format, |t| {
                    fill::random_(t, low, Some(high), &Generator::default_cpu())
                })
            },
        ),
        op(
            "normal(Tensor|float mean, Tensor|float std=1.0, int[]? size=None, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None, bool requires_grad=False)",
            T,
            |(mean, std, size, g, dtype, _, _): (
                Or<Tensor, f64>,
                Or<Tensor, f64>,
                Option<Vec<i64>>,
                Generator,
                Option<DType>,
                Device,
                bool,
            )| {
                match (mean, std, size) {
                    (Or::B(mean), Or::B(std), Some(size)) => {
                        let dtype = dtype.unwrap_or(default_float());
                        fresh(&new_shape("normal", &size, dtype)?, dtype, |t| {
                            fill::normal_(t, mean, std, &g)
                        })
                    }
                    // A tensor mean: normal(0, std) draws shifted by it.
                    (Or::A(mean), Or::B(std), None) => {
                        let t = like(&mean, None, MemoryFormat::Preserve, |t| fill::normal_(t, 0.0, std, &g))?;
                        bin(Binary::Add, t, mean)
                    }
                    // A tensor std: standard draws scaled by it, then shifted.
                    (mean, Or::A(std), None) => {
                        let shape = match &mean {
                            Or::A(m) => {
                                fxvm_tensor::layout::broadcast_shapes(m.shape(), std.shape())
                                    .ok_or_else(|| invalid("normal"))?
                            }
                            Or::B(_) => std.shape().to_vec(),
                        };
                        let t = fresh(&shape, std.dtype(), |t| fill::normal_(t, 0.0, 1.0, &g))?;
                        let mean: Arg = match mean {
                            Or::A(m) => m.into(),
                            Or::B(m) => m.into(),
                        };
                        bin(Binary::Add, bin(Binary::Mul, t, std)?, mean)
                    }
                    _ => Err(invalid("normal")),
                }
            },
        ),
        op(
            "bernoulli(Tensor input, float? p=None, *, Generator? generator=None)",
            TM,
            |(x, p, g): (Tensor, Option<f64>, Generator)| match p {
                Some(p) => like(&x, None, MemoryFormat::Preserve, |t| fill::bernoulli_(t, p, &g)),
                None => fill::bernoulli(&x, &g),
            },
        ),
        op(
            "multinomial(Tensor input, int num_samples, bool replacement=False, *, Generator? generator=None)",
            TM,
            |(x, n, replacement, g): (Tensor, i64, bool, Generator)| {
                multinomial(&x, n, replacement, &g)
            },
        ),
        op(
            "uniform_(Tensor(a!) input, float from=0, float to=1, *, Generator? generator=None)",
            M,
            |(x, from, to, g): (Tensor, f64, f64, Generator)| {
                filled(fill::uniform_(&x, from, to, &g))
            },
        ),
        op(
            "normal_(Tensor(a!) input, float mean=0, float std=1, *, Generator? generator=None)",
            M,
            |(x, mean, std, g): (Tensor, f64, f64, Generator)| {
                filled(fill::normal_(&x, mean, std, &g))
            },
        ),
        op(
            "random_(Tensor(a!) input, int? from=None, int? to=None, *, Generator? generator=None)",
            M,
            |(x, from, to, g): (Tensor, Option<i64>, Option<i64>, Generator)| {
                let range = match (from, to) {
                    (None, None) => (0, None),
                    (Some(to), None) => (0, Some(to)),
                    (from, to) => (from.unwrap_or(0), to),
                };
                filled(fill::random_(&x, range.0, range.1, &g))
            },
        ),
        op(
            "bernoulli_(Tensor(a!) input, Tensor|float p=0.5, *, Generator? generator=None)",
            M,
            |(x, p, g): (Tensor, Or<Tensor, f64>, Generator)| match p {
                Or::B(p) => filled(fill::bernoulli_(&x, p, &g)),
                Or::A(p) => {
                    let drawn =
                        fill::bernoulli(&p.broadcast_to(x.shape())?.to_dtype(DType::F32), &g)?;
                    x.copy_from(&drawn)?;
                    Ok(Value::Input(0))
                }
            },
        ),
        op(
            "exponential_(Tensor(a!) input, float lambd=1, *, Generator? generator=None)",
            M,
            |(x, lambd, g): (Tensor, f64, Generator)| filled(fill::exponential_(&x, lambd, &g)),
        ),
        op(
            "cauchy_(Tensor(a!) input, float median=0, float sigma=1, *, Generator? generator=None)",
            M,
            |(x, median, sigma, g): (Tensor, f64, f64, Generator)| {
                filled(fill::cauchy_(&x, median, sigma, &g))
            },
        ),
        op(
            "log_normal_(Tensor(a!) input, float mean=1, float std=2, *, Generator? generator=None)",
            M,
            |(x, mean, std, g): (Tensor, f64, f64, Generator)| {
                filled(fill::log_normal_(&x, mean, std, &g))
            },
        ),
        op(
            "geometric_(Tensor(a!) input, float p, *, Generator? generator=None)",
            M,
            |(x, p, g): (Tensor, f64, Generator)| filled(fill::geometric_(&x, p, &g)),
        ),
        op(
            "rrelu(Tensor input, float lower=0.125, float upper=0.3333333333333333, bool training=False, bool inplace=False) -> Tensor",
            &[Place::Functional(1)],
            |(x, lower, upper, training, inplace): (Tensor, f64, f64, bool, bool)| {
                maybe_in_place(
                    &x,
                    || rrelu(&x, lower, upper, training, &Generator::default_cpu()),
                    inplace,
                )
            },
        )
        .grad(crate::derivatives::activation::rrelu(rrelu_call)),
        op(
            "rrelu_(Tensor(a!) input, float lower=0.125, float upper=0.3333333333333333, bool training=False, Generator? generator=None)",
            &[Place::Torch, Place::FunctionalIsTorch],
            |(x, lower, upper, training, g): (Tensor, f64, f64, bool, Generator)| {
                super::in_place(&x, || rrelu(&x, lower, upper, training, &g))
            },
        )
        .grad(crate::derivatives::activation::rrelu(rrelu_call)),
    ]
}
