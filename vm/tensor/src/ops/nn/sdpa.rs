//! `F.scaled_dot_product_attention`: flash attention where PyTorch's CPU
//! build runs it (see `ops::attention`), else PyTorch's reference math.

use crate::dtype::{DType, Scalar};
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

use crate::ops::attention::{self, FlashForm};
use crate::ops::elementwise::{Arg, Binary, binary};
use crate::ops::{create, linalg, reduce, shape};

/// Arguments of `F.scaled_dot_product_attention` beyond q, k, v.
pub struct Attention<'a> {
    pub mask: Option<&'a Tensor>,
    pub dropout_p: f64,
    pub is_causal: bool,
    pub scale: Option<f64>,
    pub enable_gqa: bool,
}

/// `softmax(q @ kᵀ · scale + bias) @ v`, as PyTorch's reference math.
pub fn scaled_dot_product_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    a: &Attention,
) -> Result<Tensor> {
    let op = "scaled_dot_product_attention";
    if a.is_causal && a.mask.is_some() {
        return Err(TensorError::runtime(
            op,
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
        ));
    }
    if q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2 {
        return Err(TensorError::runtime(
            op,
            "scaled_dot_product_attention: query, key and value must be at least 2-D",
        ));
    }
    if let Some(form) = attention::flash_form(q, k, v, a.mask, a.dropout_p, a.enable_gqa) {
        return flash(q, k, v, a, form);
    }
    let l = q.shape()[q.ndim() - 2];
    let s = k.shape()[k.ndim() - 2];
    let (mut k, mut v) = (k.clone(), v.clone());
    if a.enable_gqa && q.ndim() >= 3 && k.ndim() >= 3 {
        let (hq, hk) = (q.shape()[q.ndim() - 3], k.shape()[k.ndim() - 3]);
        if hk > 0 && hq % hk == 0 && hq != hk {
            let rep = hq / hk;
            let index = Tensor::from_vec(
                (0..hq).map(|h| (h / rep) as i64).collect::<Vec<i64>>(),
                &[hq],
            );
            k = crate::ops::index::index_select(&k, -3, &index)?;
            v = crate::ops::index::index_select(&v, -3, &index)?;
        }
    }
    let scale = a.scale.unwrap_or_else(|| attention::default_scale(q));
    let kt = shape::transpose(&k, -2, -1)?;
    let mut scores = binary(
        Binary::Mul,
        &Arg::Tensor(linalg::matmul(q, &kt)?),
        &Arg::Scalar(Scalar::Float(scale)),
    )?;
    if a.is_causal {
        let masked = Tensor::from_vec(
            (0..l * s).map(|i| i % s > i / s).collect::<Vec<bool>>(),
            &[l, s],
        );
        scores =
            crate::ops::index::masked_fill(&scores, &masked, Scalar::Float(f64::NEG_INFINITY))?;
    }
    if let Some(m) = a.mask {
        scores = if m.dtype() == DType::Bool {
            let masked = crate::ops::elementwise::map::<bool, bool>(m, |keep| !keep);
            crate::ops::index::masked_fill(&scores, &masked, Scalar::Float(f64::NEG_INFINITY))?
        } else {
            binary(Binary::Add, &Arg::Tensor(scores), &Arg::Tensor(m.clone()))?
        };
    }
    let mut weights = safe_softmax(&scores)?;
    if a.dropout_p > 0.0 {
        weights = create::dropout(
            &weights,
            a.dropout_p,
            create::DropoutKind {
                feature: false,
                alpha: false,
            },
            &crate::random::Generator::default_cpu(),
        )?;
    }
    linalg::matmul(&weights, &v)
}

/// Attention as flash attention (see [`crate::ops::attention::flash_form`]).
fn flash(q: &Tensor, k: &Tensor, v: &Tensor, a: &Attention, form: FlashForm) -> Result<Tensor> {
    let batched = |t: &Tensor| match form {
        FlashForm::Batched => t.clone(),
        FlashForm::Unbatched => t.with_layout(t.layout().unsqueeze(0)),
    };
    let mask = a.mask.map(|m| attention::additive_mask(m, q.dtype()));
    let flash = attention::Flash {
        mask: mask.as_ref(),
        causal: a.is_causal,
        scale: a.scale.unwrap_or_else(|| attention::default_scale(q)),
    };
    let (out, _) = attention::flash_attention(&batched(q), &batched(k), &batched(v), &flash)?;
    Ok(match form {
        FlashForm::Batched => out,
        FlashForm::Unbatched => shape::squeeze(&out, Some(&[0]))?,
    })
}

/// Softmax over the last dim, with zeros for a row that masks every key
/// (all -inf), as PyTorch's attention computes it (a plain softmax gives
/// NaN there, which the next product spreads to every position).
fn safe_softmax(scores: &Tensor) -> Result<Tensor> {
    let weights = reduce::softmax(scores, -1, None, reduce::SoftmaxKind::Softmax)?;
    let plan = reduce::Plan::new(scores, Some(&[-1]), true)?;
    let masked = plan.map_rows(scores, |row: &[f64]| {
        row.iter().all(|&x| x == f64::NEG_INFINITY)
    });
    if !masked.to_vec::<bool>().contains(&true) {
        return Ok(weights);
    }
    crate::ops::index::masked_fill(&weights, &masked, Scalar::Float(0.0))
}
