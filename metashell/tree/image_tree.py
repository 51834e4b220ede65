"""``/image``: Kafka 4.4's own metadata-shell tree (``MetadataImageNode`` and friends), byte for byte.

The layout, the child names and every leaf's text are Kafka's (see :mod:`.kafka_text`), including
its lookup quirks: ``child()`` accepts what Kafka's ``child()`` accepts (``features/finalized_<any>``
is ``0``, ``cluster/brokers/01`` is broker 1, a quota entity's components may come in any order).

Deliberate differences (docs/tree.md): secrets are redacted unless ``redact=False``; default client
quota entities are named ``user()``/``clientId()``/``ip()`` instead of being dropped from the name.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from metashell.image.image import MetadataImage
from metashell.image.kafka_names import CONFIG_RESOURCE_TYPE_NAMES, SCRAM_MECHANISM_NAMES
from metashell.numbers import is_int
from metashell.protocol.uuid import uuid_from_str, uuid_to_str

from . import kafka_text as kt
from .javafmt import java_double_to_string
from .node import DirNode, Node, StaticDir, TextLeaf, TreeContext, keyed_dir
from .redact import kafka_keeps_config, redact_config

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_CONFIG_TYPE_IDS = {name: code for code, name in CONFIG_RESOURCE_TYPE_NAMES.items()}
_SCRAM_IDS = {name: code for code, name in SCRAM_MECHANISM_NAMES.items()}


def java_parse_int(text: str) -> int | None:
    """``Integer.parseInt``/``Integer.valueOf`` (ASCII digits), or None where Java would throw."""
    if not is_int(text):
        return None
    value = int(text)
    return value if _INT_MIN <= value <= _INT_MAX else None


def uuid_or_none(text: str) -> bytes | None:
    """The uuid Kafka's base64 ``text`` stands for, None when it stands for none."""
    try:
        return uuid_from_str(text)
    except (ValueError, TypeError):
        return None


def same(text: str) -> str:
    """A child name that is its own key (topics by name)."""
    return text


def _leaf(ctx: TreeContext, name: str, text: Callable[[bool], str]) -> TextLeaf:
    return TextLeaf(name, ctx, text, kind="kafka")


def kafka_visible_context(ctx: TreeContext) -> TreeContext:
    """The context whose image Kafka 4.4 would show.

    Kafka's ``MetadataLoader`` cannot publish an image without ``metadata.version`` (building it
    throws "Unknown metadata version for FeaturesImage" and the loader logs a fault), so its shell
    keeps showing the empty image (provenance ``offset -1``): e.g. a log segment that does not start
    at offset 0, a pre-3.3 log without FeatureLevelRecords, or a 3.x ``bootstrap.checkpoint`` whose
    metadata.version level Kafka 4.4 no longer knows (below 7, 3.3-IV3).  Nor does it publish anything
    from a file on which it never leaves its catching-up state (``provenance.caught_up``, set by the
    ``--snapshot`` loader: e.g. a segment that ends inside a metadata transaction).  ``/image`` shows
    what Kafka shows; the rest of the tree shows everything that was read.
    """
    if ctx.image.features.metadata_version is not None and ctx.image.provenance.caught_up:
        return ctx
    return TreeContext(MetadataImage(), redact=ctx.redact, source_info=ctx.source_info)


def build_image_node(ctx: TreeContext, name: str = "image") -> Node:
    """The ``/image`` directory over ``ctx.image`` (see :func:`kafka_visible_context`)."""

    def sub(make: Callable[[TreeContext, str], Node]) -> Callable[[str], Node]:
        return lambda n: make(kafka_visible_context(ctx), n)

    return StaticDir(
        name,
        ctx,
        {
            "provenance": sub(lambda c, n: _leaf(c, n, lambda r: kt.provenance(c.image.provenance))),
            "features": sub(_features),
            "cluster": sub(
                lambda c, n: StaticDir(
                    n,
                    c,
                    {
                        "brokers": lambda m: _brokers(c, m),
                        "controllers": lambda m: _controllers(c, m),
                    },
                )
            ),
            "topics": sub(
                lambda c, n: StaticDir(
                    n,
                    c,
                    {
                        "byName": lambda m: topics_by_name(c, m),
                        "byId": lambda m: topics_by_id(c, m),
                    },
                )
            ),
            "configs": sub(_configs),
            "clientQuotas": sub(_client_quotas),
            "producerIds": sub(
                lambda c, n: StaticDir(
                    n,
                    c,
                    {
                        "nextProducerId": lambda m: _leaf(
                            c, m, lambda r: str(c.image.producer_ids.next_producer_id)
                        ),
                    },
                )
            ),
            "acls": sub(lambda c, n: StaticDir(n, c, {"byId": lambda m: _acls(c, m)})),
            "scram": sub(_scram),
            "delegationToken": sub(_tokens),
        },
        kind="dir",
    )


