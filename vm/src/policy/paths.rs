//! Where a path or a descriptor really leads, and whether a set of granted
//! folders covers it. VM-free: the guards convert Python arguments first.

use std::path::{Component, Path, PathBuf};

/// Folders a host granted, canonical (symlinks resolved) when granted.
#[derive(Debug, Clone, Default)]
pub struct Folders(Vec<PathBuf>);

impl Folders {
    /// Adds `dir`, which must exist (its canonical form is what counts).
    pub fn grant(&mut self, dir: &Path) -> std::io::Result<()> {
        let dir = dir.canonicalize()?;
        if !self.0.contains(&dir) {
            self.0.push(dir);
        }
        Ok(())
    }

    /// Whether `path` (canonical) lies in one of the folders.
    pub fn cover(&self, path: &Path) -> bool {
        self.0.iter().any(|dir| path.starts_with(dir))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Path> {
        self.0.iter().map(PathBuf::as_path)
    }
}

/// The place `path` names, as the operating system will resolve it: every
/// symlink on the way resolved; the final component too when `follow`
/// (operations on a link itself — unlink, lstat, readlink — pass false).
/// Components that do not exist yet are joined lexically, so a file about
/// to be created resolves to its folder's real place.
pub fn resolve(path: &Path, follow: bool) -> std::io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let (parent, last) = match absolute.file_name() {
        Some(name) if !follow => (
            absolute.parent().unwrap_or(Path::new("/")),
            Some(name.to_owned()),
        ),
        _ => (absolute.as_path(), None),
    };
    let mut base = parent.to_path_buf();
    let mut rest = Vec::new();
    // The longest prefix that exists is resolved by the OS; the rest, which
    // holds no symlinks since it does not exist, is joined lexically.
    let mut resolved = loop {
        match base.canonicalize() {
            Ok(real) => break real,
            Err(_) => match (base.file_name().map(|n| n.to_owned()), base.parent()) {
                (Some(name), Some(up)) => {
                    rest.push(name);
                    base = up.to_path_buf();
                }
                _ => break lexical(&base),
            },
        }
    };
    for name in rest.iter().rev() {
        resolved = lexical(&resolved.join(name));
    }
    if let Some(last) = last {
        resolved = lexical(&resolved.join(last));
    }
    Ok(resolved)
}

/// `path` with `.` and `..` folded without touching the filesystem.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// What an open descriptor of this process refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Descriptor {
    /// A file or folder at this (canonical) place.
    File(PathBuf),
    /// A pipe, socket, terminal or other object without a place.
    Other(String),
    /// Not open, or not inspectable on this system.
    Unknown,
}

/// What descriptor `fd` refers to (read from `/proc/self/fd` on Linux).
pub fn descriptor(fd: i32) -> Descriptor {
    if fd < 0 {
        return Descriptor::Unknown;
    }
    match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
        Ok(target) if target.is_absolute() && !target.starts_with("/dev") => {
            // A deleted file keeps its old name plus " (deleted)": the name
            // still says where it was.
            let text = target.to_string_lossy();
            match text.strip_suffix(" (deleted)") {
                Some(name) => Descriptor::File(PathBuf::from(name)),
                None => Descriptor::File(target),
            }
        }
        Ok(target) => Descriptor::Other(target.to_string_lossy().into_owned()),
        Err(_) => Descriptor::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fxvm-paths-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    #[test]
    fn dotdot_cannot_leave_a_folder() {
        let dir = scratch("dotdot");
        let mut folders = Folders::default();
        folders.grant(&dir).unwrap();
        let escape = resolve(&dir.join("a/../../etc/passwd"), true).unwrap();
        assert!(!folders.cover(&escape), "{escape:?}");
        assert!(folders.cover(&resolve(&dir.join("new/file.txt"), true).unwrap()));
        assert!(!folders.cover(Path::new("/")));
        // A sibling whose name starts with the folder's is another folder.
        let sibling = PathBuf::from(format!("{}-other/x", dir.display()));
        assert!(!folders.cover(&resolve(&sibling, true).unwrap()));
    }

    #[test]
    fn symlinks_resolve_to_where_they_lead() {
        let dir = scratch("links");
        let outside = scratch("links-outside");
        std::fs::write(outside.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), dir.join("link")).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("door")).unwrap();
        let mut folders = Folders::default();
        folders.grant(&dir).unwrap();
        assert!(!folders.cover(&resolve(&dir.join("link"), true).unwrap()));
        // The link itself (unlink, lstat) is inside.
        assert!(folders.cover(&resolve(&dir.join("link"), false).unwrap()));
        // A folder link leads out even for a file not created yet.
        assert!(!folders.cover(&resolve(&dir.join("door/new"), true).unwrap()));
        assert!(!folders.cover(&resolve(&dir.join("door/new"), false).unwrap()));
    }

    #[test]
    fn relative_paths_start_at_the_working_directory() {
        let here = std::env::current_dir().unwrap().canonicalize().unwrap();
        assert_eq!(resolve(Path::new("x/y"), true).unwrap(), here.join("x/y"));
    }

    #[test]
    fn descriptors_name_their_file() {
        let dir = scratch("fd");
        let file = std::fs::File::create(dir.join("f")).unwrap();
        assert_eq!(
            descriptor(file.as_raw_fd()),
            Descriptor::File(dir.join("f"))
        );
        let (reader, _writer) = std::io::pipe().unwrap();
        assert!(
            matches!(descriptor(reader.as_raw_fd()), Descriptor::Other(s) if s.starts_with("pipe:"))
        );
        assert_eq!(descriptor(-1), Descriptor::Unknown);
        assert_eq!(descriptor(999_999), Descriptor::Unknown);
    }
}
