"""Arrays to and from files and bytes: ``.npy``/``.npz`` (numpy's format,
byte for byte), ``np.memmap``, ``frombuffer``/``fromfile``/``tofile``,
``loadtxt``/``savetxt``."""

import ast
import builtins
import io
import os
import struct

import _fxvm_numpy
from numpy import _dtypes
from numpy._array import _wrap, ndarray
from numpy._convert import asarray
from numpy._dtypes import _info

_MAGIC = b"\x93NUMPY"
_ALIGN = 64
_GROWTH_AXIS_MAX_DIGITS = 21


def _descr(info):
    return info.dtype.str


def _parse_descr(descr):
    """(info, big endian) of a ``.npy`` descr such as ``'<f4'``."""
    if not isinstance(descr, builtins.str):
        raise ValueError(f"fxvm's numpy reads .npy files of plain numeric dtypes, not {descr!r}")
    big = descr.startswith(">") and descr[1:] not in ("b1", "i1", "u1")
    name = descr[1:] if descr[:1] in "<>|=" else descr
    return _info(name), big


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    info = _info(dtype)
    data = memoryview(buffer).cast("B")
    if offset < 0 or offset > builtins.len(data):
        raise ValueError("offset must be non-negative and no greater than buffer length")
    data = data[offset:]
    size = info.itemsize
    if count < 0:
        if builtins.len(data) % size:
            raise ValueError("buffer size must be a multiple of element size")
        count = builtins.len(data) // size
    elif count * size > builtins.len(data):
        raise ValueError("buffer is smaller than requested size")
    t = _fxvm_numpy.tensor_from_bytes(data[: count * size].tobytes(), info.storage, False)
    return _wrap(t, info)


def _read_all(file):
    if isinstance(file, (builtins.str, os.PathLike)):
        with open(file, "rb") as f:
            return f.read()
    return file.read()


def fromfile(file, dtype=float, count=-1, sep="", offset=0, *, like=None):
    if sep:
        text = _read_all(file)
        text = text.decode() if isinstance(text, bytes) else text
        values = [v for v in text.replace(sep, " ").split()]
        info = _info(dtype)
        conv = builtins.float if info.kind == "f" else builtins.int
        from numpy._convert import array

        vals = [conv(v) for v in values]
        return array(vals if count < 0 else vals[:count], dtype=info.dtype)
    data = _read_all(file)
    return frombuffer(data, dtype, count, offset)


def tofile(a, fid, sep="", format="%s"):
    a = asarray(a)
    if sep:
        text = sep.join(format % v for v in a.ravel().tolist())
        if isinstance(fid, (builtins.str, os.PathLike)):
            with open(fid, "w") as f:
                f.write(text)
        else:
            fid.write(text)
        return
    data = a.tobytes()
    if isinstance(fid, (builtins.str, os.PathLike)):
        with open(fid, "wb") as f:
            f.write(data)
    else:
        fid.write(data)


# ------------------------------------------------------------------- .npy


def _header(a, fortran_order=False):
    d = {"descr": _descr(a._info), "fortran_order": fortran_order, "shape": a.shape}
    text = "{" + "".join(f"'{k}': {builtins.repr(v)}, " for k, v in sorted(d.items())) + "}"
    if a.shape:
        text += " " * (_GROWTH_AXIS_MAX_DIGITS - builtins.len(builtins.repr(a.shape[0])))
    header = text.encode("latin1")
    for version, fmt in (((1, 0), "<H"), ((2, 0), "<I")):
        hlen = builtins.len(header) + 1
        prefix_len = builtins.len(_MAGIC) + 2 + struct.calcsize(fmt)
        padlen = _ALIGN - ((prefix_len + hlen) % _ALIGN)
        total = hlen + padlen
        if fmt == "<H" and total >= 1 << 16:
            continue
        return _MAGIC + builtins.bytes(version) + struct.pack(fmt, total) + header + b" " * padlen + b"\n"
    raise ValueError("header does not fit in a .npy file")


def _write_npy(f, arr, allow_pickle=True):
    a = asarray(arr)
    # As numpy: an array laid out column-major (and not also row-major) is
    # written in that order and flagged so.
    fortran = a.flags.f_contiguous and not a.flags.c_contiguous
    f.write(_header(a, fortran))
    f.write(a.T.tobytes() if fortran else a.tobytes())


def _read_header(f):
    magic = f.read(6)
    if magic != _MAGIC:
        raise ValueError(f"the magic string is not correct; expected {_MAGIC!r}, got {magic!r}")
    major, minor = f.read(2)
    if major == 1:
        (hlen,) = struct.unpack("<H", f.read(2))
        prefix = 10
    elif major in (2, 3):
        (hlen,) = struct.unpack("<I", f.read(4))
        prefix = 12
    else:
        raise ValueError(f"we only support format version (1,0), (2,0), and (3,0), not ({major}, {minor})")
    raw = f.read(hlen)
    header = ast.literal_eval(raw.decode("utf8" if major == 3 else "latin1"))
    if not isinstance(header, builtins.dict) or not {"descr", "fortran_order", "shape"} <= set(header):
        raise ValueError(f"Header does not contain the correct keys: {raw!r}")
    return header, prefix + hlen


