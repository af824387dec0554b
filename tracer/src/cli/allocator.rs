//! The C allocator's settings for the `fxvm` process. Kernels build their
//! outputs and scratch buffers (im2col, attention scores) as plain `Vec`s
//! of a few hundred KB to a few MB, freed a moment later. glibc serves those
//! with `mmap` and returns them with `munmap`, so every call of a model
//! faulted in and zeroed fresh pages again: a CIFAR CNN at batch 32 spent a
//! third of its time there. Serving them from the heap and keeping freed
//! memory for the next call (as PyTorch's caching allocators do) removes
//! that; the cost is that memory freed after a peak stays with the process.
//! Only the binary sets this: a program embedding fxvm keeps its allocator.

/// Buffers below this come from the heap, to be reused once freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 64 << 20;

/// Free memory at the top of the heap is returned to the system only past this.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: libc::c_int = 256 << 20;

/// Applies the settings above (on glibc; elsewhere the system's defaults).
pub(crate) fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only records the two parameters (it is thread-safe
    // and may be called at any time); an unsupported one returns 0, which
    // leaves glibc's defaults in place.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}
