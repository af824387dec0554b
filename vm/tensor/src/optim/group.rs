//! Running one parameter's update: its tensors checked against the
//! parameter, their storages locked, and the element loop split over the
//! thread pool when it is long.

use std::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};

use crate::ops::elementwise::{self as ew, Arg, Binary};
use crate::storage::{Element, Storage};
use crate::{DType, Result, Scalar, Tensor, TensorError};

/// The float types updates run in: float16 and bfloat16 parameters are
/// updated through float32 copies, as PyTorch computes them in float32.
pub(crate) trait Real: Element + num_traits::Float {}
impl Real for f32 {}
impl Real for f64 {}

/// One update rule over aligned slices: `W` written (the parameter first,
/// then its state), `R` read (the gradient first). Every slice has the
/// same length; a rule sees any contiguous stretch of the elements.
/// Implementations are `#[inline(always)]`, so each is compiled into the
/// SIMD levels of `leaf`.
pub(crate) trait Kernel<const W: usize, const R: usize>: Sync {
    fn run<F: Real>(&self, write: [&mut [F]; W], read: [&[F]; R]);
}

/// Elements below which splitting the loop costs more than it saves
/// (PyTorch's grain for pointwise kernels).
const GRAIN: usize = 1 << 15;

/// Applies `kernel` to parameter `index` of a group: `write[0]` is the
/// parameter, every other tensor must have its shape and dtype (`names`
/// says what each is, for the error).
pub(crate) fn update<K: Kernel<W, R>, const W: usize, const R: usize>(
    op: &'static str,
    index: usize,
    names: ([&'static str; W], [&'static str; R]),
    write: [&Tensor; W],
    read: [&Tensor; R],
    kernel: &K,
) -> Result<()> {
    let param = write[0];
    let (shape, dtype) = (param.shape(), param.dtype());
    let all = write.iter().zip(names.0).chain(read.iter().zip(names.1));
    for (t, what) in all {
        if t.shape() != shape || t.dtype() != dtype {
            return Err(TensorError::OptimizerState {
                op,
                index,
                what,
                param: (shape.to_vec(), dtype),
                found: (t.shape().to_vec(), t.dtype()),
            });
        }
    }
    if !dtype.is_float() {
        return Err(TensorError::not_implemented_for(op, dtype));
    }
    let direct = write
        .iter()
        .chain(read.iter())
        .all(|t| t.layout().contiguous_range().is_some())
        && distinct(&write, &read);
    match dtype {
        DType::F32 if direct => in_place::<f32, K, W, R>(write, read, kernel),
        DType::F64 if direct => in_place::<f64, K, W, R>(write, read, kernel),
        _ => through_copies(write, read, kernel)?,
    }
    Ok(())
}

/// Whether no two of the tensors share a storage (each is locked once).
fn distinct<const W: usize, const R: usize>(write: &[&Tensor; W], read: &[&Tensor; R]) -> bool {
    let mut seen: Vec<*const _> = write
        .iter()
        .chain(read.iter())
        .map(|t| Arc::as_ptr(t.storage()))
        .collect();
    seen.sort_unstable();
    seen.windows(2).all(|w| w[0] != w[1])
}

/// Dense copies in the compute dtype, updated, then stored back (the
/// written ones): for float16 parameters, strided or overlapping tensors.
fn through_copies<K: Kernel<W, R>, const W: usize, const R: usize>(
    write: [&Tensor; W],
    read: [&Tensor; R],
    kernel: &K,
) -> Result<()> {
    let wide = match write[0].dtype() {
        DType::F64 => DType::F64,
        _ => DType::F32,
    };
    // A cast already makes a dense copy of its own.
    let dense = |t: &Tensor| {
        if t.dtype() == wide {
            t.copy()
        } else {
            t.to_dtype(wide)
        }
    };
    let (w, r) = (write.map(dense), read.map(dense));
    match wide {
        DType::F64 => in_place::<f64, K, W, R>(w.each_ref(), r.each_ref(), kernel),
        _ => in_place::<f32, K, W, R>(w.each_ref(), r.each_ref(), kernel),
    }
    for (t, new) in write.iter().zip(&w) {
        t.copy_from(new)?;
    }
    Ok(())
}

