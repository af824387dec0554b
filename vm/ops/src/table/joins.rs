//! Shape helpers PyTorch composes from views, copies and joins: moving
//! dims, tiling and interleaved repeats, splits at sections or indices,
//! the `*stack` family and `atleast_*d`, `take_along_dim`, `block_diag`,
//! `cartesian_prod`, `combinations`, `diag_embed`, `kron`, and the index
//! lists of triangles. Most are composite: written with the view and
//! join rows (`autograd::ops::shape`), so they record history as PyTorch's
//! composite ops do.

use fxvm_tensor::ops::{create, index};
use fxvm_tensor::{DType, Result, Scalar, Tensor, TensorError};

use crate::autograd::ops::{self as o, shape};
use crate::op::{M, Op, T, TM, op};
use crate::value::{Or, Value};

fn fail(op: &'static str, message: String) -> TensorError {
    TensorError::runtime(op, message)
}

fn ints(v: Or<i64, Vec<i64>>) -> Vec<i64> {
    match v {
        Or::A(i) => vec![i],
        Or::B(v) => v,
    }
}

fn wrap(d: i64, n: usize) -> Result<usize> {
    fxvm_tensor::tensor::wrap_dim(d, n)
}

/// `movedim`: `source` dims go to `destination`; the others keep their order.
fn movedim(x: &Tensor, source: Vec<i64>, destination: Vec<i64>) -> Result<Tensor> {
    let n = x.ndim().max(1);
    if source.len() != destination.len() {
        return Err(fail(
            "movedim",
            format!(
                "movedim: Invalid source or destination dims: source ({source:?} dims) should contain the same number of dims as destination ({destination:?} dims)"
            ),
        ));
    }
    let src: Vec<usize> = source.iter().map(|&d| wrap(d, n)).collect::<Result<_>>()?;
    let dst: Vec<usize> = destination
        .iter()
        .map(|&d| wrap(d, n))
        .collect::<Result<_>>()?;
    for (name, dims, given) in [
        ("source", &src, &source),
        ("destination", &dst, &destination),
    ] {
        let mut sorted = dims.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != dims.len() {
            return Err(fail(
                "movedim",
                format!("movedim: repeated dim in `{name}` ({given:?})"),
            ));
        }
    }
    if x.ndim() == 0 {
        return Ok(x.clone());
    }
    let mut order: Vec<Option<usize>> = vec![None; n];
    for (&s, &d) in src.iter().zip(&dst) {
        order[d] = Some(s);
    }
    let mut rest = (0..n).filter(|d| !src.contains(d));
    let perm: Vec<i64> = order
        .into_iter()
        .map(|o| o.or_else(|| rest.next()).unwrap_or(0) as i64)
        .collect();
    shape::permute(x, &perm)
}

fn tile(x: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let mut reps = vec![1; x.ndim().saturating_sub(dims.len())];
    reps.extend_from_slice(dims);
    shape::repeat(x, &reps)
}

/// `repeat_interleave` as either row calls it: `repeats` None is the
/// function's one-argument form (the positions of `input`, each repeated
/// that many times); a given `output_size` must be the result's length
/// along the repeated dim.
fn repeat_interleave_call(
    x: Tensor,
    repeats: Option<Or<Tensor, i64>>,
    dim: Option<i64>,
    size: Option<i64>,
) -> Result<Tensor> {
    let one_argument = repeats.is_none();
    let out = match repeats {
        Some(r) => repeat_interleave(&x, r, dim)?,
        // `torch.repeat_interleave(repeats)`: the indices it repeats.
        None => {
            let n = x.numel() as i64;
            // Of the repeats' dtype, as PyTorch answers.
            let positions = create::arange(
                Scalar::Int(0),
                Scalar::Int(n),
                Scalar::Int(1),
                Some(x.dtype()),
            )?;
            repeat_interleave(&positions, Or::A(x), Some(0))?
        }
    };
    // A given output_size must be the length repeated along.
    let along = match dim {
        Some(d) if out.ndim() > 0 => out.shape()[out.dim(d)?],
        _ => out.numel(),
    };
    match size {
        Some(s) if s != along as i64 => Err(fail(
            "repeat_interleave",
            if one_argument {
                "allocated size does not match required size".to_owned()
            } else {
                format!("repeat_interleave: Invalid output_size, expected {along} but got {s}")
            },
        )),
        _ => Ok(out),
    }
}

