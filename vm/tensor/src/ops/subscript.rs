//! `t[...]` and `t[...] = v`: basic items (ints, slices, `None`, `...`)
//! make a view; tensor items (integer or boolean) then pick elements with
//! PyTorch's advanced-indexing rules — index tensors broadcast together;
//! when they index adjacent dims the picked dims replace them in place,
//! otherwise they come first.

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::layout::{Layout, broadcast_shapes};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

use super::shape;

/// One item of a subscript.
#[derive(Clone, Debug)]
pub enum Index {
    Int(i64),
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: i64,
    },
    NewAxis,
    Ellipsis,
    /// An integer tensor (picks positions) or a bool tensor (a mask over as
    /// many dims as it has).
    Tensor(Tensor),
}

impl Index {
    /// How many dims of the indexed tensor this item uses up.
    fn width(&self) -> usize {
        match self {
            Index::Int(_) | Index::Slice { .. } => 1,
            Index::Tensor(m) if m.dtype() == DType::Bool => m.ndim(),
            Index::Tensor(_) => 1,
            Index::NewAxis | Index::Ellipsis => 0,
        }
    }
}

/// The view the basic items select, and the advanced indices: for each,
/// the view dim it indexes and its int64 positions (masks already turned
/// into one position tensor per masked dim).
struct Plan {
    view: Tensor,
    advanced: Vec<(usize, Tensor)>,
}

fn too_many(ndim: usize) -> TensorError {
    TensorError::index_error(format!("too many indices for tensor of dimension {ndim}"))
}

fn plan(t: &Tensor, items: &[Index]) -> Result<Plan> {
    let consumed = items.iter().map(Index::width).sum::<usize>();
    if consumed > t.ndim() {
        return Err(too_many(t.ndim()));
    }
    let mut view = t.clone();
    let mut dim = 0usize;
    let mut advanced = Vec::new();
    for item in items {
        // A repeated `...` can push later items past the last dim.
        let width = item.width();
        if width > 0 && dim + width > view.ndim() {
            return Err(match item {
                Index::Int(i) => TensorError::IndexOutOfRange {
                    index: *i,
                    dim,
                    size: 0,
                },
                _ => too_many(t.ndim()),
            });
        }
        match item {
            Index::Int(i) => {
                let size = view.shape()[dim] as i64;
                if *i < -size || *i >= size {
                    return Err(TensorError::IndexOutOfRange {
                        index: *i,
                        dim,
                        size: size as usize,
                    });
                }
                view = shape::select(&view, dim as i64, *i)?;
            }
            Index::Slice { start, stop, step } => {
                view = shape::slice(&view, dim, *start, *stop, *step)?;
                dim += 1;
            }
            Index::NewAxis => {
                view = shape::unsqueeze(&view, dim as i64)?;
                dim += 1;
            }
            Index::Ellipsis => dim += t.ndim() - consumed,
            Index::Tensor(m) if m.dtype() == DType::Bool && m.ndim() == 0 => {
                // `t[True]` adds a dim of one and picks it; `t[False]` picks nothing.
                view = shape::unsqueeze(&view, dim as i64)?;
                let picks = if m.item()?.to_bool() {
                    vec![0i64]
                } else {
                    vec![]
                };
                let n = picks.len();
                advanced.push((dim, Tensor::from_vec(picks, &[n])));
                dim += 1;
            }
            Index::Tensor(m) if m.dtype() == DType::Bool => {
                let span = &view.shape()[dim..dim + m.ndim()];
                if span != m.shape() {
                    return Err(TensorError::index_error(format!(
                        "The shape of the mask {:?} at index {dim} does not match the shape of the indexed tensor {:?} at index {dim}",
                        m.shape(),
                        view.shape()
                    )));
                }
                for (k, positions) in nonzero_columns(m).into_iter().enumerate() {
                    advanced.push((dim + k, positions));
                }
                dim += m.ndim();
            }
            Index::Tensor(index) => {
                if index.dtype().is_float() {
                    return Err(TensorError::index_error(
                        "tensors used as indices must be long, int, byte or bool tensors",
                    ));
                }
                advanced.push((dim, index.to_dtype(DType::I64)));
                dim += 1;
            }
        }
    }
    Ok(Plan { view, advanced })
}

