//! The dtypes PyTorch's CPU kernels are compiled for, where fewer than all
//! ten: a call on another dtype raises its NotImplementedError (`"glu_cpu"
//! not implemented for 'Byte'`) instead of computing. A row names its
//! kernel and set (`Op::kernel_dtypes`); as in PyTorch, the arguments'
//! own checks come first.

use fxvm_tensor::DType::{self, *};
use fxvm_tensor::{Result, TensorError};

use crate::value::Value;

/// float32/64 and the narrow floats.
pub(crate) const FLOATING: &[DType] = &[F32, F64, F16, BF16];
/// float32/64 only.
pub(crate) const FLOAT32_64: &[DType] = &[F32, F64];
/// Every dtype but float16 and bfloat16.
pub(crate) const NOT_NARROW_FLOAT: &[DType] = &[F32, F64, I64, I32, I16, I8, U8, Bool];
/// 3-d average pooling: float32/64 and int64.
pub(crate) const AVG_POOL3D: &[DType] = &[F32, F64, I64];
/// Every dtype but bool.
pub(crate) const NOT_BOOL: &[DType] = &[F32, F64, F16, BF16, I64, I32, I16, I8, U8];

/// A row's kernel name and the dtypes it takes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelDTypes {
    pub kernel: &'static str,
    pub dtypes: &'static [DType],
}

impl KernelDTypes {
    /// Refuses a call whose first tensor argument has another dtype.
    pub(crate) fn check(&self, values: &[Value]) -> Result<()> {
        let first = values.iter().find_map(|v| match v {
            Value::Tensor(t) => Some(t.dtype()),
            _ => None,
        });
        match first {
            Some(d) if !self.dtypes.contains(&d) => {
                Err(TensorError::not_implemented_for(self.kernel, d))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fxvm_tensor::Tensor;

    #[test]
    fn the_first_tensor_decides() {
        let glu = KernelDTypes {
            kernel: "glu_cpu",
            dtypes: FLOATING,
        };
        let ints = Value::Tensor(Tensor::from_vec(vec![1i64, 2], &[2]));
        let floats = Value::Tensor(Tensor::from_vec(vec![1.0f32, 2.0], &[2]));
        let err = glu.check(&[Value::Int(3), ints.clone()]).unwrap_err();
        assert_eq!(err.to_string(), "\"glu_cpu\" not implemented for 'Long'");
        assert!(glu.check(&[floats, ints]).is_ok());
        assert!(glu.check(&[Value::Int(3)]).is_ok());
    }
}
