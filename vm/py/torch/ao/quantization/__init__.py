"""``torch.ao.quantization``: the float-model side of eager-mode
quantization. Model definitions place ``QuantStub``/``DeQuantStub`` at their
borders; before conversion both pass tensors through unchanged, as here.
Preparing and converting models (quantized kernels) is not available in
fxvm: those names raise an AttributeError saying so."""

from torch import nn

__all__ = ["DeQuantStub", "QuantStub"]


class _Stub(nn.Module):
    """A border of the quantized region: the identity until converted."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class QuantStub(_Stub):
    """Where a float model's input would be quantized."""


class DeQuantStub(_Stub):
    """Where a quantized model's output would return to float."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"torch.ao.quantization.{name}: quantization is not available in fxvm (float models only)")
