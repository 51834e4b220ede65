#!/usr/bin/env python3
"""Generate the metadata-log fixtures in ``fixtures/`` by driving real Apache Kafka clusters.

Why: metashell must read what real Kafka writes, not what we think it writes.  Every fixture here is
a ``metadata.log.dir`` copied from a stopped node of a real cluster (started by
``scripts/kafka_harness.py`` from Maven Central jars) after the cluster was driven through Kafka's own
Admin/Producer client API: topics, partition increases, deletions, reassignments (finished and in
flight), ACLs, client quotas, SCRAM users, delegation tokens, broker/cluster/topic/client-metrics/
group configs, feature upgrades, broker kills (fencing), controlled shutdowns, leader and controller
fail-overs, broker/controller unregistration and KRaft voter changes.  Tiny segment and snapshot
thresholds make every directory hold several ``.log`` segments, ``.checkpoint`` snapshots *and* a
log tail after the newest snapshot.

The client operations are a small Java program (``FixtureOps``, embedded below) compiled against the
exact Kafka version under test -- Kafka 4.4.0's admin CLI jars are not on Maven Central, and one
long-lived JVM per phase is much faster on a 2-core box than dozens of CLI start-ups.

Only the files a metadata reader needs are kept (``meta.properties``, ``bootstrap.checkpoint``,
``__cluster_metadata-0/{*.log,*.checkpoint,quorum-state,leader-epoch-checkpoint,partition.metadata}``);
``.index``/``.timeindex`` and producer ``.snapshot`` files are dropped.  ``fixtures/manifest.json``
records, per fixture, the Kafka version, mode, node and a count of every record type it contains
(tests/test_fixtures.py checks the committed files against it).

Usage::

    python scripts/make_fixtures.py                       # all fixtures
    python scripts/make_fixtures.py --only demo           # one scenario
    python scripts/make_fixtures.py --version 3.9.2       # the scenarios of one Kafka version
    python scripts/make_fixtures.py --summary             # print record-type inventory of fixtures/
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import selectors
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

SCRIPTS = Path(__file__).resolve().parent
REPO = SCRIPTS.parent
sys.path.insert(0, str(SCRIPTS))

import kafka_harness as harness
from kafka_harness import (
    SASL_PASSWORD,
    SASL_USER,
    HarnessError,
    KafkaCluster,
    KafkaDist,
    KafkaNode,
    free_ports,
    java_executable,
    random_kafka_uuid,
    write_properties,
)

# --------------------------------------------------------------------------------------------------
# The Java side: Kafka Admin / Producer API operations, one per stdin line.

JAVA_SOURCE = r"""
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.SupportedVersionRange;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RaftVoterEndpoint;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka Admin/Producer operations read from stdin, one per line, tab-separated tokens; exactly one
 * output line per input line: "OK\top\tresult" or "ERR\top\tmessage". Generated by metashell's
 * scripts/make_fixtures.py and compiled against the Kafka version under test.
 */
public class FixtureOps {
    static Properties props = new Properties();
    static Admin admin;

