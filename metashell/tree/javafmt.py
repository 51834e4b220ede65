"""Java's text forms that Kafka's shell prints: ``Double.toString`` and ``ZonedDateTime.toString``.

``Double.toString`` changed in JDK 19 (JDK-4511638): JDK 17/18 (``FloatingDecimal``) sometimes prints
more digits than needed (``2^60`` -> ``1.15292150460684698E18``), JDK 19+ prints the shortest
decimal that rounds back (``1.152921504606847E18``).  Kafka 4.x runs on JDK 17+, so which one the
Java shell prints depends on the JVM; :data:`LEGACY_DOUBLE_TO_STRING` picks metashell's default
(JDK 17, the oracle's JVM and the JVM most Kafka 4.x installations run on), and every function takes
an explicit ``legacy=`` to override it.  The legacy algorithm below is a line-by-line port of
``jdk.internal.math.FloatingDecimal.BinaryToASCIIBuffer.dtoa``, including its int/long overflow
behaviour, and is checked against a JVM on random doubles in tests/test_tree_javafmt.py.
"""

from __future__ import annotations

import math
import os
import struct

from metashell.times import utc_fields

LEGACY_DOUBLE_TO_STRING = os.environ.get("METASHELL_JAVA_DOUBLE", "17") not in ("19", "21", "25", "shortest")
"""Default for :func:`java_double_to_string`: True = JDK 17/18 digits, False = JDK 19+ (shortest).
Set ``METASHELL_JAVA_DOUBLE=21`` to match a shell running on a newer JVM."""

