//! Ordering by name: a listener placed before or after other listeners.

use std::sync::Arc;

/// Where a listener goes in its hook point's chain: a rank, and before or
/// after other listeners by their names.
///
/// * **rank**: [`Order::EARLY`] (100) runs outside [`Order::NORMAL`] (0, the
///   default), which runs outside [`Order::LATE`] (-100);
///   [`Order::ranked`] takes any number. Equal ranks run in registration
///   order, the first registered outermost. A rank alone never fails.
/// * **before `x`**: outside every listener named `x` — it sees the input
///   before them and their output after them;
/// * **after `x`**: inside every listener named `x`, closer to the default.
///
/// Names are resolved when the listener is registered: naming a listener
/// that is not registered on the hook point (in any scope) is an
/// [`OrderError::UnknownListener`], and constraints that cannot all hold are
/// an [`OrderError::Conflict`]. Once registered, a constraint holds for every
/// listener of that name, including ones registered later.
///
/// The rule, deterministic and stable:
///
/// 1. Listeners without named constraints run in rank order, then
///    registration order.
/// 2. Each listener with constraints (in that same order) goes where its
///    rank would put it, moved just as far as needed to be before and
///    after the listeners it names (and the listeners whose constraints name
///    it). It never reorders the others: "after `a` and before `c`" when `c`
///    already runs before `a` is a conflict, not a reshuffle.
///
/// ```
/// use tack_hook::{Order, Waterfall};
///
/// # futures::executor::block_on(async {
/// let hook: Waterfall<String, String> = Waterfall::new("demo/order", |s| async move { s });
/// let _gate = hook.tap_with("permission", Order::EARLY, |s, next| next.run(s)).unwrap();
/// // Runs before (outside) `permission` without knowing or beating its rank.
/// let _audit = hook
///     .tap_with("audit", Order::before("permission"), |s, next| next.run(s))
///     .unwrap();
/// assert_eq!(hook.listener_names(None), ["audit".into(), "permission".into()] as [std::sync::Arc<str>; 2]);
///
/// let err = hook.tap_with("x", Order::after("nobody"), |s, next| next.run(s)).unwrap_err();
/// assert!(err.to_string().contains("no listener named `nobody`"), "{err}");
/// # });
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Order {
    rank: i32,
    before: Vec<Arc<str>>,
    after: Vec<Arc<str>>,
}

impl Order {
    /// Outside the normal rank: sees the input first and the output last
    /// (audit, security gates).
    pub const EARLY: Order = Order::ranked(100);
    /// The default rank.
    pub const NORMAL: Order = Order::ranked(0);
    /// Inside the normal rank: closest to the hook's default (for example
    /// the tool body).
    pub const LATE: Order = Order::ranked(-100);

    /// At `rank`: higher runs first (outer).
    pub const fn ranked(rank: i32) -> Self {
        Self {
            rank,
            before: Vec::new(),
            after: Vec::new(),
        }
    }

    /// Before (outside) every listener named `name`.
    pub fn before(name: impl Into<Arc<str>>) -> Self {
        Self::default().and_before(name)
    }

    /// After (inside) every listener named `name`.
    pub fn after(name: impl Into<Arc<str>>) -> Self {
        Self::default().and_after(name)
    }

    /// Also before (outside) every listener named `name`.
    pub fn and_before(mut self, name: impl Into<Arc<str>>) -> Self {
        self.before.push(name.into());
        self
    }

    /// Also after (inside) every listener named `name`.
    pub fn and_after(mut self, name: impl Into<Arc<str>>) -> Self {
        self.after.push(name.into());
        self
    }

    /// The names this listener goes before.
    pub fn before_names(&self) -> &[Arc<str>] {
        &self.before
    }

    /// The names this listener goes after.
    pub fn after_names(&self) -> &[Arc<str>] {
        &self.after
    }

    /// The rank: higher runs first.
    pub fn rank(&self) -> i32 {
        self.rank
    }

    /// Whether it names no listener (a rank alone places by rank).
    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }

    pub(crate) fn constraints(&self) -> impl Iterator<Item = (Relation, &Arc<str>)> {
        self.before
            .iter()
            .map(|n| (Relation::Before, n))
            .chain(self.after.iter().map(|n| (Relation::After, n)))
    }
}

