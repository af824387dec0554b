//! Typed values: what an op's parameters are bound to and what its kernel
//! returns. Bindings convert once from their own world (Python objects,
//! graph arguments, Rust values) into these; kernels read them through
//! [`FromArgs`] tuples whose types are checked against the schema when the
//! registry is built.

use fxvm_tensor::layout::MemoryFormat;
use fxvm_tensor::ops::elementwise::Arg;
use fxvm_tensor::random::Generator;
use fxvm_tensor::{DType, Scalar, Tensor, TensorError};

use crate::schema::{Schema, Ty};

#[derive(Clone, Debug)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Scalar(Scalar),
    Str(String),
    DType(DType),
    Device(String),
    Ints(Vec<i64>),
    OptInts(Vec<Option<i64>>),
    Floats(Vec<f64>),
    Tensor(Tensor),
    Tensors(Vec<Tensor>),
    Data(Data),
    Generator(Generator),
    MemoryFormat(MemoryFormat),
    /// A result tuple (`chunk`, `max_pool2d(return_indices=True)`).
    Tuple(Vec<Value>),
    /// A `torch.return_types.<name>` named tuple (`max(dim)`).
    ReturnType(&'static str, Vec<Value>),
    /// The object passed for parameter `i`, returned as itself (in-place
    /// ops, `to` without a change): identity matters to Python callers.
    Input(usize),
}

impl Value {
    /// The value's type as a message names it (`Tensor`, `int`, …).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Scalar(s) => match s {
                Scalar::Bool(_) => "bool",
                Scalar::Int(_) => "int",
                Scalar::Float(_) => "float",
            },
            Value::Str(_) => "str",
            Value::DType(_) => "torch.dtype",
            Value::Device(_) => "torch.device",
            Value::Ints(_) | Value::OptInts(_) | Value::Floats(_) => "list",
            Value::Tensor(_) => "Tensor",
            Value::Tensors(_) | Value::Tuple(_) | Value::ReturnType(..) => "tuple",
            Value::Data(_) => "data",
            Value::Generator(_) => "torch.Generator",
            Value::MemoryFormat(_) => "torch.memory_format",
            Value::Input(_) => "input",
        }
    }

    /// Whether this value is one a parameter of type `ty` holds (after a
    /// binding converted it): what Rust callers are checked against.
    pub fn fits(&self, ty: &Ty) -> bool {
        match (ty, self) {
            (Ty::Union(alts), v) => alts.iter().any(|t| v.fits(t)),
            (Ty::Tensor, Value::Tensor(_))
            | (Ty::TensorList, Value::Tensors(_))
            | (Ty::Int, Value::Int(_))
            | (Ty::IntList, Value::Ints(_))
            | (Ty::OptIntList, Value::OptInts(_))
            | (Ty::Float, Value::Float(_))
            | (Ty::FloatList, Value::Floats(_))
            | (Ty::Scalar, Value::Scalar(_))
            | (Ty::Bool, Value::Bool(_))
            | (Ty::DType, Value::DType(_))
            | (Ty::Str, Value::Str(_))
            | (Ty::Device, Value::Device(_))
            | (Ty::Data, Value::Data(_))
            | (Ty::Generator, Value::Generator(_))
            | (Ty::MemoryFormat, Value::MemoryFormat(_)) => true,
            _ => false,
        }
    }
}

/// What `torch.tensor` was given: an existing tensor, or numbers (flattened
/// row-major) with the shape of their nesting.
#[derive(Clone, Debug)]
pub enum Data {
    Tensor(Tensor),
    Values {
        values: Vec<Scalar>,
        shape: Vec<usize>,
        /// Positions (ascending) of ints past int64, held as their float values: taken
        /// by a floating dtype, refused by any other.
        wide: Vec<usize>,
    },
    /// An element that is neither a number nor a sequence (its type's
    /// name): refused with PyTorch's error for inferring a dtype, or for
    /// storing into the dtype asked for.
    Uninferable {
        type_name: String,
    },
}

