//! The text of graphs and nodes, as torch.fx prints them (`print(graph)`,
//! `Node.format_node`), and the qualified names of call targets.

use rustpython_vm::builtins::{PyDict, PyList, PyStr, PyTuple};
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef, PyResult, VirtualMachine};

use super::graph::PyGraph;
use super::node::{Op, PyNode};
use fxvm_vm::binding;
use fxvm_vm::text::Utf8;

fn attr_str(obj: &PyObject, name: &str, vm: &VirtualMachine) -> PyResult<Option<String>> {
    match super::attr(obj, name, vm)? {
        Some(v) if !vm.is_none(&v) => Ok(Some(v.str(vm)?.text(vm)?.to_owned())),
        _ => Ok(None),
    }
}

fn py_str(obj: &PyObject, vm: &VirtualMachine) -> PyResult<String> {
    Ok(obj.str(vm)?.text(vm)?.to_owned())
}

/// `_type_repr`: classes by module and qualified name, functions by name.
pub(crate) fn type_repr(obj: &PyObject, vm: &VirtualMachine) -> PyResult<String> {
    if obj
        .downcast_ref::<rustpython_vm::builtins::PyType>()
        .is_some()
        && obj.class().name().to_string() != "GenericAlias"
    {
        let module = attr_str(obj, "__module__", vm)?.unwrap_or_default();
        let qualname = attr_str(obj, "__qualname__", vm)?.unwrap_or_default();
        return Ok(if module == "builtins" {
            qualname
        } else {
            format!("{module}.{qualname}")
        });
    }
    if obj.is(&vm.ctx.ellipsis) {
        return Ok("...".to_owned());
    }
    if obj.class().is(vm.ctx.types.function_type) {
        return Ok(attr_str(obj, "__name__", vm)?.unwrap_or_default());
    }
    Ok(obj.repr(vm)?.text(vm)?.to_owned())
}

/// `_get_qualified_name`: how code names a callable (`torch.relu`, `math.sqrt`).
pub(crate) fn qualified_name(func: &PyObject, vm: &VirtualMachine) -> PyResult<String> {
    let name = attr_str(func, "__name__", vm)?.unwrap_or_default();
    if let Some(b) = super::attr(vm.builtins.as_object(), &name, vm)?
        && b.is(func)
    {
        return Ok(name);
    }
    let module = attr_str(func, "__module__", vm)?;
    let class = func.class().name().to_string();
    if class == "method_descriptor" || class == "wrapper_descriptor" {
        let tensor = binding::module("torch", vm)?.get_attr("Tensor", vm)?;
        if let Some(m) = super::attr(&tensor, &name, vm)?
            && m.is(func)
        {
            return Ok(format!("torch.Tensor.{name}"));
        }
    }
    let mut name = name;
    if name == "<lambda>" {
        let inspect = binding::module("inspect", vm)?;
        let src = vm
            .call_method(&inspect, "getsource", (func.to_owned(),))
            .map_err(|_| vm.new_runtime_error("Unable to represent lambda"))?;
        name = py_str(&src, vm)?
            .split('=')
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
    }
    let module = match module {
        Some(m) => m,
        None => {
            let torch = binding::module("torch", vm)?;
            let functional = binding::module("torch.nn.functional", vm)?;
            let mut found = None;
            for (guess, guess_name) in [(torch, "torch"), (functional, "torch.nn.functional")] {
                if let Some(v) = super::attr(&guess, &name, vm)?
                    && v.is(func)
                {
                    found = Some(guess_name.to_owned());
                    break;
                }
            }
            found.ok_or_else(|| {
                vm.new_runtime_error(format!(
                    "cannot find module for {}",
                    func.str(vm)
                        .map(|s| s.lossy().into_owned())
                        .unwrap_or_default()
                ))
            })?
        }
    };
    Ok(format!(
        "{}.{name}",
        module.replace("torch._ops", "torch.ops")
    ))
}

/// `Node._pretty_print_target`: `operator.add`, `builtins.sum`, `torch.relu`.
pub(crate) fn pretty_target(target: &PyObject, vm: &VirtualMachine) -> PyResult<String> {
    if let Some(s) = target.downcast_ref::<PyStr>() {
        return Ok(s.text(vm)?.to_owned());
    }
    if let Some(module) = attr_str(target, "__module__", vm)? {
        let Some(name) = attr_str(target, "__name__", vm)? else {
            return qualified_name(target, vm);
        };
        match module.as_str() {
            "builtins" => return Ok(format!("builtins.{name}")),
            "_operator" => return Ok(format!("operator.{name}")),
            _ => {}
        }
    }
    qualified_name(target, vm)
}

