"""``numpy.linalg`` over ``torch.linalg``: results in float64 for integer
input (numpy's rule), ``LinAlgError`` for singular matrices."""

import builtins

import torch

from numpy._array import _FLOAT64, _compute, _result, _wrap
from numpy._convert import asarray
from numpy._dtypes import _BY_NAME


class LinAlgError(ValueError):
    """Raised by linalg functions for singular or non-convergent input."""


LinAlgError.__module__ = "numpy.linalg"


def _float(a):
    a = asarray(a)
    info = (
        a._info
        if a._info.kind == "f" and a._info.itemsize >= 4
        else _BY_NAME["float32"]
        if a._info.name == "float16"
        else _FLOAT64
    )
    return _compute(a).to(info.compute), info


def _square(t):
    if t.dim() < 2:
        raise LinAlgError(f"{t.dim()}-dimensional array given. Array must be at least two-dimensional")
    if t.shape[-1] != t.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")


def _call(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except RuntimeError as e:
        if "singular" in str(e) or "not positive-definite" in str(e) or isinstance(e, torch.linalg.LinAlgError):
            raise LinAlgError(
                "Singular matrix" if "singular" in str(e) else "Matrix is not positive definite"
            ) from None
        raise


def inv(a):
    t, info = _float(a)
    _square(t)
    return _result(_call(torch.linalg.inv, t), info)


def solve(a, b):
    ta, info = _float(a)
    _square(ta)
    tb = _compute(asarray(b)).to(ta.dtype)
    return _result(_call(torch.linalg.solve, ta, tb), info)


def det(a):
    t, info = _float(a)
    _square(t)
    return _result(torch.linalg.det(t), info)


def slogdet(a):
    t, info = _float(a)
    _square(t)
    sign, logabs = torch.linalg.slogdet(t)
    return _SlogdetResult(_result(sign, info), _result(logabs, info))


class _SlogdetResult(builtins.tuple):
    def __new__(cls, sign, logabsdet):
        r = builtins.tuple.__new__(cls, (sign, logabsdet))
        return r

    sign = property(lambda self: self[0])
    logabsdet = property(lambda self: self[1])


def norm(x, ord=None, axis=None, keepdims=False):
    t, info = _float(x)
    if axis is None and ord is None:
        r = torch.sqrt((t * t).sum())
        if keepdims:
            r = r.reshape((1,) * t.dim())
        return _result(r, info)
    if axis is None:
        axis = builtins.tuple(builtins.range(t.dim())) if t.dim() <= 2 else None
    if isinstance(axis, builtins.int):
        r = torch.linalg.vector_norm(t, 2 if ord is None else ord, dim=axis, keepdim=keepdims)
    elif builtins.len(axis) == 1:
        r = torch.linalg.vector_norm(t, 2 if ord is None else ord, dim=axis[0], keepdim=keepdims)
    else:
        r = torch.linalg.matrix_norm(t, "fro" if ord is None else ord, dim=builtins.tuple(axis), keepdim=keepdims)
    return _result(r, info)


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    t, info = _float(a)
    if not compute_uv:
        return _result(torch.linalg.svdvals(t), info)
    u, s, vh = torch.linalg.svd(t, full_matrices=full_matrices)
    return _SVDResult(_result(u, info), _result(s, info), _result(vh, info))


def svdvals(x):
    return svd(x, compute_uv=False)


class _SVDResult(builtins.tuple):
    def __new__(cls, U, S, Vh):
        return builtins.tuple.__new__(cls, (U, S, Vh))

    U = property(lambda self: self[0])
    S = property(lambda self: self[1])
    Vh = property(lambda self: self[2])


def eigh(a, UPLO="L"):
    t, info = _float(a)
    _square(t)
    w, v = torch.linalg.eigh(t, UPLO=UPLO)
    return _EighResult(_result(w, info), _result(v, info))


class _EighResult(builtins.tuple):
    def __new__(cls, eigenvalues, eigenvectors):
        return builtins.tuple.__new__(cls, (eigenvalues, eigenvectors))

    eigenvalues = property(lambda self: self[0])
    eigenvectors = property(lambda self: self[1])


def eigvalsh(a, UPLO="L"):
    return eigh(a, UPLO)[0]


def qr(a, mode="reduced"):
    t, info = _float(a)
    q, r = torch.linalg.qr(t, mode=mode)
    if mode == "r":
        return _result(r, info)
    return _QRResult(_result(q, info), _result(r, info))


class _QRResult(builtins.tuple):
    def __new__(cls, Q, R):
        return builtins.tuple.__new__(cls, (Q, R))

    Q = property(lambda self: self[0])
    R = property(lambda self: self[1])


def cholesky(a, /, *, upper=False):
    t, info = _float(a)
    _square(t)
    return _result(_call(torch.linalg.cholesky, t, upper=upper), info)


def pinv(a, rcond=None, hermitian=False, *, rtol=None):
    t, info = _float(a)
    return _result(torch.linalg.pinv(t), info)


def matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    t, info = _float(A)
    if t.dim() < 2:
        return _result(torch.tensor(builtins.int(builtins.bool((t != 0).any()))), _BY_NAME["int64"])
    s = torch.linalg.svdvals(t)
    if tol is None:
        eps = {torch.float32: 1.1920928955078125e-07, torch.float64: 2.220446049250313e-16}[t.dtype]
        tol = s.amax(-1, keepdim=True) * builtins.max(t.shape[-2:]) * eps
    return _result((s > tol).sum(-1), _BY_NAME["int64"])


def matrix_power(a, n):
    t, info = (_compute(asarray(a)), asarray(a)._info)
    _square(t)
    if n < 0:
        t, info = _float(a)
        t = torch.linalg.inv(t)
        n = -n
    return _result(torch.linalg.matrix_power(t, n), info)


def lstsq(a, b, rcond=None):
    ta, info = _float(a)
    tb = _compute(asarray(b)).to(ta.dtype)
    x = torch.linalg.pinv(ta) @ tb
    resid = tb - ta @ x
    residuals = (resid * resid).sum(0) if ta.shape[0] > ta.shape[1] else torch.zeros(0, dtype=ta.dtype)
    rank = matrix_rank(a)
    return (
        _result(x, info),
        _wrap(residuals.reshape(-1) if residuals.dim() else residuals.reshape(1), info),
        rank,
        svd(a, compute_uv=False),
    )


def eig(a):
    raise NotImplementedError(
        "fxvm's numpy has no complex numbers, which general eigenvalues need; use eigh for symmetric matrices"
    )


def eigvals(a):
    return eig(a)


def multi_dot(arrays, *, out=None):
    from numpy._functions import dot

    result = arrays[0]
    for a in arrays[1:]:
        result = dot(result, a)
    return result


def cond(x, p=None):
    s = svd(x, compute_uv=False)
    return s[..., 0] / s[..., -1]


def matmul(x1, x2, /):
    from numpy._ufuncs import matmul

    return matmul(x1, x2)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    t, info = _float(x)
    return _result(torch.linalg.vector_norm(t, ord, dim=axis, keepdim=keepdims), info)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    t, info = _float(x)
    return _result(torch.linalg.matrix_norm(t, ord, keepdim=keepdims), info)
