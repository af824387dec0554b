//! Matrix products: `matmul` in all its forms, `mm bmm addmm outer linear`.
//! Floating point goes through the `gemm` crate, which reads any strides, so
//! transposed and broadcast operands are never copied.

use std::mem::MaybeUninit;

use gemm::Parallelism;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::layout::{Layout, broadcast_shapes};
use crate::storage::Element;
use crate::tensor::Tensor;

/// Products smaller than this many multiply-adds stay on one thread: below
/// it handing half the rows to another thread costs more than it saves.
pub(crate) const PARALLEL_FLOPS: usize = 1 << 20;

/// Fewest rows a thread's block of a split product gets: thinner blocks
/// leave the gemm's register tiles partly empty.
const MIN_BLOCK_ROWS: usize = 16;

/// `a @ b` for operands of at least 2 dims whose leading (batch) dims broadcast.
fn batched(op: &'static str, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (ra, rb) = (a.ndim(), b.ndim());
    let (m, k) = (a.shape()[ra - 2], a.shape()[ra - 1]);
    let (k2, n) = (b.shape()[rb - 2], b.shape()[rb - 1]);
    if k != k2 {
        return Err(match op {
            "bmm" => TensorError::runtime(
                op,
                format!(
                    "Expected size for first two dimensions of batch2 tensor to be: [{}, {k}] but got: [{}, {k2}].",
                    a.shape()[0],
                    b.shape()[0]
                ),
            ),
            _ => TensorError::MatmulShape {
                lhs: vec![a.numel() / k.max(1), k],
                rhs: vec![k2, n],
            },
        });
    }
    let batch = broadcast_shapes(&a.shape()[..ra - 2], &b.shape()[..rb - 2])
        .ok_or_else(|| TensorError::broadcast(&a.shape()[..ra - 2], &b.shape()[..rb - 2]))?;
    // Matrix products do not promote: PyTorch refuses mixed dtypes.
    if a.dtype() != b.dtype() {
        let name = |d: DType| match d {
            DType::I64 => "long int",
            d => d.cpp_name(),
        };
        return Err(TensorError::runtime(
            op,
            format!(
                "expected m1 and m2 to have the same dtype, but got: {} != {}",
                name(a.dtype()),
                name(b.dtype())
            ),
        ));
    }
    let dtype = a.dtype();
    let expand = |t: &Tensor, rows: usize, cols: usize| {
        let mut shape = batch.clone();
        shape.extend([rows, cols]);
        t.with_layout(t.layout().broadcast_to(&shape))
    };
    let (a, b) = (expand(a, m, k), expand(b, k, n));
    let mut out_shape = batch.clone();
    out_shape.extend([m, n]);
    if dtype.is_narrow() {
        let wide = dtype.compute();
        let (a, b) = (a.to_dtype(wide), b.to_dtype(wide));
        return Ok(match wide {
            DType::F32 => gemm_batched::<f32>(&a, &b, &out_shape),
            _ => naive_batched::<i32>(&a, &b, &out_shape),
        }
        .narrowed_to(dtype));
    }
    Ok(match dtype {
        DType::F32 => gemm_batched::<f32>(&a, &b, &out_shape),
        DType::F64 => gemm_batched::<f64>(&a, &b, &out_shape),
        DType::I64 => naive_batched::<i64>(&a, &b, &out_shape),
        DType::I32 => naive_batched::<i32>(&a, &b, &out_shape),
        _ => return Err(TensorError::not_implemented_for("addmm_impl_cpu_", dtype)),
    })
}

/// Storage offsets of each matrix in a batched layout (the last two dims dropped).
fn batch_offsets(l: &Layout) -> Vec<usize> {
    let n = l.ndim();
    Layout {
        shape: l.shape[..n - 2].to_vec(),
        strides: l.strides[..n - 2].to_vec(),
        offset: l.offset,
    }
    .offsets()
    .collect()
}

