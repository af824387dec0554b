"""Distribution metadata for the packages fxvm provides itself, so that
``importlib.metadata`` answers for them as it does for pip-installed ones.

Libraries ask for versions before they import: transformers'
``is_torch_available`` reads ``importlib.metadata.version("torch")``, and
without an answer falls back to mapping every installed distribution's
files to its packages (reading each one's METADATA and RECORD — a quarter
of a second at each ``import transformers``). The versions here are the
packages' own ``__version__``s, read from this table."""

import sys

VERSIONS = {
    "torch": "2.15.0+fxvm",
    "numpy": "2.4.6",
    "regex": "2026.11.19",
    "tokenizers": "0.23.3",
    "safetensors": "0.8.0",
}

_SUMMARIES = {
    "torch": "Tensors and dynamic neural networks (fxvm's native implementation)",
    "numpy": "Fundamental package for array computing (fxvm's native implementation)",
    "regex": "Alternative regular expression module (fxvm's native implementation)",
    "tokenizers": "Hugging Face's tokenizers (fxvm's binding of the tokenizers crate)",
    "safetensors": "Safe tensor serialization (fxvm's native implementation)",
}


def _normalized(name):
    """A distribution name as importlib.metadata compares them (PEP 503);
    ``re`` is imported here, not at every interpreter's start."""
    import re

    return re.sub(r"[-_.]+", "_", name).lower()


_distribution_class = None


def _distribution(name):
    """A ``importlib.metadata.Distribution`` for one of fxvm's packages
    (the class is made on first use: only importlib.metadata asks, and it
    is imported by then)."""
    global _distribution_class
    if _distribution_class is None:
        import pathlib
        from importlib.metadata import Distribution

        class FxvmDistribution(Distribution):
            """A package built into fxvm: its name, version and top-level package."""

            def __init__(self, name):
                self._name = name

            def read_text(self, filename):
                if filename == "METADATA":
                    return (
                        "Metadata-Version: 2.1\n"
                        f"Name: {self._name}\n"
                        f"Version: {VERSIONS[self._name]}\n"
                        f"Summary: {_SUMMARIES[self._name]}\n"
                    )
                if filename == "top_level.txt":
                    return f"{self._name}\n"
                if filename == "INSTALLER":
                    return "fxvm\n"
                return None

            def locate_file(self, path):
                return pathlib.PurePosixPath("<fxvm>", self._name, path)

            def __repr__(self):
                return f"<fxvm distribution {self._name} {VERSIONS[self._name]}>"

        _distribution_class = FxvmDistribution
    return _distribution_class(name)


class FxvmDistributionFinder:
    """A meta-path entry that finds no modules, only the distributions of
    the packages fxvm provides (ahead of any installed copy's metadata, as
    their imports resolve to fxvm's own)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        return None

    @classmethod
    def find_distributions(cls, context=None):
        wanted = getattr(context, "name", None)
        if wanted is not None:
            wanted = _normalized(wanted)
        names = [n for n in VERSIONS if wanted in (None, n)]
        return iter([_distribution(n) for n in names])


def install():
    if FxvmDistributionFinder not in sys.meta_path:
        sys.meta_path.insert(0, FxvmDistributionFinder)
