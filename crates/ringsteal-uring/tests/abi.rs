//! The Rust ABI in `ringsteal_uring::abi` against the kernel's own `linux/io_uring.h`.
//!
//! A C compiler builds small programs against the installed header and prints what the kernel
//! says: the value of every constant, the size and alignment of every struct, and the offset,
//! size and signedness of every field (union members included). Each is compared with the Rust
//! declaration; each Rust declaration newer than the header is listed as such, and must be in
//! the header once the header's `LINUX_VERSION_CODE` reaches the version that introduced it.
//! Run with `--nocapture` to see every item compared.
//!
//! A missing header fails the test: install `linux-libc-dev`.

#[path = "abi_check/cc.rs"]
mod cc;
#[path = "abi_check/compare.rs"]
mod compare;
#[path = "abi_check/header.rs"]
mod header;
#[path = "abi_check/rust_side.rs"]
mod rust_side;

use std::sync::OnceLock;

fn report() -> &'static compare::Report {
    static REPORT: OnceLock<compare::Report> = OnceLock::new();
    REPORT.get_or_init(|| {
        let report = compare::run();
        println!(
            "checking against {} (Linux {}.{} headers)",
            report.header.path.display(),
            report.version.0,
            report.version.1
        );
        report
    })
}

#[test]
fn every_header_constant_has_the_same_value_in_rust() {
    let r = report();
    r.constants.assert_clean("constants", &r.header, r.version);
}

#[test]
fn opcodes_below_ioring_op_last_are_exactly_the_headers_opcodes() {
    let r = report();
    r.opcodes.assert_clean("opcodes", &r.header, r.version);
}

#[test]
fn every_header_struct_has_the_same_size_and_alignment_in_rust() {
    let r = report();
    r.structs.assert_clean("structs", &r.header, r.version);
}

#[test]
fn every_header_field_and_union_member_has_the_same_offset_size_and_sign_in_rust() {
    let r = report();
    r.fields.assert_clean("fields", &r.header, r.version);
}

#[test]
fn every_rust_abi_declaration_is_covered_by_this_check() {
    let r = report();
    r.rust_coverage
        .assert_clean("declarations", &r.header, r.version);
}
