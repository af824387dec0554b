//! `tensor[items]` and `tensor[items] = value` with history. Subscripts are
//! not registry rows (their items are Python syntax: slices, `None`,
//! `...`), so their nodes are made here, over the core's subscript.

use fxvm_tensor::autograd::{Backward, Ctx, GradMode, Node, TensorInfo};
use fxvm_tensor::ops::subscript::{self, Index};
use fxvm_tensor::{Result, Tensor, TensorError};

use super::record::{edge, recording_tensors};

/// PyTorch's node for a subscript: the last indexing op it applies.
fn name(items: &[Index], write: bool) -> &'static str {
    let advanced = items.iter().any(|i| matches!(i, Index::Tensor(_)));
    match (write, advanced) {
        (true, true) => "IndexPutBackward0",
        (true, false) => "CopySlices",
        (false, true) => "IndexBackward0",
        (false, false) => match items.iter().rev().find(|i| !matches!(i, Index::Ellipsis)) {
            Some(Index::Int(_)) => "SelectBackward0",
            Some(Index::NewAxis) => "UnsqueezeBackward0",
            _ => "SliceBackward0",
        },
    }
}

/// `t[items]`.
pub fn get(t: &Tensor, items: &[Index]) -> Result<Tensor> {
    crate::tape::index_get(t, items, || get_recorded(t, items))
}

fn get_recorded(t: &Tensor, items: &[Index]) -> Result<Tensor> {
    let out = subscript::get(t, items)?;
    if !out.dtype().is_float() {
        return Ok(out);
    }
    // A view remembers its base even when nothing records (see
    // `record::view_candidate`).
    if fxvm_tensor::autograd::records_history() {
        super::views::mark_view(&out, t);
    }
    if !recording_tensors(&[t]) {
        return Ok(out);
    }
    let node = Node::new(
        name(items, false),
        vec![edge(t)],
        vec![TensorInfo::of(t)],
        vec![TensorInfo::of(&out)],
        Box::new(GetBackward {
            items: items.to_vec(),
        }),
    );
    out.set_history(node, 0);
    Ok(out)
}

/// The gradient of `t[items]`: zeros, with the output's gradient added at
/// the positions it came from (repeated positions add up).
struct GetBackward {
    items: Vec<Index>,
}

impl Backward for GetBackward {
    fn apply(&mut self, grads: Vec<Option<Tensor>>, ctx: &Ctx<'_>) -> Result<Vec<Option<Tensor>>> {
        let g = grads.into_iter().next().flatten().ok_or_else(missing)?;
        let info = &ctx.node.inputs()[0];
        let _off = GradMode::set(false);
        let out = super::ops::zeros(&info.shape, g.dtype())?;
        crate::tape::index_put(&out, &self.items, &g, true, || {
            subscript::put(&out, &self.items, &g, true)
        })?;
        Ok(vec![Some(out)])
    }
}

fn missing() -> TensorError {
    TensorError::runtime("backward", "a gradient is missing")
}

/// `t[items] = src` (`src` broadcast to the selection).
pub fn set(t: &Tensor, items: &[Index], src: &Tensor) -> Result<()> {
    crate::tape::index_put(t, items, src, false, || set_recorded(t, items, src))
}

fn set_recorded(t: &Tensor, items: &[Index], src: &Tensor) -> Result<()> {
    if !recording_tensors(&[t, src]) || !t.dtype().is_float() {
        return subscript::set(t, items, src);
    }
    if t.is_leaf() && t.requires_grad() {
        return Err(TensorError::LeafInPlace);
    }
    super::views::check(t)?;
    let edges = vec![edge(t), edge(src)];
    let infos = vec![TensorInfo::of(t), TensorInfo::of(src)];
    subscript::set(t, items, src)?;
    let node = Node::new(
        name(items, true),
        edges,
        infos,
        vec![TensorInfo::of(t)],
        Box::new(SetBackward {
            items: items.to_vec(),
        }),
    );
    t.set_history(node, 0);
    super::views::rebase(t)
}

/// The gradient of `t[items] = src`: the output's, zero where `src` was
/// written, for `t`; the selection of it for `src` (summed back to its
/// shape by the engine).
struct SetBackward {
    items: Vec<Index>,
}

impl Backward for SetBackward {
    fn apply(&mut self, grads: Vec<Option<Tensor>>, _ctx: &Ctx<'_>) -> Result<Vec<Option<Tensor>>> {
        let g = grads.into_iter().next().flatten().ok_or_else(missing)?;
        let _off = GradMode::set(false);
        let picked = crate::tape::index_get(&g, &self.items, || subscript::get(&g, &self.items))?;
        let picked = super::ops::contiguous_copy(&picked)?;
        let rest = super::ops::contiguous_copy(&g)?;
        let zero = super::ops::zeros(&[], g.dtype())?;
        crate::tape::index_put(&rest, &self.items, &zero, false, || {
            subscript::set(&rest, &self.items, &zero)
        })?;
        Ok(vec![Some(rest), Some(picked)])
    }
}