/// `repeat_interleave`: each slice along `dim` (of the flattened input
/// when `dim` is None) `repeats[i]` times in a row.
fn repeat_interleave(x: &Tensor, repeats: Or<Tensor, i64>, dim: Option<i64>) -> Result<Tensor> {
    // Repeat counts are integers: PyTorch has no kernel reading others.
    if let Or::A(t) = &repeats
        && (t.dtype().is_float() || t.dtype() == DType::Bool)
    {
        return Err(TensorError::not_implemented_for(
            "repeat_interleave_cpu",
            t.dtype(),
        ));
    }
    let (x, d) = match dim {
        Some(d) => (x.clone(), x.dim(d)?),
        None => (shape::reshape(x, &[-1])?, 0),
    };
    let len = x.shape().get(d).copied().unwrap_or(1);
    let counts: Vec<i64> = match repeats {
        Or::B(r) => vec![r; len],
        Or::A(t) if t.numel() == 1 => vec![t.to_vec::<i64>()[0]; len],
        Or::A(t) if t.ndim() <= 1 && t.numel() == len => t.to_dtype(DType::I64).to_vec(),
        Or::A(_) => {
            return Err(fail(
                "repeat_interleave",
                "repeats must have the same size as input along dim".into(),
            ));
        }
    };
    if counts.iter().any(|&c| c < 0) {
        return Err(fail(
            "repeat_interleave",
            "repeats can not be negative".into(),
        ));
    }
    let picks: Vec<i64> = counts
        .iter()
        .enumerate()
        .flat_map(|(k, &c)| std::iter::repeat_n(k as i64, c as usize))
        .collect();
    let n = picks.len();
    index::index_select(&x, d as i64, &Tensor::from_vec(picks, &[n]))
}

/// `tensor_split`: `n` near-equal sections (the first `len % n` one
/// longer), or pieces cut at the given indices.
fn tensor_split(x: &Tensor, at: Or<i64, Vec<i64>>, dim: i64) -> Result<Vec<Tensor>> {
    if x.ndim() == 0 {
        return Err(fail(
            "tensor_split",
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
                .into(),
        ));
    }
    let d = x.dim(dim)?;
    let len = x.shape()[d] as i64;
    let cuts: Box<dyn Iterator<Item = i64>> = match at {
        Or::A(n) if n <= 0 => {
            return Err(fail(
                "tensor_split",
                format!("number of sections must be larger than 0, got {n}"),
            ));
        }
        Or::A(n) => {
            let (q, r) = (len / n, len % n);
            Box::new((1..n).map(move |k| k * q + k.min(r)))
        }
        Or::B(v) => Box::new(v.into_iter()),
    };
    // Each piece is a view with its own metadata: a count past memory is
    // PyTorch's allocation error, not an abort.
    let count = cuts.size_hint().0 + 1;
    fxvm_tensor::alloc::reserve_items::<[u8; 128]>(count)?;
    let mut pieces = Vec::with_capacity(count);
    let mut start = 0i64;
    for end in cuts.chain(std::iter::once(len)) {
        let (s, e) = (start.clamp(0, len), end.clamp(0, len));
        pieces.push(shape::narrow(x, d as i64, s, (e - s).max(0))?);
        start = end;
    }
    Ok(pieces)
}

/// `hsplit`/`vsplit`/`dsplit`: `tensor_split` along a fixed dim, whose size
/// a number of sections must divide.
fn split_along(
    name: &'static str,
    x: &Tensor,
    at: Or<i64, Vec<i64>>,
    dim: usize,
    min_ndim: usize,
) -> Result<Vec<Tensor>> {
    if x.ndim() < min_ndim {
        return Err(fail(
            name,
            format!(
                "torch.{name} requires a tensor with at least {min_ndim} dimension, but got a tensor with {} dimensions!",
                x.ndim()
            ),
        ));
    }
    if let Or::A(n) = at
        && n != 0
        && x.shape()[dim] as i64 % n != 0
    {
        return Err(fail(
            name,
            format!(
                "torch.{name} attempted to split along dimension {dim}, but the size of the dimension {} is not divisible by the split_size {n}!",
                x.shape()[dim]
            ),
        ));
    }
    tensor_split(x, at, dim as i64)
}

