"""``FakeTensor``: a tensor known only by its sizes — ``SymInt``s of a
``ShapeEnv`` where they are symbolic — and dtype. Torch functions and
methods on it compute their result's sizes by the shape rule of the op's
registry row (natively, ``torch._C._symbolic.infer``) without running any
kernel; the comparisons a rule needs are answered from the example values
and recorded as guards."""

import torch
from torch.fx._native import load

_symbolic = load("torch._C._symbolic")
SymExpr = _symbolic.SymExpr

__all__ = ["FakeTensor", "NoShapeRule"]


class NoShapeRule(RuntimeError):
    """An op whose output sizes fxvm cannot compute symbolically."""


class FakeTensor:
    def __init__(self, sizes, dtype, shape_env):
        # SymExpr per dim; what the native rules read (and return).
        if type(sizes) is not tuple or not all(type(s) is SymExpr for s in sizes):
            sizes = tuple(s if isinstance(s, SymExpr) else SymExpr(int(s)) for s in sizes)
        self._sym_sizes = sizes
        self.dtype = dtype
        self.shape_env = shape_env

    # -- sizes ---------------------------------------------------------
    @property
    def shape(self):
        env = self.shape_env
        return torch.Size([env.create_symintnode(env.simplify(s)) for s in self._sym_sizes])

    def size(self, dim=None):
        shape = self.shape
        return shape if dim is None else shape[dim]

    def dim(self):
        return len(self._sym_sizes)

    @property
    def ndim(self):
        return len(self._sym_sizes)

    def numel(self):
        n = 1
        for s in self.shape:
            n = n * s
        return n

    def __len__(self):
        if not self._sym_sizes:
            raise TypeError("len() of a 0-d tensor")
        return int(self.shape[0])

    @property
    def device(self):
        return torch.device("cpu")

    @property
    def is_cuda(self):
        return False

    def __repr__(self):
        names = {
            torch.float32: "f32",
            torch.float64: "f64",
            torch.int64: "i64",
            torch.int32: "i32",
            torch.bool: "b8",
            torch.float16: "f16",
            torch.bfloat16: "bf16",
            torch.uint8: "u8",
        }
        sizes = ", ".join(str(self.shape_env.simplify(s)) for s in self._sym_sizes)
        return f"{names.get(self.dtype, str(self.dtype).replace('torch.', ''))}[{sizes}]"

    # -- ops -----------------------------------------------------------
    # Natively: the op's shape rule on the arguments, a new fake (or the
    # in-place input) back.
    __torch_function__ = classmethod(_symbolic.fake_torch_function)

    def __getattr__(self, name):
        method = getattr(torch.Tensor, name, None)
        if method is None or name.startswith("__"):
            raise AttributeError(f"'FakeTensor' object has no attribute '{name}'")
        return lambda *args, **kwargs: _infer(method, (self,) + args, kwargs)

    def __getitem__(self, index):
        env = self.shape_env
        out = _symbolic.infer_subscript(self, index, env._holds, env._hint)
        if out is None:
            raise NoShapeRule(f"cannot compute the sizes of a subscript by {index!r}")
        return FakeTensor(out[0], out[1], env)


def _setitem(self, index, value):
    """``x[index] = value`` writes in place: the sizes stay; the index is
    still checked against them."""
    self[index]


FakeTensor.__setitem__ = _setitem


def _sym_torch_function(cls, func, types, args=(), kwargs=None):
    return _fake_call(FakeTensor, func, types, args, kwargs)


class fake_mode:
    """While active, a torch op given traced sizes (``torch.zeros(b, t)``,
    ``torch.arange(t)``) builds a fake instead of forcing them: ``SymInt``
    takes part in ``__torch_function__`` dispatch. Nests."""

    depth = 0

    def __enter__(self):
        if fake_mode.depth == 0:
            torch.SymInt.__torch_function__ = classmethod(_sym_torch_function)
        fake_mode.depth += 1
        return self

    def __exit__(self, *exc):
        fake_mode.depth -= 1
        if fake_mode.depth == 0:
            del torch.SymInt.__torch_function__


def _infer(func, args, kwargs):
    """``func(*args, **kwargs)`` on fakes, by the op's shape rule."""
    return _fake_call(FakeTensor, func, (), args, kwargs)


_fake_call = _symbolic.fake_torch_function

# Operators, by the Tensor method that computes them; a reflected operator
# has the result sizes and dtype of its forward form.
_OPERATORS = {
    "add": "add",
    "sub": "sub",
    "mul": "mul",
    "truediv": "div",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "pow",
    "matmul": "matmul",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift",
    "lt": "lt",
    "le": "le",
    "gt": "gt",
    "ge": "ge",
    "eq": "eq",
    "ne": "ne",
}


def _operator(method, reflected):
    def impl(self, other):
        return _infer(method, (other, self) if reflected and method.__name__ == "matmul" else (self, other), {})

    return impl


for _op, _method in _OPERATORS.items():
    _target = getattr(torch.Tensor, _method, None)
    if _target is not None:
        setattr(FakeTensor, f"__{_op}__", _operator(_target, False))
        setattr(FakeTensor, f"__r{_op}__", _operator(_target, True))
for _op, _method in {"neg": "neg", "abs": "abs", "invert": "bitwise_not", "pos": "positive"}.items():
    setattr(FakeTensor, f"__{_op}__", (lambda m: lambda self: _infer(m, (self,), {}))(getattr(torch.Tensor, _method)))
FakeTensor.__hash__ = object.__hash__
del _op, _method, _target
