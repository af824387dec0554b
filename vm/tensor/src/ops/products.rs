//! Products built on the matrix kernels: grouped matrix products (one
//! product per group of rows, columns or contraction indices, as
//! mixture-of-experts layers use them) and the bilinear form.

use super::linalg::{bmm, mm};
use super::shape::{cat, narrow, select, stack};
use crate::dtype::DType;
use crate::error::{Result, TensorError, legacy_name, torch_size};
use crate::tensor::Tensor;

fn fail(op: &'static str, message: impl Into<String>) -> TensorError {
    TensorError::runtime(op, message)
}

/// `torch._grouped_mm(a, b, offs)`: with `offs` (cumulative group ends,
/// int32), a 2-d operand is split into groups along its free or its
/// contracted dim — `[M, K] × [G, K, N] → [M, N]` (rows by group),
/// `[G, M, K] × [K, N] → [M, N]` (columns by group), `[M, K] × [K, N] →
/// [G, M, N]` (contraction by group); two 3-d operands are a batched product.
pub fn grouped_mm(a: &Tensor, b: &Tensor, offs: Option<&Tensor>) -> Result<Tensor> {
    const OP: &str = "_grouped_mm";
    for (name, t) in [("mat_a", a), ("mat_b", b)] {
        if t.dtype() != DType::F32 {
            return Err(fail(
                OP,
                format!(
                    "Expected {name} to be Float32, BFloat16 or Float16 matrix, got {}",
                    legacy_name(t.dtype())
                ),
            ));
        }
        if !(2..=3).contains(&t.ndim()) {
            return Err(fail(OP, format!("{name} has to be 2 or 3d")));
        }
    }
    let both_3d = a.ndim() == 3 && b.ndim() == 3;
    let ends: Vec<usize> = match offs {
        Some(_) if both_3d => None,
        Some(o) if o.dtype() == DType::I32 && o.ndim() == 1 => {
            Some(o.to_dtype(DType::I64).to_vec::<i64>())
        }
        Some(_) => return Err(fail(OP, "Offsets have to be int32")),
        None if both_3d => return bmm(a, b),
        None => None,
    }
    .ok_or_else(|| {
        fail(
            OP,
            "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d",
        )
    })?
    .into_iter()
    .map(|e| e.max(0) as usize)
    .collect();
    let (k_a, k_b) = (a.shape()[a.ndim() - 1], b.shape()[b.ndim() - 2]);
    if k_a != k_b {
        return Err(fail(
            OP,
            format!(
                "contraction dimension of mat_a and mat_b must match, got {} and {}",
                torch_size(a.shape()),
                torch_size(b.shape())
            ),
        ));
    }
    // Each group's half-open range along the split dim.
    let split_len = match (a.ndim(), b.ndim()) {
        (2, 3) => a.shape()[0],
        (3, 2) => b.shape()[1],
        _ => k_a,
    };
    let groups: Vec<(usize, usize)> = ends
        .iter()
        .scan(0usize, |start, &end| {
            let range = (*start, end.clamp(*start, split_len));
            *start = range.1;
            Some(range)
        })
        .collect();
    let group_count = match (a.ndim(), b.ndim()) {
        (2, 3) => b.shape()[0],
        (3, 2) => a.shape()[0],
        _ => groups.len(),
    };
    if groups.len() != group_count {
        return Err(fail(
            OP,
            format!(
                "offsets must have one entry per group: got {} offsets for {group_count} groups",
                groups.len()
            ),
        ));
    }
    let part =
        |t: &Tensor, dim: i64, (s, e): (usize, usize)| narrow(t, dim, s as i64, (e - s) as i64);
    let covered = groups.last().map_or(0, |g| g.1);
    match (a.ndim(), b.ndim()) {
        (2, 3) => {
            let mut rows = groups
                .iter()
                .enumerate()
                .map(|(g, &r)| mm(&part(a, 0, r)?, &select(b, 0, g as i64)?))
                .collect::<Result<Vec<_>>>()?;
            rows.push(Tensor::zeros(
                &[split_len - covered, b.shape()[2]],
                DType::F32,
            ));
            cat(&rows, 0)
        }
        (3, 2) => {
            let mut cols = groups
                .iter()
                .enumerate()
                .map(|(g, &r)| mm(&select(a, 0, g as i64)?, &part(b, 1, r)?))
                .collect::<Result<Vec<_>>>()?;
            cols.push(Tensor::zeros(
                &[a.shape()[1], split_len - covered],
                DType::F32,
            ));
            cat(&cols, 1)
        }
        _ => {
            let products = groups
                .iter()
                .map(|&r| mm(&part(a, 1, r)?, &part(b, 0, r)?))
                .collect::<Result<Vec<_>>>()?;
            stack(&products, 0)
        }
    }
}

