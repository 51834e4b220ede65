#!/usr/bin/env python3
"""Generate ``metashell/tree/config_keys.py``: Kafka's config keys and which are PASSWORD-typed.

The table comes from Kafka's own ConfigDefs (``scripts/java/ConfigKeys.java`` run against each
release's jars through the harness), never from a hand-copied list: redaction must follow Kafka's
rule (a value is sensitive when its key's type is PASSWORD or cannot be determined), and that rule
is only as good as the list of keys Kafka knows.  Releases: the newest 3.9 and 4.x the suite uses; a
key counts as known only when every release that has its resource type defines it (a key 4.x
removed is unknown, hence sensitive, to Kafka 4.x), and as a password when any release types it so:
whichever release wrote the log, metashell redacts at least what that release would.

    python scripts/gen_config_keys.py            # rewrites metashell/tree/config_keys.py
    python scripts/gen_config_keys.py --check    # exit 1 if the file is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

from generated import generator_main
from kafka_harness import KafkaDist

RELEASES = ("3.9.2", "4.4.0")
PROGRAM = SCRIPTS / "java" / "ConfigKeys.java"
TARGET = SCRIPTS.parent / "metashell" / "tree" / "config_keys.py"
#: ConfigResource.Type ids (ConfigResource.java)
TYPE_IDS = {"BROKER": 4, "TOPIC": 2, "GROUP": 32, "CLIENT_METRICS": 16}


def definitions(version: str) -> list[tuple[str, str, str]]:
    """(resource type, key, ConfigDef.Type) for every key one release defines."""
    dist = KafkaDist(version).ensure()
    out = dist.run_program(PROGRAM, beside="kafka.Kafka", check=True, timeout=300).stdout
    return [tuple(line.split("\t")) for line in out.splitlines() if line]  # type: ignore[misc]


def render() -> str:
    known: dict[int, set[str]] = {}
    password: dict[int, set[str]] = {i: set() for i in TYPE_IDS.values()}
    for version in RELEASES:
        release: dict[int, set[str]] = {}
        for rtype, key, ctype in definitions(version):
            release.setdefault(TYPE_IDS[rtype], set()).add(key)
            if ctype == "PASSWORD":
                password[TYPE_IDS[rtype]].add(key)
        for rid, keys in release.items():  # known to every release that has the resource type
            known[rid] = keys if rid not in known else known[rid] & keys

    def table(name: str, data: dict[int, set[str]], doc: str) -> str:
        lines = [f"{name}: dict[int, frozenset[str]] = {{"]
        for rid in sorted(data):
            lines.append(f"    {rid}: frozenset({{")
            lines += [f"        {k!r}," for k in sorted(data[rid])]
            lines.append("    }),")
        lines.append("}")
        lines.append(f'"""{doc}"""')
        return "\n".join(lines)

    return "\n".join(
        [
            '"""Kafka\'s config keys per resource type, and which are PASSWORD-typed: GENERATED, do not edit.',
            "",
            f"Made by ``python scripts/gen_config_keys.py`` from the ConfigDefs of Kafka {' and '.join(RELEASES)}",
            "(KafkaConfig, LogConfig, GroupConfig, ClientMetricsConfigs). Resource type ids are",
            "ConfigResource.Type's: 2 TOPIC, 4 BROKER, 16 CLIENT_METRICS, 32 GROUP.",
            '"""',
            "",
            "from __future__ import annotations",
            "",
            f"RELEASES = {RELEASES!r}",
            "",
            table("KNOWN", known, "Keys every release defines, per resource type (others are sensitive)."),
            "",
            table(
                "PASSWORD",
                password,
                "Keys some release types ``ConfigDef.Type.PASSWORD``, per resource type.",
            ),
            "",
        ]
    )


if __name__ == "__main__":
    sys.exit(generator_main(__doc__ or "", TARGET, render, "scripts/gen_config_keys.py"))
