use super::*;

#[test]
fn dump() {
    for c in std::env::var("DUMP").unwrap_or_default().split(";;") {
        if c.is_empty() { continue; }
        let p = PreparedCommand::new(c);
        eprintln!("== {c:?}\n  unread={:?} dyn={:?} blocked={}", p.unread, p.dynamic, p.allow_blocked);
        for s in &p.commands {
            eprintln!("  literal={:?}", s.literal);
            for v in &s.views { eprintln!("    view {:?} more={}", v.words, v.more); }
        }
    }
}
