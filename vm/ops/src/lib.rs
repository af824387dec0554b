//! fxvm's op registry: every op declared once, as one typed row — its
//! PyTorch schema, where PyTorch exposes it, and a kernel over typed Rust
//! values that runs without a Python VM. The Python bindings, the tracer
//! and Rust hosts all call ops through it.
//!
//! Adding an op touches one place: a row in its family's file under
//! `table/` — `op(declaration, places, kernel)`, the declaration in
//! PyTorch's syntax and the places PyTorch exposes it (`torch.X`,
//! `Tensor.X`, `F.X`) — with `.grad(…)`, its derivative from
//! `derivatives/<family>.rs` (written in registry ops, so double backward
//! comes free), and `.meta(…)`, its shape rule from `meta/`. The Python
//! bindings, `__torch_function__`, tracing, replay and hosts all read the
//! row; `fixtures/api/coverage.py` and the registry listings under
//! `fixtures/` report it (`FXVM_BLESS=1` rewrites the listings). Graph
//! rewrites name rows by `OpId` or `Family`, never by their text.
//!
//! ```
//! use fxvm_ops::{Value, registry};
//! use fxvm_tensor::{Scalar, Tensor};
//!
//! let add = registry().function("add").unwrap();
//! let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]);
//! let y = add.call(vec![Value::Tensor(x), Value::Scalar(Scalar::Int(1))], vec![]).unwrap();
//! let Value::Tensor(y) = y else { unreachable!() };
//! assert_eq!(y.to_vec::<f32>(), [2.0, 3.0]);
//! ```

pub mod autograd;
mod derivatives;
pub mod family;
mod kernels;
pub mod meta;
mod narrow;
pub mod op;
pub mod schema;
mod table;
pub mod tape;
pub mod value;

use std::collections::HashMap;
use std::sync::OnceLock;

pub use family::Family;
pub use op::{Op, Place, PythonRead};
pub use schema::{Param, Schema, Ty};
pub use value::{Data, Device, FromValue, Or, Value};

/// Every op, and an index by name.
pub struct Registry {
    ops: Vec<Op>,
    by_name: HashMap<&'static str, Vec<usize>>,
    /// Each row's family, by row.
    families: Vec<Option<Family>>,
}

impl Registry {
    fn build() -> Registry {
        let ops = table::all();
        let mut by_name: HashMap<&'static str, Vec<usize>> = HashMap::new();
        for (i, op) in ops.iter().enumerate() {
            by_name.entry(op.name()).or_default().push(i);
        }
        let families = ops.iter().map(family::of).collect();
        Registry {
            ops,
            by_name,
            families,
        }
    }

    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// `op` as the registry's row (None for an op built elsewhere).
    pub fn row(&'static self, op: &Op) -> Option<&'static Op> {
        self.id(op).map(|id| &self.ops[id.0 as usize])
    }

    /// The typed handle of `op`'s row (None for an op built elsewhere).
    pub fn id(&self, op: &Op) -> Option<OpId> {
        let base = self.ops.as_ptr() as usize;
        let i = (op as *const Op as usize).checked_sub(base)? / std::mem::size_of::<Op>();
        self.ops.get(i).filter(|row| std::ptr::eq(*row, op))?;
        Some(OpId(u32::try_from(i).ok()?))
    }

    /// The rows named `name` (`softmax` is both `torch.softmax` and the
    /// differently declared `torch.nn.functional.softmax`).
    pub fn named(&self, name: &str) -> impl Iterator<Item = &Op> {
        self.by_name
            .get(name)
            .into_iter()
            .flatten()
            .map(|&i| &self.ops[i])
    }

    /// The op `torch.<name>` or `Tensor.<name>` calls.
    pub fn function(&self, name: &str) -> Option<&Op> {
        self.named(name).find(|op| {
            op.places
                .iter()
                .any(|p| p.is_torch() || *p == Place::Method)
        })
    }

    /// The op `torch.nn.functional.<name>` calls.
    pub fn functional(&self, name: &str) -> Option<&Op> {
        self.ops.iter().find(|op| {
            op.places.iter().any(|p| match p {
                Place::FunctionalNativeAs(alias) => *alias == name,
                p => p.is_functional() && op.name() == name,
            })
        })
    }
}

/// A registry row's typed handle: copied and compared as a number, it is how
/// graphs and hosts name an op (`Target::Op(id)`), never by the text of its
/// name — two rows may share a name (`softmax`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId(u32);

impl OpId {
    /// The row.
    pub fn op(self) -> &'static Op {
        &registry().ops[self.0 as usize]
    }
}

impl Op {
    /// The row's typed handle (None for an op built outside the registry).
    pub fn id(&self) -> Option<OpId> {
        registry().id(self)
    }

