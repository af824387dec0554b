//! The elements of a storage: a vector it owns, or a range of shared bytes
//! (a checkpoint read into memory, or a memory-mapped file) read in place
//! until the first write copies them out — what `torch.load(mmap=True)` and
//! safetensors' zero-copy loading rest on.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// Bytes several storages may borrow from (a file's contents or its map).
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// A storage's elements.
pub enum Buffer<T> {
    Owned(Vec<T>),
    Shared(Borrowed<T>),
}

/// Elements read in place from `bytes[range]`.
pub struct Borrowed<T> {
    bytes: SharedBytes,
    range: Range<usize>,
    /// The range seen as elements: bytemuck's checked cast for this `T`,
    /// picked where `T: Pod` is known, so reading needs no bound.
    view: fn(&[u8]) -> &[T],
}

fn whole(bytes: &SharedBytes) -> &[u8] {
    (**bytes).as_ref()
}

fn cast<T: bytemuck::Pod>(bytes: &[u8]) -> &[T] {
    bytemuck::cast_slice(bytes)
}

impl<T: bytemuck::Pod> Buffer<T> {
    /// The elements in `bytes[range]` (native byte order), read in place;
    /// None when the range is out of bounds, not a whole number of
    /// elements, or not aligned for `T`.
    pub fn borrow(bytes: &SharedBytes, range: Range<usize>) -> Option<Buffer<T>> {
        let slice = whole(bytes).get(range.clone())?;
        bytemuck::try_cast_slice::<u8, T>(slice).ok()?;
        Some(Buffer::Shared(Borrowed {
            bytes: Arc::clone(bytes),
            range,
            view: cast::<T>,
        }))
    }
}

impl<T: Copy> Buffer<T> {
    /// The elements, to write: borrowed ones are copied out first.
    pub fn make_mut(&mut self) -> &mut Vec<T> {
        if let Buffer::Shared(b) = self {
            *self = Buffer::Owned(b.elements().to_vec());
        }
        match self {
            Buffer::Owned(v) => v,
            Buffer::Shared(_) => unreachable!("copied out above"),
        }
    }

    /// Whether the elements are read in place from shared bytes.
    pub fn is_borrowed(&self) -> bool {
        matches!(self, Buffer::Shared(_))
    }
}

impl<T> Borrowed<T> {
    fn elements(&self) -> &[T] {
        (self.view)(&whole(&self.bytes)[self.range.clone()])
    }
}

impl<T> Deref for Buffer<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            Buffer::Owned(v) => v,
            Buffer::Shared(b) => b.elements(),
        }
    }
}

impl<T: Clone> Clone for Buffer<T> {
    fn clone(&self) -> Self {
        match self {
            Buffer::Owned(v) => Buffer::Owned(v.clone()),
            Buffer::Shared(b) => Buffer::Shared(Borrowed {
                bytes: Arc::clone(&b.bytes),
                range: b.range.clone(),
                view: b.view,
            }),
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Buffer::Owned(v) => f.debug_tuple("Owned").field(v).finish(),
            Buffer::Shared(b) => f.debug_tuple("Shared").field(&b.range).finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(bytes: Vec<u8>) -> SharedBytes {
        Arc::new(bytes)
    }

    #[test]
    fn borrowed_elements_read_in_place_and_copy_out_on_write() {
        let values = [1.5f32, -2.0, 3.25];
        let mut bytes = vec![0u8; 4];
        bytes.extend(values.iter().flat_map(|v| v.to_ne_bytes()));
        let source = shared(bytes);
        let mut buffer = Buffer::<f32>::borrow(&source, 4..16).expect("aligned");
        assert!(buffer.is_borrowed());
        assert_eq!(&*buffer, &values);
        let copy = buffer.clone();
        buffer.make_mut()[0] = 9.0;
        assert!(!buffer.is_borrowed());
        assert_eq!(&*buffer, &[9.0, -2.0, 3.25]);
        // The bytes and other borrowers are untouched.
        assert_eq!(&*copy, &values);
        assert!(copy.is_borrowed());
    }

    #[test]
    fn ranges_that_do_not_fit_the_element_type_are_refused() {
        let source = shared(vec![0u8; 32]);
        assert!(Buffer::<f64>::borrow(&source, 0..12).is_none()); // not whole elements
        assert!(Buffer::<f64>::borrow(&source, 8..40).is_none()); // past the end
        // Misaligned: an odd start cannot hold u16s however the Vec is placed.
        assert!(Buffer::<u16>::borrow(&source, 1..5).is_none());
        assert!(Buffer::<u8>::borrow(&source, 1..5).is_some());
    }
}
