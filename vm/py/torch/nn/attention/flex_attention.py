"""``torch.nn.attention.flex_attention``: attention with a user score
modification and a block-sparse mask, computed eagerly (what PyTorch's
eager path computes; there is no compiled kernel to generate): scores are
``q @ k.T * scale``, ``score_mod(score, b, h, q_idx, kv_idx)`` applied with
broadcast index tensors, masked positions removed, softmax, ``@ v``. A
query row with every key masked gives zeros (and a log-sum-exp of -inf)."""

import math
import typing

import torch

__all__ = [
    "AuxOutput",
    "AuxRequest",
    "BlockMask",
    "and_masks",
    "create_block_mask",
    "create_mask",
    "flex_attention",
    "noop_mask",
    "or_masks",
]

_DEFAULT_SPARSE_BLOCK_SIZE = 128


class AuxRequest(typing.NamedTuple):
    """Which auxiliary outputs ``flex_attention(return_aux=...)`` returns."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(typing.NamedTuple):
    lse: typing.Optional[torch.Tensor] = None
    max_scores: typing.Optional[torch.Tensor] = None


def noop_mask(b, h, q_idx, kv_idx):
    """Keeps every position."""
    return b.new_ones(size=(), dtype=torch.bool)


def and_masks(*mask_mods):
    """A mask keeping what every one of ``mask_mods`` keeps."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=torch.bool)
        for mod in mask_mods:
            result = result & mod(b, h, q_idx, kv_idx)
        return result

    return and_mask


def or_masks(*mask_mods):
    """A mask keeping what any one of ``mask_mods`` keeps."""
    if not all(callable(m) for m in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=torch.bool)
        for mod in mask_mods:
            result = result | mod(b, h, q_idx, kv_idx)
        return result

    return or_mask


def _indices(B, H, Q_LEN, KV_LEN):
    """Index tensors for (batch, head, query, key), broadcasting to the four dims."""
    return (
        torch.arange(B).view(B, 1, 1, 1),
        torch.arange(H).view(1, H, 1, 1),
        torch.arange(Q_LEN).view(1, 1, Q_LEN, 1),
        torch.arange(KV_LEN).view(1, 1, 1, KV_LEN),
    )


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device="cuda"):
    """The dense (B, H, Q_LEN, KV_LEN) mask of a mask_mod (True: keep), or
    of a score_mod (its scores over zeros)."""
    B, H = B or 1, H or 1
    b, h, q, kv = _indices(B, H, Q_LEN, KV_LEN)
    if len(_parameters(mod_fn)) == 5:
        return mod_fn(torch.zeros(()), b, h, q, kv).expand(B, H, Q_LEN, KV_LEN)
    return mod_fn(b, h, q, kv).to(torch.bool).expand(B, H, Q_LEN, KV_LEN)


def _parameters(fn):
    import inspect

    return list(inspect.signature(fn).parameters)