/// `atleast_{1,2,3}d` of one tensor: a 0-d one reshaped, others given
/// new dims by `unsqueeze` (as PyTorch composes them).
fn at_least(x: &Tensor, rank: usize) -> Result<Tensor> {
    let unsqueeze = |t: &Tensor, d: i64| o::unsqueeze(t, d);
    match (rank, x.ndim()) {
        (r, n) if n >= r => Ok(x.clone()),
        (r, 0) => shape::reshape(x, &vec![1; r]),
        (2, 1) => unsqueeze(x, 0),
        (3, 1) => unsqueeze(&unsqueeze(x, 0)?, -1),
        _ => unsqueeze(x, -1),
    }
}

fn at_least_all(tensors: Vec<Tensor>, rank: usize) -> Result<Value> {
    let out: Vec<Tensor> = tensors
        .iter()
        .map(|t| at_least(t, rank))
        .collect::<Result<_>>()?;
    Ok(match <[Tensor; 1]>::try_from(out) {
        Ok([one]) => Value::Tensor(one),
        Err(many) => Value::Tuple(many.into_iter().map(Value::Tensor).collect()),
    })
}

fn stack_along(tensors: &[Tensor], rank: usize, dim: i64) -> Result<Tensor> {
    let parts: Vec<Tensor> = tensors
        .iter()
        .map(|t| at_least(t, rank))
        .collect::<Result<_>>()?;
    shape::cat(&parts, dim)
}

fn hstack(tensors: &[Tensor]) -> Result<Tensor> {
    let parts: Vec<Tensor> = tensors
        .iter()
        .map(|t| at_least(t, 1))
        .collect::<Result<_>>()?;
    let dim = if parts.iter().all(|t| t.ndim() == 1) {
        0
    } else {
        1
    };
    shape::cat(&parts, dim)
}

fn column_stack(tensors: &[Tensor]) -> Result<Tensor> {
    let parts: Vec<Tensor> = tensors
        .iter()
        .map(|t| match t.ndim() {
            0 | 1 => shape::reshape(t, &[t.numel() as i64, 1]),
            _ => Ok(t.clone()),
        })
        .collect::<Result<_>>()?;
    shape::cat(&parts, 1)
}

/// `take_along_dim`: `gather` with `indices` broadcast against `input`
/// outside `dim` (both flattened when `dim` is None); composed of rows.
fn take_along_dim(x: &Tensor, indices: &Tensor, dim: Option<i64>) -> Result<Tensor> {
    let gather = |x: &Tensor, dim: i64, i: &Tensor| {
        o::call(
            "gather",
            vec![
                Value::Tensor(x.clone()),
                Value::Int(dim),
                Value::Tensor(i.clone()),
            ],
            vec![],
        )
    };
    let Some(dim) = dim else {
        return gather(
            &o::reshape(x, &[x.numel()])?,
            0,
            &shape::reshape(indices, &[-1])?,
        );
    };
    let d = x.dim(dim)?;
    if x.ndim() != indices.ndim() {
        return Err(fail(
            "take_along_dim",
            format!(
                "torch.take_along_dim(): input and indices should have the same number of dimensions, but got {} dimensions for input, and {} dimensions for indices",
                x.ndim(),
                indices.ndim()
            ),
        ));
    }
    let mut xs = x.shape().to_vec();
    let mut is = indices.shape().to_vec();
    (xs[d], is[d]) = (1, 1);
    let common = fxvm_tensor::layout::broadcast_shapes(&xs, &is)
        .ok_or_else(|| TensorError::broadcast(x.shape(), indices.shape()))?;
    let along = |n: usize| {
        let mut s = common.clone();
        s[d] = n;
        s
    };
    gather(
        &o::expand(x, &along(x.shape()[d]))?,
        dim,
        &indices
            .broadcast_to(&along(indices.shape()[d]))?
            .contiguous(),
    )
}

