//! `Graph.python_code`: the Python source of `forward`, generated exactly as
//! torch.fx's `CodeGen` writes it (operators as operators, values freed after
//! their last use, globals for everything outside `torch`).

use std::collections::HashMap;

use indexmap::IndexMap;
use rustpython_vm::builtins::{PyComplex, PyDict, PyList, PySlice, PyStr, PyTuple, PyTupleRef};
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef, PyResult, VirtualMachine};

use super::format::{qualified_name, type_repr as plain_type_repr};
use super::graph::{PyGraph, reserved};
use super::namespace::{CUSTOM_BUILTINS, Namespace};
use super::node::{NodeRef, Op, PyNode, id};
use fxvm_vm::binding;
use fxvm_vm::text::Utf8;

/// `operator` functions printed as Python operators.
fn magic_method(name: &str) -> Option<&'static str> {
    Some(match name {
        "add" => "{} + {}",
        "sub" => "{} - {}",
        "mul" => "{} * {}",
        "floordiv" => "{} // {}",
        "truediv" | "div" => "{} / {}",
        "mod" => "{} % {}",
        "pow" => "{} ** {}",
        "lshift" => "{} << {}",
        "rshift" => "{} >> {}",
        "and_" => "{} & {}",
        "or_" => "{} | {}",
        "xor" => "{} ^ {}",
        "getitem" => "{}[{}]",
        "matmul" => "{} @ {}",
        "eq" => "{} == {}",
        "ne" => "{} != {}",
        "lt" => "{} < {}",
        "gt" => "{} > {}",
        "le" => "{} <= {}",
        "ge" => "{} >= {}",
        "pos" => "+{}",
        "neg" => "-{}",
        "invert" => "~{}",
        _ => return None,
    })
}

/// In-place `operator` functions, printed as augmented assignments.
fn inplace_method(name: &str) -> Option<&'static str> {
    Some(match name {
        "iadd" => "{} += {}",
        "iand" => "{} &= {}",
        "ifloordiv" => "{} //= {}",
        "ilshift" => "{} <<= {}",
        "imod" => "{} %= {}",
        "imul" => "{} *= {}",
        "imatmul" => "{} @= {}",
        "ior" => "{} |= {}",
        "ipow" => "{} **= {}",
        "irshift" => "{} >>= {}",
        "isub" => "{} -= {}",
        "itruediv" => "{} /= {}",
        "ixor" => "{} ^= {}",
        "setitem" => "{}[{}] = {}",
        _ => return None,
    })
}

