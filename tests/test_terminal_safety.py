"""No metadata string can drive the operator's terminal (issue 12, point 3).

A log is built whose attacker-controlled strings (topic name, config keys and values, broker rack,
listener name and host, quota entity, SCRAM user, ACL principal/host/resource, token owner, cluster
id) are all one string drawn by hypothesis from every code point.  Then every command runs in
human and JSON form: human output may hold no C0 or C1 control character but newline and tab, and
JSON output must give back exactly the string.
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from metashell.cli import run
from metashell.log.encoding import build_batch
from metashell.protocol.control import encode_control_record
from metashell.protocol.metadata import encode_metadata_record as enc
from metashell.safe_text import json_safe, visible, visible_output

TOPIC_ID = b"T" * 16
INC = b"I" * 16
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # everything but \t and \n
NASTY = "\x1b]52;c;aGk=\x07\x1b[2J\rX\x08\u009b31m\u0085\t\n\x7f"


def records(s: str) -> list[bytes]:
    return [
        enc("FeatureLevelRecord", 0, {"Name": "metadata.version", "FeatureLevel": 27}),
        enc(
            "RegisterBrokerRecord",
            3,
            {
                "BrokerId": 1,
                "BrokerEpoch": 5,
                "IncarnationId": INC,
                "Rack": s,
                "Fenced": False,
                "LogDirs": [],
                "EndPoints": [{"Name": s, "Host": s, "Port": 9092, "SecurityProtocol": 0}],
                "Features": [
                    {"Name": "metadata.version", "MinSupportedVersion": 7, "MaxSupportedVersion": 27}
                ],
            },
        ),
        enc("TopicRecord", 0, {"Name": s, "TopicId": TOPIC_ID}),
        enc(
            "PartitionRecord",
            2,
            {
                "PartitionId": 0,
                "TopicId": TOPIC_ID,
                "Replicas": [1],
                "Isr": [1],
                "Leader": 1,
                "LeaderEpoch": 0,
                "PartitionEpoch": 0,
            },
        ),
        enc("ConfigRecord", 0, {"ResourceType": 2, "ResourceName": s, "Name": "retention.ms", "Value": s}),
        enc("ConfigRecord", 0, {"ResourceType": 4, "ResourceName": "", "Name": s, "Value": s}),
        enc(
            "ClientQuotaRecord",
            0,
            {
                "Entity": [{"EntityType": "user", "EntityName": s}],
                "Key": "consumer_byte_rate",
                "Value": 1.0,
                "Remove": False,
            },
        ),
        enc(
            "UserScramCredentialRecord",
            0,
            {
                "Name": s,
                "Mechanism": 1,
                "Salt": b"\x01",
                "StoredKey": b"\x02",
                "ServerKey": b"\x03",
                "Iterations": 4096,
            },
        ),
        enc(
            "AccessControlEntryRecord",
            0,
            {
                "Id": b"A" * 16,
                "ResourceType": 2,
                "ResourceName": s,
                "PatternType": 3,
                "Principal": f"User:{s}",
                "Host": s,
                "Operation": 3,
                "PermissionType": 3,
            },
        ),
        enc(
            "DelegationTokenRecord",
            0,
            {
                "Owner": f"User:{s}",
                "Requester": f"User:{s}",
                "Renewers": [f"User:{s}"],
                "IssueTimestamp": 1,
                "MaxTimestamp": 2,
                "ExpirationTimestamp": 3,
                "TokenId": "tok",
            },
        ),
    ]


def write_log(directory: Path, s: str) -> Path:
    path = directory / "__cluster_metadata-0" / "00000000000000000000.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    lc = encode_control_record(
        "LeaderChange",
        {"Version": 0, "LeaderId": 1, "Voters": [{"VoterId": 1}], "GrantingVoters": [{"VoterId": 1}]},
    )
    path.write_bytes(
        build_batch(0, 1, [lc], 1700000000000, control=True) + build_batch(1, 1, records(s), 1700000001000)
    )
    (directory / "meta.properties").write_text(f"version=1\nnode.id=1\ncluster.id={s.replace(chr(10), '')}\n")
    return path


def shell(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        status = run(list(argv), stdin=io.StringIO(""), stdout=out, stderr=err)
    except Exception as e:  # noqa: BLE001 - main() would turn it into one line; look at it the same way
        status, err = 1, io.StringIO(str(e))
    return status, out.getvalue(), err.getvalue()


HUMAN = [
    "ls / /topics /brokers/1 /configs/topic",
    "ls -l /topics /configs/broker /scram /acls",
    "find /",
    "tree /",
    "cat /topics/*/* /brokers/* /configs/*/*/* /quotas/*/* /scram/*/* /acls/*/* /delegationTokens/*",
    "tree /image",
    "cat /image/topics/byName/*/0",
    "cd /topics/*; pwd",
    "cat /nonexistent/*",
    "ls /topics/*/nope",
]


EVERY_COMMAND: dict[str, tuple[str, ...]] = {
    "at": ("at 1; ls /topics", "at 0; cat /topics/*/*"),
    "bundle": ("bundle --out {out}",),  # a new tar beside the directory each run
    "cat": ("cat /brokers/1 /acls/*",),
    "cd": ("cd /configs/topic/*; pwd",),
    "clear": ("clear",),
    "describe": (
        "describe",
        "describe --topics-with-overrides",
        "describe acl",
        "describe acl --principal User:x",
        "describe broker",
    ),
    "diff": ("diff --from 0 --to 1", "diff --from 1"),
    "doctor": ("doctor --all",),
    "exit": ("exit",),
    "find": ("find / -type f", "find / -name *"),
    "grep": ("grep -r -i e /", "grep -r -l User /"),
    "health": ("health --all",),
    "help": ("help",),
    "history": ("ls; history",),
    "log": ("log", "log --type TopicRecord"),
    "ls": ("ls -l -R /",),
    "man": ("man describe",),
    "node": ("node",),
    "pwd": ("pwd",),
    "quorum": ("quorum",),
    "quit": ("quit",),
    "tree": ("tree -L 3 /",),
    "stats": ("stats --top 3",),
    "upgrade-check": ("upgrade-check --to 3.9-IV0",),
    "watch": ("watch --count 1 /topics",),  # last: a topic is appended while it waits
}
"""Each command of the shell (``SPECS``), run on the hostile log in human form and, where it has
``--json``, in JSON form: a command missing here fails ``test_every_command_meets_hostile_names``."""


def _json_form(spec_name: str, command: str) -> str | None:
    """``command`` with ``--json`` after its first word, when that command takes it."""
    from metashell.shell.registry import specs

    SPECS = specs()

    if not any(o.flags[0] == "--json" for o in SPECS[spec_name].options) or ";" in command:
        return None
    word, _, rest = command.partition(" ")
    return f"{word} --json {rest}".rstrip()


def _strict(line: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


def _append_a_topic_soon(tmp: Path, s: str, n: int) -> threading.Thread:
    """A running node appending: a topic named ``s`` + ``n`` after 0.3 s (``watch`` waits for it)."""
    log = tmp / "__cluster_metadata-0" / "00000000000000000000.log"

    def append() -> None:
        time.sleep(0.3)
        offset = 1 + len(records(s)) + n
        topic = enc("TopicRecord", 0, {"Name": f"{s}{n}", "TopicId": bytes([n + 1]) * 16})
        with open(log, "ab") as f:
            f.write(build_batch(offset, 1, [topic], 1700000002000 + n))

    thread = threading.Thread(target=append, daemon=True)
    thread.start()
    return thread


def _run(tmp: Path, s: str, name: str, command: str, appended: list[int]) -> tuple[str, str]:
    thread = None
    if name == "watch":
        thread = _append_a_topic_soon(tmp, s, len(appended))
        appended.append(1)
    command = command.replace("{out}", str(tmp.parent / f"bundle-{uuid.uuid4().hex}.tar"))
    _, out, err = shell("-d", str(tmp), "-c", command)
    if thread is not None:
        thread.join()
    return out, err


def check_every_command(tmp: Path, s: str) -> None:
    appended: list[int] = []
    for name, commands in EVERY_COMMAND.items():
        for command in commands:
            out, err = _run(tmp, s, name, command, appended)
            assert "internal error" not in err, (command, err)
            for text in (out, err):
                bad = CONTROL.search(text)
                assert bad is None, (command, repr(text[max(bad.start() - 40, 0) : bad.end() + 40]))
            json_command = _json_form(name, command)
            if json_command:
                out, err = _run(tmp, s, name, json_command, appended)
                assert "internal error" not in err, (json_command, err)
                assert not CONTROL.search(out.replace("\n", "")), json_command
                for line in out.splitlines():
                    _strict(line)


def check_all(tmp: Path, s: str) -> None:
    write_log(tmp, s)
    for command in HUMAN:
        for extra in ([], ["--no-redact"]):
            _, out, err = shell("-d", str(tmp), *extra, "-c", command)
            for text in (out, err):
                bad = CONTROL.search(text)
                assert bad is None, (command, repr(text[max(bad.start() - 40, 0) : bad.end() + 40]))
    # JSON output: parses, and gives back the exact string
    _, out, _ = shell("-d", str(tmp), "--json", "-c", "ls /topics; cat /topics/*/*; find /scram")
    values: list[Any] = [json.loads(line) for line in out.splitlines()]
    assert not CONTROL.search(out.replace("\t", "").replace("\n", ""))
    names = {v.get("name") for v in values} | {str(v.get("value")) for v in values}
    paths = {v.get("path") for v in values}
    assert s in names or f"/topics/{s}" in paths, values[:3]


NAMES = st.text(st.characters(codec=None, exclude_categories=["Cs"]), min_size=1, max_size=12).filter(
    lambda s: "/" not in s and s not in (".", "..") and s.strip() == s and s != ""
)
"""A name of any code point but a lone surrogate (metadata strings are UTF-8) that is one path
component: no ``/``, not ``.`` or ``..``, no surrounding space (the shell's words trim it)."""
SLOW_FIXTURES = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW_FIXTURES)
@given(NAMES)
@example(NASTY.replace("/", ""))
@example("\u009b")
def test_no_control_character_reaches_the_terminal(tmp_path_factory: Any, s: str) -> None:
    check_all(tmp_path_factory.mktemp("safety"), s)