_EXP_SHIFT = 52
_FRACT_HOB = 1 << _EXP_SHIFT
_SIGNIF_MASK = (1 << 52) - 1
_MAX_SMALL_BIN_EXP = 62
_MIN_SMALL_BIN_EXP = -(63 // 3)
_N_5_BITS = (
    0,
    3,
    5,
    7,
    10,
    12,
    14,
    17,
    19,
    21,
    24,
    26,
    28,
    31,
    33,
    35,
    38,
    40,
    42,
    45,
    47,
    49,
    52,
    54,
    56,
    59,
    61,
)
_INSIGNIFICANT_DIGITS_NUMBER = (
    0,
    0,
    0,
    0,
    1,
    1,
    1,
    2,
    2,
    2,
    3,
    3,
    3,
    3,
    4,
    4,
    4,
    5,
    5,
    5,
    6,
    6,
    6,
    6,
    7,
    7,
    7,
    8,
    8,
    8,
    9,
    9,
    9,
    9,
    10,
    10,
    10,
    11,
    11,
    11,
    12,
    12,
    12,
    12,
    13,
    13,
    13,
    14,
    14,
    14,
    15,
    15,
    15,
    15,
    16,
    16,
    16,
    17,
    17,
    17,
    18,
    18,
    18,
    19,
)


def _i32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _i64(v: int) -> int:
    v &= 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v & 0x8000000000000000 else v


def _jdiv(a: int, b: int) -> int:
    """Java integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _jmod(a: int, b: int) -> int:
    return a - _jdiv(a, b) * b


def _bits_to_double(bits: int) -> float:
    value: float = struct.unpack(">d", struct.pack(">q", _i64(bits)))[0]
    return value


def _double_bits(d: float) -> int:
    bits: int = struct.unpack(">q", struct.pack(">d", d))[0]
    return bits


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    d2 = _bits_to_double((0x3FF << 52) | (fract_bits & _SIGNIF_MASK))
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + float(bin_exp) * 0.301029995663981
    d_bits = _double_bits(d) & 0xFFFFFFFFFFFFFFFF
    exponent = ((d_bits >> 52) & 0x7FF) - 1023
    negative = bool(d_bits >> 63)
    if 0 <= exponent < 52:
        mask = _SIGNIF_MASK >> exponent
        r = ((d_bits & _SIGNIF_MASK) | _FRACT_HOB) >> (_EXP_SHIFT - exponent)
        if negative:
            return -r if (mask & d_bits) == 0 else -r - 1
        return r
    if exponent < 0:
        return 0 if (d_bits & ~(1 << 63)) == 0 else (-1 if negative else 0)
    return int(d)


def _insignificant_for_pow2(p2: int) -> int:
    if 1 < p2 < len(_INSIGNIFICANT_DIGITS_NUMBER):
        return _INSIGNIFICANT_DIGITS_NUMBER[p2]
    return 0


def _develop_long_digits(dec_exponent: int, lvalue: int, insignificant: int) -> tuple[list[int], int]:
    if insignificant != 0:
        pow10 = 10**insignificant
        residue = lvalue % pow10
        lvalue //= pow10
        dec_exponent += insignificant
        if residue >= (pow10 >> 1):
            lvalue += 1
    digits: list[int] = []
    c = lvalue % 10
    lvalue //= 10
    while c == 0:
        dec_exponent += 1
        c = lvalue % 10
        lvalue //= 10
    while lvalue != 0:
        digits.append(c)
        dec_exponent += 1
        c = lvalue % 10
        lvalue //= 10
    digits.append(c)
    digits.reverse()
    return digits, dec_exponent + 1


def _roundup(digits: list[int], dec_exponent: int) -> int:
    i = len(digits) - 1
    q = digits[i]
    if q == 9:
        while q == 9 and i > 0:
            digits[i] = 0
            i -= 1
            q = digits[i]
        if q == 9:
            digits[0] = 1
            return dec_exponent + 1
    digits[i] = q + 1
    return dec_exponent


def _dtoa(bin_exp: int, fract_bits: int, n_significant_bits: int) -> tuple[list[int], int]:
    """(digits, decExponent) exactly as FloatingDecimal computes them (isCompatibleFormat=true)."""
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = _EXP_SHIFT + 1 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    # The "easy" case: an integer that fits in a long (nTinyBits == 0 within the small exponents).
    if (
        _MIN_SMALL_BIN_EXP <= bin_exp <= _MAX_SMALL_BIN_EXP
        and n_tiny_bits == 0
        and n_fract_bits + _N_5_BITS[0] < 64
    ):
        insignificant = (
            _insignificant_for_pow2(bin_exp - n_significant_bits - 1) if bin_exp > n_significant_bits else 0
        )
        if bin_exp >= _EXP_SHIFT:
            fract_bits <<= bin_exp - _EXP_SHIFT
        else:
            fract_bits >>= _EXP_SHIFT - bin_exp
        return _develop_long_digits(0, fract_bits, insignificant)

    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m5 = b5
    m2 = b2 - n_significant_bits

    fract_bits >>= tail_zeros
    b2 -= n_fract_bits - 1
    common2 = min(b2, s2)
    b2 -= common2
    s2 -= common2
    m2 -= common2
    if n_fract_bits == 1:
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0

    digits: list[int] = []
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)

    if b_bits < 64 and ten_s_bits < 64:
        # int (32-bit) or long (64-bit) arithmetic, with Java's wrap-around.
        wrap = _i32 if (b_bits < 32 and ten_s_bits < 32) else _i64
        b = wrap(wrap(wrap(fract_bits) * 5**b5) << b2)
        s = wrap(5**s5 << s2)
        m = wrap(5**m5 << m2)
        tens = wrap(s * 10)
        q = _jdiv(b, s)
        b = wrap(10 * _jmod(b, s))
        m = wrap(m * 10)
        low = b < m
        high = wrap(b + m) > tens
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:
            high = low = False
        while not low and not high:
            q = _jdiv(b, s)
            b = wrap(10 * _jmod(b, s))
            m = wrap(m * 10)
            if m > 0:
                low = b < m
                high = wrap(b + m) > tens
            else:
                low = high = True
            digits.append(q)
        low_digit_difference = wrap(wrap(b << 1) - tens)
    else:
        # FDBigInteger arithmetic: exact.  Note the non-strict "high" test of this branch.
        S = 5**s5 << s2
        B = fract_bits * 5**b5 << b2
        M = 5 ** (m5 + 1) << (m2 + 1)
        tenS = 5 ** (s5 + 1) << (s2 + 1)
        q, r = divmod(B, S)
        B = 10 * r
        low = B < M
        high = tenS <= B + M
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:
            high = low = False
        while not low and not high:
            q, r = divmod(B, S)
            B = 10 * r
            M *= 10
            low = B < M
            high = tenS <= B + M
            digits.append(q)
        low_digit_difference = ((B << 1) - tenS) if (high and low) else 0

    dec_exponent = dec_exp + 1
    if high:
        if low:
            if low_digit_difference == 0:
                if digits[-1] & 1:
                    dec_exponent = _roundup(digits, dec_exponent)
            elif low_digit_difference > 0:
                dec_exponent = _roundup(digits, dec_exponent)
        else:
            dec_exponent = _roundup(digits, dec_exponent)
    return digits, dec_exponent


def _shortest_digits(x: float) -> tuple[list[int], int]:
    """Shortest round-trip digits of ``x > 0`` (JDK 19+ ``Double.toString`` picks the same digits as
    Python's ``repr``: the shortest, closest to the exact value) as (digits, decimal exponent)."""
    mantissa, _, exp = f"{x!r}".lower().partition("e")
    e10 = int(exp) if exp else 0
    int_part, _, frac = mantissa.partition(".")
    raw = int_part + frac
    stripped = raw.lstrip("0")
    dec_exponent = len(int_part) - (len(raw) - len(stripped)) + e10
    digits = [int(c) for c in (stripped.rstrip("0") or "0")]
    if len(digits) == 1:
        # Java renders at least two significant digits ("d.d") and picks, among the 2-digit
        # decimals that round back to x, the one closest to x's exact value (4.9E-324, not 5.0E-324).
        from fractions import Fraction  # rare (one significant digit): imported when needed

        exact = Fraction(x)
        e = dec_exponent - 1
        if exact < Fraction(10) ** e:
            e -= 1  # the exact value lies in the decade below the rounded digit
        scale = Fraction(10) ** (e - 1)
        candidate = round(exact / scale)
        if candidate == 100:
            candidate, e, scale = 10, e + 1, scale * 10
        if float(candidate * scale) == x:
            digits = [candidate // 10] + ([candidate % 10] if candidate % 10 else [])
            dec_exponent = e + 1
    return digits, dec_exponent


def java_double_to_string(x: float, legacy: bool | None = None) -> str:
    """Java's ``Double.toString(x)``: ``2048.0``, ``1.0E7``, ``1.0E-4``, ``NaN``, ``-Infinity``."""
    if legacy is None:
        legacy = LEGACY_DOUBLE_TO_STRING
    if math.isnan(x):
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    bits = _double_bits(x)
    negative = bits < 0
    if x == 0.0:
        return "-0.0" if negative else "0.0"
    if legacy:
        ubits = bits & 0xFFFFFFFFFFFFFFFF
        fract_bits = ubits & _SIGNIF_MASK
        bin_exp = (ubits >> 52) & 0x7FF
        if bin_exp == 0:
            leading_zeros = 64 - fract_bits.bit_length()
            shift = leading_zeros - (63 - _EXP_SHIFT)
            fract_bits <<= shift
            bin_exp = 1 - shift
            n_significant_bits = 64 - leading_zeros
        else:
            fract_bits |= _FRACT_HOB
            n_significant_bits = _EXP_SHIFT + 1
        bin_exp -= 1023
        digits, dec_exponent = _dtoa(bin_exp, fract_bits, n_significant_bits)
    else:
        digits, dec_exponent = _shortest_digits(abs(x))
    return ("-" if negative else "") + _java_layout(digits, dec_exponent)


def _java_layout(digits: list[int], dec_exponent: int) -> str:
    """``BinaryToASCIIBuffer.getChars``: plain for 1e-3 <= |x| < 1e7, else ``d.dddE<exp>``."""
    ds = "".join(map(str, digits))
    n = len(ds)
    if 0 < dec_exponent < 8:
        k = min(n, dec_exponent)
        if k < dec_exponent:
            return ds[:k] + "0" * (dec_exponent - k) + ".0"
        return ds[:k] + "." + (ds[k:] if k < n else "0")
    if -3 < dec_exponent <= 0:
        return "0." + "0" * (-dec_exponent) + ds
    e = dec_exponent - 1
    return ds[0] + "." + (ds[1:] if n > 1 else "0") + "E" + str(e)


# --------------------------------------------------------------------------------------------
# ZonedDateTime in UTC, as Kafka's ProvenanceNode prints it


def java_utc_zoned(epoch_ms: int) -> str:
    """What Kafka's ``ProvenanceNode`` prints for a timestamp:
    ``DateTimeFormatter.ISO_ZONED_DATE_TIME.format(Instant.ofEpochMilli(ms).atZone(ZoneId.of("UTC")))``.

    Seconds are always printed; the fraction uses the minimum number of digits and is omitted when
    zero (``22:13:22Z[UTC]``, ``22:13:26.5Z[UTC]``, ``22:13:26.12Z[UTC]``); years beyond 9999 get a
    ``+`` sign, negative years a ``-`` (``-1`` ms is ``1969-12-31T23:59:59.999Z[UTC]``).
    """
    year, mo, d, hh, mm, ss, ms = utc_fields(epoch_ms)
    frac = ""
    if ms:
        frac = "." + f"{ms:03d}".rstrip("0")
    return f"{year}-{mo:02d}-{d:02d}T{hh:02d}:{mm:02d}:{ss:02d}{frac}Z[UTC]"
