//! The tensor handle: shared storage plus a layout. Cloning is cheap (a view).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::dtype::{DType, Scalar};
use super::error::{Result, TensorError};
use super::layout::{Layout, MemoryFormat};
use super::storage::{Element, Storage, with_dtype, with_storage};

/// A storage and, under an embedding host's memory cap, its charge
/// (released when the last tensor viewing it is dropped).
#[derive(Debug)]
pub(crate) struct Shared {
    data: RwLock<Storage>,
    /// Writes so far (each `write()`), shared by every view: what a cache
    /// of values derived from the data (folded weights) compares.
    version: AtomicU64,
    /// When the storage was made (see [`Tensor::storage_serial`]).
    serial: u64,
    _charge: Option<crate::cap::Charge>,
}

/// Storages made so far in the process: each new one takes the next number.
static STORAGES: AtomicU64 = AtomicU64::new(0);

/// A tensor handle. Clones are the same tensor (PyTorch's one
/// `TensorImpl`): they share the layout and the autograd record; a view is
/// a new tensor on the same storage.
#[derive(Clone, Debug)]
pub struct Tensor {
    pub(crate) storage: Arc<Shared>,
    /// Shared, so cloning a handle (every argument of every call) copies no sizes.
    pub(crate) imp: Arc<Impl>,
    dtype: DType,
}

/// What the clones of one tensor share.
#[derive(Debug)]
pub(crate) struct Impl {
    layout: Layout,
    pub(crate) autograd: crate::autograd::Slot,
}

impl Impl {
    fn new(layout: Layout) -> Arc<Impl> {
        Arc::new(Impl {
            layout,
            autograd: Default::default(),
        })
    }
}

impl Tensor {
    /// A dense tensor of `shape` owning `data` (row-major).
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Tensor {
        debug_assert_eq!(data.len(), shape.iter().product::<usize>());
        Tensor::from_storage(T::wrap(data), shape)
    }

    /// A dense tensor of `dtype` from row-major scalars, as `torch.tensor`
    /// builds it: each value cast as `.to(dtype)` would, refusing values out
    /// of an integer dtype's range (a float dtype takes them as ±inf).
    pub fn from_scalars(values: &[Scalar], shape: &[usize], dtype: DType) -> Result<Tensor> {
        if !dtype.is_float() && values.iter().any(|s| !s.fits(dtype)) {
            return Err(TensorError::ValueOverflow {
                type_name: dtype.name(),
            });
        }
        Ok(
            with_dtype!(dtype, T => Tensor::from_vec(values.iter().map(|&s| T::from_scalar(s)).collect(), shape)),
        )
    }

    /// `value` as a fill value of `dtype` (`full`, `fill_`, `masked_fill`):
    /// refused when out of range, named as PyTorch's C++ names the type.
    pub fn fill_value(value: Scalar, dtype: DType) -> Result<Scalar> {
        if value.fits(dtype) {
            Ok(value)
        } else {
            Err(TensorError::ValueOverflow {
                type_name: dtype.cpp_name(),
            })
        }
    }

    pub fn from_storage(storage: Storage, shape: &[usize]) -> Tensor {
        let dtype = storage.dtype();
        let charge = crate::cap::Charge::new(storage.len() * crate::bytes::element_size(dtype));
        Tensor {
            storage: Arc::new(Shared {
                data: RwLock::new(storage),
                version: AtomicU64::new(0),
                serial: STORAGES.fetch_add(1, Ordering::Relaxed),
                _charge: charge,
            }),
            imp: Impl::new(Layout::contiguous(shape)),
            dtype,
        }
    }

    pub fn scalar(value: Scalar, dtype: DType) -> Tensor {
        Tensor::full(&[], value, dtype)
    }

    pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> Tensor {
        with_dtype!(dtype, T => {
            let n = crate::alloc::ensure_numel::<T>(shape);
            Tensor::from_vec(vec![T::from_scalar(value); n], shape)
        })
    }

    pub fn zeros(shape: &[usize], dtype: DType) -> Tensor {
        Tensor::from_storage(Storage::zeros(dtype, shape.iter().product()), shape)
    }

