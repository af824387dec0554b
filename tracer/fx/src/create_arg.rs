//! The bodies of `TracerBase.create_arg` (proxies become their nodes,
//! containers are rebuilt, base values pass) and `Tracer.create_arg`
//! (parameters, buffers and submodules become `get_attr` nodes, other
//! tensors constants of the root). Elements of containers go through the
//! tracer's own `create_arg`, as torch.fx's `self.create_arg(elem)` does.

use rustpython_vm::builtins::{PyDict, PyList, PyRange, PySlice, PyStr, PyTuple, PyType};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use super::args::{Containers, Leaf};
use super::hooks::{Hook, Resolved, class, loaded, resolve};
use super::record::NodeSpec;
use super::tracer_state::TracerRef;
use fxvm_vm::text::Utf8;

/// `None`, `...` and exact instances of the builtin scalar types: graph
/// arguments as they are.
fn is_plain_scalar(a: &PyObjectRef, vm: &VirtualMachine) -> bool {
    let t = a.class();
    let types = &vm.ctx.types;
    vm.is_none(a)
        || a.is(&vm.ctx.ellipsis)
        || [
            types.int_type,
            types.float_type,
            types.str_type,
            types.bool_type,
            types.complex_type,
        ]
        .into_iter()
        .any(|ty| t.is(ty))
}

/// Plain scalars and exact builtin containers: no rule but the base one
/// applies to them.
fn is_builtin_value(a: &PyObjectRef, vm: &VirtualMachine) -> bool {
    let t = a.class();
    let types = &vm.ctx.types;
    is_plain_scalar(a, vm)
        || [
            types.tuple_type,
            types.list_type,
            types.dict_type,
            types.slice_type,
            types.range_type,
        ]
        .into_iter()
        .any(|ty| t.is(ty))
}

/// `create_arg` as one tracer resolves it, for one top-level call.
pub(crate) struct ArgMaker<'a, 'b> {
    t: &'a TracerRef<'b>,
    hook: Resolved,
}

impl<'a, 'b> ArgMaker<'a, 'b> {
    pub(crate) fn new(t: &'a TracerRef<'b>) -> PyResult<ArgMaker<'a, 'b>> {
        let accept = [Hook::CreateArg, Hook::TracerCreateArg];
        let hook = resolve(t.obj, t.names.create_arg, &accept, t.vm)?;
        Ok(ArgMaker { t, hook })
    }

    /// `tracer.create_arg(a)`.
    pub(crate) fn arg(&self, a: &PyObjectRef) -> PyResult {
        match &self.hook {
            Resolved::Native(Hook::TracerCreateArg) => self.tracer_rules(a),
            Resolved::Native(_) => self.base(a),
            Resolved::Python(f) => f.call((a.clone(),), self.t.vm),
        }
    }

    fn items(&self, items: &[PyObjectRef]) -> PyResult<Vec<PyObjectRef>> {
        items.iter().map(|x| self.arg(x)).collect()
    }

    fn get_attr_node(&self, qualname: PyObjectRef) -> PyResult {
        let vm = self.t.vm;
        let empty = vm.ctx.empty_tuple.clone().into();
        let spec = NodeSpec::new("get_attr", qualname, empty, vm.ctx.new_dict().into());
        self.t.create_node(spec)
    }

    /// The first name `a` has among `root.<named>()` (parameters, buffers,
    /// modules), as torch.fx scans them.
    fn member_name(&self, a: &PyObjectRef, named: &'static str) -> PyResult<Option<PyObjectRef>> {
        let vm = self.t.vm;
        let root = self.t.root()?;
        let named = vm.call_method(&root, named, ())?;
        super::module_call::find_named(&named, a, vm)
    }

    /// A fresh attribute of the root holding `a`, named `prefix` + a number.
    fn new_constant(&self, a: &PyObjectRef, prefix: String) -> PyResult {
        let vm = self.t.vm;
        let qualname = vm.call_method(self.t.obj, "get_fresh_qualname", (prefix,))?;
        let name = qualname.str(vm)?;
        self.t.root()?.set_attr(&name, a.clone(), vm)?;
        Ok(qualname)
    }

