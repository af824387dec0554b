"""Patching for the duration of a trace: dict entries (module globals) and
class attributes, each recorded so that leaving the ``with`` block reverts
them in reverse order, also when tracing raises."""

import builtins
import inspect

__all__ = ["Patcher", "patch_function_args"]


class Patcher:
    def __init__(self):
        # (kind, target, name, original)
        self.patches_made = []
        self.visited = set()

    def patch(self, frame_dict, name, new_fn, deduplicate=True):
        """Sets ``frame_dict[name] = new_fn`` (a global; builtins are shadowed)."""
        new_fn.__fx_already_patched = deduplicate
        if name not in frame_dict and hasattr(builtins, name):
            self.patches_made.append(("del", frame_dict, name, None))
        elif getattr(frame_dict[name], "__fx_already_patched", False):
            return
        else:
            self.patches_made.append(("item", frame_dict, name, frame_dict[name]))
        frame_dict[name] = new_fn

    def patch_method(self, cls, name, new_fn, deduplicate=True):
        """Sets the class attribute ``cls.name = new_fn``."""
        new_fn.__fx_already_patched = deduplicate
        orig_fn = getattr(cls, name)
        if getattr(orig_fn, "__fx_already_patched", False):
            return
        self.patches_made.append(("attr", cls, name, orig_fn))
        setattr(cls, name, new_fn)

    def visit_once(self, thing):
        """True the first time ``thing`` is seen by this patcher."""
        idx = id(thing)
        if idx in self.visited:
            return False
        self.visited.add(idx)
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.patches_made:
            kind, target, name, orig = self.patches_made.pop()
            if kind == "del":
                del target[name]
            elif kind == "item":
                target[name] = orig
            else:
                setattr(target, name, orig)
        self.visited.clear()


def patch_function_args(fn, nargs):
    """``fn`` taking its ``*args``/``**kwargs`` as ``nargs`` plain positional
    parameters (its code object rewritten: counts and flags)."""
    co = fn.__code__
    flags = co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    code = co.replace(co_argcount=nargs, co_posonlyargcount=0, co_kwonlyargcount=0, co_flags=flags)
    return type(fn)(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