def _read_npy(f):
    header, _ = _read_header(f)
    info, big = _parse_descr(header["descr"])
    shape = builtins.tuple(header["shape"])
    n = 1
    for s in shape:
        n *= s
    data = f.read(n * info.itemsize)
    if builtins.len(data) != n * info.itemsize:
        raise ValueError(f"EOF: reading array data, expected {n * info.itemsize} bytes got {builtins.len(data)}")
    t = _fxvm_numpy.tensor_from_bytes(data, info.storage, big)
    if header["fortran_order"]:
        return _wrap(
            t.reshape(shape[::-1]).permute(builtins.list(builtins.range(builtins.len(shape) - 1, -1, -1))), info
        )
    return _wrap(t.reshape(shape), info)


def save(file, arr, allow_pickle=True, fix_imports=True):
    if isinstance(file, (builtins.str, os.PathLike)):
        file = os.fspath(file)
        if not file.endswith(".npy"):
            file = file + ".npy"
        with open(file, "wb") as f:
            _write_npy(f, arr)
        return
    _write_npy(file, arr)


class NpzFile:
    """The arrays of an ``.npz`` archive, read on access by name."""

    def __init__(self, fid, own_fid=False, allow_pickle=False):
        import zipfile

        self.zip = zipfile.ZipFile(fid)
        self._files = self.zip.namelist()
        self.files = [f[:-4] if f.endswith(".npy") else f for f in self._files]
        self.allow_pickle = allow_pickle
        self.fid = fid if own_fid else None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.zip is not None:
            self.zip.close()
            self.zip = None
        if self.fid is not None:
            self.fid.close()
            self.fid = None

    def __iter__(self):
        return iter(self.files)

    def __len__(self):
        return builtins.len(self.files)

    def __contains__(self, key):
        return key in self.files

    def keys(self):
        return builtins.list(self.files)

    def values(self):
        return [self[k] for k in self.files]

    def items(self):
        return [(k, self[k]) for k in self.files]

    def get(self, key, default=None):
        return self[key] if key in self.files else default

    def __getitem__(self, key):
        if key in self.files:
            name = self._files[self.files.index(key)]
        elif key in self._files:
            name = key
        else:
            raise KeyError(f"{key} is not a file in the archive")
        data = self.zip.read(name)
        if data.startswith(_MAGIC):
            return _read_npy(io.BytesIO(data))
        return data

    def __repr__(self):
        return f"NpzFile {self.fid!r} with keys: {', '.join(self.files[:5])}{'...' if builtins.len(self.files) > 5 else ''}"


def load(file, mmap_mode=None, allow_pickle=False, fix_imports=True, encoding="ASCII", *, max_header_size=10000):
    own = isinstance(file, (builtins.str, os.PathLike))
    if own and mmap_mode is not None:
        return _open_memmap(os.fspath(file), mmap_mode)
    fid = open(file, "rb") if own else file
    try:
        start = fid.tell()
        magic = fid.read(6)
        fid.seek(start)
        if magic.startswith(b"PK\x03\x04") or magic.startswith(b"PK\x05\x06"):
            keep = own
            own = False
            return NpzFile(fid, own_fid=keep, allow_pickle=allow_pickle)
        if magic == _MAGIC:
            return _read_npy(fid)
        if not allow_pickle:
            raise ValueError(
                "This file contains pickled (object) data. If you trust the file you can load it unsafely using the `allow_pickle=` keyword argument or `pickle.load()`."
            )
        import pickle

        return pickle.load(fid)
    finally:
        if own:
            fid.close()


def _savez(file, args, kwds, compress):
    import zipfile

    # numpy names keyword arrays first, then the positional ones.
    names = builtins.dict(kwds)
    for i, a in builtins.enumerate(args):
        key = f"arr_{i}"
        if key in names:
            raise ValueError(f"Cannot use un-named variables and keyword {key}")
        names[key] = a
    if isinstance(file, (builtins.str, os.PathLike)):
        file = os.fspath(file)
        if not file.endswith(".npz"):
            file = file + ".npz"
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(file, mode="w", compression=method, allowZip64=True) as z:
        for name, value in names.items():
            buf = io.BytesIO()
            _write_npy(buf, value)
            z.writestr(name + ".npy", buf.getvalue())


def savez(file, *args, allow_pickle=True, **kwds):
    _savez(file, args, kwds, False)


def savez_compressed(file, *args, allow_pickle=True, **kwds):
    _savez(file, args, kwds, True)


# ---------------------------------------------------------------- memmap


