//! `F.embedding`: rows of a weight picked by integer indices.

use crate::dtype::DType;
use crate::error::{Result, TensorError, legacy_name};
use crate::layout::Layout;
use crate::tensor::Tensor;

/// `F.embedding`: rows of `weight` picked by integer `indices`.
pub fn embedding(indices: &Tensor, weight: &Tensor, padding_idx: Option<i64>) -> Result<Tensor> {
    if !matches!(indices.dtype(), DType::I64 | DType::I32) {
        return Err(TensorError::runtime(
            "embedding",
            format!(
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.{}Tensor instead (while checking arguments for embedding)",
                legacy_name(indices.dtype())
            ),
        ));
    }
    if weight.ndim() != 2 {
        return Err(TensorError::runtime("embedding", "'weight' must be 2-D"));
    }
    if let Some(p) = padding_idx {
        let rows = weight.shape()[0] as i64;
        if p >= rows || p < -rows {
            return Err(TensorError::Other {
                kind: crate::ErrorKind::Runtime,
                message: "Padding_idx must be within num_embeddings".into(),
            });
        }
    }
    // A view of the indices keeps its offset and strides.
    let flat = crate::ops::shape::reshape(indices, &[-1])?.contiguous();
    let rows = weight.shape()[0] as i64;
    if flat.to_vec::<i64>().iter().any(|&i| i < 0 || i >= rows) {
        return Err(TensorError::index_error("index out of range in self"));
    }
    let picked = crate::ops::index::index_select(weight, 0, &flat)?;
    let mut out_shape = indices.shape().to_vec();
    out_shape.push(weight.shape()[1]);
    Ok(picked.with_layout(Layout::contiguous(&out_shape)))
}