/// The coordinates of a mask's true elements, one int64 tensor per dim.
fn nonzero_columns(mask: &Tensor) -> Vec<Tensor> {
    let shape = mask.shape();
    let strides = crate::layout::contiguous_strides(shape);
    let hits: Vec<usize> = mask
        .to_vec::<bool>()
        .iter()
        .enumerate()
        .filter_map(|(i, &b)| b.then_some(i))
        .collect();
    (0..shape.len())
        .map(|d| {
            let col: Vec<i64> = hits
                .iter()
                .map(|&i| ((i / strides[d]) % shape[d]) as i64)
                .collect();
            let n = col.len();
            Tensor::from_vec(col, &[n])
        })
        .collect()
}

/// Where picked elements live: the broadcast index shape, the storage
/// offset each index combination starts at, and the layout of the dims no
/// index touches. `front` says the picked dims go first in the result
/// (index tensors not adjacent); otherwise they sit at `first`.
struct Picks {
    index_shape: Vec<usize>,
    starts: Vec<usize>,
    rest: Layout,
    front: bool,
    first: usize,
}

impl Picks {
    fn new(view: &Tensor, advanced: &[(usize, Tensor)]) -> Result<Picks> {
        let mut index_shape: Vec<usize> = Vec::new();
        for (_, index) in advanced {
            index_shape = broadcast_shapes(&index_shape, index.shape()).ok_or_else(|| {
                let shapes: Vec<String> = advanced
                    .iter()
                    .map(|(_, i)| format!("{:?}", i.shape()))
                    .collect();
                TensorError::index_error(format!(
                    "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
                    shapes.join(", ")
                ))
            })?;
        }
        let layout = view.layout();
        let count: usize = index_shape.iter().product();
        let mut starts = vec![layout.offset; count];
        for (k, (dim, index)) in advanced.iter().enumerate() {
            let size = layout.shape[*dim];
            let stride = layout.strides[*dim];
            let positions = index.broadcast_to(&index_shape)?.to_vec::<i64>();
            for (start, &i) in starts.iter_mut().zip(&positions) {
                let j = if i < 0 { i + size as i64 } else { i };
                if !(0..size as i64).contains(&j) {
                    // PyTorch numbers the dim among the index tensors.
                    return Err(TensorError::IndexOutOfRange {
                        index: i,
                        dim: k,
                        size,
                    });
                }
                *start += j as usize * stride;
            }
        }
        let indexed: Vec<usize> = advanced.iter().map(|(d, _)| *d).collect();
        let kept: Vec<usize> = (0..view.ndim()).filter(|d| !indexed.contains(d)).collect();
        let rest = Layout {
            shape: kept.iter().map(|&d| layout.shape[d]).collect(),
            strides: kept.iter().map(|&d| layout.strides[d]).collect(),
            offset: 0,
        };
        let mut sorted = indexed.clone();
        sorted.sort_unstable();
        sorted.dedup();
        let adjacent = sorted.len() == indexed.len()
            && sorted.windows(2).all(|w| w[1] == w[0] + 1)
            && indexed == sorted;
        let first = indexed.iter().copied().min().unwrap_or(0);
        Ok(Picks {
            index_shape,
            starts,
            rest,
            front: !adjacent,
            first,
        })
    }

    /// The result's shape.
    fn result_shape(&self) -> Vec<usize> {
        let at = if self.front { 0 } else { self.first };
        let mut shape = self.rest.shape[..at].to_vec();
        shape.extend(&self.index_shape);
        shape.extend(&self.rest.shape[at..]);
        shape
    }

    /// The permutation taking a tensor laid out `[index dims, rest dims]`
    /// to the result's dim order.
    fn to_result_order(&self) -> Vec<usize> {
        let (b, r) = (self.index_shape.len(), self.rest.shape.len());
        let at = if self.front { 0 } else { self.first };
        (b..b + at).chain(0..b).chain(b + at..b + r).collect()
    }

    /// Storage offsets of every picked element, index dims outer.
    fn offsets(&self) -> impl Iterator<Item = usize> + '_ {
        self.starts.iter().flat_map(move |&start| {
            Layout {
                offset: start,
                ..self.rest.clone()
            }
            .offsets()
        })
    }
}

fn invert(order: &[usize]) -> Vec<usize> {
    let mut inverse = vec![0; order.len()];
    for (i, &o) in order.iter().enumerate() {
        inverse[o] = i;
    }
    inverse
}

