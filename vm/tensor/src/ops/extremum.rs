//! `max`/`min`/`amax`/`amin`/`argmax`/`argmin`: the extremum of each row
//! of a reduction plan, NaN winning as in PyTorch.
//!
//! A row is read once: a fold over 32 independent lanes keeps each lane's
//! best and whether it saw a NaN (compare-and-select and compare-and-or,
//! which the compiler vectorises; a single running best would be one long
//! dependency chain). An index is then found by a second scan that stops
//! at the first block of lanes holding the answer. A long row is split
//! across threads in fixed blocks.

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

use super::reduce::Plan;

/// Extremum direction for `max`/`min`/`argmax`/`argmin`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extremum {
    Max,
    Min,
}

impl Extremum {
    fn name(self, prefix: &str) -> String {
        match self {
            Extremum::Max => format!("{prefix}max"),
            Extremum::Min => format!("{prefix}min"),
        }
    }
}

/// Lanes of the fold: four AVX-512 registers of f32, enough independent
/// chains to hide the compare's latency.
const LANES: usize = 32;

/// Rows at least this long are split across threads in blocks of `BLOCK`.
const LONG_ROW: usize = 1 << 17;
const BLOCK: usize = 1 << 15;

/// Whether `x` is NaN (always false for integers and bools).
fn is_nan<T: Element>(x: T) -> bool {
    x.partial_cmp(&x).is_none()
}

/// The best of a non-empty run over `LANES` lanes, and whether it holds a
/// NaN; `better(a, b)` says `a` beats `b`.
macro_rules! lanes_scan {
    ($name:ident, $better:tt) => {
        // Compiled for each SIMD level (the crate's baseline is SSE2).
        #[multiversion::multiversion(targets(
            "x86_64+avx512f+avx512vl+fma",
            "x86_64+avx2+fma",
            "aarch64+neon"
        ))]
        fn $name<T: Element>(run: &[T]) -> (T, bool) {
            let pick = |a: T, b: T| if b $better a { b } else { a };
            let mut best = [run[0]; LANES];
            let mut nan = [false; LANES];
            let chunks = run.chunks_exact(LANES);
            let rest = chunks.remainder();
            for c in chunks {
                for ((b, n), &x) in best.iter_mut().zip(&mut nan).zip(c) {
                    *b = pick(*b, x);
                    *n |= is_nan(x);
                }
            }
            let seen = nan.iter().any(|&n| n) || rest.iter().any(|&x| is_nan(x));
            let lanes = best.into_iter().reduce(pick).unwrap_or(run[0]);
            (rest.iter().fold(lanes, |b, &x| pick(b, x)), seen)
        }
    };
}
lanes_scan!(scan_max, >);
lanes_scan!(scan_min, <);

/// [`scan_max`] or [`scan_min`] of a non-empty run.
fn scan<T: Element>(run: &[T], which: Extremum) -> (T, bool) {
    match which {
        Extremum::Max => scan_max(run),
        Extremum::Min => scan_min(run),
    }
}

/// The extremum of a non-empty row; its first NaN if it has one.
pub(crate) fn row_extremum<T: Element>(row: &[T], which: Extremum) -> T {
    let (best, nan) = if row.len() >= LONG_ROW {
        let parts: Vec<(T, bool)> = row.par_chunks(BLOCK).map(|b| scan(b, which)).collect();
        let nan = parts.iter().any(|p| p.1);
        let best = parts.iter().map(|p| p.0).reduce(|a, b| match which {
            Extremum::Max if b > a => b,
            Extremum::Min if b < a => b,
            _ => a,
        });
        (best.unwrap_or(row[0]), nan)
    } else {
        scan(row, which)
    };
    if nan {
        first(row, is_nan).map_or(best, |i| row[i])
    } else {
        best
    }
}

/// The first position where `hit` holds: blocks of `LANES` tested whole
/// (a fold without early exit, which vectorises), the first block with a
/// hit searched.
fn first<T: Element>(row: &[T], hit: impl Fn(T) -> bool) -> Option<usize> {
    let block = row
        .chunks(LANES)
        .position(|c| c.iter().fold(false, |any, &x| any | hit(x)))?;
    let start = block * LANES;
    row[start..].iter().position(|&x| hit(x)).map(|i| start + i)
}

/// Index of the first extremum of a non-empty row (the first NaN, if any).
pub(crate) fn arg_extremum<T: Element>(row: &[T], which: Extremum) -> usize {
    let best = row_extremum(row, which);
    let found = if is_nan(best) {
        first(row, is_nan)
    } else {
        first(row, |x| x == best)
    };
    found.unwrap_or(0)
}

/// An extremum of nothing is undefined. Over chosen dims, PyTorch refuses
/// an empty one as an IndexError naming the dim as given; over everything,
/// an empty tensor as a RuntimeError (IndexError for argmax/argmin).
fn empty_check(op: &str, t: &Tensor, dims: Option<&[i64]>) -> Result<()> {
    match dims {
        Some(dims) if !dims.is_empty() => {
            for &d in dims {
                let k = t.dim(d)?;
                if t.shape().get(k) == Some(&0) {
                    return Err(TensorError::index_error(format!(
                        "{op}(): Expected reduction dim {d} to have non-zero size."
                    )));
                }
            }
            Ok(())
        }
        _ if t.numel() > 0 => Ok(()),
        _ if op.starts_with("arg") => Err(TensorError::index_error(format!(
            "{op}(): Expected reduction dim to be specified for input.numel() == 0."
        ))),
        _ => Err(TensorError::runtime(
            "max",
            format!(
                "{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
            ),
        )),
    }
}

