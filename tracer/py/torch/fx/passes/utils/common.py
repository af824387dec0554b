"""Building a module around a subgraph copied out of a bigger one."""

from torch.fx.graph_module import GraphModule
from torch.nn import Module

__all__ = ["HolderModule", "lift_subgraph_as_module"]


class HolderModule(Module):
    """A plain module holding the given children (attributes the lifted
    subgraph needs from the original module)."""

    def __init__(self, d):
        super().__init__()
        for name, module in d.items():
            self.add_module(name, module)


def lift_subgraph_as_module(gm, subgraph, comp_name="", class_name="GraphModule"):
    """A GraphModule of class ``class_name`` running ``subgraph``, holding
    the modules and attributes its nodes name (taken from ``gm``), and the
    map from each original path to ``comp_name.path``."""
    holder = HolderModule({})
    mapping = {}
    for node in subgraph.nodes:
        if node.op not in ("call_module", "get_attr"):
            continue
        assert isinstance(node.target, str), f"Expected str target, got {type(node.target)}"
        *path, leaf = node.target.split(".")
        current, original = holder, gm
        for atom in path:
            if not hasattr(current, atom):
                current.add_module(atom, HolderModule({}))
            current = getattr(current, atom)
            original = getattr(original, atom)
        mapping[node.target] = f"{comp_name}.{node.target}"
        setattr(current, leaf, getattr(original, leaf))
    return GraphModule(holder, subgraph, class_name), mapping
