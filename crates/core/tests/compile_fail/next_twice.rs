// A waterfall listener may delegate at most once: `Next::run` consumes `next`.
use tack_core::hook::Waterfall;

fn main() {
    let hook: Waterfall<u32, u32> = Waterfall::new("demo", |x| async move { x });
    let _d = hook.tap("twice", |x, next| async move {
        let a = next.run(x).await;
        let b = next.run(x).await;
        a + b
    });
}
