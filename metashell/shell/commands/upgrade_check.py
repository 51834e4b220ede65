"""``upgrade-check``: what would block finalizing a feature level (``image/upgrade_check.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metashell.image.kafka_names import METADATA_VERSION_NAMES

from ...safe_text import visible
from ..registry import Command, CompletionContext, TuiMode
from ..spec import JSON_OPT, CommandError, CommandSpec, Option, Parsed

if TYPE_CHECKING:
    from ..session import Shell


def run_upgrade_check(shell: Shell, p: Parsed) -> None:
    from metashell.image.upgrade_check import (  # imported when run: one-shot starts stay fast
        TargetError,
        check_upgrade,
        parse_target,
    )

    raw = p.opts.get("to")
    text = raw if isinstance(raw, str) else "latest"  # the highest level every node supports
    image = shell.image()
    try:
        feature, level = parse_target(text, image)
    except TargetError as e:
        raise CommandError(str(e)) from None
    check = check_upgrade(image, feature, level)
    if shell.wants_json(p):
        shell.emit_json(check.as_json())
    else:
        shell.write("".join(visible(line) + "\n" for line in check.lines()))
    if p.opts["exit_code"] and check.blocked:
        shell.status = 1


def _targets(context: CompletionContext) -> list[str]:
    finalized = context.root.ctx.image.features.finalized
    return ["latest", *sorted(METADATA_VERSION_NAMES.values())] + [f"{name}=" for name in sorted(finalized)]


UPGRADE_CHECK_COMMAND = Command(
    CommandSpec(
        "upgrade-check",
        "List what would block finalizing a feature level, by the controller's own rules.",
        options=(
            Option(
                ("--to",),
                "to",
                "The target: a metadata.version (3.9-IV0 or its level, 21), FEATURE=LEVEL, or latest "
                "(the default; FEATURE=latest too): the highest level every registered node supports.",
                "LEVEL",
            ),
            Option(("--exit-code",), "exit_code", "Exit with status 1 when something blocks it."),
            JSON_OPT,
        ),
        notes=(
            (
                "Registered brokers, and from metadata.version 3.7-IV0 registered controllers (stale "
                "ones too) and voters, must support the level; what clears each blocker is printed as "
                "text and never run. Feature dependencies are left to the controller."
            ),
        ),
    ),
    run=run_upgrade_check,
    option_values={"to": _targets},
    tui=TuiMode.INLINE,
    prose=True,
)
