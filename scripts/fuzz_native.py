#!/usr/bin/env python3
"""A fuzz campaign through the binding: the native core against the pure-Python engine on damaged
real records, random record bodies, damaged real control records and damaged records areas,
counting disagreements and crashes.

    python scripts/fuzz_native.py --cases 1000000 [--seed 1]

Each case is decoded by both engines, by the native raw decoders the replay loop reads, and written
as Kafka's JSON by the native writers the Spark ``records`` table uses (as
``tests/test_native_differential.py`` does, which runs a few thousand through hypothesis); a disagreement or any exception other than a record error is
printed with its bytes and counted.  The last line is the summary the closing notes quote.  A panic
in Rust would reach Python as ``pyo3_runtime.PanicException`` and count as a crash; an abort would
end the process, so the summary line would be missing.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_native_differential import (
    _damaged,
    entries_outcome,
    json_agrees,
    native_entries,
    python_control,
    python_value,
    raw_agrees,
    schema_control_values,
    typed,
)

from metashell.log.files import iter_file_batches
from metashell.log.records import decode_entries_python


def _seeds(
    roots: list[Path],
) -> tuple[list[bytes], list[tuple[bytes, int, int]], list[tuple[int, bytes]]]:
    """Real record values, records areas (area bytes, record count, base offset) and control
    records (type, value) to damage."""
    values: list[bytes] = []
    areas: list[tuple[bytes, int, int]] = []
    controls: list[tuple[int, bytes]] = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".log", ".checkpoint") or not path.is_file():
                continue
            for batch in iter_file_batches(path, lenient_tail=True, warn=lambda _w: None):
                data, start, end, _c = batch._records_area()
                if end - start <= 4096:
                    areas.append((bytes(data[start:end]), batch.records_count, batch.base_offset))
                if not batch.is_control:
                    values += [v for _o, _t, _k, v in batch.entries() if v is not None]
                    continue
                controls += schema_control_values(batch)
    return values, areas, controls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from metashell import _native  # type: ignore[attr-defined]

    rng = random.Random(args.seed)
    roots = [ROOT / "fixtures", ROOT.parent / "shared" / "corpus"]
    values, areas, controls = _seeds([r for r in roots if r.is_dir()])
    values = list(dict.fromkeys(values))
    controls = list(dict.fromkeys(controls))
    decode_native = native_entries(_native)
    counts = {"value": 0, "body": 0, "control": 0, "area": 0}
    disagreements = crashes = taken = 0
    t0 = time.perf_counter()
    for i in range(args.cases):
        kind = ("value", "value", "body", "area", "value", "control", "body", "area")[i % 8]
        counts[kind] += 1
        try:
            if kind in ("value", "body"):
                if kind == "value":
                    edits = [
                        (rng.randrange(4), rng.randrange(1 << 16), rng.randrange(256))
                        for _ in range(rng.randrange(1, 4))
                    ]
                    value = _damaged(rng.choice(values), edits)
                else:
                    value = bytes([1, rng.randrange(32), rng.randrange(6)]) + rng.randbytes(rng.randrange(64))
                want, got = python_value(value), _native.decode_value(value)
                taken += want is not None
                if (
                    typed(got and tuple(got)) != typed(want)
                    or not raw_agrees(_native, value, want)
                    or not json_agrees(_native, value, must_take=False)
                ):
                    disagreements += 1
                    print(f"value disagreement: {value.hex()}", flush=True)
            elif kind == "control":
                ctype, value = rng.choice(controls)
                edits = [
                    (rng.randrange(4), rng.randrange(1 << 16), rng.randrange(256))
                    for _ in range(rng.randrange(0, 4))
                ]
                value = _damaged(value, edits) + rng.randbytes(rng.randrange(3))
                if typed(_native.decode_control_value(ctype, value)) != typed(python_control(ctype, value)):
                    disagreements += 1
                    print(f"control disagreement: type {ctype} {value.hex()}", flush=True)
            else:
                area, count, base = rng.choice(areas)
                edits = [
                    (rng.randrange(4), rng.randrange(1 << 16), rng.randrange(256))
                    for _ in range(rng.randrange(0, 4))
                ]
                damaged = _damaged(area, edits)
                data = rng.randbytes(rng.randrange(4)) + damaged + rng.randbytes(rng.randrange(4))
                pos = data.find(damaged)
                end, count = pos + len(damaged), count + rng.choice((0, 0, 0, -1, 1))
                args_ = (data, pos, end, max(count, 0), base, base)
                if entries_outcome(decode_entries_python, *args_) != entries_outcome(decode_native, *args_):
                    disagreements += 1
                    print(f"records-area disagreement: {data.hex()} count={count}", flush=True)
        except Exception as e:  # noqa: BLE001 - a crash is what this counts
            crashes += 1
            print(f"crash ({type(e).__name__}: {e}) on case {i}", flush=True)
    took = time.perf_counter() - t0
    print(
        f"fuzz_native: {args.cases:,} cases ({counts['value']:,} damaged real records, {taken:,} of them and "
        f"of the random bodies still decodable; {counts['body']:,} random record bodies; {counts['area']:,} "
        f"damaged records areas; {counts['control']:,} damaged control records) from {len(values):,} real "
        f"records, {len(controls):,} real control records and {len(areas):,} real batches, seed "
        f"{args.seed}, {took:.0f} s: disagreements {disagreements}, crashes {crashes}"
    )
    return 1 if disagreements or crashes else 0


if __name__ == "__main__":
    sys.exit(main())
