//! `torch.load`'s native half: turns a decoded checkpoint into Python
//! objects. Under `weights_only` a global is only ever one of PyTorch's
//! allow-listed names (resolved from a fixed table, never by importing a
//! name the file chose) or one the user allow-listed; calls are only to
//! those; nothing else in the file can run.

use std::collections::HashMap;

use fxvm_checkpoint::pickle::{Call, Id, Value};
use fxvm_checkpoint::{Checkpoint, StorageRef, storage_class, storage_dtype};
use rustpython_vm::builtins::{PyBaseExceptionRef, PyDictRef, PyStr, PyTuple};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::tensor::Tensor;

use super::convert::IntoPy;
use super::tensor::wrap;
use crate::text::Utf8;

/// Modules nothing may come from, even if the user allow-lists it (PyTorch's list).
const BLOCKED_MODULES: [&str; 4] = ["sys", "os", "posix", "nt"];

/// Nesting deeper than any real checkpoint; stops a hostile file from exhausting the stack.
const MAX_DEPTH: usize = 1000;

/// Globals the loader implements itself.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Native {
    RebuildTensor,
    RebuildTensorV2,
    RebuildParameter,
    RebuildParameterWithState,
    CodecsEncode,
}

/// What a pickle value became.
#[derive(Clone)]
enum Obj {
    Py(PyObjectRef),
    /// A storage named by a persistent id: a 1-d tensor over all its elements.
    Storage(Tensor),
    Native(Native),
}

/// How globals are resolved.
pub(crate) enum Policy {
    /// PyTorch's allow-list plus the user's `add_safe_globals` (full name → object).
    WeightsOnly { user: PyDictRef },
    /// Any global, through the given `find_class(module, name)` (weights_only=False).
    Trusted { find_class: PyObjectRef },
}

pub(crate) struct Loader<'a> {
    ck: &'a Checkpoint,
    vm: &'a VirtualMachine,
    policy: Policy,
    done: HashMap<Id, Obj>,
    storages: HashMap<String, Tensor>,
    depth: usize,
}

/// The message PyTorch wraps every weights-only refusal in.
fn weights_only_message(detail: &str) -> String {
    format!(
        "Weights only load failed. This file can still be loaded, to do so you have two options, \x1b[1mdo those steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check the recommended steps in the following error message.\n\tWeightsUnpickler error: {detail}\n\nCheck the documentation of torch.load to learn more about types accepted by default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
    )
}

/// The refusal for a global from a blocked module, worded as PyTorch words it.
fn blocked_message(path: &str, module: &str) -> String {
    format!(
        "Weights only load failed. In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.\n\n\nTrying to load unsupported GLOBAL {path} whose module {module} is blocked.\n\nCheck the documentation of torch.load to learn more about types accepted by default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
    )
}

/// A global from PyTorch's default allow-list that fxvm provides: where the
/// object lives (a fixed module and attribute, not the file's spelling).
fn allowed_object(module: &str, name: &str) -> Option<(&'static str, &'static str)> {
    Some(match (module, name) {
        ("collections", "OrderedDict") => ("collections", "OrderedDict"),
        ("collections", "Counter") => ("collections", "Counter"),
        ("builtins" | "__builtin__", "set") => ("builtins", "set"),
        ("builtins" | "__builtin__", "bytearray") => ("builtins", "bytearray"),
        ("builtins" | "__builtin__", "complex") => ("builtins", "complex"),
        ("torch", "Size") => ("torch", "Size"),
        ("torch", "device") => ("torch", "device"),
        ("torch", "Tensor") => ("torch", "Tensor"),
        ("torch.nn.parameter", "Parameter") => ("torch.nn.parameter", "Parameter"),
        ("torch", "float32") => ("torch", "float32"),
        ("torch", "float64") => ("torch", "float64"),
        ("torch", "int32") => ("torch", "int32"),
        ("torch", "int64") => ("torch", "int64"),
        ("torch", "bool") => ("torch", "bool"),
        _ => return None,
    })
}

/// `module.attr` for a fixed, trusted module path (`import` returns the top package).
fn import_attr(module: &'static str, attr: &'static str, vm: &VirtualMachine) -> PyResult {
    vm.import(module, 0)?;
    vm.sys_module
        .get_attr("modules", vm)?
        .get_item(module, vm)?
        .get_attr(attr, vm)
}