/// `tensordot(a, b, dims_a, dims_b)`: contracts `a`'s `dims_a` with `b`'s
/// `dims_b` (pairwise); the result has `a`'s free dims then `b`'s.
pub fn tensordot(a: &Tensor, b: &Tensor, dims_a: &[i64], dims_b: &[i64]) -> Result<Tensor> {
    const OP: &str = "tensordot";
    if dims_a.len() != dims_b.len() {
        return Err(fail(OP, "both dimension lists should have same length"));
    }
    let da: Vec<usize> = dims_a.iter().map(|&d| a.dim(d)).collect::<Result<_>>()?;
    let db: Vec<usize> = dims_b.iter().map(|&d| b.dim(d)).collect::<Result<_>>()?;
    for ((&x, &y), (gx, gy)) in da.iter().zip(&db).zip(dims_a.iter().zip(dims_b)) {
        if a.shape()[x] != b.shape()[y] {
            return Err(fail(
                OP,
                format!(
                    "contracted dimensions need to match, but first has size {} in dim {gx} and second has size {} in dim {gy}",
                    a.shape()[x],
                    b.shape()[y]
                ),
            ));
        }
    }
    let free_a: Vec<usize> = (0..a.ndim()).filter(|d| !da.contains(d)).collect();
    let free_b: Vec<usize> = (0..b.ndim()).filter(|d| !db.contains(d)).collect();
    let k: usize = da.iter().map(|&d| a.shape()[d]).product();
    let rows: usize = free_a.iter().map(|&d| a.shape()[d]).product();
    let cols: usize = free_b.iter().map(|&d| b.shape()[d]).product();
    let as_i64 = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
    let pa = super::shape::permute(a, &as_i64(&[free_a.clone(), da].concat()))?;
    let pb = super::shape::permute(b, &as_i64(&[db, free_b.clone()].concat()))?;
    let left = super::shape::reshape(&pa, &[rows as i64, k as i64])?;
    let right = super::shape::reshape(&pb, &[k as i64, cols as i64])?;
    let out: Vec<i64> = free_a
        .iter()
        .map(|&d| a.shape()[d] as i64)
        .chain(free_b.iter().map(|&d| b.shape()[d] as i64))
        .collect();
    super::shape::reshape(&mm(&left, &right)?, &out)
}

