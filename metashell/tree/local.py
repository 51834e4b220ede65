"""``/local``: facts about the tool itself (Kafka's shell: its own version and commit id)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import metashell

from .node import Node, ScalarLeaf, StaticDir, TreeContext


@lru_cache(maxsize=1)
def commit_id() -> str:
    """The git commit metashell runs from (16 hex digits, like Kafka's), or ``unknown``."""
    root = Path(metashell.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return "unknown"
    import subprocess  # only when /local/commitId is read: a one-shot start does not pay for it

    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    sha = out.stdout.strip()
    return sha[:16] if out.returncode == 0 and sha else "unknown"


def build_local_node(ctx: TreeContext, name: str = "local") -> Node:
    return StaticDir(
        name,
        ctx,
        {
            "version": lambda n: ScalarLeaf(n, ctx, lambda r: metashell.__version__),
            "commitId": lambda n: ScalarLeaf(n, ctx, lambda r: commit_id()),
        },
    )