fn native(module: &str, name: &str) -> Option<Native> {
    Some(match (module, name) {
        ("torch._utils", "_rebuild_tensor") => Native::RebuildTensor,
        ("torch._utils", "_rebuild_tensor_v2") => Native::RebuildTensorV2,
        ("torch._utils", "_rebuild_parameter") => Native::RebuildParameter,
        ("torch._utils", "_rebuild_parameter_with_state") => Native::RebuildParameterWithState,
        ("_codecs", "encode") => Native::CodecsEncode,
        _ => return None,
    })
}

/// A non-negative Python int (a size, stride or offset in a tensor record).
fn index(o: &PyObjectRef, vm: &VirtualMachine) -> Option<usize> {
    o.try_to_value::<i64>(vm)
        .ok()
        .and_then(|i| usize::try_from(i).ok())
}

/// `pickle.UnpicklingError(message)`, the exception `torch.load` raises for a bad file.
pub(crate) fn unpickling_error(message: String, vm: &VirtualMachine) -> PyBaseExceptionRef {
    let class = vm
        .import("pickle", 0)
        .and_then(|m| m.get_attr("UnpicklingError", vm))
        .and_then(|c| {
            c.downcast()
                .map_err(|_| vm.new_type_error("pickle.UnpicklingError is not a class"))
        });
    match class {
        Ok(class) => vm.new_exception_msg(class, message.into()),
        Err(e) => e,
    }
}

impl<'a> Loader<'a> {
    pub fn new(ck: &'a Checkpoint, policy: Policy, vm: &'a VirtualMachine) -> Self {
        Loader {
            ck,
            vm,
            policy,
            done: HashMap::new(),
            storages: HashMap::new(),
            depth: 0,
        }
    }

    /// The checkpoint's object.
    pub fn load(mut self) -> PyResult {
        // Every global is checked in file order before anything is built, so
        // the first refused one is reported, as PyTorch reports it.
        if let Policy::WeightsOnly { .. } = self.policy {
            for (id, v) in self.ck.pickle.values.iter().enumerate() {
                if let Value::Global { module, name } = v {
                    let obj = self.global(module, name)?;
                    self.done.insert(id, obj);
                }
            }
        }
        let root = self.ck.pickle.root;
        let obj = self.build(root)?;
        self.py(obj)
    }

    fn error(&self, message: String) -> PyBaseExceptionRef {
        unpickling_error(message, self.vm)
    }

    fn refuse(&self, detail: String) -> PyBaseExceptionRef {
        self.error(weights_only_message(&detail))
    }

    fn py(&self, obj: Obj) -> PyResult {
        match obj {
            Obj::Py(o) => Ok(o),
            // fxvm keeps storages inside tensors: a storage on its own (as a
            // pickled tensor's storage is saved) is a tensor over all of it,
            // which `torch._utils._rebuild_tensor_v2` accepts.
            Obj::Storage(t) => Ok(crate::native::tensor::wrap(t, self.vm)),
            Obj::Native(n) => Err(self.error(format!("{n:?} can only be called while loading"))),
        }
    }

    fn build(&mut self, id: Id) -> PyResult<Obj> {
        if let Some(o) = self.done.get(&id) {
            return Ok(o.clone());
        }
        if self.depth >= MAX_DEPTH {
            return Err(self.vm.new_recursion_error(
                "maximum recursion depth exceeded while unpickling".to_owned(),
            ));
        }
        self.depth += 1;
        let result = self.build_value(id);
        self.depth -= 1;
        let obj = result?;
        self.done.insert(id, obj.clone());
        Ok(obj)
    }

    fn build_py(&mut self, id: Id) -> PyResult {
        let obj = self.build(id)?;
        self.py(obj)
    }

