//! The `Py_3_*` cfgs of the interpreter built for (PyO3's own), so code can follow what the
//! interpreter's C structures hold (`topic_index.rs`: the dict version 3.14 dropped).
fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
