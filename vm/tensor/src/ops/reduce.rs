//! Reductions over dims (`sum mean max …`), scans, and the softmax family.
//!
//! Every reduction first lays the data out as rows — kept dims outer,
//! reduced dims inner — so each kernel is a plain loop over a slice.

use num_traits::Float;
use rayon::prelude::*;

use crate::dtype::{DType, Scalar};
use crate::error::{Result, TensorError, legacy_name};
use crate::storage::{Element, with_dtype};
use crate::tensor::{Tensor, wrap_dim};

use super::rows_per_task;

/// Which dims a reduction removes, and the shape it leaves.
#[derive(Clone, Debug)]
pub struct Plan {
    reduced: Vec<bool>,
    pub out_shape: Vec<usize>,
    pub rows: usize,
    pub row_len: usize,
}

impl Plan {
    /// `dims = None` (or empty) reduces every dim, as PyTorch does.
    pub fn new(t: &Tensor, dims: Option<&[i64]>, keepdim: bool) -> Result<Plan> {
        let ndim = t.ndim();
        let mut reduced = vec![dims.is_none_or(|d| d.is_empty()); ndim];
        for &d in dims.unwrap_or(&[]) {
            let d = wrap_dim(d, ndim)?;
            if ndim > 0 {
                if reduced[d] && dims.is_some_and(|ds| ds.len() > 1) {
                    return Err(TensorError::runtime(
                        "reduce",
                        format!("dim {d} appears multiple times in the list of dims"),
                    ));
                }
                reduced[d] = true;
            }
        }
        let mut out_shape = Vec::new();
        let (mut rows, mut row_len) = (1, 1);
        for (i, &size) in t.shape().iter().enumerate() {
            if reduced[i] {
                row_len *= size;
                if keepdim {
                    out_shape.push(1);
                }
            } else {
                rows *= size;
                out_shape.push(size);
            }
        }
        Ok(Plan {
            reduced,
            out_shape,
            rows,
            row_len,
        })
    }

    /// A view with kept dims outer and reduced dims inner.
    fn rows_view(&self, t: &Tensor) -> Tensor {
        let kept = (0..t.ndim()).filter(|&d| !self.reduced[d]);
        let order: Vec<usize> = kept
            .chain((0..t.ndim()).filter(|&d| self.reduced[d]))
            .collect();
        t.with_layout(t.layout().permute(&order))
    }

    /// For a dense tensor whose reduced dims are some leading dims and
    /// some trailing ones (`sum(0)` of a matrix, a bias gradient summed
    /// over all but channels): `(outer, kept, inner)` element counts, so
    /// element `(o, k, i)` is at `(o·kept + k)·inner + i`. Gathering such
    /// rows would transpose the whole tensor; summing in place reads it once.
    fn outer_runs(&self, t: &Tensor) -> Option<(usize, usize, usize)> {
        if !t.is_contiguous() || self.rows == 0 || self.row_len == 0 {
            return None;
        }
        let shape = t.shape();
        let first_kept = self.reduced.iter().position(|&r| !r)?;
        let after = first_kept
            + self.reduced[first_kept..]
                .iter()
                .take_while(|&&r| !r)
                .count();
        if first_kept == 0 || self.reduced[after..].iter().any(|&r| !r) {
            return None;
        }
        let outer = shape[..first_kept].iter().product();
        let inner = shape[after..].iter().product();
        Some((outer, self.rows, inner))
    }

    /// The sums of each kept position over the reduced elements, in f64,
    /// when the reduced dims lead (see [`Plan::outer_runs`]).
    fn outer_sums<T: Element>(&self, t: &Tensor) -> Option<Vec<f64>> {
        let (outer, kept, inner) = self.outer_runs(t)?;
        let add_block = |mut acc: Vec<f64>, block: &[T]| {
            if inner == 1 {
                add_row(&mut acc, block);
            } else {
                for (a, run) in acc.iter_mut().zip(block.chunks(inner)) {
                    *a += sum_f64(run);
                }
            }
            acc
        };
        Some(t.with_slice(|data: &[T]| {
            let block = kept * inner;
            if data.len() < 1 << 16 || outer == 1 {
                return data.chunks(block).fold(vec![0.0; kept], add_block);
            }
            // Fixed runs of blocks per task, their sums added in order: the
            // same result on every call, and tasks worth a thread (blocks of
            // a bias gradient are a few hundred elements).
            let run = block * rows_per_task(block);
            let partials: Vec<Vec<f64>> = data
                .par_chunks(run)
                .map(|part| part.chunks(block).fold(vec![0.0; kept], add_block))
                .collect();
            let mut total = vec![0.0; kept];
            for part in partials {
                total.iter_mut().zip(part).for_each(|(x, y)| *x += y);
            }
            total
        }))
    }

