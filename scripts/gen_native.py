#!/usr/bin/env python3
"""Generate ``native/src/decode/generated.rs``: the native core's metadata and control record decoders.

Written by :mod:`metashell.protocol.codegen_rust` from the schemas bundled in
``metashell/protocol/schemas/metadata``, with the records the replayer decodes to positional tuples
(``metashell.image.replay.topics.DECODERS``), never typed by hand:

    python scripts/gen_native.py            # rewrites native/src/decode/generated.rs
    python scripts/gen_native.py --check    # exit 1 if the file is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))

from generated import generator_main

from metashell.image.replay.topics import DECODERS
from metashell.protocol.codegen_rust import generate_rust
from metashell.protocol.control import CONTROL_SCHEMAS
from metashell.protocol.schema import bundled_schemas

TARGET = ROOT / "native" / "src" / "decode" / "generated.rs"


def render() -> str:
    return generate_rust(bundled_schemas(), DECODERS.positional, CONTROL_SCHEMAS)


if __name__ == "__main__":
    sys.exit(generator_main(__doc__ or "", TARGET, render, "scripts/gen_native.py"))
