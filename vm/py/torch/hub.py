"""``torch.hub`` without a network: checkpoints load from the hub cache
(``$TORCH_HOME/hub/checkpoints``) when the file is there; otherwise the
error names the file to place and where."""

import os
import re
from urllib.parse import urlparse

import torch

try:
    from tqdm import tqdm
except ImportError:

    class tqdm:
        """A minimal stand-in for the ``tqdm`` progress bar (as PyTorch's hub
        defines one when tqdm is not installed): writes ``done/total`` to
        stderr as it is updated."""

        def __init__(self, total=None, disable=False, unit=None, unit_scale=None, unit_divisor=None, **kwargs):
            self.total = total
            self.disable = disable
            self.n = 0

        def update(self, n):
            if self.disable:
                return
            import sys

            self.n += n
            if self.total is None:
                sys.stderr.write(f"\r{self.n:.1f} bytes")
            else:
                sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")

        def close(self):
            self.disable = True

        def __enter__(self):
            return self

        def __exit__(self, exc_type, exc_val, exc_tb):
            if self.disable:
                return
            import sys

            sys.stderr.write("\n")


__all__ = ["download_url_to_file", "get_dir", "load", "load_state_dict_from_url", "set_dir"]

_hub_dir = None

# The hash prefix in a checkpoint's file name (`resnet18-f37072fd.pth`).
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")


def _get_torch_home():
    """``$TORCH_HOME``, else ``$XDG_CACHE_HOME/torch``, else ``~/.cache/torch``."""
    cache = os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache"))
    return os.path.expanduser(os.environ.get("TORCH_HOME", os.path.join(cache, "torch")))


def get_dir():
    """The hub cache: ``set_dir``'s, else ``$TORCH_HOME/hub``."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def _no_network(url, path):
    raise RuntimeError(
        f"fxvm has no network access to download {url}: place the file at {path} "
        "(the hub cache, $TORCH_HOME/hub/checkpoints) and run again"
    )


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    _no_network(url, dst)


def load_state_dict_from_url(
    url, model_dir=None, map_location=None, progress=True, check_hash=False, file_name=None, weights_only=False
):
    """The checkpoint ``url`` names, from the hub cache."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    filename = file_name or os.path.basename(urlparse(url).path)
    path = os.path.join(model_dir, filename)
    if not os.path.exists(path):
        _no_network(url, path)
    return torch.load(path, map_location=map_location, weights_only=weights_only)


def load(
    repo_or_dir,
    model,
    *args,
    source="github",
    trust_repo=None,
    force_reload=False,
    verbose=True,
    skip_validation=False,
    **kwargs,
):
    """``torch.hub.load`` from a local directory's ``hubconf.py``; GitHub needs a network."""
    if source != "local":
        raise RuntimeError(f"fxvm has no network access to fetch {repo_or_dir!r}; clone it and use source='local'")
    import importlib.util

    spec = importlib.util.spec_from_file_location("hubconf", os.path.join(repo_or_dir, "hubconf.py"))
    hubconf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hubconf)
    entry = getattr(hubconf, model, None)
    if entry is None or not callable(entry):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return entry(*args, **kwargs)