/// `torch.bilinear(x1, x2, weight, bias)`: `y[..., o] = x1 · weight[o] · x2
/// + bias[o]` over matching leading dims.
pub fn bilinear(
    x1: &Tensor,
    x2: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
) -> Result<Tensor> {
    const OP: &str = "bilinear";
    let mut named = vec![("input1", x1), ("input2", x2), ("weight", weight)];
    named.extend(bias.map(|b| ("bias", b)));
    if named.iter().any(|(_, t)| t.dtype() != x1.dtype()) {
        let listed: Vec<String> = named
            .iter()
            .map(|(name, t)| format!("{name}: {}", t.dtype().cpp_name()))
            .collect();
        return Err(fail(
            OP,
            format!(
                "All tensors must have the same dtype, got {}",
                listed.join(", ")
            ),
        ));
    }
    let (s1, s2, sw) = (x1.shape(), x2.shape(), weight.shape());
    if s1.len() != s2.len() {
        return Err(fail(
            OP,
            format!(
                "bilinear(): input dimensions do not match: got {} and {}",
                s1.len(),
                s2.len()
            ),
        ));
    }
    if s1.is_empty() || s1[..s1.len() - 1] != s2[..s2.len() - 1] {
        return Err(fail(
            OP,
            format!(
                "bilinear(): input batch dimensions do not match: got {} and {}",
                torch_size(s1),
                torch_size(s2)
            ),
        ));
    }
    if sw.len() != 3 {
        return Err(fail(
            OP,
            format!(
                "bilinear(): weight must be three-dimensional, got {}",
                sw.len()
            ),
        ));
    }
    let (in1, in2, out) = (s1[s1.len() - 1], s2[s2.len() - 1], sw[0]);
    if in1 != sw[1] {
        return Err(fail(
            OP,
            format!(
                "bilinear(): input1 size does not match weight size: got {in1} but expected {}",
                sw[1]
            ),
        ));
    }
    if in2 != sw[2] {
        return Err(fail(
            OP,
            format!(
                "bilinear(): input2 size does not match weight size: got {in2} but expected {}",
                sw[2]
            ),
        ));
    }
    if let Some(b) = bias
        && (b.ndim() != 1 || b.shape()[0] != out)
    {
        return Err(fail(
            OP,
            format!(
                "bilinear(): bias size does not match weight size: got {} but expected {out}",
                b.shape().last().copied().unwrap_or(0)
            ),
        ));
    }
    let lead = &s1[..s1.len() - 1];
    let m: usize = lead.iter().product();
    let as_i64 = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
    let flat1 = super::shape::reshape(x1, &[m as i64, in1 as i64])?;
    let flat2 = super::shape::reshape(x2, &[m as i64, in2 as i64, 1])?;
    // x1 · W as one product: [M, in1] × [in1, out·in2].
    let w = super::shape::permute(weight, &[1, 0, 2])?;
    let w = super::shape::reshape(&w, &[in1 as i64, (out * in2) as i64])?;
    let left = super::shape::reshape(&mm(&flat1, &w)?, &[m as i64, out as i64, in2 as i64])?;
    let y = bmm(&left, &flat2)?;
    let mut shape = as_i64(lead);
    shape.push(out as i64);
    let y = super::shape::reshape(&y, &shape)?;
    match bias {
        Some(b) => super::elementwise::binary(
            super::elementwise::Binary::Add,
            &y.into(),
            &b.clone().into(),
        ),
        None => Ok(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(data: &[f32], shape: &[usize]) -> Tensor {
        Tensor::from_vec(data.to_vec(), shape)
    }

    #[test]
    fn rows_by_group_use_their_groups_matrix() {
        let a = t(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
        let eye = [1., 0., 0., 1.];
        let twice = [2., 0., 0., 2.];
        let b = t(&[eye, twice].concat(), &[2, 2, 2]);
        let offs = Tensor::from_vec(vec![1i32, 3], &[2]);
        let y = grouped_mm(&a, &b, Some(&offs)).unwrap();
        assert_eq!(y.to_vec::<f32>(), [1., 2., 6., 8., 10., 12.]);
    }

    #[test]
    fn contraction_groups_stack_their_products() {
        let a = t(&[1., 2., 3., 4.], &[1, 4]);
        let b = t(&[1., 1., 1., 1.], &[4, 1]);
        let offs = Tensor::from_vec(vec![1i32, 4], &[2]);
        let y = grouped_mm(&a, &b, Some(&offs)).unwrap();
        assert_eq!(y.shape(), [2, 1, 1]);
        assert_eq!(y.to_vec::<f32>(), [1., 9.]);
        assert!(grouped_mm(&a, &b, None).is_err());
    }

    #[test]
    fn bilinear_is_x1_weight_x2_plus_bias() {
        let x1 = t(&[1., 2.], &[1, 2]);
        let x2 = t(&[3., 4., 5.], &[1, 3]);
        let w = t(&(0..6).map(|v| v as f32).collect::<Vec<_>>(), &[1, 2, 3]);
        let b = t(&[0.5], &[1]);
        // [1 2] · [[0 1 2] [3 4 5]] · [3 4 5]ᵀ = [6 9 12] · [3 4 5]ᵀ = 114.
        let y = bilinear(&x1, &x2, &w, Some(&b)).unwrap();
        assert_eq!(y.to_vec::<f32>(), [114.5]);
    }
}