/// Fills the `{}` holes of a template in order.
fn fill(template: &str, parts: &[String]) -> String {
    let mut out =
        String::with_capacity(template.len() + parts.iter().map(String::len).sum::<usize>());
    let mut parts = parts.iter();
    let mut rest = template;
    while let Some(i) = rest.find("{}") {
        out.push_str(&rest[..i]);
        out.push_str(parts.next().map(String::as_str).unwrap_or(""));
        rest = &rest[i + 2..];
    }
    out.push_str(rest);
    out
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// `_format_target`: `self.layers.0` → `getattr(self.layers, "0")`.
fn format_target(base: &str, target: &str) -> String {
    let mut r = base.to_owned();
    for e in target.split('.') {
        r = if is_identifier(e) {
            format!("{r}.{e}")
        } else {
            format!("getattr({r}, \"{e}\")")
        };
    }
    r
}

/// `_is_from_torch`: objects the code can name as `torch.…` without a global.
fn is_from_torch(obj: &PyObject, g: &Globals, vm: &VirtualMachine) -> PyResult<bool> {
    if let Some(module) = vm.get_attribute_opt(obj.to_owned(), "__module__")?
        && let Some(module) = module.downcast_ref::<PyStr>()
    {
        let parts: Vec<&str> = module.text(vm)?.split('.').collect();
        let n = parts.len();
        return Ok(parts[0] == "torch"
            && parts.iter().all(|p| !p.is_empty())
            && !parts
                .iter()
                .enumerate()
                .any(|(i, p)| i > 0 && i + 1 < n && (*p == "_dynamo" || *p == "_inductor")));
    }
    if let Some(name) = vm.get_attribute_opt(obj.to_owned(), "__name__")?
        && let Some(name) = name.downcast_ref::<PyStr>()
        && name.text(vm)? != "torch"
    {
        for guess in [&g.torch, &g.functional] {
            if let Some(v) = super::attr(guess, name.text(vm)?, vm)?
                && v.is(obj)
            {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The globals of the generated module and the namespace their names share
/// with the nodes' names.
struct Globals {
    torch: PyObjectRef,
    functional: PyObjectRef,
    device: PyObjectRef,
    /// Objects names may not shadow unless they are that object.
    /// In `CUSTOM_BUILTINS` order, the order they enter every module's globals.
    custom: Vec<(&'static str, PyObjectRef)>,
    map: IndexMap<String, PyObjectRef>,
}

impl Globals {
    fn load(vm: &VirtualMachine) -> PyResult<Globals> {
        // From sys.modules: each generated module needs them, and the
        // import machinery costs more than the rest of a small graph's code.
        let torch = binding::module("torch", vm)?;
        let functional = binding::module("torch.nn.functional", vm)?;
        let math = binding::module("math", vm)?;
        let device = torch.get_attr("device", vm)?;
        let fx_pytree = binding::module("torch.fx._pytree", vm)?;
        let pytree = binding::module("torch.utils._pytree", vm)?;
        let objects = [
            math.get_attr("inf", vm)?,
            math.get_attr("nan", vm)?,
            vm.ctx.types.none_type.to_owned().into(),
            torch.clone(),
            device.clone(),
            fx_pytree,
            pytree,
        ];
        let custom = CUSTOM_BUILTINS.iter().copied().zip(objects).collect();
        Ok(Globals {
            torch,
            functional,
            device,
            custom,
            map: IndexMap::new(),
        })
    }
}

struct Gen<'a> {
    vm: &'a VirtualMachine,
    /// The names the generated code uses, for nodes and globals alike
    /// (taken in the order code mentions them, as torch.fx does).
    ns: Namespace,
    globals: Globals,
    /// Per call target: how code names it (cached: one lookup per target).
    targets: HashMap<usize, Target>,
}

#[derive(Clone)]
enum Target {
    Magic(&'static str),
    Inplace(&'static str),
    Named(String),
}

impl Gen<'_> {
    fn node_name(&mut self, n: &Py<PyNode>) -> String {
        let reserved = reserved(self.vm);
        self.ns
            .create_name(&n.name(), Some(id(n.as_object())), |x| reserved.contains(x))
    }

    /// `add_global`: the name code uses for `obj`, registering it as a global.
    fn add_global(&mut self, hint: &str, obj: &PyObjectRef) -> PyResult<String> {
        let vm = self.vm;
        if is_from_torch(obj, &self.globals, vm)? && !obj.is(&self.globals.device) {
            return qualified_name(obj, vm);
        }
        let reserved = reserved(vm);
        let custom = &self.globals.custom;
        let is_that_object = |name: &str| -> bool {
            vm.builtins
                .dict()
                .get_item_opt(name, vm)
                .ok()
                .flatten()
                .is_some_and(|b| b.is(obj))
                || custom.iter().any(|(n, c)| *n == name && c.is(obj))
        };
        let name = self.ns.create_name(hint, Some(id(obj)), |n| {
            reserved.contains(n) && !is_that_object(n)
        });
        if let Some(existing) = self.globals.map.get(&name) {
            if !existing.is(obj) && !vm.bool_eq(existing, obj)? {
                return Err(super::assertion(
                    vm,
                    format!("Global name {name} already assigned to different object"),
                ));
            }
            return Ok(name);
        }
        self.globals.map.insert(name.clone(), obj.clone());
        Ok(name)
    }

    /// The codegen `type_repr`: annotations, registering the types they name.
    fn type_repr(&mut self, o: &PyObjectRef) -> PyResult<String> {
        let vm = self.vm;
        if let Some(t) = o.downcast_ref::<PyTuple>()
            && t.is_empty()
        {
            return Ok("()".to_owned());
        }
        let typename = plain_type_repr(o, vm)?;
        if let Some(origin) = vm.get_attribute_opt(o.clone(), "__origin__")?
            && !vm.is_none(&origin)
        {
            let typing = binding::module("typing", vm)?;
            let origin = match origin
                .downcast_ref::<rustpython_vm::builtins::PyType>()
                .map(|t| t.name().to_string())
            {
                Some(n)
                    if ["list", "dict", "set", "frozenset", "tuple"].contains(&n.as_str())
                        && o.class().name().to_string() == "_GenericAlias" =>
                {
                    let alias = match n.as_str() {
                        "list" => "List",
                        "dict" => "Dict",
                        "set" => "Set",
                        "frozenset" => "FrozenSet",
                        _ => "Tuple",
                    };
                    typing.get_attr(alias, vm)?
                }
                _ => origin,
            };
            let origin_name = plain_type_repr(&origin, vm)?;
            let origin_name = self.add_global(&origin_name, &origin)?;
            let args: Vec<PyObjectRef> = vm
                .call_method(&typing, "get_args", (o.clone(),))?
                .try_to_value(vm)?;
            if args.is_empty() {
                return Ok(origin_name);
            }
            let parts = args
                .iter()
                .map(|a| self.type_repr(a))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(format!("{origin_name}[{}]", parts.join(",")));
        }
        self.add_global(&typename, o)
    }

    /// `_get_repr`: an argument as a Python expression.
    fn repr(&mut self, arg: &PyObjectRef) -> PyResult<String> {
        let vm = self.vm;
        if let Some(n) = arg.downcast_ref::<PyNode>() {
            return Ok(self.node_name(n));
        }
        let cls = arg.class();
        if cls.is(vm.ctx.types.int_type)
            || cls.is(vm.ctx.types.float_type)
            || cls.is(vm.ctx.types.str_type)
            || cls.is(vm.ctx.types.bool_type)
            || vm.is_none(arg)
        {
            return Ok(arg.repr(vm)?.text(vm)?.to_owned());
        }
        if let Some(t) = arg.downcast_ref::<PyTuple>() {
            if !cls.is(vm.ctx.types.tuple_type)
                && cls.get_attr(vm.ctx.intern_str("_fields")).is_some()
            {
                let ty: PyObjectRef = cls.to_owned().into();
                let qualified = qualified_name(&ty, vm)?;
                let name = self.add_global(&qualified, &ty)?;
                let plain = vm.ctx.new_tuple(t.as_slice().to_vec());
                return Ok(format!("{name}{}", plain.as_object().repr(vm)?.text(vm)?));
            }
            let parts = t
                .iter()
                .map(|a| self.repr(a))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(if parts.len() == 1 {
                format!("({},)", parts[0])
            } else {
                format!("({})", parts.join(", "))
            });
        }
        let enum_class = binding::module("enum", vm)?.get_attr("Enum", vm)?;
        if arg.is_instance(&enum_class, vm)? {
            let ty: PyObjectRef = cls.to_owned().into();
            let name = self.add_global(&cls.name(), &ty)?;
            return Ok(format!(
                "{name}.{}",
                arg.get_attr("name", vm)?.str(vm)?.text(vm)?
            ));
        }
        if let Some(c) = arg.downcast_ref::<PyComplex>() {
            let v = c.to_complex();
            if v.re == 0.0 || v.im == 0.0 || !v.re.is_finite() || !v.im.is_finite() {
                let re = self.repr(&vm.ctx.new_float(v.re).into())?;
                let im = self.repr(&vm.ctx.new_float(v.im).into())?;
                return Ok(format!("complex({re}, {im})"));
            }
            return Ok(arg.repr(vm)?.text(vm)?.to_owned());
        }
        let tensor = self.globals.torch.get_attr("Tensor", vm)?;
        if arg.is_instance(&tensor, vm)? {
            let size: Vec<PyObjectRef> = vm.call_method(arg, "size", ())?.try_to_value(vm)?;
            let size = size
                .iter()
                .map(|s| Ok(s.repr(vm)?.text(vm)?.to_owned()))
                .collect::<PyResult<Vec<_>>>()?;
            let dtype = arg.get_attr("dtype", vm)?.str(vm)?;
            let dtype = dtype
                .text(vm)?
                .rsplit('.')
                .next()
                .unwrap_or_default()
                .to_owned();
            return Ok(format!(
                "torch.Tensor(size=[{}], dtype={dtype})",
                size.join(", ")
            ));
        }
        if let Some(l) = arg.downcast_ref::<PyList>() {
            let items = l.borrow_vec().to_vec();
            let parts = items
                .iter()
                .map(|a| self.repr(a))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(format!("[{}]", parts.join(", ")));
        }
        if let Some(s) = arg.downcast_ref::<PySlice>() {
            let none = vm.ctx.none();
            let start = self.repr(s.start.as_ref().unwrap_or(&none))?;
            let stop = self.repr(&s.stop)?;
            let step = self.repr(s.step.as_ref().unwrap_or(&none))?;
            return Ok(format!("slice({start}, {stop}, {step})"));
        }
        if let Some(d) = arg.downcast_ref::<PyDict>() {
            // As Python prints a dict, with the values' nodes under their
            // names in this code.
            let parts = d
                .items_vec()
                .into_iter()
                .map(|(k, v)| Ok(format!("{}: {}", k.repr(vm)?.text(vm)?, self.repr(&v)?)))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(format!("{{{}}}", parts.join(", ")));
        }
        Ok(arg.repr(vm)?.text(vm)?.to_owned())
    }

    fn format_args(&mut self, args: &[PyObjectRef], kwargs: &PyObject) -> PyResult<String> {
        let mut parts = args
            .iter()
            .map(|a| self.repr(a))
            .collect::<PyResult<Vec<_>>>()?;
        if let Some(d) = kwargs.downcast_ref::<PyDict>() {
            for (k, v) in d.items_vec() {
                parts.push(format!(
                    "{} = {}",
                    k.str(self.vm)?.text(self.vm)?,
                    self.repr(&v)?
                ));
            }
        }
        Ok(parts.join(", "))
    }

    fn target_kind(&mut self, target: &PyObjectRef) -> PyResult<Target> {
        if let Some(t) = self.targets.get(&id(target)) {
            return Ok(t.clone());
        }
        let vm = self.vm;
        let module = vm
            .get_attribute_opt(target.clone(), "__module__")?
            .and_then(|m| m.downcast::<PyStr>().ok());
        let name = vm
            .get_attribute_opt(target.clone(), "__name__")?
            .and_then(|m| m.downcast::<PyStr>().ok());
        let kind = match (
            module.as_ref().map(|m| m.text(vm)).transpose()?,
            name.as_ref().map(|n| n.text(vm)).transpose()?,
        ) {
            (Some("_operator"), Some(n)) if magic_method(n).is_some() => {
                Target::Magic(magic_method(n).expect("checked"))
            }
            (Some("_operator"), Some(n)) if inplace_method(n).is_some() => {
                Target::Inplace(inplace_method(n).expect("checked"))
            }
            _ => {
                let qualified = qualified_name(target, vm)?;
                Target::Named(self.add_global(&qualified, target)?)
            }
        };
        self.targets.insert(id(target), kind.clone());
        Ok(kind)
    }

    /// The annotation `: "f32[2, 3]"` that verbose code shows for known shapes.
    fn meta_annotation(&mut self, node: &Py<PyNode>) -> PyResult<Option<String>> {
        let vm = self.vm;
        let Some(val) = node.value_meta(vm) else {
            return Ok(None);
        };
        Ok(super::format::value_summary(&val, vm)?.map(|s| format!(": \"{s}\"")))
    }
}

/// The one-line summary verbose code shows above a node: where it came from.
fn stack_summary(node: &Py<PyNode>, vm: &VirtualMachine) -> String {
    let trace = node
        .meta_get("stack_trace", vm)
        .filter(|t| !vm.is_none(t))
        .and_then(|t| t.downcast::<PyStr>().ok());
    let Some(trace) = trace else {
        return "No stacktrace found for following nodes".to_owned();
    };
    let text = trace.lossy();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate().rev() {
        let l = line.trim_start();
        if let Some(rest) = l.strip_prefix("File \"")
            && let Some((file, rest)) = rest.split_once("\", line ")
            && let Some((lineno, name)) = rest.split_once(", in ")
        {
            let code = lines.get(i + 1).map(|c| c.trim()).unwrap_or("");
            return format!("File: {file}:{lineno} in {name}, code: {code}");
        }
    }
    "No stacktrace found for following nodes".to_owned()
}

/// torch.fx's `_PyTreeCodeGen`: `forward` takes the original arguments and
/// flattens them itself; outputs are rebuilt when there is an output spec.
pub(crate) struct PyTree {
    pub(crate) orig_args: Vec<String>,
    pub(crate) out_spec: bool,
}

/// Generates `forward`: returns `(src, globals, lineno_map, prologue_start)`.
pub(crate) fn python_code(
    graph: &Py<PyGraph>,
    root_module: &str,
    verbose: bool,
    pytree: Option<&PyTree>,
    vm: &VirtualMachine,
) -> PyResult<PyTupleRef> {
    let nodes = PyGraph::node_vec(graph, vm);
    generate(&nodes, root_module, verbose, pytree, vm)
}

fn generate(
    nodes: &[NodeRef],
    root_module: &str,
    verbose: bool,
    pytree: Option<&PyTree>,
    vm: &VirtualMachine,
) -> PyResult<PyTupleRef> {
    let mut g = Gen {
        vm,
        ns: Namespace::default(),
        globals: Globals::load(vm)?,
        targets: HashMap::new(),
    };
    // The custom builtins take their own names in the empty namespace
    // (what `add_global` gives them: none is "from torch" but the excluded
    // `torch.device`), without its per-object lookups.
    for (name, obj) in g.globals.custom.clone() {
        let name = g.ns.create_name(name, Some(id(&obj)), |_| false);
        g.globals.map.insert(name, obj);
    }

    // The last use of each value, found walking backwards: values are freed there.
    let mut seen = std::collections::HashSet::new();
    let mut last_uses: HashMap<usize, Vec<NodeRef>> = HashMap::new();
    for node in nodes.iter().rev() {
        for input in node.inputs() {
            if seen.insert(id(input.as_object())) {
                last_uses
                    .entry(id(node.as_object()))
                    .or_default()
                    .push(input);
            }
        }
    }

    let mut free_vars: Vec<String> = vec![];
    let mut body: Vec<String> = vec![];
    let mut wrapped: IndexMap<String, ()> = IndexMap::new();
    let mut return_annotation = String::new();
    let mut prev_summary = None;
    for (i, node) in nodes.iter().enumerate() {
        let op = node.op();
        if verbose && op != Op::Placeholder && op != Op::Output {
            let summary = format!("\n# {}\n", stack_summary(node, vm));
            if prev_summary.as_ref() != Some(&summary) {
                body.push(summary.clone());
                prev_summary = Some(summary);
            }
        }
        body.push(format!("# COUNTER: {i}\n"));
        let mut annotation = match node.ty() {
            Some(t) => format!(" : {}", g.type_repr(&t)?),
            None => String::new(),
        };
        if verbose && let Some(a) = g.meta_annotation(node)? {
            annotation = a;
        }
        let target = node.target();
        let args = node.args_tuple();
        let kwargs = node.kwargs_dict();
        match op {
            Op::Placeholder => {
                let target = target.str(vm)?.text(vm)?.to_owned();
                let default = match args.as_slice().first() {
                    Some(d) => format!(" = {}", g.repr(d)?),
                    None => String::new(),
                };
                free_vars.push(format!("{target}{annotation}{default}"));
                let raw = target.replace('*', "");
                let name = g.node_name(node);
                if raw != name {
                    body.push(format!("{name} = {raw}\n"));
                }
                continue;
            }
            Op::CallMethod => {
                let method = target.str(vm)?.text(vm)?.to_owned();
                let (first, rest) = args
                    .as_slice()
                    .split_first()
                    .ok_or_else(|| vm.new_index_error("tuple index out of range"))?;
                let recv = g.repr(first)?;
                let call = g.format_args(rest, kwargs.as_object())?;
                let name = g.node_name(node);
                body.push(format!(
                    "{name}{annotation} = {}({call})",
                    format_target(&recv, &method)
                ));
            }
            Op::CallFunction => match g.target_kind(&target)? {
                Target::Magic(t) => {
                    let parts = args
                        .iter()
                        .map(|a| g.repr(a))
                        .collect::<PyResult<Vec<_>>>()?;
                    let name = g.node_name(node);
                    body.push(format!("{name}{annotation} = {}", fill(t, &parts)));
                }
                Target::Inplace(t) => {
                    let parts = args
                        .iter()
                        .map(|a| g.repr(a))
                        .collect::<PyResult<Vec<_>>>()?;
                    let name = g.node_name(node);
                    body.push(format!(
                        "{};  {name}{annotation} = {}",
                        fill(t, &parts),
                        parts.first().cloned().unwrap_or_default()
                    ));
                }
                Target::Named(global) => {
                    let a = args.as_slice();
                    if global == "getattr"
                        && a.len() == 2
                        && let Some(attr) = a[1].downcast_ref::<PyStr>()
                        && is_identifier(attr.text(vm)?)
                    {
                        let recv = g.repr(&a[0])?;
                        let name = g.node_name(node);
                        body.push(format!(
                            "{name}{annotation} = {}",
                            format_target(&recv, attr.text(vm)?)
                        ));
                    } else {
                        let call = g.format_args(a, kwargs.as_object())?;
                        let name = g.node_name(node);
                        body.push(format!("{name}{annotation} = {global}({call})"));
                        if node
                            .meta_get("is_wrapped", vm)
                            .is_some_and(|w| w.try_to_bool(vm).unwrap_or(false))
                        {
                            wrapped.insert(global, ());
                        }
                    }
                }
            },
            Op::CallModule => {
                let module = target.str(vm)?.text(vm)?.to_owned();
                let call = g.format_args(args.as_slice(), kwargs.as_object())?;
                let name = g.node_name(node);
                body.push(format!(
                    "{name}{annotation} = {}({call})",
                    format_target(root_module, &module)
                ));
            }
            Op::GetAttr => {
                let attr = target.str(vm)?.text(vm)?.to_owned();
                let name = g.node_name(node);
                body.push(format!(
                    "{name}{annotation} = {}",
                    format_target(root_module, &attr)
                ));
            }
            Op::Output => {
                if let Some(t) = node.ty() {
                    return_annotation = format!(" -> {}", g.type_repr(&t)?);
                }
                let result = args
                    .as_slice()
                    .first()
                    .cloned()
                    .unwrap_or_else(|| vm.ctx.none());
                let result = g.repr(&result)?;
                body.push(match pytree {
                    Some(p) if p.out_spec => {
                        format!("return pytree.tree_unflatten({result}, self._out_spec)")
                    }
                    _ => format!("return {result}"),
                });
                body.push("\n".to_owned());
                continue;
            }
            Op::Root => continue,
        }
        // Free the values whose last use this was.
        let mut dead: Vec<NodeRef> = last_uses.remove(&id(node.as_object())).unwrap_or_default();
        if node.users_len() == 0 {
            dead.push(node.clone());
        }
        if dead.is_empty() {
            body.push("\n".to_owned());
        } else {
            let names: Vec<String> = dead.iter().map(|n| g.node_name(n)).collect();
            body.push(format!(";  {} = None\n", names.join(" = ")));
        }
    }
    if body.is_empty() {
        body.push("pass\n".to_owned());
    }
    let wrap_stmts = if wrapped.is_empty() {
        String::new()
    } else {
        let wrap = binding::module("torch.fx", vm)?.get_attr("wrap", vm)?;
        let wrap_name = g.add_global("wrap", &wrap)?;
        wrapped
            .keys()
            .map(|name| format!("{wrap_name}(\"{name}\")"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let prologue = match pytree {
        Some(p) => {
            // The signature is the original one; placeholders are bound by flattening.
            let mut fn_args = p.orig_args.clone();
            if fn_args.first().is_some_and(|a| a == "self") {
                free_vars.insert(0, "self".to_owned());
            }
            let call_args = fn_args.join(", ");
            if fn_args.first().is_none_or(|v| v != "self") {
                fn_args.insert(0, "self".to_owned());
            }
            let mut def = format!("def forward({}){return_annotation}:", fn_args.join(", "));
            if !free_vars.is_empty() {
                let names: Vec<&str> = free_vars
                    .iter()
                    .map(|v| {
                        v.split(':')
                            .next()
                            .unwrap_or(v)
                            .split('#')
                            .next()
                            .unwrap_or(v)
                    })
                    .collect();
                def.push_str(&format!(
                    "\n    {}, = fx_pytree.tree_flatten_spec([{call_args}], self._in_spec)",
                    names.join(", ")
                ));
            }
            def
        }
        None => {
            if free_vars.first().is_none_or(|v| v != "self") {
                free_vars.insert(0, "self".to_owned());
            }
            format!("def forward({}){return_annotation}:", free_vars.join(", "))
        }
    };

    let lineno_map = vm.ctx.new_dict();
    let prologue_len = prologue.matches('\n').count() + 1;
    let joined = body.concat();
    let mut lines: Vec<&str> = vec![];
    let mut cur: Option<usize> = None;
    for line in joined.split('\n') {
        if let Some(at) = line.find("# COUNTER: ")
            && let digits = line[at + 11..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
            && !digits.is_empty()
        {
            cur = digits.parse().ok();
            continue;
        }
        let value = match cur {
            Some(c) => vm.ctx.new_int(c).into(),
            None => vm.ctx.none(),
        };
        lineno_map.set_item(
            vm.ctx.new_int(lines.len() + prologue_len).as_object(),
            value,
            vm,
        )?;
        lines.push(line);
    }
    let code = lines.join("\n");
    let code = code.trim_start_matches('\n');
    let code: Vec<String> = code.split('\n').map(|l| format!("    {l}")).collect();
    let src = format!("\n{wrap_stmts}\n\n{prologue}\n{}", code.join("\n"));
    let prologue_start = wrap_stmts.matches('\n').count() + 4;

    let globals = vm.ctx.new_dict();
    for (k, v) in &g.globals.map {
        globals.set_item(k.as_str(), v.clone(), vm)?;
    }
    Ok(vm.ctx.new_tuple(vec![
        vm.ctx.new_str(src).into(),
        globals.into(),
        lineno_map.into(),
        vm.ctx.new_int(prologue_start).into(),
    ]))
}
