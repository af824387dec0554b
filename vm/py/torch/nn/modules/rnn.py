import math
import numbers
import warnings

import torch
from torch.nn import init
from torch.nn.parameter import Parameter
from torch.nn.modules.module import Module
from torch import Tensor

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
# The native stack each mode runs (torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu).
_STACKS = {"LSTM": "lstm", "GRU": "gru", "RNN_TANH": "rnn_tanh", "RNN_RELU": "rnn_relu"}


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """Parameters and checks shared by RNN, LSTM and GRU: per layer and
    direction ``weight_ih_l{k}``, ``weight_hh_l{k}``, biases and (LSTM)
    ``weight_hr_l{k}``, with ``_reverse`` for the backward direction."""

    __constants__ = [
        "mode",
        "input_size",
        "hidden_size",
        "num_layers",
        "bias",
        "batch_first",
        "dropout",
        "bidirectional",
        "proj_size",
    ]

    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                f"dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}"
            )
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [("weight_ih", (gate_size, layer_input_size)), ("weight_hh", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for kind, shape in shapes:
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(torch.empty(shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """Weights are always used in place; nothing to compact."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes):
        if input.dtype != self._flat_weights[0].dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({self._flat_weights[0].dtype}). Convert input: input.to({self._flat_weights[0].dtype}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _zeros(self, batch, size, input):
        directions = 2 if self.bidirectional else 1
        return torch.zeros(self.num_layers * directions, batch, size, dtype=input.dtype)

    def _unpack(self, input, hx, dims_message, state_dims):
        """The input as the stack takes it: ``(data, batch_sizes, sorted,
        unsorted, batched)``, with ``hx`` (a tensor or a tuple) reordered or
        given a batch dim to match."""
        from torch.nn.utils.rnn import PackedSequence

        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            if hx is not None:
                hx = self._each(hx, lambda h: self.permute_hidden(h, sorted_indices))
            return data, batch_sizes, sorted_indices, unsorted_indices, True, hx
        if input.dim() not in (2, 3):
            raise ValueError(dims_message.format(input.dim()))
        batched = input.dim() == 3
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            if hx is not None:
                if any(h.dim() != 2 for h in self._states(hx)):
                    raise RuntimeError(state_dims(2, hx))
                hx = self._each(hx, lambda h: h.unsqueeze(1))
        elif hx is not None and any(h.dim() != 3 for h in self._states(hx)):
            raise RuntimeError(state_dims(3, hx))
        return input, None, None, None, batched, hx

    @staticmethod
    def _states(hx):
        return hx if isinstance(hx, tuple) else (hx,)

    @staticmethod
    def _each(hx, f):
        return tuple(f(h) for h in hx) if isinstance(hx, tuple) else f(hx)

    def _run(self, input, hx, dims_message, state_dims):
        """Checks, runs the native stack, and shapes the result as the input came."""
        from torch.nn.utils.rnn import PackedSequence

        data, batch_sizes, sorted_indices, unsorted_indices, batched, hx = self._unpack(
            input, hx, dims_message, state_dims
        )
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = data.size(0) if self.batch_first else data.size(1)
        if hx is None:
            hx = self._initial_state(batch, data)
        self.check_forward_args(data, hx, batch_sizes)
        stack = getattr(torch, _STACKS[self.mode])
        states = list(self._states(hx)) if self.mode == "LSTM" else hx
        result = stack(
            data,
            states,
            self._flat_weights,
            self.bias,
            self.num_layers,
            self.dropout,
            self.training,
            self.bidirectional,
            self.batch_first,
            batch_sizes=batch_sizes,
        )
        output, states = result[0], result[1:]
        hidden = states if isinstance(hx, tuple) else states[0]
        if batch_sizes is not None:
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
        elif not batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = self._each(hidden, lambda h: h.squeeze(1))
        return output, self._each(hidden, lambda h: self.permute_hidden(h, unsorted_indices))

    def _initial_state(self, batch, input):
        return self._zeros(batch, self.hidden_size, input)


def _state_dims(name):
    def message(dims, hx):
        kind = "unbatched 2-D" if dims == 2 else "batched 3-D"
        return f"For {kind} input, hx should also be {dims}-D but got {hx.dim()}-D tensor"

    return message


class RNN(RNNBase):
    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        nonlinearity="tanh",
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
        **kwargs,
    ):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"RNN.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        self.nonlinearity = nonlinearity
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(
            mode, input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0, device, dtype
        )

    def forward(self, input, hx=None):
        return self._run(input, hx, "RNN: Expected input to be 2D or 3D, got {}D tensor instead", _state_dims("hx"))


class LSTM(RNNBase):
    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            proj_size,
            device,
            dtype,
        )

    def get_expected_cell_size(self, input, batch_sizes):
        num_layers, mini_batch, _ = self.get_expected_hidden_size(input, batch_sizes)
        return (num_layers, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0], self.get_expected_hidden_size(input, batch_sizes), "Expected hidden[0] size {}, got {}"
        )
        self.check_hidden_size(
            hidden[1], self.get_expected_cell_size(input, batch_sizes), "Expected hidden[1] size {}, got {}"
        )

    def _initial_state(self, batch, input):
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self._zeros(batch, real_hidden_size, input), self._zeros(batch, self.hidden_size, input))

    def forward(self, input, hx=None):
        def state_dims(dims, hx):
            kind = "unbatched 2-D" if dims == 2 else "batched 3-D"
            return f"For {kind} input, hx and cx should also be {dims}-D but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"

        if hx is not None and not isinstance(hx, tuple):
            hx = tuple(hx)
        return self._run(input, hx, "LSTM: Expected input to be 2D or 3D, got {}D instead", state_dims)


class GRU(RNNBase):
    def __init__(
        self,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        device=None,
        dtype=None,
        **kwargs,
    ):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"GRU.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")
        super().__init__(
            "GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0, device, dtype
        )

    def forward(self, input, hx=None):
        return self._run(input, hx, "GRU: Expected input to be 2D or 3D, got {}D instead", _state_dims("hx"))


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(torch.empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(torch.empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(torch.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(torch.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batch(self, input, hx):
        """`(input, hx, batched)` with a batch dim added to unbatched input."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = hx if isinstance(hx, tuple) else (hx,)
        for h in states:
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            if hx is not None:
                hx = tuple(h.unsqueeze(0) for h in hx) if isinstance(hx, tuple) else hx.unsqueeze(0)
        return input, hx, batched


class RNNCell(RNNCellBase):
    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None) -> Tensor:
        input, hx, batched = self._batch(input, hx)
        if hx is None:
            hx = torch.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        if self.nonlinearity == "tanh":
            ret = torch.rnn_tanh_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        elif self.nonlinearity == "relu":
            ret = torch.rnn_relu_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None) -> tuple[Tensor, Tensor]:
        input, hx, batched = self._batch(input, hx)
        if hx is None:
            zeros = torch.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros)
        h, c = torch.lstm_cell(input, list(hx), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None) -> Tensor:
        input, hx, batched = self._batch(input, hx)
        if hx is None:
            hx = torch.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        ret = torch.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if batched else ret.squeeze(0)
