//! Ordering along a dim: `sort`, `argsort`, `topk`, `kthvalue`, `median`.
//!
//! Each 1-d slice is ordered as (value, index) pairs by the algorithm
//! PyTorch's CPU kernel uses for that op, so ties come back with PyTorch's
//! indices: GCC's introsort for `sort`, its `partial_sort`/`nth_element`
//! for `topk`, *Numerical Recipes* quickselect for `kthvalue`; `median`
//! breaks ties by index.

mod introsort;
mod select;

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

type Pair<T> = (T, i64);

fn is_nan<T: Element>(x: T) -> bool {
    x.partial_cmp(&x).is_none()
}

/// Ascending order with NaN last.
fn ascending<T: Element>(a: &Pair<T>, b: &Pair<T>) -> bool {
    (!is_nan(a.0) && is_nan(b.0)) || a.0 < b.0
}

/// Descending order with NaN first.
fn descending<T: Element>(a: &Pair<T>, b: &Pair<T>) -> bool {
    (is_nan(a.0) && !is_nan(b.0)) || a.0 > b.0
}

/// A slice's elements paired with their positions.
fn pairs<T: Element>(row: &[T]) -> Vec<Pair<T>> {
    row.iter().copied().zip(0..).collect()
}

/// Orders every 1-d slice of `t` along `dim`: `order` maps a slice to its
/// ordered (value, index) pairs, of which the first `out_len` are kept.
/// Returns values and int64 indices shaped as `t` with `dim` of `out_len`.
fn along<T: Element>(
    t: &Tensor,
    dim: usize,
    out_len: usize,
    order: impl Fn(&[T]) -> Vec<Pair<T>> + Sync,
) -> (Tensor, Tensor) {
    let last = t.ndim().saturating_sub(1);
    let moved = if t.ndim() == 0 {
        t.clone()
    } else {
        t.with_layout(t.layout().transpose(dim, last))
    };
    let len = moved.shape().get(last).copied().unwrap_or(1);
    let rows = moved.numel().checked_div(len).unwrap_or(0);
    let mut out_shape = moved.shape().to_vec();
    if let Some(d) = out_shape.last_mut() {
        *d = out_len;
    }
    let mut values = vec![T::default(); rows * out_len];
    let mut indices = vec![0i64; rows * out_len];
    moved.with_slice(|data: &[T]| {
        let row = |(r, (vs, is)): (usize, (&mut [T], &mut [i64]))| {
            let ordered = order(&data[r * len..(r + 1) * len]);
            for ((v, i), &(x, j)) in vs.iter_mut().zip(is.iter_mut()).zip(&ordered) {
                *v = x;
                *i = j;
            }
        };
        if out_len == 0 {
        } else if data.len() >= 1 << 14 && rows > 1 {
            values
                .par_chunks_mut(out_len)
                .zip(indices.par_chunks_mut(out_len))
                .enumerate()
                .for_each(row);
        } else {
            values
                .chunks_mut(out_len)
                .zip(indices.chunks_mut(out_len))
                .enumerate()
                .for_each(row);
        }
    });
    let back = |x: Tensor| {
        if x.ndim() == 0 {
            x
        } else {
            x.with_layout(x.layout().transpose(dim, last)).contiguous()
        }
    };
    (
        back(Tensor::from_vec(values, &out_shape)),
        back(Tensor::from_vec(indices, &out_shape)),
    )
}

/// `sort(dim, descending, stable)`: values and their indices along `dim`.
pub fn sort(t: &Tensor, dim: i64, descending: bool, stable: bool) -> Result<(Tensor, Tensor)> {
    let d = t.dim(dim)?;
    let len = t.shape().get(d).copied().unwrap_or(1);
    Ok(with_dtype!(t.dtype(), T => along::<T>(t, d, len, |row| {
        let mut v = pairs(row);
        match (stable, descending) {
            // A stable LSD radix sort of the keys: equal keys (ties, ±0,
            // NaNs) keep their order, as a stable comparison sort's would.
            (true, false) => radsort::sort_by_key(&mut v, |p| radix_key(p.0)),
            (true, true) => radsort::sort_by_key(&mut v, |p| !radix_key(p.0)),
            // Each order its own instance, so the comparisons inline.
            (false, false) => introsort::sort(&mut v, &ascending::<T>),
            (false, true) => introsort::sort(&mut v, &self::descending::<T>),
        }
        v
    })))
}

