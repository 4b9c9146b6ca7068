//! The code-mode example: the model is shown `run_code` only, and every tool
//! call the program makes passes the pre-execute gate, which denies one.

use crate::support;

#[test]
fn every_sub_call_meets_the_gate_and_a_denial_reaches_the_program() {
    let run = support::run_example("code_mode", &[], None);
    let expected = r#"the model sees ["run_code"]; the SDK declares:
  list_orders(args: { [key: string]: unknown }): Promise<{ [key: string]: unknown }>;
  refund(args: { amount: number; id: string }): Promise<{ [key: string]: unknown }>;
gate: c1 run_code
gate: c1:code:1 list_orders
gate: c1:code:2 refund
gate: c1:code:3 refund
gate: c1:code:4 refund
run_code -> B2 not refunded: DENIED (refunds over 100 need a person)
{
  "refunded": [
    "A1",
    "C3"
  ]
}
"#;
    assert_eq!(run.stdout, expected);
}
