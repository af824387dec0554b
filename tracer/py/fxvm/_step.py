"""A captured training step: a function that calls ``backward()`` cannot be
traced into a graph, so ``global_function``/``torch.compile`` record it
instead. Its first call runs eagerly (optimizers make their state); the
second runs eagerly too while every registry op it runs — forward, the
backward pass's formulas, gradients accumulated — goes on a tape; later
calls whose inputs fit replay the tape natively, with no Python and no
autograd bookkeeping, except the Python a replay must run again live (an
optimizer's or a scheduler's ``step``, so learning rates stay live).

What the tape cannot follow makes the function run eagerly from then on,
with one warning saying why: Python reading a tensor's value
(``loss.item()`` — return the tensor instead), a tensor computed in the
step kept after it (in an attribute or a list), a hook on a gradient.
Python that only counts or logs runs at the recording only, as in
OneFlow's and TensorFlow's functions."""

import time

import torch
from torch.fx._native import replay as _replay
from torch.utils._pytree import tree_flatten, tree_unflatten


def calls_backward(code):
    """Whether ``code`` (or a function defined in it) names ``backward``."""
    if "backward" in code.co_names:
        return True
    return any(calls_backward(c) for c in code.co_consts if hasattr(c, "co_names"))


class StepEntry:
    """One recorded tape: what the call it was recorded from had, and the
    live calls it makes."""

    def __init__(self, tape, calls, live, constants, spec, epoch, capture_time):
        self._run = tape
        self.calls_live = [fn for _, fn in calls]
        self.live_args = [provider for provider, _ in live]
        # Optimizers updated natively: as they were (no hooks, same groups
        # and state).
        self.optimizers = list({id(o): (o, getattr(o, "_version", 0)) for _, o in live}.values())
        self.constants = constants
        self.spec = spec
        self.epoch = epoch
        self.capture_time = capture_time
        self.calls = 0
        self.replay_time = 0.0

    def violation(self, tensors, constants):
        if torch._C._module_state_epoch() != self.epoch:
            return "a module's mode or members changed since the recording"
        for opt, version in self.optimizers:
            if getattr(opt, "_version", 0) != version or opt._has_step_hooks():
                return f"{type(opt).__name__}'s parameter groups, state or hooks changed since the recording"
        for name, value in self.constants.items():
            given = constants.get(name)
            if type(given) is not type(value) or given != value:
                return f"argument '{name}' was {value!r} when recorded, now {given!r}"
        return self._run.violation(tensors)

    def __call__(self, tensors):
        t0 = time.perf_counter()
        leaves = self._run.run(tensors, self.calls_live, self.live_args)
        self.replay_time += time.perf_counter() - t0
        self.calls += 1
        return self.rebuild(leaves)

    def rebuild(self, tensors):
        leaves, spec = self.spec
        it = iter(tensors)
        return tree_unflatten([next(it) if leaf is None else leaf[0] for leaf in leaves], spec)

    def describe(self):
        return f"Tape: {self._run.steps} steps\n{self._run.describe()}"


def _split(bound):
    """The call's tensor arguments (in order) and the others by name; None
    for tensors inside containers, which a tape does not take."""
    tensors, constants = [], {}
    for name, value in bound.items():
        if isinstance(value, torch.Tensor):
            tensors.append(value)
        else:
            leaves, _ = tree_flatten(value)
            if any(isinstance(v, torch.Tensor) for v in leaves):
                return None, f"argument '{name}' holds tensors in a container"
            constants[name] = value
    return tensors, constants


class StepCapture:
    """The tapes of one function called as a training step."""

    def __init__(self, owner):
        self._owner = owner
        self._warm = False
        self.entries = []

    def __call__(self, args, kwargs, bound, limit):
        owner = self._owner
        # Called inside another step being recorded: its ops go on that tape.
        if torch._C._step_recording():
            return owner._target(*args, **kwargs)
        tensors, constants = _split(bound)
        if tensors is None:
            self._refuse(constants, stacklevel=5)
            return owner._target(*args, **kwargs)
        for entry in self.entries:
            if entry.violation(tensors, constants) is None:
                return entry(tensors)
        if not self._warm:
            # Optimizers make their state at their first step: not part of
            # every step.
            self._warm = True
            return owner._target(*args, **kwargs)
        if len(self.entries) >= limit:
            why = self.entries[-1].violation(tensors, constants)
            owner._run_eagerly(
                f"{len(self.entries)} steps recorded (cache_size_limit); the last mismatch: {why}", stacklevel=4
            )
            return owner._target(*args, **kwargs)
        return self._record(args, kwargs, tensors, constants)

    def _refuse(self, why, stacklevel):
        """The function runs eagerly from now on (with ``fullgraph=True``,
        raises instead)."""
        if self._owner._fullgraph:
            raise RuntimeError(f"fxvm: {self._owner.__qualname__} cannot be captured: {why}")
        self._owner._run_eagerly(f"it cannot be recorded: {why}", stacklevel=stacklevel)

    def _record(self, args, kwargs, tensors, constants):
        owner = self._owner
        t0 = time.perf_counter()
        notes = (torch.compiler._step_calls, torch.compiler._step_live)
        for n in notes:
            n.clear()
        _replay.tape_start(tensors)
        try:
            out = owner._target(*args, **kwargs)
        except BaseException:
            _replay.tape_abort()
            raise
        finally:
            calls, live = (list(n) for n in notes)
            for n in notes:
                n.clear()
        leaves, spec = tree_flatten(out)
        outputs = [v for v in leaves if isinstance(v, torch.Tensor)]
        tape, why = _replay.tape_finish(outputs, [label for label, _ in calls])
        if tape is None:
            self._refuse(why, stacklevel=6)
            return out
        kept = [None if isinstance(v, torch.Tensor) else (v,) for v in leaves]
        entry = StepEntry(
            tape, calls, live, constants, (kept, spec), torch._C._module_state_epoch(), time.perf_counter() - t0
        )
        self.entries.append(entry)
        return out
