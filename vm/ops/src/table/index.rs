//! Selection, masking, scatter/gather and in-place fills.

use fxvm_tensor::ops::index::{self, ScatterSrc};
use fxvm_tensor::{Result, Scalar, Tensor};

use super::in_place;
use crate::op::{M, Op, TM, op};
use crate::value::{Or, Value};

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "masked_fill(Tensor input, Tensor mask, Scalar value)",
            TM,
            |(x, mask, v): (Tensor, Tensor, Scalar)| index::masked_fill(&x, &mask, v),
        ),
        op(
            "masked_fill_(Tensor(a!) input, Tensor mask, Scalar value)",
            M,
            |(x, mask, v): (Tensor, Tensor, Scalar)| in_place(&x, index::masked_fill(&x, &mask, v)),
        ),
        op(
            "tril(Tensor input, int diagonal=0)",
            TM,
            |(x, d): (Tensor, i64)| index::triangle(&x, d, true),
        ),
        op(
            "triu(Tensor input, int diagonal=0)",
            TM,
            |(x, d): (Tensor, i64)| index::triangle(&x, d, false),
        ),
        op(
            "tril_(Tensor(a!) input, int diagonal=0)",
            M,
            |(x, d): (Tensor, i64)| in_place(&x, index::triangle(&x, d, true)),
        ),
        op(
            "triu_(Tensor(a!) input, int diagonal=0)",
            M,
            |(x, d): (Tensor, i64)| in_place(&x, index::triangle(&x, d, false)),
        ),
        op(
            "equal(Tensor input, Tensor other)",
            TM,
            |(x, y): (Tensor, Tensor)| -> Result<bool> {
                Ok(x.shape() == y.shape() && x.to_vec::<f64>() == y.to_vec::<f64>())
            },
        ),
        op(
            "masked_select(Tensor input, Tensor mask)",
            TM,
            |(x, mask): (Tensor, Tensor)| index::masked_select(&x, &mask),
        ),
        op(
            "gather(Tensor input, int dim, Tensor index)",
            TM,
            |(x, dim, i): (Tensor, i64, Tensor)| index::gather(&x, dim, &i),
        ),
        op(
            "scatter(Tensor input, int dim, Tensor index, Tensor|Scalar src, *, str? reduce=None)",
            TM,
            |(x, dim, i, src, reduce): (
                Tensor,
                i64,
                Tensor,
                Or<Tensor, Scalar>,
                Option<String>,
            )| {
                let src = match src {
                    Or::A(t) => ScatterSrc::Tensor(t),
                    Or::B(s) => ScatterSrc::Scalar(s),
                };
                index::scatter(&x, dim, &i, src, reduce.as_deref())
            },
        ),
        op(
            "index_select(Tensor input, int dim, Tensor index)",
            TM,
            |(x, dim, i): (Tensor, i64, Tensor)| index::index_select(&x, dim, &i),
        ),
        op(
            "copy_(Tensor(a!) input, Tensor src)",
            M,
            |(x, src): (Tensor, Tensor)| -> Result<Value> {
                x.copy_from(&src)?;
                Ok(Value::Input(0))
            },
        ),
        op(
            "fill_(Tensor(a!) input, Scalar value)",
            M,
            |(x, v): (Tensor, Scalar)| -> Result<Value> {
                x.fill(Tensor::fill_value(v, x.dtype())?);
                Ok(Value::Input(0))
            },
        ),
        op(
            "zero_(Tensor(a!) input)",
            M,
            |(x,): (Tensor,)| -> Result<Value> {
                x.fill(Scalar::Int(0));
                Ok(Value::Input(0))
            },
        ),
    ]
}
