"""The operator-friendly part of the tree: everything but ``/image`` (Kafka's own tree) and ``/local``.

Record-like leaves (brokers, partitions, ACLs, ...) are dicts with camelCase keys named like Kafka's
fields; ``cat`` prints them as pretty JSON.  Scalar leaves (config values, quota values, feature
levels, topic ids) print their bare value.  Uuids are Kafka's 22-character base64 text, byte strings
(SCRAM salts and keys) lower-case hex, timestamps milliseconds plus an ISO-8601 UTC twin.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from metashell.image.forms import (
    acl_form,
    broker_form,
    controller_form,
    partition_form,
    scram_form,
    token_form,
)
from metashell.image.kafka_names import (
    METADATA_VERSION_FEATURE,
    ZK_MIGRATION_STATE_NAMES,
    enum_name,
    metadata_version_name,
)
from metashell.protocol.uuid import uuid_from_str, uuid_to_str

from .bookkeeping import provenance_json, quorum_json
from .image_tree import java_parse_int, same, scram_by_mechanism, topics_by_id, topics_by_name
from .javafmt import java_double_to_string
from .node import DirNode, Node, RecordLeaf, ScalarLeaf, TextLeaf, TreeContext, keyed_dir
from .redact import redact_config

if TYPE_CHECKING:
    from metashell.image.health import HealthReport

DEFAULT_NAME = "<default>"
"""How cluster-wide default config resources and default quota entities are named."""

CONFIG_TYPE_DIRS = {"broker": 4, "topic": 2, "broker-logger": 8, "client-metrics": 16, "group": 32}
"""``/configs/<type>``: kafka-configs' entity-type spelling -> ConfigResource type id."""
_CONFIG_DIR_BY_ID = {code: name for name, code in CONFIG_TYPE_DIRS.items()}
QUOTA_ENTITY_ORDER = ("user", "client-id", "ip")


# -- names ------------------------------------------------------------------------------------------


def _escape_entity_part(name: str) -> str:
    text = name.replace("%", "%25").replace(",", "%2C").replace("/", "%2F")
    return "%3Cdefault>" if text == DEFAULT_NAME else text


def _unescape_entity_part(text: str) -> str:
    return text.replace("%3C", "<").replace("%2F", "/").replace("%2C", ",").replace("%25", "%")


def quota_entity_dir_name(entity: tuple[tuple[str, str | None], ...]) -> str:
    """``user=alice,client-id=app``; ``<default>`` for a default entity; ``%``, ``,`` and ``/`` inside
    names are %-escaped (SSL principals such as ``CN=a,O=b`` are common)."""
    parts = dict(entity)
    order = [t for t in QUOTA_ENTITY_ORDER if t in parts] + sorted(
        t for t in parts if t not in QUOTA_ENTITY_ORDER
    )
    return ",".join(f"{t}={_entity_part(parts[t])}" for t in order)


def _entity_part(name: str | None) -> str:
    return DEFAULT_NAME if name is None else _escape_entity_part(name)


def parse_quota_entity_dir_name(text: str) -> tuple[tuple[str, str | None], ...] | None:
    entity = []
    for part in text.split(","):
        etype, sep, value = part.partition("=")
        if not sep:
            return None
        entity.append((etype, None if value == DEFAULT_NAME else _unescape_entity_part(value)))
    return tuple(sorted(entity, key=lambda kv: kv[0]))


# -- subtrees ---------------------------------------------------------------------------------


def _brokers(ctx: TreeContext, name: str) -> Node:
    brokers = ctx.image.cluster.brokers

    def broker(child: str, bid: int) -> Node:
        return RecordLeaf(child, ctx, lambda r: broker_form(brokers[bid]), kind="broker")

    return keyed_dir(name, ctx, brokers, java_parse_int, broker, strict=True)


def _controllers(ctx: TreeContext, name: str) -> Node:
    """``/controllers``: every registered controller, and every quorum voter without a registration
    (combined-mode clusters and clusters older than 3.7 never write RegisterControllerRecord); each
    entry says where it comes from."""
    image = ctx.image
    controllers = image.cluster.controllers

    def voters() -> dict[int, Any]:
        return {v.id: v for v in image.quorum.voters}

    def ids() -> set[int]:
        return set(controllers) | set(voters())

    def entry(cid: int) -> dict[str, Any]:
        voter = voters().get(cid)
        if cid in controllers or voter is None:
            # no "is a voter" flag here: the voter set depends on what was loaded (quorum-state on
            # disk, or the live quorum), and a registration must read the same either way
            return {**controller_form(controllers[cid]), "source": "RegisterControllerRecord"}
        return {
            "id": cid,
            "directoryId": uuid_to_str(voter.directory_id),
            "listeners": [
                {"name": e.name, "host": e.host, "port": e.port, "securityProtocol": None}
                for e in voter.endpoints
            ],
            "voter": True,
            "source": f"quorum voters ({image.quorum.source or 'unknown'}); no RegisterControllerRecord",
        }

    def make(child: str) -> Node | None:
        cid = java_parse_int(child)
        if cid is None or cid not in ids() or str(cid) != child:
            return None
        return RecordLeaf(child, ctx, lambda r: entry(cid), kind="controller")

    return DirNode(name, ctx, lambda: [str(c) for c in ids()], make, count=lambda: len(ids()))


