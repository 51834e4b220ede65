"""``bundle`` (issue 59): the anonymised bundle of every fixture answers as the original does with
pseudonyms in place of names, holds no original name, keeps every record's place, and declares
every string field of Kafka's metadata schemas as a name to replace or a word to keep."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, REPO, corpus_dirs
from test_cli import run_cli

from metashell.log.directory import open_metadata_dir
from metashell.shell.bundle import FIELD_KINDS, KEPT_FIELDS, NodeFiles, Pseudonyms, Rewriter, write_bundle

FIXTURE_DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir() and (p / "__cluster_metadata-0").is_dir())
KEY = bytes(range(32))
#: What each node is asked, on the original and on the bundle, and how the answers must agree:
#: ``exact`` (with the names put back), ``lines`` (the same lines, in an order that sorts by name),
#: ``shape`` (the JSON verdict, counts and findings: a list's first items are chosen by name).
ASKED = {
    "health --json": "shape",
    "doctor --json": "shape",
    "quorum": "exact",
    "cat /brokers/*": "exact",
    "describe": "lines",
    "ls -R /topics": "lines",
    "describe acl": "lines",
    "ls -R /configs /quotas /scram /delegationTokens": "lines",
}


def _shape(text: str) -> Any:
    doc = json.loads(text)
    findings = [
        {k: f.get(k) for k in ("key", "severity", "count")} | {"items": len(f.get("items", []))}
        for f in doc["findings"]
    ]
    return {k: doc.get(k) for k in ("healthy", "clean", "verdict", "brokers", "topics", "partitions")} | {
        "findings": findings
    }


def _string_fields(fields: list[dict[str, Any]], prefix: str = "") -> list[str]:
    out = []
    for f in fields:
        name, ftype = f["name"], f["type"]
        if ftype == "string":
            out.append(prefix + name)
        elif ftype == "[]string":
            out.append(prefix + name + "[]")
        elif "fields" in f:
            out += _string_fields(f["fields"], prefix + name + ("[]." if ftype.startswith("[]") else "."))
    return out


def test_every_string_field_of_the_schemas_is_replaced_or_kept() -> None:
    """A new schema or field that holds text fails here until it is declared one or the other."""
    schemas = sorted((REPO / "metashell" / "protocol" / "schemas" / "metadata").glob("*Record.json"))
    assert len(schemas) > 20
    undeclared = []
    for path in schemas:
        text = "\n".join(line for line in path.read_text().splitlines() if not line.strip().startswith("//"))
        schema = json.loads(text)
        for field in _string_fields(schema.get("fields", [])):
            if (schema["name"], field) not in FIELD_KINDS and (schema["name"], field) not in KEPT_FIELDS:
                undeclared.append((schema["name"], field))
    assert not undeclared, undeclared


def _nodes(fixture: Path) -> list[NodeFiles]:
    d = open_metadata_dir(fixture)
    node_id = d.meta.node_id if d.meta is not None else None
    return [NodeFiles(f"node-{node_id}", d.log_dir, d.path)]


def _originals(nodes: list[NodeFiles]) -> dict[str, str]:
    """Pseudonym -> the original name, as the bundle made them with ``KEY`` (a pseudonym is a
    random-looking word: putting the original back where it stands can touch nothing else)."""
    from metashell.shell.bundle import node_files

    p = Pseudonyms(KEY)
    rewriter = Rewriter(p)
    for node in nodes:
        for _name, path, how in node_files(node):
            if how == "records":
                rewriter.file(path.read_bytes(), str(path))
    return {pseudonym: original for (_kind, original), pseudonym in p.made.items()}


def _restored(text: str, originals: dict[str, str], copy: Path, original_dir: Path) -> str:
    for pseudonym, original in originals.items():
        text = text.replace(pseudonym, original)
    return text.replace(str(copy), str(original_dir))


def _ask(path: Path, command: str) -> tuple[int, str]:
    code, out, _err = run_cli("-d", str(path), "-c", command)
    return code, out


@pytest.mark.parametrize("fixture", FIXTURE_DIRS, ids=lambda p: p.name)
def test_the_bundle_answers_as_the_original_does(fixture: Path, tmp_path: Path) -> None:
    _check_bundle(fixture, tmp_path)


@pytest.mark.parametrize("corpus_dir", corpus_dirs())
def test_the_bundle_of_every_corpus_directory_answers_as_it_does(corpus_dir: Path, tmp_path: Path) -> None:
    _check_bundle(corpus_dir, tmp_path)


def _check_bundle(fixture: Path, tmp_path: Path) -> None:
    nodes = _nodes(fixture)
    out = tmp_path / "bundle.tar"
    manifest = write_bundle(nodes, out, keep_names=False, version="test", key=KEY)
    assert manifest["keyWritten"] is False and manifest["nodes"] == [n.label for n in nodes]
    with tarfile.open(out) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    originals = _originals(nodes)
    copy = tmp_path / "x" / nodes[0].label
    for command, how in ASKED.items():
        code, original = _ask(fixture, command)
        bundled_code, bundled = _ask(copy, command)
        assert bundled_code == code, command
        bundled = _restored(bundled, originals, copy, fixture)
        if how == "shape":
            assert _shape(bundled) == _shape(original), command
        elif how == "lines":
            assert sorted(bundled.splitlines()) == sorted(original.splitlines()), command
        else:
            assert bundled == original, command
    # every record kept its place: offset, time, epoch, type and batch
    _, original = _ask(fixture, "log --all --json")
    _, bundled = _ask(copy, "log --all --json")

    def place(r: dict[str, Any]) -> tuple[Any, ...]:
        return (r["offset"], r["timestamp"], r["leaderEpoch"], r["type"], r["batch"]["baseOffset"])

    assert [place(json.loads(x)) for x in bundled.splitlines()] == [
        place(json.loads(x)) for x in original.splitlines()
    ]
    # no original name of five characters or more anywhere in the bundle's bytes
    raw = out.read_bytes()
    leaked = [n for n in originals.values() if len(n) >= 5 and n.encode() in raw]
    assert not leaked, leaked


def test_the_command_writes_a_bundle_and_refuses_to_write_into_a_metadata_directory(tmp_path: Path) -> None:
    out = tmp_path / "b.tar.gz"
    code, said, err = run_cli("-d", str(FIXTURES / "demo"), "-c", f"bundle --out {out}")
    assert code == 0, err
    assert said.startswith(f"bundle: {out}: 1 node(s), ") and "the key is not written" in said
    with tarfile.open(out) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
    assert manifest["replaced"]["topic"] >= 3 and "orders" not in json.dumps(manifest)
    code, _, err = run_cli("-d", str(FIXTURES / "demo"), "-c", f"bundle --out {out}")
    assert code == 1 and "exists" in err
    inside = FIXTURES / "demo" / "__cluster_metadata-0" / "b.tar"
    code, _, err = run_cli("-d", str(FIXTURES / "demo"), "-c", f"bundle --out {inside}")
    assert code == 1 and "never writes into a metadata directory" in err and not inside.exists()
    code, _, err = run_cli(
        "-s",
        str(FIXTURES / "demo" / "__cluster_metadata-0" / "00000000000000000000.log"),
        "-c",
        f"bundle --out {tmp_path / 'c.tar'}",
    )
    assert code == 1 and "needs metadata directories (-d)" in err


@pytest.mark.kafka
@pytest.mark.parametrize("fixture", [*FIXTURE_DIRS, *corpus_dirs()], ids=lambda p: getattr(p, "name", str(p)))
def test_kafkas_own_tools_open_the_bundle(fixture: Path, tmp_path: Path, kafka_oracle: Any) -> None:
    """``kafka-dump-log`` reads every file the bundle rewrote as metashell does (valid CRCs, the
    same records), batch for batch where the original's batches were (a file copied byte for byte
    is the original, which test_dump_log_oracle reads); Kafka's metadata shell loads the newest
    snapshot and lists the pseudonyms metashell's /image lists."""
    from test_dump_log_oracle import assert_equal_to_dump, parse_dump

    nodes = _nodes(fixture)
    out = tmp_path / "bundle.tar"
    write_bundle(nodes, out, keep_names=False, version="test", key=KEY)
    with tarfile.open(out) as tar:
        tar.extractall(tmp_path / "x", filter="data")
    copy = tmp_path / "x" / nodes[0].label / "__cluster_metadata-0"
    files = sorted(p for p in copy.iterdir() if p.suffix in (".log", ".checkpoint"))
    assert files
    original_dir = fixture / "__cluster_metadata-0"
    rewritten = [p for p in files if p.read_bytes() != (original_dir / p.name).read_bytes()]
    # one kafka-dump-log for them all and their originals (a JVM each cost most of this test)
    kafka_oracle.dump_logs([*rewritten, *(original_dir / p.name for p in rewritten)])
    for path in rewritten:
        dump = kafka_oracle.dump_log(path)
        assert_equal_to_dump(path, dump)
        bundled, _ = parse_dump(dump)
        original, _ = parse_dump(kafka_oracle.dump_log(original_dir / path.name))
        assert [b[:6] for b in bundled] == [b[:6] for b in original], (
            path.name
        )  # offsets, count, epoch, flags
    snapshots = [
        p for p in files if p.suffix == ".checkpoint" and not p.name.startswith("00000000000000000000-")
    ]
    if not snapshots:
        return
    newest = max(snapshots, key=lambda p: p.name)
    # once its loader applied the whole file (its one-shot mode may answer before: an empty image)
    kafka, applied = kafka_oracle.java_shell_caught_up(newest, "ls", "/image/topics/byName")
    original, original_applied = kafka_oracle.java_shell_caught_up(
        original_dir / newest.name, "ls", "/image/topics/byName"
    )
    assert applied == original_applied
    originals = _originals(nodes)
    # Kafka's shell shows the bundle as it shows the original, with the pseudonyms for the names
    assert sorted(originals.get(n, n) for n in kafka.split()) == sorted(original.split())
    assert all(n.startswith(("topic-", "__")) for n in kafka.split())


