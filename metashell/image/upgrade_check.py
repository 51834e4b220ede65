"""``upgrade-check``: what would block finalizing a feature level, by the controller's own rules.

``kafka-features upgrade`` asks the active controller, which refuses with the first reason it finds
(``FeatureControlManager.reasonNotSupported``).  Offline, at 3 a.m., an operator wants all of them at
once, from the metadata, with what clears each:

* every **registered broker** must support the level: its registered range for the feature (none
  registered: only level 0) must hold it;
* from metadata.version 3.7-IV0 on (controller registration, KIP-919), every **registered
  controller** must support it too -- including registrations of controllers that are no longer
  voters (a stale registration after a migration blocks 3.7-IV4 -> 3.9-IV0) -- and every **voter**
  must have registered ("has not registered, and may not support this feature");
* metadata.version cannot go below 3.3-IV0, and a downgrade needs the (unsafe) downgrade type.

And what the target changes: turning eligible leader replicas on (KIP-966) makes the controller
delete broker-level ``min.insync.replicas`` overrides (the cluster-level default then decides).

And what one feature level needs of another (``Feature.validateVersion``, Kafka 4.x): every level
from 1 needs metadata.version 3.3-IV3, and some levels need more (eligible leader replicas need
4.0-IV1).  The table is Kafka's own (``feature_rules.py``, generated from its enums), and it is
checked both ways: a level whose dependencies are not finalized, and a metadata.version below what a
finalized feature needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .feature_rules import LEVELS, MINIMUM_METADATA_VERSION, RELEASE
from .image import MetadataImage
from .kafka_names import METADATA_VERSION_NAMES, metadata_version_name

__all__ = ["Blocker", "UpgradeCheck", "check_upgrade", "parse_target"]

METADATA_VERSION = "metadata.version"
CONTROLLER_REGISTRATION = 15
"""``IBP_3_7_IV0``: from this metadata.version on, controllers register and are checked too."""
MINIMUM_KRAFT = 4
"""``IBP_3_3_IV0``: the lowest metadata.version that can be set (the first with FeatureLevelRecord)."""
ELR = "eligible.leader.replicas.version"
_BY_NAME = {name: level for level, name in METADATA_VERSION_NAMES.items()}


class TargetError(ValueError):
    """``--to`` names no feature level."""


LATEST = "latest"
"""``--to latest`` (the default), or ``FEATURE=latest``: the highest level every registered node supports."""


def parse_target(text: str, image: MetadataImage | None = None) -> tuple[str, int]:
    """``3.9-IV0``, ``21`` (metadata.version levels), ``FEATURE=LEVEL``, ``latest`` or
    ``FEATURE=latest`` (the last two need the ``image``: :func:`latest_level`)."""
    feature, sep, level = text.partition("=")
    if not sep:
        feature, level = METADATA_VERSION, text
    feature = feature.strip()
    level = level.strip()
    if level == LATEST and image is not None:
        return feature, latest_level(image, feature)
    if feature == METADATA_VERSION and level in _BY_NAME:
        return feature, _BY_NAME[level]
    if level.isascii() and level.isdigit():
        return feature, int(level)
    raise TargetError(
        f"upgrade-check: --to {text}: give a metadata.version (3.9-IV0 or 21), FEATURE=LEVEL, or latest"
    )


def latest_level(image: MetadataImage, feature: str) -> int:
    """The highest level of ``feature`` that every registered broker (and, from metadata.version
    3.7-IV0, controller) supports, as the controller checks them; for metadata.version no higher
    than the newest level metashell knows.  With no registration: the level in force."""
    mv = image.features.metadata_version or 0
    ranges = [b.supported_features for b in image.cluster.brokers.values()]
    if mv >= CONTROLLER_REGISTRATION:
        ranges += [c.supported_features for c in image.cluster.controllers.values()]
    current = mv if feature == METADATA_VERSION else image.features.finalized.get(feature, 0)
    if not ranges:
        return current
    top = min(r.get(feature, (0, 0))[1] for r in ranges)
    if feature == METADATA_VERSION:
        top = min(top, max(METADATA_VERSION_NAMES))
    return max(top, current) if top >= current else top


@dataclass(frozen=True)
class Blocker:
    node: str
    reason: str
    clear: str
    """What clears it: a command of Kafka's, as text (metashell never runs it)."""


