"""``torch._C.DispatchKey``, ``DispatchKeySet`` and the dispatch-key guards,
for code that names keys (torchvision's autocast registrations). fxvm runs
CPU kernels without a key-based dispatcher: the keys are names, and the
guards change nothing."""

__all__ = ["DispatchKey", "DispatchKeySet", "_ExcludeDispatchKeyGuard", "_IncludeDispatchKeyGuard"]

_NAMES = (
    "Undefined CPU CUDA HIP XLA MPS IPU XPU HPU VE Lazy MTIA MAIA PrivateUse1 Meta "
    "BackendSelect Python Fake FuncTorchDynamicLayerBackMode Functionalize Named Conjugate Negative "
    "ZeroTensor ADInplaceOrView AutogradOther AutogradFunctionality AutogradNestedTensor AutogradCPU "
    "AutogradCUDA AutogradXLA AutogradMPS AutogradXPU AutogradHPU AutogradLazy AutogradMTIA AutogradMAIA "
    "AutogradPrivateUse1 AutogradMeta Tracer AutocastCPU AutocastMTIA AutocastMAIA AutocastXPU AutocastMPS "
    "AutocastCUDA AutocastPrivateUse1 FuncTorchBatched BatchedNestedTensor FuncTorchVmapMode Batched VmapMode "
    "FuncTorchGradWrapper PythonTLSSnapshot FuncTorchDynamicLayerFrontMode PreDispatch PythonDispatcher "
    "Dense Sparse SparseCsr Quantized NestedTensor Autograd CompositeImplicitAutograd "
    "CompositeImplicitAutogradNestedTensor CompositeExplicitAutograd CompositeExplicitAutogradNonFunctional"
).split()


class DispatchKey:
    """One dispatch key, ``DispatchKey.AutocastCPU``."""

    __slots__ = ("name", "value")

    def __init__(self, name, value):
        self.name = name
        self.value = value

    def __repr__(self):
        return f"DispatchKey.{self.name}"

    def __int__(self):
        return self.value

    def __hash__(self):
        return hash(self.value)

    def __eq__(self, other):
        return isinstance(other, DispatchKey) and other.value == self.value


for _value, _name in enumerate(_NAMES):
    setattr(DispatchKey, _name, DispatchKey(_name, _value))


class DispatchKeySet:
    """A set of dispatch keys, combined with ``|``, ``&`` and ``-``."""

    def __init__(self, keys=()):
        if isinstance(keys, DispatchKey):
            keys = (keys,)
        elif isinstance(keys, DispatchKeySet):
            keys = keys._keys
        self._keys = frozenset(keys)

    def __or__(self, other):
        return DispatchKeySet(self._keys | DispatchKeySet(other)._keys)

    def __and__(self, other):
        return DispatchKeySet(self._keys & DispatchKeySet(other)._keys)

    def __sub__(self, other):
        return DispatchKeySet(self._keys - DispatchKeySet(other)._keys)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and other._keys == self._keys

    def __hash__(self):
        return hash(self._keys)

    def has(self, key):
        return key in self._keys

    def add(self, key):
        return DispatchKeySet(self._keys | {key})

    def remove(self, key):
        return DispatchKeySet(self._keys - {key})

    def empty(self):
        return not self._keys

    def __repr__(self):
        names = ", ".join(k.name for k in sorted(self._keys, key=lambda k: k.value))
        return f"DispatchKeySet({names})"


class _ExcludeDispatchKeyGuard:
    """Excludes keys from dispatch inside a ``with`` block (no keys to exclude here)."""

    def __init__(self, keyset):
        self.keyset = DispatchKeySet(keyset)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _IncludeDispatchKeyGuard(_ExcludeDispatchKeyGuard):
    """Includes keys in dispatch inside a ``with`` block (no keys to include here)."""