    /// `Tracer.create_arg`.
    pub(crate) fn tracer_rules(&self, a: &PyObjectRef) -> PyResult {
        let vm = self.t.vm;
        if is_builtin_value(a, vm) {
            return self.base(a);
        }
        let proxy = class("torch.fx.proxy", "Proxy", vm)?;
        if a.class().fast_issubclass(&proxy) {
            return a.get_attr(self.t.names.node, vm);
        }
        let tensor = loaded("torch", vm)?.get_attr("Tensor", vm)?;
        let parameter = loaded("torch.nn", vm)?.get_attr("Parameter", vm)?;
        let module = loaded("torch.nn", vm)?.get_attr("Module", vm)?;
        let is_tensor = a.is_instance(&tensor, vm)?;
        if a.is_instance(&parameter, vm)? {
            return match self.member_name(a, "named_parameters")? {
                Some(name) => self.get_attr_node(name),
                None => Err(vm.new_name_error(
                    "parameter is not a member of this module",
                    vm.ctx.new_str("create_arg"),
                )),
            };
        }
        let member = if is_tensor {
            self.member_name(a, "named_buffers")?
        } else if a.is_instance(&module, vm)? {
            self.member_name(a, "named_modules")?
        } else {
            None
        };
        if let Some(name) = member {
            return self.get_attr_node(name);
        }
        if a.class().fast_issubclass(vm.ctx.types.tuple_type)
            && a.class().get_attr(self.t.names.fields).is_some()
        {
            let items = self.items(a.downcast_ref::<PyTuple>().expect("a tuple").as_slice())?;
            let target: PyObjectRef = a.class().to_owned().into();
            let args = vm.ctx.new_tuple(items).into();
            let spec = NodeSpec::new("call_function", target, args, vm.ctx.new_dict().into());
            return self.t.create_node(spec);
        }
        let tree_spec = loaded("torch.utils._pytree", vm)?.get_attr("TreeSpec", vm)?;
        if is_tensor || a.is_instance(&tree_spec, vm)? {
            let attrs = self.t.tensor_attrs()?;
            let known = vm.call_method(&attrs, "get", (a.clone(),))?;
            let qualname = if known.clone().try_to_bool(vm)? {
                known
            } else {
                let prefix = if is_tensor {
                    "_tensor_constant"
                } else {
                    "_tree_spec_constant"
                };
                let qualname = self.new_constant(a, prefix.to_owned())?;
                attrs.set_item(&**a, qualname.clone(), vm)?;
                qualname
            };
            return self.get_attr_node(qualname);
        }
        let proxyable =
            loaded("torch.fx._symbolic_trace", vm)?.get_attr("_proxyable_classes", vm)?;
        if vm._contains(&proxyable, a.class().as_object())? {
            let prefix = format!("_{}_constant_", a.class().name());
            let qualname = self.new_constant(a, prefix)?;
            return self.get_attr_node(qualname);
        }
        self.base(a)
    }

    /// `TracerBase.create_arg`.
    pub(crate) fn base(&self, a: &PyObjectRef) -> PyResult {
        let vm = self.t.vm;
        let cls = a.class();
        let types = &vm.ctx.types;
        if is_plain_scalar(a, vm) {
            return Ok(a.clone());
        }
        if cls.is(types.tuple_type) {
            let items = self.items(a.downcast_ref::<PyTuple>().expect("a tuple").as_slice())?;
            return Ok(vm.ctx.new_tuple(items).into());
        }
        if cls.is(types.list_type) {
            let items = a
                .downcast_ref::<PyList>()
                .expect("a list")
                .borrow_vec()
                .to_vec();
            return Ok(vm.ctx.new_list(self.items(&items)?).into());
        }
        if cls.fast_issubclass(&class("torch.fx.proxy", "Proxy", vm)?) {
            return a.get_attr(self.t.names.node, vm);
        }
        if let Some(f) = vm.get_attribute_opt(a.clone(), self.t.names.fx_create_arg)? {
            return f.call((self.t.obj.clone(),), vm);
        }
        if let Some(t) = a.downcast_ref::<PyTuple>() {
            let items = self.items(t.as_slice())?;
            if cls.get_attr(self.t.names.fields).is_some() {
                return cls.as_object().call(items, vm);
            }
            return Ok(vm.ctx.new_tuple(items).into());
        }
        if let Some(l) = a.downcast_ref::<PyList>() {
            let items = l.borrow_vec().to_vec();
            return Ok(vm.ctx.new_list(self.items(&items)?).into());
        }
        if let Some(d) = a.downcast_ref::<PyDict>() {
            return self.dict(d);
        }
        if let Some(s) = a.downcast_ref::<PySlice>() {
            return super::args::map_slice(s, |x| self.arg(x), vm);
        }
        if let Some(r) = a.downcast_ref::<PyRange>() {
            let parts = [r.start.clone(), r.stop.clone(), r.step.clone()]
                .map(|p| self.arg(&p.into()))
                .into_iter()
                .collect::<PyResult<Vec<_>>>()?;
            return types.range_type.as_object().call(parts, vm);
        }
        if cls.get_attr(self.t.names.dataclass_fields).is_some()
            && a.downcast_ref::<PyType>().is_none()
        {
            return self.dataclass(a);
        }
        if self.is_base_value(a)? {
            return Ok(a.clone());
        }
        Err(vm.new_not_implemented_error(format!("argument of type: {}", type_repr(a, vm)?)))
    }