    fn build_value(&mut self, id: Id) -> PyResult<Obj> {
        let vm = self.vm;
        // Borrowed from the checkpoint, not from `self`, so building may recurse.
        let ck: &'a Checkpoint = self.ck;
        let py = |o: PyObjectRef| Ok(Obj::Py(o));
        match ck.pickle.get(id) {
            Value::None => py(vm.ctx.none()),
            &Value::Bool(b) => py(vm.ctx.new_bool(b).into()),
            &Value::Int(i) => py(vm.ctx.new_int(i).into()),
            Value::BigInt(bytes) => {
                let int = vm
                    .ctx
                    .types
                    .int_type
                    .as_object()
                    .get_attr("from_bytes", vm)?;
                let args = FuncArgs::new(
                    vec![
                        vm.ctx.new_bytes(bytes.clone()).into(),
                        vm.ctx.new_str("little").into(),
                    ],
                    rustpython_vm::function::KwArgs::new(
                        [("signed".to_owned(), vm.ctx.new_bool(true).into())]
                            .into_iter()
                            .collect(),
                    ),
                );
                py(int.call(args, vm)?)
            }
            &Value::Float(f) => py(vm.ctx.new_float(f).into()),
            Value::Str(s) => py(vm.ctx.new_str(s.as_str()).into()),
            Value::Bytes(b) => py(vm.ctx.new_bytes(b.clone()).into()),
            Value::ByteArray(b) => py(vm
                .ctx
                .types
                .bytearray_type
                .as_object()
                .call((vm.ctx.new_bytes(b.clone()),), vm)?),
            Value::Tuple(items) => {
                let items = items
                    .iter()
                    .map(|&i| self.build_py(i))
                    .collect::<PyResult<Vec<_>>>()?;
                py(vm.ctx.new_tuple(items).into())
            }
            Value::List(items) => {
                // Registered before its items are built: a list may contain itself.
                let list = vm.ctx.new_list(Vec::new());
                self.done.insert(id, Obj::Py(list.clone().into()));
                for &i in items {
                    let item = self.build_py(i)?;
                    list.borrow_vec_mut().push(item);
                }
                py(list.into())
            }
            Value::Dict(items) => {
                let dict = vm.ctx.new_dict();
                self.done.insert(id, Obj::Py(dict.clone().into()));
                for &(k, v) in items {
                    let (k, v) = (self.build_py(k)?, self.build_py(v)?);
                    dict.set_item(&*k, v, vm)?;
                }
                py(dict.into())
            }
            v @ (Value::Set(items) | Value::FrozenSet(items)) => {
                let frozen = matches!(v, Value::FrozenSet(_));
                let items = items
                    .iter()
                    .map(|&i| self.build_py(i))
                    .collect::<PyResult<Vec<_>>>()?;
                let class = if frozen {
                    vm.ctx.types.frozenset_type
                } else {
                    vm.ctx.types.set_type
                };
                py(class.as_object().call((vm.ctx.new_list(items),), vm)?)
            }
            Value::Global { module, name } => self.global(module, name),
            &Value::Persistent(pid) => self.persistent(pid),
            Value::Object {
                call,
                items,
                appends,
                state,
            } => {
                let obj = self.call(call)?;
                if !items.is_empty() || !appends.is_empty() || state.is_some() {
                    let target = self.py(obj.clone())?;
                    self.done.insert(id, obj.clone());
                    for &(k, v) in items {
                        let (k, v) = (self.build_py(k)?, self.build_py(v)?);
                        target.set_item(&*k, v, vm)?;
                    }
                    for &a in appends {
                        let item = self.build_py(a)?;
                        vm.call_method(&target, "append", (item,))?;
                    }
                    if let &Some(s) = state {
                        let state = self.build_py(s)?;
                        self.set_state(&target, state)?;
                    }
                }
                Ok(obj)
            }
        }
    }

    fn global(&self, module: &str, name: &str) -> PyResult<Obj> {
        let vm = self.vm;
        if let Some(n) = native(module, name) {
            return Ok(Obj::Native(n));
        }
        let path = format!("{module}.{name}");
        match &self.policy {
            Policy::Trusted { find_class } => Ok(Obj::Py(
                find_class.call((vm.ctx.new_str(module), vm.ctx.new_str(name)), vm)?,
            )),
            Policy::WeightsOnly { user } => {
                if BLOCKED_MODULES.contains(&module) {
                    return Err(self.error(blocked_message(&path, module)));
                }
                if let Some((m, attr)) = allowed_object(module, name) {
                    return Ok(Obj::Py(import_attr(m, attr, vm)?));
                }
                if module == "torch" && name.ends_with("Storage") {
                    // Allow-listed by PyTorch; fxvm has tensors for some dtypes only.
                    let dtype = storage_dtype(name)
                        .map_err(|e| vm.new_not_implemented_error(e.to_string()))?;
                    return Ok(Obj::Py(import_attr("torch", storage_class(dtype), vm)?));
                }
                if let Some(obj) = user.get_item_opt(path.as_str(), vm)? {
                    return Ok(Obj::Py(obj));
                }
                let shown = match path.strip_prefix("builtins.") {
                    Some(rest) => rest.to_string(),
                    None => path.clone(),
                };
                Err(self.refuse(format!(
                    "Unsupported global: GLOBAL {shown} was not an allowed global by default. Please use `torch.serialization.add_safe_globals([{shown}])` or the `torch.serialization.safe_globals([{shown}])` context manager to allowlist this global if you trust this class/function."
                )))
            }
        }
    }