# -- features --------------------------------------------------------------------------------


def _features(ctx: TreeContext, name: str) -> Node:
    features = ctx.image.features

    def names() -> list[str]:
        return ["metadataVersion"] + ["finalized_" + f for f in list(features.finalized)]

    def make(child: str) -> Node | None:
        if child == "metadataVersion":
            return _leaf(ctx, child, lambda r: kt.metadata_version(features.metadata_version))
        if child.startswith("finalized_"):
            key = child[len("finalized_") :]
            return _leaf(ctx, child, lambda r: str(features.finalized.get(key, 0)))
        return None

    return DirNode(name, ctx, names, make)


# -- cluster ---------------------------------------------------------------------------------


def _brokers(ctx: TreeContext, name: str) -> Node:
    brokers = ctx.image.cluster.brokers

    def broker(child: str, bid: int) -> Node:
        return _leaf(ctx, child, lambda r: kt.broker_registration(brokers[bid]))

    return keyed_dir(name, ctx, brokers, java_parse_int, broker)


def _controllers(ctx: TreeContext, name: str) -> Node:
    controllers = ctx.image.cluster.controllers

    def controller(child: str, cid: int) -> Node:
        return _leaf(ctx, child, lambda r: kt.controller_registration(controllers[cid]))

    return keyed_dir(name, ctx, controllers, java_parse_int, controller)


# -- topics ----------------------------------------------------------------------------------


def topic_image_node(ctx: TreeContext, name: str, topic: object) -> Node:
    """``TopicImageNode``: ``name``, ``id`` and one leaf per partition."""
    partitions = topic.partitions  # type: ignore[attr-defined]

    def names() -> list[str]:
        return ["name", "id"] + [str(p) for p in list(partitions)]

    def make(child: str) -> Node | None:
        if child == "name":
            return _leaf(ctx, child, lambda r: topic.name)  # type: ignore[attr-defined]
        if child == "id":
            return _leaf(ctx, child, lambda r: uuid_to_str(topic.id))  # type: ignore[attr-defined]
        pid = java_parse_int(child)
        if pid is None or pid not in partitions:
            return None
        return _leaf(ctx, child, lambda r: kt.partition_registration(partitions[pid]))

    return DirNode(name, ctx, names, make, kind="topic", count=lambda: 2 + len(partitions))


TopicNode = Callable[[TreeContext, str, Any], Node]
"""Makes the node of one topic (Kafka's ``TopicImageNode`` here, the friendly tree's own there)."""


def topics_by_name(ctx: TreeContext, name: str, topic_node: TopicNode = topic_image_node) -> Node:
    """A directory of topics by name (``/image/topics/byName``, the friendly ``/topics``)."""
    by_name = ctx.image.topics.by_name
    return keyed_dir(
        name,
        ctx,
        by_name,
        same,
        lambda child, key: topic_node(ctx, child, by_name[key]),
        memo_key="topic names",
    )


def topics_by_id(ctx: TreeContext, name: str, topic_node: TopicNode = topic_image_node) -> Node:
    """A directory of topics by id (``/image/topics/byId``, the friendly ``/topicIds``)."""
    by_id = ctx.image.topics.by_id
    return keyed_dir(
        name,
        ctx,
        by_id,
        uuid_or_none,
        lambda child, key: topic_node(ctx, child, by_id[key]),
        name_of=uuid_to_str,
        memo_key="topic ids",
    )


# -- configs ---------------------------------------------------------------------------------


def _kept(resource_type: int, data: dict[str, str]) -> list[str]:
    return [k for k in list(data) if kafka_keeps_config(resource_type, k)]


def config_resource_name(resource_type: int, resource_name: str) -> str:
    """``TYPE`` for the cluster default (empty name), else ``TYPE:name``."""
    tname = CONFIG_RESOURCE_TYPE_NAMES.get(resource_type, "UNKNOWN")
    return tname if resource_name == "" else f"{tname}:{resource_name}"