/// Before or after, in an [`Order`] constraint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Relation {
    /// Outside the named listener.
    Before,
    /// Inside the named listener.
    After,
}

impl Relation {
    /// `before` or `after`, as [`OrderError::UnknownListener`] names it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Relation::Before => "before",
            Relation::After => "after",
        }
    }
}

/// Why a listener with an [`Order`] could not be registered. Nothing was
/// registered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OrderError {
    /// A constraint names a listener the hook point does not have.
    #[error(
        "listener `{listener}` on hook `{hook}` is to run {relation} `{target}`, but no listener named `{target}` is registered there ({}); register `{target}` first (install its plugin before this one) or drop the constraint",
        known_list(.known)
    )]
    UnknownListener {
        /// The hook point.
        hook: &'static str,
        /// The listener being registered.
        listener: Arc<str>,
        /// `"before"` or `"after"`: where the constraint asked for it to run.
        relation: &'static str,
        /// The name it refers to.
        target: Arc<str>,
        /// The names registered on the hook point, in chain order.
        known: Vec<Arc<str>>,
    },
    /// The constraints ask for a place that does not exist: after one
    /// listener and before another that already runs before it.
    #[error(
        "listener `{listener}` on hook `{hook}` cannot be placed: `{placing}` would have to run after `{after}` and before `{before}`, but `{before}` runs before `{after}`; remove one of the constraints, or place `{after}` and `{before}` by name first"
    )]
    Conflict {
        /// The hook point.
        hook: &'static str,
        /// The listener being registered.
        listener: Arc<str>,
        /// The listener that could not be placed (the one being registered,
        /// or one whose constraints name it).
        placing: Arc<str>,
        /// `placing` must run after this one…
        after: Arc<str>,
        /// …and before this one.
        before: Arc<str>,
    },
}

fn known_list(known: &[Arc<str>]) -> String {
    if known.is_empty() {
        "it has none".to_owned()
    } else {
        let names: Vec<String> = known.iter().map(|n| format!("`{n}`")).collect();
        format!("it has {}", names.join(", "))
    }
}

/// Two constraints that cannot both hold.
#[derive(Debug)]
pub(crate) struct Conflict {
    /// The listener that could not be placed.
    pub(crate) placing: Arc<str>,
    /// It must run after this one…
    pub(crate) after: Arc<str>,
    /// …and before this one, which already runs before the first.
    pub(crate) before: Arc<str>,
}

/// The chain order of `count` listeners given in base order (priority, then
/// registration), with names `name_of(i)` and constraints `order_of(i)`.
///
/// The rule: listeners without constraints keep their base order; each
/// listener with constraints (taken in base order) is then inserted where its
/// base order would put it, moved just as far as its constraints — and the
/// constraints of the listeners already placed that name it — require.
/// Inserting never reorders what is already placed, so every constraint is
/// checked when the later of its two listeners is placed.
///
/// `Err` when some listener's constraints ask for a place after one
/// listener and before another that already runs before the first — unless
/// `lenient`, in which case its "after" constraints win (used when a plain
/// registration, which cannot fail, completes such a conflict).
pub(crate) fn arrange<'a>(
    count: usize,
    name_of: impl Fn(usize) -> &'a str,
    order_of: impl Fn(usize) -> Option<&'a Order>,
    lenient: bool,
) -> Result<Vec<usize>, Conflict> {
    let (free, constrained): (Vec<usize>, Vec<usize>) =
        (0..count).partition(|&i| order_of(i).is_none_or(Order::is_empty));
    if constrained.is_empty() {
        return Ok(free);
    }
    let mut placed = free;
    for i in constrained {
        // Where base order alone would put it: before the first placed
        // listener that comes later in base order.
        let natural = placed.iter().position(|&j| j > i).unwrap_or(placed.len());
        // `lo`: just after the last listener it must follow; `hi`: at the first
        // listener it must precede.
        let (mut lo, mut after) = (0, None);
        let (mut hi, mut before) = (placed.len(), None);
        for (at, &j) in placed.iter().enumerate() {
            let own = order_of(i).map_or((false, false), |o| relation_to(o, name_of(j)));
            let theirs = order_of(j).map_or((false, false), |o| relation_to(o, name_of(i)));
            // i before j: its own "before j", or j's "after i".
            if (own.0 || theirs.1) && at < hi {
                hi = at;
                before = Some(j);
            }
            // i after j: its own "after j", or j's "before i".
            if (own.1 || theirs.0) && at + 1 > lo {
                lo = at + 1;
                after = Some(j);
            }
        }
        if lo > hi {
            if lenient {
                tracing::warn!(
                    listener = name_of(i),
                    "listener order constraints conflict; its `after` constraints win"
                );
                placed.insert(lo, i);
                continue;
            }
            let (Some(after), Some(before)) = (after, before) else {
                unreachable!("lo > 0 and hi < len each have a source")
            };
            return Err(Conflict {
                placing: Arc::from(name_of(i)),
                after: Arc::from(name_of(after)),
                before: Arc::from(name_of(before)),
            });
        }
        placed.insert(natural.clamp(lo, hi), i);
    }
    Ok(placed)
}

