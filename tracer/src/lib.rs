//! torch.fx in Rust: the graph IR, the tracer, and the `fxvm` command.

pub mod cli;
