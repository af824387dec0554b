"""Stand-ins a capability policy puts where a host does not grant access."""

from collections.abc import MutableMapping


class DeniedEnviron(MutableMapping):
    """Stands for ``os.environ`` (and ``os.environb``, ``posix.environ``) in a
    host that does not grant the process environment: it holds no variables,
    and every use raises PermissionError saying how the host grants them."""

    def __init__(self, message):
        self._message = message

    def _deny(self, *args):
        raise PermissionError(self._message)

    __getitem__ = __setitem__ = __delitem__ = __iter__ = __len__ = _deny
    copy = _deny

    def __repr__(self):
        return "environ(<not granted>)"