@dataclass
class UpgradeCheck:
    feature: str
    current: int
    target: int
    blockers: list[Blocker] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return bool(self.blockers)

    def _level(self, level: int) -> str:
        if self.feature == METADATA_VERSION:
            return f"{metadata_version_name(level)} ({level})"
        return str(level)

    @property
    def in_force(self) -> bool:
        return self.target == self.current

    def lines(self) -> Iterator[str]:
        if self.in_force and not self.blocked:
            yield f"{self.feature} {self._level(self.current)}: already in force (nothing to finalize)"
            return
        verdict = "BLOCKED" if self.blocked else "nothing blocks it"
        yield f"{self.feature} {self._level(self.current)} -> {self._level(self.target)}: {verdict}"
        for b in self.blockers:
            yield f"  {b.node}: {b.reason}"
            yield f"    clears it: {b.clear}"
        for c in self.changes:
            yield f"  what it changes: {c}"
        yield f"  checked: {', '.join(self.checked)}"

    def as_json(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "current": self.current,
            "target": self.target,
            "blocked": self.blocked,
            "inForce": self.in_force,
            "blockers": [{"node": b.node, "reason": b.reason, "clear": b.clear} for b in self.blockers],
            "changes": self.changes,
            "checked": self.checked,
        }


def _range_reason(level: int, supported: dict[str, tuple[int, int]], feature: str) -> str | None:
    """``QuorumFeatures.reasonNotSupported``: a missing feature is the range 0..0 (DISABLED)."""
    lo, hi = supported.get(feature, (0, 0))
    if lo <= level <= hi:
        return None
    if hi == 0:
        return "does not support this feature (its registration lists no range for it)"
    return f"supports levels {lo}-{hi} only (its registration)"


def check_upgrade(image: MetadataImage, feature: str, target: int) -> UpgradeCheck:
    """Every reason the controller would refuse to finalize ``feature`` at ``target``."""
    features = image.features
    mv = features.metadata_version or 0
    current = mv if feature == METADATA_VERSION else features.finalized.get(feature, 0)
    check = UpgradeCheck(feature, current, target)
    if target == current:  # nothing to finalize: what would block a change blocks nothing here
        return check
    if feature == METADATA_VERSION:
        if target < MINIMUM_KRAFT:
            check.blockers.append(
                Blocker(
                    "cluster",
                    "metadata.version cannot be set below 3.3-IV0 (the first with FeatureLevelRecord)",
                    "choose 3.3-IV0 or later",
                )
            )
        if target not in METADATA_VERSION_NAMES:
            check.blockers.append(
                Blocker("cluster", f"no metadata.version has level {target}", "choose a known level")
            )
    if target < current:
        check.blockers.append(
            Blocker(
                "cluster",
                "a downgrade: the controller refuses it as an upgrade",
                f"kafka-features.sh --bootstrap-server HOST:PORT downgrade --feature {feature}={target} (it may refuse a "
                "downgrade that deletes metadata)",
            )
        )
    check.blockers += _dependency_blockers(feature, target, {METADATA_VERSION: mv, **features.finalized})
    for bid, b in sorted(image.cluster.brokers.items()):
        reason = _range_reason(target, b.supported_features, feature)
        if reason:
            check.blockers.append(
                Blocker(
                    f"broker {bid}",
                    reason,
                    f"upgrade broker {bid}'s Kafka, or if it is gone for good: kafka-cluster.sh unregister "
                    f"--bootstrap-server HOST:PORT --id {bid}",
                )
            )
    check.checked.append(f"{len(image.cluster.brokers)} broker registration(s)")
    voters = {v.id for v in image.quorum.voters}
    if mv >= CONTROLLER_REGISTRATION:
        controllers = image.cluster.controllers
        for cid, c in sorted(controllers.items()):
            reason = _range_reason(target, c.supported_features, feature)
            if reason:
                stale = voters and cid not in voters
                clear = (
                    "its registration is stale (it is no longer a voter): UnregisterControllerRecord clears it, "
                    "which Kafka writes from metadata.version 4.4-IV2 on (KIP-1312); before that, a controller "
                    "with this id must register again with a Kafka that supports the level"
                    if stale
                    else f"upgrade controller {cid}'s Kafka (it registers again with its new range when it starts)"
                )
                check.blockers.append(
                    Blocker(f"controller {cid}", reason + (" (stale: not a voter)" if stale else ""), clear)
                )
        for vid in sorted(voters - set(controllers)):
            check.blockers.append(
                Blocker(
                    f"controller {vid}",
                    "has not registered, and may not support this feature (it is a voter)",
                    f"start controller {vid} (it registers when it starts)",
                )
            )
        check.checked.append(f"{len(controllers)} controller registration(s) and {len(voters)} voter(s)")
    else:
        check.checked.append(
            "no controller registrations (metadata.version below 3.7-IV0: the controller cannot verify them either)"
        )
    if feature == ELR and target >= 1 > current:
        overrides = sorted(
            name or "<default>"
            for (kind, name), values in image.configs.items()
            if kind == 4 and "min.insync.replicas" in values
        )
        brokers = [n for n in overrides if n != "<default>"]
        if brokers:
            check.changes.append(
                "the controller deletes the broker-level min.insync.replicas of broker(s) "
                f"{', '.join(brokers)}; the cluster-level default decides from then on (KIP-966)"
            )
        if "<default>" not in overrides:
            check.changes.append(
                "no cluster-level min.insync.replicas is in the metadata: the controller writes its own "
                "configured value as the cluster default (KIP-966)"
            )
    return check