/// `t[items]`: a view when every item is basic, else a new tensor.
pub fn get(t: &Tensor, items: &[Index]) -> Result<Tensor> {
    let Plan { view, advanced } = plan(t, items)?;
    if advanced.is_empty() {
        return Ok(view);
    }
    let picks = Picks::new(&view, &advanced)?;
    let mut gathered_shape = picks.index_shape.clone();
    gathered_shape.extend(&picks.rest.shape);
    let gathered = with_dtype!(view.dtype(), T => {
        let storage = view.read();
        let src = T::slice(&storage).expect("storage of the view's dtype");
        let n = crate::alloc::ensure_numel::<T>(&gathered_shape);
        let mut data: Vec<T> = Vec::with_capacity(n);
        if picks.rest.is_contiguous() {
            // What each index picks is one run of memory (rows of a
            // table: an embedding lookup, `x[ids]`): copied whole.
            let run = picks.rest.numel();
            // Empty runs (a `(3, 0)` tensor's rows) start past the storage.
            for &start in picks.starts.iter().filter(|_| run > 0) {
                data.extend_from_slice(&src[start..start + run]);
            }
        } else {
            data.extend(picks.offsets().map(|o| src[o]));
        }
        Tensor::from_vec(data, &gathered_shape)
    });
    let order = picks.to_result_order();
    if order.iter().enumerate().all(|(i, &o)| i == o) {
        return Ok(gathered);
    }
    Ok(gathered
        .with_layout(gathered.layout().permute(&order))
        .contiguous())
}

/// `t[items] = src`, `src` broadcast to the shape `t[items]` has.
pub fn set(t: &Tensor, items: &[Index], src: &Tensor) -> Result<()> {
    put(t, items, src, false)
}

/// `index_put_`: `t[items] = src`, or with `accumulate` `t[items] += src`
/// where positions picked several times receive every contribution.
pub fn put(t: &Tensor, items: &[Index], src: &Tensor, accumulate: bool) -> Result<()> {
    let Plan { view, advanced } = plan(t, items)?;
    if advanced.is_empty() && !accumulate {
        return view.copy_from(src);
    }
    if advanced.is_empty() {
        let sum = super::elementwise::binary(
            super::elementwise::Binary::Add,
            &view.clone().into(),
            &src.clone().into(),
        )?;
        return view.copy_from(&sum);
    }
    let picks = Picks::new(&view, &advanced)?;
    let shape = picks.result_shape();
    let value = src.broadcast_to(&shape).map_err(|_| {
        TensorError::runtime(
            "index_put_",
            format!(
                "shape mismatch: value tensor of shape {:?} cannot be broadcast to indexing result of shape {:?}",
                src.shape(),
                shape
            ),
        )
    })?;
    // Advanced indexing writes a value of the destination's dtype; only a
    // boolean mask with a 0-d value (PyTorch's masked fill) converts it.
    let tensors: Vec<&Tensor> = items
        .iter()
        .filter_map(|i| match i {
            Index::Tensor(t) => Some(t),
            _ => None,
        })
        .collect();
    let masked_fill = src.ndim() == 0 && matches!(tensors[..], [m] if m.dtype() == DType::Bool);
    if src.dtype() != view.dtype() && !masked_fill {
        return Err(TensorError::runtime(
            "index_put_",
            format!(
                "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
                crate::error::legacy_name(view.dtype()),
                crate::error::legacy_name(src.dtype())
            ),
        ));
    }
    // Into `[index dims, rest dims]` order, read out before `t` is locked
    // for writing (the value may be a view of `t` itself).
    let value = value.with_layout(value.layout().permute(&invert(&picks.to_result_order())));
    let value = value.to_dtype(view.dtype());
    with_dtype!(view.dtype(), T => {
        let values: Vec<T> = value.to_vec();
        let mut storage = view.write();
        let dst = T::slice_mut(&mut storage).expect("storage of the view's dtype");
        for (o, v) in picks.offsets().zip(values) {
            dst[o] = if accumulate { dst[o].accumulate(v) } else { v };
        }
    });
    Ok(())
}

/// `base[..., index, ...]` with `index` (integer, any shape) at `dim`.
pub fn take_along(base: &Tensor, dim: usize, index: &Tensor) -> Result<Tensor> {
    let mut items = vec![ALL; dim];
    items.push(Index::Tensor(index.clone()));
    get(base, &items)
}

