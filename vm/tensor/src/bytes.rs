//! Tensors to and from raw element bytes, as checkpoint files store them:
//! a storage's elements back to back, in the file's byte order.

use std::sync::Arc;

use crate::buffer::SharedBytes;
use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::layout::Layout;
use crate::storage::{Element, with_dtype, with_storage};
use crate::tensor::Tensor;

/// An element's bytes in a given order.
trait Raw: Element {
    const SIZE: usize;
    fn read(bytes: &[u8], big_endian: bool) -> Self;
    fn write(self, out: &mut Vec<u8>);
    /// Fills `values` with the elements whose bytes `read` writes.
    fn fill<E>(
        values: &mut [Self],
        big_endian: bool,
        read: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<(), E>;
}

macro_rules! raw {
    ($($T:ty),*) => {$(
        impl Raw for $T {
            const SIZE: usize = std::mem::size_of::<$T>();
            fn read(bytes: &[u8], big_endian: bool) -> Self {
                let a = bytes.try_into().expect("chunk of the element size");
                if big_endian { <$T>::from_be_bytes(a) } else { <$T>::from_le_bytes(a) }
            }
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn fill<E>(
                values: &mut [Self],
                big_endian: bool,
                read: impl FnOnce(&mut [u8]) -> Result<(), E>,
            ) -> Result<(), E> {
                read(bytemuck::cast_slice_mut(values))?;
                if big_endian != cfg!(target_endian = "big") {
                    for v in values.iter_mut() {
                        *v = <$T>::from_ne_bytes({
                            let mut b = v.to_ne_bytes();
                            b.reverse();
                            b
                        });
                    }
                }
                Ok(())
            }
        }
    )*};
}
raw!(u8, i8, i16, i32, i64, f32, f64, half::f16, half::bf16);

impl Raw for bool {
    const SIZE: usize = 1;
    fn read(bytes: &[u8], _: bool) -> Self {
        bytes[0] != 0
    }
    fn write(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
    fn fill<E>(
        values: &mut [Self],
        _: bool,
        read: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut bytes = vec![0u8; values.len()];
        read(&mut bytes)?;
        values
            .iter_mut()
            .zip(&bytes)
            .for_each(|(v, &b)| *v = b != 0);
        Ok(())
    }
}

/// Bytes per element of `dtype`.
pub fn element_size(dtype: DType) -> usize {
    with_dtype!(dtype, T => <T as Raw>::SIZE)
}

fn decode<T: Raw>(bytes: &[u8], big_endian: bool) -> Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(bytes.len() / T::SIZE)
        .map_err(|_| TensorError::OutOfMemory { bytes: bytes.len() })?;
    out.extend(bytes.chunks_exact(T::SIZE).map(|c| T::read(c, big_endian)));
    Ok(out)
}

impl Tensor {
    /// A 1-d tensor over `bytes` read as elements of `dtype`.
    pub fn from_bytes(dtype: DType, bytes: &[u8], big_endian: bool) -> Result<Tensor> {
        let size = element_size(dtype);
        if !bytes.len().is_multiple_of(size) {
            return Err(TensorError::runtime(
                "from_bytes",
                format!(
                    "{} bytes do not hold a whole number of {size}-byte elements",
                    bytes.len()
                ),
            ));
        }
        let storage = with_dtype!(dtype, T => T::wrap(decode::<T>(bytes, big_endian)?));
        let len = storage.len();
        Ok(Tensor::from_storage(storage, &[len]))
    }

    /// A 1-d tensor of `numel` elements of `dtype` read in place from
    /// little-endian `bytes` at `start` (no copy until written); None when
    /// they cannot be (a big-endian machine, a misaligned start, bools), so
    /// the caller decodes them with `from_bytes`.
    pub fn borrow_bytes(
        dtype: DType,
        bytes: &SharedBytes,
        start: usize,
        numel: usize,
    ) -> Option<Tensor> {
        if cfg!(target_endian = "big") {
            return None;
        }
        let end = numel
            .checked_mul(element_size(dtype))
            .and_then(|n| start.checked_add(n))?;
        let storage = with_dtype!(dtype, T => T::borrow(bytes, start..end))?;
        Some(Tensor::from_storage(storage, &[numel]))
    }

    /// A 1-d tensor of `numel` elements of `dtype` whose bytes `read` writes
    /// straight into the new storage (a file read with no staging copy),
    /// then put in native order. `read`'s error comes back as is.
    pub fn read_into<E>(
        dtype: DType,
        numel: usize,
        big_endian: bool,
        read: impl FnOnce(&mut [u8]) -> Result<(), E>,
    ) -> Result<Result<Tensor, E>> {
        crate::alloc::reserve(numel, dtype)?;
        let storage = with_dtype!(dtype, T => {
            let mut values = vec![T::default(); numel];
            match <T as Raw>::fill(&mut values, big_endian, read) {
                Ok(()) => T::wrap(values),
                Err(e) => return Ok(Err(e)),
            }
        });
        Ok(Ok(Tensor::from_storage(storage, &[numel])))
    }