    /// The sums over the reduced elements divided by `divisor` (1 for a
    /// sum, the count for a mean), as `T`, when they are cheaper in place
    /// than by rows (see [`Plan::outer_runs`]).
    fn outer_sums_as<T: Element>(&self, t: &Tensor, divisor: f64) -> Option<Tensor> {
        let sums = match t.dtype() {
            DType::F32 => self.outer_sums::<f32>(t)?,
            DType::F64 => self.outer_sums::<f64>(t)?,
            _ => return None,
        };
        let out: Vec<T> = sums.into_iter().map(|s| T::from_f64(s / divisor)).collect();
        Some(Tensor::from_vec(out, &self.out_shape))
    }

    /// Reduces each row with `f` into a tensor of the output shape.
    pub fn map_rows<T: Element, U: Element>(
        &self,
        t: &Tensor,
        f: impl Fn(&[T]) -> U + Sync + Send,
    ) -> Tensor {
        let out: Vec<U> = self.rows_view(t).with_slice(|data: &[T]| {
            if self.row_len == 0 {
                (0..self.rows).map(|_| f(&[])).collect()
            } else if data.len() >= 1 << 15 && self.rows > 1 {
                data.par_chunks(self.row_len).map(&f).collect()
            } else {
                data.chunks(self.row_len).map(&f).collect()
            }
        });
        Tensor::from_vec(out, &self.out_shape)
    }
}

/// `acc[k] += row[k]` in f64, compiled per SIMD level (the crate's
/// baseline is SSE2): the inner loop of sums over leading dims.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
fn add_row<T: Element>(acc: &mut [f64], row: &[T]) {
    for (a, x) in acc.iter_mut().zip(row) {
        *a += x.to_f64();
    }
}

/// The dtype `sum`/`prod` accumulate and return: integers and bools become int64.
pub(crate) fn sum_dtype(t: &Tensor, dtype: Option<DType>) -> DType {
    dtype.unwrap_or(if t.dtype().is_float() {
        t.dtype()
    } else {
        DType::I64
    })
}

/// The sum of `xs` in f64, over independent lanes (so it vectorises) and,
/// for long slices, over threads.
pub fn sum_f64<T: Element>(xs: &[T]) -> f64 {
    // Enough independent sums to cover the add latency of several vector registers.
    const LANES: usize = 32;
    // Compiled for each SIMD level (the crate's baseline is SSE2).
    #[multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+fma",
        "x86_64+avx2+fma",
        "aarch64+neon"
    ))]
    fn lanes<T: Element>(xs: &[T]) -> f64 {
        let mut acc = [0.0f64; LANES];
        let mut chunks = xs.chunks_exact(LANES);
        for c in &mut chunks {
            for (a, x) in acc.iter_mut().zip(c) {
                *a += x.to_f64();
            }
        }
        acc.iter().sum::<f64>() + chunks.remainder().iter().map(|x| x.to_f64()).sum::<f64>()
    }
    if xs.len() >= 1 << 17 {
        xs.par_chunks(1 << 15).map(lanes).sum()
    } else {
        lanes(xs)
    }
}

pub fn sum(
    t: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let converted = converted_first(t, dtype);
    let t = converted.as_ref().unwrap_or(t);
    let plan = Plan::new(t, dims, keepdim)?;
    let columns = match sum_dtype(t, dtype) {
        DType::F32 => plan.outer_sums_as::<f32>(t, 1.0),
        DType::F64 => plan.outer_sums_as::<f64>(t, 1.0),
        _ => None,
    };
    if let Some(out) = columns {
        return Ok(out);
    }
    Ok(match sum_dtype(t, dtype) {
        DType::F32 if t.dtype() == DType::F32 => plan.map_rows(t, |r: &[f32]| sum_f64(r) as f32),
        DType::F64 => plan.map_rows(t, |r: &[f64]| sum_f64(r)),
        // float32 from another dtype, and the narrow floats, accumulate wide.
        d if d.is_float() => plan.map_rows(t, |r: &[f64]| sum_f64(r)).to_dtype(d),
        d => plan
            .map_rows(t, |r: &[i64]| {
                r.iter().fold(0i64, |a, &b| a.wrapping_add(b))
            })
            .to_dtype(d),
    })
}

