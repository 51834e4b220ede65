"""The nodes of metashell's virtual filesystem.

A node is a small, short-lived object that knows how to compute its children and its text from the
image *when asked*.  Nothing is materialised up front: ``/topics`` over a million partitions costs
one dict lookup per ``child()`` call, and because nodes read the image at call time, a live image
that keeps changing underneath is always shown as it is now.

Every node has:

* ``name`` -- the child name it was found under (``"/"`` for the root), so ``ls`` can print the last
  path component without re-splitting paths;
* ``is_dir`` -- directories have children, leaves have text;
* ``kind`` -- a short tag for colouring and ``ls -l`` (see :data:`KINDS`);
* ``child_names()`` -- sorted exactly like Kafka (Java ``String.compareTo``, see :func:`java_sorted`);
* ``child(name)`` -- the child node or None;
* ``text(redact)`` -- what ``cat`` prints for a leaf (no trailing newline);
* ``to_json(redact)`` -- the machine form for ``--json``.

``redact=None`` (the default) means "the tree's default", chosen by ``build_root(..., redact=...)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from metashell.java_order import java_sorted

if TYPE_CHECKING:
    from metashell.image.image import MetadataImage

T = TypeVar("T")

KINDS = {
    "dir": "a plain directory",
    "broker": "a broker registration (record)",
    "controller": "a controller registration (record)",
    "topic": "a topic directory",
    "partition": "a partition (record)",
    "config": "a config value (scalar)",
    "acl": "an ACL binding (record)",
    "quota": "a client quota value (scalar)",
    "feature": "a finalized feature level (scalar)",
    "scram": "a SCRAM credential (record)",
    "token": "a delegation token (record)",
    "record": "any other record-like leaf (JSON)",
    "scalar": "any other scalar leaf (bare value)",
    "kafka": "a leaf under /image: Kafka's own text",
}
"""Every ``kind`` a node may have, with what it means."""


class TreeContext:
    """What every node of one tree shares: the image, the default redaction and the source info."""

    __slots__ = ("_memo", "image", "redact", "source_info")

    def __init__(
        self, image: MetadataImage, redact: bool = True, source_info: Mapping[str, Any] | None = None
    ):
        self.image: MetadataImage = image
        self.redact = redact
        self.source_info: dict[str, Any] = dict(source_info or {})
        self._memo: dict[str, tuple[Any, Any]] = {}

    def redacting(self, redact: bool | None) -> bool:
        return self.redact if redact is None else redact

    def memo(self, what: str, compute: Callable[[], T], size: int = -1) -> T:
        """``compute()`` once per state of the image (its provenance: offset, records, batches), for
        every node of the tree: ``/health``'s report is worked out once, not once per node that
        shows it (the TUI's overview, the ``/health`` table, each finding).  ``size``: how many
        entries the memoized thing is about, so a record replayed without a batch (a test, a
        salvage) still shows."""
        p = self.image.provenance
        key = (p.offset, p.records, p.batches, size)
        kept = self._memo.get(what)
        if kept is None or kept[0] != key:
            kept = self._memo[what] = (key, compute())
        value: T = kept[1]
        return value


class Node:
    """Abstract node.  Subclasses override what they need; the defaults describe an empty leaf."""

    __slots__ = ("ctx", "kind", "name")
    is_dir: bool = False
    brief: Callable[[], str] | None = None
    """One line saying what the node holds, when that is far cheaper than its text (``tree.summary``)."""

    def __init__(self, name: str, ctx: TreeContext, kind: str = "scalar") -> None:
        self.name = name
        self.ctx = ctx
        self.kind = kind

    # -- directories -------------------------------------------------------------------------
    def child_names(self) -> list[str]:
        """Names of the children, sorted like Kafka (empty for a leaf)."""
        return []

    def child(self, name: str) -> Node | None:
        """The child called ``name``, or None."""
        return None

    def child_count(self) -> int:
        """Number of children (cheaper than ``len(child_names())`` for big directories)."""
        return len(self.child_names())

    def field(self, name: str) -> Node | None:
        """A field of a leaf's record as a node of its own (``/provenance/offset``); None for a
        directory or a plain value (:class:`RecordLeaf` has fields)."""
        return None

    # -- leaves ------------------------------------------------------------------------------
    def text(self, redact: bool | None = None) -> str:
        """What ``cat`` prints for this leaf, without the trailing newline."""
        return ""

    def tree_text(self, redact: bool | None = None) -> str:
        """The leaf's text inside ``tree`` output: one line for records (compact JSON), else ``text``."""
        return self.text(redact)

    def to_json(self, redact: bool | None = None) -> object:
        """Machine form: a dict for record-like leaves, the bare value for scalars, and the sorted
        child names for a directory."""
        if self.is_dir:
            return self.child_names()
        return self.text(redact)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} kind={self.kind}>"