/// `max(dim)`/`min(dim)`: values and int64 indices.
pub fn extremum_dim(
    t: &Tensor,
    dim: i64,
    keepdim: bool,
    which: Extremum,
) -> Result<(Tensor, Tensor)> {
    let plan = Plan::new(t, Some(&[dim]), keepdim)?;
    empty_check(&which.name(""), t, Some(&[dim]))?;
    let indices =
        with_dtype!(t.dtype(), T => plan.map_rows(t, |r: &[T]| arg_extremum(r, which) as i64));
    let values = with_dtype!(t.dtype(), T => plan.map_rows(t, |r: &[T]| row_extremum(r, which)));
    Ok((values, indices))
}

/// `amax`/`amin` (`dims` given, maybe empty), and `max()`/`min()` over
/// everything (`dims` None).
pub fn extremum(
    t: &Tensor,
    dims: Option<&[i64]>,
    keepdim: bool,
    which: Extremum,
) -> Result<Tensor> {
    let plan = Plan::new(t, dims, keepdim)?;
    empty_check(&which.name(if dims.is_some() { "a" } else { "" }), t, dims)?;
    Ok(with_dtype!(t.dtype(), T => plan.map_rows(t, |r: &[T]| row_extremum(r, which))))
}

/// `argmax`/`argmin`; with no dim, the index into the flattened tensor.
pub fn arg_extremum_dim(
    t: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
    which: Extremum,
) -> Result<Tensor> {
    let plan = match dim {
        Some(d) => Plan::new(t, Some(&[d]), keepdim)?,
        None => Plan::new(t, None, keepdim)?,
    };
    let op = which.name("arg");
    if t.dtype() == DType::Bool {
        return Err(TensorError::not_implemented(format!(
            "{op}(): does not support bool input"
        )));
    }
    empty_check(&op, t, dim.as_ref().map(std::slice::from_ref))?;
    Ok(with_dtype!(t.dtype(), T => plan.map_rows(t, |r: &[T]| arg_extremum(r, which) as i64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extrema_over_lane_boundaries_match_a_plain_scan() {
        // Rows around the 32-lane width, extremes placed everywhere, ties,
        // and NaN (which wins, at its first position for arg*).
        for len in [1usize, 7, 31, 32, 33, 64, 65, 100] {
            for at in [0, len / 2, len - 1] {
                let mut row: Vec<f32> = (0..len).map(|i| (i * 7 % 11) as f32).collect();
                row[at] = 50.0;
                assert_eq!(row_extremum(&row, Extremum::Max), 50.0);
                assert_eq!(arg_extremum(&row, Extremum::Max), at, "len {len}");
                row[at] = -50.0;
                assert_eq!(row_extremum(&row, Extremum::Min), -50.0);
                assert_eq!(arg_extremum(&row, Extremum::Min), at);
                row[at] = f32::NAN;
                assert!(row_extremum(&row, Extremum::Max).is_nan());
                assert_eq!(arg_extremum(&row, Extremum::Min), at);
            }
        }
        let ties = [3i64, 9, 1, 9, 9];
        assert_eq!(arg_extremum(&ties, Extremum::Max), 1);
        assert_eq!(row_extremum(&ties, Extremum::Min), 1);
    }

    /// Rows long enough to be split across threads: the extremum and its
    /// first position wherever they fall (first block, a block boundary,
    /// the ragged last block), ties across blocks, and a NaN's payload
    /// kept (the first NaN is returned, not any NaN).
    #[test]
    fn long_rows_split_across_threads_give_the_plain_answer() {
        let len = LONG_ROW * 2 + 77;
        let base: Vec<f32> = (0..len).map(|i| ((i * 37) % 1001) as f32).collect();
        for at in [0, 5, BLOCK - 1, BLOCK, 3 * BLOCK + 1, len - 1] {
            let mut row = base.clone();
            row[at] = 5000.0;
            assert_eq!(row_extremum(&row, Extremum::Max), 5000.0);
            assert_eq!(arg_extremum(&row, Extremum::Max), at, "at {at}");
            row[at] = -1.0;
            assert_eq!(arg_extremum(&row, Extremum::Min), at);
            row[len - 2] = -1.0;
            assert_eq!(arg_extremum(&row, Extremum::Min), at.min(len - 2));
            let quiet = f32::from_bits(0x7fc0_0001);
            row[at] = quiet;
            if at < len - 1 {
                row[len - 1] = f32::NAN;
            }
            let got = row_extremum(&row, Extremum::Min);
            assert_eq!(got.to_bits(), quiet.to_bits(), "at {at}");
            assert_eq!(arg_extremum(&row, Extremum::Max), at);
        }
        let ints: Vec<i64> = (0..len as i64).map(|i| i % 1000 - 500).collect();
        assert_eq!(row_extremum(&ints, Extremum::Max), 499);
        assert_eq!(arg_extremum(&ints, Extremum::Min), 0);
    }
}