/// A radix key in the sorts' ascending order: numbers by value, -0.0 with
/// 0.0, NaN last.
fn radix_key<T: Element>(x: T) -> u64 {
    const TOP: u64 = 1 << 63;
    if T::DTYPE.is_float() {
        let f = x.to_f64();
        if f.is_nan() {
            return u64::MAX;
        }
        let bits = if f == 0.0 { 0 } else { f.to_bits() };
        // Negative floats order by the complement of their bits.
        if bits & TOP != 0 { !bits } else { bits | TOP }
    } else {
        (x.to_i64() as u64) ^ TOP
    }
}

/// The values of every 1-d slice along `dim` in ascending order, NaN last
/// (numpy's `sort`): the stable sort's values without its indices.
pub fn sort_values(t: &Tensor, dim: i64) -> Result<Tensor> {
    if t.ndim() == 0 {
        return Ok(t.copy());
    }
    let d = t.dim(dim)?;
    Ok(
        with_dtype!(t.dtype(), T => crate::ops::reduce::along_dim(t, d, |row: &[T], out: &mut [T]| {
            out.copy_from_slice(row);
            radsort::sort_by_key(out, |&x| radix_key(x));
        })),
    )
}

/// `topk(k, dim, largest, sorted)`: as PyTorch, a partial sort when `k` is
/// small next to the slice, else a selection followed (if `sorted`) by a
/// sort of the `k - 1` elements before the k-th.
pub fn topk(t: &Tensor, k: i64, dim: i64, largest: bool, sorted: bool) -> Result<(Tensor, Tensor)> {
    let d = t.dim(dim)?;
    let len = t.shape().get(d).copied().unwrap_or(1);
    let k = usize::try_from(k)
        .ok()
        .filter(|&k| k <= len)
        .ok_or_else(|| TensorError::runtime("topk", "selected index k out of range"))?;
    if t.dtype() == DType::Bool {
        return Err(TensorError::not_implemented(
            "topk does not support bool dtypes on CPU",
        ));
    }
    Ok(with_dtype!(t.dtype(), T => along::<T>(t, d, k, |row| {
        // Each order its own instance, so the comparisons inline.
        if largest {
            top_of_row(row, k, sorted, descending::<T>)
        } else {
            top_of_row(row, k, sorted, ascending::<T>)
        }
    })))
}

fn top_of_row<T: Element>(
    row: &[T],
    k: usize,
    sorted: bool,
    less: impl Fn(&Pair<T>, &Pair<T>) -> bool,
) -> Vec<Pair<T>> {
    if k == 0 {
        Vec::new()
    } else if k * 64 <= row.len() {
        // A partial sort reads each element past the first k once, so
        // they need not be gathered into pairs first.
        let mut top = pairs(&row[..k]);
        introsort::partial_sort_from(&mut top, row[k..].iter().copied().zip(k as i64..), &less);
        top
    } else {
        let mut v = pairs(row);
        introsort::nth_element(&mut v, k - 1, &less);
        if sorted {
            introsort::sort(&mut v[..k - 1], &less);
        }
        v
    }
}

/// Removes (or keeps as size 1) `dim` of a one-element-long result.
fn squeeze_dim(t: Tensor, dim: usize, keepdim: bool) -> Tensor {
    if keepdim || t.ndim() == 0 {
        return t;
    }
    let mut shape = t.shape().to_vec();
    shape.remove(dim);
    t.with_layout(crate::layout::Layout::contiguous(&shape))
}

/// The `k`-th smallest (1-based) of each slice along `dim`, and its index.
pub fn kthvalue(t: &Tensor, k: i64, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
    let d = t.dim(dim)?;
    let len = t.shape().get(d).copied().unwrap_or(1);
    if len == 0 {
        return Err(TensorError::index_error(format!(
            "kthvalue(): Expected reduction dim {d} to have non-zero size."
        )));
    }
    let k = usize::try_from(k)
        .ok()
        .filter(|&k| (1..=len).contains(&k))
        .ok_or_else(|| {
            TensorError::runtime(
                "kthvalue",
                format!("kthvalue(): selected number k out of range for dimension {d}"),
            )
        })?;
    let (v, i) = with_dtype!(t.dtype(), T => along::<T>(t, d, 1, |row| {
        let mut v = pairs(row);
        select::select(&mut v, k - 1, descending::<T>);
        v.swap(0, k - 1);
        v
    }));
    Ok((squeeze_dim(v, d, keepdim), squeeze_dim(i, d, keepdim)))
}

/// Which median: `median` propagates NaN, `nanmedian` skips it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Median {
    Median,
    NanMedian,
}