    public static void main(String[] args) throws Exception {
        try (InputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        admin = Admin.create(props);
        BufferedReader reader = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = reader.readLine()) != null) {
            if (line.isBlank()) continue;
            String[] a = line.split("\t", -1);
            try {
                System.out.println("OK\t" + a[0] + "\t" + run(a).replace('\n', ' '));
            } catch (Throwable e) {
                Throwable c = e;
                while ((c instanceof ExecutionException || c instanceof java.lang.reflect.InvocationTargetException)
                        && c.getCause() != null) c = c.getCause();
                System.out.println("ERR\t" + a[0] + "\t" + String.valueOf(c).replace('\n', ' '));
            }
            System.out.flush();
        }
        admin.close(Duration.ofSeconds(10));
        System.exit(0);
    }

    static Map<String, String> kv(String[] a, int from) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = from; i < a.length; i++) {
            int eq = a[i].indexOf('=');
            m.put(a[i].substring(0, eq), a[i].substring(eq + 1));
        }
        return m;
    }

    static List<Integer> ints(String csv) {
        List<Integer> out = new ArrayList<>();
        if (csv.isEmpty()) return out;
        for (String s : csv.split(",")) out.add(Integer.parseInt(s.trim()));
        return out;
    }

    static String ids(Collection<Node> nodes) {
        StringBuilder sb = new StringBuilder();
        for (Node n : nodes) {
            if (sb.length() > 0) sb.append(',');
            sb.append(n.id());
        }
        return sb.toString();
    }

    static KafkaPrincipal principal(String s) {
        int colon = s.indexOf(':');
        return new KafkaPrincipal(s.substring(0, colon), s.substring(colon + 1));
    }

    static ClientQuotaEntity entity(String spec) {
        Map<String, String> m = new HashMap<>();
        for (String part : spec.split(",")) {
            int eq = part.indexOf('=');
            String v = part.substring(eq + 1);
            m.put(part.substring(0, eq), v.equals("<default>") ? null : v);
        }
        return new ClientQuotaEntity(m);
    }

    static AclBinding acl(String[] a, int i) {
        return new AclBinding(
            new ResourcePattern(ResourceType.valueOf(a[i]), a[i + 1], PatternType.valueOf(a[i + 2])),
            new AccessControlEntry(a[i + 3], a[i + 4], AclOperation.valueOf(a[i + 5]),
                AclPermissionType.valueOf(a[i + 6])));
    }

    /** Reflection for API that only newer clients have (e.g. unregisterController, Kafka 4.4). */
    static Object call(Object target, String method, Object... args) throws Exception {
        for (Method m : target.getClass().getMethods()) {
            if (m.getName().equals(method) && m.getParameterCount() == args.length) {
                m.setAccessible(true);
                return m.invoke(target, args);
            }
        }
        throw new UnsupportedOperationException("this Kafka client has no " + method);
    }

    static String run(String[] a) throws Exception {
        switch (a[0]) {
            case "sleep":
                Thread.sleep(Long.parseLong(a[1]));
                return "";
            case "create-topic":  // NAME PARTITIONS RF [k=v ...]
                admin.createTopics(List.of(new NewTopic(a[1], Integer.parseInt(a[2]), Short.parseShort(a[3]))
                    .configs(kv(a, 4)))).all().get();
                return a[1];
            case "create-topic-assigned": {  // NAME "1,2;2,1" [k=v ...]
                Map<Integer, List<Integer>> asg = new LinkedHashMap<>();
                String[] parts = a[2].split(";");
                for (int p = 0; p < parts.length; p++) asg.put(p, ints(parts[p]));
                admin.createTopics(List.of(new NewTopic(a[1], asg).configs(kv(a, 3)))).all().get();
                return a[1];
            }
            case "delete-topic":
                admin.deleteTopics(List.of(a[1])).all().get();
                return a[1];
            case "create-partitions":  // NAME TOTAL
                admin.createPartitions(Map.of(a[1], NewPartitions.increaseTo(Integer.parseInt(a[2])))).all().get();
                return a[1] + " -> " + a[2];
            case "alter-config": {  // TYPE NAME set:k=v delete:k append:k=v subtract:k=v
                ConfigResource res = new ConfigResource(ConfigResource.Type.valueOf(a[1]), a[2]);
                List<AlterConfigOp> ops = new ArrayList<>();
                for (int i = 3; i < a.length; i++) {
                    int colon = a[i].indexOf(':');
                    String rest = a[i].substring(colon + 1);
                    int eq = rest.indexOf('=');
                    ops.add(new AlterConfigOp(
                        new ConfigEntry(eq < 0 ? rest : rest.substring(0, eq), eq < 0 ? null : rest.substring(eq + 1)),
                        AlterConfigOp.OpType.valueOf(a[i].substring(0, colon).toUpperCase())));
                }
                admin.incrementalAlterConfigs(Map.of(res, ops)).all().get();
                return res.toString();
            }
            case "acl-create":  // RESTYPE NAME PATTERN PRINCIPAL HOST OPERATION PERMISSION
                admin.createAcls(List.of(acl(a, 1))).all().get();
                return acl(a, 1).toString();
            case "acl-delete":
                return "deleted " + admin.deleteAcls(List.of(acl(a, 1).toFilter())).all().get().size();
            case "quota": {  // ENTITY KEY VALUE|remove
                Double v = a[3].equals("remove") ? null : Double.valueOf(a[3]);
                admin.alterClientQuotas(List.of(new ClientQuotaAlteration(entity(a[1]),
                    List.of(new ClientQuotaAlteration.Op(a[2], v))))).all().get();
                return a[1] + " " + a[2];
            }
            case "quota-bulk": {  // PREFIX COUNT KEY VALUE: one quota each for users PREFIX0000..
                List<ClientQuotaAlteration> alts = new ArrayList<>();
                for (int i = 0; i < Integer.parseInt(a[2]); i++) {
                    alts.add(new ClientQuotaAlteration(entity("user=" + String.format("%s%04d", a[1], i)),
                        List.of(new ClientQuotaAlteration.Op(a[3], Double.valueOf(a[4])))));
                }
                admin.alterClientQuotas(alts).all().get();
                return a[2] + " users";
            }
            case "scram-upsert": {  // USER MECH ITERATIONS PASSWORD
                UserScramCredentialAlteration alt = new UserScramCredentialUpsertion(a[1],
                    new ScramCredentialInfo(ScramMechanism.fromMechanismName(a[2]), Integer.parseInt(a[3])), a[4]);
                admin.alterUserScramCredentials(List.of(alt)).all().get();
                return a[1] + " " + a[2];
            }
            case "scram-delete":  // USER MECH
                admin.alterUserScramCredentials(List.of(
                    new UserScramCredentialDeletion(a[1], ScramMechanism.fromMechanismName(a[2])))).all().get();
                return a[1] + " " + a[2];
            case "token-create": {  // MAXLIFEMS OWNER|- [RENEWER ...]
                CreateDelegationTokenOptions o = new CreateDelegationTokenOptions().maxlifeTimeMs(Long.parseLong(a[1]));
                if (!a[2].equals("-")) o.owner(principal(a[2]));
                List<KafkaPrincipal> renewers = new ArrayList<>();
                for (int i = 3; i < a.length; i++) renewers.add(principal(a[i]));
                o.renewers(renewers);
                DelegationToken t = admin.createDelegationToken(o).delegationToken().get();
                return t.tokenInfo().tokenId() + "\t" + Base64.getEncoder().encodeToString(t.hmac());
            }
            case "token-renew":  // HMAC PERIODMS
                return Long.toString(admin.renewDelegationToken(Base64.getDecoder().decode(a[1]),
                    new RenewDelegationTokenOptions().renewTimePeriodMs(Long.parseLong(a[2]))).expiryTimestamp().get());
            case "token-expire":  // HMAC PERIODMS (negative: expire now)
                return Long.toString(admin.expireDelegationToken(Base64.getDecoder().decode(a[1]),
                    new ExpireDelegationTokenOptions().expiryTimePeriodMs(Long.parseLong(a[2]))).expiryTimestamp().get());
            case "feature":  // NAME LEVEL UPGRADE|SAFE_DOWNGRADE|UNSAFE_DOWNGRADE
                admin.updateFeatures(Map.of(a[1], new FeatureUpdate(Short.parseShort(a[2]),
                    FeatureUpdate.UpgradeType.valueOf(a[3]))), new UpdateFeaturesOptions()).all().get();
                return a[1] + "=" + a[2];
            case "features": {  // -> "name=finalizedLevel/supportedMax ..."
                FeatureMetadata fm = admin.describeFeatures().featureMetadata().get();
                StringBuilder sb = new StringBuilder();
                for (Map.Entry<String, SupportedVersionRange> e : new TreeMap<>(fm.supportedFeatures()).entrySet()) {
                    FinalizedVersionRange f = fm.finalizedFeatures().get(e.getKey());
                    sb.append(e.getKey()).append('=').append(f == null ? 0 : f.maxVersionLevel())
                        .append('/').append(e.getValue().maxVersion()).append(' ');
                }
                return sb.toString().trim();
            }
            case "reassign": {  // TOPIC PARTITION REPLICAS|cancel
                TopicPartition tp = new TopicPartition(a[1], Integer.parseInt(a[2]));
                Optional<NewPartitionReassignment> target = a[3].equals("cancel") ? Optional.empty()
                    : Optional.of(new NewPartitionReassignment(ints(a[3])));
                admin.alterPartitionReassignments(Map.of(tp, target)).all().get();
                return tp + " -> " + a[3];
            }
            case "list-reassignments": {
                StringBuilder sb = new StringBuilder();
                for (Map.Entry<TopicPartition, PartitionReassignment> e
                        : admin.listPartitionReassignments().reassignments().get().entrySet()) {
                    sb.append(e.getKey()).append('=').append(e.getValue().replicas()).append(" ");
                }
                return sb.toString().trim();
            }
            case "elect":  // PREFERRED|UNCLEAN TOPIC PARTITION
                admin.electLeaders(ElectionType.valueOf(a[1]),
                    Set.of(new TopicPartition(a[2], Integer.parseInt(a[3])))).all().get();
                return a[2] + "-" + a[3];
            case "describe-topic": {  // -> "p:leader:replicas:isr ..."
                TopicDescription d = admin.describeTopics(List.of(a[1])).allTopicNames().get().get(a[1]);
                StringBuilder sb = new StringBuilder();
                for (TopicPartitionInfo p : d.partitions()) {
                    sb.append(p.partition()).append(':').append(p.leader() == null ? -1 : p.leader().id())
                        .append(':').append(ids(p.replicas())).append(':').append(ids(p.isr())).append(' ');
                }
                return sb.toString().trim();
            }
            case "list-topics":
                return String.join(",", new TreeSet<>(admin.listTopics().names().get()));
            case "describe-cluster":  // -> "controller=N nodes=a,b"
                return "controller=" + admin.describeCluster().controller().get().id()
                    + " nodes=" + ids(admin.describeCluster().nodes().get());
            case "unregister-broker":
                admin.unregisterBroker(Integer.parseInt(a[1])).all().get();
                return a[1];
            case "unregister-controller": {
                Object result = call(admin, "unregisterController", Integer.parseInt(a[1]));
                ((KafkaFuture<?>) call(result, "all")).get();
                return a[1];
            }
            case "describe-quorum": {  // -> "leader=N epoch=E hw=H voters=1,2,3 observers=4,5"
                QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get();
                StringBuilder v = new StringBuilder();
                for (QuorumInfo.ReplicaState r : q.voters()) v.append(v.length() > 0 ? "," : "").append(r.replicaId());
                StringBuilder o = new StringBuilder();
                for (QuorumInfo.ReplicaState r : q.observers()) o.append(o.length() > 0 ? "," : "").append(r.replicaId());
                return "leader=" + q.leaderId() + " epoch=" + q.leaderEpoch() + " hw=" + q.highWatermark()
                    + " voters=" + v + " observers=" + o;
            }
            case "remove-voter":  // ID DIRID
                admin.removeRaftVoter(Integer.parseInt(a[1]), Uuid.fromString(a[2])).all().get();
                return a[1];
            case "add-voter":  // ID DIRID LISTENER HOST PORT
                admin.addRaftVoter(Integer.parseInt(a[1]), Uuid.fromString(a[2]),
                    Set.of(new RaftVoterEndpoint(a[3], a[4], Integer.parseInt(a[5])))).all().get();
                return a[1];
            case "produce": {  // TOPIC COUNT VALUESIZE [producer k=v ...] (idempotent; transactional if transactional.id)
                Properties p = new Properties();
                p.putAll(props);
                p.put("key.serializer", ByteArraySerializer.class.getName());
                p.put("value.serializer", ByteArraySerializer.class.getName());
                p.put("enable.idempotence", "true");
                p.put("acks", "all");
                p.putAll(kv(a, 4));
                boolean txn = p.containsKey("transactional.id");
                int n = Integer.parseInt(a[2]);
                byte[] value = new byte[Integer.parseInt(a[3])];
                Arrays.fill(value, (byte) 'x');
                try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
                    if (txn) {
                        producer.initTransactions();
                        producer.beginTransaction();
                    }
                    for (int i = 0; i < n; i++) {
                        producer.send(new ProducerRecord<>(a[1], ("key-" + i).getBytes(StandardCharsets.UTF_8), value));
                    }
                    if (txn) producer.commitTransaction();
                    producer.flush();
                }
                return a[1] + " " + n;
            }
            default:
                throw new IllegalArgumentException("unknown op " + a[0]);
        }
    }
}
"""


class OpError(HarnessError):
    """A FixtureOps operation failed (message from the Kafka client)."""


def compiled_ops(dist: KafkaDist) -> Path:
    """Compile FixtureOps against ``dist`` once (cached next to the jars, outside the repo)."""
    digest = hashlib.sha256(JAVA_SOURCE.encode()).hexdigest()[:12]
    out = dist.dir / f"fixture-ops-{digest}"
    if (out / "FixtureOps.class").exists():
        return out
    javac = Path(java_executable()).with_name("javac")
    if not javac.exists():
        found = shutil.which("javac")
        if not found:
            raise HarnessError("javac not found: a JDK (not just a JRE) is needed to generate fixtures")
        javac = Path(found)
    tmp = Path(tempfile.mkdtemp(prefix=".fixture-ops-", dir=dist.dir))
    try:
        (tmp / "FixtureOps.java").write_text(JAVA_SOURCE)
        proc = subprocess.run(
            [str(javac), "-nowarn", "-d", str(tmp), "-cp", dist.classpath, str(tmp / "FixtureOps.java")],
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if proc.returncode != 0:
            raise HarnessError(f"javac FixtureOps failed:\n{proc.stdout}{proc.stderr}")
        (tmp / "FixtureOps.java").unlink()
        with contextlib.suppress(OSError):
            os.rename(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


class Ops:
    """A long-lived FixtureOps JVM talking to one endpoint (broker, controller or SASL listener)."""

    def __init__(
        self, dist: KafkaDist, props: dict[str, Any], workdir: Path, name: str, log: Callable[[str], None]
    ) -> None:
        self.name = name
        self.log = log
        cfg = write_properties(workdir / f"ops-{name}.properties", props)
        classes = compiled_ops(dist)
        cmd = dist.java_cmd("FixtureOps", str(cfg), heap="256m")
        cp = cmd.index("-cp")
        cmd[cp + 1] = f"{classes}{os.pathsep}{cmd[cp + 1]}"
        self._stderr = open(workdir / f"ops-{name}.log", "ab")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True, bufsize=1
        )
        self._sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)

    def __call__(self, *args: Any, ok_errors: tuple[str, ...] = (), timeout: float = 180) -> str:
        """Run one operation; raise OpError unless it succeeds or its error contains an ``ok_errors`` text."""
        line = "\t".join(str(a) for a in args)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            if not self._sel.select(max(0.0, deadline - time.monotonic())):
                raise OpError(f"[{self.name}] {line!r}: no answer after {timeout}s")
            out = self.proc.stdout.readline()
            if not out:
                raise OpError(f"[{self.name}] FixtureOps exited ({self.proc.poll()}) during {line!r}")
            status, _, rest = out.rstrip("\n").partition("\t")
            if status in ("OK", "ERR"):
                break
        result = rest.partition("\t")[2]
        if status == "OK":
            self.log(f"  [{self.name}] {' '.join(map(str, args))[:150]} -> {result[:150]}")
            return result
        if any(e in result for e in ok_errors):
            self.log(f"  [{self.name}] {' '.join(map(str, args))[:150]} -> (accepted) {result[:200]}")
            return result
        raise OpError(f"[{self.name}] {line!r} failed: {result}")

    def retry(self, *args: Any, attempts: int = 20, delay: float = 1.5, **kw: Any) -> str:
        """Run an operation that may fail while metadata propagates (retriable errors)."""
        for i in range(attempts):
            try:
                return self(*args, **kw)
            except OpError as exc:
                if i == attempts - 1:
                    raise
                self.log(f"  [{self.name}] retrying after: {str(exc)[:200]}")
                time.sleep(delay)
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._sel.close()
        self._stderr.close()


# --------------------------------------------------------------------------------------------------
# Cluster variant: optional SASL/SCRAM listener on brokers (delegation tokens need an authenticated
# SASL connection) and optional KIP-853 dynamic quorum (KRaftVersion/KRaftVoters control records).


class FixtureCluster(KafkaCluster):
    def __init__(
        self,
        dist: KafkaDist,
        workdir: Path,
        *,
        sasl_broker_listener: bool = False,
        dynamic_quorum: bool = False,
        **kw: Any,
    ) -> None:
        super().__init__(dist, workdir, **kw)
        self.sasl_ports: dict[int, int] = {}
        if sasl_broker_listener:
            ports = free_ports(len(self.brokers))
            self.sasl_ports = {n.node_id: p for n, p in zip(self.brokers, ports, strict=False)}
        self.directory_ids: dict[int, str] = {}
        self.dynamic_quorum = dynamic_quorum
        if dynamic_quorum:
            self.directory_ids = {n.node_id: random_kafka_uuid() for n in self.controllers}
            if len(self.controllers) == 1 and mode_of(kw) == "combined":
                self.format_args = ["--standalone", *self.format_args]
            else:
                voters = ",".join(
                    f"{n.node_id}@127.0.0.1:{n.controller_port}:{self.directory_ids[n.node_id]}"
                    for n in self.controllers
                )
                self.format_args = ["--initial-controllers", voters, *self.format_args]

    def start(self, timeout: float = 240) -> FixtureCluster:
        """Controllers first, then (once the quorum has a leader) brokers, retrying a broker that dies.

        Kafka 4.4.0 brokers started while the quorum is still electing can miss the final leader
        change and give up registering after 60 s; the harness starts every node at once.
        """
        self.dist.ensure()
        if not self._formatted:
            self.format()
        with harness._LIVE_LOCK:
            harness._LIVE_CLUSTERS.add(self)
        try:
            for node in self.controllers:
                node.start(wait=False)
            for node in self.controllers:
                node.wait_ready(timeout)
            if any(not n.is_controller for n in self.nodes):
                wait_until("a controller quorum leader", lambda: self.stable_leader() is not None, timeout)
            for node in self.nodes:
                if not node.is_controller:
                    start_node(node, timeout=timeout)
        except BaseException:
            self.kill_all()
            raise
        return self

    def stable_leader(self, exclude: tuple[int, ...] = ()) -> int | None:
        """The leader all running controllers agree on in their ``quorum-state`` files, else None.

        File based on purpose: the Admin API's describe-quorum needs direct-to-controller support,
        which metadata.version < 3.7 lacks (the 3.9 scenario starts at 3.3-IV0).
        """
        seen = set()
        for n in self.controllers:
            if not n.is_running():
                continue
            try:
                state = json.loads((n.metadata_dir / "quorum-state").read_text())
            except (OSError, ValueError):
                return None
            seen.add((state.get("leaderId", -1), state.get("leaderEpoch", -1)))
        if len(seen) != 1:
            return None
        leader = next(iter(seen))[0]
        if leader < 0 or leader in exclude or not self.node(leader).is_running():
            return None
        return int(leader)

    @property
    def sasl_bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{p}" for p in self.sasl_ports.values())

    def node_properties(self, node: KafkaNode) -> dict[str, Any]:
        p = super().node_properties(node)
        if self.dynamic_quorum:
            p["controller.quorum.voters"] = None  # dropped by write_properties
            p["controller.quorum.bootstrap.servers"] = self.controller_bootstrap
        port = self.sasl_ports.get(node.node_id)
        if port:
            p["listeners"] += f",SASL://127.0.0.1:{port}"
            p["advertised.listeners"] += f",SASL://127.0.0.1:{port}"
            p["listener.security.protocol.map"] += ",SASL:SASL_PLAINTEXT"
            p["listener.name.sasl.sasl.enabled.mechanisms"] = "SCRAM-SHA-256,SCRAM-SHA-512"
            module = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
            p["listener.name.sasl.scram-sha-256.sasl.jaas.config"] = module
            p["listener.name.sasl.scram-sha-512.sasl.jaas.config"] = module
        return p

    def sasl_client_properties(self, user: str = SASL_USER, password: str = SASL_PASSWORD) -> dict[str, Any]:
        return {
            "bootstrap.servers": self.sasl_bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{user}" password="{password}";',
        }


def start_node(node: KafkaNode, timeout: float = 180, attempts: int = 3) -> None:
    """Start a node and wait until ready; retry if it exits during start-up (see FixtureCluster.start)."""
    for attempt in range(attempts):
        try:
            node.start(wait=True, timeout=timeout)
            return
        except HarnessError:
            if node.is_running() or attempt == attempts - 1:
                raise
            time.sleep(2)


def mode_of(kw: dict[str, Any]) -> str:
    return str(kw.get("mode", "combined"))


def small_log_settings(
    version: str, segment_bytes: int, snapshot_bytes: int, noop_ms: int = 2000
) -> dict[str, Any]:
    """Server settings that force several metadata segments and snapshots on a small cluster."""
    p: dict[str, Any] = {
        "metadata.log.max.record.bytes.between.snapshots": snapshot_bytes,
        "metadata.max.idle.interval.ms": noop_ms,
        "broker.session.timeout.ms": 6000,
        "broker.heartbeat.interval.ms": 1000,
    }
    if int(version.split(".")[0]) >= 4:
        p["internal.metadata.log.segment.bytes"] = segment_bytes
    else:  # 3.x: the public minimum is 8 MiB unless the internal minimum is lowered too
        p["metadata.log.segment.min.bytes"] = segment_bytes
        p["metadata.log.segment.bytes"] = segment_bytes
    return p


SECURITY_SETTINGS: dict[str, Any] = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS;User:admin",
    "delegation.token.secret.key": "metashell-fixture-token-secret",
}


# --------------------------------------------------------------------------------------------------
# Scenario plumbing


@dataclass
class Context:
    dist: KafkaDist
    cluster: FixtureCluster
    workdir: Path
    log: Callable[[str], None]
    sessions: list[Ops] = field(default_factory=list)

    def ops(self, name: str, props: dict[str, Any]) -> Ops:
        s = Ops(self.dist, props, self.workdir, name, self.log)
        self.sessions.append(s)
        return s

    def broker_ops(self) -> Ops:
        return self.ops(
            "broker",
            {"bootstrap.servers": self.cluster.bootstrap_servers, **self.cluster.client_properties("broker")},
        )

    def controller_ops(self) -> Ops:
        return self.ops(
            "controller",
            {
                "bootstrap.controllers": self.cluster.controller_bootstrap,
                **self.cluster.client_properties("controller"),
            },
        )

    def close(self) -> None:
        for s in self.sessions:
            s.close()
        self.sessions.clear()


def wait_until(what: str, check: Callable[[], bool], timeout: float = 90, every: float = 1.0) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        try:
            if check():
                return
        except OpError as exc:
            last = f" (last error: {exc})"
        if time.monotonic() > deadline:
            raise HarnessError(f"timed out after {timeout}s waiting for {what}{last}")
        time.sleep(every)


def leaders(ops: Ops, topic: str) -> dict[int, int]:
    """partition -> leader id (-1 = none) from describe-topic."""
    out = {}
    for part in ops("describe-topic", topic).split():
        p, leader, _replicas, _isr = part.split(":")
        out[int(p)] = int(leader)
    return out


def isr_complete(ops: Ops, topic: str) -> bool:
    for part in ops("describe-topic", topic).split():
        _p, _leader, replicas, isr = part.split(":")
        if set(replicas.split(",")) != set(filter(None, isr.split(","))):
            return False
    return True


def live_brokers(ops: Ops) -> set[int]:
    out = ops("describe-cluster")
    nodes = out.split("nodes=", 1)[1]
    return {int(x) for x in nodes.split(",") if x}


def quorum(ops: Ops) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in ops("describe-quorum").split())


# --------------------------------------------------------------------------------------------------
# Scenarios

Log = Callable[[str], None]


@dataclass(frozen=True)
class Scenario:
    """One cluster run; ``outputs`` maps fixture name -> node id whose metadata dir is copied."""

    name: str
    version: str
    mode: str
    outputs: dict[str, int]
    description: str
    run: Callable[[KafkaDist, Path, Log], Any]  # returns something with .node(id) -> .log_dir/.roles


def run_demo(dist: KafkaDist, workdir: Path, log: Log) -> FixtureCluster:
    """A small, pleasant single-node combined cluster (the README's demo): a few topics with configs,
    ACLs, quotas, SCRAM users, one deleted topic, one partition increase, a little produced data."""
    settings = {
        **small_log_settings(dist.version, segment_bytes=2048, snapshot_bytes=2500),
        **SECURITY_SETTINGS,
    }
    cluster = FixtureCluster(
        dist,
        workdir,
        mode="combined",
        dynamic_quorum=True,
        broker_overrides=settings,
        controller_overrides=settings,
    )
    cluster.start(timeout=180)
    ctx = Context(dist, cluster, workdir, log)
    try:
        b = ctx.broker_ops()
        b.retry("create-topic", "orders", 6, 1, "retention.ms=604800000", "cleanup.policy=delete")
        b("create-topic", "payments", 3, 1, "cleanup.policy=compact", "compression.type=zstd")
        b("create-topic", "clickstream", 2, 1, "retention.bytes=1073741824", "segment.ms=3600000")
        b("create-topic", "tmp-scratch", 1, 1)
        b("create-partitions", "payments", 4)
        b.retry("delete-topic", "tmp-scratch")
        b("alter-config", "TOPIC", "orders", "set:max.message.bytes=2097152")
        b("alter-config", "BROKER", "", "set:log.retention.ms=259200000")
        b("alter-config", "BROKER", "1", "set:max.connections.per.ip=1000")
        b("acl-create", "TOPIC", "orders", "LITERAL", "User:alice", "*", "READ", "ALLOW")
        b("acl-create", "GROUP", "orders-", "PREFIXED", "User:alice", "*", "READ", "ALLOW")
        b("acl-create", "TOPIC", "payments", "LITERAL", "User:bob", "*", "WRITE", "ALLOW")
        b("quota", "user=alice", "producer_byte_rate", 1048576)
        b("quota", "user=alice", "consumer_byte_rate", 2097152)
        b("quota", "client-id=reporting-app", "request_percentage", 25)
        b("scram-upsert", "alice", "SCRAM-SHA-256", 8192, "alice-secret")
        b("scram-upsert", "bob", "SCRAM-SHA-512", 8192, "bob-secret")
        b.retry("produce", "orders", 50, 100)
        b("sleep", 5000)  # a few NoOp records after the newest snapshot: the log tail
    finally:
        ctx.close()
    cluster.stop()
    return cluster


def upgrade_features(ops: Ops, log: Log, skip: tuple[str, ...] = ()) -> None:
    """Upgrade metadata.version first, then every other feature, to the highest supported level."""
    feats = {}
    for item in ops("features").split():
        name, levels = item.split("=")
        fin, sup = levels.split("/")
        feats[name] = (int(fin), int(sup))
    log(f"  features before upgrade: {feats}")
    order = ["metadata.version"] + sorted(n for n in feats if n != "metadata.version")
    for name in order:
        fin, sup = feats.get(name, (0, 0))
        if name in skip or sup <= fin:
            continue
        ops.retry("feature", name, sup, "UPGRADE", attempts=5)


def run_split(dist: KafkaDist, workdir: Path, log: Log) -> FixtureCluster:
    """3 controllers + 2 brokers driven through every kind of metadata change Kafka has.

    3.9.2: static quorum, bootstrapped at metadata.version 3.3-IV0 so the old record shapes
    (Fence/UnfenceBroker, RegisterBroker v0) are written, then upgraded to 3.9-IV0.
    4.4.0: dynamic quorum (KRaftVersion/KRaftVoters), SASL/SCRAM controller listener, bootstrapped
    at 4.0-IV3 then upgraded to 4.4-IV2 (ELR, controller unregistration, group configs...).
    """
    v4 = int(dist.version.split(".")[0]) >= 4
    settings = {
        **small_log_settings(dist.version, segment_bytes=6 * 1024, snapshot_bytes=10 * 1024),
        **SECURITY_SETTINGS,
    }
    # The controller listener stays PLAINTEXT: SCRAM credentials live in the metadata log, so a
    # multi-controller quorum cannot authenticate its own votes with them.  The SASL admin user is
    # created at format time where the metadata.version allows it (4.x), later via the Admin API (3.9).
    cluster = FixtureCluster(
        dist,
        workdir,
        mode="split",
        controllers=3,
        brokers=2,
        security="plaintext",
        sasl_broker_listener=True,
        dynamic_quorum=v4,
        release_version="4.0-IV3" if v4 else "3.3-IV0",
        format_args=["--add-scram", f"SCRAM-SHA-512=[name={SASL_USER},password={SASL_PASSWORD}]"]
        if v4
        else [],
        broker_overrides=settings,
        controller_overrides=settings,
    )
    cluster.start(timeout=240)
    ctx = Context(dist, cluster, workdir, log)
    b4, b5 = cluster.node(4), cluster.node(5)
    try:
        b = ctx.broker_ops()
        log(f"  controller leader: {cluster.stable_leader()}")
        log(f"  features: {b.retry('features')}")

        # -- topics, partitions, deletion ------------------------------------------------------
        b.retry("create-topic", "orders", 12, 2, "retention.ms=604800000", "min.insync.replicas=1")
        b("create-topic", "payments", 6, 2, "cleanup.policy=compact", "compression.type=lz4")
        b("create-topic", "events", 3, 2, "retention.bytes=1073741824")
        b("create-topic", "scratch", 2, 1)
        b("create-topic-assigned", "moves", "4;4")
        b("create-topic-assigned", "slowmove", "4")
        b("create-topic", "ledger", 1, 2, "min.insync.replicas=2")
        b("create-partitions", "events", 6)
        b.retry("delete-topic", "scratch")

        # -- configs ---------------------------------------------------------------------------
        b("alter-config", "TOPIC", "orders", "set:retention.ms=86400000", "set:segment.bytes=104857600")
        b("alter-config", "TOPIC", "orders", "delete:segment.bytes")
        b("alter-config", "BROKER", "", "set:log.retention.ms=259200000", "set:log.cleaner.backoff.ms=20000")
        b("alter-config", "BROKER", "4", "set:max.connections.per.ip=1000")
        b("alter-config", "BROKER", "5", "set:log.cleaner.threads=2")
        # Broker-logger changes are applied by the broker itself and never reach the metadata log.
        b("alter-config", "BROKER_LOGGER", "4", "set:kafka.server.ReplicaManager=DEBUG")

        # -- ACLs: every resource and pattern type, ALLOW and DENY, then one removal ---------------
        acls = [
            ("TOPIC", "orders", "LITERAL", "User:alice", "*", "READ", "ALLOW"),
            ("TOPIC", "pay", "PREFIXED", "User:bob", "*", "WRITE", "ALLOW"),
            ("TOPIC", "*", "LITERAL", "User:*", "*", "DESCRIBE", "ALLOW"),
            ("TOPIC", "payments", "LITERAL", "User:mallory", "10.0.0.66", "READ", "DENY"),
            ("GROUP", "orders-app", "LITERAL", "User:alice", "*", "READ", "ALLOW"),
            ("CLUSTER", "kafka-cluster", "LITERAL", "User:ops", "*", "DESCRIBE_CONFIGS", "ALLOW"),
            ("TRANSACTIONAL_ID", "tx-", "PREFIXED", "User:bob", "*", "WRITE", "ALLOW"),
            ("DELEGATION_TOKEN", "*", "LITERAL", "User:ops", "*", "DESCRIBE", "ALLOW"),
            ("USER", "User:alice", "LITERAL", "User:ops", "*", "CREATE_TOKENS", "ALLOW"),
            ("TOPIC", "tmp-", "PREFIXED", "User:carol", "*", "ALL", "ALLOW"),
        ]
        for acl in acls:
            b("acl-create", *acl)
        b("acl-delete", "TOPIC", "tmp-", "PREFIXED", "User:carol", "*", "ALL", "ALLOW")

        # -- client quotas: user, client-id, user+client-id, ip, defaults, one removal -------------
        for entity, key, value in [
            ("user=alice", "producer_byte_rate", 1048576),
            ("user=alice", "consumer_byte_rate", 2097152),
            ("client-id=app-1", "request_percentage", 50),
            ("user=alice,client-id=app-1", "producer_byte_rate", 524288),
            ("user=<default>", "consumer_byte_rate", 10485760),
            ("client-id=<default>", "request_percentage", 200),
            ("user=bob,client-id=<default>", "producer_byte_rate", 65536),
            ("ip=127.0.0.1", "connection_creation_rate", 100),
            ("ip=<default>", "connection_creation_rate", 50),
        ]:
            b("quota", entity, key, value)
        b("quota", "user=alice", "consumer_byte_rate", "remove")

        # -- old-MV only (3.9 bootstrapped at 3.3-IV0): FenceBroker / UnfenceBroker ------------------
        if not v4:
            kill_and_wait_fenced(b, b5, log)
            restart_and_wait(b, b5, ["orders", "payments"], log)
            # kraft.version stays 0: 3.9 accepts the upgrade, but a static quorum is not meant to.
            upgrade_features(b, log, skip=("kraft.version",))

        # -- SCRAM, delegation tokens (need a SASL-authenticated broker connection) ------------------
        if not v4:  # 3.9 has no SCRAM user from format time (MV 3.3 cannot hold one)
            b("scram-upsert", SASL_USER, "SCRAM-SHA-512", 4096, SASL_PASSWORD)
        b("scram-upsert", "alice", "SCRAM-SHA-256", 8192, "alice-secret")
        b("scram-upsert", "alice", "SCRAM-SHA-512", 8192, "alice-secret")
        b("scram-upsert", "bob", "SCRAM-SHA-256", 4096, "bob-secret")
        b("scram-upsert", "carol", "SCRAM-SHA-512", 10000, "carol-secret")
        b("scram-delete", "bob", "SCRAM-SHA-256")
        s = ctx.ops("sasl", cluster.sasl_client_properties())
        t1 = s.retry("token-create", 86400000, "-", "User:alice").split("\t")
        t2 = s("token-create", 86400000, "User:alice", "User:bob").split("\t")
        t3 = s("token-create", 3600000, "-").split("\t")
        s.retry("token-renew", t1[1], 7200000, attempts=10)
        s.retry("token-expire", t3[1], -1, attempts=10)  # immediate expiry: RemoveDelegationTokenRecord
        log(f"  tokens kept: {t1[0]} {t2[0]}")

        # -- client-metrics and group configs ---------------------------------------------------
        b(
            "alter-config",
            "CLIENT_METRICS",
            "producer-metrics",
            "set:metrics=org.apache.kafka.producer.",
            "set:interval.ms=30000",
            "set:match=client_id=app-.*",
        )
        if v4:
            b(
                "alter-config",
                "GROUP",
                "orders-app",
                "set:consumer.session.timeout.ms=50000",
                "set:consumer.heartbeat.interval.ms=6000",
            )

        # -- producers: ProducerIdsRecord, __transaction_state -----------------------------------
        b.retry("produce", "orders", 200, 100)
        b.retry("produce", "payments", 20, 100, "transactional.id=tx-payments-1")

        # -- feature upgrade (4.4: 4.0-IV3 -> 4.4-IV2, ELR on) and ClearElr ----------------------
        if v4:
            upgrade_features(b, log)
            b("alter-config", "TOPIC", "ledger", "set:min.insync.replicas=1")  # ClearElr(ledger)
            b("alter-config", "BROKER", "", "set:min.insync.replicas=1")  # ClearElr(all topics)
        log(f"  features now: {b('features')}")

        # -- reassignments: two finished (one more near the end stays in flight) ----------------
        b("reassign", "moves", 0, "5")
        b("reassign", "moves", 1, "4,5")
        wait_until("moves reassignments", lambda: "moves" not in b("list-reassignments"), 120)
        b.retry("produce", "slowmove", 3000, 1000)

        # -- leader fail-over (kill -9), recovery, preferred election, controlled shutdown ---------
        kill_and_wait_fenced(b, b5, log)
        restart_and_wait(b, b5, ["orders", "payments", "events"], log)
        for topic, parts in (("orders", 12), ("events", 6)):
            for p in range(parts):
                b("elect", "PREFERRED", topic, p, ok_errors=("ElectionNotNeeded", "not needed"))
        log("  controlled shutdown of broker 4")
        b4.stop()
        wait_until("broker 4 gone", lambda: 4 not in live_brokers(b), 120)
        start_node(b4)
        wait_until("broker 4 back", lambda: 4 in live_brokers(b), 120)

        # -- controller fail-over ------------------------------------------------------------------
        leader = cluster.stable_leader()
        assert leader is not None
        log(f"  killing active controller {leader}")
        cluster.node(leader).kill()
        wait_until(
            "a new controller leader", lambda: cluster.stable_leader(exclude=(leader,)) is not None, 90
        )
        start_node(cluster.node(leader))
        wait_until("controllers agree on the leader", lambda: cluster.stable_leader() is not None, 90)
        # Direct-to-controller Admin calls need metadata.version >= 3.7-IV0, and a session opened
        # before the fail-over can stay stuck on the killed node: open it only now.
        c = ctx.controller_ops()
        log(f"  quorum: {c.retry('describe-quorum', attempts=5)}")

        # -- KIP-853 voter removal/addition (dynamic quorum only) ----------------------------------
        if v4:
            leader = int(quorum(c)["leader"])
            x = next(n for n in (3, 2, 1) if n != leader)
            c.retry("remove-voter", x, cluster.directory_ids[x], attempts=10)
            wait_until(f"voter {x} removed", lambda: str(x) not in quorum(c)["voters"].split(","), 60)
            c.retry(
                "add-voter",
                x,
                cluster.directory_ids[x],
                "CONTROLLER",
                "127.0.0.1",
                cluster.node(x).controller_port,
                attempts=20,
                delay=3,
            )
            wait_until(f"voter {x} back", lambda: str(x) in quorum(c)["voters"].split(","), 60)

        # -- broker unregistration (stopped broker), re-registration -------------------------------
        b5.stop()
        wait_until("broker 5 gone", lambda: 5 not in live_brokers(b), 120)
        b.retry("unregister-broker", 5, attempts=5)
        start_node(b5)

        # -- controller unregistration (4.4-IV2+): a stopped, non-active controller ------------
        if v4:
            leader = int(quorum(c)["leader"])
            y = next(n for n in (3, 2) if n != leader)
            cluster.node(y).stop()
            c.retry("unregister-controller", y, attempts=5)

        # -- a reassignment held in flight: 1 byte/s replication throttle, then its target broker
        # is killed, so it is still in progress when the cluster stops ------------------------------
        b("alter-config", "BROKER", "4", "set:leader.replication.throttled.rate=1")
        b("alter-config", "BROKER", "5", "set:follower.replication.throttled.rate=1")
        b(
            "alter-config",
            "TOPIC",
            "slowmove",
            "set:leader.replication.throttled.replicas=0:4",
            "set:follower.replication.throttled.replicas=0:5",
        )
        b("reassign", "slowmove", 0, "5")
        in_flight = b("list-reassignments")
        log(f"  reassignments in flight: {in_flight}")
        if "slowmove" not in in_flight:
            raise HarnessError(f"the throttled slowmove reassignment is not in flight: {in_flight!r}")
        # -- end state: one broker fenced by a kill, then a short log tail -------------------------
        kill_and_wait_fenced(b, b5, log)
        if "slowmove" not in b("list-reassignments"):
            raise HarnessError("the slowmove reassignment finished before its target broker was killed")
        b("sleep", 4000)
    finally:
        ctx.close()
    cluster.stop()
    return cluster


def kill_and_wait_fenced(b: Ops, node: KafkaNode, log: Log) -> None:
    log(f"  kill -9 broker {node.node_id}")
    node.kill()
    wait_until(f"broker {node.node_id} fenced", lambda: node.node_id not in live_brokers(b), 120)


def restart_and_wait(b: Ops, node: KafkaNode, topics: list[str], log: Log) -> None:
    log(f"  restarting broker {node.node_id}")
    start_node(node)
    for t in topics:
        wait_until(f"{t} ISR complete", lambda t=t: isr_complete(b, t), 120)


# -- ZooKeeper -> KRaft migration (3.9.x is the last release that can do it) ---------------------


class Jvm:
    """A JVM we start ourselves (ZooKeeper, a ZK-mode broker): the harness only knows KRaft nodes."""

    _all: ClassVar[list[Jvm]] = []

    def __init__(self, name: str, cmd: list[str], log_path: Path) -> None:
        self.name = name
        self.cmd = cmd
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self._offset = 0
        Jvm._all.append(self)

    def start(self) -> Jvm:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                self.cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.log_path.parent,
            )
        return self

    def text(self) -> str:
        with open(self.log_path, "rb") as fh:
            fh.seek(self._offset)
            return fh.read().decode("utf-8", "replace")

    def wait_for(self, marker: str, timeout: float = 120) -> None:
        def seen() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise HarnessError(
                    f"{self.name} exited ({self.proc.returncode}); see {self.log_path}:\n"
                    f"{harness.tail(self.log_path)}"
                )
            return marker in self.text()

        wait_until(f"{self.name}: {marker!r}", seen, timeout, every=0.25)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 60) -> None:
        if self.running():
            assert self.proc is not None
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        if self.running():
            assert self.proc is not None
            self.proc.kill()
            self.proc.wait(30)

    @classmethod
    def kill_all(cls) -> None:
        for j in cls._all:
            with contextlib.suppress(Exception):
                j.kill()


@dataclass
class NodeDir:
    """A node's metadata dir, for scenarios that do not run a harness cluster."""

    node_id: int
    roles: tuple[str, ...]
    log_dir: Path


@dataclass
class Nodes:
    items: list[NodeDir]

    def node(self, node_id: int) -> NodeDir:
        return next(n for n in self.items if n.node_id == node_id)


def transaction_open(part: Path) -> tuple[bool, int]:
    """(a metadata transaction is open at the log end, records after its Begin) for a log dir."""
    last_begin = last_end = -1
    count = 0
    for seg in sorted(part.glob("*.log")):
        for off, control, key, value in iter_records(seg):
            name = record_name(control, key, value)
            if name == "BeginTransactionRecord":
                last_begin, count = off, 0
            elif name in ("EndTransactionRecord", "AbortTransactionRecord"):
                last_end = off
            count += 1
    return last_begin > last_end, count


def run_zk_migration(dist: KafkaDist, workdir: Path, log: Log) -> Nodes:
    """ZooKeeper cluster migrated to KRaft, with a controller crash in the middle of the migration.

    ZK broker 1 is filled through the Admin API (topics, configs, ACLs, SCRAM, 400 user quotas), a
    KRaft controller (node 3000) migrates it with ``zookeeper.metadata.migration.min.batch.size=1``
    so every migrated record is its own committed batch; the controller is SIGKILLed while the
    "ZK Migration" metadata transaction is open, and on restart Kafka writes AbortTransactionRecord
    and migrates again.  Then dual-write operations, the broker restarted in KRaft mode, and the
    controller restarted with migration off (ZkMigrationState POST_MIGRATION).
    """
    zk_port, broker_port, ctl_port = free_ports(3)
    (workdir / "zk").mkdir(parents=True)
    zk_cfg = workdir / "zk" / "zoo.cfg"
    zk_cfg.write_text(
        f"clientPort={zk_port}\nclientPortAddress=127.0.0.1\ndataDir={workdir / 'zk' / 'data'}\n"
        "admin.enableServer=false\ntickTime=2000\nmaxClientCnxns=0\n"
    )
    zk = Jvm(
        "zookeeper",
        dist.java_cmd(
            "org.apache.zookeeper.server.ZooKeeperServerMain", str(zk_cfg), heap="128m", kind="server"
        ),
        workdir / "zk" / "server.log",
    ).start()
    zk.wait_for("binding to port", 60)
    zk_connect = f"127.0.0.1:{zk_port}"
    data = workdir / "broker-1" / "data"
    ctl_dir = workdir / "controller-3000" / "metadata"
    broker_props: dict[str, Any] = {
        "broker.id": 1,
        "zookeeper.connect": zk_connect,
        "listeners": f"PLAINTEXT://127.0.0.1:{broker_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{broker_port}",
        "log.dirs": data,
        "num.partitions": 1,
        "auto.create.topics.enable": False,
        "offsets.topic.replication.factor": 1,
        "transaction.state.log.replication.factor": 1,
        "transaction.state.log.min.isr": 1,
        "num.network.threads": 2,
        "num.io.threads": 2,
        "log.cleaner.dedupe.buffer.size": 4 * 1024 * 1024,
        "group.initial.rebalance.delay.ms": 0,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:ANONYMOUS",
        "inter.broker.protocol.version": "3.9",
    }
    bcfg = workdir / "broker-1" / "server.properties"
    write_properties(bcfg, broker_props)
    broker = Jvm(
        "zk-broker-1",
        dist.java_cmd("kafka.Kafka", str(bcfg), heap="384m", kind="server"),
        workdir / "broker-1" / "server.log",
    ).start()
    broker.wait_for("[KafkaServer id=1] started", 120)
    ctx_sessions: list[Ops] = []

    def ops(name: str) -> Ops:
        o = Ops(dist, {"bootstrap.servers": f"127.0.0.1:{broker_port}"}, workdir, name, log)
        ctx_sessions.append(o)
        return o

    try:
        b = ops("zk-broker")
        b.retry("create-topic", "inventory", 4, 1, "cleanup.policy=compact")
        b("create-topic", "shipments", 2, 1, "retention.ms=86400000")
        b("create-topic", "legacy-tmp", 1, 1)
        b("create-partitions", "shipments", 3)
        b.retry("delete-topic", "legacy-tmp")
        b("alter-config", "TOPIC", "inventory", "set:min.compaction.lag.ms=60000")
        b("alter-config", "BROKER", "", "set:log.retention.ms=345600000")
        b("alter-config", "BROKER", "1", "set:max.connections.per.ip=500")
        b("acl-create", "TOPIC", "inventory", "LITERAL", "User:zoe", "*", "READ", "ALLOW")
        b("acl-create", "GROUP", "inv-", "PREFIXED", "User:zoe", "*", "READ", "ALLOW")
        b("scram-upsert", "zoe", "SCRAM-SHA-256", 4096, "zoe-secret")
        b("quota", "client-id=legacy-app", "producer_byte_rate", 1048576)
        b("quota-bulk", "u", 400, "consumer_byte_rate", 1048576)  # makes the migration long
        b.retry("produce", "inventory", 20, 100)
        b.close()
        ctx_sessions.clear()
        cluster_id = next(
            line.split("=", 1)[1]
            for line in (data / "meta.properties").read_text().splitlines()
            if line.startswith("cluster.id=")
        )

        ctl_base: dict[str, Any] = {
            "process.roles": "controller",
            "node.id": 3000,
            "controller.quorum.voters": f"3000@127.0.0.1:{ctl_port}",
            "controller.listener.names": "CONTROLLER",
            "listeners": f"CONTROLLER://127.0.0.1:{ctl_port}",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "metadata.log.dir": ctl_dir,
            "log.dirs": ctl_dir,
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:ANONYMOUS",
            **small_log_settings(dist.version, segment_bytes=16 * 1024, snapshot_bytes=40 * 1024),
        }
        migrating = {
            **ctl_base,
            "zookeeper.metadata.migration.enable": True,
            "zookeeper.connect": zk_connect,
            "zookeeper.metadata.migration.min.batch.size": 1,
        }
        ccfg = workdir / "controller-3000" / "server.properties"
        write_properties(ccfg, migrating)
        dist.run(
            "kafka-storage",
            "format",
            "-t",
            cluster_id,
            "-c",
            ccfg,
            "--release-version",
            "3.9",
            check=True,
            timeout=180,
        )
        controller = Jvm(
            "controller-3000",
            dist.java_cmd("kafka.Kafka", str(ccfg), heap="384m", kind="server"),
            workdir / "controller-3000" / "server.log",
        ).start()
        controller.wait_for("Kafka Server started", 120)

        log("  restarting broker 1 with migration enabled")
        broker.stop()
        write_properties(
            bcfg,
            {
                **broker_props,
                "zookeeper.metadata.migration.enable": True,
                "controller.quorum.voters": f"3000@127.0.0.1:{ctl_port}",
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            },
        )
        broker.start()
        controller.wait_for("Starting ZK migration", 180)
        part = ctl_dir / "__cluster_metadata-0"
        wait_until(
            "the ZK migration transaction to be under way",
            lambda: transaction_open(part)[0] and transaction_open(part)[1] >= 30,
            60,
            every=0.1,
        )
        controller.kill()
        is_open, records = transaction_open(part)
        log(f"  killed controller 3000 mid-migration: transaction open={is_open}, {records} records written")
        if not is_open:
            raise HarnessError("the ZK migration finished before the controller was killed")
        controller.start()
        controller.wait_for("Completed migration of metadata from ZooKeeper to KRaft", 240)
        # After the crash the controller's ZK-compat channel considers the broker offline until the
        # broker registers again: restart it (still migrating) before the dual-write phase.
        broker.stop()
        broker.start()
        broker.wait_for("[KafkaServer id=1] started", 120)
        controller.wait_for("DUAL_WRITE", 120)

        b = ops("dual-write")  # the ZK broker forwards to the KRaft controller; writes go to both
        try:
            b.retry("create-topic", "post-migration", 2, 1, attempts=3, timeout=60)
            b(
                "acl-create",
                "TOPIC",
                "post-migration",
                "LITERAL",
                "User:zoe",
                "*",
                "WRITE",
                "ALLOW",
                timeout=60,
            )
            b("alter-config", "TOPIC", "shipments", "set:retention.ms=172800000", timeout=60)
            b("scram-upsert", "yara", "SCRAM-SHA-512", 4096, "yara-secret", timeout=60)
        except OpError as exc:  # best effort: the fixture's point is the migration itself
            log(f"  dual-write step incomplete: {exc}")
        b.close()
        ctx_sessions.clear()

        log("  finalizing: broker 1 in KRaft mode, controller without migration")
        broker.stop()
        kraft_broker = {
            k: v
            for k, v in broker_props.items()
            if k not in ("broker.id", "zookeeper.connect", "inter.broker.protocol.version")
        }
        write_properties(
            bcfg,
            {
                **kraft_broker,
                "process.roles": "broker",
                "node.id": 1,
                "controller.quorum.voters": f"3000@127.0.0.1:{ctl_port}",
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "authorizer.class.name": ctl_base["authorizer.class.name"],
                **small_log_settings(dist.version, 16 * 1024, 40 * 1024),
            },
        )
        broker.start()
        broker.wait_for("Kafka Server started", 180)
        controller.stop()
        write_properties(ccfg, ctl_base)
        controller.start()
        controller.wait_for("Kafka Server started", 120)
        b = ops("kraft")
        b.retry("create-topic", "kraft-native", 3, 1, attempts=30)
        b("quota", "user=u0000", "consumer_byte_rate", "remove")
        b("sleep", 4000)
    finally:
        for o in ctx_sessions:
            o.close()
        for j in (broker, locals().get("controller"), zk):
            if isinstance(j, Jvm):
                j.stop()
        Jvm.kill_all()
    return Nodes([NodeDir(3000, ("controller",), ctl_dir), NodeDir(1, ("broker",), data)])


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "demo",
        "4.4.0",
        "combined",
        {"demo": 1},
        "single combined node (dynamic quorum, --standalone): a few topics, configs, ACLs, quotas, "
        "SCRAM users",
        run_demo,
    ),
    Scenario(
        "kafka-4.4-split",
        "4.4.0",
        "split",
        {"kafka-4.4-split-c1": 1, "kafka-4.4-broker": 4},
        "3 controllers (dynamic quorum, SASL/SCRAM controller listener) + 2 brokers, MV 4.0-IV3 -> "
        "4.4-IV2, everything",
        run_split,
    ),
    Scenario(
        "kafka-3.9-split",
        "3.9.2",
        "split",
        {"kafka-3.9-split-c1": 1, "kafka-3.9-broker": 4},
        "3 controllers (static quorum) + 2 brokers, MV 3.3-IV0 -> 3.9-IV0, everything",
        run_split,
    ),
    Scenario(
        "kafka-3.9-zk-migration",
        "3.9.2",
        "zk-migration",
        {"kafka-3.9-zk-migration": 3000},
        "ZooKeeper cluster migrated to a KRaft controller that crashed mid-migration (aborted "
        "metadata transaction), dual-write, then finalized",
        run_zk_migration,
    ),
)


