//! A directory's bytes into the image: runs of plain batches applied straight from a segment's
//! bytes (`batches`, the loader's bulk path), and the deltas of a lone `--snapshot` file as Kafka's
//! file mode keeps them (`file_deltas`).

pub mod batches;
pub mod file_deltas;