def _strings_and_secrets(files: list[Path]) -> tuple[set[str], set[bytes]]:
    """Every string field of every record in ``files``, and every secret: a sensitive config value
    and a SCRAM salt or key (as bytes)."""
    from metashell.log.scan import iter_batches
    from metashell.protocol.control import decode_control_record
    from metashell.protocol.metadata import decode_metadata_record
    from metashell.tree.redact import is_sensitive_config

    strings: set[str] = set()
    secrets: set[bytes] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            strings.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for path in files:
        for batch in iter_batches(path.read_bytes(), str(path)):
            for _offset, _ts, key, value in batch.entries():
                if batch.is_control:
                    walk(decode_control_record(key, value).data or {})
                    continue
                assert value is not None  # a data record always has a value
                record = decode_metadata_record(value)
                walk(record.data)
                data = record.data
                sensitive = record.name == "ConfigRecord" and is_sensitive_config(
                    data["ResourceType"], data["Name"]
                )
                if sensitive and data.get("Value"):
                    secrets.add(data["Value"].encode())
                if record.name == "UserScramCredentialRecord":
                    secrets |= {bytes(data[k]) for k in ("Salt", "StoredKey", "ServerKey") if data.get(k)}
    return strings, secrets


@pytest.mark.parametrize("fixture", [*FIXTURE_DIRS, *corpus_dirs()], ids=lambda p: getattr(p, "name", str(p)))
def test_no_name_of_any_length_and_no_secret_is_left(fixture: Path, tmp_path: Path) -> None:
    """Read back record by record: no string field of the bundle is an original name (however
    short: ``ops``, ``pay``), and no secret's bytes are anywhere in the bundle; with --keep-names
    the names stay and the secrets still go."""
    nodes = _nodes(fixture)
    originals = set(_originals(nodes).values())
    files = [p for p in (fixture / "__cluster_metadata-0").iterdir() if p.suffix in (".log", ".checkpoint")]
    _, secrets = _strings_and_secrets(files)
    if fixture.name in ("kafka-4.4", "demo"):
        assert secrets  # these have some to lose
    for keep in (False, True):
        out = tmp_path / f"bundle-{keep}.tar"
        write_bundle(nodes, out, keep_names=keep, version="test")
        with tarfile.open(out) as tar:
            tar.extractall(tmp_path / f"x-{keep}", filter="data")
        copy = tmp_path / f"x-{keep}" / nodes[0].label / "__cluster_metadata-0"
        strings, _ = _strings_and_secrets([copy / p.name for p in files])
        raw = out.read_bytes()
        assert not [s for s in secrets if len(s) >= 4 and s in raw]
        named = {s for s in strings if s in originals or s.partition(":")[2] in originals}  # User:bob
        if keep:
            assert {s.partition(":")[2] if s not in originals else s for s in named} == originals
        else:
            assert not named, sorted(named)


def test_a_damaged_log_is_refused_in_one_line_and_leaves_no_file(tmp_path: Path) -> None:
    import shutil

    damaged = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", damaged)
    segment = damaged / "__cluster_metadata-0" / "00000000000000000000.log"
    data = bytearray(segment.read_bytes())
    data[1000] ^= 0xFF
    segment.write_bytes(bytes(data))
    out = tmp_path / "b.tar"
    code, said, err = run_cli("-d", str(damaged), "-c", f"bundle --out {out}")
    assert code == 1 and said == "" and len(err.splitlines()) == 1, err
    assert str(segment) in err and "CRC mismatch" in err
    assert not list(tmp_path.glob("b.tar*"))
