//! Scaled dot-product attention fused per (batch, head), forward and
//! backward — what PyTorch's CPU build runs as flash attention
//! (`_scaled_dot_product_flash_attention_for_cpu` and its backward) for
//! 4-d operands without dropout: per head one product for the scores, each
//! row's softmax over the keys it may see (its log-sum-exp kept), one
//! product with the values. The backward recomputes the weights from the
//! log-sum-exp instead of keeping an L×S matrix per head, as flash
//! attention does. Heads run in parallel when there is enough work, each
//! product on one thread. Other calls take the composed path in
//! [`super::nn::scaled_dot_product_attention`].

use rayon::prelude::*;

use super::linalg::{Matrix, Real, gemm_into};
use super::reduce::{ExpShifted, SoftmaxKind, softmax_row};
use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

/// Heads run in parallel from this many multiply-adds: below it, waking
/// the other threads costs more than the heads (measured: 4 heads of 16
/// queries, 32 dims, 15–45 µs in parallel against 6 alone).
const PARALLEL_HEADS: usize = 1 << 20;

/// What a fused attention reads besides the query, keys and values.
#[derive(Clone, Copy)]
pub struct Flash<'a> {
    /// Added to the scaled scores: the query's dtype, broadcastable to
    /// [batch, query heads, L, S].
    pub mask: Option<&'a Tensor>,
    /// Query `i` sees keys `0..=i` (aligned to the top left).
    pub causal: bool,
    pub scale: f64,
}

/// Whether PyTorch's CPU build runs `scaled_dot_product_attention` on these
/// operands as flash attention: 4-d query [B, Hq, L, E], keys [B, Hk, S, E]
/// and values [B, Hk, S, E] of one floating dtype, no dropout, batches of
/// one size, key heads equal to the query's, one head shared by all, or
/// (`enable_gqa`) groups of query heads sharing one; a mask of bool or the
/// query's dtype that broadcasts to [B, Hq, L, S]; nothing empty.
fn flash_applies(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    dropout_p: f64,
    enable_gqa: bool,
) -> bool {
    let float = matches!(q.dtype(), DType::F32 | DType::F64);
    if ![q, k, v]
        .iter()
        .all(|t| t.ndim() == 4 && t.dtype() == q.dtype())
        || !float
    {
        return false;
    }
    let ([b, hq, l, e], [bk, hk, s, ek], [bv, hv, sv, ev]) = (dims(q), dims(k), dims(v));
    let heads = hk == hq || hk == 1 || (enable_gqa && hk > 0 && hq % hk == 0);
    let mask_fits = mask.is_none_or(|m| {
        (m.dtype() == DType::Bool || m.dtype() == q.dtype())
            && m.ndim() <= 4
            && m.shape()
                .iter()
                .rev()
                .zip([s, l, hq, b])
                .all(|(&d, want)| d == want || d == 1)
    });
    dropout_p == 0.0
        && b == bk
        && b == bv
        && (hk, s, e) == (hv, sv, ek)
        && ev == e
        && heads
        && mask_fits
        && b * hq * l * s * e > 0
}

/// How `scaled_dot_product_attention` runs as flash attention.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FlashForm {
    /// 4-d operands, as they are.
    Batched,
    /// 3-d operands [H, L, E], as one batch (PyTorch unsqueezes them and
    /// squeezes the output).
    Unbatched,
}

/// Whether (and how) PyTorch's CPU build runs `scaled_dot_product_attention`
/// on these operands as flash attention (see [`flash_applies`]).
pub fn flash_form(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    dropout_p: f64,
    enable_gqa: bool,
) -> Option<FlashForm> {
    let unbatched = [q, k, v].iter().all(|t| t.ndim() == 3);
    let batch = |t: &Tensor| match unbatched {
        true => t.with_layout(t.layout().unsqueeze(0)),
        false => t.clone(),
    };
    flash_applies(&batch(q), &batch(k), &batch(v), mask, dropout_p, enable_gqa).then_some(
        match unbatched {
            true => FlashForm::Unbatched,
            false => FlashForm::Batched,
        },
    )
}

/// The scale attention applies by default: 1 / √E.
pub fn default_scale(q: &Tensor) -> f64 {
    1.0 / (*q.shape().last().unwrap_or(&1) as f64).sqrt()
}