    /// What a graph rewrite may know this row to compute.
    pub fn family(&self) -> Option<Family> {
        self.id().and_then(|id| registry().families[id.0 as usize])
    }
}

impl std::fmt::Debug for OpId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpId({})", self.op().name())
    }
}

impl std::fmt::Display for OpId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.op().name())
    }
}

/// The registry, built on first use.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::build)
}

/// Asserts that `fixtures/<name>` holds `report` (`FXVM_BLESS=1` rewrites
/// it): listings the registry generates for fixtures and tools.
#[cfg(test)]
pub(crate) fn assert_fixture_is_current(name: &str, report: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    if std::env::var_os("FXVM_BLESS").is_some() {
        std::fs::write(&path, report).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    let first = expected
        .lines()
        .zip(report.lines())
        .position(|(a, b)| a != b)
        .map_or(expected.lines().count().min(report.lines().count()), |i| i);
    assert!(
        expected == report,
        "{} is out of date (FXVM_BLESS=1 rewrites it); first difference at line {}",
        path.display(),
        first + 1
    );
}

#[cfg(test)]
mod tests {
    use fxvm_tensor::{DType, Scalar, Tensor};

    use super::*;

    fn tensor(v: &[f32], shape: &[usize]) -> Value {
        Value::Tensor(Tensor::from_vec(v.to_vec(), shape))
    }

    fn as_tensor(v: Value) -> Tensor {
        match v {
            Value::Tensor(t) => t,
            other => panic!("expected a tensor, got {other:?}"),
        }
    }

    #[test]
    fn each_row_has_its_own_id() {
        let r = registry();
        let softmaxes: Vec<OpId> = r.named("softmax").map(|op| r.id(op).unwrap()).collect();
        assert_eq!(softmaxes.len(), 2);
        assert_ne!(softmaxes[0], softmaxes[1]);
        for (i, op) in r.ops().iter().enumerate() {
            let id = r.id(op).unwrap();
            assert!(std::ptr::eq(id.op(), op), "row {i}");
        }
        assert_eq!(softmaxes[0].to_string(), "softmax");
    }

    #[test]
    fn every_row_builds_and_each_place_has_one_op_per_name() {
        let r = registry();
        assert!(r.ops().len() > 200, "{} rows", r.ops().len());
        let mut seen = std::collections::HashSet::new();
        for op in r.ops() {
            for place in op.places {
                let key = (op.name(), place.is_torch(), place.is_functional());
                assert!(
                    seen.insert(key),
                    "{} declared twice at {place:?}",
                    op.name()
                );
            }
        }
    }

    #[test]
    fn randint_reads_both_overloads_and_names_a_bad_mix_once() {
        let randint = registry().function("randint").unwrap();
        let seeded = || fxvm_tensor::random::Generator::new(0);
        let draw = |args: Vec<Value>| {
            let drawn = randint
                .call(args, vec![("generator", Value::Generator(seeded()))])
                .unwrap();
            as_tensor(drawn).to_vec::<i64>()
        };
        // torch.manual_seed(0); torch.randint(10, (5,)) in PyTorch.
        let expected = [4, 9, 3, 0, 3];
        assert_eq!(draw(vec![Value::Int(10), Value::Ints(vec![5])]), expected);
        assert_eq!(
            draw(vec![Value::Int(0), Value::Int(10), Value::Ints(vec![5])]),
            expected
        );
        let err = randint
            .call(vec![Value::Int(0), Value::Int(10)], vec![])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "randint(): received an invalid combination of arguments"
        );
    }

    #[test]
    fn combinations_no_overload_takes_are_refused_from_rust_too() {
        let sum = registry().function("sum").unwrap();
        let x = tensor(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let err = sum
            .call(vec![x.clone()], vec![("keepdim", Value::Bool(true))])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "sum(): received an invalid combination of arguments - got (keepdim) without (dim)"
        );
        let kept = sum
            .call(vec![x.clone(), Value::None, Value::Bool(true)], vec![])
            .unwrap();
        assert_eq!(as_tensor(kept).shape(), [1, 1]);
        let std = registry().function("std").unwrap();
        let err = std
            .call(
                vec![x],
                vec![
                    ("unbiased", Value::Bool(true)),
                    ("correction", Value::Int(1)),
                ],
            )
            .unwrap_err();
        assert!(err.to_string().contains("got (unbiased, correction)"));
    }

    #[test]
    fn calls_fill_defaults_and_check_types() {
        let sum = registry().function("sum").unwrap();
        let x = tensor(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
        let all = as_tensor(sum.call(vec![x.clone()], vec![]).unwrap());
        assert_eq!(all.to_vec::<f32>(), [10.0]);
        let rows = sum
            .call(vec![x.clone()], vec![("dim", Value::Ints(vec![1]))])
            .unwrap();
        assert_eq!(as_tensor(rows).to_vec::<f32>(), [3.0, 7.0]);
        let err = sum.call(vec![Value::Int(3)], vec![]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "sum(): argument 'input' must be Tensor, not int"
        );
        let err = sum
            .call(vec![x], vec![("axis", Value::Int(0))])
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("unexpected keyword argument 'axis'")
        );
    }

    #[test]
    fn in_place_rows_write_their_input_and_return_it() {
        let add_ = registry().function("add_").unwrap();
        assert_eq!(add_.schema.mutated(), Some(0));
        let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]);
        let r = add_
            .call(
                vec![Value::Tensor(x.clone()), Value::Scalar(Scalar::Int(2))],
                vec![("alpha", Value::Scalar(Scalar::Int(3)))],
            )
            .unwrap();
        assert!(matches!(r, Value::Input(0)));
        assert_eq!(x.to_vec::<f32>(), [7.0, 8.0]);
        let ints = Tensor::from_vec(vec![1i64], &[1]);
        let err = add_
            .call(
                vec![Value::Tensor(ints), Value::Scalar(Scalar::Float(0.5))],
                vec![],
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "result type Float can't be cast to the desired output type Long"
        );
    }

    #[test]
    fn functional_rows_are_separate_from_torch_rows() {
        let f = registry().functional("softmax").unwrap();
        assert_eq!(f.places, &[Place::Functional(1)]);
        let x = tensor(&[0.0, 0.0], &[2]);
        let y = as_tensor(f.call(vec![x], vec![]).unwrap());
        assert_eq!(y.to_vec::<f32>(), [0.5, 0.5]);
        assert!(
            registry()
                .function("softmax")
                .unwrap()
                .places
                .contains(&Place::Method)
        );
    }

    #[test]
    fn compositions_match_pytorch() {
        let call = |name: &str, args: Vec<Value>| {
            as_tensor(
                registry()
                    .functional(name)
                    .unwrap()
                    .call(args, vec![])
                    .unwrap(),
            )
        };
        let x = tensor(&[-2.0, -0.5, 0.0, 3.0, 8.0], &[5]);
        assert_eq!(
            call("relu6", vec![x.clone()]).to_vec::<f32>(),
            [0.0, 0.0, 0.0, 3.0, 6.0]
        );
        assert_eq!(
            call("hardsigmoid", vec![x.clone()]).to_vec::<f32>(),
            [0.16666667, 0.41666666, 0.5, 1.0, 1.0]
        );
        let leaky = call("leaky_relu", vec![x.clone()]).to_vec::<f32>();
        assert_eq!(leaky, [-0.02, -0.005, 0.0, 3.0, 8.0]);
        assert_eq!(
            call("hardswish", vec![x.clone()]).to_vec::<f32>(),
            [-0.33333334, -0.20833333, 0.0, 3.0, 8.0]
        );
        let ints = Value::Tensor(Tensor::from_vec(vec![1i64, 3], &[2]));
        let hot = call("one_hot", vec![ints]);
        assert_eq!(hot.dtype(), DType::I64);
        assert_eq!(hot.shape(), [2, 4]);
        assert_eq!(hot.to_vec::<i64>(), [0, 1, 0, 0, 0, 0, 0, 1]);
        let err = registry()
            .functional("elu")
            .unwrap()
            .call(
                vec![Value::Tensor(Tensor::from_vec(vec![1i64], &[1]))],
                vec![],
            )
            .unwrap_err();
        assert_eq!(err.to_string(), "\"elu_cpu\" not implemented for 'Long'");
    }

    /// `fixtures/fuzz/registry/ops.txt`: how Python calls each row, and its
    /// declaration, one line per place — what the registry fuzzer generates
    /// its calls from. A row added or changed changes it (`FXVM_BLESS=1`
    /// rewrites it; then regenerate the fuzz with `fixtures/regen.sh`).
    #[test]
    fn the_fuzzers_op_listing_is_current() {
        let mut lines = vec![];
        for op in registry().ops() {
            let name = op.name();
            for place in op.places {
                let call = match place {
                    Place::Torch | Place::TorchFunctional(_) => format!("torch.{name}"),
                    Place::Method => format!("Tensor.{name}"),
                    Place::FunctionalIsTorch | Place::FunctionalNative | Place::Functional(_) => {
                        format!("F.{name}")
                    }
                    Place::FunctionalNativeAs(alias) => format!("F.{alias}"),
                    Place::Linalg => format!("torch.linalg.{}", name.trim_start_matches("linalg_")),
                };
                lines.push(format!("{call}\t{}", op.schema.decl));
            }
        }
        lines.sort();
        lines.dedup();
        let listing = lines.join("\n") + "\n";
        assert_fixture_is_current("fuzz/registry/ops.txt", &listing);
    }
}