fn gemm_batched<T: Real>(a: &Tensor, b: &Tensor, out_shape: &[usize]) -> Tensor {
    let r = out_shape.len();
    let (m, n) = (out_shape[r - 2], out_shape[r - 1]);
    let k = a.shape()[r - 1];
    let numel = crate::alloc::ensure_numel::<T>(out_shape);
    // An empty product (k = 0) is zeros; its operands may hold no elements
    // at the offsets their batch strides name.
    if m == 0 || n == 0 || k == 0 {
        return Tensor::from_vec(vec![T::default(); numel], out_shape);
    }
    let (la, lb) = (a.layout(), b.layout());
    let (sa, sb) = (a.read(), b.read());
    let (xa, xb) = (
        T::slice(&sa).expect("a is T"),
        T::slice(&sb).expect("b is T"),
    );
    let rhs_at = |offset: usize| Matrix {
        data: &xb[offset..],
        row_stride: lb.strides[r - 2],
        col_stride: lb.strides[r - 1],
    };
    let lhs_at = |offset: usize, row_stride: usize| Matrix {
        data: &xa[offset..],
        row_stride,
        col_stride: la.strides[r - 1],
    };
    // One matrix on the right for every batch (`x @ w` with a 3-d `x`, as
    // a linear layer's input gradient): the batches' rows are the rows of
    // one taller product, as PyTorch folds them, when they are evenly spaced.
    if lb.strides[..r - 2].iter().all(|&s| s == 0)
        && let Some(row_stride) = folded_row_stride(la)
    {
        let rows = numel / n;
        let lhs = lhs_at(la.offset, row_stride);
        let parallel = rows * n * k >= PARALLEL_FLOPS;
        let out = gemm_new(rows, n, k, lhs, rhs_at(lb.offset), None, parallel);
        return Tensor::from_vec(out, out_shape);
    }
    let (offsets_a, offsets_b) = (batch_offsets(la), batch_offsets(lb));
    let mut out = Vec::with_capacity(numel);
    let one = |(i, cells): (usize, &mut [MaybeUninit<T>]), parallel| {
        let lhs = lhs_at(offsets_a[i], la.strides[r - 2]);
        let start = Start::Overwrite;
        multiply(
            m,
            n,
            k,
            Out { cells, start },
            lhs,
            rhs_at(offsets_b[i]),
            parallel,
        );
    };
    // Many small products (attention's heads) share out the batch; large
    // ones each split their rows.
    let each_parallel = m * n * k >= PARALLEL_FLOPS;
    let cells = &mut out.spare_capacity_mut()[..numel];
    if !each_parallel && offsets_a.len() * m * n * k >= PARALLEL_FLOPS {
        use rayon::prelude::*;
        cells
            .par_chunks_mut(m * n)
            .enumerate()
            .for_each(|job| one(job, false));
    } else {
        cells
            .chunks_mut(m * n)
            .enumerate()
            .for_each(|job| one(job, each_parallel));
    }
    // SAFETY: each batch's product wrote its whole m×n block.
    unsafe { out.set_len(numel) };
    Tensor::from_vec(out, out_shape)
}

/// The row stride of a batched operand's matrices read as one matrix of
/// all their rows (batch after batch), when each batch dim steps over
/// whole matrices of evenly spaced rows; `None` otherwise.
fn folded_row_stride(l: &Layout) -> Option<usize> {
    let r = l.ndim();
    let row_stride = l.strides[r - 2];
    let mut next = l.shape[r - 2] * row_stride;
    for d in (0..r - 2).rev() {
        if l.shape[d] != 1 && l.strides[d] != next {
            return None;
        }
        next *= l.shape[d];
    }
    Some(row_stride)
}

/// A strided matrix operand read from the start of `data`.
#[derive(Clone, Copy)]
pub(crate) struct Matrix<'a, T> {
    pub data: &'a [T],
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<T> Matrix<'_, T> {
    /// Whether every element of a `rows`×`cols` matrix lies inside `data`.
    fn fits(&self, rows: usize, cols: usize) -> bool {
        rows == 0
            || cols == 0
            || (rows - 1) * self.row_stride + (cols - 1) * self.col_stride < self.data.len()
    }
}

/// `dst = lhs @ rhs` for an m×k `lhs`, a k×n `rhs` and a dense row-major
/// m×n `dst`; with `accumulate`, `dst += lhs @ rhs` (onto a bias it holds).
#[allow(clippy::too_many_arguments)] // the product's shape, operands and two modes
pub(crate) fn gemm_into<T: Real>(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [T],
    lhs: Matrix<T>,
    rhs: Matrix<T>,
    parallel: bool,
    accumulate: bool,
) {
    multiply(m, n, k, Out::onto(dst, accumulate), lhs, rhs, parallel);
}