/// `_format_arg`: an argument in graph text (`%x`, tuples, lists, dicts).
pub(crate) fn format_arg(arg: &PyObject, vm: &VirtualMachine) -> PyResult<String> {
    if let Some(node) = arg.downcast_ref::<PyNode>() {
        return Ok(format!("%{}", node.name()));
    }
    if let Some(l) = arg.downcast_ref::<PyList>() {
        let items = l.borrow_vec().to_vec();
        let parts = items
            .iter()
            .map(|a| format_arg(a, vm))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(format!("[{}]", parts.join(", ")));
    }
    if let Some(t) = arg.downcast_ref::<PyTuple>() {
        let parts = t
            .iter()
            .map(|a| format_arg(a, vm))
            .collect::<PyResult<Vec<_>>>()?;
        let comma = if parts.len() == 1 { "," } else { "" };
        return Ok(format!("({}{comma})", parts.join(", ")));
    }
    if let Some(d) = arg.downcast_ref::<PyDict>() {
        let mut parts = vec![];
        for (k, v) in d.items_vec() {
            parts.push(format!("{}: {}", py_str(&k, vm)?, format_arg(&v, vm)?));
        }
        return Ok(format!("{{{}}}", parts.join(", ")));
    }
    if let Some(f) = vm.get_attribute_opt(arg.to_owned(), "_custom_fx_repr_fn")? {
        let r = f.call((), vm)?;
        return py_str(&r, vm);
    }
    py_str(arg, vm)
}

/// `_format_arg(arg, max_list_len)`: a top-level list or tuple shows its
/// first `max` items, then `...[total_len=N]`.
pub(crate) fn format_arg_limited(
    arg: &PyObject,
    max: usize,
    vm: &VirtualMachine,
) -> PyResult<String> {
    let items = if let Some(l) = arg.downcast_ref::<PyList>() {
        l.borrow_vec().to_vec()
    } else if let Some(t) = arg.downcast_ref::<PyTuple>() {
        t.as_slice().to_vec()
    } else {
        return format_arg(arg, vm);
    };
    if vm
        .get_attribute_opt(arg.to_owned(), "_custom_fx_repr_fn")?
        .is_some()
    {
        return format_arg(arg, vm);
    }
    let parts = items
        .iter()
        .take(max)
        .map(|a| format_arg(a, vm))
        .collect::<PyResult<Vec<_>>>()?;
    let more = if items.len() > max {
        format!(", ...[total_len={}]", items.len())
    } else {
        String::new()
    };
    if arg.downcast_ref::<PyList>().is_some() {
        return Ok(format!("[{}{more}]", parts.join(", ")));
    }
    let comma = if items.len() == 1 { "," } else { "" };
    Ok(format!("({}{comma}{more})", parts.join(", ")))
}

/// `Node.format_node`.
pub(crate) fn format_node(
    node: &Py<PyNode>,
    placeholder_names: Option<&PyObjectRef>,
    maybe_return_typename: Option<&PyObjectRef>,
    include_tensor_metadata: bool,
    vm: &VirtualMachine,
) -> PyResult<Option<String>> {
    format_node_with(
        node,
        placeholder_names,
        maybe_return_typename,
        include_tensor_metadata,
        &mut |t| pretty_target(t, vm),
        vm,
    )
}

/// `format_node` with a caller-supplied (possibly caching) target printer.
fn format_node_with(
    node: &Py<PyNode>,
    placeholder_names: Option<&PyObjectRef>,
    maybe_return_typename: Option<&PyObjectRef>,
    include_tensor_metadata: bool,
    pretty: &mut dyn FnMut(&PyObjectRef) -> PyResult<String>,
    vm: &VirtualMachine,
) -> PyResult<Option<String>> {
    let name = node.name();
    let users = node.users_len();
    let ty = node.ty();
    let typename = |ty: &Option<PyObjectRef>| -> PyResult<String> {
        Ok(match ty {
            Some(t) => format!("{} ", type_repr(t, vm)?),
            None => String::new(),
        })
    };
    let target = node.target();
    match node.op() {
        Op::Placeholder => {
            let target = py_str(&target, vm)?;
            // torch.fx doubles the name before a type here; kept for identical text.
            let arg_str = match &ty {
                Some(t) if t.clone().try_to_bool(vm)? => {
                    format!("{target}{target}: {}", type_repr(t, vm)?)
                }
                _ => target.clone(),
            };
            if let Some(names) = placeholder_names
                && names.clone().try_to_bool(vm)?
            {
                vm.call_method(names, "append", (arg_str,))?;
                return Ok(None);
            }
            let args = node.args_tuple();
            let default = match args.as_slice().first() {
                Some(d) => format!("(default={})", py_str(d, vm)?),
                None => String::new(),
            };
            Ok(Some(format!(
                "%{name} : {}[num_users={users}] = placeholder[target={target}]{default}",
                typename(&ty)?
            )))
        }
        Op::GetAttr => Ok(Some(format!(
            "%{name} : {}[num_users={users}] = get_attr[target={}]",
            typename(&ty)?,
            pretty(&target)?
        ))),
        Op::Output => {
            if let (Some(t), Some(ret)) = (&ty, maybe_return_typename)
                && t.clone().try_to_bool(vm)?
            {
                vm.call_method(
                    ret,
                    "__setitem__",
                    (0, format!(" -> {}", type_repr(t, vm)?)),
                )?;
            }
            let args = node.args_tuple();
            let result = args
                .as_slice()
                .first()
                .cloned()
                .unwrap_or_else(|| vm.ctx.none());
            Ok(Some(format!("return {}", py_str(&result, vm)?)))
        }
        op => Ok(Some(format!(
            "%{name} : {}[num_users={users}] = {}[target={}](args = {}, kwargs = {})",
            match include_tensor_metadata
                .then(|| tensor_annotation(node, vm))
                .transpose()?
                .flatten()
            {
                Some(a) => a,
                None => typename(&ty)?,
            },
            op.name(),
            pretty(&target)?,
            format_arg(node.args_tuple().as_object(), vm)?,
            format_arg(node.kwargs_dict().as_object(), vm)?
        ))),
    }
}

