//! Embedding fxvm: a [`Host`] runs PyTorch model scripts in its own
//! interpreter, passes tensors both ways without copying, calls Python from
//! Rust and Rust from Python, and traces models into graphs a Rust program
//! walks as plain data.
//!
//! A host is a sandbox: its scripts get no files, network, processes,
//! environment, threads, native code or modules beyond a computing allow
//! list unless [`HostBuilder`] grants them (`allow_read(dir)`,
//! `allow_network()`, …, `allow_all()`); a refusal is a `PermissionError`
//! naming the method that grants it. Limits on wall time, tensor memory and
//! recursion stop a runaway script with an error the host survives.
//!
//! ```no_run
//! use fxvm::{Host, Value};
//! use fxvm::tensor::Tensor;
//!
//! let host = Host::new()?;
//! let model = host.import_source("model", "import torch\ndef double(x):\n    return x * 2\n")?;
//! let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
//! let y = model.call("double", &[Value::Tensor(x)])?;
//! println!("{y:?}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod budget;
mod error;
mod graph;
mod host;
mod value;

pub use error::{Error, ErrorKind, ExceptionClass};
pub use fxvm_ops::OpId;
pub use fxvm_tensor as tensor;
pub use graph::{Arg, Graph, Node, Opcode, Target};
pub use host::{Host, HostBuilder, Limits, Object};
pub use value::Value;