impl Median {
    fn name(self) -> &'static str {
        match self {
            Median::Median => "median",
            Median::NanMedian => "nanmedian",
        }
    }

    /// Where the lower median of `v` sits once NaNs (sorted last) are
    /// counted or skipped; `None` when the answer is the first NaN.
    fn position<T: Element>(self, v: &[Pair<T>]) -> Option<usize> {
        let nans = v.iter().filter(|p| is_nan(p.0)).count();
        match self {
            Median::Median if nans > 0 => None,
            Median::NanMedian if nans == v.len() => None,
            _ => Some((v.len() - nans - 1) / 2),
        }
    }
}

/// `median(dim)`/`nanmedian(dim)`: the lower median of each slice and its index.
pub fn median_dim(t: &Tensor, dim: i64, keepdim: bool, which: Median) -> Result<(Tensor, Tensor)> {
    let d = t.dim(dim)?;
    let len = t.shape().get(d).copied().unwrap_or(1);
    if len == 0 {
        return Err(TensorError::index_error(format!(
            "{}(): Expected reduction dim {dim} to have non-zero size.",
            which.name()
        )));
    }
    let (v, i) = with_dtype!(t.dtype(), T => along::<T>(t, d, 1, |row| {
        let mut v = pairs(row);
        let at = match which.position(&v) {
            Some(k) => {
                // Ties broken by index: a total order, so the answer does
                // not depend on the selection algorithm.
                introsort::nth_element(&mut v, k, &|a: &Pair<T>, b: &Pair<T>| {
                    ascending(a, b) || (!ascending(b, a) && a.1 < b.1)
                });
                k
            }
            None => v.iter().position(|p| is_nan(p.0)).unwrap_or(0),
        };
        v.swap(0, at);
        v
    }));
    Ok((squeeze_dim(v, d, keepdim), squeeze_dim(i, d, keepdim)))
}

