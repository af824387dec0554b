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
    reserve_bytes(numel, element_size(dtype))
}

fn reserve_bytes(numel: usize, element: usize) -> Result<()> {
    let bytes = numel
        .checked_mul(element)
        .filter(|&b| b <= isize::MAX as usize);
    let Some(bytes) = bytes else {
        return Err(TensorError::OutOfMemory {
            bytes: numel.saturating_mul(element),
        });
    };
    crate::cap::check(bytes)?;
    if bytes >= PROBE_BYTES {
        Vec::<u8>::new()
            .try_reserve_exact(bytes)
            .map_err(|_| TensorError::OutOfMemory { bytes })?;
    }
    Ok(())
}

/// Checks that `n` values of `T` (views an op returns, their metadata) can
/// be allocated, as [`reserve`] does for elements.
pub fn reserve_items<T>(n: usize) -> Result<()> {
    reserve_bytes(n, std::mem::size_of::<T>())
}

/// Ensures a kernel can allocate `n` elements of `T` for an output (or a
/// materialised view) before it does. Kernels build their buffers with plain
/// `Vec`s, whose allocation failure aborts the process; so a request the
/// system refuses unwinds here instead, with a [`TensorError::OutOfMemory`]
/// payload, the way PyTorch's allocator throws from inside a kernel. The
/// binding layer's op guard turns that payload into PyTorch's RuntimeError.
pub fn ensure<T>(n: usize) {
    if let Err(e) = reserve_bytes(n, std::mem::size_of::<T>()) {
        std::panic::panic_any(e);
    }
}

/// The element count of `dims` (a kernel's output), after [`ensure`]; an
/// overflowing product unwinds like a refused allocation.
pub fn ensure_numel<T>(dims: &[usize]) -> usize {
    let n = checked_numel(dims).unwrap_or_else(|e| std::panic::panic_any(e));
    ensure::<T>(n);
    n
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
    fn ensure_unwinds_with_the_error_as_payload() {
        ensure::<f32>(1000);
        let payload = std::panic::catch_unwind(|| ensure::<f64>(1 << 60)).unwrap_err();
        assert!(matches!(
            payload.downcast_ref::<TensorError>(),
            Some(TensorError::OutOfMemory { bytes }) if *bytes == 8 << 60
        ));
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