# --------------------------------------------------------------------------------------------------
# Copying a node's metadata dir into fixtures/

KEEP_IN_PARTITION = ("quorum-state", "leader-epoch-checkpoint", "partition.metadata")


def copy_metadata_dir(node: KafkaNode | NodeDir, dest: Path) -> None:
    """Copy what a metadata reader needs from ``node.log_dir`` into ``dest`` (replacing it)."""
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "__cluster_metadata-0").mkdir(parents=True)
    for name in ("meta.properties", "bootstrap.checkpoint"):
        if (node.log_dir / name).exists():
            shutil.copy2(node.log_dir / name, dest / name)
    src = node.log_dir / "__cluster_metadata-0"
    for f in sorted(src.iterdir()):
        if f.name.endswith((".log", ".checkpoint")) or f.name in KEEP_IN_PARTITION:
            shutil.copy2(f, dest / "__cluster_metadata-0" / f.name)


# --------------------------------------------------------------------------------------------------
# Inventory: count record types in a fixture (minimal batch parser; metashell.protocol for names)


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7


def _uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


CONTROL_NAMES = {
    0: "Abort",
    1: "Commit",
    2: "LeaderChange",
    3: "SnapshotHeader",
    4: "SnapshotFooter",
    5: "KRaftVersion",
    6: "KRaftVoters",
}