/// `t` converted to an explicit reduction `dtype` first, as PyTorch does
/// (`x.sum(dtype=torch.float16)` sums the float16 values), when that can
/// change the elements; `None` when `t` is reduced as it is.
fn converted_first(t: &Tensor, dtype: Option<DType>) -> Option<Tensor> {
    dtype
        .filter(|&d| d != t.dtype() && (d != DType::I64 || t.dtype().is_float()))
        .map(|d| t.to_dtype(d))
}

pub fn prod(
    t: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let converted = converted_first(t, dtype);
    let t = converted.as_ref().unwrap_or(t);
    let plan = Plan::new(t, dims, keepdim)?;
    Ok(match sum_dtype(t, dtype) {
        DType::F64 => plan.map_rows(t, |r: &[f64]| r.iter().product::<f64>()),
        d if d.is_float() => plan
            .map_rows(t, |r: &[f64]| r.iter().product::<f64>())
            .to_dtype(d),
        d => plan
            .map_rows(t, |r: &[i64]| {
                r.iter().fold(1i64, |a, &b| a.wrapping_mul(b))
            })
            .to_dtype(d),
    })
}

/// Ops that only make sense on floating dtypes name the input's type when refused.
fn float_dtype(op: &'static str, t: &Tensor, dtype: Option<DType>) -> Result<DType> {
    let d = dtype.unwrap_or(t.dtype());
    if !d.is_float() {
        return Err(TensorError::not_implemented(format!(
            "{op}(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
            legacy_name(d)
        )));
    }
    Ok(d)
}

pub fn mean(
    t: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let d = float_dtype("mean", t, dtype)?;
    let plan = Plan::new(t, dims, keepdim)?;
    let n = plan.row_len as f64;
    let columns = match t.dtype() {
        DType::F32 => plan.outer_sums_as::<f32>(t, n),
        _ => plan.outer_sums_as::<f64>(t, n),
    };
    if let Some(out) = columns {
        return Ok(out.to_dtype(d));
    }
    Ok(match t.dtype() {
        DType::F32 => plan.map_rows(t, |r: &[f32]| (sum_f64(r) / n) as f32),
        _ => plan.map_rows(t, |r: &[f64]| sum_f64(r) / n),
    }
    .to_dtype(d))
}

/// `var`/`std` with Bessel's `correction` (1 by default, as PyTorch).
pub fn var(
    t: &Tensor,
    dims: Option<&[i64]>,
    correction: f64,
    keepdim: bool,
    sqrt: bool,
) -> Result<Tensor> {
    let d = float_dtype(if sqrt { "std" } else { "var" }, t, None)?;
    let plan = Plan::new(t, dims, keepdim)?;
    let out = plan.map_rows(t, |r: &[f64]| {
        let n = r.len() as f64;
        let mean = r.iter().sum::<f64>() / n;
        let ss: f64 = r.iter().map(|x| (x - mean) * (x - mean)).sum();
        let v = ss / (n - correction).max(0.0);
        if sqrt { v.sqrt() } else { v }
    });
    Ok(out.to_dtype(d))
}

/// The vector p-norm over `dims` (`p = inf` takes the largest magnitude).
pub fn norm(t: &Tensor, p: f64, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    let d = float_dtype("linalg.vector_norm", t, None)?;
    let plan = Plan::new(t, dims, keepdim)?;
    let out = plan.map_rows(t, |r: &[f64]| {
        if p == f64::INFINITY {
            r.iter().fold(0.0f64, |m, x| m.max(x.abs()))
        } else if p == 0.0 {
            r.iter().filter(|&&x| x != 0.0).count() as f64
        } else if p == 1.0 {
            r.iter().map(|x| x.abs()).sum()
        } else if p == 2.0 {
            r.iter().map(|x| x * x).sum::<f64>().sqrt()
        } else {
            r.iter().map(|x| x.abs().powf(p)).sum::<f64>().powf(1.0 / p)
        }
    });
    Ok(out.to_dtype(d))
}

