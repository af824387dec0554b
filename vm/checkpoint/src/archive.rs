//! The containers PyTorch writes around its pickles: the zip archive of
//! every release since 1.6 (`<name>/data.pkl`, `<name>/data/<key>`,
//! `<name>/byteorder`), the legacy stream (magic number, protocol, system
//! info, the object, its storage keys, then each storage's bytes), and a bare
//! pickle with no storages.

use std::collections::HashMap;
use std::fmt;
use std::io::{Cursor, Read, Write};
use std::ops::Range;
use std::sync::Arc;

use fxvm_tensor::buffer::SharedBytes;
use fxvm_tensor::bytes::element_size;
use fxvm_tensor::{DType, Tensor, TensorError};
use zip::write::SimpleFileOptions;

use crate::pickle::{self, Id, Pickle, PickleError, Value};

/// The first value of a legacy file: PyTorch's magic number,
/// 0x1950a86a20f9469cfc6c, as the pickle's little-endian integer bytes.
const LEGACY_MAGIC: [u8; 10] = [0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19];

#[derive(Debug)]
pub enum CheckpointError {
    Pickle(PickleError),
    /// A zip archive that is not a PyTorch checkpoint, or is damaged.
    Archive(String),
    /// A storage the pickle names but the file does not hold.
    MissingRecord(String),
    /// A storage of a dtype fxvm has no tensors for.
    UnsupportedDType(String),
    Tensor(TensorError),
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::Pickle(e) => write!(f, "{e}"),
            CheckpointError::Archive(m) => f.write_str(m),
            CheckpointError::MissingRecord(k) => write!(
                f,
                "PytorchStreamReader failed locating file data/{k}: file not found"
            ),
            CheckpointError::UnsupportedDType(name) => {
                write!(f, "fxvm cannot load tensors of type {name} yet")
            }
            CheckpointError::Tensor(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CheckpointError {}

impl From<PickleError> for CheckpointError {
    fn from(e: PickleError) -> Self {
        CheckpointError::Pickle(e)
    }
}

impl From<TensorError> for CheckpointError {
    fn from(e: TensorError) -> Self {
        CheckpointError::Tensor(e)
    }
}

impl From<zip::result::ZipError> for CheckpointError {
    fn from(e: zip::result::ZipError) -> Self {
        CheckpointError::Archive(format!(
            "PytorchStreamReader failed reading zip archive: {e}"
        ))
    }
}

pub type Result<T, E = CheckpointError> = std::result::Result<T, E>;

/// PyTorch's storage class for each dtype, as its files name them.
const STORAGE_CLASSES: [(DType, &str); 10] = [
    (DType::F32, "FloatStorage"),
    (DType::F64, "DoubleStorage"),
    (DType::F16, "HalfStorage"),
    (DType::BF16, "BFloat16Storage"),
    (DType::I64, "LongStorage"),
    (DType::I32, "IntStorage"),
    (DType::I16, "ShortStorage"),
    (DType::I8, "CharStorage"),
    (DType::U8, "ByteStorage"),
    (DType::Bool, "BoolStorage"),
];

/// The dtype of a PyTorch storage class (`FloatStorage` …), or the error
/// for one fxvm does not support.
pub fn storage_dtype(class_name: &str) -> Result<DType> {
    STORAGE_CLASSES
        .iter()
        .find(|(_, name)| *name == class_name)
        .map(|&(dtype, _)| dtype)
        .ok_or_else(|| CheckpointError::UnsupportedDType(class_name.to_string()))
}

/// The storage class PyTorch names for a dtype in its files.
pub fn storage_class(dtype: DType) -> &'static str {
    STORAGE_CLASSES
        .iter()
        .find(|&&(d, _)| d == dtype)
        .map(|&(_, name)| name)
        .expect("every dtype has a storage class")
}

/// Where one storage's bytes are.
enum Record {
    /// A byte range of the file (stored zip entries, legacy storages).
    Range(Range<usize>),
    /// A compressed zip entry, inflated on first use.
    Compressed(usize),
}

/// Where a checkpoint's bytes are.
enum Source {
    /// In memory or mapped: stored little-endian storages are read in place
    /// (keeping the bytes alive) until written.
    Bytes(SharedBytes),
    /// A file read storage by storage, each into a buffer of its own, as
    /// PyTorch's `torch.load` does: the tensors owe nothing to the file.
    File(std::fs::File),
}

/// A checkpoint file: its pickle, and the storages it refers to.
pub struct Checkpoint {
    source: Source,
    pub pickle: Pickle,
    records: HashMap<String, Record>,
    big_endian: bool,
}

impl Checkpoint {
    /// Reads any of the three containers from the file's bytes.
    pub fn open(data: Vec<u8>) -> Result<Checkpoint> {
        Checkpoint::open_shared(Arc::new(data))
    }

