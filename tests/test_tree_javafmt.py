"""Java's Double.toString (JDK 17 and JDK 19+ flavours) and Kafka's provenance time format."""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from metashell.tree.javafmt import java_double_to_string, java_utc_zoned

# (value, JDK 17 text, JDK 19+ text) -- the JDK 17 column was printed by Kafka 4.4's shell on JDK 17
VECTORS = [
    (2048.0, "2048.0", "2048.0"),
    (1e7, "1.0E7", "1.0E7"),
    (1e-4, "1.0E-4", "1.0E-4"),
    (0.1, "0.1", "0.1"),
    (123456789.0, "1.23456789E8", "1.23456789E8"),
    (0.001, "0.001", "0.001"),
    (9999999.0, "9999999.0", "9999999.0"),
    (1 / 3, "0.3333333333333333", "0.3333333333333333"),
    (-0.0, "-0.0", "-0.0"),
    (0.0, "0.0", "0.0"),
    (1e21, "1.0E21", "1.0E21"),
    (5e-324, "4.9E-324", "4.9E-324"),
    (1e-323, "1.0E-323", "9.9E-324"),
    (1.7976931348623157e308, "1.7976931348623157E308", "1.7976931348623157E308"),
    (100.5, "100.5", "100.5"),
    (12345.678, "12345.678", "12345.678"),
    (2e-3, "0.002", "0.002"),
    (1e7 - 0.5, "9999999.5", "9999999.5"),
    (2.0**60, "1.15292150460684698E18", "1.152921504606847E18"),
    (-1048576.0, "-1048576.0", "-1048576.0"),
    (float("nan"), "NaN", "NaN"),
    (float("inf"), "Infinity", "Infinity"),
    (float("-inf"), "-Infinity", "-Infinity"),
    (1e23, "9.999999999999999E22", "1.0E23"),
    (2e23, "1.9999999999999998E23", "2.0E23"),
]


@pytest.mark.parametrize("value,jdk17,jdk19", VECTORS)
def test_double_to_string(value: float, jdk17: str, jdk19: str) -> None:
    assert java_double_to_string(value, legacy=True) == jdk17
    assert java_double_to_string(value, legacy=False) == jdk19


@pytest.mark.parametrize(
    "ms,text",
    [
        (1700000002000, "2023-11-14T22:13:22Z[UTC]"),
        (1700000006500, "2023-11-14T22:13:26.5Z[UTC]"),
        (1700000000120, "2023-11-14T22:13:20.12Z[UTC]"),
        (1700000000123, "2023-11-14T22:13:20.123Z[UTC]"),
        (-1, "1969-12-31T23:59:59.999Z[UTC]"),
        (0, "1970-01-01T00:00:00Z[UTC]"),
        (253402300800000, "+10000-01-01T00:00:00Z[UTC]"),
        (-62167219200001, "-0001-12-31T23:59:59.999Z[UTC]"),
    ],
)
def test_zoned_utc(ms: int, text: str) -> None:
    assert java_utc_zoned(ms) == text


JAVA_SRC = """
import java.io.*;
public class D {
    public static void main(String[] a) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        String line;
        while ((line = r.readLine()) != null) {
            out.append(Double.toString(Double.longBitsToDouble(Long.parseLong(line.trim())))).append('\\n');
        }
        System.out.print(out);
    }
}
"""


def _random_doubles(n: int, seed: int) -> list[int]:
    rnd = random.Random(seed)
    bits = []
    for _ in range(n):
        k = rnd.random()
        if k < 0.4:
            b = rnd.getrandbits(64)
        elif k < 0.7:
            b = struct.unpack(">Q", struct.pack(">d", round(rnd.uniform(0, 1e8), rnd.randint(0, 6))))[0]
        else:
            b = struct.unpack(
                ">Q", struct.pack(">d", 2.0 ** rnd.randint(-1074, 1023) * rnd.choice([1, 3, 1.5]))
            )[0]
        bits.append(b - (1 << 64) if b >= 1 << 63 else b)
    return bits


def test_double_to_string_against_the_jvm(tmp_path: Path) -> None:
    """Random doubles through the local JVM's Double.toString (skips without Java)."""
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    version = subprocess.run([java, "-version"], check=False, capture_output=True, text=True).stderr
    legacy = any(f'version "{v}' in version for v in ("17", "18", "11", "1.8"))
    src = tmp_path / "D.java"
    src.write_text(JAVA_SRC)
    bits = _random_doubles(5000, 42)
    out = subprocess.run(
        [java, str(src)],
        check=False,
        input="\n".join(map(str, bits)) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout.splitlines()
    assert len(out) == len(bits)
    bad = [
        (b, j)
        for b, j in zip(bits, out, strict=True)
        if java_double_to_string(struct.unpack(">d", struct.pack(">q", b))[0], legacy=legacy) != j
    ]
    assert not bad, bad[:5]