    /// `('storage', <torch.XStorage>, key, location, numel[, view])`: the storage's elements.
    fn persistent(&mut self, pid: Id) -> PyResult<Obj> {
        let ck: &'a Checkpoint = self.ck;
        let Some(StorageRef { class, key, numel }) = StorageRef::parse(&ck.pickle, pid) else {
            return Err(self.error("A load persistent id instruction was encountered, but no persistent_load function was specified.".into()));
        };
        let dtype =
            storage_dtype(class).map_err(|e| self.vm.new_not_implemented_error(e.to_string()))?;
        if let Some(t) = self.storages.get(key) {
            return Ok(Obj::Storage(t.clone()));
        }
        let numel = usize::try_from(numel)
            .map_err(|_| self.error(format!("storage {key} has a negative size")))?;
        let t = self
            .ck
            .storage(key, dtype, numel)
            .map_err(|e| self.error(e.to_string()))?;
        self.storages.insert(key.to_string(), t.clone());
        Ok(Obj::Storage(t))
    }

    fn args(&mut self, args: Id) -> PyResult<Vec<Obj>> {
        let ck: &'a Checkpoint = self.ck;
        let Value::Tuple(items) = ck.pickle.get(args) else {
            return Err(self.error("the arguments of a call in the pickle are not a tuple".into()));
        };
        items.iter().map(|&i| self.build(i)).collect()
    }

    fn call(&mut self, call: &Call) -> PyResult<Obj> {
        let vm = self.vm;
        match *call {
            Call::Reduce { func, args } => {
                self.check_callable(func)?;
                let func = self.build(func)?;
                let args = self.args(args)?;
                match func {
                    Obj::Native(n) => self.native_call(n, args),
                    Obj::Py(f) => {
                        let args = args
                            .into_iter()
                            .map(|a| self.py(a))
                            .collect::<PyResult<Vec<_>>>()?;
                        Ok(Obj::Py(f.call(args, vm)?))
                    }
                    Obj::Storage(_) => Err(self.error("a storage is not callable".into())),
                }
            }
            Call::NewObj { cls, args, kwargs } => {
                self.check_callable(cls)?;
                let cls = self.build(cls)?;
                let cls = self.py(cls)?;
                let mut call_args = vec![cls.clone()];
                for a in self.args(args)? {
                    call_args.push(self.py(a)?);
                }
                let mut fargs = FuncArgs::from(call_args);
                if let Some(kw) = kwargs {
                    let kw = self.build_py(kw)?;
                    let dict: PyDictRef = kw
                        .downcast()
                        .map_err(|_| self.error("NEWOBJ_EX keywords are not a dict".into()))?;
                    for (k, v) in &dict {
                        let k = k
                            .downcast::<PyStr>()
                            .map_err(|_| self.error("NEWOBJ_EX keywords must be strings".into()))?;
                        fargs.kwargs.insert(k.text(vm)?.to_owned(), v);
                    }
                }
                let new = cls.get_attr("__new__", vm)?;
                Ok(Obj::Py(new.call(fargs, vm)?))
            }
        }
    }

    /// Under `weights_only`, only a global named in the file may be called
    /// (never an object the file built), so every call is to an allowed name.
    fn check_callable(&self, id: Id) -> PyResult<()> {
        match (&self.policy, self.ck.pickle.get(id)) {
            (Policy::Trusted { .. }, _) | (_, Value::Global { .. }) => Ok(()),
            _ => Err(self.refuse("only allow-listed globals may be called".into())),
        }
    }

    fn int_list(&self, o: &Obj, what: &str) -> PyResult<Vec<usize>> {
        let vm = self.vm;
        let bad = || {
            self.error(format!(
                "{what} in a tensor record must be a tuple of non-negative ints"
            ))
        };
        let Obj::Py(o) = o else { return Err(bad()) };
        let t = o.downcast_ref::<PyTuple>().ok_or_else(bad)?;
        t.iter().map(|x| index(x, vm).ok_or_else(bad)).collect()
    }

