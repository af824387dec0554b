//! Shapes, strides and offsets: views are new layouts over the same storage.

/// Where a tensor's elements sit in its storage.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
    pub offset: usize,
}

/// Row-major strides of a dense tensor of `shape`.
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1].max(1);
    }
    strides
}

/// The broadcast of two shapes, aligned from the right; `None` when incompatible.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i < n - a.len() {
            1
        } else {
            a[i - (n - a.len())]
        };
        let y = if i < n - b.len() {
            1
        } else {
            b[i - (n - b.len())]
        };
        out[i] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

impl Layout {
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
        }
    }

    /// One past the last storage element this layout can reach (0 when it
    /// has no elements); `None` when that does not fit in `usize`.
    pub fn checked_extent(&self) -> Option<usize> {
        if self.shape.contains(&0) {
            return Some(0);
        }
        self.shape
            .iter()
            .zip(&self.strides)
            .try_fold(self.offset.checked_add(1)?, |end, (&size, &stride)| {
                end.checked_add((size - 1).checked_mul(stride)?)
            })
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Dense row-major (size-1 dimensions may have any stride, as in PyTorch).
    pub fn is_contiguous(&self) -> bool {
        let order: Vec<usize> = (0..self.shape.len()).collect();
        self.is_dense_in_order(&order)
    }

    /// The dims from largest stride to smallest (ties keep their order):
    /// the order in which memory holds the elements.
    pub fn memory_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.ndim()).collect();
        order.sort_by_key(|&d| std::cmp::Reverse(self.strides[d]));
        order
    }

    /// Whether the elements lie densely with `order` (outermost dim first)
    /// as the memory order: `[0, 2, 3, 1]` is channels-last for 4-d.
    /// Sizes of 1 may have any stride, as in PyTorch.
    pub fn is_dense_in_order(&self, order: &[usize]) -> bool {
        let mut expected = 1;
        for &d in order.iter().rev() {
            let (size, stride) = (self.shape[d], self.strides[d]);
            if size != 1 {
                if stride != expected {
                    return false;
                }
                expected *= size;
            }
        }
        true
    }

    /// This layout viewed at a larger `shape` by giving broadcast dimensions stride 0.
    /// The caller has checked that the shapes broadcast.
    pub fn broadcast_to(&self, shape: &[usize]) -> Layout {
        let extra = shape.len() - self.ndim();
        let mut strides = vec![0; shape.len()];
        for i in 0..self.ndim() {
            if self.shape[i] == shape[i + extra] {
                strides[i + extra] = self.strides[i];
            }
        }
        Layout {
            shape: shape.to_vec(),
            strides,
            offset: self.offset,
        }
    }

    pub fn permute(&self, dims: &[usize]) -> Layout {
        Layout {
            shape: dims.iter().map(|&d| self.shape[d]).collect(),
            strides: dims.iter().map(|&d| self.strides[d]).collect(),
            offset: self.offset,
        }
    }

    pub fn transpose(&self, a: usize, b: usize) -> Layout {
        let mut out = self.clone();
        out.shape.swap(a, b);
        out.strides.swap(a, b);
        out
    }

    /// Elements `start, start+step, …` (`len` of them) along `dim`.
    pub fn slice(&self, dim: usize, start: usize, len: usize, step: usize) -> Layout {
        let mut out = self.clone();
        if len > 0 {
            out.offset += start * self.strides[dim];
        }
        out.shape[dim] = len;
        out.strides[dim] *= step;
        out
    }

    /// Index `index` of `dim`, dropping the dimension.
    pub fn select(&self, dim: usize, index: usize) -> Layout {
        let mut out = self.clone();
        out.offset += index * self.strides[dim];
        out.shape.remove(dim);
        out.strides.remove(dim);
        out
    }

    pub fn unsqueeze(&self, dim: usize) -> Layout {
        let mut out = self.clone();
        let stride = if dim < self.ndim() {
            self.shape[dim] * self.strides[dim]
        } else {
            1
        };
        out.shape.insert(dim, 1);
        out.strides.insert(dim, stride.max(1));
        out
    }

    /// A layout of `shape` over the same elements without copying, when the
    /// strides allow it (PyTorch's `view` rule); `None` otherwise.
    ///
    /// Old dims are walked right to left in chunks whose strides nest
    /// exactly; each chunk must be covered by a run of new dims, which then
    /// get strides inside that chunk.
    pub fn view(&self, shape: &[usize]) -> Option<Layout> {
        if self.is_contiguous() || self.numel() <= 1 {
            return Some(Layout {
                shape: shape.to_vec(),
                strides: contiguous_strides(shape),
                offset: self.offset,
            });
        }
        let mut strides = vec![0; shape.len()];
        let mut view_d = shape.len();
        let mut base = *self.strides.last()?;
        let (mut tensor_numel, mut view_numel) = (1, 1);
        for d in (0..self.ndim()).rev() {
            tensor_numel *= self.shape[d];
            let chunk_ends =
                d == 0 || (self.shape[d - 1] != 1 && self.strides[d - 1] != tensor_numel * base);
            if !chunk_ends {
                continue;
            }
            while view_d > 0 && (view_numel < tensor_numel || shape[view_d - 1] == 1) {
                strides[view_d - 1] = view_numel * base;
                view_numel *= shape[view_d - 1];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if d > 0 {
                base = self.strides[d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
        (view_d == 0).then(|| Layout {
            shape: shape.to_vec(),
            strides,
            offset: self.offset,
        })
    }

    /// Storage offsets of every element in row-major order.
    pub fn offsets(&self) -> Offsets {
        Offsets::new(self)
    }

    /// Whether two elements are one place in storage (a size-1 dim expanded:
    /// stride 0 over more than one element), so a write to them is ambiguous.
    pub fn has_internal_overlap(&self) -> bool {
        self.numel() > 0
            && self
                .shape
                .iter()
                .zip(&self.strides)
                .any(|(&n, &s)| n > 1 && s == 0)
    }

    /// The contiguous range of storage this layout covers, when it is dense.
    pub fn contiguous_range(&self) -> Option<std::ops::Range<usize>> {
        // An empty view may sit past the end of its storage; it reads nothing.
        match self.numel() {
            0 => Some(0..0),
            n => self.is_contiguous().then(|| self.offset..self.offset + n),
        }
    }
}

/// Row-major iterator over storage offsets; a dense layout is a plain range.
pub struct Offsets {
    shape: Vec<usize>,
    strides: Vec<usize>,
    index: Vec<usize>,
    next: usize,
    remaining: usize,
}

impl Offsets {
    fn new(layout: &Layout) -> Offsets {
        // Merge adjacent dims that step evenly, so most views iterate as few dims as possible.
        let mut shape: Vec<usize> = Vec::with_capacity(layout.ndim());
        let mut strides: Vec<usize> = Vec::with_capacity(layout.ndim());
        for (&size, &stride) in layout.shape.iter().zip(&layout.strides) {
            if size == 1 {
                continue;
            }
            if let (Some(&last_size), Some(last_stride)) = (shape.last(), strides.last_mut())
                && *last_stride == size * stride
            {
                *shape.last_mut().unwrap() = last_size * size;
                *last_stride = stride;
                continue;
            }
            shape.push(size);
            strides.push(stride);
        }
        Offsets {
            index: vec![0; shape.len()],
            shape,
            strides,
            next: layout.offset,
            remaining: layout.numel(),
        }
    }
}

impl Iterator for Offsets {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let current = self.next;
        let mut d = self.shape.len();
        while d > 0 {
            d -= 1;
            self.index[d] += 1;
            if self.index[d] < self.shape[d] {
                self.next += self.strides[d];
                return Some(current);
            }
            self.next -= (self.shape[d] - 1) * self.strides[d];
            self.index[d] = 0;
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Offsets {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only a stride-0 dim over more than one element of a non-empty
    /// layout makes two elements one place.
    #[test]
    fn internal_overlap_is_an_expanded_dim_with_elements() {
        let row = Layout::contiguous(&[1, 3]);
        assert!(!row.has_internal_overlap());
        assert!(row.broadcast_to(&[4, 3]).has_internal_overlap());
        assert!(!row.broadcast_to(&[1, 3]).has_internal_overlap());
        assert!(
            !Layout::contiguous(&[1, 0])
                .broadcast_to(&[5, 0])
                .has_internal_overlap()
        );
        assert!(
            !Layout::contiguous(&[2, 3])
                .transpose(0, 1)
                .has_internal_overlap()
        );
    }

    #[test]
    fn offsets_of_a_transpose() {
        let l = Layout::contiguous(&[2, 3]).transpose(0, 1);
        assert_eq!(l.offsets().collect::<Vec<_>>(), vec![0, 3, 1, 4, 2, 5]);
        assert!(!l.is_contiguous());
    }

    #[test]
    fn offsets_of_a_strided_slice_and_broadcast() {
        let l = Layout::contiguous(&[4, 3]).slice(0, 1, 2, 2);
        assert_eq!(l.offsets().collect::<Vec<_>>(), vec![3, 4, 5, 9, 10, 11]);
        let b = Layout::contiguous(&[3]).broadcast_to(&[2, 3]);
        assert_eq!(b.offsets().collect::<Vec<_>>(), vec![0, 1, 2, 0, 1, 2]);
    }

    #[test]
    fn broadcasting_aligns_from_the_right() {
        assert_eq!(broadcast_shapes(&[4, 1, 3], &[5, 1]), Some(vec![4, 5, 3]));
        assert_eq!(broadcast_shapes(&[2, 3], &[4]), None);
        assert_eq!(broadcast_shapes(&[], &[2]), Some(vec![2]));
    }

    #[test]
    fn view_follows_pytorchs_stride_rule() {
        let t = Layout::contiguous(&[2, 3, 4]).transpose(0, 1); // [3,2,4] strides [4,12,1]
        assert_eq!(
            t.view(&[3, 2, 2, 2]).map(|l| l.strides),
            Some(vec![4, 12, 2, 1])
        );
        assert_eq!(t.view(&[6, 4]), None);
        assert_eq!(t.view(&[3, 8]), None);
        let s = Layout::contiguous(&[4, 6]).slice(1, 0, 3, 1); // [4,3] strides [6,1]
        assert_eq!(s.view(&[4, 3, 1]).map(|l| l.strides), Some(vec![6, 1, 1]));
        assert_eq!(s.view(&[12]), None);
    }

    #[test]
    fn empty_views_past_their_storage_read_nothing() {
        // zeros(3, 0)[2]: offset 2 into a storage of no elements.
        let l = Layout::contiguous(&[3, 0]).select(0, 2);
        assert_eq!(l.contiguous_range(), Some(0..0));
        assert_eq!(l.checked_extent(), Some(0));
    }

    #[test]
    fn extent_of_a_view_is_checked() {
        assert_eq!(Layout::contiguous(&[2, 3]).checked_extent(), Some(6));
        let huge = Layout {
            shape: vec![2, 2],
            strides: vec![usize::MAX, 1],
            offset: 0,
        };
        assert_eq!(huge.checked_extent(), None);
    }
}

/// `torch.memory_format`: the order a new tensor's elements are laid out in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryFormat {
    /// Row-major.
    Contiguous,
    /// The input's own order when it is dense, else row-major.
    Preserve,
    /// Channels innermost for 4-d tensors (NHWC in memory).
    ChannelsLast,
    /// Channels innermost for 5-d tensors (NDHWC in memory).
    ChannelsLast3d,
}

impl MemoryFormat {
    const ALL: [MemoryFormat; 4] = [
        MemoryFormat::Contiguous,
        MemoryFormat::Preserve,
        MemoryFormat::ChannelsLast,
        MemoryFormat::ChannelsLast3d,
    ];

    /// Its name in `torch` (`torch.channels_last`).
    pub fn name(self) -> &'static str {
        match self {
            MemoryFormat::Contiguous => "contiguous_format",
            MemoryFormat::Preserve => "preserve_format",
            MemoryFormat::ChannelsLast => "channels_last",
            MemoryFormat::ChannelsLast3d => "channels_last_3d",
        }
    }

    /// The format `torch.<name>` names.
    pub fn from_name(name: &str) -> Option<MemoryFormat> {
        MemoryFormat::ALL.into_iter().find(|f| f.name() == name)
    }
}
