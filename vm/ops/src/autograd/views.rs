//! In-place writes through views: a view made with history remembers the
//! tensor whose storage it reads (its base); an op writing into the view
//! also rewrites the base, so the base's history becomes `CopySlices` (the
//! written region's gradient goes through the op, the rest passes on) and
//! the view's becomes a view of that, as in PyTorch.

use std::sync::Arc;

use fxvm_tensor::autograd::{Backward, Ctx, Node, TensorInfo};
use fxvm_tensor::layout::Layout;
use fxvm_tensor::{Result, Tensor, TensorError};

use super::record::edge;

/// Marks the outputs of an op that share an input's storage as its views.
pub(crate) fn mark(outputs: &[Tensor], inputs: &[Tensor]) {
    for out in outputs {
        if let Some(base) = inputs.iter().find(|i| out.shares_storage(i)) {
            mark_view(out, base);
        }
    }
}

/// Marks `out` as a view of `base` when it reads `base`'s storage — not
/// when it is `base` itself (an op that returns its input), which would
/// make the tensor its own base.
pub(crate) fn mark_view(out: &Tensor, base: &Tensor) {
    if !out.same(base) && out.shares_storage(base) {
        out.set_view_of(base);
    }
}

/// The view's place in its base's elements, for a base laid out densely
/// (the view's layout with its offset counted from the base's).
fn region(base: &Tensor, view: &Tensor) -> Result<Layout> {
    if !base.is_contiguous() || view.layout().offset < base.layout().offset {
        return Err(TensorError::not_implemented(
            "an in-place operation on a view of a tensor that is not contiguous is not supported by fxvm's autograd; write into a contiguous copy",
        ));
    }
    Ok(Layout {
        shape: view.shape().to_vec(),
        strides: view.layout().strides.clone(),
        offset: view.layout().offset - base.layout().offset,
    })
}

/// Before an in-place op writes `t`: refuses a view of a leaf that
/// requires grad (PyTorch's error) and a view whose base is laid out so
/// that its region cannot be found again.
pub(crate) fn check(t: &Tensor) -> Result<()> {
    let Some(base) = t.view_base() else {
        return Ok(());
    };
    if base.is_leaf() && base.requires_grad() {
        return Err(TensorError::LeafViewInPlace);
    }
    region(&base, t).map(|_| ())
}

/// After an in-place op wrote `view` (its node `inner` the view's new
/// history): gives the base a `CopySlices` node over `inner` and the view
/// a node reading it back from the base.
pub(crate) fn rebase(view: &Tensor) -> Result<()> {
    let Some(base) = view.view_base() else {
        return Ok(());
    };
    let Some(inner) = view.grad_fn() else {
        return Ok(());
    };
    let region = region(&base, view)?;
    let mut next = vec![edge(&base)];
    next.extend(inner.next_edges().iter().skip(1).cloned());
    let mut inputs = vec![TensorInfo::of(&base)];
    inputs.extend(inner.inputs().iter().skip(1).cloned());
    let copy_slices = Node::new(
        "CopySlices",
        next,
        inputs,
        vec![TensorInfo::of(&base)],
        Box::new(CopySlices {
            region: region.clone(),
            inner,
        }),
    );
    base.set_history(copy_slices, 0);
    let read_back = Node::new(
        "AsStridedBackward0",
        vec![edge(&base)],
        vec![TensorInfo::of(&base)],
        vec![TensorInfo::of(view)],
        Box::new(ReadBack { region }),
    );
    view.set_history(read_back, 0);
    Ok(())
}

fn missing() -> TensorError {
    TensorError::runtime("backward", "a gradient is missing")
}

/// The base's gradient: the region's part through the in-place op's
/// backward (its first result, for the view before the write, put back in
/// the region), the rest as it is.
struct CopySlices {
    region: Layout,
    inner: Arc<Node>,
}

impl Backward for CopySlices {
    fn apply(&mut self, grads: Vec<Option<Tensor>>, ctx: &Ctx<'_>) -> Result<Vec<Option<Tensor>>> {
        let g = grads.into_iter().next().flatten().ok_or_else(missing)?;
        let base_grad = super::ops::contiguous_copy(&g)?;
        let slot = base_grad.with_layout(self.region.clone());
        let mut inner = {
            let mut backward = self.inner.backward();
            let inner_ctx = Ctx {
                node: &self.inner,
                create_graph: ctx.create_graph,
            };
            backward.apply(vec![Some(super::ops::contiguous_copy(&slot)?)], &inner_ctx)?
        };
        super::engine::validate(&self.inner, &mut inner)?;
        let mut inner = inner.into_iter();
        match inner.next().flatten() {
            Some(before) => super::ops::copy_into(&slot, &before)?,
            None => {
                super::ops::call_value("zero_", vec![super::ops::value(&slot)], vec![]).map(drop)?
            }
        }
        let mut out = vec![Some(base_grad)];
        out.extend(inner);
        Ok(out)
    }

    fn release(&mut self) {
        self.inner.backward().release();
    }
}

/// The view's gradient, into zeros of the base's shape at its region.
struct ReadBack {
    region: Layout,
}

impl Backward for ReadBack {
    fn apply(&mut self, grads: Vec<Option<Tensor>>, ctx: &Ctx<'_>) -> Result<Vec<Option<Tensor>>> {
        let g = grads.into_iter().next().flatten().ok_or_else(missing)?;
        let info = &ctx.node.inputs()[0];
        let out = super::ops::zeros(&info.shape, g.dtype())?;
        super::ops::copy_into(&out.with_layout(self.region.clone()), &g)?;
        Ok(vec![Some(out)])
    }
}