    /// Zeros shaped like `self`, laid out in `self`'s memory order when it
    /// is dense (a transposed tensor gives a transposed result), else
    /// contiguous — PyTorch's `empty_like` (preserve_format). Fills visit
    /// memory order, so random `*_like` tensors land as PyTorch's do.
    pub fn zeros_like(&self, dtype: DType) -> Tensor {
        let order = self.imp.layout.memory_order();
        if !self.imp.layout.is_dense_in_order(&order) {
            return Tensor::zeros(self.shape(), dtype);
        }
        Tensor::zeros_in_order(self.shape(), &order, dtype)
    }

    /// Zeros of `shape` laid out with dim `order[0]` outermost in memory.
    pub(crate) fn zeros_in_order(shape: &[usize], order: &[usize], dtype: DType) -> Tensor {
        let dense: Vec<usize> = order.iter().map(|&d| shape[d]).collect();
        let mut back = vec![0; order.len()];
        for (i, &d) in order.iter().enumerate() {
            back[d] = i;
        }
        let z = Tensor::zeros(&dense, dtype);
        z.with_layout(z.layout().permute(&back))
    }

    /// Zeros shaped like `self`, laid out in `format` (`*_like(memory_format=)`).
    pub fn zeros_in(&self, dtype: DType, format: MemoryFormat) -> Result<Tensor> {
        let (rank, order, name): (usize, &[usize], &str) = match format {
            MemoryFormat::Preserve => return Ok(self.zeros_like(dtype)),
            MemoryFormat::Contiguous => return Ok(Tensor::zeros(self.shape(), dtype)),
            MemoryFormat::ChannelsLast => (4, &[0, 2, 3, 1], "channels_last"),
            MemoryFormat::ChannelsLast3d => (5, &[0, 2, 3, 4, 1], "channels_last_3d"),
        };
        if self.ndim() != rank {
            return Err(TensorError::runtime(
                "empty_like",
                format!("required rank {rank} tensor to use {name} format"),
            ));
        }
        Ok(Tensor::zeros_in_order(self.shape(), order, dtype))
    }

    /// Whether the elements are dense in `format`'s order (`is_contiguous(memory_format=)`).
    pub fn is_in_format(&self, format: MemoryFormat) -> bool {
        match format {
            MemoryFormat::Contiguous | MemoryFormat::Preserve => self.is_contiguous(),
            MemoryFormat::ChannelsLast => self.is_dense_in_order(&[0, 2, 3, 1]),
            MemoryFormat::ChannelsLast3d => self.is_dense_in_order(&[0, 2, 3, 4, 1]),
        }
    }

    /// A copy laid out in `format` (`clone(memory_format=)`).
    pub fn copy_in(&self, format: MemoryFormat) -> Result<Tensor> {
        let layout = &self.imp.layout;
        if format == MemoryFormat::Preserve {
            let order = layout.memory_order();
            if !layout.is_dense_in_order(&order) {
                // Not dense (a slice, an expansion): PyTorch's preserved
                // format is then the contiguous one.
                return Ok(self.copy());
            }
            // Dense in some order: the storage run it covers, copied as it
            // is, read through the same strides.
            let run = layout.offset..layout.offset + self.numel();
            let storage = self.read();
            let copy =
                with_storage!(&*storage, v, S => S::wrap(crate::ops::elementwise::copied(&v[run])));
            drop(storage);
            let same = Layout {
                offset: 0,
                ..layout.clone()
            };
            return Ok(Tensor::from_storage(copy, &[self.numel()]).with_layout(same));
        }
        if format == MemoryFormat::Contiguous {
            return Ok(self.copy());
        }
        let out = self.zeros_in(self.dtype, format)?;
        out.copy_from(self)?;
        Ok(out)
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn layout(&self) -> &Layout {
        &self.imp.layout
    }

    pub fn shape(&self) -> &[usize] {
        &self.imp.layout.shape
    }

    pub fn strides(&self) -> &[usize] {
        &self.imp.layout.strides
    }

    pub fn ndim(&self) -> usize {
        self.imp.layout.ndim()
    }

    pub fn numel(&self) -> usize {
        self.imp.layout.numel()
    }

    pub fn is_contiguous(&self) -> bool {
        self.imp.layout.is_contiguous()
    }

    /// Contiguity in a dim order other than the natural one (channels-last).
    pub fn is_dense_in_order(&self, order: &[usize]) -> bool {
        order.len() == self.ndim() && self.imp.layout.is_dense_in_order(order)
    }

    /// A new view of the same storage (a new tensor: no autograd record).
    pub fn with_layout(&self, layout: Layout) -> Tensor {
        Tensor {
            storage: self.storage.clone(),
            imp: Impl::new(layout),
            dtype: self.dtype,
        }
    }

    pub(crate) fn from_parts(storage: Arc<Shared>, imp: Arc<Impl>, dtype: DType) -> Tensor {
        Tensor {
            storage,
            imp,
            dtype,
        }
    }

    pub(crate) fn storage(&self) -> &Arc<Shared> {
        &self.storage
    }

    pub fn read(&self) -> RwLockReadGuard<'_, Storage> {
        self.storage.data.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn write(&self) -> RwLockWriteGuard<'_, Storage> {
        self.storage.version.fetch_add(1, Ordering::AcqRel);
        self.storage.data.write().unwrap_or_else(|e| e.into_inner())
    }

