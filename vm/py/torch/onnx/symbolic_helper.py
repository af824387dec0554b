"""``torch.onnx.symbolic_helper``: the decorators export rules are written
with. They only convert arguments during an export, which fxvm never runs,
so they leave the rule unchanged."""

__all__ = ["parse_args", "quantized_args"]


def parse_args(*arg_descriptors):
    """Declares how an export rule's arguments parse (``"v"``, ``"i"``, ``"f"``…)."""

    def decorator(fn):
        fn._arg_descriptors = arg_descriptors
        return fn

    return decorator


def quantized_args(*arg_q_descriptors, scale=None, zero_point=None, quantize_output=True):
    def decorator(fn):
        return fn

    return decorator