/// A mask as flash attention adds it: a boolean one (true: attend) as 0 and
/// -inf of `dtype`, a float one as it is.
pub fn additive_mask(mask: &Tensor, dtype: DType) -> Tensor {
    if mask.dtype() != DType::Bool {
        return mask.clone();
    }
    let values: Vec<f64> = mask
        .to_vec::<bool>()
        .into_iter()
        .map(|keep| if keep { 0.0 } else { f64::NEG_INFINITY })
        .collect();
    Tensor::from_vec(values, mask.shape()).to_dtype(dtype)
}

fn dims(t: &Tensor) -> [usize; 4] {
    let s = t.shape();
    [s[0], s[1], s[2], s[3]]
}

/// The operands' sizes: batch, query heads, key heads, L, S, E.
#[derive(Clone, Copy)]
struct Sizes {
    b: usize,
    hq: usize,
    hk: usize,
    l: usize,
    s: usize,
    e: usize,
}

impl Sizes {
    fn of(op: &'static str, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<Sizes> {
        if [q, k, v].iter().any(|t| t.ndim() != 4) {
            return Err(TensorError::runtime(
                op,
                "scaled_dot_product_attention_flash_attention: Accept only 4 dims inputs shape of {B, H, T, K}",
            ));
        }
        let ([b, hq, l, e], [_, hk, s, _]) = (dims(q), dims(k));
        if !flash_applies(q, k, v, None, 0.0, true) {
            return Err(TensorError::runtime(
                op,
                format!(
                    "scaled_dot_product_attention_flash_attention: query {:?}, key {:?} and value {:?} are not of the form {{B, H, T, K}} with matching sizes",
                    q.shape(),
                    k.shape(),
                    v.shape()
                ),
            ));
        }
        Ok(Sizes { b, hq, hk, l, s, e })
    }

    /// Query heads per key head.
    fn group(&self) -> usize {
        self.hq / self.hk
    }

    fn work(&self) -> usize {
        self.b * self.hq * self.l * self.s * self.e
    }
}

/// The mask read in place, broadcast to [B, Hq, L, S].
struct MaskView<'a, T> {
    data: &'a [T],
    offset: usize,
    strides: [usize; 4],
}

impl<T: Copy> MaskView<'_, T> {
    /// Row `i` of head `h` of batch `b`: `S` values at a stride.
    fn row(&self, b: usize, h: usize, i: usize) -> (&[T], usize) {
        let [sb, sh, si, sj] = self.strides;
        (&self.data[self.offset + b * sb + h * sh + i * si..], sj)
    }
}

/// `softmax(q kᵀ · scale + mask) v` and each query's log-sum-exp of its
/// scaled scores: output [B, Hq, L, E], log-sum-exp [B, Hq, L] (0 for a
/// query that sees no key, whose output is zeros).
pub fn flash_attention(q: &Tensor, k: &Tensor, v: &Tensor, a: &Flash) -> Result<(Tensor, Tensor)> {
    let op = "_scaled_dot_product_flash_attention_for_cpu";
    let z = Sizes::of(op, q, k, v)?;
    check_mask(op, q, a.mask, &z)?;
    match q.dtype() {
        DType::F32 => Ok(forward::<f32>(q, k, v, a, z)),
        _ => Ok(forward::<f64>(q, k, v, a, z)),
    }
}

fn check_mask(op: &'static str, q: &Tensor, mask: Option<&Tensor>, z: &Sizes) -> Result<()> {
    let Some(m) = mask else { return Ok(()) };
    if m.dtype() != q.dtype() {
        return Err(TensorError::runtime(
            op,
            "scaled_dot_product_attention_flash_attention: Attention mask is the same data type as query",
        ));
    }
    m.broadcast_to(&[z.b, z.hq, z.l, z.s]).map(|_| ())
}

/// Runs `f` with the mask's elements and its view as [B, Hq, L, S].
fn with_mask<T: Real, R>(
    mask: Option<&Tensor>,
    z: &Sizes,
    f: impl FnOnce(Option<MaskView<'_, T>>) -> R,
) -> R {
    let Some(m) = mask else { return f(None) };
    let layout = m.layout().broadcast_to(&[z.b, z.hq, z.l, z.s]);
    let storage = m.read();
    let data = T::slice(&storage).expect("the mask has the query's dtype");
    let s = &layout.strides;
    f(Some(MaskView {
        data,
        offset: layout.offset,
        strides: [s[0], s[1], s[2], s[3]],
    }))
}

fn rows<T>(data: &[T], stride: usize) -> Matrix<'_, T> {
    Matrix {
        data,
        row_stride: stride,
        col_stride: 1,
    }
}