/// A new dense row-major m×n `lhs @ rhs`, each row added onto `bias` when
/// given (n long), written once: no zeroing or filling pass over the whole
/// output before the product.
fn gemm_new<T: Real>(
    m: usize,
    n: usize,
    k: usize,
    lhs: Matrix<T>,
    rhs: Matrix<T>,
    bias: Option<&[T]>,
    parallel: bool,
) -> Vec<T> {
    let numel = crate::alloc::ensure_numel::<T>(&[m, n]);
    let mut out = Vec::with_capacity(numel);
    let cells = &mut out.spare_capacity_mut()[..numel];
    let start = bias.map_or(Start::Overwrite, Start::Rows);
    multiply(m, n, k, Out { cells, start }, lhs, rhs, parallel);
    // SAFETY: `multiply` writes every element of a fresh destination.
    unsafe { out.set_len(numel) };
    out
}

/// A product's destination: cells and what they hold before the product.
/// Initialised values are read only when [`Out::onto`] was given them.
struct Out<'a, T> {
    cells: &'a mut [MaybeUninit<T>],
    start: Start<'a, T>,
}

/// What a product is added onto.
#[derive(Clone, Copy)]
enum Start<'a, T> {
    /// Nothing: the cells are overwritten (and may be uninitialised).
    Overwrite,
    /// The values the cells hold.
    Values,
    /// A row repeated (a bias), written into each row first.
    Rows(&'a [T]),
}

impl<'a, T: Copy> Out<'a, T> {
    /// Whether the product is added onto what the cells start as.
    fn accumulates(&self) -> bool {
        !matches!(self.start, Start::Overwrite)
    }

    fn onto(values: &'a mut [T], accumulate: bool) -> Self {
        // SAFETY: same layout; only initialised values are ever written
        // through `cells`, so `values` stays initialised.
        let cells = unsafe { &mut *(values as *mut [T] as *mut [MaybeUninit<T>]) };
        let start = if accumulate {
            Start::Values
        } else {
            Start::Overwrite
        };
        Out { cells, start }
    }

    /// The destination as initialised values holding what the product is
    /// added onto (zeros when overwriting), for kernels that accumulate.
    fn values(self, zero: T) -> &'a mut [T] {
        match self.start {
            Start::Values => {}
            Start::Overwrite => self.cells.fill(MaybeUninit::new(zero)),
            Start::Rows(row) => {
                for cells in self.cells.chunks_mut(row.len()) {
                    for (c, &x) in cells.iter_mut().zip(row) {
                        *c = MaybeUninit::new(x);
                    }
                }
            }
        }
        // SAFETY: the cells are initialised: given so, or written above.
        unsafe { &mut *(self.cells as *mut [MaybeUninit<T>] as *mut [T]) }
    }
}

/// [`gemm_into`] onto any [`Out`]: the skinny kernel for a few rows against
/// a weight stored by rows, else the gemm crate, split by rows between the
/// pool's threads when `parallel`.
fn multiply<T: Real>(
    m: usize,
    n: usize,
    k: usize,
    dst: Out<'_, T>,
    lhs: Matrix<T>,
    rhs: Matrix<T>,
    parallel: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        dst.values(T::zero()); // an empty sum adds nothing
        return;
    }
    // A few rows against a weight stored by rows (`x @ w.t()`, a linear
    // layer on a small batch): dot products of contiguous rows, with no
    // packing of the weight.
    if crate::ops::skinny::suits(m, n, k) && lhs.col_stride == 1 && rhs.row_stride == 1 {
        use crate::ops::skinny::{Rows, times_rows};
        let x = Rows {
            data: lhs.data,
            stride: lhs.row_stride,
        };
        let w = Rows {
            data: rhs.data,
            stride: rhs.col_stride,
        };
        let accumulate = dst.accumulates();
        times_rows(m, n, k, dst.values(T::zero()), x, w, accumulate);
        return;
    }
    let blocks = rayon::current_num_threads().min(m / MIN_BLOCK_ROWS);
    if parallel && blocks >= 2 {
        // Each thread multiplies a block of rows on its own: the gemm's
        // own threading shares every packed panel and synchronises at each,
        // which on two cores gained 1.45× where separate blocks gain 1.8×.
        use rayon::prelude::*;
        let rows = m.div_ceil(blocks);
        let start = dst.start;
        dst.cells
            .par_chunks_mut(rows * n)
            .enumerate()
            .for_each(|(i, cells)| {
                let lhs = Matrix {
                    data: &lhs.data[i * rows * lhs.row_stride..],
                    ..lhs
                };
                let m = cells.len() / n;
                gemm_on(m, n, k, Out { cells, start }, lhs, rhs, false);
            });
    } else {
        gemm_on(m, n, k, dst, lhs, rhs, parallel);
    }
}

