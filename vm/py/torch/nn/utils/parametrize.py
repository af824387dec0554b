"""Parametrizations: ``module.<name>`` computed on access from the original
tensor(s) kept in ``module.parametrizations.<name>.original*``, the module's
class swapped for a ``Parametrized<Class>`` subclass that holds the property."""

import contextlib

import torch
from torch.nn.modules.container import ModuleDict, ModuleList
from torch.nn.parameter import Parameter

__all__ = [
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "cached",
    "ParametrizationList",
    "type_before_parametrizations",
]


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to its originals."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        first = modules[0]
        inverse = getattr(first, "right_inverse", None)
        new = inverse(original) if inverse is not None else original
        self.is_tensor = isinstance(new, torch.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            self.register_parameter("original", Parameter(new.data if isinstance(new, torch.Tensor) else new))
        else:
            for i, t in enumerate(new):
                self.register_parameter(f"original{i}", Parameter(t.data))
        if not unsafe:
            # PyTorch evaluates a checked parametrization once here (a
            # spectral norm's power iteration takes one more step).
            value = self()
            if value.dtype != original.dtype:
                raise ValueError(
                    f"Registering a parametrization may not change the dtype of the tensor, unless `unsafe` flag is enabled.\nunparametrized dtype: {original.dtype}\nparametrized dtype: {value.dtype}"
                )
            if value.shape != original.shape:
                raise ValueError(
                    f"Registering a parametrization may not change the shape of the tensor, unless `unsafe` flag is enabled.\nunparametrized shape: {original.shape}\nparametrized shape: {value.shape}"
                )

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _parametrized_class(module):
    cls = module.__class__
    new = type(f"Parametrized{cls.__name__}", (cls,), {"__module__": cls.__module__})
    new.__qualname__ = f"Parametrized{cls.__qualname__}"
    return new


def _add_property(module, name):
    def get(self):
        return self.parametrizations[name]()

    def set_(self, value):
        raise RuntimeError(f"setting a parametrized tensor ('{name}') is not supported")

    setattr(module.__class__, name, property(get, set_))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Makes ``module.<tensor_name>`` the parametrization of its current value."""
    if is_parametrized(module, tensor_name):
        module.parametrizations[tensor_name].append(parametrization)
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with name '{tensor_name}'"
        )
    original = getattr(module, tensor_name)
    plist = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        module.__class__ = _parametrized_class(module)
        module.parametrizations = ModuleDict()
    module.parametrizations[tensor_name] = plist
    _add_property(module, tensor_name)
    return module


def is_parametrized(module, tensor_name=None):
    parametrizations = module.__dict__.get("_modules", {}).get("parametrizations")
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    return tensor_name is None or tensor_name in parametrizations


def type_before_parametrizations(module):
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Restores ``module.<tensor_name>`` as a parameter (its current value,
    or its original when ``leave_parametrized`` is false)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if leave_parametrized:
        value = getattr(module, tensor_name).detach()
    elif plist.is_tensor:
        value = plist.original.detach()
    else:
        raise ValueError(
            "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms of a sequence of tensors."
        )
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    module.register_parameter(tensor_name, Parameter(value))
    if len(module.parametrizations) == 0:
        del module.parametrizations
        module.__class__ = module.__class__.__bases__[0]
    return module


@contextlib.contextmanager
def cached():
    """PyTorch caches parametrized tensors inside this block; fxvm recomputes them."""
    yield
