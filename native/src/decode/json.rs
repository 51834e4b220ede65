//! What the generated JSON writers (`generated.rs`, `j_*`) call: Kafka's wire primitives read from a
//! record and written as JSON text, character for character as `metashell/protocol/kafka_json.py`
//! writes them (Python's `json` module with `ensure_ascii=False`: its string escapes and its float
//! `repr`).
//!
//! The readers are `rt`'s, with the same bounds. Anything Python would write differently from the
//! bytes alone is refused (`Miss`) and left to Python: a string that is not valid UTF-8 (Python
//! writes it with replacement characters), an unknown tagged field (Python keeps it out of the JSON,
//! but it makes a struct differ from its default).

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use std::io::Write;

use crate::rt::{arr, length, rd_i16, rd_i32, take, Fx, Miss, R};

/// A top-level field's value, as the key columns of the `records` table read it: an int, a string
/// (valid UTF-8), 16 uuid bytes, null, or anything else (an array, a struct, a tagged field...).
#[derive(Clone, Copy)]
pub enum Cap<'a> {
    Null,
    Int(i64),
    Str(&'a str),
    Uuid(&'a [u8]),
    Other,
}

/// The top-level fields' values of one record, by key number (`decode::generated::KEY_NAMES`).
pub struct Caps<'a> {
    on: bool,
    pub fields: Vec<(u16, Cap<'a>)>,
}

impl<'a> Caps<'a> {
    /// Caps that keep the values.
    pub fn new() -> Self {
        Caps { on: true, fields: Vec::with_capacity(16) }
    }

    /// Caps that keep nothing (nested structs, and callers that want only the text).
    pub fn none() -> Self {
        Caps { on: false, fields: Vec::new() }
    }

    #[inline]
    pub fn put(&mut self, key: usize, value: Cap<'a>) {
        if self.on {
            self.fields.push((key as u16, value));
        }
    }

    /// The value of field `key`: None when the record has no such field in its version.
    pub fn get(&self, key: u16) -> Option<Cap<'a>> {
        self.fields.iter().rev().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// A comma before every field but the first, then the field's `"name":`.
#[inline]
pub fn sep(o: &mut Vec<u8>, first: &mut bool, head: &[u8]) {
    if !*first {
        o.push(b',');
    }
    *first = false;
    o.extend_from_slice(head);
}

/// `head` then `w` put into `o` at `at` (a tagged field in its place among fields already written:
/// `o` from `at` on moves up).
pub fn insert(o: &mut Vec<u8>, at: usize, head: &[u8], w: &[u8]) {
    let end = o.len();
    let n = head.len() + w.len();
    o.resize(end + n, 0);
    o.copy_within(at..end, at + n);
    o[at..at + head.len()].copy_from_slice(head);
    o[at + head.len()..at + n].copy_from_slice(w);
}

/// An integer's decimal text (the `itoa` crate: `write!` through `core::fmt` was a tenth of a
/// records row's cost).
#[inline]
fn int_text(o: &mut Vec<u8>, v: i64) {
    o.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Python's `repr` of a float (what `json.dumps` writes), with its `NaN`, `Infinity`, `-Infinity`:
/// the shortest digits that read back as the same float, the closest to it when several are as
/// short (Ryu finds them, as Python's `repr` does by David Gay's algorithm), laid out as Python lays
/// them out (plain when the decimal point falls within 16 digits either side, else `1.5e+16` /
/// `1e-05`).
pub fn float_text(o: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        o.extend_from_slice(b"NaN");
        return;
    }
    if x.is_infinite() {
        o.extend_from_slice(if x > 0.0 { b"Infinity" } else { b"-Infinity" });
        return;
    }
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(x).as_bytes();
    let (neg, text) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    // Ryu writes `D.DDDeX`, `DDD.DDD` or `0.000DDD`: the significant digits and where the decimal
    // point falls (the value is 0.DIGITS x 10^decpt).
    let (mantissa, exp) = match text.iter().position(|c| *c == b'e' || *c == b'E') {
        Some(i) => {
            (&text[..i], std::str::from_utf8(&text[i + 1..]).ok().and_then(|e| e.parse::<i32>().ok()).unwrap_or(0))
        }
        None => (text, 0),
    };
    let point = mantissa.iter().position(|c| *c == b'.').unwrap_or(mantissa.len()) as i32;
    let all: Vec<u8> = mantissa.iter().copied().filter(|c| *c != b'.').collect();
    let lead = all.iter().take_while(|c| **c == b'0').count();
    let mut digits: Vec<u8> = all[lead..].to_vec();
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    if neg {
        o.push(b'-');
    }
    if digits.is_empty() {
        o.extend_from_slice(b"0.0"); // a zero
        return;
    }
    let decpt = point + exp - lead as i32;
    if -4 < decpt && decpt <= 16 {
        if decpt <= 0 {
            o.extend_from_slice(b"0.");
            o.extend(std::iter::repeat_n(b'0', (-decpt) as usize));
            o.extend_from_slice(&digits);
        } else if decpt as usize >= digits.len() {
            o.extend_from_slice(&digits);
            o.extend(std::iter::repeat_n(b'0', decpt as usize - digits.len()));
            o.extend_from_slice(b".0");
        } else {
            o.extend_from_slice(&digits[..decpt as usize]);
            o.push(b'.');
            o.extend_from_slice(&digits[decpt as usize..]);
        }
    } else {
        o.push(digits[0]);
        if digits.len() > 1 {
            o.push(b'.');
            o.extend_from_slice(&digits[1..]);
        }
        let e = decpt - 1;
        let _ = write!(o, "e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
}

/// A JSON string as Python's `json.encoder.encode_basestring` writes it: `"` and `\` escaped, the
/// five short escapes, other control characters as `\u00XX`, everything else as it is.
pub fn string_text(o: &mut Vec<u8>, s: &str) {
    o.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &c) in bytes.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        o.extend_from_slice(&bytes[start..i]);
        if esc.is_empty() {
            let _ = write!(o, "\\u{:04x}", c);
        } else {
            o.extend_from_slice(esc);
        }
        start = i + 1;
    }
    o.extend_from_slice(&bytes[start..]);
    o.push(b'"');
}

/// Kafka's text of a uuid: URL-safe base64 without padding (`protocol/uuid.py`).
pub fn uuid_text(o: &mut Vec<u8>, raw: &[u8]) {
    let mut buf = [0u8; 24];
    let n = URL_SAFE_NO_PAD.encode_slice(raw, &mut buf).unwrap_or(0);
    o.extend_from_slice(&buf[..n]);
}

/// One fixed-size value.
#[inline]
pub fn j_fixed<'a>(b: &'a [u8], p: &mut usize, t: Fx, o: &mut Vec<u8>) -> R<Cap<'a>> {
    let v = match t {
        Fx::Bool => {
            o.extend_from_slice(if arr::<1>(b, p)?[0] != 0 { b"true" } else { b"false" });
            return Ok(Cap::Other);
        }
        Fx::F64 => {
            float_text(o, f64::from_be_bytes(arr(b, p)?));
            return Ok(Cap::Other);
        }
        Fx::Uuid => {
            let s = take(b, p, 16)?;
            o.push(b'"');
            uuid_text(o, s);
            o.push(b'"');
            return Ok(Cap::Uuid(s));
        }
        Fx::I8 => i8::from_be_bytes(arr(b, p)?) as i64,
        Fx::I16 => rd_i16(b, p)?,
        Fx::U16 => u16::from_be_bytes(arr(b, p)?) as i64,
        Fx::I32 => rd_i32(b, p)?,
        Fx::U32 => u32::from_be_bytes(arr(b, p)?) as i64,
        Fx::I64 => i64::from_be_bytes(arr(b, p)?),
    };
    int_text(o, v);
    Ok(Cap::Int(v))
}