def _parse_config_resource(text: str) -> tuple[int, str] | None:
    for tname, code in _CONFIG_TYPE_IDS.items():
        if text == tname:
            return code, ""
        if text.startswith(tname + ":"):
            return code, text[len(tname) + 1 :]
    return None


def _configs(ctx: TreeContext, name: str) -> Node:
    configs = ctx.image.configs

    def names() -> list[str]:
        return [config_resource_name(t, n) for (t, n), data in list(configs.items()) if _kept(t, data)]

    def make(child: str) -> Node | None:
        key = _parse_config_resource(child)
        data = None if key is None else configs.get(key)
        if data is None or not _kept(key[0], data):  # type: ignore[index]
            return None
        rtype = key[0]  # type: ignore[index]

        def leaf(k: str) -> Node | None:
            if k not in data or not kafka_keeps_config(rtype, k):
                return None
            return TextLeaf(k, ctx, lambda r: str(redact_config(rtype, k, data.get(k, ""), r)), kind="config")

        return DirNode(child, ctx, lambda: _kept(rtype, data), leaf)

    return DirNode(name, ctx, names, make)


# -- client quotas ---------------------------------------------------------------------------


def _client_quotas(ctx: TreeContext, name: str) -> Node:
    quotas = ctx.image.client_quotas

    def make(child: str) -> Node | None:
        parsed = kt.parse_quota_entity_name(child)
        if parsed is None:
            return None
        # "user()" may be the default entity (name None, metashell's rendering) or an empty name.
        choices = [[(t, None), (t, v)] if v == "" else [(t, v)] for t, v in sorted(parsed.items())]
        for combo in itertools.product(*choices):
            data = quotas.get(tuple(combo))
            if data is not None:
                return _quota_entity(ctx, child, data)
        return None

    return DirNode(
        name, ctx, lambda: [kt.quota_entity_name(e) for e in list(quotas)], make, count=lambda: len(quotas)
    )


def _quota_entity(ctx: TreeContext, name: str, data: dict[str, float]) -> Node:
    def make(key: str) -> Node | None:
        if key not in data:
            return None
        return TextLeaf(key, ctx, lambda r: java_double_to_string(data[key]), kind="quota")

    return DirNode(name, ctx, lambda: list(data), make)


# -- ACLs, SCRAM, delegation tokens ------------------------------------------------------------


def _acls(ctx: TreeContext, name: str) -> Node:
    acls = ctx.image.acls

    def make(child: str) -> Node | None:
        aid = uuid_or_none(child)
        acl = None if aid is None else acls.get(aid)
        return None if acl is None else TextLeaf(child, ctx, lambda r: kt.standard_acl(acl), kind="acl")

    return DirNode(name, ctx, lambda: [uuid_to_str(a) for a in list(acls)], make, count=lambda: len(acls))


ScramLeaf = Callable[[str, Any], Node]
"""Makes the leaf of one SCRAM credential (Kafka's text here, the friendly form there)."""


def scram_by_mechanism(ctx: TreeContext, name: str, leaf: ScramLeaf) -> Node:
    """``/image/scram`` and the friendly ``/scram``: a directory per mechanism, a leaf per user."""
    scram = ctx.image.scram

    def mechanism(mname: str) -> Node:
        mid = _SCRAM_IDS[mname]

        def make(user: str) -> Node | None:
            cred = scram.get((mid, user))
            return None if cred is None else leaf(user, cred)

        return DirNode(mname, ctx, lambda: [u for (m, u) in list(scram) if m == mid], make)

    return StaticDir(name, ctx, {m: mechanism for m in _SCRAM_IDS})


def _scram(ctx: TreeContext, name: str) -> Node:
    return scram_by_mechanism(
        ctx,
        name,
        lambda user, cred: TextLeaf(user, ctx, lambda r: kt.scram_credential(cred, r), kind="scram"),
    )


def _tokens(ctx: TreeContext, name: str) -> Node:
    tokens = ctx.image.delegation_tokens

    def token(child: str, key: str) -> Node:
        return TextLeaf(child, ctx, lambda r: kt.delegation_token(tokens[key], r), kind="token")

    return keyed_dir(name, ctx, tokens, same, token)
