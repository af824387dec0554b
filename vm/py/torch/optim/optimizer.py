"""``Optimizer``: parameter groups with their hyper-parameters, per-parameter
state, step and state-dict hooks, and the state dict format PyTorch saves
(an optimizer checkpoint written by PyTorch loads here and the reverse).
Each optimizer's ``step`` gathers a group's parameters that have a gradient
and hands them to one native update (``torch._optim_<name>_``)."""

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import torch
from torch.utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook", "required"]


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """A hook every optimizer runs before its step: ``hook(optimizer, args, kwargs)``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """A hook every optimizer runs after its step: ``hook(optimizer, args, kwargs)``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _scalar_dtype():
    """The dtype of step counts and one-element state: float64 under a
    float64 default dtype, else float32."""
    return torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32


def _step_tensor(value=0.0):
    return torch.tensor(float(value), dtype=_scalar_dtype())


def _number(x):
    """A hyper-parameter given as a one-element tensor, as a float."""
    return x.item() if isinstance(x, torch.Tensor) else x


def _check_lr(lr):
    if isinstance(lr, torch.Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_fused(defaults):
    if defaults.get("fused"):
        if defaults.get("differentiable"):
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _cast_state(param, value, key=None):
    """A loaded state value moved to the parameter's dtype (floating
    parameters; step counts keep theirs), recursively through containers."""
    if isinstance(value, torch.Tensor):
        if key == "step" or not param.is_floating_point():
            return value
        return value.to(dtype=param.dtype)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, key=k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


def _run_step_hooks(step):
    """``step`` with the global and the optimizer's step hooks around it."""

    def hooked(*args, **kwargs):
        # In a training step being recorded, an update whose rows the tape
        # can carry records natively (its hyperparameters read again at
        # each replay, see `_update`); other Python steps run live.
        if torch._C._step_recording() and (args[0]._has_step_hooks() or not hasattr(args[0], "_hyper")):
            return torch.compiler._run_live(f"{type(args[0]).__name__}.step", run, *args, **kwargs)
        return run(*args, **kwargs)

    def run(*args, **kwargs):
        self = args[0]
        # Most optimizers have no hooks: skip walking four empty dicts.
        if not self._has_step_hooks():
            return step(*args, **kwargs)
        for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            result = pre_hook(self, args, kwargs)
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(
                        f"{step} must return None or a tuple of (new_args, new_kwargs), but got {result}."
                    )
        out = step(*args, **kwargs)
        for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
            post_hook(self, args, kwargs)
        return out

    hooked.__name__ = step.__name__
    hooked.__qualname__ = step.__qualname__
    hooked.__doc__ = step.__doc__
    hooked.__wrapped__ = step
    hooked.hooked = True
    return hooked


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self._init_hooks()
        if isinstance(params, torch.Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but got "
                + torch.typename(params)
            )
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def _has_step_hooks(self):
        return bool(
            _global_optimizer_pre_hooks
            or _global_optimizer_post_hooks
            or self._optimizer_step_pre_hooks
            or self._optimizer_step_post_hooks
        )

    def _update(self, row, group, *tensors):
        """One group's update: the optimizer's native ``row`` over its
        tensors with the group's hyperparameters (``_hyper(group)``), which
        a recorded training step reads again at every replay — a learning
        rate set between steps is the one used."""
        if torch._C._step_recording():
            torch.compiler._live_args(self, functools.partial(self._hyper, group))
        row(*tensors, **self._hyper(group))

    def _init_hooks(self):
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()

    def _patch_step_function(self):
        # As PyTorch: a class's `step` runs the hooks once an instance exists.
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = _run_step_hooks(cls.step)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "_optimizer_step_pre_hooks" not in self.__dict__:
            self._init_hooks()
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    def add_param_group(self, param_group):
        """Adds a group of parameters, its missing options taken from the defaults."""
        self._version = getattr(self, "_version", 0) + 1
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, torch.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            warnings.warn(
                "optimizer parameters need to be organized in ordered collections, but the ordering of tensors in sets "
                "will change between runs. Please use a list instead. This will be an error in a future release.",
                FutureWarning,
                stacklevel=3,
            )
            param_group["params"] = list(params)
        else:
            param_group["params"] = list(params)
        extracted, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                extracted.append(param[1])
            else:
                extracted.append(param)
        param_group["params"] = extracted
        if len(names) != 0:
            if len(names) != len(extracted):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for param in param_group["params"]:
            if not isinstance(param, torch.Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + torch.typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an error; "
                "see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {current} to the optimizer"
                )
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Clears the parameters' gradients: drops them, or zeroes them in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def step(self, closure=None):
        """Updates each parameter that has a gradient (each optimizer's own rule)."""
        raise NotImplementedError

    def _closure_loss(self, closure):
        if closure is None:
            return None
        with torch.enable_grad():
            return closure()

    def _init_state(self, group, p, state):
        """Fills a parameter's state before its first update."""

    def _groups(self):
        """Each group with its parameters that have a gradient, their
        gradients and their states (a new state is filled by the optimizer's
        ``_init_state(group, p, state)``)."""
        for group in self.param_groups:
            yield (group, *self._with_grads(group))

    def _with_grads(self, group):
        """One group's parameters that have a gradient, their gradients and states."""
        if group.get("differentiable"):
            raise NotImplementedError(
                f"{type(self).__name__}(differentiable=True): differentiating through the optimizer step is not supported by fxvm"
            )
        if group.get("capturable"):
            raise AssertionError(
                "If capturable=True, params and state_steps must be on supported devices: "
                "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']."
            )
        params, grads, states = [], [], []
        all_states = self.state
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = all_states[p]
            if not state:
                self._init_state(group, p, state)
            params.append(p)
            grads.append(grad)
            states.append(state)
        return params, grads, states

    def state_dict(self):
        """``{"state": {index: state}, "param_groups": [options + parameter indices]}``."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update(
                {id(p): i for i, p in enumerate(group["params"], start_index) if id(p) not in param_mappings}
            )
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, torch.Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Loads a state dict (this optimizer's, or PyTorch's for the same
        parameters): state tensors are moved to their parameters' dtypes."""
        self._version = getattr(self, "_version", 0) + 1
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups), chain.from_iterable(g["params"] for g in groups)
            )
        )
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast_state(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    def _register(self, hooks, hook, prepend=False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` before each step; it may return new ``(args, kwargs)``."""
        return self._register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` after each step."""
        return self._register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)