/// [`multiply`] by the gemm crate, on the calling thread or (`threads`)
/// on the pool's.
fn gemm_on<T: Real>(
    m: usize,
    n: usize,
    k: usize,
    dst: Out<'_, T>,
    lhs: Matrix<T>,
    rhs: Matrix<T>,
    threads: bool,
) {
    assert!(
        dst.cells.len() == m * n && lhs.fits(m, k) && rhs.fits(k, n),
        "gemm operands out of bounds"
    );
    let parallelism = if threads {
        Parallelism::Rayon(0)
    } else {
        Parallelism::None
    };
    let accumulate = dst.accumulates();
    let dst = match dst.start {
        // A block's bias rows are written here, on the thread that then
        // adds its product onto them (while they are in its cache).
        Start::Rows(_) => dst.values(T::zero()).as_mut_ptr(),
        _ => dst.cells.as_mut_ptr().cast::<T>(),
    };
    // SAFETY: the assert above keeps every element the strides reach inside
    // the borrowed slices; `dst` is an exclusive dense m×n block, read only
    // when accumulating, which `Out` allows for initialised values alone.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            1,
            n as isize,
            accumulate,
            lhs.data.as_ptr(),
            lhs.col_stride as isize,
            lhs.row_stride as isize,
            rhs.data.as_ptr(),
            rhs.col_stride as isize,
            rhs.row_stride as isize,
            if accumulate { T::one() } else { T::zero() },
            T::one(),
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// The floating-point element types `gemm` multiplies.
pub(crate) trait Real: Element + num_traits::Float + crate::ops::lanes::Lanes {}

impl Real for f32 {}
impl Real for f64 {}

/// Integer products, which BLAS-style kernels do not cover.
fn naive_batched<T: Element>(a: &Tensor, b: &Tensor, out_shape: &[usize]) -> Tensor {
    let r = out_shape.len();
    let (m, n, k) = (out_shape[r - 2], out_shape[r - 1], a.shape()[r - 1]);
    let (la, lb) = (a.layout(), b.layout());
    let (sa, sb) = (a.read(), b.read());
    let (xa, xb) = (
        T::slice(&sa).expect("a is T"),
        T::slice(&sb).expect("b is T"),
    );
    let mut out = Vec::with_capacity(crate::alloc::ensure_numel::<T>(out_shape));
    for (oa, ob) in batch_offsets(la).into_iter().zip(batch_offsets(lb)) {
        for i in 0..m {
            for j in 0..n {
                let mut acc = 0i64;
                for p in 0..k {
                    let x = xa[oa + i * la.strides[r - 2] + p * la.strides[r - 1]].to_i64();
                    let y = xb[ob + p * lb.strides[r - 2] + j * lb.strides[r - 1]].to_i64();
                    acc = acc.wrapping_add(x.wrapping_mul(y));
                }
                out.push(T::from_i64(acc));
            }
        }
    }
    Tensor::from_vec(out, out_shape)
}

pub fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    for (name, t) in [("self", a), ("mat2", b)] {
        if t.ndim() != 2 {
            return Err(TensorError::runtime(
                "mm",
                format!("{name} must be a matrix"),
            ));
        }
    }
    if a.shape()[1] != b.shape()[0] {
        return Err(TensorError::MatmulShape {
            lhs: a.shape().to_vec(),
            rhs: b.shape().to_vec(),
        });
    }
    batched("mm", a, b)
}

