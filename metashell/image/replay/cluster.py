"""Brokers and controllers: Kafka's ``ClusterDelta`` and ``BrokerRegistration``."""

from __future__ import annotations

from typing import Any

from metashell.image.kafka_names import SECURITY_PROTOCOL_NAMES
from metashell.protocol.record_type import RecordType

from ..model import BrokerRegistration, ControllerRegistration, Endpoint
from .state import Fault, ReplayState, rule


class ClusterRules(ReplayState):
    """Registration, fencing and controlled shutdown of brokers; controllers."""

    @rule(RecordType.REGISTER_BROKER_RECORD)
    def _register_broker(self, d: dict[str, Any], offset: int) -> None:
        listeners = {
            e["Name"]: Endpoint(e["Name"], e["Host"], e["Port"], e["SecurityProtocol"])
            for e in d["EndPoints"] or ()
        }
        if "" in listeners:
            raise Fault("broker listeners must be named")
        cordoned = d.get("CordonedLogDirs")
        broker = BrokerRegistration(
            d["BrokerId"],
            d["BrokerEpoch"],
            d["IncarnationId"],
            listeners,
            self._features(d["Features"]),
            d["Rack"],
            d.get("Fenced", True),
            d.get("InControlledShutdown", False),
            d.get("IsMigratingZkBroker", False),
            self._sorted_dirs(d.get("LogDirs")),
            None if cordoned is None else self._t(cordoned),
        )  # kept in record order (unsorted)
        self._set(self._image.cluster.brokers, broker.id, broker)

    @rule(RecordType.UNREGISTER_BROKER_RECORD)
    def _unregister_broker(self, d: dict[str, Any], offset: int) -> None:
        # ClusterDelta: the broker epoch is not checked, an unknown id is not an error.
        self._pop(self._image.cluster.brokers, d["BrokerId"])

    @rule(RecordType.FENCE_BROKER_RECORD)
    def _fence_broker(self, d: dict[str, Any], offset: int) -> None:
        broker = self._broker_or_fault(d["Id"], d["Epoch"], "fence")
        self.keep_state(broker)
        broker.fenced = True

    @rule(RecordType.UNFENCE_BROKER_RECORD)
    def _unfence_broker(self, d: dict[str, Any], offset: int) -> None:
        broker = self._broker_or_fault(d["Id"], d["Epoch"], "unfence")
        self.keep_state(broker)
        broker.fenced = False

    @rule(RecordType.BROKER_REGISTRATION_CHANGE_RECORD)
    def _broker_registration_change(self, d: dict[str, Any], offset: int) -> None:
        broker = self._broker_or_fault(d["BrokerId"], d["BrokerEpoch"], "change")
        fenced = d.get("Fenced", 0)
        if fenced not in (-1, 0, 1):
            raise Fault(f"unknown value for fenced field: {fenced}")
        shutdown = d.get("InControlledShutdown", 0)
        if shutdown not in (0, 1):
            raise Fault(f"unknown value for inControlledShutdown field: {shutdown}")
        log_dirs = d.get("LogDirs")
        cordoned = d.get("CordonedLogDirs")
        self.keep_state(broker)
        if fenced:
            broker.fenced = fenced == 1
        if shutdown:
            broker.in_controlled_shutdown = True
        if log_dirs:  # null or empty = no change
            broker.directories = self._sorted_dirs(log_dirs)
        if cordoned is not None:  # v3+ (Kafka 4.3): null = no change; not sorted
            broker.cordoned_directories = self._t(cordoned)

    @rule(RecordType.REGISTER_CONTROLLER_RECORD)
    def _register_controller(self, d: dict[str, Any], offset: int) -> None:
        listeners = {}
        for e in d["EndPoints"] or ():
            if e["SecurityProtocol"] not in SECURITY_PROTOCOL_NAMES:
                raise Fault(f"unknown security protocol {e['SecurityProtocol']} for listener {e['Name']}")
            listeners[e["Name"]] = Endpoint(e["Name"], e["Host"], e["Port"], e["SecurityProtocol"])
        c = ControllerRegistration(
            d["ControllerId"],
            d["IncarnationId"],
            d["ZkMigrationReady"],
            listeners,
            self._features(d["Features"]),
        )
        self._set(self._image.cluster.controllers, c.id, c)

    @rule(RecordType.UNREGISTER_CONTROLLER_RECORD)
    def _unregister_controller(self, d: dict[str, Any], offset: int) -> None:
        # Kafka 4.4 (KIP-1312): ClusterDelta marks the controller removed; no error if unknown.
        self._pop(self._image.cluster.controllers, d["ControllerId"])
