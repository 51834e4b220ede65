"""An anonymised bundle of metadata directories: what an operator can send to a vendor or attach to
a bug report.  For each node, a ``__cluster_metadata-0`` directory whose records are re-encoded with
every identifying string replaced by a keyed pseudonym, secrets dropped, and everything else kept:
ids, offsets, epochs, batch boundaries, record types and versions, timestamps.  The CRCs are
computed again, so metashell, Kafka's ``kafka-metadata-shell`` and ``kafka-dump-log`` open it.

Pseudonyms are HMAC-SHA256 of the name under a key drawn for the bundle and never written: the same
name gets the same pseudonym everywhere in one bundle (across nodes, files and record types: a user
named by an ACL's principal, a SCRAM credential and a quota entity stays one user), and nothing in
the bundle leads back to it.  A topic keeps a topic's syntax (``topic-...``), a principal its type
(``User:user-...``), a host becomes ``host-....invalid``.  Kafka's internal topics (``__...``),
the ``*`` wildcard and default entities keep their names: they identify nothing and decide verdicts.

What is identifying is declared per record type and field (``FIELD_KINDS``); ``tests/test_bundle.py``
fails on a string field of any metadata schema that is in neither it nor ``KEPT_FIELDS``.  Config
values are kept unless sensitive (as ``tree.redact`` decides: replaced by :data:`DROPPED`, not
null, which would delete the config), with any host, principal or client id found in them replaced; SCRAM salts and keys are
zeroed (same length).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import io
import json
import os
import re
import tarfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from metashell.errors import MetashellError
from metashell.log.compression import compress_records
from metashell.log.encoding import encode_record, frame_batch
from metashell.log.scan import iter_batches
from metashell.protocol.control import decode_control_record, encode_control_record
from metashell.protocol.metadata import decode_metadata_record, encode_metadata_record
from metashell.tree.redact import is_sensitive_config

#: (record type, field path) -> the kind of name it holds.  A path steps into lists with ``[]``.
FIELD_KINDS: dict[tuple[str, str], str] = {
    ("TopicRecord", "Name"): "topic",
    ("ClearElrRecord", "TopicName"): "topic",
    ("RegisterBrokerRecord", "EndPoints[].Host"): "host",
    ("RegisterControllerRecord", "EndPoints[].Host"): "host",
    ("KRaftVoters", "Voters[].Endpoints[].Host"): "host",
    ("AccessControlEntryRecord", "Principal"): "principal",
    ("AccessControlEntryRecord", "Host"): "host",
    ("AccessControlEntryRecord", "ResourceName"): "acl-resource",
    ("UserScramCredentialRecord", "Name"): "user",
    ("RemoveUserScramCredentialRecord", "Name"): "user",
    ("DelegationTokenRecord", "Owner"): "principal",
    ("DelegationTokenRecord", "Requester"): "principal",
    ("DelegationTokenRecord", "Renewers[]"): "principal",
    ("DelegationTokenRecord", "TokenId"): "token",
    ("RemoveDelegationTokenRecord", "TokenId"): "token",
    ("ClientQuotaRecord", "Entity[].EntityName"): "quota-entity",
    ("ConfigRecord", "ResourceName"): "config-resource",
    ("ConfigRecord", "Value"): "config-value",
    ("BeginTransactionRecord", "Name"): "text",
    ("AbortTransactionRecord", "Reason"): "text",
}

#: String fields that name no one: Kafka's own vocabulary (features, listener names, config keys,
#: quota keys and entity types) and a broker's rack.
KEPT_FIELDS: frozenset[tuple[str, str]] = frozenset(
    {
        ("FeatureLevelRecord", "Name"),
        ("RegisterBrokerRecord", "Features[].Name"),
        ("RegisterControllerRecord", "Features[].Name"),
        ("RegisterBrokerRecord", "EndPoints[].Name"),
        ("RegisterControllerRecord", "EndPoints[].Name"),
        ("KRaftVoters", "Voters[].Endpoints[].Name"),
        ("RegisterBrokerRecord", "Rack"),
        ("ConfigRecord", "Name"),
        ("ClientQuotaRecord", "Key"),
        ("ClientQuotaRecord", "Entity[].EntityType"),
    }
)

#: ACL resource types (Kafka's ``ResourceType``) and config resource types (``ConfigResource.Type``).
_ACL_KINDS = {2: "topic", 3: "group", 5: "transactional-id", 6: "token", 7: "principal"}
_CONFIG_KINDS = {2: "topic", 16: "client-metrics", 32: "group"}
_QUOTA_KINDS = {"user": "user", "client-id": "client", "ip": "host"}
#: Kinds whose names are looked for inside free text (config values): long enough to be a name.
_SCRUBBED_IN_TEXT = ("host", "user", "client", "token")
_SCRUB_MIN = 4
_SECRET_BYTES = ("Salt", "StoredKey", "ServerKey")
#: What a sensitive config value becomes.
DROPPED = "[dropped by metashell bundle]"

_FORMS = {
    "topic": "topic-{}",
    "user": "user-{}",
    "host": "host-{}.invalid",
    "client": "client-{}",
    "token": "token-{}",
    "group": "group-{}",
    "transactional-id": "txn-{}",
    "client-metrics": "metrics-{}",
}


@dataclass
class Pseudonyms:
    """Name -> pseudonym for one bundle, and what was replaced (counts by kind, never names)."""

    key: bytes = field(default_factory=lambda: os.urandom(32), repr=False)
    keep_names: bool = False
    made: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)
    dropped: Counter[str] = field(default_factory=Counter)
    #: The names looked for inside free text (``_SCRUBBED_IN_TEXT``), and their pattern once made.
    _in_text: dict[str, str] = field(default_factory=dict, repr=False)
    _pattern: re.Pattern[str] | None = field(default=None, repr=False)

    def name(self, kind: str, original: str | None) -> str | None:
        if original is None or original in ("", "*") or (kind == "topic" and original.startswith("__")):
            return original
        if self.keep_names:
            return original
        known = self.made.get((kind, original))
        if known is None:
            digest = hmac.new(self.key, f"{kind}\0{original}".encode(), hashlib.sha256).digest()
            tag = base64.b32encode(digest[:10]).decode().lower()
            known = self.made[(kind, original)] = _FORMS[kind].format(tag)
            if kind in _SCRUBBED_IN_TEXT and len(original) >= _SCRUB_MIN:
                self._in_text[original] = known
                self._pattern = None
        return known

    def principal(self, original: str | None) -> str | None:
        """``User:alice`` -> ``User:user-...``: the principal type is Kafka's, the name is not."""
        if original is None or original in ("", "*", "User:*"):
            return original
        ptype, sep, pname = original.partition(":")
        return f"{ptype}:{self.name('user', pname)}" if sep else self.name("user", original)

    def scrub(self, text: str | None) -> str | None:
        """``text`` with every known host, user, client id and token id in it replaced."""
        if text is None or self.keep_names or not self._in_text:
            return text
        if self._pattern is None:  # one alternation, longest first: a name inside a longer one waits
            names = sorted(self._in_text, key=len, reverse=True)
            self._pattern = re.compile("|".join(map(re.escape, names)))
        return self._pattern.sub(lambda m: self._in_text[m.group(0)], text)

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(kind for kind, _ in self.made).items()))


