//! `F.embedding_bag`: rows of an embedding table gathered per bag (runs of
//! indices delimited by offsets) and reduced by sum, mean or max, without
//! materialising the gathered rows.

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

/// How a bag's rows combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BagMode {
    Sum,
    Mean,
    Max,
}

impl BagMode {
    pub fn parse(name: &str) -> Result<BagMode> {
        match name {
            "sum" => Ok(BagMode::Sum),
            "mean" => Ok(BagMode::Mean),
            "max" => Ok(BagMode::Max),
            _ => Err(TensorError::value(
                "embedding_bag",
                "mode has to be one of sum, mean or max",
            )),
        }
    }
}

fn fail<T>(message: impl Into<String>) -> Result<T> {
    Err(TensorError::runtime("embedding_bag", message))
}

/// The bags over `indices` (1-d) as `[start, end)` ranges.
fn bags(offsets: &[i64], len: usize, include_last_offset: bool) -> Result<Vec<(usize, usize)>> {
    if let Some(&first) = offsets.first()
        && first != 0
    {
        // PyTorch's message ends with the C++ printout of a 0-dim tensor.
        return fail(format!(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from position 0. However, got {first}\n[ torch.LongTensor{{}} ]"
        ));
    }
    let ends: Vec<i64> = offsets
        .iter()
        .skip(1)
        .copied()
        .chain((!include_last_offset).then_some(len as i64))
        .collect();
    let count = if include_last_offset {
        offsets.len().saturating_sub(1)
    } else {
        offsets.len()
    };
    (0..count)
        .map(|b| {
            let (start, end) = (offsets[b], ends[b].min(len as i64));
            if start < 0 || start > end.max(start) || end < 0 {
                return fail(format!("offsets[{b}] is out of range"));
            }
            Ok((start as usize, end.max(start) as usize))
        })
        .collect()
}

/// `embedding_bag(input, weight, offsets, mode, per_sample_weights,
/// include_last_offset, padding_idx)` for a 1-d `input` with offsets or a
/// 2-d one (each row a bag): one reduced row per bag; empty bags (and bags
/// of only `padding_idx`) give zeros.
pub fn embedding_bag(
    input: &Tensor,
    weight: &Tensor,
    offsets: Option<&Tensor>,
    mode: BagMode,
    per_sample_weights: Option<&Tensor>,
    include_last_offset: bool,
    padding_idx: Option<i64>,
) -> Result<Tensor> {
    if weight.ndim() != 2 {
        return fail("weight has to be a 2D Tensor");
    }
    if input.dtype().is_float() || input.dtype() == DType::Bool {
        return fail("expected input to be an integer tensor");
    }
    let (rows, dim) = (weight.shape()[0], weight.shape()[1]);
    let indices: Vec<i64> = input.contiguous().to_dtype(DType::I64).to_vec();
    let offsets: Vec<i64> = match (input.ndim(), offsets) {
        (2, _) => {
            let width = input.shape()[1];
            (0..input.shape()[0]).map(|b| (b * width) as i64).collect()
        }
        (_, Some(o)) => o.to_dtype(DType::I64).to_vec(),
        (_, None) => return fail("offsets has to be a 1D Tensor but got None"),
    };
    if let Some((k, &bad)) = indices
        .iter()
        .enumerate()
        .find(|(_, i)| !(0..rows as i64).contains(i))
    {
        return fail(format!(
            "Index {k} of input takes value {bad} which is not in the valid range [0, {rows})"
        ));
    }
    let psw: Option<Vec<f64>> = per_sample_weights.map(|w| w.contiguous().to_vec());
    let table: Vec<f64> = weight.contiguous().to_vec();
    let padding = padding_idx.map(|p| if p < 0 { p + rows as i64 } else { p });
    let bags = bags(&offsets, indices.len(), include_last_offset)?;
    let mut out = vec![0.0f64; bags.len() * dim];
    for (b, &(start, end)) in bags.iter().enumerate() {
        let acc = &mut out[b * dim..(b + 1) * dim];
        let mut count = 0usize;
        for k in start..end {
            if Some(indices[k]) == padding {
                continue;
            }
            let row = &table[indices[k] as usize * dim..][..dim];
            let scale = psw.as_ref().map_or(1.0, |w| w[k]);
            for (a, &v) in acc.iter_mut().zip(row) {
                *a = match mode {
                    BagMode::Max if count > 0 => a.max(v),
                    BagMode::Max => v,
                    _ => *a + v * scale,
                };
            }
            count += 1;
        }
        if mode == BagMode::Mean && count > 0 {
            acc.iter_mut().for_each(|a| *a /= count as f64);
        }
    }
    Ok(Tensor::from_vec(out, &[bags.len(), dim]).to_dtype(weight.dtype()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bags_reduce_their_rows_and_skip_padding() {
        let w = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2]);
        let idx = Tensor::from_vec(vec![0i64, 1, 2, 2], &[4]);
        let off = Tensor::from_vec(vec![0i64, 2, 2], &[3]);
        let sum = embedding_bag(&idx, &w, Some(&off), BagMode::Sum, None, false, None).unwrap();
        assert_eq!(sum.to_vec::<f64>(), [2.0, 4.0, 0.0, 0.0, 8.0, 10.0]);
        let max = embedding_bag(&idx, &w, Some(&off), BagMode::Max, None, false, None).unwrap();
        assert_eq!(max.to_vec::<f64>(), [2.0, 3.0, 0.0, 0.0, 4.0, 5.0]);
        let mean =
            embedding_bag(&idx, &w, Some(&off), BagMode::Mean, None, false, Some(1)).unwrap();
        assert_eq!(mean.to_vec::<f64>(), [0.0, 1.0, 0.0, 0.0, 4.0, 5.0]);
    }
}
