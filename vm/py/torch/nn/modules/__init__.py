"""The standard layers, laid out as in PyTorch (``torch.nn.modules.linear``…)
so that ``type(m).__module__`` reads the same."""

from torch.nn.modules.module import Module
from torch.nn.modules.container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from torch.nn.modules.linear import Identity, Linear, Bilinear, NonDynamicallyQuantizableLinear
from torch.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from torch.nn.modules.activation import (
    ReLU,
    ReLU6,
    LeakyReLU,
    GELU,
    SiLU,
    Mish,
    Sigmoid,
    Tanh,
    ELU,
    Hardtanh,
    Softplus,
    Softmax,
    LogSoftmax,
    MultiheadAttention,
    CELU,
    SELU,
    GLU,
    Hardsigmoid,
    Hardswish,
    LogSigmoid,
    Hardshrink,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
    Softmin,
    Softmax2d,
    PReLU,
    RReLU,
)
from torch.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm
from torch.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from torch.nn.modules.normalization import LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm, CrossMapLRN2d
from torch.nn.modules.upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from torch.nn.modules.dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout
from torch.nn.modules.sparse import Embedding, EmbeddingBag
from torch.nn.modules.flatten import Flatten, Unflatten
from torch.nn.modules.fold import Fold, Unfold
from torch.nn.modules.pooling import (
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
)
from torch.nn.modules.loss import (
    CrossEntropyLoss,
    NLLLoss,
    NLLLoss2d,
    MSELoss,
    L1Loss,
    BCELoss,
    BCEWithLogitsLoss,
    SmoothL1Loss,
    HuberLoss,
    KLDivLoss,
    MarginRankingLoss,
    HingeEmbeddingLoss,
    SoftMarginLoss,
    CosineEmbeddingLoss,
    PoissonNLLLoss,
    GaussianNLLLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    MultiLabelMarginLoss,
    CTCLoss,
    LinearCrossEntropyLoss,
)
from torch.nn.modules.adaptive import AdaptiveLogSoftmaxWithLoss
from torch.nn.modules.padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from torch.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from torch.nn.modules.channelshuffle import ChannelShuffle
from torch.nn.modules.distance import PairwiseDistance, CosineSimilarity
from torch.nn.modules.transformer import (
    Transformer,
    TransformerEncoder,
    TransformerDecoder,
    TransformerEncoderLayer,
    TransformerDecoderLayer,
)
from torch.nn.modules.rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell

# `from torch.nn.modules import *` gives the layers, not this package's submodules.
__all__ = [name for name, value in globals().items() if isinstance(value, type) and not name.startswith("_")]

# Made on first use: it is a dataclass, and importing dataclasses (with
# inspect, dis and tokenize behind it) would double the time of `import torch`.
_LAZY = {"LinearCrossEntropyOptions": "torch.nn.modules.linear_cross_entropy_options"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