    /// Whether this tensor's elements are still read in place from shared bytes.
    pub fn is_borrowed(&self) -> bool {
        with_storage!(&*self.read(), v, _T => v.is_borrowed())
    }

    /// Every element of this tensor's storage (not only the view's), little-endian.
    pub fn storage_bytes(&self) -> Vec<u8> {
        let storage = self.read();
        with_storage!(&*storage, v, T => {
            let mut out = Vec::with_capacity(v.len() * <T as Raw>::SIZE);
            v.iter().for_each(|&x| x.write(&mut out));
            out
        })
    }

    /// The number of elements in this tensor's storage.
    pub fn storage_len(&self) -> usize {
        self.read().len()
    }

    /// Identifies the storage: equal for views of one storage while they live.
    pub fn storage_id(&self) -> usize {
        Arc::as_ptr(self.storage()) as *const () as usize
    }

    /// A 1-d view of all of this tensor's storage, as PyTorch's checkpoints
    /// and pickles describe a storage.
    pub fn whole_storage(&self) -> Tensor {
        self.with_layout(Layout::contiguous(&[self.storage_len()]))
    }

    /// The address of this tensor's first element, PyTorch's `data_ptr`
    /// (0 for an empty storage): equal for tensors starting at the same
    /// element of one storage. A storage still read in place from a file
    /// moves when it is first written.
    pub fn data_ptr(&self) -> usize {
        let offset = self.layout().offset;
        let storage = self.read();
        with_storage!(&*storage, v, T => if v.is_empty() {
            0
        } else {
            v.as_ptr() as usize + offset * std::mem::size_of::<T>()
        })
    }

    /// A view of this tensor's storage with explicit sizes, strides and offset,
    /// refused unless every element it can reach lies inside the storage.
    pub fn as_strided(&self, size: &[usize], stride: &[usize], offset: usize) -> Result<Tensor> {
        if size.len() != stride.len() {
            return Err(TensorError::runtime(
                "as_strided",
                format!(
                    "mismatch in length of strides and shape ({} vs {})",
                    stride.len(),
                    size.len()
                ),
            ));
        }
        let layout = Layout {
            shape: size.to_vec(),
            strides: stride.to_vec(),
            offset,
        };
        let len = self.storage_len();
        match layout.checked_extent() {
            Some(end) if end <= len => Ok(self.with_layout(layout)),
            _ => Err(TensorError::runtime(
                "as_strided",
                format!(
                    "setStorage: sizes {size:?}, strides {stride:?}, storage offset {offset}, and itemsize {} requiring a storage size of {} are out of bounds for storage of size {}",
                    element_size(self.dtype()),
                    layout.checked_extent().map_or_else(
                        || "more than 2^64".to_string(),
                        |e| (e * element_size(self.dtype())).to_string()
                    ),
                    len * element_size(self.dtype())
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::Scalar;

    #[test]
    fn bytes_round_trip_every_dtype() {
        for dtype in DType::ALL {
            let t = Tensor::from_scalars(
                &[Scalar::Int(1), Scalar::Int(0), Scalar::Int(1)],
                &[3],
                dtype,
            )
            .expect("in range");
            let bytes = t.storage_bytes();
            assert_eq!(bytes.len(), 3 * element_size(dtype));
            let back = Tensor::from_bytes(dtype, &bytes, false).expect("decodes");
            assert_eq!(back.to_vec::<f64>(), vec![1.0, 0.0, 1.0]);
        }
    }

    #[test]
    fn big_endian_and_ragged_bytes() {
        let t = Tensor::from_bytes(DType::I32, &[0, 0, 1, 2], true).expect("decodes");
        assert_eq!(t.to_vec::<i64>(), vec![258]);
        assert!(Tensor::from_bytes(DType::I32, &[0, 0, 1], false).is_err());
    }

    #[test]
    fn data_ptr_and_whole_storage_follow_the_view() {
        let t = Tensor::from_vec((0..6).map(|x| x as f64).collect(), &[2, 3]);
        let row = t.as_strided(&[3], &[1], 3).expect("in bounds");
        assert_eq!(row.data_ptr() - t.data_ptr(), 3 * 8);
        assert_eq!(row.whole_storage().to_vec::<f64>(), t.to_vec::<f64>());
        assert_eq!(row.whole_storage().data_ptr(), t.data_ptr());
        assert_eq!(Tensor::from_vec(Vec::<f32>::new(), &[0]).data_ptr(), 0);
    }

    #[test]
    fn as_strided_checks_bounds() {
        let t = Tensor::from_vec((0..6).map(|x| x as f32).collect(), &[6]);
        let v = t.as_strided(&[3, 2], &[1, 3], 0).expect("in bounds");
        assert_eq!(v.to_vec::<f32>(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        assert!(t.as_strided(&[3, 2], &[1, 3], 1).is_err());
        assert!(t.as_strided(&[2], &[usize::MAX], 0).is_err());
        assert!(
            t.as_strided(&[0, 5], &[100, 100], 6).is_ok(),
            "an empty view reaches nothing"
        );
        assert_eq!(
            t.as_strided(&[2], &[3], 0).expect("ok").storage_id(),
            t.storage_id()
        );
    }
}