fn block_diag(tensors: &[Tensor]) -> Result<Tensor> {
    let blocks: Vec<Tensor> = tensors
        .iter()
        .enumerate()
        .map(|(k, t)| match t.ndim() {
            0 => shape::reshape(t, &[1, 1]),
            1 => shape::reshape(t, &[1, t.numel() as i64]),
            2 => Ok(t.clone()),
            n => Err(fail(
                "block_diag",
                format!("torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {k} has {n} dimensions"),
            )),
        })
        .collect::<Result<_>>()?;
    let dtype = blocks
        .iter()
        .map(|b| b.dtype())
        .reduce(DType::promote)
        .unwrap_or(DType::F32);
    let cols: usize = blocks.iter().map(|b| b.shape()[1]).sum();
    // Each block between zeros on its rows, the rows joined.
    let mut rows = Vec::with_capacity(blocks.len());
    let mut c = 0;
    for b in &blocks {
        let (h, w) = (b.shape()[0], b.shape()[1]);
        let row = [
            Tensor::zeros(&[h, c], dtype),
            o::to_dtype(b, dtype)?,
            Tensor::zeros(&[h, cols - c - w], dtype),
        ];
        rows.push(shape::cat(&row, 1)?);
        c += w;
    }
    if rows.is_empty() {
        return Ok(Tensor::zeros(&[0, 0], dtype));
    }
    shape::cat(&rows, 0)
}

fn cartesian_prod(tensors: &[Tensor]) -> Result<Tensor> {
    if let Some(t) = tensors.iter().find(|t| t.ndim() != 1) {
        return Err(fail(
            "cartesian_prod",
            format!("Expect a 1D vector, but got shape {:?}", t.shape()),
        ));
    }
    if let [one] = tensors {
        return Ok(one.clone());
    }
    let Value::Tensors(grids) = o::call_value(
        "meshgrid",
        vec![Value::Tensors(tensors.to_vec())],
        vec![("indexing", Value::Str("ij".into()))],
    )?
    else {
        unreachable!("meshgrid returns its grids")
    };
    let flat: Vec<Tensor> = grids
        .iter()
        .map(|g| shape::reshape(g, &[-1]))
        .collect::<Result<_>>()?;
    shape::stack(&flat, 1)
}

/// `combinations(input, r, with_replacement)`: the r-element index
/// combinations of a vector, in lexicographic order, as rows.
fn combinations(x: &Tensor, r: i64, with_replacement: bool) -> Result<Tensor> {
    if x.ndim() != 1 {
        return Err(fail(
            "combinations",
            format!("Expect a 1D vector, but got shape {:?}", x.shape()),
        ));
    }
    if r < 0 {
        return Err(fail(
            "combinations",
            format!("Expect a non-negative number, but got {r}"),
        ));
    }
    if r == 0 {
        return Ok(Tensor::zeros(&[0], x.dtype()));
    }
    let (n, r) = (x.numel(), r as usize);
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut pick: Vec<usize> = if with_replacement {
        vec![0; r]
    } else {
        (0..r).collect()
    };
    if with_replacement || r <= n {
        loop {
            if n > 0 {
                rows.push(pick.clone());
            }
            // The rightmost position that can still advance.
            let Some(k) = (0..r).rev().find(|&k| {
                if with_replacement {
                    pick[k] + 1 < n
                } else {
                    pick[k] + (r - k) < n
                }
            }) else {
                break;
            };
            pick[k] += 1;
            for j in k + 1..r {
                pick[j] = if with_replacement {
                    pick[k]
                } else {
                    pick[j - 1] + 1
                };
            }
        }
    }
    let count = rows.len();
    let flat: Vec<i64> = rows.into_iter().flatten().map(|i| i as i64).collect();
    let picked = o::call(
        "index_select",
        vec![
            o::value(x),
            Value::Int(0),
            Value::Tensor(Tensor::from_vec(flat, &[count * r])),
        ],
        vec![],
    )?;
    shape::reshape(&picked, &[count as i64, r as i64])
}