/// `:`, the slice that keeps a whole dim.
pub const ALL: Index = Index::Slice {
    start: None,
    stop: None,
    step: 1,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn arange(shape: &[usize]) -> Tensor {
        let n = shape.iter().product::<usize>();
        Tensor::from_vec((0..n as i64).collect::<Vec<_>>(), shape)
    }

    fn ints(v: &[i64]) -> Index {
        Index::Tensor(Tensor::from_vec(v.to_vec(), &[v.len()]))
    }

    #[test]
    fn adjacent_indices_replace_their_dims_in_place() {
        let x = arange(&[3, 4, 5]);
        let y = get(&x, &[ALL, ints(&[0, 2]), ints(&[1, 3])]).unwrap();
        assert_eq!(y.shape(), [3, 2]);
        assert_eq!(y.to_vec::<i64>(), [1, 13, 21, 33, 41, 53]);
        let y = get(&x, &[ints(&[0, 2]), ints(&[1, 3])]).unwrap();
        assert_eq!(y.shape(), [2, 5]);
        assert_eq!(y.to_vec::<i64>()[..6], [5, 6, 7, 8, 9, 55]);
    }

    #[test]
    fn separated_indices_put_the_picked_dims_first() {
        let x = arange(&[3, 4, 5]);
        let y = get(&x, &[ints(&[0, 2]), ALL, ints(&[1, 3])]).unwrap();
        assert_eq!(y.shape(), [2, 4]);
        assert_eq!(y.to_vec::<i64>(), [1, 6, 11, 16, 43, 48, 53, 58]);
    }

    #[test]
    fn picks_of_whole_runs_equal_picks_element_by_element() {
        let t = Tensor::from_vec((0..24).map(|i| i as f32).collect::<Vec<_>>(), &[4, 3, 2]);
        let rows = get(&t, &[ints(&[3, 0, 3, -3])]).unwrap();
        assert_eq!(rows.shape(), [4, 3, 2]);
        assert_eq!(
            rows.to_vec::<f32>()[..8],
            [18., 19., 20., 21., 22., 23., 0., 1.]
        );
        // The same values through a strided view: picked element by element.
        let copy = t.with_layout(t.layout().transpose(0, 1)).copy();
        let strided = copy.with_layout(copy.layout().transpose(0, 1));
        let each = get(&strided, &[ints(&[3, 0, 3, -3])]).unwrap();
        assert_eq!(each.to_vec::<f32>(), rows.to_vec::<f32>());
    }

    #[test]
    fn masks_pick_their_true_positions() {
        let x = arange(&[2, 3]);
        let mask = Tensor::from_vec(vec![true, false, true, false, true, false], &[2, 3]);
        let y = get(&x, &[Index::Tensor(mask.clone())]).unwrap();
        assert_eq!(y.to_vec::<i64>(), [0, 2, 4]);
        set(
            &x,
            &[Index::Tensor(mask)],
            &Tensor::from_vec(vec![-1i64], &[]),
        )
        .unwrap();
        assert_eq!(x.to_vec::<i64>(), [-1, 1, -1, 3, -1, 5]);
    }

    #[test]
    fn writes_broadcast_and_may_read_the_target_itself() {
        let x = arange(&[2, 3]);
        let src = get(&x, &[ints(&[1, 0])]).unwrap();
        set(&x, &[ints(&[0, 1])], &src).unwrap();
        assert_eq!(x.to_vec::<i64>(), [3, 4, 5, 0, 1, 2]);
        set(
            &x,
            &[ALL, ints(&[2])],
            &Tensor::from_vec(vec![7i64, 8], &[2, 1]),
        )
        .unwrap();
        assert_eq!(x.to_vec::<i64>(), [3, 4, 7, 0, 1, 8]);
    }

    #[test]
    fn bad_indices_are_index_errors() {
        let x = arange(&[3, 4]);
        let e = get(&x, &[ints(&[0, 5]), ints(&[1, 1])]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "index 5 is out of bounds for dimension 0 with size 3"
        );
        let e = get(&x, &[ints(&[0, 1]), ints(&[1, 1, 1])]).unwrap_err();
        assert!(e.to_string().starts_with("shape mismatch"), "{e}");
        assert!(set(&x, &[ints(&[0])], &arange(&[3])).is_err());
    }
}