    /// Reads any of the three containers from bytes storages may borrow
    /// (a file's contents, or its memory map).
    pub fn open_shared(data: SharedBytes) -> Result<Checkpoint> {
        let bytes: &[u8] = (*data).as_ref();
        if bytes.starts_with(b"PK\x03\x04") {
            let len = bytes.len();
            return open_zip(Cursor::new(bytes), len, Source::Bytes(Arc::clone(&data)));
        }
        let (first, used) = pickle::decode(bytes)?;
        if first.get(first.root) == &Value::BigInt(LEGACY_MAGIC.to_vec()) {
            return open_legacy(data, used);
        }
        Ok(Checkpoint {
            source: Source::Bytes(Arc::new(Vec::new())),
            pickle: first,
            records: HashMap::new(),
            big_endian: false,
        })
    }

    /// A checkpoint whose bytes `data` are `file` memory-mapped. A zip
    /// archive's directory and headers are read from the file rather than
    /// the map: the kernel maps whole page-cache folios (megabytes) on a
    /// fault, so touching each record's header through the map would make
    /// most of the file resident at once.
    pub fn open_mapped(data: SharedBytes, file: std::fs::File) -> Result<Checkpoint> {
        let bytes: &[u8] = (*data).as_ref();
        if bytes.starts_with(b"PK\x03\x04") {
            let len = bytes.len();
            return open_zip(std::io::BufReader::new(file), len, Source::Bytes(data));
        }
        Checkpoint::open_shared(data)
    }

    /// A checkpoint read from `file` as it is needed: the zip directory and
    /// pickle first, then each storage into its own buffer. The other
    /// containers are read whole.
    pub fn open_file(mut file: std::fs::File) -> Result<Checkpoint> {
        use std::io::Seek;
        let io = |e: std::io::Error| CheckpointError::Archive(e.to_string());
        let mut magic = [0u8; 4];
        let is_zip = file.read_exact(&mut magic).is_ok() && &magic == b"PK\x03\x04";
        file.rewind().map_err(io)?;
        if !is_zip {
            let mut data = Vec::new();
            file.read_to_end(&mut data).map_err(io)?;
            return Checkpoint::open(data);
        }
        let len = usize::try_from(file.metadata().map_err(io)?.len())
            .map_err(|_| CheckpointError::Archive("the file is too large".into()))?;
        let reader = std::io::BufReader::new(file.try_clone().map_err(io)?);
        open_zip(reader, len, Source::File(file))
    }

