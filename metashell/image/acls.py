"""Which ACL bindings apply to a principal, a resource and an operation, as Kafka's authorizer
decides (``StandardAuthorizerData``).

A binding applies to a request when

* its resource type is the request's, and its pattern matches the resource name: ``LITERAL`` equal
  to it, the ``LITERAL`` wildcard ``*``, or ``PREFIXED`` by it;
* its principal is the request's, or the wildcard ``User:*``;
* its host is the request's, or ``*``;
* its operation is the requested one or ``ALL``; an ``ALLOW`` of ``READ``, ``WRITE``, ``DELETE`` or
  ``ALTER`` also allows ``DESCRIBE``, and an ``ALLOW`` of ``ALTER_CONFIGS`` allows
  ``DESCRIBE_CONFIGS``.

A matching ``DENY`` wins over any ``ALLOW``; with no matching ``ALLOW`` the request is denied.  Two
broker settings are not in the metadata and can change the outcome: ``super.users`` (always allowed)
and ``allow.everyone.if.no.acl.found`` (allowed when *no* binding exists for the resource); the
decision says so instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .image import MetadataImage
from .kafka_names import (
    ACL_OPERATION_NAMES,
    ACL_PATTERN_TYPE_NAMES,
    ACL_PERMISSION_TYPE_NAMES,
    ACL_RESOURCE_TYPE_NAMES,
    enum_name,
)
from .model import Acl

__all__ = ["AclDecision", "AclQuery", "decide", "matching_acls"]

WILDCARD = "*"
WILDCARD_PRINCIPAL = "User:*"
_IMPLIES_DESCRIBE = frozenset({"DESCRIBE", "READ", "WRITE", "DELETE", "ALTER"})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({"DESCRIBE_CONFIGS", "ALTER_CONFIGS"})


@dataclass(frozen=True)
class AclQuery:
    """What is asked: each part None means "any" (list every binding that could apply)."""

    principal: str | None = None
    resource_type: str | None = None
    resource_name: str | None = None
    host: str | None = None
    operation: str | None = None


@dataclass
class AclDecision:
    """The bindings that apply to a query, and -- when it names an operation on a resource -- the
    authorizer's answer with the bindings that decided it."""

    bindings: list[Acl]
    result: str | None = None  # ALLOWED, DENIED, or None when not asked
    deciding: list[Acl] = field(default_factory=list)
    reason: str = ""


def _resource_matches(a: Acl, q: AclQuery) -> bool:
    if q.resource_type is not None and enum_name(ACL_RESOURCE_TYPE_NAMES, a.resource_type) != q.resource_type:
        return False
    if q.resource_name is None:
        return True
    pattern = enum_name(ACL_PATTERN_TYPE_NAMES, a.pattern_type)
    if pattern == "LITERAL":
        return a.resource_name in (q.resource_name, WILDCARD)
    if pattern == "PREFIXED":
        return q.resource_name.startswith(a.resource_name)
    return False


def _operation_matches(a: Acl, operation: str | None) -> bool:
    if operation is None:
        return True
    op = enum_name(ACL_OPERATION_NAMES, a.operation)
    if op in ("ALL", operation):
        return True
    if enum_name(ACL_PERMISSION_TYPE_NAMES, a.permission_type) != "ALLOW":
        return False
    return (operation == "DESCRIBE" and op in _IMPLIES_DESCRIBE) or (
        operation == "DESCRIBE_CONFIGS" and op in _IMPLIES_DESCRIBE_CONFIGS
    )


def matching_acls(image: MetadataImage, q: AclQuery) -> list[Acl]:
    """Every binding that applies to ``q``, sorted by resource, principal, operation."""
    out = []
    for a in image.acls.values():
        if q.principal is not None and a.principal not in (q.principal, WILDCARD_PRINCIPAL):
            continue
        if q.host is not None and a.host not in (q.host, WILDCARD):
            continue
        if _resource_matches(a, q) and _operation_matches(a, q.operation):
            out.append(a)
    return sorted(
        out,
        key=lambda a: (
            a.resource_type,
            a.resource_name,
            a.pattern_type,
            a.principal,
            a.operation,
            a.permission_type,
            a.host,
        ),
    )


def decide(image: MetadataImage, q: AclQuery) -> AclDecision:
    """The applicable bindings, and the decision when ``q`` is a complete request."""
    bindings = matching_acls(image, q)
    complete = None not in (q.principal, q.resource_type, q.resource_name, q.operation)
    if not complete:
        return AclDecision(bindings)
    deny = [a for a in bindings if enum_name(ACL_PERMISSION_TYPE_NAMES, a.permission_type) == "DENY"]
    if deny:
        return AclDecision(bindings, "DENIED", deny, "a DENY binding matches (DENY wins over ALLOW)")
    allow = [a for a in bindings if enum_name(ACL_PERMISSION_TYPE_NAMES, a.permission_type) == "ALLOW"]
    if allow:
        return AclDecision(bindings, "ALLOWED", allow, "an ALLOW binding matches and no DENY does")
    any_on_resource = matching_acls(
        image, AclQuery(resource_type=q.resource_type, resource_name=q.resource_name)
    )
    reason = (
        "no binding allows it"
        if any_on_resource
        else "no binding exists for this resource: denied, unless the brokers set "
        "allow.everyone.if.no.acl.found=true"
    )
    return AclDecision(
        bindings, "DENIED", [], reason + " (super.users, a broker setting, are always allowed)"
    )
