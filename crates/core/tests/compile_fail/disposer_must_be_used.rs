// Outside a plugin, a registration returns a `Disposer` that undoes it on
// drop, so ignoring it is an error under `deny(unused_must_use)`.
#![deny(unused_must_use)]
use tack_core::hooks::ToolHooks;

fn main() {
    let hooks = ToolHooks::new();
    hooks.pre_execute().tap("gate", |exec, next| next.run(exec));
}