def iter_records(path: Path) -> Iterator[tuple[int, bool, bytes | None, bytes | None]]:
    """(offset, is_control, key, value) of every record in a .log/.checkpoint file (uncompressed)."""
    data = path.read_bytes()
    pos = 0
    while pos + 61 <= len(data):
        base_offset, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if end > len(data):
            break  # torn tail
        (attributes,) = struct.unpack_from(">h", data, pos + 21)
        (count,) = struct.unpack_from(">i", data, pos + 57)
        if attributes & 0x7:
            raise ValueError(f"{path}: compressed batch at byte {pos} (KRaft never compresses)")
        control = bool(attributes & 0x20)
        rp = pos + 61
        for _ in range(count):
            _length, rp = _varint(data, rp)
            rp += 1  # attributes
            _ts, rp = _varint(data, rp)
            delta, rp = _varint(data, rp)
            klen, rp = _varint(data, rp)
            key = None if klen < 0 else data[rp : rp + klen]
            rp += max(klen, 0)
            vlen, rp = _varint(data, rp)
            value = None if vlen < 0 else data[rp : rp + vlen]
            rp += max(vlen, 0)
            headers, rp = _varint(data, rp)
            for _h in range(headers):
                hk, rp = _varint(data, rp)
                rp += hk
                hv, rp = _varint(data, rp)
                rp += max(hv, 0)
            yield base_offset + delta, control, key, value
        pos = end