    /// The storage `key` as a 1-d tensor of `dtype` holding `numel` elements.
    pub fn storage(&self, key: &str, dtype: DType, numel: usize) -> Result<Tensor> {
        let missing = || CheckpointError::MissingRecord(key.to_string());
        let record = self.records.get(key).ok_or_else(missing)?;
        let short = |len: usize| {
            CheckpointError::Archive(format!(
                "storage {key} holds {len} bytes, fewer than its {numel} elements need"
            ))
        };
        let fits = |len: usize| {
            numel
                .checked_mul(element_size(dtype))
                .is_some_and(|n| n <= len)
        };
        let bytes: std::borrow::Cow<[u8]> = match (&self.source, record) {
            (Source::Bytes(shared), Record::Range(r)) => {
                if !fits(r.len()) {
                    return Err(short(r.len()));
                }
                if !self.big_endian
                    && let Some(t) = Tensor::borrow_bytes(dtype, shared, r.start, numel)
                {
                    return Ok(t);
                }
                (**shared).as_ref()[r.clone()].into()
            }
            (Source::File(file), Record::Range(r)) => {
                use std::os::unix::fs::FileExt;
                if !fits(r.len()) {
                    return Err(short(r.len()));
                }
                let read = Tensor::read_into(dtype, numel, self.big_endian, |buf| {
                    file.read_exact_at(buf, r.start as u64)
                })?;
                return read.map_err(|e| {
                    CheckpointError::Archive(format!(
                        "PytorchStreamReader failed reading file data/{key}: {e}"
                    ))
                });
            }
            (source, Record::Compressed(index)) => {
                let name = format!("data/{key}");
                match source {
                    Source::Bytes(shared) => {
                        inflate(Cursor::new((**shared).as_ref()), *index, &name)?
                    }
                    Source::File(file) => inflate(std::io::BufReader::new(file), *index, &name)?,
                }
                .into()
            }
        };
        if !fits(bytes.len()) {
            return Err(short(bytes.len()));
        }
        let used = numel * element_size(dtype);
        Ok(Tensor::from_bytes(dtype, &bytes[..used], self.big_endian)?)
    }
}

/// The inflated bytes of the compressed zip entry `index` (named `name`).
fn inflate<R: Read + std::io::Seek>(reader: R, index: usize, name: &str) -> Result<Vec<u8>> {
    let mut archive = zip::ZipArchive::new(reader)?;
    let entry = archive.by_index(index)?;
    let size = entry.size();
    read_entry(entry, size, name)
}

/// A zip entry's `size` bytes, in a buffer allocated fallibly (the size is the file's claim).
fn read_entry(mut entry: impl Read, size: u64, name: &str) -> Result<Vec<u8>> {
    let bytes = usize::try_from(size).unwrap_or(usize::MAX);
    let mut out = Vec::new();
    out.try_reserve_exact(bytes)
        .map_err(|_| TensorError::OutOfMemory { bytes })?;
    entry.read_to_end(&mut out).map_err(|e| {
        CheckpointError::Archive(format!(
            "PytorchStreamReader failed reading file {name}: {e}"
        ))
    })?;
    Ok(out)
}

/// A zip archive of `len` bytes read through `reader` (the directory,
/// headers and pickle) whose records `source` then reads.
fn open_zip<R: Read + std::io::Seek>(reader: R, len: usize, source: Source) -> Result<Checkpoint> {
    let mut archive = zip::ZipArchive::new(reader)?;
    let names: Vec<String> = archive.file_names().map(str::to_owned).collect();
    let pkl = names
        .iter()
        .filter(|n| n.ends_with("data.pkl") && n.matches('/').count() <= 1)
        .min_by_key(|n| n.len())
        .ok_or_else(|| {
            CheckpointError::Archive(
                "PytorchStreamReader failed locating file data.pkl: file not found".into(),
            )
        })?;
    let prefix = pkl[..pkl.len() - "data.pkl".len()].to_string();
    let read = |archive: &mut zip::ZipArchive<R>, name: &str| -> Result<Option<Vec<u8>>> {
        let Ok(file) = archive.by_name(name) else {
            return Ok(None);
        };
        let size = file.size();
        read_entry(file, size, name).map(Some)
    };
    let pickle_bytes = read(&mut archive, pkl)?.expect("listed above");
    let big_endian =
        read(&mut archive, &format!("{prefix}byteorder"))?.is_some_and(|b| b == b"big");
    let mut records = HashMap::new();
    let data_prefix = format!("{prefix}data/");
    for index in 0..archive.len() {
        let file = archive.by_index_raw(index)?;
        let Some(key) = file.name().strip_prefix(&data_prefix) else {
            continue;
        };
        let record = if file.compression() == zip::CompressionMethod::Stored {
            let start = usize::try_from(file.data_start())
                .map_err(|_| CheckpointError::Archive("zip entry beyond the file".into()))?;
            let end = start
                .checked_add(file.size() as usize)
                .filter(|&e| e <= len);
            Record::Range(
                start..end.ok_or_else(|| {
                    CheckpointError::Archive(format!(
                        "zip entry data/{key} runs past the end of the file"
                    ))
                })?,
            )
        } else {
            Record::Compressed(index)
        };
        records.insert(key.to_string(), record);
    }
    drop(archive);
    let (pickle, _) = pickle::decode(&pickle_bytes)?;
    Ok(Checkpoint {
        source,
        pickle,
        records,
        big_endian,
    })
}

/// The legacy stream: the magic number (already read), then the protocol
/// version, system info, the object, and the sorted storage keys, each
/// pickled; then per key an 8-byte element count and the elements.
fn open_legacy(shared: SharedBytes, mut pos: usize) -> Result<Checkpoint> {
    let data: &[u8] = (*shared).as_ref();
    let next = |pos: &mut usize| -> Result<Pickle> {
        let (p, used) = pickle::decode(&data[*pos..])?;
        *pos += used;
        Ok(p)
    };
    next(&mut pos)?; // protocol version
    let info = next(&mut pos)?;
    let little_endian = dict_get(&info, info.root, "little_endian")
        .is_none_or(|v| info.get(v) != &Value::Bool(false));
    let object = next(&mut pos)?;
    let keys = next(&mut pos)?;
    let Value::List(key_ids) = keys.get(keys.root) else {
        return Err(CheckpointError::Archive(
            "legacy checkpoint: the storage keys are not a list".into(),
        ));
    };
    let sizes = storage_element_sizes(&object)?;
    let mut records = HashMap::new();
    for &k in key_ids {
        let Value::Str(key) = keys.get(k) else {
            return Err(CheckpointError::Archive(
                "legacy checkpoint: a storage key is not a string".into(),
            ));
        };
        let size = *sizes
            .get(key)
            .ok_or_else(|| CheckpointError::MissingRecord(key.clone()))?;
        let header = data
            .get(pos..pos + 8)
            .ok_or_else(|| CheckpointError::Archive("legacy checkpoint is truncated".into()))?;
        let raw: [u8; 8] = header.try_into().expect("8 bytes");
        let count = if little_endian {
            u64::from_le_bytes(raw)
        } else {
            u64::from_be_bytes(raw)
        };
        let start = pos + 8;
        let end = usize::try_from(count)
            .ok()
            .and_then(|c| c.checked_mul(size))
            .and_then(|n| start.checked_add(n))
            .filter(|&e| e <= data.len())
            .ok_or_else(|| CheckpointError::Archive("legacy checkpoint is truncated".into()))?;
        records.insert(key.clone(), Record::Range(start..end));
        pos = end;
    }
    Ok(Checkpoint {
        source: Source::Bytes(shared),
        pickle: object,
        records,
        big_endian: !little_endian,
    })
}

fn dict_get(p: &Pickle, dict: Id, key: &str) -> Option<Id> {
    let Value::Dict(items) = p.get(dict) else {
        return None;
    };
    items
        .iter()
        .find(|&&(k, _)| matches!(p.get(k), Value::Str(s) if s == key))
        .map(|&(_, v)| v)
}

/// The element size of each storage key a pickle's persistent ids name.
fn storage_element_sizes(p: &Pickle) -> Result<HashMap<String, usize>> {
    let mut sizes = HashMap::new();
    for v in &p.values {
        if let &Value::Persistent(pid) = v
            && let Some(r) = StorageRef::parse(p, pid)
        {
            sizes.insert(r.key.to_string(), element_size(storage_dtype(r.class)?));
        }
    }
    Ok(sizes)
}

/// What a persistent id names in PyTorch's files:
/// `('storage', <torch.XStorage>, key, location, numel[, view])`.
pub struct StorageRef<'p> {
    /// The storage class's name (`FloatStorage` …), which gives the dtype.
    pub class: &'p str,
    pub key: &'p str,
    pub numel: i64,
}