/// Null where the field may be null; else the record is refused.
#[inline]
fn null<'a>(nullable: bool, o: &mut Vec<u8>) -> R<Cap<'a>> {
    if !nullable {
        return Err(Miss);
    }
    o.extend_from_slice(b"null");
    Ok(Cap::Null)
}

/// A string; refused when it is not valid UTF-8 (Python writes it with replacement characters).
pub fn j_string<'a>(b: &'a [u8], p: &mut usize, flex: bool, nullable: bool, o: &mut Vec<u8>) -> R<Cap<'a>> {
    let n = length(b, p, flex, true)?;
    if n < 0 {
        return null(nullable, o);
    }
    let s = std::str::from_utf8(take(b, p, n as usize)?).map_err(|_| Miss)?;
    string_text(o, s);
    Ok(Cap::Str(s))
}

/// A bytes (or records) field, in standard base64.
pub fn j_bytes(b: &[u8], p: &mut usize, flex: bool, nullable: bool, o: &mut Vec<u8>) -> R<()> {
    let n = length(b, p, flex, false)?;
    if n < 0 {
        return null(nullable, o).map(|_| ());
    }
    let raw = take(b, p, n as usize)?;
    o.push(b'"');
    let start = o.len();
    o.resize(start + raw.len().div_ceil(3) * 4, 0);
    let written = STANDARD.encode_slice(raw, &mut o[start..]).map_err(|_| Miss)?;
    o.truncate(start + written);
    o.push(b'"');
    Ok(())
}

/// An array of fixed-size values (`rt::num_array`'s bounds).
pub fn j_fixed_array<'a>(b: &'a [u8], p: &mut usize, t: Fx, flex: bool, nullable: bool, o: &mut Vec<u8>) -> R<Cap<'a>> {
    let n = length(b, p, flex, false)?;
    if n < 0 {
        return null(nullable, o);
    }
    let need = (n as usize).checked_mul(t.size()).ok_or(Miss)?;
    if need > b.len().saturating_sub(*p) {
        return Err(Miss);
    }
    o.push(b'[');
    for i in 0..n as usize {
        if i > 0 {
            o.push(b',');
        }
        j_fixed(b, p, t, o)?;
    }
    o.push(b']');
    Ok(Cap::Other)
}

