//! Dense output buffers written once, chunk by chunk or row by row, in
//! parallel when large: what every elementwise kernel builds its result with.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::storage::Element;
use crate::tensor::Tensor;

use crate::ops::PARALLEL_MIN;

/// Elements per task when a kernel is split across threads.
pub(super) const CHUNK: usize = 1 << 14;

/// A new vector of `n` elements written chunk by chunk: `fill(start,
/// chunk)` must write every slot of `chunk`, the elements from index
/// `start`; in parallel for large `n`.
fn build_chunks<U: Element>(
    n: usize,
    fill: impl Fn(usize, &mut [MaybeUninit<U>]) + Sync + Send,
) -> Vec<U> {
    crate::alloc::ensure::<U>(n);
    let mut out: Vec<U> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    let task = |(i, chunk): (usize, &mut [MaybeUninit<U>])| fill(i * CHUNK, chunk);
    if n >= PARALLEL_MIN {
        dst.par_chunks_mut(CHUNK).enumerate().for_each(task);
    } else {
        dst.chunks_mut(CHUNK).enumerate().for_each(task);
    }
    // SAFETY: the chunks cover `out[..n]` and each caller's `fill` writes
    // every element of its chunk (or panics, leaving `out` empty and
    // dropped).
    unsafe { out.set_len(n) };
    out
}

/// A new vector of `n` elements produced chunk by chunk: `values(start, len)`
/// yields the `len` elements from index `start`, in parallel for large `n`.
/// Writing slices chunk-wise (rather than collecting one long iterator) lets
/// each chunk's loop vectorise. A producer that yields too few elements
/// panics; it can never leave an element uninitialised.
pub fn build<U: Element, I: Iterator<Item = U>>(
    n: usize,
    values: impl Fn(usize, usize) -> I + Sync + Send,
) -> Vec<U> {
    build_chunks(n, |start, chunk| {
        let (mut written, len) = (0, chunk.len());
        for (slot, v) in chunk.iter_mut().zip(values(start, len)) {
            slot.write(v);
            written += 1;
        }
        assert_eq!(written, len, "build: the producer ended early");
    })
}

/// A copy of `src`, split between threads when long (one thread's copy
/// does not reach the memory bandwidth a fresh buffer's first touch wants).
pub fn copied<T: Element>(src: &[T]) -> Vec<T> {
    build_chunks(src.len(), |start, chunk| {
        let from = &src[start..start + chunk.len()];
        for (slot, &x) in chunk.iter_mut().zip(from) {
            slot.write(x);
        }
    })
}

/// `src` converted to `U` (`Element::cast`, C-cast semantics) in a new
/// vector, each chunk's loop compiled for the machine's SIMD level (a
/// float-to-integer cast is a handful of instructions per element at the
/// crate's SSE2 baseline, one vector instruction with AVX-512).
pub fn convert<S: Element, U: Element>(src: &[S]) -> Vec<U> {
    #[multiversion::multiversion(targets(
        "x86_64+avx512f+avx512vl+avx512dq+fma",
        "x86_64+avx2+fma",
        "aarch64+neon"
    ))]
    fn run<S: Element, U: Element>(src: &[S], dst: &mut [MaybeUninit<U>]) {
        for (slot, &x) in dst.iter_mut().zip(src) {
            slot.write(x.cast::<U>());
        }
    }
    build_chunks(src.len(), |start, chunk| {
        let from = &src[start..start + chunk.len()];
        run(from, chunk)
    })
}

/// A new vector of `n` elements made of rows of `len`, each zeroed and then
/// filled in place by `fill(row, values)`, in parallel for large `n`. Zeroing
/// row by row, just before use, avoids touching the whole buffer twice.
pub fn build_rows<U: Element>(
    n: usize,
    len: usize,
    fill: impl Fn(usize, &mut [U]) + Sync + Send,
) -> Vec<U> {
    crate::alloc::ensure::<U>(n);
    let mut out: Vec<U> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    let row = |(i, chunk): (usize, &mut [MaybeUninit<U>])| {
        chunk.iter_mut().for_each(|x| {
            x.write(U::default());
        });
        // SAFETY: every element of `chunk` was initialised just above.
        let chunk = unsafe { &mut *(chunk as *mut [MaybeUninit<U>] as *mut [U]) };
        fill(i, chunk);
    };
    if n >= PARALLEL_MIN {
        dst.par_chunks_mut(len.max(1)).enumerate().for_each(row);
    } else {
        dst.chunks_mut(len.max(1)).enumerate().for_each(row);
    }
    // SAFETY: the rows cover all `n` elements and each was initialised.
    unsafe { out.set_len(n) };
    out
}

/// Applies `f` to every element of `t` (any layout) into a new dense tensor.
pub fn map<T: Element, U: Element>(t: &Tensor, f: impl Fn(T) -> U + Sync + Send) -> Tensor {
    let storage = t.read();
    let src = T::slice(&storage).expect("map: caller converted to T");
    let out: Vec<U> = match t.layout().contiguous_range() {
        Some(r) => {
            let src = &src[r];
            build(src.len(), |start, len| {
                src[start..start + len].iter().map(|&x| f(x))
            })
        }
        None => crate::ops::strided::map_strided(t.layout(), src, f),
    };
    Tensor::from_vec(out, t.shape())
}

/// Each element of `xs` replaced by `f` of it, in parallel when large.
pub(super) fn rewrite<F: Element>(xs: &mut [F], f: impl Fn(F) -> F + Sync + Send) {
    let run = |chunk: &mut [F]| chunk.iter_mut().for_each(|v| *v = f(*v));
    if xs.len() >= PARALLEL_MIN {
        xs.par_chunks_mut(CHUNK).for_each(run);
    } else {
        run(xs);
    }
}
