"""``torch.layout``: how a tensor stores its elements. fxvm's tensors are all
strided; the sparse layouts exist as names, for code that compares against them."""

from torch._named import _TorchName


class layout(_TorchName):
    __module__ = "torch"


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")
