"""What every generator script does last: write the generated module, or check it is up to date.

``--check`` is what the tests run: a generated file edited by hand, or a source that changed
without regenerating, fails with the command that fixes it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
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


def generator_main(doc: str, target: Path, render: Callable[[], str], script: str) -> int:
    """The command line every generator has: rewrite ``target``, or ``--check`` it."""
    parser = argparse.ArgumentParser(description=doc.strip().split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the file is up to date")
    args = parser.parse_args()
    return write_or_check(target, render(), check=args.check, script=script)
