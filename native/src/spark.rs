//! The Spark `records` table's rows made natively (`records_table`), handed to pyarrow as buffers
//! that own their memory (`buffer`).

pub mod buffer;
pub mod records_table;
