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

/// What each bag reduces: `rows[k]`, the table row of input position
/// `k`, and per bag the positions it takes (padding entries left out).
pub struct Bags {
    pub rows: Vec<i64>,
    pub members: Vec<Vec<usize>>,
}

/// The bags of a 1-d `input` with `offsets`, or of a 2-d one (each row a
/// bag), over a table of `table_rows` rows.
pub fn bags_of(
    input: &Tensor,
    table_rows: usize,
    offsets: Option<&Tensor>,
    include_last_offset: bool,
    padding_idx: Option<i64>,
) -> Result<Bags> {
    if input.dtype().is_float() || input.dtype() == DType::Bool {
        return fail("expected input to be an integer tensor");
    }
    let rows: Vec<i64> = input.contiguous().to_dtype(DType::I64).to_vec();
    let offsets: Vec<i64> = match (input.ndim(), offsets) {
        (2, _) => {
            let width = input.shape()[1];
            (0..input.shape()[0]).map(|b| (b * width) as i64).collect()
        }
        (_, Some(o)) => o.to_dtype(DType::I64).to_vec(),
        (_, None) => return fail("offsets has to be a 1D Tensor but got None"),
    };
    if let Some((k, &bad)) = rows
        .iter()
        .enumerate()
        .find(|(_, i)| !(0..table_rows as i64).contains(i))
    {
        return fail(format!(
            "Index {k} of input takes value {bad} which is not in the valid range [0, {table_rows})"
        ));
    }
    let padding = padding_idx.map(|p| if p < 0 { p + table_rows as i64 } else { p });
    let members = bags(&offsets, rows.len(), include_last_offset)?
        .into_iter()
        .map(|(start, end)| (start..end).filter(|&k| Some(rows[k]) != padding).collect())
        .collect();
    Ok(Bags { rows, members })
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
    let (rows, dim) = (weight.shape()[0], weight.shape()[1]);
    let bags = bags_of(input, rows, offsets, include_last_offset, padding_idx)?;
    let psw: Option<Vec<f64>> = per_sample_weights.map(|w| w.contiguous().to_vec());
    let table: Vec<f64> = weight.contiguous().to_vec();
    let mut out = vec![0.0f64; bags.members.len() * dim];
    for (b, members) in bags.members.iter().enumerate() {
        let acc = &mut out[b * dim..(b + 1) * dim];
        for (count, &k) in members.iter().enumerate() {
            let row = &table[bags.rows[k] as usize * dim..][..dim];
            let scale = psw.as_ref().map_or(1.0, |w| w[k]);
            for (a, &v) in acc.iter_mut().zip(row) {
                *a = match mode {
                    BagMode::Max if count > 0 => a.max(v),
                    BagMode::Max => v,
                    _ => *a + v * scale,
                };
            }
        }
        if mode == BagMode::Mean && !members.is_empty() {
            acc.iter_mut().for_each(|a| *a /= members.len() as f64);
        }
    }
    Ok(Tensor::from_vec(out, &[bags.members.len(), dim]).to_dtype(weight.dtype()))
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