    fn native_call(&mut self, n: Native, args: Vec<Obj>) -> PyResult<Obj> {
        let vm = self.vm;
        let arity = |lo: usize, hi: usize| {
            if args.len() < lo || args.len() > hi {
                Err(self.error(format!(
                    "{n:?} takes {lo} to {hi} arguments, the file gives {}",
                    args.len()
                )))
            } else {
                Ok(())
            }
        };
        match n {
            Native::RebuildTensor | Native::RebuildTensorV2 => {
                if n == Native::RebuildTensor {
                    arity(4, 4)?
                } else {
                    arity(6, 7)?
                }
                let Obj::Storage(storage) = &args[0] else {
                    return Err(self.error("a tensor record does not name a storage".into()));
                };
                let offset = match &args[1] {
                    Obj::Py(o) => index(o, vm),
                    _ => None,
                }
                .ok_or_else(|| self.error("a tensor record has a bad storage offset".into()))?;
                let (size, stride) = (
                    self.int_list(&args[2], "size")?,
                    self.int_list(&args[3], "stride")?,
                );
                let t = storage.as_strided(&size, &stride, offset).py(vm)?;
                let obj = wrap(t, vm);
                if let Some(Obj::Py(rg)) = args.get(4)
                    && rg.clone().try_to_bool(vm)?
                {
                    vm.call_method(&obj, "requires_grad_", (true,))?;
                }
                Ok(Obj::Py(obj))
            }
            Native::RebuildParameter | Native::RebuildParameterWithState => {
                if n == Native::RebuildParameter {
                    arity(3, 3)?
                } else {
                    arity(4, 4)?
                }
                let data = self.py(args[0].clone())?;
                let rg = self.py(args[1].clone())?;
                let class = import_attr("torch.nn.parameter", "Parameter", vm)?;
                let param = class.call((data, rg), vm)?;
                if let Some(state) = args.get(3) {
                    let state = self.py(state.clone())?;
                    self.set_state(&param, state)?;
                }
                Ok(Obj::Py(param))
            }
            Native::CodecsEncode => {
                arity(2, 2)?;
                let (Obj::Py(s), Obj::Py(enc)) = (&args[0], &args[1]) else {
                    return Err(self.error("_codecs.encode takes a str and an encoding".into()));
                };
                let (Some(s), Some(enc)) = (s.downcast_ref::<PyStr>(), enc.downcast_ref::<PyStr>())
                else {
                    return Err(self.error("_codecs.encode takes a str and an encoding".into()));
                };
                if !matches!(enc.text(vm)?, "latin1" | "latin-1" | "iso-8859-1") {
                    return Err(self.refuse(format!(
                        "_codecs.encode with encoding {} is not allowed",
                        enc.text(vm)?
                    )));
                }
                let bytes: Option<Vec<u8>> = s
                    .text(vm)?
                    .chars()
                    .map(|c| u8::try_from(u32::from(c)).ok())
                    .collect();
                let bytes = bytes.ok_or_else(|| {
                    vm.new_unicode_encode_error(
                        "'latin-1' codec can't encode a character in the pickled bytes".to_owned(),
                    )
                })?;
                Ok(Obj::Py(vm.ctx.new_bytes(bytes).into()))
            }
        }
    }

    /// `BUILD`: `__setstate__` when the object defines it, else the state's
    /// items (a dict, or a `(dict, slots)` pair) as attributes.
    fn set_state(&self, target: &PyObjectRef, state: PyObjectRef) -> PyResult<()> {
        let vm = self.vm;
        if vm.is_none(&state) {
            return Ok(());
        }
        if matches!(self.policy, Policy::Trusted { .. })
            && let Some(setstate) = vm.get_attribute_opt(target.clone(), "__setstate__")?
        {
            setstate.call((state,), vm)?;
            return Ok(());
        }
        let dicts: Vec<PyObjectRef> = match state.downcast_ref::<PyTuple>() {
            Some(pair) if pair.len() == 2 => pair.iter().cloned().collect(),
            _ => vec![state],
        };
        for d in dicts {
            if vm.is_none(&d) {
                continue;
            }
            let dict: PyDictRef = d.downcast().map_err(|_| {
                self.error("the state of an object in the pickle is not a dict".into())
            })?;
            for (k, v) in &dict {
                let k = k.downcast::<PyStr>().map_err(|_| {
                    self.error("attribute names in the pickle must be strings".into())
                })?;
                if matches!(self.policy, Policy::WeightsOnly { .. })
                    && k.text(vm)?.starts_with("__")
                {
                    return Err(self.refuse(format!(
                        "setting the attribute {} is not allowed",
                        k.text(vm)?
                    )));
                }
                target.set_attr(vm.ctx.intern_str(k.text(vm)?), v, vm)?;
            }
        }
        Ok(())
    }
}
