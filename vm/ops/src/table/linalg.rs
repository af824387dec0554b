//! Matrix products and contractions.

use fxvm_tensor::Scalar;
use fxvm_tensor::Tensor;
use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary};
use fxvm_tensor::ops::qr::{self, QrMode};
use fxvm_tensor::ops::{einsum, linalg, products};

use crate::op::{NN, Op, Place, TM, op};
use crate::value::Value;

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "matmul(Tensor input, Tensor other)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::matmul(&a, &b),
        ),
        op(
            "mm(Tensor input, Tensor mat2)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::mm(&a, &b),
        ),
        op(
            "bmm(Tensor input, Tensor mat2)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::bmm(&a, &b),
        ),
        op(
            "outer(Tensor input, Tensor vec2)",
            TM,
            |(a, b): (Tensor, Tensor)| linalg::outer(&a, &b),
        ),
        op(
            "addmm(Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)",
            TM,
            |(x, m1, m2, beta, alpha): (Tensor, Tensor, Tensor, Scalar, Scalar)| {
                let prod = linalg::mm(&m1, &m2)?;
                let scaled = ew::binary(Binary::Mul, &Arg::Tensor(prod), &Arg::Scalar(alpha))?;
                let bias = ew::binary(Binary::Mul, &Arg::Tensor(x), &Arg::Scalar(beta))?;
                ew::binary(Binary::Add, &Arg::Tensor(bias), &Arg::Tensor(scaled))
            },
        ),
        op(
            "linear(Tensor input, Tensor weight, Tensor? bias=None)",
            NN,
            |(x, w, b): (Tensor, Tensor, Option<Tensor>)| linalg::linear(&x, &w, b.as_ref()),
        ),
        op(
            "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None)",
            &[Place::Torch, Place::FunctionalIsTorch],
            |(x1, x2, w, b): (Tensor, Tensor, Tensor, Option<Tensor>)| {
                products::bilinear(&x1, &x2, &w, b.as_ref())
            },
        ),
        op(
            "_grouped_mm(Tensor input, Tensor mat2, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None)",
            &[Place::Torch],
            |(a, b, offs, bias, out_dtype): (
                Tensor,
                Tensor,
                Option<Tensor>,
                Option<Tensor>,
                Option<fxvm_tensor::DType>,
            )| {
                if bias.is_some() {
                    return Err(fxvm_tensor::TensorError::runtime(
                        "_grouped_mm",
                        "Bias not supported yet",
                    ));
                }
                let y = products::grouped_mm(&a, &b, offs.as_ref())?;
                Ok(match out_dtype {
                    Some(d) => y.to_dtype(d),
                    None => y,
                })
            },
        ),
        op(
            "linalg_qr(Tensor A, str mode='reduced')",
            &[Place::Linalg],
            |(a, mode): (Tensor, String)| {
                let (q, r) = qr::qr(&a, QrMode::parse(&mode)?)?;
                Ok(Value::ReturnType(
                    "linalg_qr",
                    vec![Value::Tensor(q), Value::Tensor(r)],
                ))
            },
        ),
        op(
            "einsum(str equation, Tensor[] *operands)",
            &[Place::TorchFunctional(2)],
            |(equation, operands): (String, Vec<Tensor>)| einsum::einsum(&equation, &operands),
        ),
    ]
}
