//! Distinct values, counts and searches: `unique`, `unique_consecutive`,
//! `bincount`, `histc`, `searchsorted`, `bucketize`, `isin`.

use fxvm_tensor::ops::search;
use fxvm_tensor::ops::unique::{self, Unique};
use fxvm_tensor::{Result, Scalar, Tensor};

use crate::op::{Op, Place, T, TM, op};
use crate::value::{Or, Value};

/// The values alone, or a tuple with the parts asked for.
fn unique_result(u: Unique, inverse: bool, counts: bool) -> Value {
    if !inverse && !counts {
        return Value::Tensor(u.values);
    }
    let mut parts = vec![Value::Tensor(u.values)];
    if inverse {
        parts.push(Value::Tensor(u.inverse));
    }
    if counts {
        parts.push(Value::Tensor(u.counts));
    }
    Value::Tuple(parts)
}

fn scalar_or_tensor(v: Or<Tensor, Scalar>) -> Tensor {
    match v {
        Or::A(t) => t,
        Or::B(s) => Tensor::scalar(s, s.category().default_dtype()),
    }
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "unique(Tensor input, bool sorted=True, bool return_inverse=False, bool return_counts=False, int? dim=None)",
            &[Place::TorchFunctional(1), Place::Method],
            |(x, _sorted, inverse, counts, dim): (Tensor, bool, bool, bool, Option<i64>)| {
                Ok(unique_result(unique::unique(&x, dim)?, inverse, counts))
            },
        ),
        op(
            "unique_consecutive(Tensor input, bool return_inverse=False, bool return_counts=False, int? dim=None)",
            &[Place::TorchFunctional(1), Place::Method],
            |(x, inverse, counts, dim): (Tensor, bool, bool, Option<i64>)| {
                Ok(unique_result(unique::unique_consecutive(&x, dim)?, inverse, counts))
            },
        ),
        op(
            "bincount(Tensor input, Tensor? weights=None, int minlength=0)",
            TM,
            |(x, w, minlength): (Tensor, Option<Tensor>, i64)| unique::bincount(&x, w.as_ref(), minlength),
        ),
        op(
            "histc(Tensor input, int bins=100, Scalar min=0, Scalar max=0)",
            TM,
            |(x, bins, lo, hi): (Tensor, i64, Scalar, Scalar)| unique::histc(&x, bins, lo.to_f64(), hi.to_f64()),
        ),
        op(
            "searchsorted(Tensor sorted_sequence, Tensor|Scalar input, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None)",
            T,
            |(seq, v, int32, right, side, sorter): (Tensor, Or<Tensor, Scalar>, bool, bool, Option<String>, Option<Tensor>)| {
                if side.as_deref() == Some("left") && right {
                    return Err(fxvm_tensor::TensorError::runtime(
                        "searchsorted",
                        "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True",
                    ));
                }
                let right = right || side.as_deref() == Some("right");
                search::searchsorted(&seq, &scalar_or_tensor(v), right, sorter.as_ref(), int32)
            },
        ),
        op(
            "bucketize(Tensor|Scalar input, Tensor boundaries, *, bool out_int32=False, bool right=False)",
            T,
            |(x, b, int32, right): (Or<Tensor, Scalar>, Tensor, bool, bool)| {
                search::bucketize(&scalar_or_tensor(x), &b, right, int32)
            },
        ),
        op(
            "isin(Tensor|Scalar elements, Tensor|Scalar test_elements, *, bool assume_unique=False, bool invert=False)",
            T,
            |(e, t, _unique, invert): (Or<Tensor, Scalar>, Or<Tensor, Scalar>, bool, bool)| -> Result<Tensor> {
                search::isin(&scalar_or_tensor(e), &scalar_or_tensor(t), invert)
            },
        ),
    ]
}
