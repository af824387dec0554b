"""What `fxvm trace` and `fxvm check` run inside the interpreter: import a
script as a module, find what to trace, trace it and render one text form."""

import ast
import contextlib
import linecache
import importlib.util
import inspect
import os
import sys

import torch
import torch.fx as fx
from torch.fx._native import fx as _fx

FORMATS = ("graph", "code", "tabular", "readable", "dot", "svg", "html")


class CliError(Exception):
    """A mistake in the command line or in what it names: one line, no traceback."""


def load(path):
    """The script at ``path`` imported as a module named after its file."""
    name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # What the script prints while importing goes to stderr: stdout carries
    # only the traced form, so it can be piped or compared.
    with contextlib.redirect_stdout(sys.stderr):
        spec.loader.exec_module(module)
    return module


def _buildable(cls):
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return False
    required = [p for p in params if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return not required


def discover(module, path, module_expr=None, function=None):
    """The module or function to trace (see `fxvm trace --help`)."""
    if module_expr is not None:
        try:
            code = compile(module_expr, "--module", "eval")
        except SyntaxError as e:
            raise CliError(f"--module {module_expr!r} is not an expression: {e.msg}") from None
        # Tracebacks through the expression show it as their first line.
        linecache.cache["--module"] = (len(module_expr), None, [module_expr + "\n"], "--module")
        try:
            return eval(code, vars(module))
        except Exception as e:
            # Raised inside the user's code (a model's __init__): the user's
            # traceback. Raised by the expression itself (a misspelt class):
            # one line.
            tb = e.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename != "--module":
                tb = tb.tb_next
            if tb is not None and tb.tb_next is not None:
                raise
            raise CliError(f"--module {module_expr!r} failed: {type(e).__name__}: {e}") from None
    if function is not None:
        fn = getattr(module, function, None)
        if not callable(fn):
            raise CliError(f"{path} has no function {function!r}")
        return fn
    candidates = [
        value for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, torch.nn.Module) and value.__module__ == module.__name__
    ]
    buildable = [c for c in candidates if _buildable(c)]
    if len(buildable) == 1:
        return buildable[0]()
    if not buildable:
        found = f" (found {', '.join(c.__name__ for c in candidates)}, all needing arguments)" if candidates else ""
        raise CliError(f"nothing to trace in {path}: no nn.Module subclass that can be built without arguments{found}; use --module EXPR or --function NAME")
    names = ", ".join(c.__name__ for c in buildable)
    raise CliError(f"{path} has several nn.Module subclasses that can be built without arguments: {names}; choose one with --module EXPR")


def _concrete(pairs):
    args = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.isidentifier():
            raise CliError(f"--concrete {pair!r} is not NAME=VALUE")
        if value == "PH":
            args[name] = fx.PH
            continue
        try:
            args[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise CliError(f"--concrete {pair!r}: {value!r} is not a Python literal (or PH)") from None
    return args or None


def _examples(pairs):
    """``NAME=2x8[:DTYPE]`` → ``{name: zeros of that shape}`` (zeros index
    anything; only the shapes and dtypes matter)."""
    examples = {}
    for pair in pairs:
        name, sep, spec = pair.partition("=")
        shape, _, dtype_name = spec.partition(":")
        dtype = getattr(torch, dtype_name or "float32", None)
        try:
            sizes = [int(s) for s in shape.replace(",", "x").split("x")] if shape else []
        except ValueError:
            sizes = None
        if not sep or not name.isidentifier() or sizes is None or any(s < 0 for s in sizes):
            raise CliError(f"--example {pair!r} is not NAME=SHAPE[:DTYPE] (e.g. idx=2x8:int64)")
        if not isinstance(dtype, torch.dtype):
            raise CliError(f"--example {pair!r}: {dtype_name!r} is not a dtype (e.g. float32, int64)")
        examples[name] = torch.zeros(sizes, dtype=dtype)
    return examples


def _dynamic(items, examples):
    dynamic = {}
    for item in items:
        name, sep, dims = item.partition(":")
        if not sep or name not in examples:
            raise CliError(f"--dynamic {item!r} is not NAME:DIM[,DIM] for an --example input")
        if dims == "all":
            dynamic[name] = True
            continue
        try:
            picked = [int(d) for d in dims.split(",")]
        except ValueError:
            raise CliError(f"--dynamic {item!r}: dims must be integers (or all)") from None
        rank = examples[name].dim()
        if any(not -rank <= d < rank for d in picked):
            raise CliError(f"--dynamic {item!r}: {name} has {rank} dims")
        dynamic[name] = picked
    return dynamic


def render(gm, form, title="model"):
    if form == "dot":
        from torch.fx.passes.graph_drawer import FxGraphDrawer

        return FxGraphDrawer(gm, title).get_dot_graph().to_string()
    if form in ("svg", "html"):
        from torch.fx.passes.graph_drawer import render as draw

        return draw(gm, title, form)
    if form == "graph":
        return str(gm.graph) + "\n"
    if form == "code":
        return gm.code + "\n"
    if form == "tabular":
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in gm.graph.nodes]
        return _fx.tabulate(rows, ["opcode", "name", "target", "args", "kwargs"]) + "\n"
    if form == "readable":
        return gm.print_readable(print_output=False) + "\n"
    raise CliError(f"unknown format {form!r}; choose one of {', '.join(FORMATS)}")


def trace_file(path, module_expr, function, form, concrete, example=(), dynamic=()):
    """The traced text of the script at ``path`` in ``form`` (traced with
    example shapes when ``example`` is given; its guards follow)."""
    if form not in FORMATS:
        raise CliError(f"unknown format {form!r}; choose one of {', '.join(FORMATS)}")
    concrete_args = _concrete(concrete)
    examples = _examples(example)
    dynamic_dims = _dynamic(dynamic, examples)
    module = load(path)
    # Building and tracing run the user's code too; its prints go to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        root = discover(module, path, module_expr, function)
        if isinstance(root, torch.nn.Module):
            root.eval()
        title = getattr(root, "__name__", type(root).__name__)
        if not examples:
            return render(fx.symbolic_trace(root, concrete_args=concrete_args), form, title)
        from torch.fx.experimental.shape_trace import shape_trace

        gm = shape_trace(root, examples, dynamic_dims, concrete_args=concrete_args)
    text = render(gm, form, title)
    if form in ("dot", "svg", "html"):
        return text
    # Guards name the script as the command line did.
    guards = gm.shape_env.format_guards().replace(os.path.abspath(path), path)
    return text + ("# guards:\n" + "".join(f"#{line}\n" for line in guards.splitlines()) if guards else "")
