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
    folder = os.path.dirname(os.path.abspath(path))
    # `fxvm check` loads many scripts in one interpreter: one entry each.
    if folder in sys.path:
        sys.path.remove(folder)
    sys.path.insert(0, folder)
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
    except TypeError, ValueError:
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
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, torch.nn.Module) and value.__module__ == module.__name__
    ]
    buildable = [c for c in candidates if _buildable(c)]
    if len(buildable) == 1:
        return buildable[0]()
    if not buildable:
        found = f" (found {', '.join(c.__name__ for c in candidates)}, all needing arguments)" if candidates else ""
        raise CliError(
            f"nothing to trace in {path}: no nn.Module subclass that can be built without arguments{found}; use --module EXPR or --function NAME"
        )
    names = ", ".join(c.__name__ for c in buildable)
    raise CliError(
        f"{path} has several nn.Module subclasses that can be built without arguments: {names}; choose one with --module EXPR"
    )


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
        except ValueError, SyntaxError:
            raise CliError(f"--concrete {pair!r}: {value!r} is not a Python literal (or PH)") from None
    return args or None


class _Example:
    """One ``NAME=SHAPE[:DTYPE[:HIGH]]`` input: zeros for tracing (only the
    shape and dtype matter) and a seeded draw for ``outputs`` (floats from
    ``randn``, integers from ``randint(0, HIGH)``, HIGH 10 unless given)."""

    def __init__(self, sizes, dtype, high):
        self.sizes, self.dtype, self.high = sizes, dtype, high

    def zeros(self):
        return torch.zeros(self.sizes, dtype=self.dtype)

    def draw(self):
        if self.dtype.is_floating_point:
            return torch.randn(self.sizes).to(self.dtype)
        if self.dtype == torch.bool:
            return torch.randint(0, 2, self.sizes).bool()
        return torch.randint(0, self.high, self.sizes, dtype=self.dtype)


def _examples(pairs):
    """``NAME=2x8[:DTYPE[:HIGH]]`` → ``{name: _Example}``."""
    examples = {}
    for pair in pairs:
        name, sep, spec = pair.partition("=")
        shape, _, typing = spec.partition(":")
        dtype_name, _, high = typing.partition(":")
        dtype = getattr(torch, dtype_name or "float32", None)
        try:
            sizes = [int(s) for s in shape.replace(",", "x").split("x")] if shape else []
            high = int(high) if high else 10
        except ValueError:
            sizes = None
        if not sep or not name.isidentifier() or sizes is None or any(s < 0 for s in sizes) or high < 1:
            raise CliError(f"--example {pair!r} is not NAME=SHAPE[:DTYPE[:HIGH]] (e.g. idx=2x8:int64:100)")
        if not isinstance(dtype, torch.dtype):
            raise CliError(f"--example {pair!r}: {dtype_name!r} is not a dtype (e.g. float32, int64)")
        examples[name] = _Example(sizes, dtype, high)
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
        rank = len(examples[name].sizes)
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


def render_case(path, module_expr, function, forms, concrete, example=(), dynamic=(), seed=0):
    """Each of ``forms`` for the script at ``path``, traced once: text for
    the traced forms (followed by the guards when traced with example
    shapes), safetensors bytes for ``outputs`` (the model run eagerly on
    its seeded example inputs). The seed is set before the model is built,
    so its weights and inputs are the same on every run."""
    for form in forms:
        if form not in FORMATS and form != "outputs":
            raise CliError(f"unknown format {form!r}; choose one of {', '.join(FORMATS)}, outputs")
    concrete_args = _concrete(concrete)
    examples = _examples(example)
    dynamic_dims = _dynamic(dynamic, examples)
    if "outputs" in forms and not examples:
        raise CliError(
            "the outputs format runs the model on its example inputs: give them with --example NAME=SHAPE[:DTYPE]"
        )
    sys.argv[:] = [path]
    # `fxvm check` renders many cases in one interpreter: each starts from
    # torch's defaults, whatever the case before it set.
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    module = load(path)
    torch.manual_seed(seed)
    rendered = {}
    # Building and tracing run the user's code too; its prints go to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        root = discover(module, path, module_expr, function)
        if isinstance(root, torch.nn.Module):
            root.eval()
        title = getattr(root, "__name__", type(root).__name__)
        if "outputs" in forms:
            inputs = {name: e.draw() for name, e in examples.items()}
            with torch.no_grad():
                rendered["outputs"] = _save_outputs(root(**inputs))
        texts = [form for form in forms if form != "outputs"]
        if texts and not examples:
            gm = fx.symbolic_trace(root, concrete_args=concrete_args)
        elif texts:
            from torch.fx.experimental.shape_trace import shape_trace

            zeros = {name: e.zeros() for name, e in examples.items()}
            gm = shape_trace(root, zeros, dynamic_dims, concrete_args=concrete_args)
    guards = ""
    if texts and examples:
        # Guards name the script as the command line did.
        guards = gm.shape_env.format_guards().replace(os.path.abspath(path), path)
        guards = "# guards:\n" + "".join(f"#{line}\n" for line in guards.splitlines()) if guards else ""
    for form in texts:
        text = render(gm, form, title)
        rendered[form] = text if form in ("dot", "svg", "html") else text + guards
    return [rendered[form] for form in forms]


def _flatten_outputs(value, name, out):
    """Tensors in a model's output, named by where they sit (``output``,
    ``output.0``, ``output.logits``); numbers become 0-d tensors."""
    if isinstance(value, torch.Tensor):
        out[name] = value.detach().contiguous().clone()
    elif isinstance(value, (bool, int, float)):
        out[name] = torch.tensor(value)
    elif isinstance(value, dict) or hasattr(value, "items"):
        for key, item in value.items():
            _flatten_outputs(item, f"{name}.{key}", out)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _flatten_outputs(item, f"{name}.{i}", out)
    elif value is not None:
        raise CliError(
            f"the outputs format stores tensors, numbers and containers of them; the model returned a {type(value).__name__} at {name}"
        )


def _save_outputs(value):
    from safetensors.torch import save

    tensors = {}
    _flatten_outputs(value, "output", tensors)
    return save(tensors)


def compare_outputs(expected, actual, rtol=None, atol=None):
    """``None`` when the outputs in the safetensors bytes ``actual`` are close
    to ``expected`` (`torch.testing.assert_close`, with its per-dtype
    tolerances unless given), else what differs, one entry per output."""
    from safetensors.torch import load
    from torch.testing import assert_close

    if (rtol is None) != (atol is None):
        rtol = 0.0 if rtol is None else rtol
        atol = 0.0 if atol is None else atol
    before, after = load(expected), load(actual)
    problems = []
    missing = [name for name in before if name not in after]
    extra = [name for name in after if name not in before]
    if missing:
        problems.append(f"missing outputs: {', '.join(missing)}")
    if extra:
        problems.append(f"new outputs: {', '.join(extra)}")
    for name, want in before.items():
        if name not in after:
            continue
        try:
            assert_close(after[name], want, rtol=rtol, atol=atol)
        except AssertionError as e:
            problems.append(f"{name}: {e}")
    return "\n\n".join(problems) + "\n" if problems else None