pub fn bmm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    for (name, t) in [("batch1", a), ("batch2", b)] {
        if t.ndim() != 3 {
            return Err(TensorError::runtime(
                "bmm",
                format!("{name} must be a 3D tensor"),
            ));
        }
    }
    if a.shape()[0] != b.shape()[0] {
        return Err(TensorError::runtime(
            "bmm",
            format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                a.shape()[0],
                a.shape()[2],
                b.shape()[0],
                b.shape()[1]
            ),
        ));
    }
    if a.shape()[1] == 0 || b.shape()[2] == 0 || a.shape()[0] == 0 {
        // PyTorch returns an empty product, in batch2's dtype, before it
        // compares dtypes.
        return Ok(Tensor::zeros(
            &[a.shape()[0], a.shape()[1], b.shape()[2]],
            b.dtype(),
        ));
    }
    batched("bmm", a, b)
}

/// `torch.matmul`: dot, matrix-vector, vector-matrix, and broadcast batches.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (ra, rb) = (a.ndim(), b.ndim());
    if ra == 0 || rb == 0 {
        return Err(TensorError::runtime(
            "matmul",
            format!(
                "both arguments to matmul need to be at least 1D, but they are {ra}D and {rb}D"
            ),
        ));
    }
    if ra == 1 && rb == 1 && a.shape()[0] != b.shape()[0] {
        {
            return Err(TensorError::runtime(
                "dot",
                format!(
                    "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                    a.shape()[0],
                    b.shape()[0],
                    a.shape()[0],
                    b.shape()[0]
                ),
            ));
        }
    }
    let a2 = if ra == 1 {
        a.with_layout(a.layout().unsqueeze(0))
    } else {
        a.clone()
    };
    let b2 = if rb == 1 {
        b.with_layout(b.layout().unsqueeze(1))
    } else {
        b.clone()
    };
    let (m, k) = (a2.shape()[a2.ndim() - 2], a2.shape()[a2.ndim() - 1]);
    let (k2, n) = (b2.shape()[b2.ndim() - 2], b2.shape()[b2.ndim() - 1]);
    if k != k2 {
        // PyTorch reports matmul mismatches of 2-D operands as mat1/mat2 shapes.
        let rows = a2.numel() / k.max(1);
        let lhs = if ra > 2 { vec![rows, k] } else { vec![m, k] };
        return Err(TensorError::MatmulShape {
            lhs,
            rhs: vec![k2, n],
        });
    }
    let out = batched("matmul", &a2, &b2)?;
    let r = out.ndim();
    let mut shape: Vec<usize> = out.shape().to_vec();
    if rb == 1 {
        shape.remove(r - 1);
    }
    if ra == 1 {
        shape.remove(r - 2);
    }
    Ok(out.with_layout(Layout::contiguous(&shape)))
}

