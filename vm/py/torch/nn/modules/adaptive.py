"""Adaptive softmax (Grave et al., 2016): frequent classes in a head
softmax, the rest in clusters reached through one head entry each, every
cluster behind a low-rank projection."""

import collections
import itertools

import torch
from torch.nn import functional as F
from torch.nn.modules.container import ModuleList, Sequential
from torch.nn.modules.linear import Linear
from torch.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        ordered = cutoffs == sorted(cutoffs) and len(set(cutoffs)) == len(cutoffs)
        if not ordered or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 or any(int(c) != c for c in cutoffs):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
                "where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i, (start, stop) in enumerate(itertools.pairwise(self.cutoffs)):
            hidden = int(in_features // (div_value ** (i + 1)))
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                    Linear(hidden, stop - start, bias=False, device=device, dtype=dtype),
                )
            )

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection, output in self.tail:
            projection.reset_parameters()
            output.reset_parameters()

    def forward(self, input_, target_) -> _ASMoutput:
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(
                    f"1D target tensor expects 2D input tensors, but found inputs with size {input_.size()}"
                )
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    f"0D target tensor expects 1D input tensors, but found inputs with size {input_.size()}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch = target.size(0)
        # Each row's log-probability within its cluster (0 in the shortlist),
        # and the head entry it adds: its class, or its cluster's entry.
        output = input.new_zeros(batch)
        head_index = target.new_empty(batch)
        used = 0
        bounds = [0] + self.cutoffs
        for i, (low, high) in enumerate(itertools.pairwise(bounds)):
            in_range = (target >= low) & (target < high)
            rows = in_range.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:
                head_index.index_copy_(0, rows, target[in_range])
            else:
                logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                head_index.index_fill_(0, rows, self.shortlist_size + i - 1)
                within = logprob.gather(1, (target[in_range] - low).unsqueeze(1))
                output.index_copy_(0, rows, within.squeeze(1))
            used += rows.numel()
        if used != batch:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, : self.shortlist_size] = head_logprob[:, : self.shortlist_size]
        for i, (start, stop) in enumerate(itertools.pairwise(self.cutoffs)):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        head_output = self.head(input)
        output = torch.argmax(head_output, dim=1)
        outside = output >= self.shortlist_size
        if not outside.any():
            return output
        if outside.all():
            return torch.argmax(self._get_full_log_prob(input, head_output), dim=1)
        log_prob = self._get_full_log_prob(input[outside], head_output[outside])
        output[outside] = torch.argmax(log_prob, dim=1)
        return output