    /// `f` on this tensor's storage (opened for writing) and `src`'s (for
    /// reading), or `None` when they are one storage (the caller gathers
    /// first instead). The locks are taken in address order, so two threads
    /// copying between the same two tensors in opposite directions cannot
    /// each hold one and wait for the other.
    pub(crate) fn write_reading<R>(
        &self,
        src: &Tensor,
        f: impl FnOnce(&mut Storage, &Storage) -> R,
    ) -> Option<R> {
        if Arc::ptr_eq(&self.storage, &src.storage) {
            return None;
        }
        Some(if Arc::as_ptr(&self.storage) < Arc::as_ptr(&src.storage) {
            let mut dst = self.write();
            f(&mut dst, &src.read())
        } else {
            let values = src.read();
            f(&mut self.write(), &values)
        })
    }

    /// Whether this handle is the only one on its storage (no clone, view
    /// or export shares it): writing it in place changes nothing anyone
    /// else can see.
    pub fn is_sole_handle(&self) -> bool {
        self.storage_handles() == 1
    }

    /// The handle's identity: equal for clones (one tensor), different for
    /// every view or detached handle, unique among live tensors.
    pub fn handle_id(&self) -> usize {
        Arc::as_ptr(&self.imp) as usize
    }

    /// The order the storage was made in: storages made after
    /// [`Tensor::next_storage_serial`] returned `n` have serials `>= n`.
    pub fn storage_serial(&self) -> u64 {
        self.storage.serial
    }

    /// The serial the next storage made will have.
    pub fn next_storage_serial() -> u64 {
        STORAGES.load(Ordering::Relaxed)
    }

    /// How many tensor handles (of any view) hold the storage.
    pub fn storage_handles(&self) -> usize {
        Arc::strong_count(&self.storage)
    }

    /// How many times the storage has been opened for writing: unchanged
    /// means the data is (a value computed from it is still good).
    pub fn version(&self) -> u64 {
        self.storage.version.load(Ordering::Acquire)
    }

    /// Wraps a negative dim and checks it against `ndim` (a 0-dim tensor takes -1 and 0).
    pub fn dim(&self, dim: i64) -> Result<usize> {
        wrap_dim(dim, self.ndim())
    }

    /// `dim` for an op that needs a real dimension: a 0-dim tensor has none
    /// (unlike [`Tensor::dim`], which lets it take -1 and 0).
    pub fn dim_strict(&self, dim: i64) -> Result<usize> {
        if self.ndim() == 0 {
            return Err(TensorError::NoDims { dim });
        }
        self.dim(dim)
    }

