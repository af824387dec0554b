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
        let parts = split(decl).unwrap_or_else(|e| panic!("{e}"));
        let mut params = Vec::new();
        for p in parts.params {
            let (ty_text, optional) = match p.ty.strip_suffix('?') {
                Some(t) => (t, true),
                None => (p.ty, false),
            };
            let ty_parsed = Ty::parse(ty_text, decl);
            let default = p.default.map(|text| Default {
                text,
                value: parse_default(text, &ty_parsed)
                    .unwrap_or_else(|| panic!("bad default {text} for {} in {decl}", p.name)),
            });
            params.push(Param {
                name: p.name,
                ty: ty_parsed,
                optional,
                default,
                kw_only: p.kw_only,
                varargs: p.varargs,
                mutates: ty_text == "Tensor(a!)",
            });
        }
        let (name, returns) = (parts.name, parts.returns);
        let positional: Vec<usize> = (0..params.len())
            .filter(|&i| !params[i].kw_only && (i != 0 || params[i].ty != Ty::Tensor))
            .collect();
        let int_varargs = match positional[..] {
            [i] if params[i].ty == Ty::IntList => Some(i),
            _ => None,
        };
        Schema {
            name,
            decl,
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

/// A declaration split into its parts before any type is read — what the
/// registry's rows and `torch.library` schemas share:
/// `name[.overload](Type name[=default], *, ...)[ -> returns]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl<'a> {
    /// `name` or `name.overload`.
    pub name: &'a str,
    /// The text between the parentheses, as written.
    pub params_text: &'a str,
    pub params: Vec<DeclParam<'a>>,
    /// What follows `->`, when the declaration has it.
    pub returns: Option<&'a str>,
}

/// One parameter of a [`Decl`], its type still text (`Tensor(a!)`,
/// `int[]?`, `Tensor|Scalar`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclParam<'a> {
    pub ty: &'a str,
    pub name: &'a str,
    pub default: Option<&'a str>,
    /// After a `*`: keyword only.
    pub kw_only: bool,
    /// `*name`: takes the remaining positional arguments.
    pub varargs: bool,
}

/// Why a declaration does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaError {
    /// Not of the form `name(params) -> returns`.
    Form { decl: String },
    /// A parameter that is not `Type name[=default]`.
    Param { decl: String, param: String },
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaError::Form { decl } => write!(
                f,
                "Expected a schema of the form 'name(Type arg, ...) -> Return', got '{decl}'"
            ),
            SchemaError::Param { param, .. } => {
                write!(
                    f,
                    "Expected 'Type name' in a schema's arguments, got '{param}'"
                )
            }
        }
    }
}

impl std::error::Error for SchemaError {}

/// Splits a declaration into its parts (see [`Decl`]). Parameters are
/// separated by the commas outside brackets (`int[2] size=[1, 1]` is one).
pub fn split(decl: &str) -> Result<Decl<'_>, SchemaError> {
    let text = decl.trim();
    let form = || SchemaError::Form {
        decl: text.to_owned(),
    };
    let open = text.find('(').filter(|&i| i > 0).ok_or_else(form)?;
    let mut depth = 0usize;
    let mut close = None;
    let mut cuts = vec![open];
    for (i, c) in text.char_indices().skip_while(|&(i, _)| i <= open) {
        match c {
            '(' | '[' => depth += 1,
            ')' if depth == 0 => {
                close = Some(i);
                break;
            }
            ')' | ']' => depth = depth.checked_sub(1).ok_or_else(form)?,
            ',' if depth == 0 => cuts.push(i),
            _ => {}
        }
    }
    let close = close.ok_or_else(form)?;
    cuts.push(close);
    let returns = match text[close + 1..].trim() {
        "" => None,
        rest => Some(rest.strip_prefix("->").ok_or_else(form)?.trim()),
    };
    let mut params = Vec::new();
    let mut kw_only = false;
    for w in cuts.windows(2) {
        let part = text[w[0] + 1..w[1]].trim();
        if part.is_empty() {
            continue;
        }
        if part == "*" {
            kw_only = true;
            continue;
        }
        let bad = || SchemaError::Param {
            decl: text.to_owned(),
            param: part.to_owned(),
        };
        let (head, default) = match part.split_once('=') {
            Some((h, d)) => (h.trim(), Some(d.trim())),
            None => (part, None),
        };
        let (ty, name) = head.rsplit_once(' ').ok_or_else(bad)?;
        let (ty, name) = (ty.trim(), name.trim());
        if ty.is_empty() || name.is_empty() {
            return Err(bad());
        }
        let (name, varargs) = match name.strip_prefix('*') {
            Some(n) => (n, true),
            None => (name, false),
        };
        params.push(DeclParam {
            ty,
            name,
            default,
            kw_only,
            varargs,
        });
    }
    Ok(Decl {
        name: text[..open].trim(),
        params_text: text[open + 1..close].trim(),
        params,
        returns,
    })
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
    fn splits_library_schemas_at_top_level_commas() {
        let d = split(" mylib::f.out(Tensor(a!) x, int[2] size=[1, 1], *, Tensor? w=None, float s=1.5) -> (Tensor, Tensor) ")
            .unwrap();
        assert_eq!(d.name, "mylib::f.out");
        assert_eq!(d.returns, Some("(Tensor, Tensor)"));
        assert_eq!(
            d.params_text,
            "Tensor(a!) x, int[2] size=[1, 1], *, Tensor? w=None, float s=1.5"
        );
        let p = |ty, name, default, kw_only| DeclParam {
            ty,
            name,
            default,
            kw_only,
            varargs: false,
        };
        assert_eq!(
            d.params,
            [
                p("Tensor(a!)", "x", None, false),
                p("int[2]", "size", Some("[1, 1]"), false),
                p("Tensor?", "w", Some("None"), true),
                p("float", "s", Some("1.5"), true),
            ]
        );
        let d = split("g(Tensor x)->Tensor").unwrap();
        assert_eq!((d.name, d.returns), ("g", Some("Tensor")));
        let d = split("cat(Tensor *tensors)").unwrap();
        assert!(d.params[0].varargs && d.returns.is_none());
        assert_eq!(split("h() -> ()").unwrap().params, []);
    }

    #[test]
    fn malformed_schemas_say_what_is_wrong() {
        for bad in [
            "f",
            "(Tensor x) -> Tensor",
            "f(Tensor x",
            "f(Tensor x) Tensor",
            "f(Tensor x]) -> T",
        ] {
            assert_eq!(
                split(bad).unwrap_err(),
                SchemaError::Form {
                    decl: bad.to_owned()
                },
                "{bad}"
            );
        }
        let e = split("f(Tensor) -> Tensor").unwrap_err();
        assert_eq!(
            e.to_string(),
            "Expected 'Type name' in a schema's arguments, got 'Tensor'"
        );
    }

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
