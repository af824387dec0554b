"""``torch.nn.utils``."""

from torch.nn.utils import rnn
from torch.nn.utils.clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from torch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