fn diag_embed(x: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
    let n = x.ndim() + 1;
    let (d1, d2) = (wrap(dim1, n)?, wrap(dim2, n)?);
    if d1 == d2 {
        return Err(fail(
            "diag_embed",
            format!("diagonal dimensions cannot be identical {dim1}, {dim2}"),
        ));
    }
    let last = x.shape().last().copied().unwrap_or(1);
    let side = last + offset.unsigned_abs() as usize;
    let mut lead: Vec<usize> = x.shape()[..x.ndim().saturating_sub(1)].to_vec();
    let (lo, hi) = if d1 < d2 { (d1, d2) } else { (d2, d1) };
    lead.insert(lo, side);
    lead.insert(hi, side);
    let out = Tensor::zeros(&lead, x.dtype());
    fxvm_tensor::ops::shape::diagonal(&out, offset, d1 as i64, d2 as i64)?.copy_from(x)?;
    Ok(out)
}

/// `kron`: each element of `a` scales a whole copy of `b`.
fn kron(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let n = a.ndim().max(b.ndim());
    let pad = |t: &Tensor| -> Vec<i64> {
        std::iter::repeat_n(1, n - t.ndim())
            .chain(t.shape().iter().map(|&s| s as i64))
            .collect()
    };
    let (sa, sb) = (pad(a), pad(b));
    let spread_a: Vec<i64> = sa.iter().flat_map(|&s| [s, 1]).collect();
    let spread_b: Vec<i64> = sb.iter().flat_map(|&s| [1, s]).collect();
    let product = o::mul(
        &shape::reshape(a, &spread_a)?,
        &shape::reshape(b, &spread_b)?,
    )?;
    let joined: Vec<i64> = sa.iter().zip(&sb).map(|(x, y)| x * y).collect();
    shape::reshape(&product, &joined)
}

/// Σ clamp(r + k, 0, c) over `rows`, in closed form (a triangle's size
/// without visiting its rows): zero up to r = -k, then r + k, then c.
fn clamped_sum(rows: std::ops::Range<i64>, k: i64, c: i64) -> i128 {
    let (r0, r1, k, c) = (
        i128::from(rows.start),
        i128::from(rows.end),
        i128::from(k),
        i128::from(c),
    );
    let (mid0, mid1) = (r0.max(1 - k), r1.min(c - k));
    let rising = if mid1 > mid0 {
        // Σ (r + k) for r in [mid0, mid1)
        (mid0 + k + mid1 - 1 + k) * (mid1 - mid0) / 2
    } else {
        0
    };
    let full = (r1 - r0.max(c - k)).max(0) * c;
    rising + full
}

/// `tril_indices`/`triu_indices`: the `[2, N]` coordinates of a triangle of
/// a `row × col` matrix, row by row.
fn triangle_indices(row: i64, col: i64, offset: i64, lower: bool, dtype: DType) -> Result<Tensor> {
    let name = if lower {
        "tril_indices"
    } else {
        "triu_indices"
    };
    if row < 0 || col < 0 {
        return Err(fail(name, format!("row must be non-negative, got{row}")));
    }
    if !matches!(dtype, DType::I32 | DType::I64) {
        return Err(TensorError::not_implemented_for(name, dtype));
    }
    // Row r keeps columns [lo, hi): a run, so only rows with one are visited
    // and the size is known (and checked) before anything is built.
    let run = |r: i64| -> (i64, i64) {
        if lower {
            (
                0,
                (r.saturating_add(offset).saturating_add(1)).clamp(0, col),
            )
        } else {
            (r.saturating_add(offset).clamp(0, col), col)
        }
    };
    let rows = if col == 0 {
        0..0
    } else if lower {
        offset.saturating_neg().max(0)..row
    } else {
        0..row.min(col.saturating_sub(offset).max(0))
    };
    let count: i128 = if lower {
        clamped_sum(rows.clone(), offset.saturating_add(1), col)
    } else {
        let n = i128::from((rows.end - rows.start).max(0));
        n * i128::from(col) - clamped_sum(rows.clone(), offset, col)
    };
    let count = usize::try_from(count).map_err(|_| TensorError::SizeOverflow {
        sizes: vec![2, usize::MAX],
    })?;
    fxvm_tensor::alloc::new_numel(&[2, count], DType::I64)?;
    let (mut rs, mut cs) = (Vec::with_capacity(2 * count), Vec::with_capacity(count));
    for r in rows {
        let (lo, hi) = run(r);
        for c in lo..hi {
            rs.push(r);
            cs.push(c);
        }
    }
    let n = rs.len();
    rs.extend(cs);
    Ok(Tensor::from_vec(rs, &[2, n]).to_dtype(dtype))
}

