//! Sizes that are safe to allocate: element counts that fit PyTorch's int64
//! sizes, and buffers the system can actually provide. Kernels call these
//! before building an output, so an impossible request is an error, never
//! an aborted process or a buffer shorter than the loop that fills it.

use crate::bytes::element_size;
use crate::dtype::DType;
use crate::error::{Result, TensorError};

/// The element count of `shape`, refused when it exceeds `i64::MAX`.
pub fn checked_numel(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|&n| n <= i64::MAX as usize)
        .ok_or_else(|| TensorError::SizeOverflow {
            sizes: shape.to_vec(),
        })
}

/// Below this many bytes an allocation is not worth probing.
const PROBE_BYTES: usize = 1 << 26;

/// Checks that `numel` elements of `dtype` can be allocated: their byte size
/// fits, and (for large buffers) the allocator grants them. The probe is
/// released at once; the kernel's own allocation then succeeds as it did.
pub fn reserve(numel: usize, dtype: DType) -> Result<()> {
    let bytes = numel
        .checked_mul(element_size(dtype))
        .filter(|&b| b <= isize::MAX as usize);
    let Some(bytes) = bytes else {
        return Err(TensorError::OutOfMemory {
            bytes: numel.saturating_mul(element_size(dtype)),
        });
    };
    if bytes >= PROBE_BYTES {
        Vec::<u8>::new()
            .try_reserve_exact(bytes)
            .map_err(|_| TensorError::OutOfMemory { bytes })?;
    }
    Ok(())
}

/// [`checked_numel`] then [`reserve`]: the element count of a new tensor.
pub fn new_numel(shape: &[usize], dtype: DType) -> Result<usize> {
    let n = checked_numel(shape)?;
    reserve(n, dtype)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflowing_shapes_are_refused() {
        assert_eq!(checked_numel(&[2, 3]).unwrap(), 6);
        assert_eq!(checked_numel(&[]).unwrap(), 1);
        assert_eq!(checked_numel(&[0, usize::MAX]).unwrap(), 0);
        assert!(matches!(
            checked_numel(&[1 << 62, 4]),
            Err(TensorError::SizeOverflow { .. })
        ));
        assert!(checked_numel(&[1 << 32, 1 << 32]).is_err());
    }

    #[test]
    fn impossible_buffers_are_refused_not_aborted() {
        assert!(reserve(1000, DType::F32).is_ok());
        assert!(matches!(
            reserve(1 << 62, DType::F64),
            Err(TensorError::OutOfMemory { .. })
        ));
        assert!(matches!(
            reserve(1_000_000_000_000_000, DType::F32),
            Err(TensorError::OutOfMemory { .. })
        ));
        assert_eq!(
            reserve(1_000_000_000_000_000, DType::F32)
                .unwrap_err()
                .to_string(),
            "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 4000000000000000 bytes. Error code 12 (Cannot allocate memory)"
        );
    }
}