class BlockMask:
    """Which (query block, key block) tiles hold kept positions — partly
    (``kv_num_blocks``/``kv_indices``) or wholly (``full_kv_*``) — with the
    ``mask_mod`` that decides positions inside partial tiles."""

    def __init__(
        self,
        seq_lengths,
        kv_num_blocks,
        kv_indices,
        full_kv_num_blocks,
        full_kv_indices,
        q_num_blocks,
        q_indices,
        full_q_num_blocks,
        full_q_indices,
        BLOCK_SIZE,
        mask_mod,
    ):
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod if mask_mod is not None else noop_mask

    @classmethod
    def from_kv_blocks(
        cls,
        kv_num_blocks,
        kv_indices,
        full_kv_num_blocks=None,
        full_kv_indices=None,
        BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
        mask_mod=None,
        seq_lengths=None,
        compute_q_blocks=True,
    ):
        """A mask from its key-block tables (the query tables are derived)."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0], kv_indices.shape[-1] * BLOCK_SIZE[1])
        partial = _dense_blocks(kv_num_blocks, kv_indices)
        full = None if full_kv_num_blocks is None else _dense_blocks(full_kv_num_blocks, full_kv_indices)
        q_tables = _tables(partial.transpose(-2, -1)) if compute_q_blocks else (None, None)
        full_q = _tables(full.transpose(-2, -1)) if compute_q_blocks and full is not None else (None, None)
        return cls(
            seq_lengths,
            kv_num_blocks,
            kv_indices,
            full_kv_num_blocks,
            full_kv_indices,
            *q_tables,
            *full_q,
            BLOCK_SIZE,
            mask_mod,
        )

    @property
    def shape(self):
        *batch, _, _ = self.kv_indices.shape
        return tuple(batch) + self.seq_lengths

    def numel(self):
        return math.prod(self.shape)

    def sparsity(self):
        """Percent of tiles skipped entirely."""
        total = math.prod(self.kv_indices.shape)
        computed = self.kv_num_blocks.sum().item()
        if self.full_kv_num_blocks is not None:
            computed += self.full_kv_num_blocks.sum().item()
        return 100 * (1 - computed / total)

    def as_tuple(self, flatten=True):
        return (
            self.seq_lengths[0],
            self.seq_lengths[1],
            self.kv_num_blocks,
            self.kv_indices,
            self.full_kv_num_blocks,
            self.full_kv_indices,
            self.q_num_blocks,
            self.q_indices,
            self.full_q_num_blocks,
            self.full_q_indices,
            self.BLOCK_SIZE[0],
            self.BLOCK_SIZE[1],
            self.mask_mod,
        )

    def to_dense(self):
        """The (…, query blocks, key blocks) table of tiles computed (1) or skipped (0)."""
        dense = _dense_blocks(self.kv_num_blocks, self.kv_indices)
        if self.full_kv_num_blocks is not None:
            dense = dense | _dense_blocks(self.full_kv_num_blocks, self.full_kv_indices)
        return dense.to(torch.int32)

    def _positions(self, B, H):
        """The dense (B, H, Q_LEN, KV_LEN) mask of kept positions."""
        q_len, kv_len = self.seq_lengths
        rows, cols = self.BLOCK_SIZE
        tiles = self.to_dense().bool()
        full = None if self.full_kv_num_blocks is None else _dense_blocks(self.full_kv_num_blocks, self.full_kv_indices)
        expand = lambda t: t.repeat_interleave(rows, -2)[..., :q_len, :].repeat_interleave(cols, -1)[..., :kv_len]  # noqa: E731
        inside = create_mask(self.mask_mod, B, H, q_len, kv_len)
        kept = expand(tiles) & inside
        if full is not None:
            kept = kept | expand(full)
        return kept.expand(B, H, q_len, kv_len)

    def __repr__(self):
        lines = [f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, "]
        dense = self.to_dense()
        batch = dense.shape[:-2]
        for b in range(batch[0] if batch else 1):
            for h in range(batch[1] if len(batch) > 1 else 1):
                lines.append(f"({b}, {h})")
                grid = dense[b, h] if len(batch) > 1 else dense
                for row in grid.tolist():
                    lines.append("".join("██" if cell else "  " for cell in row))
                lines.append("")
        return "\n".join(lines) + ")"


def _dense_blocks(num_blocks, indices):
    """The 0/1 table of tiles named by (num_blocks, indices): the first
    ``num_blocks`` entries of each row of ``indices``."""
    n = indices.shape[-1]
    valid = torch.arange(n).expand(indices.shape) < num_blocks.unsqueeze(-1)
    named = indices.long().unsqueeze(-1) == torch.arange(n)
    return (named & valid.unsqueeze(-1)).any(-2)


def _tables(dense):
    """(num_blocks, indices) of a 0/1 tile table: the counts per row and
    the tile columns, kept ones first in order."""
    dense = dense.to(torch.int32)
    num_blocks = dense.sum(-1).to(torch.int32)
    indices = torch.argsort(dense, dim=-1, descending=True, stable=True).to(torch.int32)
    return num_blocks, indices


def create_block_mask(
    mask_mod, B, H, Q_LEN, KV_LEN, device="cuda", BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False
):
    """The ``BlockMask`` of ``mask_mod`` over (B, H, Q_LEN, KV_LEN) (B or H
    None: one, broadcast), tiled in ``BLOCK_SIZE`` blocks."""
    if isinstance(BLOCK_SIZE, int):
        BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
    if device is not None and torch.device(device).type not in ("cpu", "cuda"):
        torch.empty(0, device=device)
    B, H = B or 1, H or 1
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN)
    rows, cols = BLOCK_SIZE
    q_blocks, kv_blocks = -(-Q_LEN // rows), -(-KV_LEN // cols)
    padded = torch.zeros(B, H, q_blocks * rows, kv_blocks * cols, dtype=torch.bool)
    known = torch.zeros_like(padded)
    padded[:, :, :Q_LEN, :KV_LEN] = mask
    known[:, :, :Q_LEN, :KV_LEN] = True
    tiles = padded.view(B, H, q_blocks, rows, kv_blocks, cols)
    inside = known.view(B, H, q_blocks, rows, kv_blocks, cols)
    any_kept = tiles.any(5).any(3)
    all_kept = (tiles | ~inside).all(5).all(3) & any_kept
    partial = any_kept & ~all_kept
    kv_num, kv_idx = _tables(partial)
    full_num, full_idx = _tables(all_kept)
    q_num, q_idx = _tables(partial.transpose(-2, -1))
    full_q_num, full_q_idx = _tables(all_kept.transpose(-2, -1))
    return BlockMask(
        (Q_LEN, KV_LEN), kv_num, kv_idx, full_num, full_idx, q_num, q_idx, full_q_num, full_q_idx, BLOCK_SIZE, mask_mod
    )


def flex_attention(
    query,
    key,
    value,
    score_mod=None,
    block_mask=None,
    scale=None,
    enable_gqa=False,
    return_lse=False,
    kernel_options=None,
    *,
    return_aux=None,
):
    """Attention over (B, H, L, E) tensors with ``score_mod`` and ``block_mask``."""
    B, Hq, L, E = query.shape
    Hkv, S = key.shape[1], key.shape[2]
    if Hq != Hkv:
        if not enable_gqa:
            raise ValueError(
                f"Expect query and key/value to have the same number of heads but got Hq={Hq} and Hkv={Hkv}. Try setting enable_gqa=True for GQA."
            )
        if Hq % Hkv:
            raise ValueError(
                f"Expect number of query heads to be a multiple of kv heads for GQA but got Hq={Hq} and Hkv={Hkv}."
            )
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if score_mod is not None:
        b, h, q, kv = _indices(B, Hq, L, S)
        scores = score_mod(scores, b, h, q, kv)
    if block_mask is not None:
        kept = block_mask._positions(B, Hq)
        scores = scores.masked_fill(~kept, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    weights = torch.exp(scores - lse.unsqueeze(-1)).nan_to_num(0.0)
    out = (weights @ value).to(query.dtype)
    if return_aux is not None:
        return out, AuxOutput(
            lse=lse if return_aux.lse else None, max_scores=scores.amax(-1) if return_aux.max_scores else None
        )
    if return_lse:
        return out, lse
    return out
