"""Installed when an fxvm interpreter starts: an import that would need a
compiled extension module (a ``.so``/``.pyd`` file, such as numpy's core or
torchvision's ``_C``) fails with an ImportError that names the file and says
why, instead of a bare "No module named". It runs only after every other
finder has failed, so pure-Python packages are unaffected."""

import os
import sys


class CompiledExtensionFinder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        leaf = name.rpartition(".")[2]
        for entry in sys.path if path is None else path:
            try:
                files = os.listdir(entry or ".")
            except (OSError, TypeError):
                continue
            for f in files:
                if f.startswith(leaf + ".") and f.endswith((".so", ".pyd")):
                    raise ImportError(
                        f"fxvm cannot load compiled extension modules: {name} is {os.path.join(entry, f)} "
                        "(fxvm runs pure-Python packages only)",
                        name=name,
                    )
        return None


sys.meta_path.append(CompiledExtensionFinder)
