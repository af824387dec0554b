//! Flash attention's forward: per (batch, query head), runs of query rows
//! turned into weights and multiplied with the values. A causal head's
//! runs skip the keys none of their rows sees.

use rayon::prelude::*;

use super::heads::{Heads, with_dense_rows};
use super::weights::{Block, Lse, as_rows, longest_run, runs, weights};
use super::{Flash, MaskView, PARALLEL_HEADS, Sizes, with_mask};
use crate::ops::linalg::{Real, gemm_into};
use crate::ops::reduce::ExpShifted;
use crate::tensor::Tensor;

pub(super) fn forward<T: Real + ExpShifted>(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    a: &Flash,
    z: Sizes,
) -> (Tensor, Tensor) {
    let Sizes { hq, l, s, e, .. } = z;
    let heads_inner = q.layout().strides[1] < q.layout().strides[2];
    let (q, k, v) = (with_dense_rows(q), with_dense_rows(k), with_dense_rows(v));
    let (sq, sk, sv) = (q.read(), k.read(), v.read());
    let slice = |s| T::slice(s).expect("operands are T");
    let (xq, xk, xv) = (
        Heads::of(&q, slice(&sq)),
        Heads::of(&k, slice(&sk)),
        Heads::of(&v, slice(&sv)),
    );
    let run = longest_run(&z, a);
    let mut out = vec![T::zero(); z.b * hq * l * e];
    let mut lse = vec![T::zero(); z.b * hq * l];
    with_mask(a.mask, &z, |mask: Option<MaskView<T>>| {
        let one = |(bh, (out, lse)): (usize, (&mut [T], &mut [T]))| {
            let (b, h) = (bh / hq, bh % hq);
            let (mut p, mut scores) = (vec![T::zero(); run * s], vec![T::zero(); run * s]);
            for (rows, keys) in runs(&z, a) {
                let at = Block {
                    b,
                    h,
                    kh: h / z.group(),
                    rows: rows.clone(),
                    keys,
                };
                let buffers = [&mut p[..], &mut scores[..]];
                let lse = Lse::Write(&mut lse[rows.clone()]);
                weights(buffers, &xq, &xk, &z, &at, a, mask.as_ref(), lse);
                let dst = &mut out[rows.start * e..rows.end * e];
                let values = xv.rows(b, at.kh, 0);
                gemm_into(
                    rows.len(),
                    e,
                    keys,
                    dst,
                    as_rows(&p, &at),
                    values,
                    false,
                    false,
                );
            }
        };
        if z.work() >= PARALLEL_HEADS {
            let units = out.par_chunks_mut(l * e).zip(lse.par_chunks_mut(l));
            units.enumerate().for_each(one);
        } else {
            let units = out.chunks_mut(l * e).zip(lse.chunks_mut(l));
            units.enumerate().for_each(one);
        }
    });
    // As PyTorch's kernel lays them out: the log-sum-exp by query then head,
    // the output so too when the query's heads are inner to its positions
    // (a [B, L, H, E] projection viewed by heads, as transformers make it).
    let lse = laid_out(Tensor::from_vec(lse, &[z.b, hq, l]), &[0, 2, 1]);
    let out = Tensor::from_vec(out, &[z.b, hq, l, e]);
    match heads_inner {
        true => (laid_out(out, &[0, 2, 1, 3]), lse),
        false => (out, lse),
    }
}

/// A copy of dense `t` with dim `order[0]` outermost in memory.
fn laid_out(t: Tensor, order: &[usize]) -> Tensor {
    let laid = Tensor::zeros_in_order(t.shape(), order, t.dtype());
    laid.copy_from(&t).expect("same shape and dtype");
    laid
}
