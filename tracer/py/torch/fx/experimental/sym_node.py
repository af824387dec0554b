"""``SymNode``: what a ``torch.SymInt``/``SymFloat``/``SymBool`` holds — an
expression of the native engine (``torch._C._symbolic.SymExpr``: canonical
forms, PyTorch's division rules, printing), its Python type, and the
``ShapeEnv`` whose example values answer when the value is forced (which
records a guard). The user types' magic methods are made here from tables,
as PyTorch makes them: a binary method wraps a plain int/float/bool operand
as a constant node (anything else is NotImplemented), a reflected one swaps
the operands, and a result that folded to a constant comes back as a plain
Python value."""

import sys

import torch
from torch.fx._native import load

SymExpr = load("torch._C._symbolic").SymExpr

__all__ = ["SymNode", "magic_methods", "reflectable_magic_methods", "bool_magic_methods"]

# Binary methods of SymInt/SymFloat, by the name their dunder takes.
magic_methods = (
    "add",
    "sub",
    "mul",
    "mod",
    "pow",
    "and",
    "or",
    "truediv",
    "floordiv",
    "sym_min",
    "sym_max",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
)
# Those that also get a reflected form (`__radd__`).
reflectable_magic_methods = ("add", "sub", "mul", "mod", "pow", "and", "or", "truediv", "floordiv")
# The methods of SymBool.
bool_magic_methods = ("and", "or", "sym_not", "eq", "ne")
unary_magic_methods = ("neg", "sym_not", "sym_float", "floor", "ceil", "trunc")
_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


