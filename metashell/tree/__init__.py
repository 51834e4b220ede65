"""metashell's virtual filesystem over a metadata image (see docs/tree.md).

Public API::

    from metashell.tree import build_root, glob, normalize, render_tree, render_find, render_ls
    root = build_root(image, source_info={...}, redact=True)
    for path, node in glob(root, "/", "/topics/*/0"):
        print(path, node.text())
"""

from metashell.java_order import java_sort_key, java_sorted

from .node import Node, TreeContext
from .paths import glob, glob_components, join, normalize, resolve
from .render import iter_find, ls_layout, render_cat, render_find, render_ls, render_tree
from .root import build_root

__all__ = [
    "Node",
    "TreeContext",
    "build_root",
    "glob",
    "glob_components",
    "iter_find",
    "java_sort_key",
    "java_sorted",
    "join",
    "ls_layout",
    "normalize",
    "render_cat",
    "render_find",
    "render_ls",
    "render_tree",
    "resolve",
]