def _level_words(feature: str, level: int) -> str:
    return f"{metadata_version_name(level)} ({level})" if feature == METADATA_VERSION else str(level)


def _upgrade_command(feature: str, level: int) -> str:
    if feature == METADATA_VERSION:
        return f"kafka-features.sh --bootstrap-server HOST:PORT upgrade --metadata {metadata_version_name(level)}"
    return f"kafka-features.sh --bootstrap-server HOST:PORT upgrade --feature {feature}={level}"


def _dependency_blockers(feature: str, target: int, finalized: dict[str, int]) -> list[Blocker]:
    """``Feature.validateVersion`` for the target, and for metadata.version the reverse: a finalized
    feature whose level needs a higher metadata.version than the target."""
    out = []
    if feature == METADATA_VERSION:
        for other, level in sorted(finalized.items()):
            need = LEVELS.get(other, {}).get(level, {}).get(METADATA_VERSION)
            if need is not None and target < need:
                out.append(
                    Blocker(
                        "cluster",
                        f"{other} is at level {level}, which depends on metadata.version {_level_words(feature, need)}",
                        f"lower {other} first: kafka-features.sh --bootstrap-server HOST:PORT downgrade "
                        f"--feature {other}=0 (if Kafka allows it)",
                    )
                )
        return out
    levels = LEVELS.get(feature)
    if levels is None:
        return [
            Blocker(
                "cluster",
                f"Kafka {RELEASE} has no feature named {feature}",
                "check the name: kafka-features.sh --bootstrap-server HOST:PORT describe",
            )
        ]
    if target not in levels:
        known = ", ".join(map(str, sorted(levels)))
        return [
            Blocker(
                "cluster", f"{feature} has no level {target} (Kafka {RELEASE}: {known})", "choose one of them"
            )
        ]
    needs = dict(levels[target])
    if target >= 1:
        needs[METADATA_VERSION] = max(needs.get(METADATA_VERSION, 0), MINIMUM_METADATA_VERSION)
    for other, level in sorted(needs.items()):
        have = finalized.get(other, 0)
        if have < level:
            out.append(
                Blocker(
                    "cluster",
                    f"{feature}={target} depends on {other} {_level_words(other, level)}; it is "
                    f"{_level_words(other, have)}",
                    f"upgrade {other} first: {_upgrade_command(other, level)}",
                )
            )
    return out