pub fn all(t: &Tensor, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    let plan = Plan::new(t, dims, keepdim)?;
    Ok(truth_result(
        t,
        plan.map_rows(t, |r: &[bool]| r.iter().all(|&x| x)),
    ))
}

pub fn any(t: &Tensor, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    let plan = Plan::new(t, dims, keepdim)?;
    Ok(truth_result(
        t,
        plan.map_rows(t, |r: &[bool]| r.iter().any(|&x| x)),
    ))
}

/// `all`/`any` answer in bool, except over uint8, which PyTorch answers in
/// uint8 (kept from before it had a bool dtype).
fn truth_result(t: &Tensor, answer: Tensor) -> Tensor {
    if t.dtype() == DType::U8 {
        answer.to_dtype(DType::U8)
    } else {
        answer
    }
}

/// Applies `f` to each 1-d slice along `dim`, writing a slice of the same length.
pub(crate) fn along_dim<T: Element>(
    t: &Tensor,
    dim: usize,
    f: impl Fn(&[T], &mut [T]) + Sync + Send,
) -> Tensor {
    let last = t.ndim() - 1;
    let moved = t.with_layout(t.layout().transpose(dim, last));
    let len = moved.shape()[last].max(1);
    let out = moved.with_slice(|data: &[T]| {
        super::elementwise::build_rows(data.len(), len, |r, o| f(&data[r * len..(r + 1) * len], o))
    });
    let result = Tensor::from_vec(out, moved.shape());
    result
        .with_layout(result.layout().transpose(dim, last))
        .contiguous()
}

pub fn cumsum(t: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
    t.dim(dim)?;
    if t.ndim() == 0 {
        return Ok(t.to_dtype(sum_dtype(t, dtype)));
    }
    let dim = t.dim(dim)?;
    let d = sum_dtype(t, dtype);
    let t = t.to_dtype(d);
    Ok(
        with_dtype!(d, T => along_dim(&t, dim, |i: &[T], o: &mut [T]| {
            // Integers accumulate exactly (wrapping as PyTorch's int64 does), floats in f64.
            if T::DTYPE.is_float() {
                let mut acc = 0.0f64;
                for (x, y) in i.iter().zip(o.iter_mut()) {
                    acc += x.to_f64();
                    *y = T::from_f64(acc);
                }
            } else {
                let mut acc = 0i64;
                for (x, y) in i.iter().zip(o.iter_mut()) {
                    acc = acc.wrapping_add(x.to_i64());
                    *y = T::from_i64(acc);
                }
            }
        })),
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SoftmaxKind {
    Softmax,
    LogSoftmax,
}

impl SoftmaxKind {
    pub fn name(self) -> &'static str {
        match self {
            SoftmaxKind::Softmax => "softmax",
            SoftmaxKind::LogSoftmax => "log_softmax",
        }
    }
}

/// Floats with a slice kernel for `exp(x - shift)`.
pub(crate) trait ExpShifted: Float + Element {
    fn exp_shifted(src: &[Self], shift: Self, dst: &mut [Self]);
}

impl ExpShifted for f32 {
    fn exp_shifted(src: &[f32], shift: f32, dst: &mut [f32]) {
        super::fastmath::exp_shifted(src, shift, dst);
    }
}

impl ExpShifted for f64 {
    fn exp_shifted(src: &[f64], shift: f64, dst: &mut [f64]) {
        dst.iter_mut()
            .zip(src)
            .for_each(|(o, &x)| *o = (x - shift).exp());
    }
}

/// Independent accumulators of [`fold_lanes`]: four 256-bit registers of
/// float32, so each add or max waits on the one four steps back rather than
/// the one before (with 8 the row's max and sum were latency-bound).
const LANES: usize = 32;

/// Folds `xs` over [`LANES`] independent lanes (so the loop vectorises),
/// then the lanes; `init` is `f`'s identity. The last partial chunk is
/// padded with `init` and folded as a whole one, so that short rows (a
/// causal attention's) vectorise too.
#[inline(always)]
fn fold_lanes<F: Float>(xs: &[F], init: F, f: impl Fn(F, F) -> F) -> F {
    let mut acc = [init; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a = f(*a, x);
        }
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut tail = [init; LANES];
        tail[..rest.len()].copy_from_slice(rest);
        for (a, &x) in acc.iter_mut().zip(&tail) {
            *a = f(*a, x);
        }
    }
    // The lanes pairwise (a tree of vector ops, not a chain of 31 scalar
    // ones, which dominated rows of a few dozen elements).
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for i in 0..width {
            acc[i] = f(acc[i], acc[i + width]);
        }
    }
    acc[0]
}

