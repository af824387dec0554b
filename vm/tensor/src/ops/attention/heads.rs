//! An operand's heads read in place: a [B, H, rows, E] tensor of any
//! strides whose last dim is dense (the query, keys and values a
//! transformer splits from one projection and views by head), so no copy
//! is made before the products.

use crate::ops::linalg::Matrix;
use crate::tensor::Tensor;

/// Where each head's rows sit in an operand's storage.
#[derive(Clone, Copy)]
pub(super) struct Heads<'a, T> {
    data: &'a [T],
    offset: usize,
    batch: usize,
    head: usize,
    row: usize,
    width: usize,
}

impl<'a, T> Heads<'a, T> {
    /// The heads of `t`, whose storage is `data`.
    pub(super) fn of(t: &Tensor, data: &'a [T]) -> Heads<'a, T> {
        let l = t.layout();
        debug_assert!(l.strides[3] == 1 || l.shape[3] <= 1, "a dense last dim");
        Heads {
            data,
            offset: l.offset,
            batch: l.strides[0],
            head: l.strides[1],
            row: l.strides[2],
            width: l.shape[3],
        }
    }

    fn start(&self, b: usize, h: usize) -> usize {
        self.offset + b * self.batch + h * self.head
    }

    /// Head `h` of batch `b` as a matrix of its rows, from row `first`.
    pub(super) fn rows(&self, b: usize, h: usize, first: usize) -> Matrix<'a, T> {
        Matrix {
            data: &self.data[self.start(b, h) + first * self.row..],
            row_stride: self.row,
            col_stride: 1,
        }
    }

    /// The transpose of head `h` of batch `b`, read in place.
    pub(super) fn transposed(&self, b: usize, h: usize) -> Matrix<'a, T> {
        Matrix {
            data: &self.data[self.start(b, h)..],
            row_stride: 1,
            col_stride: self.row,
        }
    }

    /// Row `i` of head `h` of batch `b`.
    pub(super) fn row(&self, b: usize, h: usize, i: usize) -> &'a [T] {
        let at = self.start(b, h) + i * self.row;
        &self.data[at..at + self.width]
    }
}

/// `t` itself when its last dim is dense, else a dense copy.
pub(super) fn with_dense_rows(t: &Tensor) -> Tensor {
    let l = t.layout();
    if l.strides[3] == 1 || l.shape[3] <= 1 {
        t.clone()
    } else {
        t.contiguous()
    }
}

/// A dense row-major matrix with rows of `stride`.
pub(super) fn rows<T>(data: &[T], stride: usize) -> Matrix<'_, T> {
    Matrix {
        data,
        row_stride: stride,
        col_stride: 1,
    }
}

/// The transpose of a dense row-major matrix with rows of `stride`, read
/// in place.
pub(super) fn transposed<T>(data: &[T], stride: usize) -> Matrix<'_, T> {
    Matrix {
        data,
        row_stride: 1,
        col_stride: stride,
    }
}
