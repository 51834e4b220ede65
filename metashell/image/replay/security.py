"""ACLs, SCRAM credentials and delegation tokens: ``AclsDelta``, ``ScramDelta``, ``DelegationTokenDelta``."""

from __future__ import annotations

from typing import Any

from metashell.protocol.record_type import RecordType
from metashell.protocol.uuid import uuid_to_str

from ..model import (
    Acl,
    DelegationToken,
    ScramCredential,
)
from .state import Fault, ReplayState, rule


def _principal_ok(text: str | None) -> bool:
    """``SecurityUtils.parseKafkaPrincipal`` accepts ``Type:name`` only."""
    return bool(text) and ":" in text  # type: ignore[operator]


class SecurityRules(ReplayState):
    """The records of the security domain."""

    @rule(RecordType.ACCESS_CONTROL_ENTRY_RECORD)
    def _acl(self, d: dict[str, Any], offset: int) -> None:
        acl = Acl(
            d["Id"],
            d["ResourceType"],
            d["ResourceName"],
            d["PatternType"],
            d["Principal"],
            d["Host"],
            d["Operation"],
            d["PermissionType"],
        )
        self._set(self._image.acls, acl.id, acl)

    @rule(RecordType.REMOVE_ACCESS_CONTROL_ENTRY_RECORD)
    def _remove_acl(self, d: dict[str, Any], offset: int) -> None:
        if self._pop(self._image.acls, d["Id"]) is None:
            raise Fault(
                f"failed to find existing ACL with ID {uuid_to_str(d['Id'])} in either image or changes"
            )

    @rule(RecordType.USER_SCRAM_CREDENTIAL_RECORD)
    def _scram(self, d: dict[str, Any], offset: int) -> None:
        cred = ScramCredential(
            d["Mechanism"], d["Name"], d["Salt"], d["StoredKey"], d["ServerKey"], d["Iterations"]
        )
        self._set(self._image.scram, (cred.mechanism, cred.name), cred)

    @rule(RecordType.REMOVE_USER_SCRAM_CREDENTIAL_RECORD)
    def _remove_scram(self, d: dict[str, Any], offset: int) -> None:
        self._pop(self._image.scram, (d["Mechanism"], d["Name"]))

    @rule(RecordType.DELEGATION_TOKEN_RECORD)
    def _delegation_token(self, d: dict[str, Any], offset: int) -> None:
        renewers = tuple(d["Renewers"] or ())
        for principal in (d["Owner"], d["Requester"], *renewers):
            if not _principal_ok(principal):
                raise Fault(
                    f"expected a principal in format principalType:principalName but got {principal!r}"
                )
        token = DelegationToken(
            d["TokenId"],
            d["Owner"],
            d["Requester"],
            renewers,
            d["IssueTimestamp"],
            d["MaxTimestamp"],
            d["ExpirationTimestamp"],
        )
        self._set(self._image.delegation_tokens, token.token_id, token)

    @rule(RecordType.REMOVE_DELEGATION_TOKEN_RECORD)
    def _remove_delegation_token(self, d: dict[str, Any], offset: int) -> None:
        self._pop(self._image.delegation_tokens, d["TokenId"])
