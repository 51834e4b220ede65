//! Bytes to values: a batch's records framed (`entries`), a record's value decoded or written as
//! Kafka's JSON by the decoders and writers `scripts/gen_native.py` generates from the bundled
//! schemas (`generated`), with the hand-written half of the JSON (numbers, strings, base64: `json`).

pub mod entries;
#[rustfmt::skip] // written by protocol/codegen_rust.py, compared byte for byte by its --check test
pub mod generated;
pub mod json;
