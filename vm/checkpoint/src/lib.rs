//! Checkpoint files without a Python VM: a pickle decoder that executes
//! nothing ([`pickle`]) and PyTorch's containers around it ([`archive`]):
//! the zip format every PyTorch since 1.6 writes, the legacy stream before
//! it, and bare pickles. What a pickle may build is decided by whoever
//! materialises it (the `torch.load` binding applies PyTorch's allow-list).

pub mod archive;
pub mod pickle;
pub mod safetensors;
pub mod source;

pub use archive::{
    Checkpoint, CheckpointError, StorageRef, storage_class, storage_dtype, write_zip,
};