/// Writes one item of an array or struct as JSON (the generated writers pass one per field type).
pub type JsonItem<'a> = dyn Fn(&'a [u8], &mut usize, &mut Vec<u8>) -> R<()>;

/// An array of strings, bytes or structs (`rt::list`'s bounds).
pub fn j_list<'a>(
    b: &'a [u8],
    p: &mut usize,
    flex: bool,
    nullable: bool,
    o: &mut Vec<u8>,
    item: &JsonItem<'a>,
) -> R<Cap<'a>> {
    let n = length(b, p, flex, false)?;
    if n < 0 {
        return null(nullable, o);
    }
    if n as u64 > b.len().saturating_sub(*p) as u64 {
        return Err(Miss);
    }
    o.push(b'[');
    for i in 0..n as usize {
        if i > 0 {
            o.push(b',');
        }
        item(b, p, o)?;
    }
    o.push(b']');
    Ok(Cap::Other)
}

/// A struct field, nullable ones behind their marker byte (`rt::nullable_struct`).
#[allow(dead_code)] // no bundled metadata schema has a struct field outside an array today
pub fn j_struct<'a>(b: &'a [u8], p: &mut usize, nullable: bool, o: &mut Vec<u8>, item: &JsonItem<'a>) -> R<Cap<'a>> {
    if nullable {
        let marker = *b.get(*p).ok_or(Miss)?;
        *p += 1;
        if marker == 255 {
            o.extend_from_slice(b"null");
            return Ok(Cap::Null);
        }
    }
    item(b, p, o)?;
    Ok(Cap::Other)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(write: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut o = Vec::new();
        write(&mut o);
        String::from_utf8(o).expect("the writers write UTF-8")
    }

    /// `json.dumps(x)` (Python's `repr`) of each float, as CPython 3.11 writes them: where the
    /// layout turns from plain to exponent on both sides, the shortest round-trip digits, the
    /// extremes and the non-finite words.
    #[test]
    fn floats_are_written_as_python_writes_them() {
        let cases: [(f64, &str); 21] = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (0.30000000000000004, "0.30000000000000004"),
            (100.0, "100.0"),
            (12345.678, "12345.678"),
            (1e15, "1000000000000000.0"),
            (1234567890123456.7, "1234567890123456.8"),
            (9007199254740993.0, "9007199254740992.0"),
            (1e16, "1e+16"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.0001, "0.0001"),
            (1e-05, "1e-05"),
            (2.5e-05, "2.5e-05"),
            (-3.25e-7, "-3.25e-07"),
            (5e-324, "5e-324"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (x, want) in cases {
            assert_eq!(text(|o| float_text(o, x)), want, "{x:e}");
        }
    }

    /// `json.dumps(s, ensure_ascii=False)`: quotes, backslashes and control characters escaped,
    /// everything else (DEL, non-ASCII, U+2028) as it is.
    #[test]
    fn strings_are_escaped_as_python_json_escapes_them() {
        let s = "a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f} é€ \u{2028}";
        let want = "\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001f\u{7f} é€ \u{2028}\"";
        assert_eq!(text(|o| string_text(o, s)), want);
        assert_eq!(text(|o| string_text(o, "")), "\"\"");
    }

    /// Kafka's `Uuid.toString`: URL-safe base64, no padding (22 characters).
    #[test]
    fn uuids_are_written_as_kafka_writes_them() {
        let raw: Vec<u8> = (0..16).collect();
        assert_eq!(text(|o| uuid_text(o, &raw)), "AAECAwQFBgcICQoLDA0ODw");
        let high = [0xfb, 0xff].repeat(8);
        assert_eq!(text(|o| uuid_text(o, &high)), "-__7__v_-__7__v_-__7_w");
    }

    #[test]
    fn a_field_is_inserted_where_it_stands() {
        let mut o = b"{\"a\":1,\"c\":3}".to_vec();
        insert(&mut o, 6, b",\"b\":", b"2");
        assert_eq!(o, b"{\"a\":1,\"b\":2,\"c\":3}");
        let end = o.len() - 1;
        insert(&mut o, end, b",\"d\":", b"[]");
        assert_eq!(o, b"{\"a\":1,\"b\":2,\"c\":3,\"d\":[]}");
    }

    #[test]
    fn ints_keep_their_extremes() {
        assert_eq!(text(|o| int_text(o, i64::MIN)), "-9223372036854775808");
        assert_eq!(text(|o| int_text(o, i64::MAX)), "9223372036854775807");
        assert_eq!(text(|o| int_text(o, 0)), "0");
    }
}
