"""What every generator script does last: write the generated module, or check it is up to date.

``--check`` is what the tests run: a generated file edited by hand, or a source that changed
without regenerating, fails with the command that fixes it.
"""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(target: Path, text: str, *, check: bool, script: str) -> int:
    """Write ``text`` to ``target`` (status 0), or with ``check`` only compare (1 when it differs)."""
    if check:
        if not target.exists() or target.read_text() != text:
            print(f"{target} is out of date: run python {script}", file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    print(f"wrote {target}")
    return 0
