"""``describe``: topics as kafka-topics --describe shows them, brokers, and the ACLs that apply."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metashell.image.acls import decide
from metashell.image.forms import acl_form
from metashell.image.health import PartitionRef, effective_min_isr
from metashell.image.image import MetadataImage
from metashell.image.kafka_names import ACL_OPERATION_NAMES, ACL_RESOURCE_TYPE_NAMES
from metashell.image.model import Topic
from metashell.protocol.uuid import uuid_to_str
from metashell.shell.suggest import close_matches
from metashell.tree.image_tree import uuid_or_none
from metashell.tree.paths import glob_regex, normalize

from .. import answers, colour
from ..registry import Command, CompletionContext, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed, Positional
from ..words import Word

#: ``--resource`` words by Kafka's resource type id (what ``answers.acl_query`` parses back).
RESOURCE_WORDS = {k: v.lower() for k, v in ACL_RESOURCE_TYPE_NAMES.items()}

if TYPE_CHECKING:
    from ..session import Shell


def run_describe(shell: Shell, p: Parsed) -> None:
    words = _paths_as_targets(shell, [w.literal for w in p.args])
    if words != [w.literal for w in p.args]:
        p = Parsed(p.spec, [Word(w, w) for w in words], p.opts, p.help)
    if words and words[0] == "broker":
        _describe_brokers(shell, p, words[1:])
        return
    if words and words[0] in ("acl", "acls"):
        if len(words) > 1:
            raise CommandError(
                f"describe acl: unexpected argument '{words[1]}' (use --principal, "
                f"--resource, --operation, --host)"
            )
        _describe_acls(shell, p)
        return
    filters = answers.TopicFilters(
        **{
            k: bool(p.opts[k])
            for k in ("under_replicated", "unavailable", "under_min_isr", "at_min_isr", "with_overrides")
        }
    )
    image = shell.image()
    by_name = image.topics.by_name
    names = _matching(sorted(by_name), [w.text for w in p.args], "topic", shell)
    topics = [by_name[n] for n in names]
    if shell.wants_json(p):
        for t in topics:
            shell.emit_json(_topic_json(shell, image, t, filters))
        return
    batch: list[str] = []
    for line in answers.describe_topics(image, topics, filters, shell.settings.redact):
        batch.append(line + "\n")
        if len(batch) >= 512:  # a million partitions: print as it goes, not at the end
            shell.write_painted("".join(batch), colour.describe)
            batch.clear()
    shell.write_painted("".join(batch), colour.describe)


def _paths_as_targets(shell: Shell, words: list[str]) -> list[str]:
    """Tree paths as targets: ``describe /topics/orders``, ``describe /brokers/1``, ``describe ..``,
    or ``describe`` alone inside a topic or a broker (the current directory).  A word is a path when
    it has a ``/`` or is ``.``/``..``: no topic name can (Kafka refuses ``/``, ``.`` and ``..``)."""
    if not words:
        comps = normalize(shell.cwd, ".")
        if not comps or comps[0] not in ("topics", "topicIds", "brokers", "acls"):
            return words  # elsewhere: every topic, as kafka-topics --describe
        words = ["."]
    if words[0] in ("broker", "acl", "acls") or not any(_is_path(w) for w in words):
        return words
    topics: list[str] = []
    brokers: list[str] = []
    for word in words:
        if not _is_path(word):
            topics.append(word)
            continue
        comps = normalize(shell.cwd, word)
        head = comps[0] if comps else ""
        if head == "topics" and len(comps) >= 2:
            topics.append(comps[1])
        elif head == "topicIds" and len(comps) >= 2:
            topic = _topic_by_id(shell.image(), comps[1])
            topics.append(topic or comps[1])
        elif head == "brokers":
            brokers.append(comps[1] if len(comps) >= 2 else "*")
        elif head in ("topics", "topicIds"):
            topics.append("*")
        elif head == "acls" and len(words) == 1:
            return ["acl"]
        else:
            raise CommandError(
                f"describe: {word}: not a topic or a broker (describe /topics/NAME or /brokers/ID)"
            )
    if topics and brokers:
        raise CommandError("describe: give topics or brokers, not both")
    return ["broker", *brokers] if brokers else topics


def _is_path(word: str) -> bool:
    return "/" in word or word in (".", "..")


def _topic_by_id(image: MetadataImage, text: str) -> str | None:
    topic_id = uuid_or_none(text)
    topic = None if topic_id is None else image.topics.by_id.get(topic_id)
    return None if topic is None else topic.name


def _topic_json(
    shell: Shell, image: MetadataImage, topic: Topic, filters: answers.TopicFilters
) -> dict[str, object]:
    min_isr, origin = effective_min_isr(image, topic.name)
    return {
        "topic": topic.name,
        "topicId": uuid_to_str(topic.id),
        "partitionCount": len(topic.partitions),
        "configs": dict(answers.topic_overrides(image, topic.name, shell.settings.redact)),
        "minInsyncReplicas": min_isr,
        "minInsyncReplicasFrom": origin,
        "partitions": [
            PartitionRef(topic.name, pid, p).as_json()
            for pid, p in answers.shown_partitions(image, topic, filters)
        ],
    }


def _describe_acls(shell: Shell, p: Parsed) -> None:
    query = answers.acl_query(p.opts)
    decision = decide(shell.image(), query)
    if shell.wants_json(p):
        shell.emit_json(
            {
                "query": {k: v for k, v in vars(query).items() if v is not None},
                "bindings": [acl_form(a) for a in decision.bindings],
                "decision": decision.result,
                "reason": decision.reason or None,
                "decidedBy": [acl_form(a)["id"] for a in decision.deciding],
            }
        )
        return
    for line in answers.acl_lines(decision):
        shell.write(line + "\n")


def _describe_brokers(shell: Shell, p: Parsed, patterns: list[str]) -> None:
    brokers = shell.image().cluster.brokers
    ids = _matching([str(b) for b in sorted(brokers)], patterns, "broker", shell)
    for bid in ids:
        info = answers.describe_broker(shell.image(), int(bid))
        if shell.wants_json(p):
            shell.emit_json(info)
        else:
            shell.write_painted("".join(line + "\n" for line in answers.broker_lines(info)), colour.describe)


def _matching(names: list[str], patterns: list[str], what: str, shell: Shell) -> list[str]:
    """``names`` matched by ``patterns`` (globs or literal names; none = all), in order; a pattern
    that matches nothing is an error (Kafka: "Topic 'x' does not exist as expected")."""
    if not patterns:
        return names
    chosen: set[str] = set()
    for pattern in patterns:
        rx = glob_regex(pattern)
        hits = (
            [n for n in names if rx.match(n)] if rx is not None else ([pattern] if pattern in names else [])
        )
        if not hits:
            near = close_matches(pattern, names, n=1, cutoff=0.7) if rx is None else []
            hint = f" (did you mean {near[0]}?)" if near else ""
            shell.error(f"describe: {what} '{pattern}' does not exist{hint}")
        chosen.update(hits)
    return [n for n in names if n in chosen]


def complete_targets(context: CompletionContext, words: list[str], partial: str) -> list[str]:
    """Topic names, ``broker`` and ``acl``; after ``broker``, the broker ids (as the tree lists
    them under ``/topics`` and ``/brokers``)."""

    def listed(folder: str) -> list[str]:
        node = context.root.child(folder)
        return node.child_names() if node is not None and node.is_dir else []

    if len(words) > 1 and words[1] == "broker":
        names = listed("brokers")
    elif len(words) > 1 and words[1] in ("acl", "acls"):
        names = []
    else:
        names = (["acl", "broker"] if len(words) == 1 else []) + listed("topics")
    return [n for n in names if n.startswith(partial)]


def _principals(context: CompletionContext) -> list[str]:
    """``describe acl --principal``: every principal an ACL names, and each SCRAM user."""
    image = context.root.ctx.image
    found = {a.principal for a in image.acls.values()} | {f"User:{user}" for _m, user in image.scram}
    return sorted(found)


def _resources(context: CompletionContext) -> list[str]:
    image = context.root.ctx.image
    named = {f"{RESOURCE_WORDS.get(a.resource_type, 'topic')}:{a.resource_name}" for a in image.acls.values()}
    return sorted(named | {f"topic:{name}" for name in image.topics.by_name} | {"cluster:kafka-cluster"})


def _operations(_context: CompletionContext) -> list[str]:
    return [name for key, name in sorted(ACL_OPERATION_NAMES.items()) if key > 1]


DESCRIBE_COMMAND = Command(
    CommandSpec(
        "describe",
        "Describe topics as kafka-topics --describe does, brokers, or ACLs that apply.",
        Positional(
            "targets",
            "Topic names or globs (default: every topic), 'broker' followed by "
            "broker ids or globs (default: every broker), or 'acl' (with the options below: "
            "the ACL bindings that apply, as Kafka's authorizer matches them).",
            "*",
        ),
        (
            Option(
                ("--under-replicated-partitions",),
                "under_replicated",
                "Only show under-replicated partitions.",
            ),
            Option(
                ("--unavailable-partitions",),
                "unavailable",
                "Only show partitions whose leader is not available.",
            ),
            Option(
                ("--under-min-isr-partitions",),
                "under_min_isr",
                "Only show partitions whose isr count is less than the configured minimum.",
            ),
            Option(
                ("--at-min-isr-partitions",),
                "at_min_isr",
                "Only show partitions whose isr count is equal to the configured minimum.",
            ),
            Option(
                ("--topics-with-overrides",),
                "with_overrides",
                "Only show topics that have overridden configs.",
            ),
            Option(
                ("--principal",),
                "principal",
                "describe acl: the principal asking (User:alice).",
                "PRINCIPAL",
            ),
            Option(
                ("--resource",),
                "resource",
                "describe acl: the resource, TYPE:NAME (topic:orders, "
                "group:app, cluster:kafka-cluster, transactional_id:tx).",
                "RESOURCE",
            ),
            Option(
                ("--operation",),
                "operation",
                "describe acl: the operation (READ, WRITE, DESCRIBE...): "
                "with --principal and --resource, says whether it is allowed.",
                "OPERATION",
            ),
            Option(("--host",), "host", "describe acl: the client host (default: any).", "HOST"),
            JSON_OPT,
        ),
        notes=(
            (
                "The configured minimum is the topic's min.insync.replicas override, else the cluster "
                "default; when neither is in the metadata only leaderless partitions count as under it."
            ),
            "Configs lists the topic's overrides (kafka-topics also lists broker-level settings).",
        ),
    ),
    run=run_describe,
    complete=complete_targets,
    option_values={"principal": _principals, "resource": _resources, "operation": _operations},
    tui=TuiMode.WORKER,
)
