#!/usr/bin/env python3
"""Generate ``metashell/image/feature_rules.py``: what each feature level depends on, from Kafka.

``upgrade-check`` must refuse what the controller refuses.  Besides the registered ranges, a
feature level can depend on other features' levels (``FeatureVersion.dependencies``, checked by
``Feature.validateVersion`` when the controller finalizes it): eligible leader replicas need
metadata.version 4.0-IV1, for one.  The table comes from Kafka's own enums
(``scripts/java/FeatureRules.java`` run against the release's jars through the harness), never from
a hand-copied list.  Release: the newest the suite uses (a level's dependencies do not change once
it is released, and 3.9's enums have another shape).

    python scripts/gen_feature_rules.py            # rewrites metashell/image/feature_rules.py
    python scripts/gen_feature_rules.py --check    # exit 1 if the file is out of date
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

from generated import generator_main
from kafka_harness import KafkaDist

RELEASE = "4.4.0"
PROGRAM = SCRIPTS / "java" / "FeatureRules.java"
TARGET = SCRIPTS.parent / "metashell" / "image" / "feature_rules.py"


def render() -> str:
    dist = KafkaDist(RELEASE).ensure()
    out = dist.run_program(PROGRAM, beside="kafka.Kafka", check=True, timeout=300).stdout
    minimum = 0
    levels: dict[str, dict[int, dict[str, int]]] = {}
    for line in out.splitlines():
        kind, *cols = line.split("\t")
        if kind == "minimum":
            minimum = int(cols[0])
        elif kind == "level":
            feature, level, _production, deps = cols
            pairs = (d.partition("=") for d in deps.split(",") if d)
            levels.setdefault(feature, {})[int(level)] = {name: int(value) for name, _, value in pairs}
    lines = [
        '"""What each feature level depends on, by Kafka\'s own rules: GENERATED, do not edit.',
        "",
        f"Made by ``python scripts/gen_feature_rules.py`` from Kafka {RELEASE}'s Feature enum",
        "(``FeatureVersion.dependencies``, checked by ``Feature.validateVersion``).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f"RELEASE = {json.dumps(RELEASE)}",
        "",
        f"MINIMUM_METADATA_VERSION = {minimum}",
        '"""``MetadataVersion.MINIMUM_VERSION``: any feature at level 1 or more needs at least this."""',
        "",
        "LEVELS: dict[str, dict[int, dict[str, int]]] = {",
    ]
    for feature in sorted(levels):
        lines.append(f"    {json.dumps(feature)}: {{")
        for level, deps in sorted(levels[feature].items()):
            needs = ", ".join(f"{json.dumps(name)}: {value}" for name, value in sorted(deps.items()))
            lines.append(f"        {level}: {{{needs}}},")
        lines.append("    },")
    lines += ["}", '"""Feature -> each level it has -> the features (and levels) that level needs."""', ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(generator_main(__doc__ or "", TARGET, render, "scripts/gen_feature_rules.py"))
