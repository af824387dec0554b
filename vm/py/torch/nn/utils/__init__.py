"""``torch.nn.utils``."""

from torch.nn.utils import rnn, parametrize, parametrizations, stateless
from torch.nn.utils.weight_norm import weight_norm, remove_weight_norm
from torch.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from torch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