def record_name(control: bool, key: bytes | None, value: bytes | None) -> str:
    """``c:LeaderChange`` for control records, ``TopicRecord`` for metadata records (names from schemas)."""
    if control:
        ctype = struct.unpack_from(">h", key or b"\0\0\xff\xff", 2)[0]
        return "c:" + CONTROL_NAMES.get(ctype, f"Unknown{ctype}")
    assert value is not None
    _frame, p = _uvarint(value, 0)
    api_key, p = _uvarint(value, p)
    try:
        from metashell.protocol.metadata import record_types

        return record_types().get(api_key, f"UnknownApiKey{api_key}")
    except ImportError:  # pragma: no cover - the project package is not installed
        return f"apiKey{api_key}"


def snapshot_end_offset(path: Path) -> int:
    return int(path.name[:20])


def inventory(fixture: Path) -> dict[str, Any]:
    """Record-type counts (log + snapshots), file list and whether a log tail follows the newest snapshot."""
    part = fixture / "__cluster_metadata-0"
    counts: Counter[str] = Counter()
    log_end = -1
    for f in sorted(part.glob("*.log")):
        for off, control, key, value in iter_records(f):
            counts[record_name(control, key, value)] += 1
            log_end = max(log_end, off + 1)
    snaps = sorted(part.glob("*.checkpoint"), key=lambda p: (snapshot_end_offset(p), p.name))
    for f in snaps:
        for _off, control, key, value in iter_records(f):
            counts[record_name(control, key, value)] += 1
    newest = snapshot_end_offset(snaps[-1]) if snaps else 0
    bootstrap = fixture / "bootstrap.checkpoint"
    boot: Counter[str] = Counter()
    if bootstrap.exists():
        for _off, control, key, value in iter_records(bootstrap):
            boot[record_name(control, key, value)] += 1
    return {
        "record_types": dict(sorted(counts.items())),
        "bootstrap_checkpoint_types": dict(sorted(boot.items())),
        "segments": len(list(part.glob("*.log"))),
        "snapshots": [p.name for p in snaps],
        "log_end_offset": log_end,
        "newest_snapshot_end_offset": newest,
        "has_log_tail_after_snapshot": log_end > newest > 0,
        "bytes": sum(p.stat().st_size for p in fixture.rglob("*") if p.is_file()),
    }