/// `m`ᵀ of a row-major matrix with rows of `stride`, read in place.
fn transposed<T>(data: &[T], stride: usize) -> Matrix<'_, T> {
    Matrix {
        data,
        row_stride: 1,
        col_stride: stride,
    }
}

fn forward<T: Real + ExpShifted>(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    a: &Flash,
    z: Sizes,
) -> (Tensor, Tensor) {
    let Sizes { hq, l, s, e, .. } = z;
    let heads_inner = q.layout().strides[1] < q.layout().strides[2];
    let (q, k, v) = (q.contiguous(), k.contiguous(), v.contiguous());
    let (sq, sk, sv) = (q.read(), k.read(), v.read());
    let (xq, xk, xv) = (
        T::slice(&sq).expect("q is T"),
        T::slice(&sk).expect("k is T"),
        T::slice(&sv).expect("v is T"),
    );
    let mut out = vec![T::zero(); z.b * hq * l * e];
    let mut lse = vec![T::zero(); z.b * hq * l];
    with_mask(a.mask, &z, |mask: Option<MaskView<T>>| {
        let one = |(bh, (out, lse)): (usize, (&mut [T], &mut [T]))| {
            let (b, h) = (bh / hq, bh % hq);
            let kv = (b * z.hk + h / z.group()) * s * e;
            let (qh, kh, vh) = (&xq[bh * l * e..], &xk[kv..], &xv[kv..]);
            let (mut p, mut scores) = (vec![T::zero(); l * s], vec![T::zero(); l * s]);
            let buffers = [&mut p[..], &mut scores[..]];
            weights(
                buffers,
                qh,
                kh,
                &z,
                a,
                mask.as_ref(),
                (b, h),
                Lse::Write(lse),
            );
            gemm_into(l, e, s, out, rows(&p, s), rows(vh, e), false, false);
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

/// Each query's log-sum-exp of its scaled scores: written by the forward,
/// read by the backward to recompute the weights without their sums.
enum Lse<'a, T> {
    Write(&'a mut [T]),
    Read(&'a [T]),
}

/// One head's attention weights into `p` [L, S] (its scores, scaled and
/// masked, left in `scores`): each row's softmax over the keys it sees,
/// zeros after them and for a row that sees none (whose log-sum-exp is 0).
#[allow(clippy::too_many_arguments)] // one head's operands and where it sits
fn weights<T: Real + ExpShifted>(
    [p, scores]: [&mut [T]; 2],
    qh: &[T],
    kh: &[T],
    z: &Sizes,
    a: &Flash,
    mask: Option<&MaskView<T>>,
    (b, h): (usize, usize),
    mut lse: Lse<'_, T>,
) {
    let (l, s, e) = (z.l, z.s, z.e);
    gemm_into(
        l,
        s,
        e,
        scores,
        rows(qh, e),
        transposed(kh, e),
        false,
        false,
    );
    let scale = T::from(a.scale).expect("a scale");
    for (i, (x, p)) in scores.chunks_mut(s).zip(p.chunks_mut(s)).enumerate() {
        let seen = if a.causal { (i + 1).min(s) } else { s };
        let (x, (p, unseen)) = (&mut x[..seen], p.split_at_mut(seen));
        scale_and_mask(x, scale, mask, (b, h, i));
        match &mut lse {
            Lse::Read(lse) => T::exp_shifted(x, lse[i], p),
            Lse::Write(lse) => {
                lse[i] = softmax_row(x, p, SoftmaxKind::Softmax);
                if lse[i] == T::neg_infinity() {
                    p.fill(T::zero());
                    lse[i] = T::zero();
                }
            }
        }
        unseen.fill(T::zero());
    }
}

/// The gradients of query, keys and values from the output's (`g`), given
/// the forward's output and log-sum-exp: per head, with `P` the weights
/// and `dS = P ∘ (g vᵀ - rowsum(g ∘ out))`, `dv = Pᵀ g`,
/// `dq = scale · dS k`, `dk = scale · dSᵀ q`, each key head's summed over
/// the query heads that share it.
#[allow(clippy::too_many_arguments)] // PyTorch's backward's arguments
pub fn flash_attention_backward(
    g: &Tensor,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    out: &Tensor,
    lse: &Tensor,
    a: &Flash,
) -> Result<(Tensor, Tensor, Tensor)> {
    let op = "_scaled_dot_product_flash_attention_for_cpu_backward";
    let z = Sizes::of(op, q, k, v)?;
    check_mask(op, q, a.mask, &z)?;
    let (b, hq, l) = (z.b, z.hq, z.l);
    if g.shape() != q.shape() || out.shape() != q.shape() || lse.shape() != [b, hq, l] {
        return Err(TensorError::runtime(
            op,
            format!(
                "grad_out {:?}, out {:?} and logsumexp {:?} do not match query {:?}",
                g.shape(),
                out.shape(),
                lse.shape(),
                q.shape()
            ),
        ));
    }
    let same = |t: &Tensor| t.to_dtype(q.dtype());
    let (g, out, lse) = (same(g), same(out), same(lse));
    Ok(match q.dtype() {
        DType::F32 => backward::<f32>([&g, q, k, v, &out, &lse], a, z),
        _ => backward::<f64>([&g, q, k, v, &out, &lse], a, z),
    })
}

/// A key head's index and where its gradients go: its query heads' (dq)
/// and its own (dk, dv).
type KeyHead<'a, T> = (usize, (&'a mut [T], (&'a mut [T], &'a mut [T])));

fn backward<T: Real + ExpShifted>(
    operands: [&Tensor; 6],
    a: &Flash,
    z: Sizes,
) -> (Tensor, Tensor, Tensor) {
    let Sizes {
        hq, hk, l, s, e, ..
    } = z;
    let group = z.group();
    let dense = operands.map(Tensor::contiguous);
    let storages = dense.each_ref().map(|t| t.read());
    let [xg, xq, xk, xv, xo, xl] = storages
        .each_ref()
        .map(|st| T::slice(st).expect("operands are T"));
    let mut dq = vec![T::zero(); z.b * hq * l * e];
    let mut dk = vec![T::zero(); z.b * hk * s * e];
    let mut dv = vec![T::zero(); z.b * hk * s * e];
    let scale = T::from(a.scale).expect("a scale");
    with_mask(a.mask, &z, |mask: Option<MaskView<T>>| {
        // One key head and the group of query heads that read it.
        let one = |(unit, (dq, (dk, dv))): KeyHead<'_, T>| {
            let b = unit / hk;
            let (kh, vh) = (&xk[unit * s * e..], &xv[unit * s * e..]);
            let (mut p, mut ds) = (vec![T::zero(); l * s], vec![T::zero(); l * s]);
            for (gi, dq) in dq.chunks_mut(l * e).enumerate() {
                let h = (unit % hk) * group + gi;
                let bh = b * hq + h;
                let (qh, gh, oh) = (&xq[bh * l * e..], &xg[bh * l * e..], &xo[bh * l * e..]);
                let lse = Lse::Read(&xl[bh * l..(bh + 1) * l]);
                let buffers = [&mut p[..], &mut ds[..]];
                weights(buffers, qh, kh, &z, a, mask.as_ref(), (b, h), lse);
                gemm_into(s, e, l, dv, transposed(&p, s), rows(gh, e), false, true);
                gemm_into(
                    l,
                    s,
                    e,
                    &mut ds,
                    rows(gh, e),
                    transposed(vh, e),
                    false,
                    false,
                );
                for (i, (ds, p)) in ds.chunks_mut(s).zip(p.chunks(s)).enumerate() {
                    let row = i * e..(i + 1) * e;
                    let d = gh[row.clone()]
                        .iter()
                        .zip(&oh[row])
                        .fold(T::zero(), |t, (&x, &y)| t + x * y);
                    for (x, &w) in ds.iter_mut().zip(p) {
                        *x = w * (*x - d) * scale;
                    }
                }
                gemm_into(l, e, s, dq, rows(&ds, s), rows(kh, e), false, false);
                gemm_into(s, e, l, dk, transposed(&ds, s), rows(qh, e), false, true);
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

/// A row of scores scaled, plus its row of the mask; compiled per SIMD
/// level, as the row's softmax is.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
fn scale_and_mask<T: Real>(
    row: &mut [T],
    scale: T,
    mask: Option<&MaskView<T>>,
    (b, h, i): (usize, usize, usize),
) {
    match mask {
        Some(m) => match m.row(b, h, i) {
            (values, 1) => {
                for (x, &v) in row.iter_mut().zip(values) {
                    *x = *x * scale + v;
                }
            }
            (values, stride) => {
                for (j, x) in row.iter_mut().enumerate() {
                    *x = *x * scale + values[j * stride];
                }
            }
        },
        None => row.iter_mut().for_each(|x| *x = *x * scale),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, seed: usize) -> Vec<f64> {
        (0..n)
            .map(|i| (((i * 7919 + seed * 104_729) % 2003) as f64 / 1001.5 - 1.0) * 2.0)
            .collect()
    }

    /// The composed definition for one query head `h` of batch `b`, in
    /// f64: scores, mask, softmax over the keys seen, product.
    #[allow(clippy::too_many_arguments)] // the operands and where the head sits
    fn reference(
        q: &[f64],
        k: &[f64],
        v: &[f64],
        mask: Option<&[f64]>,
        z: &Sizes,
        (b, h): (usize, usize),
        causal: bool,
        scale: f64,
    ) -> Vec<f64> {
        let (l, s, e) = (z.l, z.s, z.e);
        let qh = &q[(b * z.hq + h) * l * e..];
        let kv = (b * z.hk + h / z.group()) * s * e;
        let (kh, vh) = (&k[kv..], &v[kv..]);
        let mut out = vec![0.0; l * e];
        for i in 0..l {
            let seen = if causal { (i + 1).min(s) } else { s };
            let scores: Vec<f64> = (0..seen)
                .map(|j| {
                    let dot: f64 = (0..e).map(|c| qh[i * e + c] * kh[j * e + c]).sum();
                    dot * scale + mask.map_or(0.0, |m| m[i * s + j])
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            if max == f64::NEG_INFINITY {
                continue;
            }
            let w: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
            let total: f64 = w.iter().sum();
            for (j, wj) in w.iter().enumerate() {
                for c in 0..e {
                    out[i * e + c] += wj / total * vh[j * e + c];
                }
            }
        }
        out
    }

    struct Case {
        z: Sizes,
        causal: bool,
        mask: Option<Vec<f64>>,
    }

    fn cases() -> Vec<Case> {
        let z = |b, hq, hk, l, s, e| Sizes { b, hq, hk, l, s, e };
        let mut masked = data(3 * 5, 9);
        masked[5..10].fill(f64::NEG_INFINITY); // a query that sees no key
        vec![
            Case {
                z: z(2, 3, 3, 16, 16, 8),
                causal: true,
                mask: None,
            },
            Case {
                z: z(1, 2, 2, 5, 9, 3),
                causal: false,
                mask: None,
            },
            Case {
                z: z(1, 4, 2, 9, 5, 4),
                causal: true,
                mask: None,
            },
            Case {
                z: z(2, 4, 1, 3, 5, 2),
                causal: false,
                mask: Some(masked),
            },
        ]
    }

    fn operands(c: &Case) -> [Tensor; 3] {
        let z = &c.z;
        [
            Tensor::from_vec(data(z.b * z.hq * z.l * z.e, 1), &[z.b, z.hq, z.l, z.e]),
            Tensor::from_vec(data(z.b * z.hk * z.s * z.e, 2), &[z.b, z.hk, z.s, z.e]),
            Tensor::from_vec(data(z.b * z.hk * z.s * z.e, 3), &[z.b, z.hk, z.s, z.e]),
        ]
    }

    impl Case {
        fn mask(&self) -> Option<Tensor> {
            let shape = [self.z.l, self.z.s];
            self.mask
                .as_ref()
                .map(|m| Tensor::from_vec(m.clone(), &shape))
        }

        fn flash<'a>(&self, mask: Option<&'a Tensor>) -> Flash<'a> {
            Flash {
                mask,
                causal: self.causal,
                scale: 0.7,
            }
        }
    }

    fn run(c: &Case, [q, k, v]: &[Tensor; 3]) -> (Tensor, Tensor) {
        let mask = c.mask();
        flash_attention(q, k, v, &c.flash(mask.as_ref())).expect("flash attention")
    }

    #[test]
    fn flash_attention_equals_the_composed_definition_in_both_dtypes() {
        for c in cases() {
            let ops = operands(&c);
            let (q, k, v) = (
                ops[0].to_vec::<f64>(),
                ops[1].to_vec::<f64>(),
                ops[2].to_vec::<f64>(),
            );
            for dtype in [DType::F64, DType::F32] {
                let typed = ops.clone().map(|t| t.to_dtype(dtype));
                let mask = c.mask().map(|m| m.to_dtype(dtype));
                let a = c.flash(mask.as_ref());
                let got = flash_attention(&typed[0], &typed[1], &typed[2], &a)
                    .expect("flash attention")
                    .0
                    .to_vec::<f64>();
                let tol = if dtype == DType::F64 { 1e-12 } else { 1e-5 };
                for bh in 0..c.z.b * c.z.hq {
                    let pos = (bh / c.z.hq, bh % c.z.hq);
                    let want = reference(&q, &k, &v, c.mask.as_deref(), &c.z, pos, c.causal, 0.7);
                    let at = bh * c.z.l * c.z.e;
                    for (g, w) in got[at..at + want.len()].iter().zip(&want) {
                        assert!((g - w).abs() < tol, "{dtype:?}: {g} vs {w}");
                    }
                }
            }
        }
    }

    #[test]
    fn flash_attention_backward_equals_finite_differences() {
        for c in cases() {
            let ops = operands(&c);
            let (out, lse) = run(&c, &ops);
            let weights: Vec<f64> = (0..out.numel())
                .map(|i| ((i % 7) as f64 - 3.0) / 3.0)
                .collect();
            let g = Tensor::from_vec(weights.clone(), out.shape());
            let mask = c.mask();
            let a = c.flash(mask.as_ref());
            let grads = flash_attention_backward(&g, &ops[0], &ops[1], &ops[2], &out, &lse, &a)
                .expect("flash attention backward");
            let grads = [grads.0, grads.1, grads.2];
            let loss = |ops: &[Tensor; 3]| -> f64 {
                let out = run(&c, ops).0.to_vec::<f64>();
                out.iter().zip(&weights).map(|(o, w)| o * w).sum()
            };
            for (which, grad) in grads.iter().enumerate() {
                let grad = grad.to_vec::<f64>();
                let base = ops[which].to_vec::<f64>();
                for i in (0..base.len()).step_by(3) {
                    let shifted = |d: f64| {
                        let mut moved = base.clone();
                        moved[i] += d;
                        let mut ops = ops.clone();
                        ops[which] = Tensor::from_vec(moved, ops[which].shape());
                        loss(&ops)
                    };
                    let numeric = (shifted(1e-6) - shifted(-1e-6)) / 2e-6;
                    assert!(
                        (numeric - grad[i]).abs() < 1e-6,
                        "operand {which} element {i}: {} vs {numeric}",
                        grad[i]
                    );
                }
            }
        }
    }

    #[test]
    fn other_forms_are_left_to_the_composed_path() {
        let f = |shape: &[usize], dtype| Tensor::zeros(shape, dtype);
        let q = f(&[1, 2, 4, 8], DType::F32);
        let applies = |k: &Tensor, v: &Tensor, mask: Option<&Tensor>, gqa| {
            flash_applies(&q, k, v, mask, 0.0, gqa)
        };
        assert!(applies(&q, &q, None, false));
        assert!(!flash_applies(&q, &q, &q, None, 0.1, false), "dropout");
        assert!(
            !applies(&f(&[2, 2, 4, 8], DType::F32), &q, None, false),
            "batches differ"
        );
        assert!(
            !applies(&q, &f(&[1, 2, 4, 5], DType::F32), None, false),
            "values' width"
        );
        assert!(
            !applies(&q, &f(&[1, 2, 4, 8], DType::F64), None, false),
            "dtypes differ"
        );
        let (k3, v3) = (f(&[1, 3, 4, 8], DType::F32), f(&[1, 3, 4, 8], DType::F32));
        assert!(!applies(&k3, &v3, None, true), "heads that do not group");
        let q4 = f(&[1, 4, 4, 8], DType::F32);
        let (k2, v2) = (f(&[1, 2, 4, 8], DType::F32), f(&[1, 2, 4, 8], DType::F32));
        assert!(
            flash_applies(&q4, &k2, &v2, None, 0.0, true),
            "grouped heads"
        );
        assert!(
            !flash_applies(&q4, &k2, &v2, None, 0.0, false),
            "groups need enable_gqa"
        );
        assert!(
            !applies(&q, &q, Some(&f(&[4, 4], DType::I64)), false),
            "an integer mask"
        );
        assert!(
            !applies(&q, &q, Some(&f(&[3, 4, 4], DType::Bool)), false),
            "a mask of other heads"
        );
        assert!(applies(&q, &q, Some(&f(&[4, 4], DType::Bool)), false));
        assert_eq!(
            flash_form(
                &f(&[2, 4, 8], DType::F32),
                &f(&[2, 4, 8], DType::F32),
                &f(&[2, 4, 8], DType::F32),
                None,
                0.0,
                false
            ),
            Some(FlashForm::Unbatched)
        );
        assert_eq!(
            flash_form(
                &f(&[4, 8], DType::F32),
                &f(&[4, 8], DType::F32),
                &f(&[4, 8], DType::F32),
                None,
                0.0,
                false
            ),
            None
        );
    }
}