/// One row's softmax, compiled per SIMD level: the max, sum and scaling
/// passes ran as 128-bit SSE2 (the crate's baseline) beside the exp's
/// AVX-512 (with [`LANES`] accumulators, `[1000, 1000]` 410 → 360 µs). The
/// lanes fold in the same order at every level, so the values do not depend
/// on the machine. Returns the row's log-sum-exp (-inf for a row of -inf,
/// whose softmax is then NaN).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub(crate) fn softmax_row<F: ExpShifted>(i: &[F], o: &mut [F], kind: SoftmaxKind) -> F {
    let max = fold_lanes(i, F::neg_infinity(), |m, x| if x > m { x } else { m });
    let max = if max.is_infinite() { F::zero() } else { max };
    F::exp_shifted(i, max, o);
    let sum = fold_lanes(o, F::zero(), |s, y| s + y);
    let log_sum = sum.ln() + max;
    match kind {
        SoftmaxKind::Softmax => {
            let inv = F::one() / sum;
            o.iter_mut().for_each(|y| *y = *y * inv);
        }
        SoftmaxKind::LogSoftmax => {
            i.iter()
                .zip(o.iter_mut())
                .for_each(|(x, y)| *y = *x - log_sum);
        }
    }
    log_sum
}

/// `softmax`/`log_softmax` along `dim`, computed in `dtype` (default: the
/// input's, which must then be floating point, as in PyTorch).
pub fn softmax(t: &Tensor, dim: i64, dtype: Option<DType>, kind: SoftmaxKind) -> Result<Tensor> {
    let d = dtype.unwrap_or(t.dtype());
    let k = t.dim(dim)?;
    if t.numel() == 0 {
        // No kernel runs on an empty tensor, so any dtype passes.
        return Ok(Tensor::zeros(t.shape(), d));
    }
    if !d.is_float() {
        // PyTorch names the kernel by whether `dim` is the last one.
        let last = t.ndim() <= 1 || k + 1 == t.ndim();
        let kernel = if last {
            "lastdim_kernel_impl"
        } else {
            "kernel_impl"
        };
        return Err(TensorError::not_implemented_for(
            format!("{}_{kernel}", kind.name()),
            d,
        ));
    }
    if t.ndim() == 0 {
        let one = if kind == SoftmaxKind::Softmax {
            1.0
        } else {
            0.0
        };
        return Ok(Tensor::scalar(Scalar::Float(one), d));
    }
    let t = t.to_dtype(d);
    Ok(match d {
        DType::F64 => along_dim(&t, k, |i: &[f64], o: &mut [f64]| {
            softmax_row(i, o, kind);
        }),
        // float16/bfloat16 (an explicit dtype=) compute in float32, stored narrow.
        _ => along_dim(&t, k, |i: &[f32], o: &mut [f32]| {
            softmax_row(i, o, kind);
        })
        .narrowed_to(d),
    })
}

