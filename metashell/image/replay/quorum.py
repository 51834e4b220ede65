"""The quorum's bookkeeping from control records (the image itself ignores them, as Kafka's does)."""

from __future__ import annotations

from metashell.errors import DecodeError
from metashell.protocol.control import ControlRecord, decode_control_record

from ..model import (
    MIGRATING_DIR,
    Endpoint,
    Voter,
)
from .state import ReplayState


class QuorumRules(ReplayState):
    """LeaderChange, KRaftVersion and KRaftVoters."""

    def replay_control(self, ctl: ControlRecord, offset: int, epoch: int) -> None:
        """Quorum bookkeeping from control records (the image itself ignores them, as Kafka's does).

        LeaderChange sets the leader (epoch = the batch's partitionLeaderEpoch) and voter ids;
        KRaftVersion and KRaftVoters update the kraft.version and the voter set.
        """
        data = ctl.data
        if data is None:
            return
        q = self._image.quorum
        name = ctl.name
        if name in ("LeaderChange", "KRaftVersion", "KRaftVoters"):
            self.keep_state(q)
        if name == "LeaderChange":
            q.leader_id = data.get("LeaderId")
            q.leader_epoch = epoch
            voter_ids = tuple(v.get("VoterId") for v in data.get("Voters") or ())
            # Keep richer voter info (endpoints from KRaftVoters) when the ids are the same.
            if tuple(v.id for v in q.voters) != voter_ids:
                q.voters = tuple(
                    Voter(v.get("VoterId"), v.get("VoterDirectoryId") or MIGRATING_DIR)
                    for v in data.get("Voters") or ()
                )
            q.granting_voters = tuple(v.get("VoterId") for v in data.get("GrantingVoters") or ())
            q.source = "LeaderChange"
        elif name == "KRaftVersion":
            q.kraft_version = data.get("KRaftVersion")
            q.source = "KRaftVersion"
        elif name == "KRaftVoters":
            voters = []
            for v in data.get("Voters") or ():
                eps = tuple(
                    Endpoint(e.get("Name"), e.get("Host"), e.get("Port"), None)
                    for e in v.get("Endpoints") or ()
                )
                feat = v.get("KRaftVersionFeature") or {}
                voters.append(
                    Voter(
                        v.get("VoterId"),
                        v.get("VoterDirectoryId") or MIGRATING_DIR,
                        eps,
                        (feat.get("MinSupportedVersion", 0), feat.get("MaxSupportedVersion", 0)),
                    )
                )
            q.voters = tuple(voters)
            q.source = "KRaftVoters"

    def replay_control_bytes(
        self, key: bytes | None, value: bytes | None, offset: int, epoch: int
    ) -> ControlRecord | None:
        """Decode and apply a control record; returns it (None when undecodable)."""
        try:
            ctl = decode_control_record(key, value)
        except DecodeError as e:
            self.warn(f"skipped undecodable control record: {e}", offset, "decode")
            return None
        self.replay_control(ctl, offset, epoch)
        return ctl
