"""``torch.backends.cuda``: the matmul flags scripts set, kept; CUDA is not built."""


class _Matmul:
    allow_tf32 = False
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _Matmul()


def is_built():
    return False
