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
from typing import Any

from .friendly import friendly_children
from .image_tree import build_image_node
from .local import build_local_node
from .node import Node, StaticDir, TreeContext


def build_root(image: Any, *, source_info: Mapping[str, Any] | None = None, redact: bool = True) -> Node:
    """The root directory (``name == "/"``) of the tree over ``image``.

    ``source_info`` is free-form information about where the image came from (e.g. ``{"mode":
    "directory", "path": ...}``), shown in ``/provenance``.  ``redact`` is the default for every
    node's ``text()``/``to_json()`` when they are called with ``redact=None``.
    """
    ctx = TreeContext(image, redact=redact, source_info=source_info)
    factories = dict(friendly_children(ctx))
    factories["image"] = lambda n: build_image_node(ctx, n)
    factories["local"] = lambda n: build_local_node(ctx, n)
    return StaticDir("/", ctx, factories)