/// `Tensor "f32[2, 3][3, 1]cpu" ` for a node whose meta holds a tensor value.
fn tensor_annotation(node: &Py<PyNode>, vm: &VirtualMachine) -> PyResult<Option<String>> {
    let Some(val) = node.value_meta(vm) else {
        return Ok(None);
    };
    let tensor = binding::module("torch", vm)?.get_attr("Tensor", vm)?;
    if !val.is_instance(&tensor, vm)? {
        return Ok(None);
    }
    let list = |attr: &'static str| -> PyResult<String> {
        let v = vm.call_method(&val, attr, ())?;
        let items: Vec<PyObjectRef> = v.try_to_value(vm)?;
        Ok(items
            .iter()
            .map(|i| py_str(i, vm))
            .collect::<PyResult<Vec<_>>>()?
            .join(", "))
    };
    let dtype = val.get_attr("dtype", vm)?;
    let dtype = py_str(&dtype, vm)?;
    let abbr = dtype_abbr(dtype.trim_start_matches("torch."));
    Ok(Some(format!(
        "Tensor \"{abbr}[{}][{}]cpu\" ",
        list("size")?,
        list("stride")?
    )))
}

/// `str(graph)`.
pub(crate) fn graph_str(graph: &Py<PyGraph>, vm: &VirtualMachine) -> PyResult<String> {
    let mut s = String::from("graph():");
    // One lookup per distinct target: the printer reads attributes.
    let mut cache: std::collections::HashMap<usize, String> = std::collections::HashMap::new();
    let mut pretty = |t: &PyObjectRef| -> PyResult<String> {
        if let Some(p) = cache.get(&t.get_id()) {
            return Ok(p.clone());
        }
        let p = pretty_target(t, vm)?;
        cache.insert(t.get_id(), p.clone());
        Ok(p)
    };
    for node in PyGraph::node_vec(graph, vm) {
        if let Some(line) = format_node_with(&node, None, None, false, &mut pretty, vm)? {
            s.push_str("\n    ");
            s.push_str(&line);
        }
    }
    Ok(s)
}

/// What a node's example value is, in short: `f32[2, s0]` for a tensor
/// (real, fake or ShapeProp's metadata), `Sym(s0)` for a symbolic size.
pub(crate) fn value_summary(val: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<String>> {
    let class = val.class().name().to_string();
    if matches!(class.as_str(), "SymInt" | "SymFloat" | "SymBool") {
        return Ok(Some(format!("Sym({})", val.str(vm)?.text(vm)?)));
    }
    let tensor = binding::module("torch", vm)?.get_attr("Tensor", vm)?;
    if !val.is_instance(&tensor, vm)? && class != "TensorMetadata" && class != "FakeTensor" {
        return Ok(None);
    }
    let dtype = val.get_attr("dtype", vm)?.str(vm)?;
    let abbr = dtype_abbr(dtype.text(vm)?.trim_start_matches("torch."));
    let shape: Vec<PyObjectRef> = val.get_attr("shape", vm)?.try_to_value(vm)?;
    let shape = shape
        .iter()
        .map(|s| Ok(s.str(vm)?.text(vm)?.to_owned()))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Some(format!("{abbr}[{}]", shape.join(", "))))
}

/// A dtype's short name in verbose code and tensor metadata (`f32`).
pub(crate) fn dtype_abbr(name: &str) -> &str {
    match name {
        "float32" => "f32",
        "float64" => "f64",
        "float16" => "f16",
        "bfloat16" => "bf16",
        "int64" => "i64",
        "int32" => "i32",
        "int16" => "i16",
        "int8" => "i8",
        "uint8" => "u8",
        "bool" => "b8",
        "complex64" => "c64",
        "complex128" => "c128",
        other => other,
    }
}