/// `Tensor.unfold(dimension, size, step)`: every window of `size` along
/// `dimension`, `step` apart, as a new last dim — a view.
fn unfold(x: &Tensor, dim: i64, size: i64, step: i64) -> Result<Tensor> {
    let d = if x.ndim() == 0 { 0 } else { x.dim(dim)? };
    let len = x.shape().get(d).copied().unwrap_or(1) as i64;
    if size > len || size < 0 {
        return Err(fail(
            "unfold",
            format!("maximum size for tensor at dimension {d} is {len} but size is {size}"),
        ));
    }
    if step <= 0 {
        return Err(fail("unfold", format!("step is {step} but must be > 0")));
    }
    let layout = x.layout();
    let mut shape = layout.shape.clone();
    let mut strides = layout.strides.clone();
    let along = strides.get(d).copied().unwrap_or(1);
    if x.ndim() == 0 {
        shape = vec![size as usize];
        strides = vec![1];
    } else {
        shape[d] = ((len - size) / step + 1) as usize;
        strides[d] = along * step as usize;
        shape.push(size as usize);
        strides.push(along);
    }
    Ok(x.with_layout(fxvm_tensor::layout::Layout {
        shape,
        strides,
        offset: layout.offset,
    }))
}

fn tuple(pieces: Vec<Tensor>) -> Value {
    Value::Tuple(pieces.into_iter().map(Value::Tensor).collect())
}

