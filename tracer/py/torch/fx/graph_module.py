"""``torch.fx.graph_module``: ``GraphModule``, an ``nn.Module`` whose
``forward`` is the code generated from its graph."""

import copy
import itertools
import linecache
import os
import pickle
import sys
import traceback
import warnings

import torch
import torch.nn as nn
from torch.fx._native import fx as _fx
from torch.fx.graph import Graph, _custom_builtins
from torch.nn.modules.module import _addindent

__all__ = ["GraphModule"]


class _EvalCacheLoader:
    """Names each generated source (``<eval_with_key>.N``) and serves it to
    ``linecache``, so tracebacks show the generated lines."""

    def __init__(self):
        self.eval_cache = {}
        self.next_id = 0

    def cache(self, src, globals, co_fields=None):
        key = f"<eval_with_key>.{self.next_id}"
        self.next_id += 1
        if co_fields and "co_filename" in co_fields:
            if "co_firstlineno" not in co_fields or "co_name" not in co_fields:
                key = co_fields["co_filename"]
            else:
                key += f" from {co_fields['co_filename']}:{co_fields['co_firstlineno']} in {co_fields['co_name']}"
        self.eval_cache[key] = src
        linecache.cache[key] = (len(src), None, src.splitlines(True), key)
        return key

    def get_source(self, module_name):
        return self.eval_cache.get(module_name)


_loader = _EvalCacheLoader()


def _forward_from_key(src, globals, key):
    globals_copy = globals.copy()
    exec(compile(src, key, "exec"), globals_copy)
    return globals_copy.pop("forward")


def _format_import_statement(name, obj):
    if name in _custom_builtins:
        return _custom_builtins[name]
    qualname = getattr(obj, "__qualname__", None) or obj.__name__
    return f"from {pickle.whichmodule(obj, qualname)} import {qualname} as {name}"


def _format_import_block(globals):
    """Import statements that rebuild the generated code's ``globals``,
    sorted so that the block is the same for the same graph."""
    lines = {
        f"{name} = {obj!r}" if isinstance(obj, str) else _format_import_statement(name, obj)
        for name, obj in globals.items()
    }
    return "\n".join(sorted(lines))


def reduce_graph_module(body, import_block):
    """Unpickles a ``GraphModule``: compiles its saved code and traces it again."""
    fn_src = body.get("_code") or body["code"]
    src = import_block + fn_src
    forward = _forward_from_key(src, {}, _loader.cache(src, {}))
    return _deserialize_graph_module(forward, body)


def _deserialize_graph_module(forward, body):
    # Tracing reads ``forward`` from the root's class.
    _CodeOnlyModule.forward = forward
    from torch.fx._symbolic_trace import Tracer

    tracer_cls = body.get("_tracer_cls") or Tracer

    class KeepModules(tracer_cls):
        # The saved code calls submodules the original trace did not enter.
        def is_leaf_module(self, _, __):
            return True

    com = _CodeOnlyModule(body)
    graph = KeepModules._graph_module_deserialization_tracer(com).trace(com, **body.get("_tracer_extras", {}))
    graph._tracer_cls = tracer_cls
    gm = GraphModule(com, graph, class_name=body.get("_graphmodule_cls_name", "GraphModule"))
    # The constructor keeps only what the graph names; keep the rest too.
    for k, v in body.items():
        if not hasattr(gm, k):
            setattr(gm, k, v)
    return gm