def _user_frame():
    """The file and line of the nearest caller outside torch (for guards)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith("torch") or "/torch/" in name):
            return name, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


class SymNode:
    def __init__(self, expr, shape_env, pytype, hint=None, constant=None):
        self._expr = expr
        self.shape_env = shape_env
        self.pytype = pytype
        self._hint = hint
        # Set only on nodes made from plain values (`wrap_int`): a folded
        # arithmetic result stays a SymInt, as in PyTorch.
        self.constant = constant

    @property
    def expr(self):
        """The expression with the ShapeEnv's replacements applied (a symbol
        a guard pinned to a value prints and computes as that value)."""
        if self.shape_env is not None and self.shape_env.replacements:
            self._expr = self.shape_env.replace(self._expr)
        return self._expr

    @property
    def hint(self):
        if self._hint is None and self.shape_env is not None:
            self._hint = self.shape_env.size_hint(self.expr)
        return self._hint

    def is_int(self):
        return self.pytype is int

    def is_float(self):
        return self.pytype is float

    def is_bool(self):
        return self.pytype is bool

    def _str(self):
        return str(self.expr)

    def str(self):
        return self._str()

    def __repr__(self):
        return self._str()

    def maybe_as_int(self):
        c = self.expr.constant()
        return c if type(c) is int else None

    def with_expr(self, expr, pytype):
        return SymNode(expr, self.shape_env, pytype)

    def wrap_int(self, num):
        return SymNode(SymExpr(num), self.shape_env, int, num, constant=num)

    def wrap_float(self, num):
        return SymNode(SymExpr(num), self.shape_env, float, num, constant=num)

    def wrap_bool(self, num):
        return SymNode(SymExpr(num), self.shape_env, bool, num, constant=num)

    # Arithmetic, each returning a node of the result's Python type.

    def _arith(self, name, other, pytype=None):
        a, b = self.expr, other.expr
        if self.pytype is not other.pytype and bool not in (self.pytype, other.pytype):
            # Where an int meets a float, the int becomes one (`ToFloat`).
            a, b = (a.to_float(), b) if self.pytype is int else (a, b.to_float())
        result = getattr(a, name)(b)
        if pytype is None:
            pytype = int if (self.pytype is int and other.pytype is int) else float
        return self.with_expr(result, pytype)

    def add(self, other):
        return self._arith("add", other)

    def sub(self, other):
        return self._arith("sub", other)

    def mul(self, other):
        return self._arith("mul", other)

    def mod(self, other):
        return self._arith("mod", other)

    def floordiv(self, other):
        return self._arith("floordiv", other)

    def truediv(self, other):
        return self._arith("truediv", other, float)

    def pow(self, other):
        exponent = other._expr.constant()
        natural = self.pytype is int and type(exponent) is int and exponent >= 0
        return self._arith("pow", other, int if natural else float)

    def sym_min(self, other):
        return self._arith("sym_min", other)

    def sym_max(self, other):
        return self._arith("sym_max", other)

    def and_(self, other):
        return self.with_expr(self.expr.and_(other.expr), bool)

    def or_(self, other):
        return self.with_expr(self.expr.or_(other.expr), bool)

    def _compare(self, relation, other):
        return self.with_expr(self.expr.compare(relation, other.expr), bool)

    def eq(self, other):
        return self._compare("eq", other)

    def ne(self, other):
        return self._compare("ne", other)

    def lt(self, other):
        return self._compare("lt", other)

    def le(self, other):
        return self._compare("le", other)

    def gt(self, other):
        return self._compare("gt", other)

    def ge(self, other):
        return self._compare("ge", other)

    def neg(self):
        return self.with_expr(self.expr.neg(), self.pytype)

    def sym_not(self):
        return self.with_expr(self.expr.sym_not(), bool)

    def sym_float(self):
        return self.with_expr(self.expr.to_float(), float)

    def floor(self):
        return self.with_expr(self.expr.round_to_int("floor"), int)

    def ceil(self):
        return self.with_expr(self.expr.round_to_int("ceil"), int)

    def trunc(self):
        return self.with_expr(self.expr.round_to_int("trunc"), int)

    # Forcing a value: the example answers, and a guard is recorded.

    def guard_bool(self, file, line):
        return bool(self.shape_env.evaluate_expr(self.expr, _user_frame()))

    def guard_int(self, file, line):
        return int(self.shape_env.evaluate_expr(self.expr, _user_frame()))

    def guard_float(self, file, line):
        return float(self.shape_env.evaluate_expr(self.expr, _user_frame()))


_PYTYPES = {int: lambda: torch.SymInt, float: lambda: torch.SymFloat, bool: lambda: torch.SymBool}


def wrap_node(node):
    """A node made from a plain value as that value; otherwise the user type
    of its Python type."""
    if node.constant is not None:
        return node.constant
    return _PYTYPES[node.pytype]()(node)


def to_node(self_node, other):
    """``other`` as a node beside ``self_node``; NotImplemented for what is not a number."""
    if isinstance(other, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        return other.node
    if type(other) is bool:
        return self_node.wrap_bool(other)
    if type(other) is int:
        return self_node.wrap_int(other)
    if type(other) is float:
        return self_node.wrap_float(other)
    return NotImplemented


def _node_method(method):
    return {"and": "and_", "or": "or_"}.get(method, method)


def _make_user_magic(method, user_type):
    attr = _node_method(method)
    if method in unary_magic_methods:

        def unary_magic_impl(self):
            return wrap_node(getattr(self.node, attr)())

        setattr(user_type, f"__{method}__", unary_magic_impl)
        return

    def binary_magic_impl(self, other):
        other_node = to_node(self.node, other)
        if other_node is NotImplemented:
            return NotImplemented
        return wrap_node(getattr(self.node, attr)(other_node))

    def rbinary_magic_impl(self, other):
        other_node = to_node(self.node, other)
        if other_node is NotImplemented:
            return NotImplemented
        return wrap_node(getattr(other_node, attr)(self.node))

    setattr(user_type, f"__{method}__", binary_magic_impl)
    if method in reflectable_magic_methods:
        setattr(user_type, f"__r{method}__", rbinary_magic_impl)


for _method in magic_methods + ("neg", "sym_float", "floor", "ceil", "trunc"):
    if _method in ("and", "or"):
        continue
    _make_user_magic(_method, torch.SymInt)
    _make_user_magic(_method, torch.SymFloat)
for _method in bool_magic_methods:
    _make_user_magic(_method, torch.SymBool)