/// (Whether `order` puts its listener before `name`, whether after `name`.)
fn relation_to(order: &Order, name: &str) -> (bool, bool) {
    (
        order.before.iter().any(|n| &**n == name),
        order.after.iter().any(|n| &**n == name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        names: &[&str],
        orders: &[Option<Order>],
    ) -> Result<Vec<String>, (String, String, String)> {
        arrange(names.len(), |i| names[i], |i| orders[i].as_ref(), false)
            .map(|v| v.into_iter().map(|i| names[i].to_owned()).collect())
            .map_err(|c| {
                (
                    c.placing.to_string(),
                    c.after.to_string(),
                    c.before.to_string(),
                )
            })
    }

    #[test]
    fn no_constraint_keeps_the_base_order() {
        assert_eq!(
            run(&["a", "b", "c"], &[None, None, None]).unwrap(),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn a_constraint_moves_only_the_listener_that_states_it() {
        let orders = [None, None, Some(Order::before("b")), None];
        assert_eq!(
            run(&["a", "b", "c", "d"], &orders).unwrap(),
            ["a", "c", "b", "d"]
        );
        let orders = [Some(Order::after("c")), None, None, None];
        assert_eq!(
            run(&["a", "b", "c", "d"], &orders).unwrap(),
            ["b", "c", "a", "d"]
        );
        // Already satisfied: nothing moves.
        let orders = [Some(Order::before("d")), None, None, None];
        assert_eq!(
            run(&["a", "b", "c", "d"], &orders).unwrap(),
            ["a", "b", "c", "d"]
        );
    }

    #[test]
    fn a_name_shared_by_several_listeners_constrains_against_all() {
        let orders = [None, None, Some(Order::before("x"))];
        assert_eq!(run(&["x", "x", "c"], &orders).unwrap(), ["c", "x", "x"]);
        let orders = [Some(Order::after("x")), None, None, None];
        assert_eq!(
            run(&["a", "x", "b", "x"], &orders).unwrap(),
            ["x", "b", "x", "a"]
        );
    }

    #[test]
    fn constraints_between_constrained_listeners_hold() {
        // c after d, d before b: d moves up to before b, c goes after d.
        let orders = [
            None,
            None,
            Some(Order::after("d")),
            Some(Order::before("b")),
        ];
        let out = run(&["a", "b", "c", "d"], &orders).unwrap();
        let at = |n: &str| out.iter().position(|x| x == n).unwrap();
        assert!(at("d") < at("b") && at("d") < at("c"), "{out:?}");
    }

    #[test]
    fn impossible_places_are_conflicts_naming_both_sides() {
        // e after c and before a, but a runs before c.
        let orders = [None, None, None, Some(Order::after("c").and_before("a"))];
        assert_eq!(
            run(&["a", "b", "c", "e"], &orders).unwrap_err(),
            ("e".into(), "c".into(), "a".into())
        );
        // Lenient: the `after` side wins.
        let names = ["a", "b", "c", "e"];
        let out = arrange(4, |i| names[i], |i| orders[i].as_ref(), true).unwrap();
        assert_eq!(out, [0, 1, 2, 3]);
    }
}