    /// The elements in row-major order, converted to `T`.
    pub fn to_vec<T: Element>(&self) -> Vec<T> {
        crate::alloc::ensure::<T>(self.numel());
        let storage = self.read();
        if let (Some(v), Some(r)) = (T::slice(&storage), self.imp.layout.contiguous_range()) {
            return crate::ops::elementwise::copied(&v[r]);
        }
        with_storage!(&*storage, v, S => {
            match self.imp.layout.contiguous_range() {
                Some(r) => crate::ops::elementwise::convert(&v[r]),
                None => crate::ops::strided::map_strided(&self.imp.layout, v, |x| x.cast::<T>()),
            }
        })
    }

    /// Runs `f` on the elements in row-major order: borrowed from the storage
    /// when the layout is dense and `T` is this tensor's dtype, else gathered.
    pub fn with_slice<T: Element, R>(&self, f: impl FnOnce(&[T]) -> R) -> R {
        if T::DTYPE == self.dtype
            && let Some(r) = self.imp.layout.contiguous_range()
        {
            let storage = self.read();
            return f(&T::slice(&storage).expect("storage dtype matches tensor dtype")[r]);
        }
        f(&self.to_vec::<T>())
    }

    /// A dense copy (or this tensor itself when already dense and starting at 0).
    pub fn contiguous(&self) -> Tensor {
        if self.is_contiguous() && self.imp.layout.offset == 0 && self.read().len() == self.numel()
        {
            return self.clone();
        }
        self.copy()
    }

    /// A dense copy that shares nothing with this tensor.
    pub fn copy(&self) -> Tensor {
        with_dtype!(self.dtype, T => Tensor::from_vec(self.to_vec::<T>(), self.shape()))
    }

    /// This tensor converted to `dtype` (itself when it already is).
    pub fn to_dtype(&self, dtype: DType) -> Tensor {
        if dtype == self.dtype {
            return self.clone();
        }
        with_dtype!(dtype, T => Tensor::from_vec(self.to_vec::<T>(), self.shape()))
    }

    /// A result computed in `narrow`'s compute dtype (see
    /// [`DType::compute`]) stored back as `narrow`; results of other dtypes
    /// (comparisons, indices) stay as they are.
    pub fn narrowed_to(self, narrow: DType) -> Tensor {
        if narrow.is_narrow() && self.dtype == narrow.compute() {
            self.to_dtype(narrow)
        } else {
            self
        }
    }

    /// The single element of a one-element tensor.
    pub fn item(&self) -> Result<Scalar> {
        if self.numel() != 1 {
            return Err(TensorError::runtime(
                "item",
                format!(
                    "a Tensor with {} elements cannot be converted to Scalar",
                    self.numel()
                ),
            ));
        }
        let storage = self.read();
        let offset = self
            .imp
            .layout
            .offsets()
            .next()
            .unwrap_or(self.imp.layout.offset);
        Ok(with_storage!(&*storage, v, _T => v[offset].to_scalar()))
    }

    /// Writes `src` (broadcast to this tensor's shape, converted to its dtype)
    /// into this tensor's elements, through whatever view this is.
    pub fn copy_from(&self, src: &Tensor) -> Result<()> {
        self.check_writable()?;
        self.write_elements(src)
    }

    /// PyTorch's refusal to write a tensor whose elements share memory (an
    /// expanded view): what every computing in-place op checks first.
    pub fn check_writable(&self) -> Result<()> {
        if self.imp.layout.has_internal_overlap() {
            return Err(TensorError::InternalOverlap);
        }
        Ok(())
    }