# --------------------------------------------------------------------------------------------------
# CLI


CONTROL_TYPES = (
    "c:LeaderChange",
    "c:SnapshotHeader",
    "c:SnapshotFooter",
    "c:KRaftVersion",
    "c:KRaftVoters",
    "c:Abort",
    "c:Commit",
)


def coverage_table(manifest: dict[str, dict[str, Any]]) -> str:
    """Markdown table: record type x fixture -> count (as in fixtures/README.md)."""
    from metashell.protocol.metadata import record_types

    names = sorted(manifest)
    types = [record_types()[k] for k in sorted(record_types())] + list(CONTROL_TYPES)
    lines = ["| record type | " + " | ".join(f"`{n}`" for n in names) + " |", "|---|" + "---:|" * len(names)]
    for t in types:
        cells = [str(manifest[n]["record_types"].get(t, "")) for n in names]
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def generate(scenario: Scenario, out: Path, workroot: Path, log: Log) -> dict[str, dict[str, Any]]:
    """Run one scenario, copy its nodes' metadata dirs into ``out`` and return their manifest entries."""
    dist = KafkaDist(scenario.version).ensure()
    workdir = workroot / scenario.name
    if workdir.exists():
        shutil.rmtree(workdir)
    t0 = time.monotonic()
    log(f"== {scenario.name}: Kafka {scenario.version} {scenario.mode} ({workdir})")
    try:
        cluster = scenario.run(dist, workdir, log)
    except BaseException:
        log(f"!! {scenario.name} failed; node logs are under {workdir}")
        raise
    seconds = round(time.monotonic() - t0, 1)
    entries = {}
    for fixture, node_id in scenario.outputs.items():
        node = cluster.node(node_id)
        dest = out / fixture
        copy_metadata_dir(node, dest)
        inv = inventory(dest)
        entries[fixture] = {
            "kafka_version": scenario.version,
            "mode": scenario.mode,
            "scenario": scenario.name,
            "node_id": node_id,
            "roles": list(node.roles),
            "description": scenario.description,
            "generation_seconds": seconds,
            **inv,
        }
        log(
            f"   {fixture}: {inv['bytes']} bytes, {inv['segments']} segments, {len(inv['snapshots'])} "
            f"snapshots, tail after snapshot: {inv['has_log_tail_after_snapshot']}"
        )
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", help="only scenarios of this Kafka version (3.9.2, 4.4.0)")
    parser.add_argument("--only", action="append", help="only this scenario or fixture name (repeatable)")
    parser.add_argument(
        "--out", default=str(REPO / "fixtures"), help="fixtures directory (default: fixtures/)"
    )
    parser.add_argument("--workdir", help="keep the cluster dirs (configs, server logs) here")
    parser.add_argument(
        "--summary",
        action="store_true",
        help="print the record-type coverage table of --out (from its manifest.json) and exit",
    )
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    if args.summary:
        print(coverage_table(json.loads((out / "manifest.json").read_text())))
        return 0
    chosen = [
        sc
        for sc in SCENARIOS
        if (not args.version or sc.version == args.version)
        and (not args.only or sc.name in args.only or set(sc.outputs) & set(args.only))
    ]
    if not chosen:
        names = ", ".join(sc.name for sc in SCENARIOS)
        print(f"error: no scenario matches (scenarios: {names})", file=sys.stderr)
        return 2

    def log(msg: str) -> None:
        print(msg, flush=True)

    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    tmp = None if args.workdir else tempfile.mkdtemp(prefix="metashell-fixtures-")
    workroot = Path(args.workdir or tmp).resolve()
    t0 = time.monotonic()
    try:
        for sc in chosen:  # one cluster at a time: the machine is small and shared
            manifest.update(generate(sc, out, workroot, log))
            manifest_path.write_text(json.dumps(dict(sorted(manifest.items())), indent=1) + "\n")
    except HarnessError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    log(f"done in {time.monotonic() - t0:.0f}s; manifest: {manifest_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
