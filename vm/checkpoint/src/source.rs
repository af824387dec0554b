//! A checkpoint file memory-mapped, so that storages read in place are
//! paged in only as they are touched (`torch.load(mmap=True)`,
//! safetensors' `load_file`).

use std::fs::File;
use std::io::{self, Read};
use std::sync::Arc;

use fxvm_tensor::buffer::SharedBytes;

/// The bytes of `file`, mapped (an empty file is read: it cannot be mapped).
pub fn map(mut file: &File) -> io::Result<SharedBytes> {
    if file.metadata()?.len() > 0 {
        return map_file(file);
    }
    let mut data = Vec::new();
    file.read_to_end(&mut data)?;
    Ok(Arc::new(data))
}

/// A private, read-only map of `file`.
fn map_file(file: &File) -> io::Result<SharedBytes> {
    // SAFETY: the map is read-only and copy-on-write (MAP_PRIVATE), so
    // nothing in this process writes through it; as with any mapped file
    // (and PyTorch's mmap=True), another process truncating the file while
    // it is mapped is outside what a program can guard against.
    let map = unsafe { memmap2::MmapOptions::new().map_copy_read_only(file)? };
    Ok(Arc::new(map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapped_file_holds_its_bytes() {
        let dir = std::env::temp_dir().join(format!("fxvm-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bytes.bin");
        let content: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        std::fs::write(&path, &content).unwrap();
        let open = || File::open(&path).unwrap();
        assert_eq!((*map(&open()).unwrap()).as_ref(), &content[..]);
        std::fs::write(&path, b"").unwrap();
        assert!((*map(&open()).unwrap()).as_ref().is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