    fn write_elements(&self, src: &Tensor) -> Result<()> {
        let shape = self.shape().to_vec();
        let src = src.broadcast_to(&shape)?;
        // Same dtype, both dense, separate storages: one copy, no gather.
        if src.dtype == self.dtype
            && let (Some(to), Some(from)) = (
                self.imp.layout.contiguous_range(),
                src.imp.layout.contiguous_range(),
            )
            && self
                .write_reading(&src, |dst, values| {
                    with_dtype!(self.dtype, T => {
                        let dst = T::slice_mut(dst).expect("storage dtype matches tensor dtype");
                        let values = T::slice(values).expect("storage dtype matches tensor dtype");
                        copy_dense(&mut dst[to], &values[from]);
                    })
                })
                .is_some()
        {
            return Ok(());
        }
        // Gather first: `src` may alias this storage.
        with_dtype!(self.dtype, T => {
            let values = src.to_vec::<T>();
            let mut storage = self.write();
            let dst = T::slice_mut(&mut storage).expect("storage dtype matches tensor dtype");
            let layout = &self.imp.layout;
            match (layout.contiguous_range(), layout.strides.last()) {
                (Some(r), _) => dst[r].copy_from_slice(&values),
                // Rows contiguous in the destination (a slice of `cat`'s
                // output, a column block): row by row.
                (None, Some(1)) if layout.shape.last().is_some_and(|&n| n > 1) => {
                    let n = layout.ndim();
                    let run = layout.shape[n - 1];
                    let rows = Layout {
                        shape: layout.shape[..n - 1].to_vec(),
                        strides: layout.strides[..n - 1].to_vec(),
                        offset: layout.offset,
                    };
                    for (o, v) in rows.offsets().zip(values.chunks_exact(run)) {
                        dst[o..o + run].copy_from_slice(v);
                    }
                }
                (None, _) => {
                    for (o, v) in layout.offsets().zip(values) {
                        dst[o] = v;
                    }
                }
            }
        });
        Ok(())
    }

    /// Stores an out-of-place result into this tensor, as an in-place op
    /// (`add_`, `relu(inplace=True)`) does: the result must keep this
    /// tensor's shape and be castable to its dtype: PyTorch's `can_cast`
    /// refuses only a move to a lower category (float into an integer
    /// tensor, anything but bool into a bool one).
    pub fn assign(&self, result: &Tensor) -> Result<()> {
        self.check_assignable(result)?;
        self.copy_from(result)
    }

    /// [`assign`](Self::assign) for the fills PyTorch still lets write a
    /// tensor whose elements share memory (`masked_fill_`, `index_fill_`,
    /// `tril_`: it warns that this is deprecated; computing ops refuse).
    pub fn assign_fill(&self, result: &Tensor) -> Result<()> {
        self.check_assignable(result)?;
        self.write_elements(result)
    }

    fn check_assignable(&self, result: &Tensor) -> Result<()> {
        if result.dtype().category() > self.dtype.category() {
            return Err(TensorError::InplaceCast {
                from: result.dtype(),
                to: self.dtype,
            });
        }
        if result.shape() != self.shape() {
            return Err(TensorError::InplaceShape {
                output: self.shape().to_vec(),
                broadcast: result.shape().to_vec(),
            });
        }
        Ok(())
    }

    /// Sets every element to `value`.
    pub fn fill(&self, value: Scalar) {
        with_dtype!(self.dtype, T => {
            let v = T::from_scalar(value);
            let mut storage = self.write();
            let dst = T::slice_mut(&mut storage).expect("storage dtype matches tensor dtype");
            match self.imp.layout.contiguous_range() {
                Some(r) => dst[r].fill(v),
                None => self.imp.layout.offsets().for_each(|o| dst[o] = v),
            }
        });
    }

    /// A view at `shape` with broadcast dimensions of stride 0.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        let compatible = shape.len() >= self.ndim()
            && self
                .shape()
                .iter()
                .zip(&shape[shape.len() - self.ndim()..])
                .all(|(&a, &b)| a == b || a == 1);
        if !compatible {
            return Err(TensorError::runtime(
                "expand",
                format!(
                    "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  Target sizes: {:?}.  Tensor sizes: {:?}",
                    shape.last().copied().unwrap_or(0),
                    self.shape().last().copied().unwrap_or(0),
                    shape.len().saturating_sub(1),
                    shape,
                    self.shape()
                ),
            ));
        }
        crate::alloc::checked_numel(shape).map_err(|_| TensorError::NumelOverflow)?;
        Ok(self.with_layout(self.imp.layout.broadcast_to(shape)))
    }
}