@settings(max_examples=6, deadline=None, suppress_health_check=SLOW_FIXTURES)
@given(NAMES)
@example(NASTY.replace("/", ""))
@example("[@click=app.toggle('redact')]x[/]")
def test_every_command_with_hostile_names(tmp_path_factory: Any, s: str) -> None:
    """Every command of the shell, human and ``--json``: no control character reaches the
    terminal, no internal error, every JSON line is strict JSON."""
    tmp = tmp_path_factory.mktemp("every")
    write_log(tmp, s)
    check_every_command(tmp, s)


def test_every_command_meets_hostile_names() -> None:
    """The table above names every command the shell has: a new one must be added to it."""
    from metashell.shell.registry import specs

    SPECS = specs()

    assert set(EVERY_COMMAND) == set(SPECS), set(SPECS) ^ set(EVERY_COMMAND)


def test_escapes_are_visible_and_json_round_trips() -> None:
    assert visible("a\x1b[2Jb\u009b\n\t") == "a\\x1b[2Jb\\u009b\\x0a\\x09"
    assert visible_output("a\x1b\nb\tc\x7f") == "a\\x1b\nb\tc\\u007f"
    doc = json_safe(json.dumps({"k": NASTY}, ensure_ascii=False))
    assert not CONTROL.search(doc) and json.loads(doc) == {"k": NASTY}


_CHARS = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=())
"""Any code point, lone surrogates, C0, DEL and C1 included."""


@given(st.text(_CHARS, max_size=20) | st.text(st.characters(max_codepoint=0x7F), max_size=20))
@settings(max_examples=500, deadline=None)
def test_the_ascii_fast_path_escapes_as_the_whole_pattern_does(s: str) -> None:
    """``safe_text`` checks ASCII text with ASCII-only patterns (the classes reaching the surrogates
    compile when non-ASCII text first comes): the result is the whole pattern's, for any text."""
    from metashell import safe_text as t

    def whole(pattern: str, escape: Any, text: str) -> str:
        return re.sub(pattern, escape, text)

    assert visible(s) == whole(t._ALL, t._escape, s)
    assert visible_output(s) == whole(t._NOT_LAYOUT, t._escape, s)
    assert t.storable(s) == whole(t._SURROGATE, t._json_escape, s)
    assert json_safe(s) == whole(t._JSON_UNESCAPED, t._json_escape, s)
