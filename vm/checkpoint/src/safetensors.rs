//! The safetensors format, on the `safetensors` crate: a JSON header naming
//! each tensor's dtype, shape and byte range, then the raw little-endian
//! data. Nothing in it can run code.

use std::collections::HashMap;

use fxvm_tensor::buffer::SharedBytes;
use fxvm_tensor::{DType, Tensor};
use safetensors::tensor::{Dtype, SafeTensors, TensorView};

use crate::CheckpointError;

/// A file's tensors (in the order of their data in the file, as
/// `load_file` returns them) and its `__metadata__`.
pub struct Loaded {
    pub tensors: Vec<(String, Tensor)>,
    pub metadata: Option<HashMap<String, String>>,
}

/// The format's dtype for each of fxvm's.
const DTYPES: [(DType, Dtype); 10] = [
    (DType::F32, Dtype::F32),
    (DType::F64, Dtype::F64),
    (DType::F16, Dtype::F16),
    (DType::BF16, Dtype::BF16),
    (DType::I64, Dtype::I64),
    (DType::I32, Dtype::I32),
    (DType::I16, Dtype::I16),
    (DType::I8, Dtype::I8),
    (DType::U8, Dtype::U8),
    (DType::Bool, Dtype::BOOL),
];

fn dtype_of(d: Dtype) -> Result<DType, CheckpointError> {
    DTYPES
        .iter()
        .find(|&&(_, f)| f == d)
        .map(|&(dtype, _)| dtype)
        .ok_or_else(|| CheckpointError::UnsupportedDType(format!("{d:?}")))
}

fn format_dtype(d: DType) -> Dtype {
    DTYPES
        .iter()
        .find(|&&(dtype, _)| dtype == d)
        .map(|&(_, f)| f)
        .expect("every dtype has a safetensors dtype")
}

fn invalid(e: safetensors::SafeTensorError) -> CheckpointError {
    CheckpointError::Archive(e.to_string())
}

/// Reads every tensor of a safetensors file. Tensors are read in place from
/// `shared` (keeping it alive) until written, when their data is aligned
/// for their dtype (as files written by safetensors are); otherwise copied.
pub fn load(shared: &SharedBytes) -> Result<Loaded, CheckpointError> {
    let bytes: &[u8] = (**shared).as_ref();
    let (header_len, header) = SafeTensors::read_metadata(bytes).map_err(invalid)?;
    // The data follows the 8-byte length and the JSON header.
    let data_start = 8 + header_len;
    let file = SafeTensors::deserialize(bytes).map_err(invalid)?;
    let mut names: Vec<(usize, String)> = header
        .tensors()
        .into_iter()
        .map(|(name, info)| (info.data_offsets.0, name))
        .collect();
    names.sort();
    let tensors = names
        .into_iter()
        .map(|(_, name)| {
            let view = file.tensor(&name).map_err(invalid)?;
            let dtype = dtype_of(view.dtype())?;
            let start = header.tensors()[&name].data_offsets.0 + data_start;
            let numel = view.shape().iter().product::<usize>();
            let flat = match Tensor::borrow_bytes(dtype, shared, start, numel) {
                Some(t) => t,
                None => Tensor::from_bytes(dtype, view.data(), false)
                    .map_err(CheckpointError::Tensor)?,
            };
            let tensor = fxvm_tensor::ops::shape::reshape(
                &flat,
                &view.shape().iter().map(|&d| d as i64).collect::<Vec<_>>(),
            )
            .map_err(CheckpointError::Tensor)?;
            Ok((name, tensor))
        })
        .collect::<Result<Vec<_>, CheckpointError>>()?;
    Ok(Loaded {
        tensors,
        metadata: header.metadata().clone(),
    })
}

/// Writes tensors (each as its dense row-major elements) and metadata as a
/// safetensors file.
pub fn save(
    tensors: &[(String, Tensor)],
    metadata: Option<HashMap<String, String>>,
) -> Result<Vec<u8>, CheckpointError> {
    let data: Vec<(String, Vec<u8>, &Tensor)> = tensors
        .iter()
        .map(|(name, t)| (name.clone(), t.contiguous().storage_bytes(), t))
        .collect();
    let views = data
        .iter()
        .map(|(name, bytes, t)| {
            TensorView::new(format_dtype(t.dtype()), t.shape().to_vec(), bytes)
                .map(|v| (name.clone(), v))
                .map_err(invalid)
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::tensor::serialize(views, metadata).map_err(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_names_shapes_dtypes_values_and_metadata() {
        let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
        // A transposed view is written as its own row-major elements.
        let at = fxvm_tensor::ops::shape::transpose(&a, 0, 1).unwrap();
        let b = Tensor::from_vec(vec![true, false], &[2]);
        let c = Tensor::from_vec(vec![-7i64], &[]);
        let meta = HashMap::from([("format".to_string(), "pt".to_string())]);
        let bytes = save(
            &[("w".into(), at), ("mask".into(), b), ("step".into(), c)],
            Some(meta.clone()),
        )
        .unwrap();
        let loaded = load(&(std::sync::Arc::new(bytes) as SharedBytes)).unwrap();
        // Aligned data is read in place.
        assert!(loaded.tensors.iter().any(|(_, t)| t.is_borrowed()));
        let mut by_name = loaded.tensors.clone();
        by_name.sort_by(|a, b| a.0.cmp(&b.0));
        let names: Vec<_> = by_name.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["mask", "step", "w"]);
        let w = &by_name[2].1;
        assert_eq!(w.shape(), [3, 2]);
        assert_eq!(w.to_vec::<f32>(), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        assert_eq!(by_name[0].1.to_vec::<bool>(), [true, false]);
        assert_eq!(by_name[1].1.shape(), [] as [usize; 0]);
        assert_eq!(by_name[1].1.to_vec::<i64>(), [-7]);
        assert_eq!(loaded.metadata, Some(meta));
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        let good = save(
            &[("x".into(), Tensor::from_vec(vec![1.0f32; 4], &[4]))],
            None,
        )
        .unwrap();
        for bad in [
            &b""[..],
            &b"\xff\xff\xff\xff\xff\xff\xff\xff{}"[..],
            &good[..good.len() - 3],
            &good[..10],
        ] {
            assert!(load(&(std::sync::Arc::new(bad.to_vec()) as SharedBytes)).is_err());
        }
    }
}