/// Wraps a possibly negative `dim` into `0..ndim` (a 0-dim tensor accepts -1 and 0).
pub fn wrap_dim(dim: i64, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        return Err(TensorError::DimOutOfRange { dim, ndim });
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

/// `dst.copy_from_slice(src)`, split across threads when large (one
/// thread does not saturate memory bandwidth: 800 KB 22 → 12 µs).
fn copy_dense<T: Element>(dst: &mut [T], src: &[T]) {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 15;
    if dst.len() >= 4 * CHUNK {
        dst.par_chunks_mut(CHUNK)
            .zip(src.par_chunks(CHUNK))
            .for_each(|(d, s)| d.copy_from_slice(s));
    } else {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::shape::{narrow, transpose};

    fn values(t: &Tensor) -> Vec<f32> {
        t.to_vec()
    }

    /// `clone()` keeps a dense tensor's strides whatever their order (a
    /// transpose stays transposed, an offset view starts at 0) and makes a
    /// view with gaps or repeats contiguous, as PyTorch's preserve format.
    #[test]
    fn preserving_copies_keep_dense_strides_and_densify_the_rest() {
        let x = Tensor::from_vec((0..24).map(|i| i as f32).collect::<Vec<_>>(), &[2, 3, 4]);
        let t = transpose(&narrow(&x, 0, 1, 1).unwrap(), 1, 2).unwrap();
        let copy = t.copy_in(MemoryFormat::Preserve).unwrap();
        assert_eq!(copy.strides(), [12, 1, 4]);
        assert_eq!(copy.layout().offset, 0);
        assert_eq!(values(&copy), values(&t));
        assert!(!copy.shares_storage(&t));
        let sliced = narrow(&x, 2, 1, 2).unwrap();
        let copy = sliced.copy_in(MemoryFormat::Preserve).unwrap();
        assert_eq!(copy.strides(), [6, 2, 1]);
        assert_eq!(values(&copy), values(&sliced));
        let expanded = x.with_layout(Layout::contiguous(&[1]).broadcast_to(&[3, 2]));
        let copy = expanded.copy_in(MemoryFormat::Preserve).unwrap();
        assert_eq!((copy.strides(), values(&copy)), (&[2, 1][..], vec![0.0; 6]));
    }

    #[test]
    fn copy_from_writes_dense_strided_broadcast_and_overlapping_sources() {
        let grid = || Tensor::from_vec((0..12).map(|i| i as f32).collect::<Vec<_>>(), &[3, 4]);
        // Dense into a dense view of a larger storage: the rows around stay.
        let x = grid();
        let row = Tensor::from_vec(vec![-1.0f32, -2.0, -3.0, -4.0], &[1, 4]);
        narrow(&x, 0, 1, 1).unwrap().copy_from(&row).unwrap();
        assert_eq!(
            values(&x),
            [0., 1., 2., 3., -1., -2., -3., -4., 8., 9., 10., 11.]
        );
        // Broadcast, into a strided view.
        let x = grid();
        let column = transpose(&x, 0, 1).unwrap();
        column
            .copy_from(&Tensor::from_vec(vec![7.0f32, 8.0, 9.0], &[3]))
            .unwrap();
        assert_eq!(values(&x), [7., 7., 7., 7., 8., 8., 8., 8., 9., 9., 9., 9.]);
        // Another dtype converts.
        let x = grid();
        x.copy_from(&Tensor::from_vec(vec![0.5f64; 12], &[3, 4]))
            .unwrap();
        assert_eq!(values(&x), [0.5; 12]);
        // The same storage, overlapping: the source is read before writing.
        let x = Tensor::from_vec((0..6).map(|i| i as f32).collect::<Vec<_>>(), &[6]);
        narrow(&x, 0, 1, 5)
            .unwrap()
            .copy_from(&narrow(&x, 0, 0, 5).unwrap())
            .unwrap();
        assert_eq!(values(&x), [0., 0., 1., 2., 3., 4.]);
        // A block of columns (rows contiguous, apart): row by row.
        let x = grid();
        let block = narrow(&x, 1, 1, 2).unwrap();
        block
            .copy_from(&Tensor::from_vec(
                vec![-1.0f32, -2.0, -3.0, -4.0, -5.0, -6.0],
                &[3, 2],
            ))
            .unwrap();
        assert_eq!(
            values(&x),
            [0., -1., -2., 3., 4., -3., -4., 7., 8., -5., -6., 11.]
        );
    }
}
