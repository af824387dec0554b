//! Op schemas in PyTorch's declaration syntax
//! (`add(Tensor input, Tensor|Scalar other, *, Scalar alpha=1)`), parsed once
//! when the registry is built. Unions (`str|int[]`) stand for PyTorch's
//! overloads; `Tensor(a!)` marks the tensor an in-place op writes.

use crate::value::Value;

/// A parameter type, as the declarations spell it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `Tensor`
    Tensor,
    /// `Tensor[]`: a list or tuple of tensors.
    TensorList,
    /// `int`
    Int,
    /// `int[]`: a sequence of ints, or one int standing for a one-item list.
    IntList,
    /// `int?[]`: a sequence whose items may be `None` (adaptive output sizes).
    OptIntList,
    /// `float`
    Float,
    /// `float[]`: a sequence of numbers, or one number.
    FloatList,
    /// `Scalar`: any Python number (or a one-element tensor).
    Scalar,
    /// `bool`
    Bool,
    /// `ScalarType`: a `torch.dtype` (or `int`/`float`/`bool` standing for one).
    DType,
    /// `str`
    Str,
    /// `Device`: a device name or `torch.device`.
    Device,
    /// `Data`: what `torch.tensor` takes (numbers, nested sequences, tensors).
    Data,
    /// `Generator`: a `torch.Generator`; `None` means the default one.
    Generator,
    /// `MemoryFormat`: a `torch.memory_format` (`torch.channels_last` …).
    MemoryFormat,
    /// `A|B`: the first alternative the value converts to.
    Union(Vec<Ty>),
}

impl Ty {
    fn parse(text: &str, decl: &str) -> Ty {
        if text.contains('|') {
            return Ty::Union(text.split('|').map(|t| Ty::parse(t, decl)).collect());
        }
        match text {
            "Tensor" | "Tensor(a!)" => Ty::Tensor,
            "Tensor[]" => Ty::TensorList,
            "int" => Ty::Int,
            "int[]" => Ty::IntList,
            "int?[]" => Ty::OptIntList,
            "float" => Ty::Float,
            "float[]" => Ty::FloatList,
            "Scalar" => Ty::Scalar,
            "bool" => Ty::Bool,
            "ScalarType" => Ty::DType,
            "str" => Ty::Str,
            "Device" => Ty::Device,
            "Data" => Ty::Data,
            "Generator" => Ty::Generator,
            "MemoryFormat" => Ty::MemoryFormat,
            other => panic!("unknown type {other} in {decl}"),
        }
    }

    /// The Python type TorchScript signatures give this type (a dtype is an
    /// `int` there, as in PyTorch's own lookups).
    /// Whether a parameter of this type may hold a tensor (`Tensor`,
    /// `Tensor|Scalar`): a number there is an input without a gradient.
    pub fn takes_tensor(&self) -> bool {
        match self {
            Ty::Tensor => true,
            Ty::Union(alts) => alts.contains(&Ty::Tensor),
            _ => false,
        }
    }

    pub fn python_annotation(&self) -> &'static str {
        match self {
            Ty::Tensor => "Tensor",
            Ty::TensorList => "List[Tensor]",
            Ty::Int | Ty::DType => "int",
            Ty::IntList => "List[int]",
            Ty::OptIntList => "List[Optional[int]]",
            Ty::Float => "float",
            Ty::FloatList => "List[float]",
            Ty::Scalar => "Number",
            Ty::Bool => "bool",
            Ty::Str => "str",
            Ty::Device => "Device",
            Ty::Data | Ty::Union(_) => "Any",
            Ty::Generator => "Generator",
            Ty::MemoryFormat => "memory_format",
        }
    }

    /// How messages name the type (`tuple of ints`, `Tensor or Number`).
    pub fn describe(&self) -> String {
        match self {
            Ty::Tensor => "Tensor".into(),
            Ty::TensorList => "tuple of Tensors".into(),
            Ty::Int => "int".into(),
            Ty::IntList | Ty::OptIntList => "tuple of ints".into(),
            Ty::Float => "float".into(),
            Ty::FloatList => "tuple of floats".into(),
            Ty::Scalar => "Number".into(),
            Ty::Bool => "bool".into(),
            Ty::DType => "torch.dtype".into(),
            Ty::Str => "str".into(),
            Ty::Device => "torch.device".into(),
            Ty::Data => "data".into(),
            Ty::Generator => "torch.Generator".into(),
            Ty::MemoryFormat => "torch.memory_format".into(),
            Ty::Union(alts) => alts
                .iter()
                .map(Ty::describe)
                .collect::<Vec<_>>()
                .join(" or "),
        }
    }
}

