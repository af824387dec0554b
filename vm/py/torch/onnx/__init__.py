"""``torch.onnx``: fxvm does not export ONNX. Libraries register their
export rules at import time (torchvision's ``_register_onnx_ops``), so the
registration API is here and records them; ``export`` raises, naming what
fxvm offers instead."""

__all__ = [
    "TensorProtoDataType",
    "export",
    "is_in_onnx_export",
    "register_custom_op_symbolic",
    "unregister_custom_op_symbolic",
]

# (operator, opset) -> symbolic function, as libraries registered them.
_custom_symbolics = {}


class TensorProtoDataType:
    """ONNX's element type codes (``onnx.TensorProto.DataType``)."""

    UNDEFINED = 0
    FLOAT = 1
    UINT8 = 2
    INT8 = 3
    UINT16 = 4
    INT16 = 5
    INT32 = 6
    INT64 = 7
    STRING = 8
    BOOL = 9
    FLOAT16 = 10
    DOUBLE = 11
    UINT32 = 12
    UINT64 = 13
    COMPLEX64 = 14
    COMPLEX128 = 15
    BFLOAT16 = 16


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Records how ``namespace::op`` would export at ``opset_version``."""
    if "::" not in symbolic_name:
        raise ValueError(
            f"Failed to register operator {symbolic_name}. The symbolic name must match the format "
            "domain::name, and should start with a letter and contain only alphanumerical characters"
        )
    _custom_symbolics[(symbolic_name, opset_version)] = symbolic_fn


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    _custom_symbolics.pop((symbolic_name, opset_version), None)


def is_in_onnx_export():
    """Whether an ONNX export is running: never, in fxvm."""
    return False


def export(model, args=(), f=None, *pargs, **kwargs):
    raise NotImplementedError(
        "torch.onnx.export is not available in fxvm: it does not export ONNX. "
        "torch.fx.symbolic_trace(model) captures the model as a graph (fxvm trace on the command line)."
    )


dynamo_export = export