impl Data {
    /// `torch.tensor(data)`: a copy of a tensor, or numbers in the dtype
    /// their kinds imply (bool < int < float) unless `dtype` says otherwise.
    pub fn into_tensor(self, dtype: Option<DType>) -> fxvm_tensor::Result<Tensor> {
        match self {
            Data::Tensor(t) => Ok(t.to_dtype(dtype.unwrap_or(t.dtype())).copy()),
            Data::Values {
                values,
                shape,
                wide,
            } => {
                let category = |(i, s): (usize, &Scalar)| {
                    if wide.binary_search(&i).is_ok() {
                        fxvm_tensor::dtype::Category::Int
                    } else {
                        s.category()
                    }
                };
                let inferred = values.iter().enumerate().map(category).max().map_or(
                    fxvm_tensor::dtype::default_float(),
                    fxvm_tensor::dtype::Category::default_dtype,
                );
                let dtype = dtype.unwrap_or(inferred);
                if !wide.is_empty() && !dtype.is_float() {
                    return Err(TensorError::value(
                        "tensor",
                        "Overflow when unpacking long long",
                    ));
                }
                Tensor::from_scalars(&values, &shape, dtype)
            }
            Data::Uninferable { type_name } => {
                let type_error = |message: String| TensorError::Other {
                    kind: fxvm_tensor::ErrorKind::Type,
                    message,
                };
                Err(match dtype {
                    // Inference meets it first; a string is its own case.
                    None if type_name == "str" => {
                        type_error("new(): invalid data type 'str'".to_owned())
                    }
                    None => TensorError::runtime(
                        "tensor",
                        format!("Could not infer dtype of {type_name}"),
                    ),
                    Some(d) if d.is_float() => {
                        type_error(format!("must be real number, not {type_name}"))
                    }
                    Some(_) => type_error(format!(
                        "'{type_name}' object cannot be interpreted as an integer"
                    )),
                })
            }
        }
    }
}

/// A device argument. Only the CPU exists; the name is kept for messages.
#[derive(Clone, Debug)]
pub struct Device(pub String);

/// One of two types, for union parameters (`str|int[] padding`).
#[derive(Clone, Debug)]
pub enum Or<A, B> {
    A(A),
    B(B),
}

/// A Rust type a kernel reads a parameter as.
pub trait FromValue: Sized {
    /// Whether every value a parameter declared `ty` (`ty?` when
    /// `optional`) can hold is one this type reads.
    fn accepts(ty: &Ty, optional: bool) -> bool;
    /// Whether `v` is this type's value (unions pick their side with it).
    fn is(v: &Value) -> bool;
    /// Reads the value; the registry checked the types, so a mismatch is a bug.
    fn from_value(v: Value) -> Self;
}

macro_rules! plain {
    ($($rust:ty, $ty:ident, $variant:ident;)*) => {$(
        impl FromValue for $rust {
            fn accepts(ty: &Ty, optional: bool) -> bool {
                !optional && *ty == Ty::$ty
            }
            fn is(v: &Value) -> bool {
                matches!(v, Value::$variant(_))
            }
            fn from_value(v: Value) -> Self {
                match v {
                    Value::$variant(x) => x,
                    other => unreachable!(concat!("expected ", stringify!($variant), ", got {:?}"), other),
                }
            }
        }
    )*};
}

plain! {
    Tensor, Tensor, Tensor;
    Vec<Tensor>, TensorList, Tensors;
    i64, Int, Int;
    Vec<i64>, IntList, Ints;
    Vec<Option<i64>>, OptIntList, OptInts;
    f64, Float, Float;
    Vec<f64>, FloatList, Floats;
    Scalar, Scalar, Scalar;
    bool, Bool, Bool;
    DType, DType, DType;
    String, Str, Str;
    Data, Data, Data;
}

