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

FORMATS = ("graph", "code", "tabular", "readable")


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


def render(gm, form):
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


def trace_file(path, module_expr, function, form, concrete):
    """The traced text of the script at ``path`` in ``form``."""
    if form not in FORMATS:
        raise CliError(f"unknown format {form!r}; choose one of {', '.join(FORMATS)}")
    concrete_args = _concrete(concrete)
    module = load(path)
    # Building and tracing run the user's code too; its prints go to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        root = discover(module, path, module_expr, function)
        if isinstance(root, torch.nn.Module):
            root.eval()
        gm = fx.symbolic_trace(root, concrete_args=concrete_args)
    return render(gm, form)