    /// A dict argument: keys that are not strings are arguments too, but
    /// may not hold nodes.
    fn dict(&self, d: &PyDict) -> PyResult {
        let vm = self.t.vm;
        let out = vm.ctx.new_dict();
        let mut containers = None;
        for (k, v) in d.items_vec() {
            let key = if k.downcast_ref::<PyStr>().is_some() {
                k
            } else {
                let key = self.arg(&k)?;
                let c = match &containers {
                    Some(c) => c,
                    None => containers.insert(Containers::load(vm)?),
                };
                let mut no_node = |n: &PyObjectRef| -> PyResult {
                    Err(vm.new_runtime_error(format!(
                        "Keys for dictionaries used as an argument cannot contain a Node. Got key: {}",
                        n.str(vm)?.text(vm)?
                    )))
                };
                super::args::map(&key, c, &mut Leaf::Nodes(&mut no_node), vm)?;
                key
            };
            out.set_item(&*key, self.arg(&v)?, vm)?;
        }
        Ok(out.into())
    }

    /// A dataclass instance: a `call_function` node of its class, with its
    /// fields as keyword arguments.
    fn dataclass(&self, a: &PyObjectRef) -> PyResult {
        let vm = self.t.vm;
        let fields = loaded("dataclasses", vm)?
            .get_attr("fields", vm)?
            .call((a.clone(),), vm)?;
        let kwargs = vm.ctx.new_dict();
        for field in fields.try_to_value::<Vec<PyObjectRef>>(vm)? {
            let name = field.get_attr("name", vm)?.str(vm)?;
            let value = a.get_attr(&name, vm)?;
            kwargs.set_item(&*name, self.arg(&value)?, vm)?;
        }
        let target: PyObjectRef = a.class().to_owned().into();
        let empty = vm.ctx.empty_tuple.clone().into();
        self.t
            .create_node(NodeSpec::new("call_function", target, empty, kwargs.into()))
    }

    /// torch.fx's base argument types (tensors, dtypes, devices, memory
    /// formats, subclasses of the builtin scalars) and enum members.
    fn is_base_value(&self, a: &PyObjectRef) -> PyResult<bool> {
        let vm = self.t.vm;
        let types = &vm.ctx.types;
        let cls = a.class();
        if [
            types.int_type,
            types.float_type,
            types.str_type,
            types.complex_type,
        ]
        .into_iter()
        .any(|ty| cls.fast_issubclass(ty))
        {
            return Ok(true);
        }
        let torch = loaded("torch", vm)?;
        for name in ["dtype", "Tensor", "device", "memory_format"] {
            let cls = torch.get_attr(name, vm)?;
            if a.is_instance(&cls, vm)? {
                return Ok(true);
            }
        }
        let enum_cls = loaded("enum", vm)?.get_attr("Enum", vm)?;
        a.is_instance(&enum_cls, vm)
    }
}

/// `str(type(a))`, as the error names it.
fn type_repr(a: &PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
    Ok(a.class().as_object().str(vm)?.text(vm)?.to_owned())
}
