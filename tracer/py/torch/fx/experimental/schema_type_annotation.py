"""Annotating node types from Python signatures: the return annotation of
``torch.nn`` modules' ``forward`` and of ``torch.nn.functional`` functions
written in Python become ``node.type`` (shown in generated code)."""

import inspect

import torch
import torch.fx
from torch._jit_internal import boolean_dispatched
from torch.fx import Transformer
from torch.fx._native import fx as _fx

__all__ = ["AnnotateTypesWithSchema"]


class AnnotateTypesWithSchema(Transformer):
    """A Transformer that sets ``node.type`` where the callee's signature
    declares what it returns (modules, functionals, tensor attributes)."""

    def __init__(self, module, annotate_functionals=True, annotate_modules=True, annotate_get_attrs=True):
        super().__init__(module)
        self.annotate_functionals = annotate_functionals
        self.annotate_modules = annotate_modules
        self.annotate_get_attrs = annotate_get_attrs

    def call_function(self, target, args, kwargs):
        returns = None
        if self.annotate_functionals and getattr(target, "__module__", None) == "torch.nn.functional":
            analysed = target
            if target in boolean_dispatched:
                dispatched = boolean_dispatched[target]
                if_true, if_false = dispatched["if_true"], dispatched["if_false"]
                if self._extract_python_return_type(if_true) != self._extract_python_return_type(if_false):
                    return super().call_function(target, args, kwargs)
                analysed = if_true
            returns = self._extract_python_return_type(analysed)
        proxy = super().call_function(target, args, kwargs)
        proxy.node.type = proxy.node.type if proxy.node.type else returns
        return proxy

    def call_module(self, target, args, kwargs):
        returns = None
        submod = self.fetch_attr(target)
        if self.annotate_modules and getattr(torch.nn, submod.__class__.__name__, None) == submod.__class__:
            returns = self._extract_python_return_type(submod.forward)
        proxy = super().call_module(target, args, kwargs)
        proxy.node.type = proxy.node.type if proxy.node.type else returns
        return proxy

    def get_attr(self, target, args, kwargs):
        proxy = super().get_attr(target, args, kwargs)
        if self.annotate_get_attrs:
            value = self.module
            atoms = target.split(".")
            for i, atom in enumerate(atoms):
                if not hasattr(value, atom):
                    raise RuntimeError(f"Node referenced nonextent target {'.'.join(atoms[:i])}!")
                value = getattr(value, atom)
            if isinstance(value, torch.Tensor) and not proxy.node.type:
                proxy.node.type = torch.Tensor
        return proxy

    def _extract_python_return_type(self, target):
        """``target``'s return annotation, or None."""
        try:
            signature = inspect.signature(target)
        except ValueError, TypeError:
            return None
        if signature.return_annotation is not inspect.Signature.empty:
            return signature.return_annotation
        # fxvm's functionals are registry builtins: the registry has it.
        declared = _fx.op_returns(target)
        return None if declared is None else eval(declared, {"Tensor": torch.Tensor, "tuple": tuple})