/// The kernel over the tensors' own storages: dense, of type `F`, each its
/// own storage. Locks are taken in storage-address order, as every
/// multi-tensor kernel takes them, so two threads cannot wait on each other.
fn in_place<F: Real, K: Kernel<W, R>, const W: usize, const R: usize>(
    write: [&Tensor; W],
    read: [&Tensor; R],
    kernel: &K,
) {
    let mut order: Vec<(*const _, Result<usize, usize>)> = write
        .iter()
        .enumerate()
        .map(|(i, t)| (Arc::as_ptr(t.storage()), Ok(i)))
        .chain(
            read.iter()
                .enumerate()
                .map(|(i, t)| (Arc::as_ptr(t.storage()), Err(i))),
        )
        .collect();
    order.sort_unstable_by_key(|&(p, _)| p);
    let mut wg: [Option<RwLockWriteGuard<'_, Storage>>; W] = std::array::from_fn(|_| None);
    let mut rg: [Option<RwLockReadGuard<'_, Storage>>; R] = std::array::from_fn(|_| None);
    for (_, which) in order {
        match which {
            Ok(i) => wg[i] = Some(write[i].write()),
            Err(i) => rg[i] = Some(read[i].read()),
        }
    }
    let mut i = 0;
    let w = wg.each_mut().map(|g| {
        let range = write[i].layout().contiguous_range().expect("checked dense");
        i += 1;
        let g = g.as_deref_mut().expect("locked above");
        &mut F::slice_mut(g).expect("checked dtype")[range]
    });
    let mut i = 0;
    let r = rg.each_ref().map(|g| {
        let range = read[i].layout().contiguous_range().expect("checked dense");
        i += 1;
        let g = g.as_deref().expect("locked above");
        &F::slice(g).expect("checked dtype")[range]
    });
    let n = write[0].numel();
    split(n, w, r, kernel);
}

/// Runs the kernel on halves in parallel until each is under the grain.
fn split<F: Real, K: Kernel<W, R>, const W: usize, const R: usize>(
    n: usize,
    w: [&mut [F]; W],
    r: [&[F]; R],
    kernel: &K,
) {
    if n <= GRAIN {
        leaf(kernel, w, r);
        return;
    }
    let mid = n / 2;
    let mut high: [&mut [F]; W] = std::array::from_fn(|_| Default::default());
    let mut i = 0;
    let low = w.map(|s| {
        let (a, b) = s.split_at_mut(mid);
        high[i] = b;
        i += 1;
        a
    });
    let (rl, rh) = (r.map(|s| &s[..mid]), r.map(|s| &s[mid..]));
    rayon::join(
        || split(mid, low, rl, kernel),
        || split(n - mid, high, rh, kernel),
    );
}

/// The kernel compiled for each SIMD level (fused multiply-adds become one
/// instruction and the loops vectorise), picked at run time.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
fn leaf<F: Real, K: Kernel<W, R>, const W: usize, const R: usize>(
    kernel: &K,
    w: [&mut [F]; W],
    r: [&[F]; R],
) {
    kernel.run(w, r)
}

/// `step += 1` on a step-count tensor in its own dtype (float32 in
/// PyTorch's state), returning the new count.
pub(crate) fn advance(step: &Tensor) -> Result<f64> {
    let next = ew::binary(
        Binary::Add,
        &Arg::Tensor(step.clone()),
        &Arg::Scalar(Scalar::Int(1)),
    )?;
    step.assign(&next)?;
    Ok(next.item()?.to_f64())
}

/// A state tensor's single value (`eta`, `mu_product`), as `.item()` reads it.
pub(crate) fn value(t: &Tensor) -> Result<f64> {
    Ok(t.item()?.to_f64())
}

/// `t *= x` in `t`'s own dtype (`x` rounded to it first, as PyTorch's
/// kernels take a Python number).
pub(crate) fn scale(t: &Tensor, x: f64) -> Result<()> {
    let product = ew::binary(
        Binary::Mul,
        &Arg::Tensor(t.clone()),
        &Arg::Scalar(Scalar::Float(x)),
    )?;
    t.assign(&product)
}

/// Sets a one-element state tensor to `x`, rounded to its dtype.
pub(crate) fn set(t: &Tensor, x: f64) -> Result<()> {
    t.assign(&Tensor::scalar(Scalar::Float(x), DType::F64))
}

/// PyTorch's `lerp` of two values: exact at both ends.
#[inline(always)]
pub(crate) fn lerp<F: Real>(a: F, b: F, w: F) -> F {
    if w.abs() < F::from_f64(0.5) {
        w.mul_add(b - a, a)
    } else {
        (a - b).mul_add(F::one() - w, b)
    }
}

/// Checks that every list of a group has one tensor per parameter.
pub(crate) fn check_lengths(op: &'static str, n: usize, lists: &[(&str, usize)]) -> Result<()> {
    match lists.iter().find(|(_, len)| *len != n) {
        None => Ok(()),
        Some((name, len)) => Err(TensorError::runtime(
            op,
            format!("expected {n} tensors in {name}, one per parameter, but got {len}"),
        )),
    }
}
