//! Scaled dot-product attention fused per (batch, head), forward and
//! backward — what PyTorch's CPU build runs as flash attention
//! (`_scaled_dot_product_flash_attention_for_cpu` and its backward) for
//! 4-d operands without dropout: per head (or, causal, per run of query
//! rows) one product for the scores, each row's softmax over the keys it
//! may see (its log-sum-exp kept), one product with the values; operands
//! are read through their strides. The backward recomputes the weights from the
//! log-sum-exp instead of keeping an L×S matrix per head, as flash
//! attention does. Heads run in parallel when there is enough work, each
//! product on one thread. Other calls take the composed path in
//! [`super::nn::scaled_dot_product_attention`].

mod backward;
mod forward;
mod heads;
#[cfg(test)]
mod tests;
mod weights;

use super::linalg::Real;
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
        DType::F32 => Ok(forward::forward::<f32>(q, k, v, a, z)),
        _ => Ok(forward::forward::<f64>(q, k, v, a, z)),
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
        DType::F32 => backward::backward::<f32>([&g, q, k, v, &out, &lse], a, z),
        _ => backward::backward::<f64>([&g, q, k, v, &out, &lse], a, z),
    })
}
