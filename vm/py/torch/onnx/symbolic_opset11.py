"""``torch.onnx.symbolic_opset11``: ONNX opset 11's export rules, which
libraries call from their own rules; fxvm never exports, so naming one
raises."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(f"torch.onnx.symbolic_opset11.{name}: fxvm does not export ONNX")