/// `x @ w.T + b`, the `nn.Linear` kernel.
pub fn linear(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor> {
    let wt = w.with_layout(if w.ndim() == 2 {
        w.layout().transpose(0, 1)
    } else {
        w.layout().clone()
    });
    let k = x.shape().last().copied().unwrap_or(0);
    if w.ndim() == 2 && w.shape()[1] != k {
        return Err(TensorError::MatmulShape {
            lhs: vec![x.numel() / k.max(1), k],
            rhs: vec![w.shape()[1], w.shape()[0]],
        });
    }
    if let Some(y) = linear_onto_bias(x, w, b) {
        return Ok(y);
    }
    let y = matmul(x, &wt)?;
    match b {
        Some(b) => {
            use super::elementwise::{Arg, Binary, binary};
            binary(Binary::Add, &Arg::Tensor(y), &Arg::Tensor(b.clone()))
        }
        None => Ok(y),
    }
}

/// `linear` as one product added onto rows of the bias (as PyTorch's
/// `addmm`), sparing a pass over the output and its temporary: for a 1-d
/// bias of the weight's dtype and rows of `x` that read as one strided
/// matrix; `None` sends the other cases through `matmul` and a broadcast add.
fn linear_onto_bias(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Option<Tensor> {
    let b = b?;
    let n = *w.shape().first()?;
    let same_dtype = x.dtype() == w.dtype() && b.dtype() == w.dtype();
    if w.ndim() != 2 || b.shape() != [n] || !same_dtype || x.ndim() == 0 {
        return None;
    }
    match x.dtype() {
        DType::F32 => linear_rows::<f32>(x, w, b),
        DType::F64 => linear_rows::<f64>(x, w, b),
        _ => None,
    }
}

fn linear_rows<T: Real>(x: &Tensor, w: &Tensor, b: &Tensor) -> Option<Tensor> {
    let (n, k) = (w.shape()[0], w.shape()[1]);
    let r = x.ndim();
    let (row_stride, col_stride) = match r {
        1 => (k, x.layout().strides[0]),
        2 => (x.layout().strides[0], x.layout().strides[1]),
        _ if x.is_contiguous() => (k, 1),
        _ => return None,
    };
    let rows = x.shape()[..r - 1].iter().product::<usize>();
    let mut shape = x.shape()[..r - 1].to_vec();
    shape.push(n);
    let bias = b.to_vec::<T>();
    let (sx, sw) = (x.read(), w.read());
    let (xs, ws) = (T::slice(&sx)?, T::slice(&sw)?);
    let wl = w.layout();
    let lhs = Matrix {
        data: xs.get(x.layout().offset..)?,
        row_stride,
        col_stride,
    };
    // `w` read transposed: its rows are the product's columns.
    let rhs = Matrix {
        data: ws.get(wl.offset..)?,
        row_stride: wl.strides[1],
        col_stride: wl.strides[0],
    };
    let parallel = rows * n * k >= PARALLEL_FLOPS;
    let out = gemm_new(rows, n, k, lhs, rhs, Some(&bias), parallel);
    Some(Tensor::from_vec(out, &shape))
}

pub fn outer(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() != 1 || b.ndim() != 1 {
        return Err(TensorError::runtime(
            "outer",
            "outer: Expected 1-D argument self",
        ));
    }
    // An outer product is a broadcast multiply, so it promotes dtypes as `*` does.
    let dtype = DType::promote(a.dtype(), b.dtype());
    let (a, b) = (a.to_dtype(dtype), b.to_dtype(dtype));
    matmul(
        &a.with_layout(a.layout().unsqueeze(1)),
        &b.with_layout(b.layout().unsqueeze(0)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::lanes::testing;
    use crate::ops::shape::narrow;

    fn values(shape: &[usize], seed: u64) -> Tensor {
        Tensor::from_vec(testing::values(shape.iter().product(), seed), shape)
    }

    /// `x @ wᵀ + b` by its definition, row by row of `x` seen as [rows, k].
    fn definition(x: &Tensor, w: &Tensor, b: &Tensor) -> Vec<f64> {
        let (xs, ws, bs) = (x.to_vec::<f64>(), w.to_vec::<f64>(), b.to_vec::<f64>());
        let (n, k) = (w.shape()[0], w.shape()[1]);
        let mut out = Vec::new();
        for row in xs.chunks(k) {
            for j in 0..n {
                out.push(bs[j] + (0..k).map(|p| row[p] * ws[j * k + p]).sum::<f64>());
            }
        }
        out
    }

    #[test]
    fn linear_adds_its_bias_for_every_layout_of_the_input() {
        let w = values(&[5, 3], 1);
        let b = values(&[5], 2);
        let wide = values(&[4, 7], 3);
        let cases = [
            ("vector", values(&[3], 4)),
            ("matrix", values(&[4, 3], 5)),
            (
                "transposed",
                values(&[3, 4], 6).with_layout(values(&[3, 4], 6).layout().transpose(0, 1)),
            ),
            (
                "columns of a wider matrix",
                narrow(&wide, 1, 2, 3).expect("narrow"),
            ),
            ("batched", values(&[2, 4, 3], 7)),
            ("batched, permuted", {
                let t = values(&[3, 4, 2], 8);
                t.with_layout(t.layout().transpose(0, 2))
            }),
            ("skinny path", values(&[2, 20], 9)),
        ];
        for (what, x) in cases {
            let (w, b) = if what == "skinny path" {
                (values(&[17, 20], 10), values(&[17], 11))
            } else {
                (w.clone(), b.clone())
            };
            let y = linear(&x, &w, Some(&b)).expect(what);
            let mut shape = x.shape()[..x.ndim() - 1].to_vec();
            shape.push(w.shape()[0]);
            assert_eq!(y.shape(), shape, "{what}");
            let want = definition(&x.contiguous(), &w, &b);
            for (g, e) in y.to_vec::<f64>().iter().zip(&want) {
                assert!((g - e).abs() < 1e-9, "{what}: {g} vs {e}");
            }
        }
        // A bias of another shape still broadcasts, through the general path.
        let x = values(&[4, 3], 5);
        let y = linear(&x, &w, Some(&values(&[1], 2))).expect("broadcast bias");
        assert_eq!(y.shape(), [4, 5]);
    }

    /// `a @ b` by its definition, for operands already broadcast to
    /// [batch, m, k] and [batch, k, n].
    fn product_definition(a: &Tensor, b: &Tensor) -> Vec<f64> {
        let (r, rb) = (a.ndim(), b.ndim());
        let (m, k, n) = (a.shape()[r - 2], a.shape()[r - 1], b.shape()[rb - 1]);
        let (xa, xb) = (
            a.contiguous().to_vec::<f64>(),
            b.contiguous().to_vec::<f64>(),
        );
        let batches = xa.len() / (m * k);
        let mut out = Vec::new();
        for i in 0..batches {
            let bi = if xb.len() == k * n { 0 } else { i };
            for row in 0..m {
                for col in 0..n {
                    out.push(
                        (0..k)
                            .map(|p| xa[i * m * k + row * k + p] * xb[bi * k * n + p * n + col])
                            .sum(),
                    );
                }
            }
        }
        out
    }

    fn assert_close(got: &Tensor, want: &[f64], what: &str) {
        let got = got.to_vec::<f64>();
        assert_eq!(got.len(), want.len(), "{what}");
        for (g, e) in got.iter().zip(want) {
            assert!((g - e).abs() < 1e-9 * (1.0 + e.abs()), "{what}: {g} vs {e}");
        }
    }

    #[test]
    fn products_split_folded_or_shared_out_equal_their_definition() {
        // Large enough to be split between threads by rows (uneven blocks
        // included), to fold a batch into one taller product, or to share
        // a batch of small products out.
        let cases: Vec<(&str, Tensor, Tensor)> = vec![
            ("split rows", values(&[301, 70], 1), values(&[70, 60], 2)),
            ("split, transposed rhs", values(&[257, 64], 3), {
                let t = values(&[80, 64], 4);
                t.with_layout(t.layout().transpose(0, 1))
            }),
            (
                "folded batch",
                values(&[3, 100, 64], 5),
                values(&[64, 90], 6),
            ),
            (
                "batch not foldable",
                {
                    let t = values(&[100, 3, 64], 7);
                    t.with_layout(t.layout().transpose(0, 1))
                },
                values(&[64, 90], 8),
            ),
            (
                "shared-out batch",
                values(&[40, 32, 32], 9),
                values(&[40, 32, 32], 10),
            ),
        ];
        for (what, a, b) in cases {
            let (pa, pb) = (a.to_dtype(DType::F64), b.to_dtype(DType::F64));
            let want = product_definition(&pa, &pb);
            assert_close(&matmul(&pa, &pb).expect(what), &want, what);
            let got32 = matmul(&a.to_dtype(DType::F32), &b.to_dtype(DType::F32)).expect(what);
            for (g, e) in got32.to_vec::<f64>().iter().zip(&want) {
                assert!(
                    (g - e).abs() < 1e-3 * (1.0 + e.abs()),
                    "{what} f32: {g} vs {e}"
                );
            }
        }
    }

    #[test]
    fn linear_split_between_threads_adds_the_bias_to_every_row() {
        let (x, w, b) = (
            values(&[4, 75, 128], 1),
            values(&[96, 128], 2),
            values(&[96], 3),
        );
        let y = linear(&x, &w, Some(&b)).expect("linear");
        assert_eq!(y.shape(), [4, 75, 96]);
        assert_close(&y, &definition(&x, &w, &b), "split linear");
    }
}
