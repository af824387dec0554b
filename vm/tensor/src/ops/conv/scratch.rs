//! A per-thread scratch buffer for unfolded matrices. A convolution's
//! im2col matrix is a few hundred KB to a few MB, needed for one call and
//! fully overwritten: allocating and zeroing it every call was a fifth of
//! a small convolution. Each thread keeps its largest one (8-byte aligned,
//! so it serves f32 and f64 alike).

use std::cell::RefCell;

thread_local! {
    static SCRATCH: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on a buffer of `len` elements whose contents are unspecified
/// (left from an earlier call), which `f` must overwrite before reading.
pub(super) fn with<T: bytemuck::Pod, R>(len: usize, f: impl FnOnce(&mut [T]) -> R) -> R {
    let words = (len * std::mem::size_of::<T>()).div_ceil(8);
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            if buffer.len() < words {
                buffer.resize(words, 0.0);
            }
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buffer[..words]);
            f(&mut bytemuck::cast_slice_mut(bytes)[..len])
        }
        // Already lent on this thread (a nested call): a buffer of its own.
        Err(_) => f(&mut vec![T::zeroed(); len]),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_buffer_is_reused_and_nested_calls_get_their_own() {
        let first = super::with(4, |a: &mut [f32]| {
            a.copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
            super::with(2, |b: &mut [f64]| {
                b.fill(9.0);
                assert_eq!(b.len(), 2);
            });
            a.as_ptr() as usize
        });
        // The same memory again, its contents left as they were.
        super::with(3, |a: &mut [f32]| {
            assert_eq!(a.as_ptr() as usize, first);
            assert_eq!(a, [1.0, 2.0, 3.0]);
        });
        super::with(0, |a: &mut [f64]| assert!(a.is_empty()));
    }
}