class memmap(ndarray):
    """An array over a file's bytes. Modes ``r`` and ``c`` map the file
    (pages load as touched; writes stay in memory); ``r+`` and ``w+`` hold
    the elements in memory and ``flush()`` writes them back (as does
    dropping the array)."""

    __slots__ = ("filename", "offset", "mode", "_dirty")

    def __new__(cls, filename, dtype=_dtypes._BY_NAME["uint8"].dtype, mode="r+", offset=0, shape=None, order="C"):
        modes = {"readonly": "r", "copyonwrite": "c", "readwrite": "r+", "write": "w+"}
        mode = modes.get(mode, mode)
        if mode not in ("r", "c", "r+", "w+"):
            raise ValueError(
                f"mode must be one of {['r', 'c', 'r+', 'w+', 'readonly', 'copyonwrite', 'readwrite', 'write']} (got {mode!r})"
            )
        info = _info(dtype)
        path = os.fspath(
            filename.name
            if hasattr(filename, "name") and not isinstance(filename, (builtins.str, os.PathLike))
            else filename
        )
        shp = (
            None
            if shape is None
            else (
                builtins.tuple(shape) if isinstance(shape, (builtins.tuple, builtins.list)) else (builtins.int(shape),)
            )
        )
        count = None
        if shp is not None:
            count = 1
            for s in shp:
                count *= s
        if mode == "w+":
            if shp is None:
                raise ValueError("shape must be given if no data is available")
            with open(path, "wb") as f:
                f.truncate(offset + count * info.itemsize)
        try:
            t = _fxvm_numpy.map_file(path, info.storage, offset, count)
        except OSError:
            # Python's own error (FileNotFoundError, PermissionError…) for the file.
            open(path, "rb").close()
            raise
        if mode in ("r+", "w+"):
            t = t.clone()
        if shp is not None:
            t = (
                t.reshape(shp)
                if order != "F"
                else t.reshape(shp[::-1]).permute(builtins.list(builtins.range(builtins.len(shp) - 1, -1, -1)))
            )
        self = object.__new__(cls)
        self._t = t
        self._info = info
        self._base = None
        self.filename = os.path.abspath(path)
        self.offset = offset
        self.mode = mode
        self._dirty = mode in ("r+", "w+")
        return self

    def flush(self):
        if self._dirty:
            with open(self.filename, "r+b") as f:
                f.seek(self.offset)
                f.write(self.tobytes())

    def __del__(self):
        try:
            self.flush()
        except Exception:
            pass


def _open_memmap(path, mode):
    with open(path, "rb") as f:
        header, data_offset = _read_header(f)
    info, big = _parse_descr(header["descr"])
    if big:
        raise NotImplementedError("fxvm's numpy maps little-endian .npy files only")
    return memmap(
        path, info.dtype, mode, data_offset, builtins.tuple(header["shape"]), "F" if header["fortran_order"] else "C"
    )


# ------------------------------------------------------------------ text


def loadtxt(
    fname,
    dtype=float,
    comments="#",
    delimiter=None,
    converters=None,
    skiprows=0,
    usecols=None,
    unpack=False,
    ndmin=0,
    encoding=None,
    max_rows=None,
    *,
    quotechar=None,
    like=None,
):
    from numpy._convert import array

    if isinstance(fname, (builtins.str, os.PathLike)):
        with open(fname) as f:
            lines = f.read().splitlines()
    else:
        lines = [ln.decode() if isinstance(ln, bytes) else ln for ln in fname]
    info = _info(dtype)
    conv = (
        builtins.float
        if info.kind == "f"
        else (lambda s: builtins.int(builtins.float(s)) if "." in s or "e" in s.lower() else builtins.int(s))
    )
    rows = []
    markers = [comments] if isinstance(comments, builtins.str) else builtins.list(comments or [])
    for line in lines[skiprows:]:
        for c in markers:
            line = line.split(c, 1)[0]
        line = line.strip()
        if not line:
            continue
        fields = line.split(delimiter)
        if usecols is not None:
            cols = [usecols] if isinstance(usecols, builtins.int) else usecols
            fields = [fields[c] for c in cols]
        rows.append([conv(v.strip()) for v in fields])
        if max_rows is not None and builtins.len(rows) >= max_rows:
            break
    a = array(rows, dtype=info.dtype)
    if a.ndim == 2 and a.shape[1] == 1 and ndmin < 2:
        a = a.reshape(-1)
    if a.ndim == 2 and a.shape[0] == 1 and ndmin < 2:
        a = a.reshape(-1)
    while a.ndim < ndmin:
        a = a.reshape((1,) + a.shape) if ndmin == 1 or a.ndim == 0 else a.reshape(a.shape + (1,))
    return a.T if unpack else a


def savetxt(fname, X, fmt="%.18e", delimiter=" ", newline="\n", header="", footer="", comments="# ", encoding=None):
    a = asarray(X)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    lines = []
    if header:
        lines.extend(comments + h for h in header.split("\n"))
    for row in a.tolist():
        if isinstance(fmt, (builtins.list, builtins.tuple)):
            lines.append(delimiter.join(f % v for f, v in zip(fmt, row)))
        elif fmt.count("%") > 1:
            lines.append(fmt % builtins.tuple(row))
        else:
            lines.append(delimiter.join(fmt % v for v in row))
    if footer:
        lines.extend(comments + h for h in footer.split("\n"))
    text = newline.join(lines) + newline
    if isinstance(fname, (builtins.str, os.PathLike)):
        with open(fname, "w") as f:
            f.write(text)
    else:
        fname.write(text if not isinstance(fname, (io.BufferedIOBase, io.RawIOBase)) else text.encode())
