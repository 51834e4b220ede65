"""Live mode: stream ``__cluster_metadata`` from a KRaft controller quorum (``--bootstrap-controller``).

Layering: this package knows sockets, the Kafka protocol and record batches -- never the image.
It hands *events* to a callback; :mod:`metashell.image.live_feed` turns them into image updates.

Entry point for the shell (``metashell/shell/sources.py``)
-----------------------------------------------------------
The shell opens live mode through the image layer, which owns the image being fed::

    from metashell.image.live_feed import open_shell_session
    session = open_shell_session(bootstrap, config_path_or_None, warn, cluster_id=None)
        # bootstraps at once in the calling thread; raises a one-line MetashellError (LiveError)
        # for: unreachable hosts, a broker endpoint, TLS/SASL failures, a wrong cluster id ...
    session.wait_caught_up(timeout)   # apply everything committed when we connected, or raise
    session.image                     # the MetadataImage (same object for the whole session)
    session.sync()                    # apply what arrived since; call between commands
    session.status_text()             # "leader 1 epoch 5 lag 0" for the prompt (also syncs)
    session.status                    # LiveStatus: leader, epoch, high watermark, applied offset, lag
    session.quorum_info()             # {"live": {...}} for /quorum: pass source_info={"quorum": session.quorum_info}
    session.describe_quorum()         # DescribeQuorum of the leader (voters, observers), on demand
    session.cluster_id
    session.close()

Records are applied to the image only on the thread that calls ``wait_caught_up``/``sync``/
``status_text`` (the shell's), so a command never sees the image change under it and the tree
needs no locks.

Lower-level API (this package)
------------------------------
::

    from metashell.live import LiveSource, ClientConfig
    src = LiveSource("ctrl1:9093,ctrl2:9093", ClientConfig.from_file("client.properties"))
    src.connect(on_event)      # KIP-919 bootstrap; fatal problems raise LiveError here
    src.start()                # stream on a daemon thread; on_event(event) is called on it
    src.run_until_caught_up(on_event, timeout=60)   # one-shot, in the calling thread
    src.status                 # LiveStatus
    src.stop()

Events (:mod:`metashell.live.events`): ``SnapshotLoaded`` (replace the image), ``RecordsCommitted``
(``CommittedBatch`` list: apply in order; only records below the high watermark, each exactly
once), ``ImageReset``, ``StatusChanged``, ``LiveWarning``.

Errors (:mod:`metashell.live.errors`) are ``MetashellError`` subclasses with one-line messages:
``LiveConnectionError`` (transient, retried while streaming), ``AuthenticationError``,
``AuthorizationError``, ``ConfigError``, ``KafkaProtocolError``, and plain ``LiveError``.
Secrets from the client properties never appear in any of them.
"""

from metashell.live.config import ClientConfig, Secret, redact_properties
from metashell.live.connection import Connection, Endpoint, parse_endpoints
from metashell.live.errors import (
    AuthenticationError,
    AuthorizationError,
    ConfigError,
    KafkaProtocolError,
    LiveConnectionError,
    LiveError,
)
from metashell.live.events import (
    CommittedBatch,
    ImageReset,
    LiveEvent,
    LiveStatus,
    LiveWarning,
    RecordsCommitted,
    SnapshotId,
    SnapshotLoaded,
    StatusChanged,
)
from metashell.live.source import LiveSource

__all__ = [
    "AuthenticationError",
    "AuthorizationError",
    "ClientConfig",
    "CommittedBatch",
    "ConfigError",
    "Connection",
    "Endpoint",
    "ImageReset",
    "KafkaProtocolError",
    "LiveConnectionError",
    "LiveError",
    "LiveEvent",
    "LiveSource",
    "LiveStatus",
    "LiveWarning",
    "RecordsCommitted",
    "Secret",
    "SnapshotId",
    "SnapshotLoaded",
    "StatusChanged",
    "parse_endpoints",
    "redact_properties",
]
