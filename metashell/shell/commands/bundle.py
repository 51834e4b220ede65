"""``bundle``: the metadata directories opened, anonymised, in one tar to send elsewhere
(``shell/bundle.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...safe_text import visible
from ..registry import Command, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed

if TYPE_CHECKING:
    from ..bundle import NodeFiles
    from ..session import Shell


def _nodes(shell: Shell) -> list[NodeFiles]:
    """Each directory of the session (one ``-d``, or every node of several), labelled by its node
    id (a path can name a host or a customer; a node id names nothing outside the cluster)."""
    from metashell.log.directory import open_metadata_dir

    from ..bundle import NodeFiles

    source = shell.source
    if source is not None and source.nodes:
        listings = [open_metadata_dir(path) for path in source.nodes.values()]
    elif source is not None and source.listing is not None:
        listings = [source.listing()]
    else:
        raise CommandError("bundle: needs metadata directories (-d), not a single file or a live quorum")
    nodes, seen = [], set()
    for n, d in enumerate(listings, 1):
        node_id = d.meta.node_id if d.meta is not None else None
        label = f"node-{node_id}" if node_id is not None and node_id not in seen else f"node-{n}"
        seen.add(node_id)
        nodes.append(NodeFiles(label, d.log_dir, d.path))
    return nodes


def run_bundle(shell: Shell, p: Parsed) -> None:
    from metashell import __version__

    from ..bundle import write_bundle

    raw = p.opts.get("out")
    if not isinstance(raw, str) or not raw:
        raise CommandError("bundle: --out FILE is required (a .tar, or .tar.gz)")
    out = Path(raw).expanduser()
    nodes = _nodes(shell)
    target = out.resolve()
    for node in nodes:
        for d in (node.log_dir, node.partition_dir):
            if d is not None and target.is_relative_to(d.resolve()):
                raise CommandError(
                    f"bundle: {visible(raw)} is inside {visible(str(d))}: metashell never writes into a metadata directory"
                )
    if out.exists():
        raise CommandError(f"bundle: {visible(raw)} exists (choose another name)")
    if not out.parent.is_dir():
        raise CommandError(f"bundle: {visible(str(out.parent))}: no such directory")
    manifest = write_bundle(nodes, out, keep_names=bool(p.opts.get("keep_names")), version=__version__)
    if shell.wants_json(p):
        shell.emit_json({"out": str(out), **manifest})
        return
    replaced = ", ".join(f"{kind} {n}" for kind, n in manifest["replaced"].items()) or "nothing"
    dropped = ", ".join(f"{kind} {n}" for kind, n in manifest["dropped"].items()) or "nothing"
    shell.write(
        visible(
            f"bundle: {out}: {len(nodes)} node(s), {len(manifest['files'])} files; names replaced: "
            f"{replaced}; secrets dropped: {dropped}"
            + ("; names kept (--keep-names)" if manifest["namesKept"] else "; the key is not written")
        )
        + "\n"
    )


BUNDLE_COMMAND = Command(
    CommandSpec(
        "bundle",
        "Write the metadata directories, anonymised, into one tar to share (Kafka's tools open it).",
        options=(
            Option(
                ("--out",),
                "out",
                "The tar to write (.tar, or .tar.gz); never inside a metadata directory.",
                "FILE",
            ),
            Option(
                ("--keep-names",),
                "keep_names",
                "Keep the names (to share inside a team); secrets are still dropped.",
            ),
            JSON_OPT,
        ),
        notes=(
            (
                "Each node's __cluster_metadata-0 with its records re-encoded: topic names, principals, "
                "hosts, client ids and token ids replaced by keyed pseudonyms (the same name, the same "
                "pseudonym everywhere in the bundle), sensitive config values and SCRAM keys dropped; "
                "offsets, epochs, batches, types, versions and timestamps kept; CRCs computed again. "
                "manifest.json says what was replaced, by kind and count, never the names."
            ),
        ),
    ),
    run=run_bundle,
    tui=TuiMode.WORKER,
)
