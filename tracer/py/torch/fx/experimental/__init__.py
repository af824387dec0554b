"""``torch.fx.experimental``: symbolic shapes (``symbolic_shapes``,
``sym_node``)."""