# --------------------------------------------------------------------------------------------
# Generic building blocks used by root.py (and usable by anyone who wants to add a subtree).
# --------------------------------------------------------------------------------------------


def pretty_json(value: object, indent: int = 0) -> str:
    """``json.dumps(indent=2)``, except that lists of scalars stay on one line (``"isr": [1, 2, 3]``),
    so partition records stay readable."""
    pad = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [
            f"{pad}  {json.dumps(str(k), ensure_ascii=False)}: {pretty_json(v, indent + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        if not any(isinstance(v, (dict, list, tuple)) for v in value):
            return json.dumps(list(value), ensure_ascii=False)
        items = [f"{pad}  {pretty_json(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value, ensure_ascii=False)


class ScalarLeaf(Node):
    """A leaf whose text is a bare value.  ``value`` is computed lazily by ``get(redact)``."""

    __slots__ = ("_get",)

    def __init__(
        self, name: str, ctx: TreeContext, get: Callable[[bool], object], kind: str = "scalar"
    ) -> None:
        super().__init__(name, ctx, kind)
        self._get = get

    def to_json(self, redact: bool | None = None) -> object:
        return self._get(self.ctx.redacting(redact))

    def text(self, redact: bool | None = None) -> str:
        value = self.to_json(redact)
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)


class RecordLeaf(Node):
    """A leaf holding a record: ``cat`` prints pretty JSON (2-space indent, keys in record order)."""

    __slots__ = ("_get", "brief")

    def __init__(
        self,
        name: str,
        ctx: TreeContext,
        get: Callable[[bool], dict[str, Any]],
        kind: str = "record",
        brief: Callable[[], str] | None = None,
    ) -> None:
        super().__init__(name, ctx, kind)
        self._get = get
        self.brief = brief
        """One line saying what it holds, when that is much cheaper than the record (a finding of
        300 000 partitions: its count and title); ``tree.summary`` uses it."""

    def to_json(self, redact: bool | None = None) -> object:
        return self._get(self.ctx.redacting(redact))

    def text(self, redact: bool | None = None) -> str:
        return pretty_json(self.to_json(redact))

    def tree_text(self, redact: bool | None = None) -> str:
        return json.dumps(self.to_json(redact), ensure_ascii=False)

    def field(self, name: str) -> Node | None:
        """One field of the record as a node of its own (``cat /provenance/offset``,
        ``cat /brokers/1/listeners``): a path may go on into a record's JSON, by key, or by index
        in a list.  Read through ``get``, so the field is redacted like the record."""
        value = self.to_json(None)
        if isinstance(value, dict) and name in value:
            key: str | int = name
        elif isinstance(value, list) and name.isdigit() and int(name) < len(value):
            key = int(name)
        else:
            return None
        parent = self

        def get(redact: bool) -> Any:
            whole = parent.to_json(redact)
            return whole[key]  # type: ignore[index]

        if isinstance(value[key], dict | list):  # type: ignore[index]
            return RecordLeaf(name, self.ctx, get, self.kind)
        return ScalarLeaf(name, self.ctx, get, "scalar")


class TextLeaf(Node):
    """A leaf whose text is a preformatted string (Kafka's ``toString`` under ``/image``).

    ``json`` (optional) gives a structured machine form; without it ``to_json`` is the text.
    """

    __slots__ = ("_json", "_text")

    def __init__(
        self,
        name: str,
        ctx: TreeContext,
        text: Callable[[bool], str],
        json: Callable[[bool], object] | None = None,
        kind: str = "kafka",
    ) -> None:
        super().__init__(name, ctx, kind)
        self._text = text
        self._json = json

    def text(self, redact: bool | None = None) -> str:
        return self._text(self.ctx.redacting(redact))

    def to_json(self, redact: bool | None = None) -> object:
        if self._json is None:
            return self.text(redact)
        return self._json(self.ctx.redacting(redact))


class DirNode(Node):
    """A directory whose children come from two callables.

    ``names()`` returns the child names in any order (they are sorted here, like Kafka's shell,
    unless ``ordered``: then ``names()`` gives the order people read, e.g. partitions 0, 1, 2, ... 10
    instead of 0, 1, 10, 2); ``make(name)`` returns the child node or None.  Both read the image at
    call time, so nothing is cached.
    """

    __slots__ = ("_count", "_make", "_memo_key", "_names", "_ordered")
    is_dir = True

    def __init__(
        self,
        name: str,
        ctx: TreeContext,
        names: Callable[[], Iterable[str]],
        make: Callable[[str], Node | None],
        kind: str = "dir",
        count: Callable[[], int] | None = None,
        *,
        ordered: bool = False,
        memo_key: str | None = None,
    ) -> None:
        super().__init__(name, ctx, kind)
        self._names = names
        self._make = make
        self._count = count
        self._ordered = ordered
        self._memo_key = memo_key
        """Keep the sorted names for this state of the image (``TreeContext.memo``): a directory of
        100 000 topics is listed each time the cursor passes it, and sorting them took a second."""

    def child_names(self) -> list[str]:
        if self._memo_key is not None:
            return self.ctx.memo(self._memo_key, self._sorted_names, self.child_count())
        return self._sorted_names()

    def _sorted_names(self) -> list[str]:
        if self._ordered:
            return list(self._names())
        return java_sorted(self._names())

    def child(self, name: str) -> Node | None:
        return self._make(name)

    def child_count(self) -> int:
        if self._count is not None:
            return self._count()
        return sum(1 for _ in self._names())


class StaticDir(Node):
    """A directory with a fixed set of children, each built on demand by a factory."""

    __slots__ = ("_factories",)
    is_dir = True

    def __init__(
        self,
        name: str,
        ctx: TreeContext,
        factories: Mapping[str, Callable[[str], Node | None]],
        kind: str = "dir",
    ) -> None:
        super().__init__(name, ctx, kind)
        self._factories = factories

    def child_names(self) -> list[str]:
        return java_sorted(self._factories)

    def child(self, name: str) -> Node | None:
        factory = self._factories.get(name)
        return None if factory is None else factory(name)

    def child_count(self) -> int:
        return len(self._factories)


K = TypeVar("K")


def keyed_dir(
    name: str,
    ctx: TreeContext,
    mapping: Mapping[K, Any],
    key_of: Callable[[str], K | None],
    child: Callable[[str, K], Node | None],
    *,
    name_of: Callable[[K], str] = str,
    strict: bool = False,
    kind: str = "dir",
    memo_key: str | None = None,
) -> DirNode:
    """A directory with one child per entry of ``mapping``: brokers and controllers by id, topics
    by name or by id, in both trees.  A child is listed as ``name_of(key)``; a name typed is
    turned back into a key by ``key_of`` (None: it names no key), and ``child(name, key)`` makes
    the node, reading ``mapping[key]`` when it is rendered (live mode changes it).  ``strict``: only
    the listed spelling is found (``/brokers/01`` is no broker in the friendly tree, while Kafka's own
    tree parses it as 1)."""

    def make(text: str) -> Node | None:
        key = key_of(text)
        if key is None or key not in mapping or (strict and name_of(key) != text):
            return None
        return child(text, key)

    return DirNode(
        name,
        ctx,
        lambda: [name_of(k) for k in list(mapping)],
        make,
        kind,
        count=lambda: len(mapping),
        memo_key=memo_key,
    )