/// `MemoryFormat? memory_format=None`: the given format, else the op's
/// default (PyTorch's `preserve_format` for `*_like` and `clone`).
impl FromValue for MemoryFormat {
    fn accepts(ty: &Ty, _optional: bool) -> bool {
        *ty == Ty::MemoryFormat
    }
    fn is(v: &Value) -> bool {
        matches!(v, Value::MemoryFormat(_) | Value::None)
    }
    fn from_value(v: Value) -> Self {
        match v {
            Value::MemoryFormat(f) => f,
            _ => MemoryFormat::Preserve,
        }
    }
}

impl FromValue for Device {
    fn accepts(ty: &Ty, _optional: bool) -> bool {
        *ty == Ty::Device
    }
    fn is(v: &Value) -> bool {
        matches!(v, Value::Device(_) | Value::None)
    }
    fn from_value(v: Value) -> Self {
        match v {
            Value::Device(d) => Device(d),
            _ => Device("cpu".into()),
        }
    }
}

/// `Generator? generator=None`: the given generator, else the default one.
impl FromValue for Generator {
    fn accepts(ty: &Ty, _optional: bool) -> bool {
        *ty == Ty::Generator
    }
    fn is(v: &Value) -> bool {
        matches!(v, Value::Generator(_) | Value::None)
    }
    fn from_value(v: Value) -> Self {
        match v {
            Value::Generator(g) => g,
            _ => Generator::default_cpu(),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn accepts(ty: &Ty, _optional: bool) -> bool {
        T::accepts(ty, false)
    }
    fn is(v: &Value) -> bool {
        matches!(v, Value::None) || T::is(v)
    }
    fn from_value(v: Value) -> Self {
        match v {
            Value::None => None,
            v => Some(T::from_value(v)),
        }
    }
}

impl<A: FromValue, B: FromValue> FromValue for Or<A, B> {
    fn accepts(ty: &Ty, optional: bool) -> bool {
        match ty {
            Ty::Union(alts) if !optional && alts.len() == 2 => {
                A::accepts(&alts[0], false) && B::accepts(&alts[1], false)
            }
            // `A|B|C` as `Or<A, Or<B, C>>`.
            Ty::Union(alts) if !optional && alts.len() > 2 => {
                A::accepts(&alts[0], false) && B::accepts(&Ty::Union(alts[1..].to_vec()), false)
            }
            _ => false,
        }
    }
    fn is(v: &Value) -> bool {
        A::is(v) || B::is(v)
    }
    fn from_value(v: Value) -> Self {
        if A::is(&v) {
            Or::A(A::from_value(v))
        } else {
            Or::B(B::from_value(v))
        }
    }
}

/// `Tensor|Scalar`: an elementwise operand.
impl FromValue for Arg {
    fn accepts(ty: &Ty, optional: bool) -> bool {
        !optional && *ty == Ty::Union(vec![Ty::Tensor, Ty::Scalar])
    }
    fn is(v: &Value) -> bool {
        matches!(v, Value::Tensor(_) | Value::Scalar(_))
    }
    fn from_value(v: Value) -> Self {
        match v {
            Value::Tensor(t) => Arg::Tensor(t),
            Value::Scalar(s) => Arg::Scalar(s),
            other => unreachable!("expected a tensor or a number, got {other:?}"),
        }
    }
}

/// A kernel's parameters, read from the bound values in schema order.
pub trait FromArgs: Sized {
    /// Why this tuple cannot read `schema`'s parameters, if it cannot.
    fn check(schema: &Schema) -> Result<(), String>;
    fn from_args(values: Vec<Value>) -> Self;
}

macro_rules! tuples {
    ($($n:literal: $($t:ident)*;)*) => {$(
        impl<$($t: FromValue),*> FromArgs for ($($t,)*) {
            fn check(schema: &Schema) -> Result<(), String> {
                let types: &[fn(&Ty, bool) -> bool] = &[$($t::accepts),*];
                if schema.params.len() != $n {
                    return Err(format!("{} parameters, {} kernel arguments", schema.params.len(), $n));
                }
                for (p, accepts) in schema.params.iter().zip(types) {
                    if !accepts(&p.ty, p.optional && p.default.as_ref().is_none_or(|d| d.text == "None")) {
                        return Err(format!("parameter {} ({:?}{}) has the wrong Rust type", p.name, p.ty, if p.optional { "?" } else { "" }));
                    }
                }
                Ok(())
            }
            #[allow(non_snake_case)]
            fn from_args(values: Vec<Value>) -> Self {
                let mut it = values.into_iter();
                $(let $t = $t::from_value(it.next().expect("checked arity"));)*
                ($($t,)*)
            }
        }
    )*};
}

tuples! {
    1: A;
    2: A B;
    3: A B C;
    4: A B C D;
    5: A B C D E;
    6: A B C D E F;
    7: A B C D E F G;
    8: A B C D E F G H;
    9: A B C D E F G H I;
    10: A B C D E F G H I J;
    11: A B C D E F G H I J K;
    12: A B C D E F G H I J K L;
    13: A B C D E F G H I J K L M;
    14: A B C D E F G H I J K L M N;
    15: A B C D E F G H I J K L M N O;
    16: A B C D E F G H I J K L M N O P;
    17: A B C D E F G H I J K L M N O P Q;
    18: A B C D E F G H I J K L M N O P Q R;
    19: A B C D E F G H I J K L M N O P Q R S;
    20: A B C D E F G H I J K L M N O P Q R S U;
    21: A B C D E F G H I J K L M N O P Q R S U V;
    22: A B C D E F G H I J K L M N O P Q R S U V W;
    23: A B C D E F G H I J K L M N O P Q R S U V W X;
}

/// An elementwise operand as the value a row is called with.
impl From<Arg> for Value {
    fn from(a: Arg) -> Value {
        match a {
            Arg::Tensor(t) => Value::Tensor(t),
            Arg::Scalar(s) => Value::Scalar(s),
        }
    }
}

/// A kernel's result as a value.
pub trait IntoValue {
    fn into_value(self) -> Value;
}

impl IntoValue for Value {
    fn into_value(self) -> Value {
        self
    }
}

impl IntoValue for Tensor {
    fn into_value(self) -> Value {
        Value::Tensor(self)
    }
}

impl IntoValue for Vec<Tensor> {
    fn into_value(self) -> Value {
        Value::Tensors(self)
    }
}

impl IntoValue for bool {
    fn into_value(self) -> Value {
        Value::Bool(self)
    }
}

impl IntoValue for () {
    fn into_value(self) -> Value {
        Value::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_are_checked_against_the_schema() {
        let s = Schema::parse("f(Tensor input, int? dim=None, bool keepdim=False)");
        assert!(<(Tensor, Option<i64>, bool)>::check(&s).is_ok());
        assert!(<(Tensor, i64, bool)>::check(&s).is_err());
        assert!(<(Tensor, Option<i64>)>::check(&s).is_err());
        let u = Schema::parse("g(Tensor input, Tensor|Scalar other, str|int[] padding=0)");
        assert!(<(Tensor, Arg, Or<String, Vec<i64>>)>::check(&u).is_ok());
        assert!(<(Tensor, Arg, Or<Vec<i64>, String>)>::check(&u).is_err());
    }

    #[test]
    fn unions_read_the_side_the_value_is() {
        let v: Or<String, Vec<i64>> = Or::from_value(Value::Ints(vec![1, 2]));
        assert!(matches!(v, Or::B(ref x) if *x == [1, 2]));
        let v: Or<String, Vec<i64>> = Or::from_value(Value::Str("same".into()));
        assert!(matches!(v, Or::A(ref s) if s == "same"));
        let o: Option<Or<i64, Tensor>> = FromValue::from_value(Value::None);
        assert!(o.is_none());
    }

    #[test]
    fn values_fit_their_declared_types() {
        let u = Ty::Union(vec![Ty::Tensor, Ty::Scalar]);
        assert!(Value::Scalar(Scalar::Int(1)).fits(&u));
        assert!(!Value::Int(1).fits(&u));
        assert!(Value::Ints(vec![]).fits(&Ty::IntList));
    }
}
