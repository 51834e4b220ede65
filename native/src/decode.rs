//! Bytes to values: a batch's records framed (`entries`), a record's value decoded or written as
//! Kafka's JSON by the decoders and writers `scripts/gen_native.py` generates from the bundled
//! schemas (`generated`), with the hand-written half of the JSON (numbers, strings, base64: `json`).
//!
//! `generated` calls `json`'s helpers; the dispatch from a record to its generated writer is here,
//! above both, so that neither module reaches back into the other.

pub mod entries;
#[rustfmt::skip] // written by protocol/codegen_rust.py, compared byte for byte by its --check test
pub mod generated;
pub mod json;

use crate::rt::{Miss, R};
use json::Caps;

/// A whole metadata record value (`01 <api key> <version> body`, both below 128, a version this
/// build knows) as its data's JSON text appended to `o`: (api key, version). Refused like any field.
pub fn record_text<'a>(value: &'a [u8], o: &mut Vec<u8>, caps: &mut Caps<'a>) -> R<(u8, u8)> {
    if value.len() < 3 || value[0] != 1 || value[1] >= 0x80 || value[2] >= 0x80 {
        return Err(Miss);
    }
    let write = generated::json_writer(value[1], value[2]).ok_or(Miss)?;
    let mut p = 3usize;
    write(value, &mut p, o, caps)?;
    if p != value.len() {
        return Err(Miss);
    }
    Ok((value[1], value[2]))
}