/// `median()`/`nanmedian()` over every element: the lower median as a 0-dim tensor.
pub fn median(t: &Tensor, which: Median) -> Result<Tensor> {
    if t.numel() == 0 {
        return Ok(Tensor::full(
            &[],
            crate::dtype::Scalar::Float(f64::NAN),
            t.dtype(),
        ));
    }
    let flat = t
        .contiguous()
        .with_layout(crate::layout::Layout::contiguous(&[t.numel()]));
    let (v, _) = median_dim(&flat, 0, false, which)?;
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(t: &Tensor) -> Vec<f32> {
        t.to_vec()
    }

    fn ints(t: &Tensor) -> Vec<i64> {
        t.to_vec()
    }

    #[test]
    fn sort_puts_nan_last_ascending_and_first_descending() {
        let x = Tensor::from_vec(vec![3f32, 1., 3., 2., 1., 3., f32::NAN, 2.], &[8]);
        let (v, i) = sort(&x, 0, false, false).unwrap();
        assert_eq!(ints(&i), [1, 4, 3, 7, 0, 2, 5, 6]);
        assert!(floats(&v)[7].is_nan());
        let (_, i) = sort(&x, -1, true, false).unwrap();
        assert_eq!(ints(&i), [6, 0, 2, 5, 3, 7, 1, 4]);
    }

    /// The stable radix sort gives what a stable comparison sort with the
    /// kernel's orders gives: ties, -0.0 beside 0.0 and NaN payloads in
    /// their input order, both directions, every key type's range.
    #[test]
    fn stable_radix_sorts_equal_a_stable_comparison_sort() {
        let nan2 = f64::from_bits(0x7ff8_0000_0000_0002);
        let floats = vec![
            3.0,
            -0.0,
            f64::NAN,
            0.0,
            -1.5,
            nan2,
            0.0,
            f64::NEG_INFINITY,
            -0.0,
            3.0,
            f64::INFINITY,
            -1.5,
            1e-300,
            -1e-300,
            f64::MAX,
            f64::MIN,
        ];
        let ints = vec![i64::MAX, -1, 0, i64::MIN, 5, -1, 0, 7, i64::MIN + 1];
        fn check<T: Element>(values: Vec<T>) {
            let n = values.len();
            let t = Tensor::from_vec(values.clone(), &[n]);
            for descending in [false, true] {
                let mut want = pairs(&values);
                want.sort_by(|a, b| {
                    let less = if descending {
                        self::descending(a, b)
                    } else {
                        ascending(a, b)
                    };
                    let greater = if descending {
                        self::descending(b, a)
                    } else {
                        ascending(b, a)
                    };
                    less.cmp(&false).reverse().then(greater.cmp(&false))
                });
                let (v, i) = sort(&t, 0, descending, true).unwrap();
                let got_i = i.to_vec::<i64>();
                let want_i: Vec<i64> = want.iter().map(|p| p.1).collect();
                assert_eq!(got_i, want_i, "{:?} descending={descending}", T::DTYPE);
                let bits = |x: &T| format!("{x:?}");
                let got_v: Vec<String> = v.to_vec::<T>().iter().map(bits).collect();
                let want_v: Vec<String> = want.iter().map(|p| bits(&p.0)).collect();
                assert_eq!(got_v, want_v);
            }
            let values_only = sort_values(&t, 0).unwrap().to_vec::<T>();
            let (v, _) = sort(&t, 0, false, true).unwrap();
            assert_eq!(format!("{values_only:?}"), format!("{:?}", v.to_vec::<T>()));
        }
        check(floats.clone());
        check(floats.iter().map(|&x| x as f32).collect());
        check(floats.iter().map(|&x| half::f16::from_f64(x)).collect());
        check(ints.clone());
        check(ints.iter().map(|&x| x as i8).collect());
        check(ints.iter().map(|&x| x as u8).collect());
        check(vec![true, false, true, false]);
    }

    #[test]
    fn sort_works_along_any_dim() {
        let x = Tensor::from_vec(vec![3i64, 1, 2, 4, 0, 5], &[2, 3]);
        let (v, i) = sort(&x, 0, false, true).unwrap();
        assert_eq!(v.to_vec::<i64>(), [3, 0, 2, 4, 1, 5]);
        assert_eq!(ints(&i), [0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn topk_picks_pytorchs_indices_for_ties() {
        let x = Tensor::from_vec(vec![3f32, 1., 3., 2., 1., 3., f32::NAN, 2.], &[8]);
        let (_, i) = topk(&x, 4, 0, true, true).unwrap();
        assert_eq!(ints(&i), [6, 0, 5, 2]);
        let (v, i) = topk(&x, 4, 0, false, true).unwrap();
        assert_eq!(floats(&v), [1., 1., 2., 2.]);
        assert_eq!(ints(&i), [1, 4, 3, 7]);
        assert!(topk(&x, 9, 0, true, true).is_err());
    }

    #[test]
    fn kthvalue_and_median_report_pytorchs_index_among_ties() {
        // PyTorch 2.15: [kthvalue(y, k).indices for k in 1..=n], median(y, 0).indices.
        let cases: [(&[f32], &[i64], i64); 3] = [
            (&[2., 0., 2., 0., 1.], &[1, 3, 4, 0, 2], 4),
            (
                &[0., 1., 1., 1., 0., 2., 2., 0.],
                &[4, 7, 0, 3, 1, 2, 6, 5],
                1,
            ),
            (
                &[
                    0., 1., 2., 0., 0., 2., 0., 2., 2., 2., 2., 2., 2., 1., 2., 0., 0.,
                ],
                &[16, 6, 15, 0, 4, 3, 1, 13, 14, 10, 2, 5, 12, 9, 11, 7, 8],
                2,
            ),
        ];
        for (y, kth, med) in cases {
            let y = Tensor::from_vec(y.to_vec(), &[y.len()]);
            for (k, &want) in (1..).zip(kth) {
                assert_eq!(ints(&kthvalue(&y, k, 0, false).unwrap().1), [want], "k={k}");
            }
            assert_eq!(
                ints(&median_dim(&y, 0, false, Median::Median).unwrap().1),
                [med]
            );
        }
    }

    #[test]
    fn kthvalue_and_median_select_the_lower_middle() {
        let x = Tensor::from_vec(vec![3f32, 1., 3., 2.], &[4]);
        let (v, i) = kthvalue(&x, 3, 0, false).unwrap();
        assert_eq!((floats(&v), ints(&i)), (vec![3.], vec![2]));
        let (v, i) = median_dim(&x, 0, true, Median::Median).unwrap();
        assert_eq!(v.shape(), [1]);
        assert_eq!((floats(&v), ints(&i)), (vec![2.], vec![3]));
        let y = Tensor::from_vec(vec![1f32, f32::NAN, 3.], &[3]);
        assert!(floats(&median(&y, Median::Median).unwrap())[0].is_nan());
        assert_eq!(floats(&median(&y, Median::NanMedian).unwrap()), [1.]);
    }
}