class _LazyForward:
    """A GraphModule class's ``forward`` until it is first looked up: the
    generated code is registered (keeping PyTorch's ``<eval_with_key>.N``
    numbering) at ``recompile`` but compiled on first use, then replaces this
    descriptor. Compiling is most of what building a GraphModule costs, and
    traces that are only printed or compared, or recompiled again by the next
    pass, never run it (PyTorch's ``_LazyGraphModule`` defers it the same way)."""

    __slots__ = ("src", "globals", "key")

    def __init__(self, src, globals, key):
        self.src, self.globals, self.key = src, globals, key

    def __get__(self, obj, cls=None):
        fn = _forward_from_key(self.src, self.globals, self.key)
        for owner in (cls or type(obj)).__mro__:
            if owner.__dict__.get("forward") is self:
                owner.forward = fn
                break
        return fn if obj is None else fn.__get__(obj, cls)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = torch.nn.Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, torch.Tensor) and not isinstance(from_obj, torch.nn.Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _print_readable(module, module_name, print_output=True):
    graph = module.graph
    verbose_python_code = graph.python_code(root_module="self", verbose=True)
    module_code = verbose_python_code.src.lstrip("\n")
    module_code = f"class {module_name}(torch.nn.Module):\n" + module_code
    module_code = _addindent(module_code, 4)
    submodule_code_list = [""]
    for submodule_name, submodule in module.named_children():
        if isinstance(submodule, GraphModule):
            submodule_code_list.append(_print_readable(submodule, submodule_name, print_output=False))
    submodule_code = _addindent("\n".join(submodule_code_list), 4)
    output = module_code + submodule_code
    if print_output:
        print(module_code + submodule_code)
    return output


class _WrappedCall:
    """Calls the generated ``forward``; an error inside it also shows the
    generated line that raised."""

    def __init__(self, cls, cls_call):
        self.cls = cls
        self.cls_call = cls_call

    @staticmethod
    def _generate_error_message(frame_summary):
        err_lineno = frame_summary.lineno
        line = frame_summary.line
        all_src_lines = linecache.getlines(frame_summary.filename)
        tb_repr = traceback.format_exc()
        custom_msg = (
            f"Call using an FX-traced Module, line {err_lineno} of the traced Module's generated forward function:"
        )
        before_err = "".join(all_src_lines[err_lineno - 2 : err_lineno])
        marker = "~" * len(line) + "~~~ <--- HERE"
        err_and_after_err = "\n".join(all_src_lines[err_lineno : err_lineno + 2])
        return "\n".join([tb_repr, custom_msg, before_err, marker, err_and_after_err])

    def __call__(self, obj, *args, **kwargs):
        guards = obj.__dict__.get("_shape_guards")
        if guards is not None:
            guards.check(args, kwargs)
        try:
            if self.cls_call is not None:
                return self.cls_call(obj, *args, **kwargs)
            return super(self.cls, obj).__call__(*args, **kwargs)
        except Exception as e:
            frames = traceback.extract_tb(e.__traceback__)
            if frames and "eval_with_key" in frames[-1].filename:
                print(_WrappedCall._generate_error_message(frames[-1]), file=sys.stderr)
                raise e.with_traceback(None)
            raise


class GraphModule(torch.nn.Module):
    """An ``nn.Module`` generated from a ``Graph``: it owns the submodules,
    parameters and buffers the graph names, and its ``forward`` is the
    graph's generated code. Each instance gets its own class, so that
    recompiling one does not change another."""

    def __new__(cls, *args, **kwargs):
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, torch.nn.Module):
            if hasattr(root, "training"):
                self.training = root.training
            targets = [node.target for node in graph.nodes if node.op in ("get_attr", "call_module")]
            _fx.copy_attrs(root, self, targets, (torch.nn.Module, torch.nn.Parameter, torch.Tensor))
        elif isinstance(root, dict):
            targets_to_copy = []
            for node in graph.nodes:
                if node.op in ["get_attr", "call_module"]:
                    if node.target not in root:
                        raise RuntimeError(
                            "Node "
                            + str(node)
                            + " referenced target "
                            + node.target
                            + " but that target was not provided in ``root``!"
                        )
                    targets_to_copy.append(node.target)
            # Parents before children, so a child is not hidden by its parent.
            targets_to_copy.sort(key=lambda t: t.count("."))
            for target_to_copy in targets_to_copy:
                _assign_attr(root[target_to_copy], self, target_to_copy)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self._tracer_cls = None
        if self.graph._tracer_cls and "<locals>" not in self.graph._tracer_cls.__qualname__:
            self._tracer_cls = self.graph._tracer_cls
        self._tracer_extras = self.graph._tracer_extras or {}
        self.meta = {}
        self._replace_hooks = []
        self._create_node_hooks = []
        self._erase_node_hooks = []
        self._deepcopy_hooks = []

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerates ``forward`` from the graph (after editing it)."""
        from torch.fx.graph import _PyTreeCodeGen

        if isinstance(self._graph._codegen, _PyTreeCodeGen):
            self._in_spec = self._graph._codegen.pytree_info.in_spec
            self._out_spec = self._graph._codegen.pytree_info.out_spec
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        self._lineno_map = python_code._lineno_map
        self._prologue_start = python_code._prologue_start
        cls = type(self)
        co_fields = getattr(self._graph, "_co_fields", {})
        cls.forward = _LazyForward(
            self._code, python_code.globals, _loader.cache(self._code, python_code.globals, co_fields)
        )
        cls_call = cls.__call__ if "__call__" in vars(cls) else None
        if "_wrapped_call" not in vars(cls):
            cls._wrapped_call = _WrappedCall(cls, cls_call)

        def call_wrapped(self, *args, **kwargs):
            return self._wrapped_call(self, *args, **kwargs)

        cls.__call__ = call_wrapped
        for _, mod in self.named_children():
            if isinstance(mod, GraphModule):
                mod.recompile()
        return python_code

    def add_submodule(self, target, m):
        """Installs ``m`` at the dotted path ``target``, creating parents."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = torch.nn.Module()
                setattr(mod, item, submod)
            if not isinstance(submod, torch.nn.Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Deletes the submodule at ``target``; False when there is none."""
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, torch.nn.Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), torch.nn.Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self):
        """Deletes every submodule that no node (or used submodule) refers to."""
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr") and isinstance(node.target, str):
                fullpath = node.target.split(".")
                used.update(itertools.accumulate(fullpath, lambda x, y: ".".join([x, y] if y else [x])))
                if node.op == "call_module":
                    try:
                        submod = self.get_submodule(node.target)
                        for submod_name, _ in submod.named_modules():
                            if submod_name != "":
                                used.add(".".join([node.target, submod_name]))
                    except AttributeError:
                        pass
        to_delete = [name for name, _ in self.named_modules() if name not in used]
        for name in to_delete:
            self.delete_submodule(name)

    def print_readable(
        self,
        print_output=True,
        include_stride=False,
        include_device=False,
        colored=False,
        *,
        fast_sympy_print=False,
        expanded_def=False,
        additional_meta=None,
    ):
        """The generated code as a module class, with where each node came from."""
        return _print_readable(self, self._get_name(), print_output)

    def to_folder(self, folder, module_name="FxModule"):
        """Writes this module as a Python package: ``module.py`` with the code,
        and the weights in ``state_dict.pt``."""
        os.makedirs(folder, exist_ok=True)
        torch.save(self.state_dict(), os.path.join(folder, "state_dict.pt"))
        tab = " " * 4
        custom_builtins = "\n".join(_custom_builtins.values())
        model_str = f"""
import torch
{custom_builtins}

from torch.nn import *
class {module_name}(torch.nn.Module):
    def __init__(self):
        super().__init__()
"""
        safe_reprs = [nn.Linear, nn.Conv1d, nn.Conv2d, nn.BatchNorm1d, nn.BatchNorm2d]
        blobified_modules = []
        for child_name, module in self.named_children():
            if type(module) in safe_reprs:
                model_str += f"{tab * 2}setattr(self, '{child_name}', {module.__repr__()})\n"
            else:
                module_file = os.path.join(folder, f"{child_name}.pt")
                torch.save(module, module_file)
                blobified_modules.append(child_name)
                module_repr = module.__repr__().replace("\r", " ").replace("\n", " ")
                model_str += f"{tab * 2}setattr(self, '{child_name}', torch.load(r'{module_file}', weights_only=False)) # {module_repr}\n"
        for buffer_name, buffer in self._buffers.items():
            if buffer is not None:
                model_str += f"{tab * 2}self.register_buffer('{buffer_name}', torch.empty({list(buffer.shape)}, dtype={buffer.dtype}))\n"
        for param_name, param in self._parameters.items():
            if param is not None:
                model_str += f"{tab * 2}setattr(self, '{param_name}', torch.nn.Parameter(torch.empty({list(param.shape)}, dtype={param.dtype})))\n"
        model_str += f"{tab * 2}self.load_state_dict(torch.load(r'{folder}/state_dict.pt'))\n"
        model_str += f"{_addindent(self.code, 4)}\n"
        with open(os.path.join(folder, "module.py"), "w") as f:
            f.write(model_str)
        with open(os.path.join(folder, "__init__.py"), "w") as f:
            f.write("from .module import *")
        if len(blobified_modules) > 0:
            warnings.warn(
                f"Was not able to save the following children modules as reprs -saved as pickled files instead: {blobified_modules}"
            )

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake_mod = _CodeOnlyModule(copy.deepcopy(self.__dict__, memo))
        GraphModule.__init__(res, fake_mod, fake_mod.__dict__["_graph"])
        for attr in (
            "_state_dict_hooks",
            "_replace_hooks",
            "_create_node_hooks",
            "_erase_node_hooks",
            "_deepcopy_hooks",
        ):
            if attr in self.__dict__:
                setattr(res, attr, copy.deepcopy(self.__dict__[attr], memo))
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        for hook in getattr(self, "_deepcopy_hooks", []):
            hook(res)
        return res

    def __reduce__(self):
        """Pickles the generated code, not the graph, with imports for its
        globals; unpickling traces the code again (as torch.fx does)."""
        body = self.__dict__.copy()
        python_code = self.recompile()
        del body["_graph"]
        return (reduce_graph_module, (body, _format_import_block(python_code.globals)))

    def __copy__(self):
        res = GraphModule(self, self.graph)
        res.meta = getattr(self, "meta", {})
        return res

    def __str__(self):
        orig_str = super().__str__()
        print_readable_reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([orig_str, self._code, print_readable_reminder])


class _CodeOnlyModule(torch.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.__dict__ = body