def _walk(value: Any, path: list[str], fn: Callable[[Any], Any]) -> Any:
    """``value`` with ``fn`` applied at ``path`` (``X[]`` steps into each item of list ``X``)."""
    if not path:
        return fn(value)
    step, rest = path[0], path[1:]
    listed = step.endswith("[]")
    name = step[:-2] if listed else step
    if not isinstance(value, dict) or value.get(name) is None:
        return value
    inner = value[name]
    if listed:
        new = [_walk(item, rest, fn) if rest else fn(item) for item in inner]
    else:
        new = _walk(inner, rest, fn)
    return {**value, name: new}


class Rewriter:
    """Re-encodes records with their names replaced (``pseudonyms``)."""

    def __init__(self, pseudonyms: Pseudonyms) -> None:
        self.p = pseudonyms

    def _one(self, kind: str, data: dict[str, Any], s: Any) -> Any:
        """The replacement of string ``s`` of a field of ``kind`` in a record holding ``data``."""
        p = self.p
        if not isinstance(s, str):
            return s
        if kind == "principal":
            return p.principal(s)
        if kind in ("acl-resource", "config-resource"):
            what = (_ACL_KINDS if kind == "acl-resource" else _CONFIG_KINDS).get(
                int(data.get("ResourceType", 0))
            )
            if what == "principal":  # a USER resource is named by its principal (User:alice)
                return p.principal(s)
            return p.name(what, s) if what is not None else s
        if kind == "config-value":
            if is_sensitive_config(int(data.get("ResourceType", 0)), str(data.get("Name", ""))):
                p.dropped["config values"] += 1
                return DROPPED  # not null: a null value deletes the config, and it must stay set
            return p.scrub(s)
        if kind == "text":
            return p.scrub(s)
        return p.name(kind, s)

    def _replace(self, record: str, data: dict[str, Any]) -> dict[str, Any]:
        p = self.p
        for (rtype, path), kind in FIELD_KINDS.items():
            if rtype != record:
                continue
            if kind == "quota-entity":
                entities = [
                    {
                        **e,
                        "EntityName": p.name(
                            _QUOTA_KINDS.get(str(e.get("EntityType")), "client"), e.get("EntityName")
                        ),
                    }
                    for e in data.get("Entity") or []
                ]
                data = {**data, "Entity": entities}
                continue
            data = _walk(data, path.split("."), functools.partial(self._one, kind, data))
        if record == "UserScramCredentialRecord":
            for secret in _SECRET_BYTES:
                if isinstance(data.get(secret), (bytes, bytearray)):
                    data = {**data, secret: bytes(len(data[secret]))}
            p.dropped["SCRAM credentials"] += 1
        return data

    def metadata_value(self, value: bytes) -> bytes:
        record = decode_metadata_record(value)
        data = self._replace(record.name, record.data)
        if data == record.data:
            return value
        return encode_metadata_record(record.name, record.version, data)

    def control(self, key: bytes | None, value: bytes | None) -> tuple[bytes | None, bytes | None]:
        ctl = decode_control_record(key, value)
        if ctl.name != "KRaftVoters" or not ctl.data:
            return key, value
        data = self._replace("KRaftVoters", ctl.data)
        if data == ctl.data:
            return key, value
        return encode_control_record("KRaftVoters", data)

    def file(self, data: bytes, source: str) -> bytes:
        """Every batch of a log segment or snapshot, its records rewritten and its CRC computed
        again; a batch nothing changed in is copied byte for byte.  What follows the last whole
        batch (a torn tail, zero padding) is left out."""
        out = []
        for batch in iter_batches(data, source):
            raw = data[batch.position : batch.position + 12 + batch.batch_length]
            records = batch.records()
            changed = False
            encoded = []
            for r in records:
                key, value = r.key, r.value
                if batch.is_control:
                    key, value = self.control(key, value)
                elif value is not None:
                    value = self.metadata_value(value)
                changed |= (key, value) != (r.key, r.value)
                encoded.append(
                    encode_record(
                        r.offset - batch.base_offset,
                        key,
                        value,
                        r.timestamp - batch.base_timestamp,
                        r.headers,
                    )
                )
            if not changed:
                out.append(raw)
                continue
            codec = batch.attributes & 0x07
            body = b"".join(encoded)
            area = compress_records(codec, body) if codec else body
            header = (
                batch.attributes,
                batch.last_offset_delta,
                batch.base_timestamp,
                batch.max_timestamp,
                batch.producer_id,
                batch.producer_epoch,
                batch.base_sequence,
                batch.records_count,
            )
            out.append(frame_batch(batch.base_offset, batch.partition_leader_epoch, header, area))
        return b"".join(out)


