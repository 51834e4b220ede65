"""One form per image object (``image/forms.py``): every field of every model class is shown by its
form or listed as omitted with a reason, and the tree, ``describe``, the TUI and Spark share it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from conftest import FIXTURES

from metashell.image import forms
from metashell.image.loader import load_directory
from metashell.image.model import Acl, DelegationToken, Endpoint, ScramCredential


def _fields(cls: type) -> set[str]:
    if dataclasses.is_dataclass(cls):
        return {f.name for f in dataclasses.fields(cls)}
    return set(getattr(cls, "__slots__", ()))


@pytest.mark.parametrize("cls", list(forms.SHOWN), ids=lambda c: c.__name__)
def test_every_field_is_shown_or_omitted_with_a_reason(cls: type) -> None:
    shown, omitted = forms.SHOWN.get(cls, {}), forms.OMITTED.get(cls, {})
    assert _fields(cls) == set(shown) | set(omitted), (
        f"{cls.__name__}: list the new field in SHOWN or OMITTED"
    )
    assert all(reason.strip() for reason in omitted.values())


def _samples() -> dict[type, dict[str, Any]]:
    image = load_directory(str(FIXTURES / "demo")).image
    broker = next(iter(image.cluster.brokers.values()))
    topic = next(iter(image.topics.by_id.values()))
    pid, partition = next(iter(topic.partitions.items()))
    endpoint = Endpoint("PLAINTEXT", "h", 9092, 0)
    return {
        type(broker): forms.broker_form(broker),
        type(partition): forms.partition_form(topic, pid, partition),
        Acl: forms.acl_form(Acl(b"\0" * 16, 2, "t", 3, "User:a", "*", 3, 3)),
        ScramCredential: forms.scram_form(ScramCredential(1, "u", b"s", b"k", b"v", 4096), True),
        DelegationToken: forms.token_form(DelegationToken("t", "User:a", "User:a", (), 1, 2, 3)),
        Endpoint: forms.listeners_form({"PLAINTEXT": endpoint})[0],
    }


def test_each_form_has_the_keys_it_says_it_shows() -> None:
    samples = _samples()
    for cls, form in samples.items():
        missing = set(forms.SHOWN[cls].values()) - set(form)
        assert not missing, (cls.__name__, missing)


def test_an_unknown_code_is_unknown_in_every_view_and_cordoned_dirs_reach_spark_and_describe() -> None:
    """The two ACL forms disagreed (``7`` in describe acl, ``UNKNOWN`` in the tree); Kafka 4.3's
    cordoned log directories reached neither ``describe broker`` nor the Spark ``brokers`` table."""
    from metashell.image.image import MetadataImage
    from metashell.image.model import BrokerRegistration
    from metashell.shell.answers import broker_lines, describe_broker
    from metashell.spark.image_rows import broker_rows

    acl = Acl(b"\0" * 16, 99, "t", 3, "User:a", "*", 99, 3)
    assert forms.acl_form(acl)["resourceType"] == "UNKNOWN" and forms.acl_form(acl)["operation"] == "UNKNOWN"
    image = MetadataImage()
    dirs = (b"\1" * 16,)
    image.cluster.brokers[1] = BrokerRegistration(
        1, 5, b"\2" * 16, {}, {}, None, False, False, False, dirs, dirs
    )
    info = describe_broker(image, 1)
    assert info["cordonedLogDirs"] == info["logDirs"] and len(info["logDirs"]) == 1
    assert any(line.startswith("\tCordoned: ") for line in broker_lines(info))
    (row,) = broker_rows(image, True)
    assert row["cordoned_log_dirs"] == info["cordonedLogDirs"]