impl<'p> StorageRef<'p> {
    /// The storage a persistent id `pid` names; `None` when it is not one.
    pub fn parse(p: &'p Pickle, pid: Id) -> Option<StorageRef<'p>> {
        let Value::Tuple(fields) = p.get(pid) else {
            return None;
        };
        let [tag, class, key, _location, numel, ..] = fields[..] else {
            return None;
        };
        match (p.get(tag), p.get(class), p.get(key), p.get(numel)) {
            (Value::Str(tag), Value::Global { name, .. }, Value::Str(key), &Value::Int(numel))
                if tag == "storage" =>
            {
                Some(StorageRef {
                    class: name,
                    key,
                    numel,
                })
            }
            _ => None,
        }
    }
}

/// Writes PyTorch's zip container: `<name>/data.pkl`, one `<name>/data/<key>`
/// per storage (stored, 64-byte aligned as PyTorch aligns them), and the
/// version files PyTorch reads.
pub fn write_zip(name: &str, pickle: &[u8], storages: &[(String, Vec<u8>)]) -> Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .with_alignment(64);
    let mut entry = |path: String, bytes: &[u8]| -> Result<()> {
        zip.start_file(path, options)?;
        zip.write_all(bytes)
            .map_err(|e| CheckpointError::Archive(e.to_string()))
    };
    entry(format!("{name}/data.pkl"), pickle)?;
    entry(format!("{name}/.format_version"), b"1")?;
    entry(format!("{name}/.storage_alignment"), b"64")?;
    entry(format!("{name}/byteorder"), b"little")?;
    for (key, bytes) in storages {
        entry(format!("{name}/data/{key}"), bytes)?;
    }
    entry(format!("{name}/version"), b"3\n")?;
    Ok(zip.finish()?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zip checkpoint whose pickle is the integer 7 and whose storage "0"
    /// holds `t`'s elements.
    fn one_storage(t: &Tensor) -> Vec<u8> {
        write_zip(
            "archive",
            b"\x80\x02K\x07.",
            &[("0".into(), t.storage_bytes())],
        )
        .expect("writes")
    }

    #[test]
    fn zip_round_trip_keeps_records_aligned() {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
        let file = one_storage(&t);
        let ck = Checkpoint::open(file).expect("reads");
        assert_eq!(ck.pickle.get(ck.pickle.root), &Value::Int(7));
        let Some(Record::Range(r)) = ck.records.get("0") else {
            panic!("stored record")
        };
        assert_eq!(r.start % 64, 0);
        assert_eq!(
            ck.storage("0", DType::F32, 3)
                .expect("storage")
                .to_vec::<f32>(),
            vec![1.0, 2.0, 3.0]
        );
        assert!(matches!(
            ck.storage("1", DType::F32, 3),
            Err(CheckpointError::MissingRecord(_))
        ));
        assert!(
            ck.storage("0", DType::F32, 4).is_err(),
            "more elements than bytes"
        );
        assert!(ck.storage("0", DType::F32, usize::MAX).is_err());
    }

    #[test]
    fn a_file_is_read_storage_by_storage_into_buffers_of_their_own() {
        let t = Tensor::from_vec(vec![1.5f64, -2.0], &[2]);
        let bytes = one_storage(&t);
        let dir = std::env::temp_dir().join(format!("fxvm-archive-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ck.pt");
        std::fs::write(&path, &bytes).unwrap();
        let ck = Checkpoint::open_file(std::fs::File::open(&path).unwrap()).expect("reads");
        let loaded = ck.storage("0", DType::F64, 2).expect("storage");
        assert!(!loaded.is_borrowed());
        assert_eq!(loaded.to_vec::<f64>(), [1.5, -2.0]);
        assert!(
            ck.storage("0", DType::F64, 3).is_err(),
            "more elements than bytes"
        );
        assert!(ck.storage("0", DType::F64, usize::MAX).is_err());
        // The file shrinks after its directory was read: an error, not a panic.
        std::fs::write(&path, &bytes[..64]).unwrap();
        assert!(ck.storage("0", DType::F64, 2).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stored_storages_are_read_in_place_until_written() {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
        let file = one_storage(&t);
        let ck = Checkpoint::open(file).expect("reads");
        let a = ck.storage("0", DType::F32, 3).expect("storage");
        let b = ck.storage("0", DType::F32, 3).expect("storage");
        assert!(a.is_borrowed() && b.is_borrowed());
        a.fill(fxvm_tensor::Scalar::Float(9.0));
        assert!(!a.is_borrowed());
        assert_eq!(a.to_vec::<f32>(), [9.0; 3]);
        // The file's bytes, and what else reads them, keep their values.
        assert!(b.is_borrowed());
        assert_eq!(b.to_vec::<f32>(), [1.0, 2.0, 3.0]);
        // Bools have invalid bit patterns: decoded, never borrowed.
        let flags = Tensor::from_vec(vec![true, false], &[2]);
        let file = one_storage(&flags);
        let ck = Checkpoint::open(file).expect("reads");
        let loaded = ck.storage("0", DType::Bool, 2).expect("storage");
        assert!(!loaded.is_borrowed());
        assert_eq!(loaded.to_vec::<bool>(), [true, false]);
    }

    #[test]
    fn a_bare_pickle_has_no_storages() {
        let ck = Checkpoint::open(b"\x80\x02N.".to_vec()).expect("reads");
        assert_eq!(ck.pickle.get(ck.pickle.root), &Value::None);
        assert!(ck.storage("0", DType::F32, 1).is_err());
    }

    #[test]
    fn damaged_zip_is_an_error() {
        let mut file = write_zip("a", b"\x80\x02N.", &[]).expect("writes");
        file.truncate(40);
        assert!(Checkpoint::open(file).is_err());
    }

    #[test]
    fn storage_classes_map_both_ways() {
        for dtype in DType::ALL {
            assert_eq!(storage_dtype(storage_class(dtype)).expect("known"), dtype);
        }
        assert!(matches!(
            storage_dtype("ComplexFloatStorage"),
            Err(CheckpointError::UnsupportedDType(_))
        ));
    }
}