def _config_dir(ctx: TreeContext, name: str, key: tuple[int, str], kind: str = "dir") -> Node:
    """The config keys of one resource (empty when it has none)."""
    configs = ctx.image.configs

    def data() -> dict[str, str]:
        return configs.get(key) or {}

    def make(k: str) -> Node | None:
        if k not in data():
            return None
        return ScalarLeaf(k, ctx, lambda r: redact_config(key[0], k, data().get(k), r), kind="config")

    return DirNode(name, ctx, lambda: list(data()), make, kind=kind, count=lambda: len(data()))


def topic_node(ctx: TreeContext, name: str, topic: Any) -> Node:
    """``/topics/<name>`` (and ``/topicIds/<id>``): one record per partition, ``configs/``, ``id``, ``name``."""
    partitions = topic.partitions

    def names() -> list[str]:  # partitions in numeric order (the friendly tree is for people)
        return [str(p) for p in sorted(partitions)] + ["configs", "id", "name"]

    def make(child: str) -> Node | None:
        if child == "id":
            return ScalarLeaf(child, ctx, lambda r: uuid_to_str(topic.id))
        if child == "name":
            return ScalarLeaf(child, ctx, lambda r: topic.name)
        if child == "configs":
            return _config_dir(ctx, child, (2, topic.name))
        pid = java_parse_int(child)
        if pid is None or pid not in partitions or str(pid) != child:
            return None
        return RecordLeaf(child, ctx, lambda r: partition_form(topic, pid, partitions[pid]), kind="partition")

    return DirNode(name, ctx, names, make, kind="topic", count=lambda: 3 + len(partitions), ordered=True)


def _topics(ctx: TreeContext, name: str) -> Node:
    return topics_by_name(ctx, name, topic_node)


def _topic_ids(ctx: TreeContext, name: str) -> Node:
    return topics_by_id(ctx, name, topic_node)


def _configs(ctx: TreeContext, name: str) -> Node:
    configs = ctx.image.configs

    def types() -> list[str]:
        present = {t for t, _ in list(configs)}
        return list(CONFIG_TYPE_DIRS) + (["unknown"] if present - set(_CONFIG_DIR_BY_ID) else [])

    def type_dir(tname: str) -> Node | None:
        if tname == "unknown":
            known = set(_CONFIG_DIR_BY_ID)

            # All unknown resource type ids end up in one directory (their names may then collide).
            def resources() -> dict[str, tuple[int, str]]:
                return {(n or DEFAULT_NAME): (t, n) for t, n in list(configs) if t not in known}
        elif tname in CONFIG_TYPE_DIRS:
            code = CONFIG_TYPE_DIRS[tname]

            def resources() -> dict[str, tuple[int, str]]:
                return {(n or DEFAULT_NAME): (t, n) for t, n in list(configs) if t == code}
        else:
            return None

        def make(rname: str) -> Node | None:
            if tname != "unknown":  # a dict lookup, not a scan: find / visits 100k topic config dirs
                for key in ((code, "" if rname == DEFAULT_NAME else rname), (code, rname)):
                    if key in configs:
                        return _config_dir(ctx, rname, key)
                return None
            found = resources().get(rname)
            return None if found is None else _config_dir(ctx, rname, found)

        return DirNode(tname, ctx, lambda: list(resources()), make)

    return DirNode(name, ctx, types, type_dir)


def _acls(ctx: TreeContext, name: str) -> Node:
    acls = ctx.image.acls

    def make(child: str) -> Node | None:
        try:
            acl = acls.get(uuid_from_str(child))
        except (ValueError, TypeError):
            return None
        return None if acl is None else RecordLeaf(child, ctx, lambda r: acl_form(acl), kind="acl")

    return DirNode(name, ctx, lambda: [uuid_to_str(a) for a in list(acls)], make, count=lambda: len(acls))


def _quotas(ctx: TreeContext, name: str) -> Node:
    quotas = ctx.image.client_quotas

    def make(child: str) -> Node | None:
        entity = parse_quota_entity_dir_name(child)
        data = None if entity is None else quotas.get(entity)
        if data is None:
            return None

        def value(key: str) -> Node | None:
            if key not in data:
                return None
            return TextLeaf(
                key,
                ctx,
                lambda r: java_double_to_string(data[key]),
                json=lambda r: data.get(key),
                kind="quota",
            )

        return DirNode(child, ctx, lambda: list(data), value)

    return DirNode(
        name, ctx, lambda: [quota_entity_dir_name(e) for e in list(quotas)], make, count=lambda: len(quotas)
    )


