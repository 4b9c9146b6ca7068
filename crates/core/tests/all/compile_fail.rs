//! API guarantees that are types: checked by trybuild.

#[test]
fn api_guarantees_hold_at_compile_time() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
    // These compile without a warning and run their own assertions.
    t.pass("tests/compile_pass/*.rs");
}
