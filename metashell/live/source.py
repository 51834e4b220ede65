"""``LiveSource``: the shell-facing handle on live mode (see the package docstring for usage)."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Self

from metashell.errors import out_of_memory
from metashell.live import errors as E
from metashell.live.config import ClientConfig
from metashell.live.connection import Connection, Endpoint, parse_endpoints
from metashell.live.errors import LiveConnectionError, LiveError
from metashell.live.events import LiveEvent, LiveStatus, StatusChanged
from metashell.live.observer import Observer
from metashell.live.quorum_client import METADATA_TOPIC

log = logging.getLogger("metashell.live")


class LiveSource:
    """Streams the metadata log of a KRaft controller quorum into ``on_event``.

    ``bootstrap`` is ``host:port[,host:port...]`` (controller listeners); ``config`` a
    :class:`ClientConfig`, a path to a client properties file, or None for PLAINTEXT.
    """

    def __init__(
        self,
        bootstrap: str | list[Endpoint],
        config: ClientConfig | str | os.PathLike[str] | None = None,
        *,
        cluster_id: str | None = None,
        max_wait_ms: int | None = None,
    ) -> None:
        self.endpoints = parse_endpoints(bootstrap) if isinstance(bootstrap, str) else list(bootstrap)
        if config is None:
            config = ClientConfig()
        elif not isinstance(config, ClientConfig):
            config = ClientConfig.from_file(config)
        self.config = config
        self.cluster_id = cluster_id
        self._max_wait_ms = max_wait_ms
        self._on_event: Callable[[LiveEvent], None] | None = None
        self._observer: Observer | None = None
        self._thread: threading.Thread | None = None
        self._cond = threading.Condition()
        self._status = LiveStatus()
        self._error: BaseException | None = None
        self._connected = False
        self._quorum_cache: tuple[float, dict[str, Any]] | None = None

    # -- state --------------------------------------------------------------------------------------

    @property
    def status(self) -> LiveStatus:
        """Leader, epoch, high watermark, applied offset, lag... (a consistent immutable copy)."""
        return self._status

    @property
    def error(self) -> BaseException | None:
        """The fatal error that stopped streaming, if any."""
        return self._error

    def _sink(self, event: LiveEvent) -> None:
        if isinstance(event, StatusChanged):
            with self._cond:
                self._status = event.status
                self._cond.notify_all()
        if self._on_event is not None:
            self._on_event(event)

    # -- lifecycle ----------------------------------------------------------------------------------

    def connect(self, on_event: Callable[[LiveEvent], None] | None = None) -> LiveSource:
        """Bootstrap (KIP-919) in the calling thread: fatal problems raise a one-line LiveError here.

        ``on_event`` receives every event, on the streaming thread once :meth:`start` ran.
        """
        if on_event is not None:
            self._on_event = on_event
        kwargs = {} if self._max_wait_ms is None else {"max_wait_ms": self._max_wait_ms}
        self._observer = Observer(
            self.endpoints, self.config, self._sink, cluster_id=self.cluster_id, **kwargs
        )
        try:
            self._observer.bootstrap()
        except BaseException:
            self._observer.stop()
            raise
        self._connected = True
        return self

    def start(self, on_event: Callable[[LiveEvent], None] | None = None) -> LiveSource:
        """Stream on a daemon thread (connects first if :meth:`connect` was not called)."""
        if on_event is not None:
            self._on_event = on_event
        if not self._connected:
            self.connect()
        self._thread = threading.Thread(target=self._run_thread, name="metashell-live", daemon=True)
        self._thread.start()
        return self

    def _run_thread(self) -> None:
        try:
            self.run()
        except LiveError:
            pass  # kept in self._error and status.error by run()
        except BaseException as e:  # a bug: one line for the user, the traceback for --debug
            log.error("live mode failed: %s: %s", type(e).__name__, e)
            log.debug("live mode failed", exc_info=True)

    def run(
        self,
        on_event: Callable[[LiveEvent], None] | None = None,
        until: Callable[[LiveStatus], bool] | None = None,
    ) -> None:
        """Stream in the calling thread until :meth:`stop` (or ``until(status)`` is true).

        Raises the fatal LiveError that ended streaming (also kept in :attr:`error` and ``status``).
        """
        if on_event is not None:
            self._on_event = on_event
        if not self._connected:
            self.connect()
        obs = self._observer
        assert obs is not None
        try:
            try:
                obs.run(None if until is None else (lambda: until(self._status)))
            except Exception as e:
                if not out_of_memory(e):
                    raise
                raise LiveError(
                    f"live mode: out of memory following {obs.target} at offset {obs.delivered_next} "
                    f"({len(obs.pending)} batch(es) held above the high watermark)"
                ) from None
        except BaseException as e:
            self._error = e
            msg = str(e) if isinstance(e, LiveError) else f"{type(e).__name__}: {e}"
            self._sink(StatusChanged(obs.status.evolve(state="failed", error=msg)))
            raise
        finally:
            if obs.stopped and self._status.state != "failed":
                self._sink(StatusChanged(obs.status.evolve(state="stopped")))
            with self._cond:
                self._cond.notify_all()

    def run_until_caught_up(
        self, on_event: Callable[[LiveEvent], None] | None = None, timeout: float | None = 60.0
    ) -> LiveStatus:
        """One-shot mode: connect, apply everything committed when we arrived, return the status.

        "Caught up" = every record below the first high watermark the leader reported is applied.
        Raises LiveError on a fatal problem or when ``timeout`` seconds pass first.
        """
        if on_event is not None:
            self._on_event = on_event
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._connected:
            self.connect()
        timer = None
        if deadline is not None:
            timer = threading.Timer(max(0.0, deadline - time.monotonic()), self.stop)
            timer.daemon = True
            timer.start()
        try:
            self.run(until=lambda st: st.caught_up)
        finally:
            if timer is not None:
                timer.cancel()
        st = self._status
        if not st.caught_up:
            raise LiveConnectionError(self._timeout_message(timeout))
        self.stop()
        return st

    def _timeout_message(self, timeout: float | None) -> str:
        """What the leader reported (its id, epoch and high watermark) and what the client was
        waiting for.  The observer's own values are read, not only the published status: a fetch
        that delivers nothing publishes nothing, and the message said "nothing committed" while the
        leader reported a high watermark of 6,000,000."""
        st = self._status
        obs = self._observer
        hw = max(st.high_watermark, obs.high_watermark if obs is not None else -1)
        leader = obs.leader_id if obs is not None and obs.leader_id >= 0 else st.leader_id
        epoch = max(st.leader_epoch, obs.epoch if obs is not None else -1)
        applied = max(st.applied_offset, (obs.delivered_next - 1) if obs is not None else -1)
        fetching = obs.fetch_offset if obs is not None else st.fetch_offset
        where = f" (last problem: {st.last_error})" if st.last_error else ""
        waited = f"timed out after {timeout:g}s"
        if hw < 0 and st.endpoint is not None and leader >= 0:
            # it answers: what never came is a high watermark (nothing committed, no majority?)
            return (
                f"{waited} waiting for a high watermark: {st.endpoint} answers, but leader {leader} "
                f"(epoch {epoch}) reports nothing committed (a quorum without a majority?){where}"
            )
        if hw < 0 and st.endpoint is not None:
            return f"{waited} waiting for the quorum's leader: {st.endpoint} answers but names none{where}"
        if hw < 0:
            return f"{waited} waiting for the controller quorum to answer{where}"
        target = st.start_high_watermark if st.start_high_watermark >= 0 else hw
        return (
            f"{waited} catching up: leader {leader} (epoch {epoch}) reports high watermark {hw}; "
            f"waiting to apply every record below offset {target}, applied up to offset {applied}, "
            f"fetching from offset {fetching}{where}"
        )

    def wait_caught_up(self, timeout: float | None = None) -> bool:
        """Block until caught up (True), a fatal error (raised), or ``timeout`` (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                if self._error is not None:
                    raise self._error
                if self._status.caught_up:
                    return True
                if self._thread is not None and not self._thread.is_alive():
                    if self._error is not None:
                        raise self._error
                    return self._status.caught_up
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(0.2 if left is None else min(left, 0.2))

    def stop(self, join: bool = True, timeout: float = 5.0) -> None:
        if self._observer is not None:
            self._observer.stop()
        t = self._thread
        if join and t is not None and t is not threading.current_thread():
            t.join(timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- /quorum ------------------------------------------------------------------------------------

    def describe_quorum(self, max_age: float = 1.0) -> dict[str, Any]:
        """DescribeQuorum from the current leader on a separate short connection (cached ``max_age`` s).

        Returns the partition entry (LeaderId, LeaderEpoch, HighWatermark, CurrentVoters, Observers)
        plus ``Nodes`` (v2).  Needs DESCRIBE on CLUSTER; raises LiveError when it cannot be had.
        """
        now = time.monotonic()
        if self._quorum_cache and now - self._quorum_cache[0] < max_age:
            return self._quorum_cache[1]
        obs = self._observer
        targets: list[Endpoint] = []
        if obs is not None:
            if obs.leader_id in obs.controllers:
                targets.append(obs.controllers[obs.leader_id])
            targets += [ep for ep in obs._candidates() if ep not in targets]
        else:
            targets = list(self.endpoints)
        last: str = "no controller endpoint"
        for ep in targets:
            try:
                with Connection(ep, self.config, obs.tls if obs else None).connect() as conn:
                    resp = conn.request(
                        "DescribeQuorum",
                        {"Topics": [{"TopicName": METADATA_TOPIC, "Partitions": [{"PartitionIndex": 0}]}]},
                    )
            except LiveConnectionError as e:
                last = str(e)
                continue
            code = resp.get("ErrorCode", 0)
            if code == E.CLUSTER_AUTHORIZATION_FAILED:
                raise E.AuthorizationError(
                    f"not authorized to describe the quorum on {ep}: the principal "
                    "needs DESCRIBE on the CLUSTER resource"
                )
            if code != E.NONE:
                last = f"{ep}: {E.error_name(code)}"
                continue
            p = resp["Topics"][0]["Partitions"][0]
            if p["ErrorCode"] != E.NONE:
                last = f"{ep}: {E.error_name(p['ErrorCode'])}"
                continue
            out = dict(p)
            out["Nodes"] = resp.get("Nodes") or []
            out["Endpoint"] = str(ep)
            self._quorum_cache = (now, out)
            return out
        raise LiveConnectionError(f"cannot describe the quorum: {last}")