/// A declared default: its text (what a Python-level signature shows, and
/// what `__torch_function__` receives) and its typed value (what kernels get).
#[derive(Clone, Debug)]
pub struct Default {
    pub text: &'static str,
    pub value: Value,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: &'static str,
    pub ty: Ty,
    /// `ty?`: `None` is a valid value.
    pub optional: bool,
    pub default: Option<Default>,
    pub kw_only: bool,
    /// `*name`: takes every remaining positional argument as a list.
    pub varargs: bool,
    /// `Tensor(a!)`: the op writes into this tensor and returns it.
    pub mutates: bool,
}

impl Param {
    /// The value a caller that omits this parameter gets; `None` when the
    /// parameter is required.
    pub fn default_value(&self) -> Option<Value> {
        match &self.default {
            Some(d) => Some(d.value.clone()),
            None if self.optional => Some(Value::None),
            None => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Schema {
    pub name: &'static str,
    /// The declaration as the row spells it.
    pub decl: &'static str,
    pub params: Vec<Param>,
    /// The `int[]` parameter that may also take its ints as varargs
    /// (`view(2, 3)`): PyTorch allows it when that list is the one
    /// positional parameter besides `self`.
    pub int_varargs: Option<usize>,
    /// The Python return annotation (`Tensor`, `tuple[Tensor, Tensor]`) of
    /// ops PyTorch writes in Python; `inspect` cannot read it from a
    /// builtin's text signature, so torch.fx's type annotation asks for it.
    pub returns: Option<&'static str>,
    /// Argument combinations no PyTorch overload takes: the one declaration
    /// stands for several overloads (`sum(x, keepdim=True)` matches none of
    /// `sum`'s; `std` takes `unbiased` or `correction`, never both).
    pub refused: Vec<Refused>,
}

/// A call that gives every parameter of `given` and none of `missing`
/// matches no overload.
#[derive(Clone, Debug)]
pub struct Refused {
    pub given: Vec<usize>,
    pub missing: Vec<usize>,
}

impl Schema {
    /// Parses a declaration; the table is static, so a malformed one is a bug.
    pub fn parse(decl: &'static str) -> Schema {
        let full = decl;
        // `name(params) -> T`: the return annotation of the Python function
        // PyTorch writes for this op, when it writes one.
        let (decl, returns) = match decl.rsplit_once(") -> ") {
            Some((params, ret)) => (&decl[..params.len() + 1], Some(ret)),
            None => (decl, None),
        };
        let open = decl
            .find('(')
            .unwrap_or_else(|| panic!("bad signature {decl}"));
        let name = &decl[..open];
        let inner = decl[open + 1..]
            .strip_suffix(')')
            .unwrap_or_else(|| panic!("bad signature {decl}"));
        let mut params = Vec::new();
        let mut kw_only = false;
        for part in inner.split(", ").filter(|p| !p.is_empty()) {
            if part == "*" {
                kw_only = true;
                continue;
            }
            let (ty, rest) = part
                .split_once(' ')
                .unwrap_or_else(|| panic!("bad param {part} in {decl}"));
            let (pname, default) = match rest.split_once('=') {
                Some((n, d)) => (n, Some(d)),
                None => (rest, None),
            };
            let (pname, varargs) = match pname.strip_prefix('*') {
                Some(n) => (n, true),
                None => (pname, false),
            };
            let (ty_text, optional) = match ty.strip_suffix('?') {
                Some(t) => (t, true),
                None => (ty, false),
            };
            let ty_parsed = Ty::parse(ty_text, decl);
            let default = default.map(|text| Default {
                text,
                value: parse_default(text, &ty_parsed)
                    .unwrap_or_else(|| panic!("bad default {text} for {pname} in {decl}")),
            });
            params.push(Param {
                name: pname,
                ty: ty_parsed,
                optional,
                default,
                kw_only,
                varargs,
                mutates: ty_text == "Tensor(a!)",
            });
        }
        let positional: Vec<usize> = (0..params.len())
            .filter(|&i| !params[i].kw_only && (i != 0 || params[i].ty != Ty::Tensor))
            .collect();
        let int_varargs = match positional[..] {
            [i] if params[i].ty == Ty::IntList => Some(i),
            _ => None,
        };
        Schema {
            name,
            decl: full,
            params,
            int_varargs,
            returns,
            refused: Vec::new(),
        }
    }

    /// PyTorch's refusal of a combination no overload takes (see
    /// `refused`); `given(i)` says whether the caller passed parameter `i`.
    pub fn combination_error(&self, given: impl Fn(usize) -> bool) -> Option<String> {
        let r = self
            .refused
            .iter()
            .find(|r| r.given.iter().all(|&i| given(i)) && !r.missing.iter().any(|&i| given(i)))?;
        let names = |ids: &[usize]| {
            ids.iter()
                .map(|&i| self.params[i].name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let without = if r.missing.is_empty() {
            String::new()
        } else {
            format!(" without ({})", names(&r.missing))
        };
        Some(format!(
            "received an invalid combination of arguments - got ({}){without}",
            names(&r.given)
        ))
    }

    /// The parameters as a Python signature, `(input, dim=None, *, out=None)`
    /// (what `inspect.signature` shows for functions PyTorch writes in Python).
    pub fn python_signature(&self) -> String {
        self.signature_text(None)
    }

    /// The typed Python signatures of the overloads a TorchScript-style
    /// schema lookup sees: one per alternative of each `A|B` parameter,
    /// annotated with `Tensor`, `Number`, `int`, `List[int]`, `Optional[...]`
    /// (names a caller resolves), as `torch.fx.operator_schemas` matches them.
    pub fn overload_signatures(&self) -> Vec<String> {
        let mut variants: Vec<Vec<&Ty>> = vec![vec![]];
        for p in &self.params {
            let alts: Vec<&Ty> = match &p.ty {
                Ty::Union(alts) => alts.iter().collect(),
                ty => vec![ty],
            };
            variants = variants
                .into_iter()
                .flat_map(|v| {
                    alts.iter().map(move |a| {
                        let mut v = v.clone();
                        v.push(*a);
                        v
                    })
                })
                .collect();
        }
        variants
            .iter()
            .map(|types| self.signature_text(Some(types)))
            .collect()
    }

    /// `(a, b=1, *, c=None)`, or with `types` (one per parameter) annotated:
    /// `(a: Tensor, b: int = 1, *, c: Optional[int] = None)`.
    fn signature_text(&self, types: Option<&[&Ty]>) -> String {
        let mut parts = Vec::with_capacity(self.params.len() + 1);
        let mut star = false;
        for (i, p) in self.params.iter().enumerate() {
            if p.kw_only && !star && !p.varargs {
                parts.push("*".to_owned());
                star = true;
            }
            star |= p.varargs;
            let mut part = format!("{}{}", if p.varargs { "*" } else { "" }, p.name);
            let equals = match types {
                Some(types) => {
                    let ann = types[i].python_annotation();
                    part.push_str(&if p.optional {
                        format!(": Optional[{ann}]")
                    } else {
                        format!(": {ann}")
                    });
                    " = "
                }
                None => "=",
            };
            if let Some(d) = &p.default {
                part.push_str(equals);
                part.push_str(d.text);
            }
            parts.push(part);
        }
        format!("({})", parts.join(", "))
    }

    pub fn position(&self, name: &str) -> Option<usize> {
        self.params.iter().position(|p| p.name == name)
    }

    /// The index of the tensor the op writes into, if it is in-place.
    pub fn mutated(&self) -> Option<usize> {
        self.params.iter().position(|p| p.mutates)
    }
}

/// A default's typed value, or `None` if the text does not fit the type.
fn parse_default(text: &str, ty: &Ty) -> Option<Value> {
    if text == "None" {
        return Some(Value::None);
    }
    let int = || text.parse::<i64>().ok();
    let float = || match text {
        "inf" => Some(f64::INFINITY),
        _ => text.parse::<f64>().ok(),
    };
    match ty {
        Ty::Int => int().map(Value::Int),
        Ty::IntList => match text {
            _ if text.starts_with('[') => text
                .strip_prefix('[')
                .and_then(|t| t.strip_suffix(']'))?
                .split(',')
                .filter(|i| !i.is_empty())
                .map(|i| i.parse().ok())
                .collect::<Option<Vec<i64>>>()
                .map(Value::Ints),
            _ => int().map(|i| Value::Ints(vec![i])),
        },
        Ty::Float => float().map(Value::Float),
        Ty::FloatList => float().map(|f| Value::Floats(vec![f])),
        Ty::Scalar => match text {
            "True" => Some(Value::Scalar(fxvm_tensor::Scalar::Bool(true))),
            "False" => Some(Value::Scalar(fxvm_tensor::Scalar::Bool(false))),
            _ => int()
                .map(fxvm_tensor::Scalar::Int)
                .or_else(|| float().map(fxvm_tensor::Scalar::Float))
                .map(Value::Scalar),
        },
        Ty::Bool => match text {
            "True" => Some(Value::Bool(true)),
            "False" => Some(Value::Bool(false)),
            _ => None,
        },
        Ty::Str => text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .map(|t| Value::Str(t.to_owned())),
        Ty::Union(alts) => alts.iter().find_map(|t| parse_default(text, t)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_types_defaults_and_keyword_only() {
        let s = Schema::parse(
            "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, str|int[] padding=0, *, float eps=1e-05)",
        );
        assert_eq!(s.name, "conv2d");
        let names: Vec<_> = s.params.iter().map(|p| p.name).collect();
        assert_eq!(
            names,
            ["input", "weight", "bias", "stride", "padding", "eps"]
        );
        assert!(s.params[2].optional);
        assert!(matches!(
            s.params[3].default_value(),
            Some(Value::Ints(v)) if v == [1]
        ));
        assert_eq!(s.params[4].ty, Ty::Union(vec![Ty::Str, Ty::IntList]));
        assert!(matches!(s.params[4].default_value(), Some(Value::Ints(v)) if v == [0]));
        assert_eq!(s.params[4].default.as_ref().unwrap().text, "0");
        assert!(s.params[5].kw_only && !s.params[4].kw_only);
        assert!(matches!(s.params[5].default_value(), Some(Value::Float(e)) if e == 1e-5));
        assert!(s.params[0].default_value().is_none());
        assert!(matches!(s.params[2].default_value(), Some(Value::None)));
    }

    #[test]
    fn int_lists_take_varargs_only_as_the_one_positional_parameter() {
        assert_eq!(
            Schema::parse("view(Tensor input, int[] size)").int_varargs,
            Some(1)
        );
        assert_eq!(
            Schema::parse("zeros(int[] size, *, ScalarType? dtype=None)").int_varargs,
            Some(0)
        );
        assert_eq!(
            Schema::parse("permute(Tensor input, int[] dims, int x)").int_varargs,
            None
        );
    }

    #[test]
    fn marks_the_mutated_tensor() {
        let s = Schema::parse("add_(Tensor(a!) input, Tensor|Scalar other)");
        assert_eq!(s.mutated(), Some(0));
        assert_eq!(s.params[0].ty, Ty::Tensor);
        assert_eq!(Schema::parse("add(Tensor input)").mutated(), None);
    }

    #[test]
    fn describes_unions_as_pytorch_names_overloads() {
        assert_eq!(
            Ty::parse("Tensor|Scalar", "").describe(),
            "Tensor or Number"
        );
    }

    #[test]
    fn spells_python_signatures_and_one_typed_signature_per_overload() {
        let s = Schema::parse("softmax(Tensor input, int? dim=None, *, ScalarType? dtype=None)");
        assert_eq!(s.python_signature(), "(input, dim=None, *, dtype=None)");
        let s = Schema::parse("add(Tensor input, Tensor|Scalar other, *, Scalar alpha=1)");
        assert_eq!(
            s.overload_signatures(),
            [
                "(input: Tensor, other: Tensor, *, alpha: Number = 1)",
                "(input: Tensor, other: Number, *, alpha: Number = 1)"
            ]
        );
        let s = Schema::parse("cat(Tensor[] tensors, int dim=0)");
        assert_eq!(
            s.overload_signatures(),
            ["(tensors: List[Tensor], dim: int = 0)"]
        );
        let s = Schema::parse("block_diag(Tensor *tensors, int[]? sizes=None)");
        assert_eq!(s.python_signature(), "(*tensors, sizes=None)");
    }

    #[test]
    fn reads_the_return_annotation_after_the_parameters() {
        let s = Schema::parse(
            "max_pool2d_with_indices(Tensor input, int[] kernel_size) -> tuple[Tensor, Tensor]",
        );
        assert_eq!(s.returns, Some("tuple[Tensor, Tensor]"));
        assert_eq!(s.params.len(), 2);
        assert_eq!(Schema::parse("relu(Tensor input)").returns, None);
    }

    #[test]
    #[should_panic(expected = "bad default")]
    fn refuses_a_default_of_the_wrong_type() {
        Schema::parse("f(Tensor input, bool flag=3)");
    }
}
