"""``torch.ao.quantization``: the float-model side of eager-mode
quantization. Model definitions place ``QuantStub``/``DeQuantStub`` at their
borders; before conversion both pass tensors through unchanged, as here.
Preparing and converting models (quantized kernels) is not available in
fxvm: those names raise an AttributeError saying so."""

from torch import nn

__all__ = ["DeQuantStub", "QuantStub"]


class QuantStub(nn.Module):
    """Where a float model's input would be quantized; the identity until converted."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


class DeQuantStub(nn.Module):
    """Where a quantized model's output would return to float; the identity."""

    def __init__(self, qconfig=None):
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x):
        return x


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"torch.ao.quantization.{name}: quantization is not available in fxvm (float models only)")
