"""``torch.utils.data``: datasets, samplers and a single-process ``DataLoader``."""

from torch.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)
from torch.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler
from torch.utils.data.dataloader import DataLoader, default_collate, default_convert

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "default_collate",
    "default_convert",
    "random_split",
]
