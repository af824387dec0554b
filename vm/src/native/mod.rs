//! Native modules registered with the interpreter.

pub(crate) mod torch_c;