#: Files of a node's metadata directory copied as they are: ids and epochs, no names.
COPIED = ("meta.properties", "quorum-state", "leader-epoch-checkpoint", "partition.metadata")


@dataclass
class NodeFiles:
    label: str
    log_dir: Path | None
    partition_dir: Path | None


def node_files(node: NodeFiles) -> Iterator[tuple[str, Path, str]]:
    """(name in the bundle, file, how: ``records`` or ``copy``) for one node; what else the
    directories hold (index files, producer snapshots, Kafka's ``.deleted`` leftovers) is left out."""
    if node.log_dir is not None:
        for name in ("meta.properties", "bootstrap.checkpoint"):
            f = node.log_dir / name
            if f.is_file():
                yield f"{node.label}/{name}", f, "records" if name.endswith(".checkpoint") else "copy"
    if node.partition_dir is not None:
        for f in sorted(node.partition_dir.iterdir()):
            where = f"{node.label}/__cluster_metadata-0/{f.name}"
            if f.suffix in (".log", ".checkpoint") and f.is_file():
                yield where, f, "records"
            elif f.name in COPIED and f.is_file():
                yield where, f, "copy"


def write_bundle(
    nodes: list[NodeFiles], out: Path, *, keep_names: bool, version: str, key: bytes | None = None
) -> dict[str, Any]:
    """Write the bundle of ``nodes`` to ``out`` (a tar, gzipped when its name ends in .gz); returns
    its manifest.  Two passes over the records: the first learns every name (so that a host is
    replaced wherever it appears, also in a config value read before the broker registered), the
    second writes.  ``key``: the pseudonyms' key (tests; by default one drawn for this bundle)."""
    pseudonyms = Pseudonyms(keep_names=keep_names) if key is None else Pseudonyms(key, keep_names)
    rewriter = Rewriter(pseudonyms)
    files = [entry for node in nodes for entry in node_files(node)]
    for _name, path, how in files:
        if how == "records":
            rewriter.file(path.read_bytes(), str(path))
    pseudonyms.dropped.clear()
    written = []
    tmp = out.with_name(out.name + ".part")
    try:
        with (
            tarfile.open(tmp, "w:gz") if out.name.endswith((".gz", ".tgz")) else tarfile.open(tmp, "w") as tar
        ):
            for name, path, how in files:
                data = path.read_bytes()
                body = rewriter.file(data, str(path)) if how == "records" else data
                _add(tar, name, body)
                written.append({"file": name, "bytes": len(body), "rewritten": how == "records"})
            manifest = {
                "madeBy": f"metashell {version}",
                "madeAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "nodes": [n.label for n in nodes],
                "namesKept": keep_names,
                "replaced": pseudonyms.counts(),
                "dropped": dict(sorted(pseudonyms.dropped.items())),
                "keyWritten": False,
                "files": written,
            }
            _add(tar, "manifest.json", (json.dumps(manifest, indent=2) + "\n").encode())
        tmp.replace(out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return manifest


def _add(tar: tarfile.TarFile, name: str, body: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(body), 0o644, 0
    tar.addfile(info, io.BytesIO(body))


class BundleError(MetashellError):
    """The bundle cannot be written (its path is inside a directory it reads, or taken)."""
