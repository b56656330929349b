//! Misuse of `#[ringsteal::main]` and `#[ringsteal::test]` is a compile error that points at
//! the offending token and says what is allowed: each file in `ui/` must fail to compile with
//! exactly the message beside it (`.stderr`). Regenerate after an intended change with
//! `TRYBUILD=overwrite cargo test -p ringsteal-macros --test compile_fail` and read the diff.

#[test]
fn misuse_fails_to_compile_with_a_message_that_says_what_is_allowed() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
