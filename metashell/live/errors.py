"""Errors of live mode, each fit to print as one line.

The split matters to the observer loop: a :class:`LiveConnectionError` is transient (a controller
died, an election is running) and is retried with backoff once streaming has started, while every
other :class:`LiveError` means retrying cannot help (wrong endpoint, bad password, wrong cluster,
missing ACL) and ends live mode with its message.
"""

from __future__ import annotations

from metashell.errors import MetashellError

#: Kafka error codes live mode reacts to (``Errors.java``); names are used in messages.
ERROR_NAMES: dict[int, str] = {
    -1: "UNKNOWN_SERVER_ERROR",
    0: "NONE",
    3: "UNKNOWN_TOPIC_OR_PARTITION",
    6: "NOT_LEADER_OR_FOLLOWER",
    7: "REQUEST_TIMED_OUT",
    8: "BROKER_NOT_AVAILABLE",
    15: "COORDINATOR_NOT_AVAILABLE",
    29: "TOPIC_AUTHORIZATION_FAILED",
    31: "CLUSTER_AUTHORIZATION_FAILED",
    33: "UNSUPPORTED_SASL_MECHANISM",
    34: "ILLEGAL_SASL_STATE",
    35: "UNSUPPORTED_VERSION",
    42: "INVALID_REQUEST",
    58: "SASL_AUTHENTICATION_FAILED",
    74: "FENCED_LEADER_EPOCH",
    75: "UNKNOWN_LEADER_EPOCH",
    98: "SNAPSHOT_NOT_FOUND",
    99: "POSITION_OUT_OF_RANGE",
    100: "UNKNOWN_TOPIC_ID",
    104: "INCONSISTENT_CLUSTER_ID",
    114: "MISMATCHED_ENDPOINT_TYPE",
    115: "UNSUPPORTED_ENDPOINT_TYPE",
}

NONE = 0
UNKNOWN_SERVER_ERROR = -1
UNKNOWN_TOPIC_OR_PARTITION = 3
NOT_LEADER_OR_FOLLOWER = 6
BROKER_NOT_AVAILABLE = 8
CLUSTER_AUTHORIZATION_FAILED = 31
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
UNSUPPORTED_VERSION = 35
INVALID_REQUEST = 42
SASL_AUTHENTICATION_FAILED = 58
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
SNAPSHOT_NOT_FOUND = 98
POSITION_OUT_OF_RANGE = 99
UNKNOWN_TOPIC_ID = 100
INCONSISTENT_CLUSTER_ID = 104
MISMATCHED_ENDPOINT_TYPE = 114
UNSUPPORTED_ENDPOINT_TYPE = 115

#: Partition-level Fetch/FetchSnapshot errors that mean "ask someone else / later" (FORMATS 6.6 step 4).
LEADERSHIP_ERRORS = frozenset(
    {NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, BROKER_NOT_AVAILABLE}
)


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"error {code}")


class LiveError(MetashellError):
    """A fatal live-mode problem: retrying will not fix it."""


class LiveConnectionError(LiveError):
    """Could not talk to one endpoint (refused, timed out, closed, TLS failure): try another / later."""


class AuthenticationError(LiveError):
    """TLS trust or SASL credentials were rejected."""


class AuthorizationError(LiveError):
    """The principal lacks an ACL the controller checks."""


class ConfigError(LiveError):
    """The ``--config`` client properties are unusable."""


class KafkaProtocolError(LiveError):
    """The server answered with an error code (``code``) or something we cannot use."""

    def __init__(self, message: str, code: int | None = None) -> None:
        self.code = code
        super().__init__(message)
