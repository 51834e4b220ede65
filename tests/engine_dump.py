"""Everything the engine decides, for each directory given, as one JSON document on stdout: run
under ``METASHELL_ENGINE=python`` and ``native`` by ``test_native_differential.py``, which compares
the two.  Per directory: the whole tree (``/image`` included), the warnings, the image at several
offsets (time travel) and from the journal, every batch's index row and journal mark, and each of its
files loaded alone (``-s``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from metashell.engine import current
from metashell.image.loader import load_directory, load_file, rebuild_at
from metashell.tree import build_root, render_tree, resolve


def _tree(result: Any, path: str = "/") -> str:
    root = build_root(result.image, source_info={"directory": "."})
    node = resolve(root, [c for c in path.split("/") if c])
    assert node is not None, path
    return render_tree(node).replace(current().describe(), "<engine>")


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()


def _changes_at(timeline: Any) -> list[int]:
    """Each mark's place in the journal counted in changes, which both engines agree on (a native
    ``ChangeRun`` holds many changes in one entry: ``native/src/replay/journal.rs``)."""
    counts = [0]
    for e in timeline.entries:
        counts.append(counts[-1] + (1 if type(e) is tuple else len(e)))
    return [counts[n] for n in timeline._length]


def dump(directory: Path) -> dict[str, Any]:
    result = load_directory(directory, timeline=True)
    offsets = [e.last_offset for e in result.index] if result.index else []
    picks = sorted({offsets[len(offsets) * k // 4] for k in (1, 2, 3)}) if offsets else []
    files = sorted(
        p for p in (directory / "__cluster_metadata-0").iterdir() if p.suffix in (".log", ".checkpoint")
    )
    singles: dict[str, dict[str, Any]] = {}
    for f in files:
        try:
            one = load_file(f)
        except Exception as e:  # noqa: BLE001 - the error itself is what is compared
            singles[f.name] = {"error": f"{type(e).__name__}: {e}"}
        else:
            singles[f.name] = {
                "tree": _tree(one),  # /image, /provenance (caught up or not) and the friendly tree
                "warnings": [str(w) for w in one.warnings],  # the deltas Kafka drops among them
                "index": _digest([list(e) for e in one.index]),
            }
    journal = {}
    timeline = result.timeline
    if timeline is not None:  # the journal time travel replays backwards (``at`` in the shell)
        for o in picks:
            if timeline.can_reach(o):
                timeline.move_to(o)
                journal[str(o)] = _tree(result, "/image")
        timeline.move_to(None)
    marks = (
        None
        if timeline is None
        else [list(t) for t in (timeline._last, _changes_at(timeline), timeline._prov)]
    )
    if timeline is not None:
        marks.append(list(timeline._txn_open))
    return {
        "tree": _tree(result),
        # every batch's index row, and the journal's mark after each batch (digests: a corpus
        # directory has hundreds of thousands of batches)
        "index": _digest([list(e) for e in result.index]),
        "marks": _digest(marks),
        "journal": journal,
        "warnings": [str(w) for w in result.warnings],
        "records": result.records,
        "at": {str(o): _tree(rebuild_at(result, o), "/image") for o in picks},
        "files": singles,
    }


def main(argv: list[str]) -> int:
    out: dict[str, Any] = {"engine": current().describe()}
    for arg in argv:
        out[arg] = dump(Path(arg))
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
