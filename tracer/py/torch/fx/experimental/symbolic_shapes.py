"""``ShapeEnv``: the symbols standing for sizes, their example values, the
facts known about them, and the guards recorded whenever a symbolic value
was forced to a Python one (``bool(s0 < 5)``, ``int(s0 // 2)``)."""

import hashlib

import torch
from torch.fx.experimental.sym_node import SymExpr, SymNode

__all__ = ["ShapeEnv", "ShapeGuard"]


class ShapeGuard:
    """A fact the traced program relied on, and where it was forced."""

    def __init__(self, expr, file, line):
        self.expr = expr
        self.file = file
        self.line = line

    def __repr__(self):
        return f"ShapeGuard({self.expr}, {self.file}:{self.line})"


class ShapeEnv:
    def __init__(self, specialize_zero_one=True, **kwargs):
        self.specialize_zero_one = specialize_zero_one
        self.var_to_val = {}
        # What is known of each symbol's values: a size is at least 2 once 0
        # and 1 are specialised away (at least 0 otherwise).
        self.var_to_range = {}
        self.source_to_var = {}
        self.unique_ids = set()
        self.guards = []
        # Symbols a guard pinned to a value (`int(2*s0 + 1)` pins s0).
        self.replacements = {}

    def _generate_unique_id(self, source_name):
        # PyTorch's numbering: sha256 of the source's name, modulo 100, probing on.
        attempt = int(hashlib.sha256(source_name.encode()).hexdigest(), 16) % 100
        while attempt in self.unique_ids:
            attempt += 1
        self.unique_ids.add(attempt)
        return attempt

    def create_symbol(self, val, source=None, **kwargs):
        """A symbol for a size whose example value is ``val`` (0 and 1 are
        specialised to constants, as PyTorch does by default)."""
        if self.specialize_zero_one and val in (0, 1):
            return SymExpr(int(val))
        name = getattr(source, "name", None) or f"__size{len(self.var_to_val)}"
        if name in self.source_to_var:
            return self.source_to_var[name]
        symbol = SymExpr.symbol(f"s{self._generate_unique_id(name)}")
        self.source_to_var[name] = symbol
        self.var_to_val[str(symbol)] = val
        self.var_to_range[str(symbol)] = (2 if self.specialize_zero_one else 0, None)
        return symbol

    def create_symintnode(self, sym, *, hint=None, source=None):
        """``sym`` as a ``torch.SymInt`` (a plain int when it is a constant)."""
        c = sym.constant()
        if c is not None:
            return int(c)
        return torch.SymInt(SymNode(sym, self, int, hint))

    def create_symfloatnode(self, sym, *, hint=None, source=None):
        c = sym.constant()
        if c is not None:
            return float(c)
        return torch.SymFloat(SymNode(sym, self, float, hint))

    def size_hint(self, expr):
        """The value of ``expr`` at the example values."""
        return expr.eval(self.var_to_val)

    def evaluate_expr(self, expr, where=("<unknown>", 0)):
        """The value of ``expr`` at the example values; unless it is a
        constant, the program now depends on it, so a guard is recorded
        (the expression, or its negation, holds)."""
        expr = self.replace(expr)
        known = expr.static_truth(self.var_to_range)
        if known is not None:
            return known  # the facts decide it: nothing to guard
        value = expr.eval(self.var_to_val)
        if expr.constant() is None:
            if type(value) is bool:
                guard = expr if value else expr.sym_not()
            else:
                guard = expr.compare("eq", value)
                # An equality on one symbol pins it, as PyTorch's does.
                pinned = expr.solve_linear(value) if type(value) is int else None
                if pinned is not None:
                    self.replacements[pinned[0]] = pinned[1]
            if not any(g.expr.same(guard) for g in self.guards):
                self.guards.append(ShapeGuard(guard, *where))
                self._narrow(guard)
        return value

    def _narrow(self, guard):
        """What the guard says of one symbol's range, kept as a fact: a
        comparison it implies is then decided without a guard."""
        bound = guard.bound()
        if bound is None or bound[0] not in self.var_to_range:
            return
        name, lo, hi = bound
        old_lo, old_hi = self.var_to_range[name]
        if lo is not None and (old_lo is None or lo > old_lo):
            old_lo = lo
        if hi is not None and (old_hi is None or hi < old_hi):
            old_hi = hi
        self.var_to_range[name] = (old_lo, old_hi)

    def replace(self, expr):
        """``expr`` with the pinned symbols put in."""
        return expr.subs(self.replacements) if self.replacements else expr

    def simplify(self, expr):
        return self.replace(expr)

    def format_guards(self):
        return "\n".join(f" - {g.expr}  ({g.file}:{g.line})" for g in self.guards)
