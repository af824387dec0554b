"""``torch.finfo`` and ``torch.iinfo``: the numeric limits of each dtype."""

import torch

__all__ = ["finfo", "iinfo"]

# bits, eps, max, smallest normal, resolution (10 ** -decimal digits), min
# (-max but for the unsigned float8_e8m0fnu); fxvm stores tensors of the
# first four only, the float8 limits are for code that reads them.
_FLOATS = {
    "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001, -65504.0),
    "bfloat16": (16, 0.0078125, 3.3895313892515355e38, 1.1754943508222875e-38, 0.01, -3.3895313892515355e38),
    "float32": (
        32,
        1.1920928955078125e-07,
        3.4028234663852886e38,
        1.1754943508222875e-38,
        1e-06,
        -3.4028234663852886e38,
    ),
    "float64": (
        64,
        2.220446049250313e-16,
        1.7976931348623157e308,
        2.2250738585072014e-308,
        1e-15,
        -1.7976931348623157e308,
    ),
    "float8_e4m3fn": (8, 0.125, 448.0, 0.015625, 1.0, -448.0),
    "float8_e5m2": (8, 0.25, 57344.0, 6.103515625e-05, 1.0, -57344.0),
    "float8_e4m3fnuz": (8, 0.125, 240.0, 0.0078125, 1.0, -240.0),
    "float8_e5m2fnuz": (8, 0.25, 57344.0, 3.0517578125e-05, 1.0, -57344.0),
    "float8_e8m0fnu": (8, 1.0, 1.7014118346046923e38, 5.877471754111438e-39, 1.0, 5.877471754111438e-39),
}
# A complex dtype's limits are its real part's.
_COMPLEX_PARTS = {"complex32": "float16", "complex64": "float32", "complex128": "float64"}
_INTS = {
    "uint16": (16, 0, 65535),
    "uint32": (32, 0, 4294967295),
    "uint64": (64, 0, 18446744073709551615),
    "uint8": (8, 0, 255),
    "int8": (8, -128, 127),
    "int16": (16, -32768, 32767),
    "int32": (32, -2147483648, 2147483647),
    "int64": (64, -9223372036854775808, 9223372036854775807),
}


def _name(dtype):
    return str(dtype).replace("torch.", "")


class finfo:
    def __init__(self, type=None):
        dtype = torch.get_default_dtype() if type is None else type
        name = _COMPLEX_PARTS.get(_name(dtype), _name(dtype))
        if name not in _FLOATS:
            raise TypeError(f"torch.finfo() requires a floating point input type. Use torch.iinfo to handle '{name}'")
        self.bits, self.eps, self.max, self.smallest_normal, self.resolution, self.min = _FLOATS[name]
        self.tiny = self.smallest_normal
        self.dtype = name

    def __repr__(self):
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )


class iinfo:
    def __init__(self, type):
        if _name(type) not in _INTS:
            raise TypeError(f"torch.iinfo() requires an integer input type. Use torch.finfo to handle '{_name(type)}'")
        self.bits, self.min, self.max = _INTS[_name(type)]
        self.dtype = _name(type)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
