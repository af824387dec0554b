//! What fxvm's frozen `numpy` package needs below Python, without the VM:
//! numpy's legacy random streams ([`legacy`]) and distributions
//! ([`distributions`]), the `default_rng` streams ([`pcg64`]), and the
//! shortest digits its printing starts from
//! ([`digits`]). Arrays themselves are `fxvm-tensor`
//! tensors; the package's Python (`vm/py/numpy`) gives them numpy's types,
//! promotion and printing. To add a numpy function, write it there over
//! torch ops; add Rust here only for what numpy defines bit for bit (a
//! random stream, a file format).

pub mod digits;
pub mod distributions;
pub mod legacy;
pub mod pcg64;
mod ziggurat_tables;
