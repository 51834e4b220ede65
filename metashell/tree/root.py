"""The whole virtual filesystem: ``build_root(image)``.

::

    /brokers/<id>  /controllers/<id>  /topics/<name>/{id,configs/<key>,<partition>}  /topicIds/<uuid>
    /configs/<type>/<name>/<key>  /acls/<uuid>  /quotas/<entity>/<key>  /features/<name>
    /producerIds  /scram/<mechanism>/<user>  /delegationTokens/<id>  /quorum  /provenance
    /image/...  (Kafka's own shell tree, byte for byte)   /local/{version,commitId}

Everything is computed lazily from the image when a node is asked for its children or text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from .friendly import friendly_children
from .image_tree import build_image_node
from .local import build_local_node
from .node import DirNode, Node, StaticDir, TreeContext


def build_root(
    image: Any, *, source_info: Mapping[str, Any] | None = None, redact: bool = True, name: str = "/"
) -> Node:
    """The root directory (``name == "/"``) of the tree over ``image``.

    ``source_info`` is free-form information about where the image came from (e.g. ``{"mode":
    "directory", "path": ...}``), shown in ``/provenance``; with several nodes (``-d A -d B``) its
    ``"nodes"`` (a :class:`NodeRoots`) adds ``/nodes/<id>``, each node's whole tree.  ``redact`` is
    the default for every node's ``text()``/``to_json()`` when they are called with ``redact=None``.
    ``name``: the root's name (a node's tree under ``/nodes`` is named by its id).
    """
    ctx = TreeContext(image, redact=redact, source_info=source_info)
    factories = dict(friendly_children(ctx))
    factories["image"] = lambda n: build_image_node(ctx, n)
    factories["local"] = lambda n: build_local_node(ctx, n)
    nodes = ctx.source_info.get("nodes")
    if isinstance(nodes, NodeRoots):
        factories["nodes"] = lambda n: DirNode(n, ctx, nodes.labels, nodes.root, ordered=True)
    return StaticDir(name, ctx, factories)


@runtime_checkable
class NodeRoots(Protocol):
    """Each node's tree, by label (``shell/nodes.py`` loads a node when its tree is first asked)."""

    def labels(self) -> list[str]: ...

    def root(self, label: str) -> Node | None: ...