def _features_dir(ctx: TreeContext, name: str) -> Node:
    features = ctx.image.features

    def names() -> list[str]:
        out = list(features.finalized)
        if features.metadata_version is not None:
            out.append(METADATA_VERSION_FEATURE)
        if features.zk_migration_state:
            out.append("zkMigrationState")
        return out

    def make(child: str) -> Node | None:
        if child == METADATA_VERSION_FEATURE and features.metadata_version is not None:

            def text(r: bool) -> str:
                level = features.metadata_version
                return f"{metadata_version_name(level)} ({level})"

            return TextLeaf(
                child,
                ctx,
                text,
                json=lambda r: {
                    "level": features.metadata_version,
                    "version": metadata_version_name(features.metadata_version),
                },
                kind="feature",
            )
        if child == "zkMigrationState" and features.zk_migration_state:
            return ScalarLeaf(
                child, ctx, lambda r: enum_name(ZK_MIGRATION_STATE_NAMES, features.zk_migration_state)
            )
        if child in features.finalized:
            return ScalarLeaf(child, ctx, lambda r: features.finalized.get(child), kind="feature")
        return None

    return DirNode(name, ctx, names, make)


def _scram(ctx: TreeContext, name: str) -> Node:
    return scram_by_mechanism(
        ctx, name, lambda user, cred: RecordLeaf(user, ctx, lambda r: scram_form(cred, r), kind="scram")
    )


def _tokens(ctx: TreeContext, name: str) -> Node:
    tokens = ctx.image.delegation_tokens

    def token(child: str, key: str) -> Node:
        return RecordLeaf(child, ctx, lambda r: token_form(tokens[key]), kind="token")

    return keyed_dir(name, ctx, tokens, same, token)


def _producer_ids(ctx: TreeContext) -> dict[str, Any]:
    p = ctx.image.producer_ids
    return {
        "nextProducerId": p.next_producer_id,
        "lastBlockBrokerId": p.broker_id,
        "lastBlockBrokerEpoch": p.broker_epoch,
    }


def friendly_children(ctx: TreeContext) -> Iterator[tuple[str, Callable[[str], Node | None]]]:
    """``(name, factory)`` for every top-level entry except ``image`` and ``local``."""
    yield "brokers", lambda n: _brokers(ctx, n)
    yield "controllers", lambda n: _controllers(ctx, n)
    yield "topics", lambda n: _topics(ctx, n)
    yield "topicIds", lambda n: _topic_ids(ctx, n)
    yield "configs", lambda n: _configs(ctx, n)
    yield "acls", lambda n: _acls(ctx, n)
    yield "quotas", lambda n: _quotas(ctx, n)
    yield "features", lambda n: _features_dir(ctx, n)
    yield "producerIds", lambda n: RecordLeaf(n, ctx, lambda r: _producer_ids(ctx))
    yield "scram", lambda n: _scram(ctx, n)
    yield "delegationTokens", lambda n: _tokens(ctx, n)
    yield "quorum", lambda n: RecordLeaf(n, ctx, lambda r: quorum_json(ctx))
    yield "provenance", lambda n: RecordLeaf(n, ctx, lambda r: provenance_json(ctx))
    yield "health", lambda n: _health(ctx, n)


def health_of(ctx: TreeContext) -> HealthReport:
    """The health report of the image the tree shows, worked out once per state of it (the TUI's
    background thread asks first, so ``/health`` opens at once)."""
    from metashell.image.health import check_health  # when /health is read, not on every start

    return ctx.memo("health", lambda: check_health(ctx.image))


def _health(ctx: TreeContext, name: str) -> Node:
    """``/health``: ``summary`` (the verdict and counts) and one record per finding, as the
    ``health`` command computes them; recomputed when the image has moved on (live mode)."""

    def report() -> HealthReport:
        return health_of(ctx)

    def make(child: str) -> Node | None:
        r = report()
        if child == "summary":
            return RecordLeaf(
                child, ctx, lambda _r: report().as_json(with_items=False), kind="health", brief=r.verdict
            )
        found = next((f for f in r.findings if f.key == child), None)
        if found is None:
            return None
        brief = f"{found.count} [{found.severity}] {found.title}"
        return RecordLeaf(child, ctx, lambda _r: found.as_json(), kind="finding", brief=lambda: brief)

    return DirNode(
        name, ctx, lambda: ["summary"] + [f.key for f in report().findings], make, kind="dir", ordered=True
    )