pub(crate) fn rows() -> Vec<Op> {
    let mut rows = vec![];
    for name in ["movedim", "moveaxis"] {
        rows.push(
            op(
                Box::leak(
                    format!("{name}(Tensor input, int|int[] source, int|int[] destination)")
                        .into_boxed_str(),
                ),
                TM,
                move |(x, s, d): (Tensor, Or<i64, Vec<i64>>, Or<i64, Vec<i64>>)| {
                    // PyTorch's two overloads take two ints or two lists.
                    if matches!(s, Or::A(_)) != matches!(d, Or::A(_)) {
                        return Err(TensorError::Argument {
                            op: name,
                            message: "received an invalid combination of arguments - got an int and a list of ints, but expected (int, int) or (tuple of ints, tuple of ints)".into(),
                        });
                    }
                    movedim(&x, ints(s), ints(d))
                },
            )
            .composite(),
        );
    }
    // PyTorch names the numpy spelling's parameters as numpy does.
    for (name, a, b) in [("swapaxes", "axis0", "axis1"), ("swapdims", "dim0", "dim1")] {
        rows.push(
            op(
                Box::leak(format!("{name}(Tensor input, int {a}, int {b})").into_boxed_str()),
                TM,
                |(x, a, b): (Tensor, i64, i64)| shape::transpose(&x, a, b),
            )
            .composite(),
        );
    }
    rows.extend([
        op(
            "broadcast_to(Tensor input, int[] size)",
            TM,
            |(x, size): (Tensor, Vec<i64>)| shape::expand(&x, &size),
        )
        .composite(),
        op("ravel(Tensor input)", TM, |(x,): (Tensor,)| shape::reshape(&x, &[-1]))
        .composite(),
        op(
            "diagflat(Tensor input, int offset=0)",
            TM,
            |(x, offset): (Tensor, i64)| {
                let flat = shape::reshape(&x, &[-1])?;
                o::call("diag", vec![Value::Tensor(flat), Value::Int(offset)], vec![])
            },
        )
        .composite(),
        op(
            "unfold(Tensor input, int dimension, int size, int step)",
            crate::op::M,
            |(x, d, size, step): (Tensor, i64, i64, i64)| unfold(&x, d, size, step),
        )
        .grad(crate::derivatives::layout::unfold()),
        op(
            "split_with_sizes(Tensor input, int[] split_sizes, int dim=0)",
            TM,
            |(x, sizes, dim): (Tensor, Vec<i64>, i64)| {
                if x.ndim() == 0 {
                    return Err(fail("split_with_sizes", "split expects at least a 1-dimensional tensor".into()));
                }
                let total: i64 = sizes.iter().sum();
                let d = x.dim(dim)?;
                if total != x.shape()[d] as i64 {
                    return Err(fail(
                        "split_with_sizes",
                        format!(
                            "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {dim}), but got split_sizes={sizes:?}",
                            x.shape()[d]
                        ),
                    ));
                }
                let split = fxvm_tensor::ops::shape::Split::Sizes(sizes.into_iter().map(|s| s.max(0) as usize).collect());
                Ok(tuple(fxvm_tensor::ops::shape::split(&x, split, dim)?))
            },
        )
        .grad(crate::derivatives::shape::pieces("SplitWithSizesBackward0", false)),
        op("tile(Tensor input, int[] dims)", TM, |(x, dims): (Tensor, Vec<i64>)| tile(&x, &dims))
        .composite(),
        // `torch.repeat_interleave(repeats)` is a function's one-argument
        // form (no dim); the method always takes repeats.
        op(
            "repeat_interleave(Tensor input, Tensor|int? repeats=None, int? dim=None, *, int? output_size=None)",
            T,
            |(x, repeats, dim, size): (Tensor, Option<Or<Tensor, i64>>, Option<i64>, Option<i64>)| {
                repeat_interleave_call(x, repeats, dim, size)
            },
        )
        .refuses(&["dim"], &["repeats"])
        .grad(crate::derivatives::index::repeat_interleave()),
        op(
            "repeat_interleave(Tensor input, Tensor|int repeats, int? dim=None, *, int? output_size=None)",
            M,
            |(x, repeats, dim, size): (Tensor, Or<Tensor, i64>, Option<i64>, Option<i64>)| {
                repeat_interleave_call(x, Some(repeats), dim, size)
            },
        )
        .grad(crate::derivatives::index::repeat_interleave()),
        op(
            "tensor_split(Tensor input, Tensor|int|int[] indices_or_sections, int dim=0)",
            TM,
            |(x, at, dim): (Tensor, Or<Tensor, Or<i64, Vec<i64>>>, i64)| {
                if let Or::A(t) = &at {
                    if t.dtype() != fxvm_tensor::DType::I64 {
                        return Err(fail("tensor_split", format!(
                            "tensor_split expected tensor_indices_or_sections to have dtype of long, but got {}",
                            fxvm_tensor::error::legacy_name(t.dtype())
                        )));
                    }
                    if t.ndim() > 1 {
                        return Err(fail("tensor_split", format!(
                            "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but got a tensor with {} dims",
                            t.ndim()
                        )));
                    }
                }
                let at = match at {
                    Or::A(t) if t.ndim() == 0 => Or::A(t.to_vec::<i64>()[0]),
                    Or::A(t) => Or::B(t.to_vec::<i64>()),
                    Or::B(v) => v,
                };
                Ok(tuple(tensor_split(&x, at, dim)?))
            },
        )
        .composite(),
        op(
            "hsplit(Tensor input, int|int[] indices_or_sections)",
            TM,
            |(x, at): (Tensor, Or<i64, Vec<i64>>)| {
                let dim = if x.ndim() == 1 { 0 } else { 1 };
                Ok(tuple(split_along("hsplit", &x, at, dim, 1)?))
            },
        )
        .composite(),
        op(
            "vsplit(Tensor input, int|int[] indices_or_sections)",
            TM,
            |(x, at): (Tensor, Or<i64, Vec<i64>>)| Ok(tuple(split_along("vsplit", &x, at, 0, 2)?)),
        )
        .composite(),
        op(
            "dsplit(Tensor input, int|int[] indices_or_sections)",
            TM,
            |(x, at): (Tensor, Or<i64, Vec<i64>>)| Ok(tuple(split_along("dsplit", &x, at, 2, 3)?)),
        )
        .composite(),
        op("atleast_1d(Tensor[] *tensors)", T, |(ts,): (Vec<Tensor>,)| at_least_all(ts, 1))
        .composite(),
        op("atleast_2d(Tensor[] *tensors)", T, |(ts,): (Vec<Tensor>,)| at_least_all(ts, 2))
        .composite(),
        op("atleast_3d(Tensor[] *tensors)", T, |(ts,): (Vec<Tensor>,)| at_least_all(ts, 3))
        .composite(),
        op("hstack(Tensor[] tensors)", T, |(ts,): (Vec<Tensor>,)| hstack(&ts))
        .composite(),
        op("vstack(Tensor[] tensors)", T, |(ts,): (Vec<Tensor>,)| stack_along(&ts, 2, 0))
        .composite(),
        op("row_stack(Tensor[] tensors)", T, |(ts,): (Vec<Tensor>,)| stack_along(&ts, 2, 0))
        .composite(),
        op("dstack(Tensor[] tensors)", T, |(ts,): (Vec<Tensor>,)| stack_along(&ts, 3, 2))
        .composite(),
        op("column_stack(Tensor[] tensors)", T, |(ts,): (Vec<Tensor>,)| column_stack(&ts))
        .composite(),
        op(
            "take_along_dim(Tensor input, Tensor indices, int? dim=None)",
            TM,
            |(x, i, dim): (Tensor, Tensor, Option<i64>)| take_along_dim(&x, &i, dim),
        )
        .composite(),
        op("block_diag(Tensor[] *tensors)", T, |(ts,): (Vec<Tensor>,)| block_diag(&ts))
        .grad(crate::derivatives::layout::block_diag()),
        op("cartesian_prod(Tensor[] *tensors)", T, |(ts,): (Vec<Tensor>,)| cartesian_prod(&ts))
        .composite(),
        op(
            "combinations(Tensor input, int r=2, bool with_replacement=False)",
            T,
            |(x, r, rep): (Tensor, i64, bool)| combinations(&x, r, rep),
        )
        .composite(),
        op(
            "diag_embed(Tensor input, int offset=0, int dim1=-2, int dim2=-1)",
            TM,
            |(x, o, d1, d2): (Tensor, i64, i64, i64)| diag_embed(&x, o, d1, d2),
        )
        .grad(crate::derivatives::layout::diag_embed()),
        op("kron(Tensor input, Tensor other)", TM, |(a, b): (Tensor, Tensor)| kron(&a, &b))
        .composite(),
        op(
            "tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=None, Device? device=None)",
            T,
            |(r, c, o, dtype, _): (i64, i64, i64, Option<DType>, crate::value::Device)| {
                triangle_indices(r, c, o, true, dtype.unwrap_or(DType::I64))
            },
        ),
        op(
            "triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=None, Device? device=None)",
            T,
            |(r, c, o, dtype, _): (i64, i64, i64, Option<DType>, crate::value::Device)| {
                triangle_indices(r, c, o, false, dtype.unwrap_or(DType::I64))
            },
        ),
    ]);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed-form triangle size is the count of the rows' runs.
    #[test]
    fn triangle_sizes_in_closed_form_count_every_kept_element() {
        for row in 0..6 {
            for col in 0..6 {
                for offset in -7..8 {
                    for lower in [true, false] {
                        let t = triangle_indices(row, col, offset, lower, DType::I64).unwrap();
                        let kept = (0..row)
                            .flat_map(|r| (0..col).map(move |c| (r, c)))
                            .filter(|&(r, c)| {
                                if lower {
                                    c - r <= offset
                                } else {
                                    c - r >= offset
                                }
                            })
                            .count();
                        assert_eq!(t.shape(), [2, kept], "{row} {col} {offset} {lower}");
                    }
                }
            }
        }
        // Far past memory: refused at once, not looped over.
        assert!(triangle_indices(1 << 40, 1 << 40, 0, true, DType::I64).is_err());
        assert_eq!(
            triangle_indices(1 << 62, 0, 0, true, DType::I64)
                .unwrap()
                .shape(),
            [2, 0]
        );
    }
}
