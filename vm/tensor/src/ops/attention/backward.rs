//! Flash attention's backward: per key head and the query heads sharing
//! it, runs of query rows whose weights are recomputed from the forward's
//! log-sum-exp; a causal head's runs skip the keys none of their rows
//! sees, as the forward's do.

use rayon::prelude::*;

use super::heads::{Heads, rows, transposed, with_dense_rows};
use super::weights::{Block, Lse, longest_run, runs, weights};
use super::{Flash, MaskView, PARALLEL_HEADS, Sizes, with_mask};
use crate::ops::linalg::{Real, gemm_into};
use crate::ops::reduce::ExpShifted;
use crate::tensor::Tensor;

/// A key head's index and where its gradients go: its query heads' (dq)
/// and its own (dk, dv).
type KeyHead<'a, T> = (usize, (&'a mut [T], (&'a mut [T], &'a mut [T])));

/// `[dq, dk, dv]` from `[g, q, k, v, out, lse]`.
pub(super) fn backward<T: Real + ExpShifted>(
    operands: [&Tensor; 6],
    a: &Flash,
    z: Sizes,
) -> (Tensor, Tensor, Tensor) {
    let Sizes {
        hq, hk, l, s, e, ..
    } = z;
    let group = z.group();
    let [g, q, k, v, out, lse] = operands;
    let tensors = [g, q, k, v, out].map(with_dense_rows);
    let lse = lse.contiguous();
    let storages = tensors.each_ref().map(|t| t.read());
    let [xg, xq, xk, xv, xo] = std::array::from_fn(|i| {
        Heads::of(&tensors[i], T::slice(&storages[i]).expect("operands are T"))
    });
    let lse_storage = lse.read();
    let xl = T::slice(&lse_storage).expect("operands are T");
    let mut dq = vec![T::zero(); z.b * hq * l * e];
    let mut dk = vec![T::zero(); z.b * hk * s * e];
    let mut dv = vec![T::zero(); z.b * hk * s * e];
    let scale = T::from(a.scale).expect("a scale");
    let run = longest_run(&z, a);
    with_mask(a.mask, &z, |mask: Option<MaskView<T>>| {
        // One key head and the group of query heads that read it.
        let one = |(unit, (dq, (dk, dv))): KeyHead<'_, T>| {
            let (b, kh) = (unit / hk, unit % hk);
            let (mut p, mut ds) = (vec![T::zero(); run * s], vec![T::zero(); run * s]);
            for (gi, dq) in dq.chunks_mut(l * e).enumerate() {
                let h = kh * group + gi;
                let lse = &xl[(b * hq + h) * l..][..l];
                for (rows_at, keys) in runs(&z, a) {
                    let first = rows_at.start;
                    let at = Block {
                        b,
                        h,
                        kh,
                        rows: rows_at.clone(),
                        keys,
                    };
                    let m = rows_at.len();
                    let buffers = [&mut p[..], &mut ds[..]];
                    let read = Lse::Read(&lse[rows_at.clone()]);
                    weights(buffers, &xq, &xk, &z, &at, a, mask.as_ref(), read);
                    let (dk, dv) = (&mut dk[..keys * e], &mut dv[..keys * e]);
                    let gh = xg.rows(b, h, first);
                    gemm_into(keys, e, m, dv, transposed(&p, keys), gh, false, true);
                    let ds = &mut ds[..m * keys];
                    gemm_into(m, keys, e, ds, gh, xv.transposed(b, kh), false, false);
                    for (r, (ds, p)) in ds.chunks_mut(keys).zip(p.chunks(keys)).enumerate() {
                        let i = first + r;
                        let d = xg
                            .row(b, h, i)
                            .iter()
                            .zip(xo.row(b, h, i))
                            .fold(T::zero(), |t, (&x, &y)| t + x * y);
                        for (x, &w) in ds.iter_mut().zip(p) {
                            *x = w * (*x - d) * scale;
                        }
                    }
                    let dq = &mut dq[rows_at.start * e..rows_at.end * e];
                    gemm_into(
                        m,
                        e,
                        keys,
                        dq,
                        rows(ds, keys),
                        xk.rows(b, kh, 0),
                        false,
                        false,
                    );
                    let qh = xq.rows(b, h, first);
                    gemm_into(keys, e, m, dk, transposed(ds, keys), qh, false, true);
                }
            }
        };
        if z.work() >= PARALLEL_HEADS {
            let kv = dk.par_chunks_mut(s * e).zip(dv.par_chunks_mut(s * e));
            dq.par_chunks_mut(group * l * e)
                .zip(kv)
                .enumerate()
                .for_each(one);
        } else {
            let kv = dk.chunks_mut(s * e).zip(dv.chunks_mut(s * e));
            dq.chunks_mut(group * l * e)
                .zip(kv)
                .enumerate()
                .for_each(one);
        }
    });
    (
        Tensor::from_vec(dq, &[z.b, hq, l, e]),
        Tensor::from_vec(dk, &[z.b, hk, s, e]),
        Tensor::from_vec(dv, &[z.b, hk, s, e]),
    )
}