pub fn logsumexp(t: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    let d = if t.dtype().is_float() {
        t.dtype()
    } else {
        crate::dtype::default_float()
    };
    let plan = Plan::new(t, Some(dims), keepdim)?;
    let out = plan.map_rows(t, |r: &[f64]| {
        let max = r.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x));
        if max.is_infinite() {
            return max;
        }
        r.iter().map(|x| (x - max).exp()).sum::<f64>().ln() + max
    });
    Ok(out.to_dtype(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Softmax and log-softmax by their definition, in f64.
    fn naive(row: &[f64], kind: SoftmaxKind) -> Vec<f64> {
        let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = row.iter().map(|x| (x - max).exp()).sum();
        row.iter()
            .map(|x| match kind {
                SoftmaxKind::Softmax => (x - max).exp() / sum,
                SoftmaxKind::LogSoftmax => x - max - sum.ln(),
            })
            .collect()
    }

    /// A bias gradient's sum over a long leading dim, split across
    /// threads: the definition's values, bit for bit the same every call.
    #[test]
    fn parallel_sums_over_a_leading_dim_are_exact_and_repeatable() {
        let (n, k) = (1000usize, 130usize);
        let values: Vec<f32> = (0..n * k).map(|i| ((i * 37) % 101) as f32 / 7.0).collect();
        let t = Tensor::from_vec(values.clone(), &[n, k]);
        let first = sum(&t, Some(&[0]), false, None).unwrap().to_vec::<f32>();
        for (c, &got) in first.iter().enumerate() {
            let want: f64 = (0..n).map(|r| values[r * k + c] as f64).sum();
            assert_eq!(got, want as f32, "column {c}");
        }
        for _ in 0..5 {
            let again = sum(&t, Some(&[0]), false, None).unwrap().to_vec::<f32>();
            assert_eq!(again, first);
        }
    }

    #[test]
    fn sums_over_leading_dims_equal_sums_by_rows() {
        // [3, 4, 5]: dims (0), (0, 2), (0, 1) lead or trail the kept ones.
        let values: Vec<f64> = (0..60).map(|i| (i as f64 * 0.7).sin()).collect();
        let t = Tensor::from_vec(values.clone(), &[3, 4, 5]);
        let at = |i: usize, j: usize, k: usize| values[(i * 4 + j) * 5 + k];
        let close = |t: Tensor, expected: Vec<f64>| {
            let got = t.to_vec::<f64>();
            assert!(
                got.iter()
                    .zip(&expected)
                    .all(|(x, y)| (x - y).abs() < 1e-12),
                "{got:?} vs {expected:?}"
            );
        };
        let by_jk: Vec<f64> = (0..20)
            .map(|jk| (0..3).map(|i| at(i, jk / 5, jk % 5)).sum())
            .collect();
        close(sum(&t, Some(&[0]), false, None).unwrap(), by_jk);
        let by_j: Vec<f64> = (0..4)
            .map(|j| (0..15).map(|ik| at(ik / 5, j, ik % 5)).sum())
            .collect();
        close(sum(&t, Some(&[0, 2]), false, None).unwrap(), by_j.clone());
        close(sum(&t, Some(&[-3, -1]), false, None).unwrap(), by_j);
        let by_k: Vec<f64> = (0..5)
            .map(|k| (0..12).map(|ij| at(ij / 4, ij % 4, k)).sum())
            .collect();
        close(sum(&t, Some(&[0, 1]), false, None).unwrap(), by_k);
        let m = mean(&t, Some(&[0, 1]), true, None).unwrap();
        assert_eq!(m.shape(), &[1, 1, 5]);
        let expected: f64 = (0..12).map(|r| values[r * 5]).sum::<f64>() / 12.0;
        assert!((m.to_vec::<f64>()[0] - expected).abs() < 1e-15);
        // Long enough to be split over threads.
        let big = Tensor::from_vec(vec![1.0f32; 300 * 512], &[300, 512]);
        assert_eq!(
            sum(&big, Some(&[0]), false, None).unwrap().to_vec::<f32>(),
            vec![300.0; 512]
        );
    }

    #[test]
    fn softmax_rows_of_every_length_match_the_definition() {
        // Lengths around the lane count, with -inf entries (weight zero).
        for len in [1, 7, 31, 32, 33, 100, 1000] {
            let row: Vec<f64> = (0..len)
                .map(|i| match i % 11 {
                    5 if len > 1 => f64::NEG_INFINITY,
                    k => ((i * 37) % 101) as f64 * 0.13 - 6.0 + k as f64,
                })
                .collect();
            for kind in [SoftmaxKind::Softmax, SoftmaxKind::LogSoftmax] {
                let expected = naive(&row, kind);
                for dtype in [DType::F32, DType::F64] {
                    let t = Tensor::from_vec(row.clone(), &[1, len]).to_dtype(dtype);
                    let got = softmax(&t, -1, None, kind).unwrap().to_vec::<f64>();
                    let tolerance = if dtype == DType::F32 { 1e-5 } else { 1e-12 };
                    for (g, e) in got.iter().zip(&expected) {
                        assert!(
                            g == e || (g - e).abs() <= tolerance * e.abs().max(1.0),
                            "{kind:?} {dtype:?} length {len}: {g} vs {e}"
                        );
                    }
                }
            }
        }
    }
}
