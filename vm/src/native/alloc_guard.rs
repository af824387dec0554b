//! `MemoryError` instead of an abort when a builtin object would need more
//! memory than the machine gives (`bytearray(2**62)`, `[None] * 2**40`,
//! `'ab' * 2**61`, `list(range(2**62))`).
//!
//! RustPython sizes these buffers from a Python int and allocates them
//! infallibly, so a refused allocation aborts the process where CPython
//! raises. The guard sits at those allocation sites: the slots of the builtin
//! types that size a buffer from an argument (`*`/`*=` on str, bytes,
//! bytearray, list and tuple; `bytes(n)`, `bytearray(n)`, `list(it)`,
//! `tuple(it)`) are wrapped once per process, and each wrapper first asks
//! the allocator, fallibly, for the buffer the original is about to make.

use std::sync::{Once, OnceLock};

use rustpython_vm::builtins::{PyByteArray, PyBytes, PyInt, PyList, PyStr, PyTuple, PyTypeRef};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::protocol::PySequence;
use rustpython_vm::{PyObject, PyObjectRef, PyResult, VirtualMachine};

type Repeat = fn(PySequence<'_>, isize, &VirtualMachine) -> PyResult;
type New = fn(PyTypeRef, FuncArgs, &VirtualMachine) -> PyResult;
type Init = fn(PyObjectRef, FuncArgs, &VirtualMachine) -> PyResult<()>;
type VectorCall =
    fn(&PyObject, Vec<PyObjectRef>, usize, Option<&[PyObjectRef]>, &VirtualMachine) -> PyResult;

/// Smaller buffers are not probed: failing to get them is not a bad
/// argument but an exhausted machine, which CPython cannot report either.
const PROBE_FROM: usize = 1 << 20;

/// The bytes of one element of a list or tuple.
const POINTER: usize = std::mem::size_of::<PyObjectRef>();

/// `MemoryError` unless the allocator grants `bytes` now (granted memory is
/// returned at once). `None` (the size overflowed) is refused as well.
fn probe(bytes: Option<usize>, vm: &VirtualMachine) -> PyResult<()> {
    match bytes {
        Some(bytes) if bytes < PROBE_FROM => Ok(()),
        Some(bytes) => Vec::<u8>::new()
            .try_reserve_exact(bytes)
            .map_err(|_| vm.new_memory_error("")),
        None => Err(vm.new_memory_error("")),
    }
}

/// The bytes a builtin sequence's elements occupy.
fn sequence_bytes(obj: &PyObject) -> usize {
    if let Some(s) = obj.downcast_ref::<PyStr>() {
        s.byte_len()
    } else if let Some(b) = obj.downcast_ref::<PyBytes>() {
        b.as_bytes().len()
    } else if let Some(b) = obj.downcast_ref::<PyByteArray>() {
        b.borrow_buf().len()
    } else if let Some(l) = obj.downcast_ref::<PyList>() {
        l.borrow_vec().len() * POINTER
    } else if let Some(t) = obj.downcast_ref::<PyTuple>() {
        t.len() * POINTER
    } else {
        0
    }
}

/// Probes the buffer of `seq * n`; a negative or overflowing `n` is left to
/// the original, which raises its own error.
fn probe_repeat(seq: PySequence<'_>, n: isize, vm: &VirtualMachine) -> PyResult<()> {
    match usize::try_from(n) {
        Ok(n) if n > 1 => match sequence_bytes(seq.obj).checked_mul(n) {
            Some(bytes) => probe(Some(bytes), vm),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// The first argument, positional or by `name`.
fn first_arg<'a>(args: &'a FuncArgs, name: &str) -> Option<&'a PyObjectRef> {
    args.args.first().or_else(|| args.kwargs.get(name))
}

/// `bytes(n)`/`bytearray(n)`: probes `n` bytes when the source is an int.
fn probe_count(args: &FuncArgs, vm: &VirtualMachine) -> PyResult<()> {
    match first_arg(args, "source").and_then(|s| s.downcast_ref::<PyInt>()) {
        Some(n) => match n.try_to_primitive::<usize>(vm) {
            Ok(n) => probe(Some(n), vm),
            // Negative or past usize: the original's ValueError/OverflowError.
            Err(_) => Ok(()),
        },
        None => Ok(()),
    }
}

/// `list(it)`/`tuple(it)`: probes the pointers for `it`'s length hint.
fn probe_collect(args: &FuncArgs, vm: &VirtualMachine) -> PyResult<()> {
    probe_hint(args.args.first(), vm)
}

fn probe_hint(iterable: Option<&PyObjectRef>, vm: &VirtualMachine) -> PyResult<()> {
    match iterable.map(|it| vm.length_hint_opt(it.clone())) {
        Some(Ok(Some(len))) => probe(len.checked_mul(POINTER), vm),
        // No argument, no hint, or a hint that raised: the original
        // iterates as it would.
        _ => Ok(()),
    }
}

/// A wrapper for each (type, slot) pair: slots hold plain function pointers,
/// so each wrapper finds its original in its own static.
macro_rules! guarded {
    (repeat $name:ident, $original:ident) => {
        static $original: OnceLock<Repeat> = OnceLock::new();
        fn $name(seq: PySequence<'_>, n: isize, vm: &VirtualMachine) -> PyResult {
            probe_repeat(seq, n, vm)?;
            ($original.get().expect("set before the slot is replaced"))(seq, n, vm)
        }
    };
    (new $name:ident, $original:ident, $probe:ident) => {
        static $original: OnceLock<New> = OnceLock::new();
        fn $name(cls: PyTypeRef, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
            $probe(&args, vm)?;
            ($original.get().expect("set before the slot is replaced"))(cls, args, vm)
        }
    };
    (init $name:ident, $original:ident, $probe:ident) => {
        static $original: OnceLock<Init> = OnceLock::new();
        fn $name(zelf: PyObjectRef, args: FuncArgs, vm: &VirtualMachine) -> PyResult<()> {
            $probe(&args, vm)?;
            ($original.get().expect("set before the slot is replaced"))(zelf, args, vm)
        }
    };
    (vectorcall $name:ident, $original:ident) => {
        static $original: OnceLock<VectorCall> = OnceLock::new();
        fn $name(
            callable: &PyObject,
            args: Vec<PyObjectRef>,
            nargs: usize,
            kwnames: Option<&[PyObjectRef]>,
            vm: &VirtualMachine,
        ) -> PyResult {
            probe_hint(args[..nargs].first(), vm)?;
            ($original.get().expect("set before the slot is replaced"))(
                callable, args, nargs, kwnames, vm,
            )
        }
    };
}

guarded!(repeat str_repeat, STR_REPEAT);
guarded!(repeat bytes_repeat, BYTES_REPEAT);
guarded!(repeat bytearray_repeat, BYTEARRAY_REPEAT);
guarded!(repeat bytearray_irepeat, BYTEARRAY_IREPEAT);
guarded!(repeat list_repeat, LIST_REPEAT);
guarded!(repeat list_irepeat, LIST_IREPEAT);
guarded!(repeat tuple_repeat, TUPLE_REPEAT);
guarded!(new bytes_new, BYTES_NEW, probe_count);
guarded!(new tuple_new, TUPLE_NEW, probe_collect);
guarded!(init bytearray_init, BYTEARRAY_INIT, probe_count);
guarded!(init list_init, LIST_INIT, probe_collect);
// `list(it)` is built by this constructor fast path, not through `init`.
guarded!(vectorcall list_vectorcall, LIST_VECTORCALL);

/// Replaces a slot with its guarded wrapper, keeping the original for it.
macro_rules! wrap {
    ($slot:expr, $original:ident, $wrapper:ident) => {
        if let Some(original) = $slot.load() {
            $original
                .set(original)
                .expect("each slot is wrapped once per process");
            $slot.store(Some($wrapper));
        }
    };
}

/// Wraps the slots (builtin types are shared by every interpreter in the
/// process, so this runs once; subclasses made later inherit the wrappers).
pub(crate) fn install(vm: &VirtualMachine) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let t = &vm.ctx.types;
        wrap!(t.str_type.slots.as_sequence.repeat, STR_REPEAT, str_repeat);
        wrap!(
            t.bytes_type.slots.as_sequence.repeat,
            BYTES_REPEAT,
            bytes_repeat
        );
        wrap!(
            t.bytearray_type.slots.as_sequence.repeat,
            BYTEARRAY_REPEAT,
            bytearray_repeat
        );
        wrap!(
            t.bytearray_type.slots.as_sequence.inplace_repeat,
            BYTEARRAY_IREPEAT,
            bytearray_irepeat
        );
        wrap!(
            t.list_type.slots.as_sequence.repeat,
            LIST_REPEAT,
            list_repeat
        );
        wrap!(
            t.list_type.slots.as_sequence.inplace_repeat,
            LIST_IREPEAT,
            list_irepeat
        );
        wrap!(
            t.tuple_type.slots.as_sequence.repeat,
            TUPLE_REPEAT,
            tuple_repeat
        );
        wrap!(t.bytes_type.slots.new, BYTES_NEW, bytes_new);
        wrap!(t.tuple_type.slots.new, TUPLE_NEW, tuple_new);
        wrap!(t.bytearray_type.slots.init, BYTEARRAY_INIT, bytearray_init);
        wrap!(t.list_type.slots.init, LIST_INIT, list_init);
        wrap!(
            t.list_type.slots.vectorcall,
            LIST_VECTORCALL,
            list_vectorcall
        );
    });
}
