//! Combining the rules that match a call into one decision.

use tack_core::tool::ToolExecution;

use super::{Check, Prepared, Rule};
use crate::Action;

/// What a [`RuleSet`](super::RuleSet) decides for a call: the action and the
/// rules it rests on.
#[derive(Clone, Debug)]
pub struct Decision<'a> {
    action: Action,
    rules: Vec<&'a Rule>,
    unread: Option<String>,
    reach: Option<String>,
}

impl<'a> Decision<'a> {
    /// Allow, ask or deny.
    pub fn action(&self) -> Action {
        self.action
    }

    /// The deciding rules: one, or for an allow several allow command rules
    /// that together cover every simple command.
    pub fn rules(&self) -> &[&'a Rule] {
        &self.rules
    }

    /// The first deciding rule.
    pub fn rule(&self) -> &'a Rule {
        self.rules[0]
    }

    /// When the decision is an ask because a deny or ask rule might match a
    /// command that cannot be fully read: why it cannot be read.
    pub fn unread(&self) -> Option<&str> {
        self.unread.as_deref()
    }

    /// When the decision is an ask because a deny or ask path rule on
    /// `read_file` may apply to a `grep` or `glob` call that could reach a
    /// matching file: which files and where.
    pub fn reach(&self) -> Option<&str> {
        self.reach.as_deref()
    }

    /// The rules and their origins, for reasons:
    /// ``rule `deny bash(…)` (file line 3)``, ``rules `…` and `…` ``.
    pub fn describe(&self) -> String {
        match self.rules.as_slice() {
            [one] => one.describe(),
            many => {
                let names: Vec<String> = many
                    .iter()
                    .map(|r| r.describe().trim_start_matches("rule ").to_owned())
                    .collect();
                let (last, first) = names.split_last().unwrap_or((&names[0], &[]));
                format!("rules {} and {last}", first.join(", "))
            }
        }
    }
}

/// Decides `exec` from `rules` in order (see [`RuleSet`](super::RuleSet)).
pub(crate) fn decide<'a>(
    rules: impl Iterator<Item = &'a Rule> + Clone,
    exec: &ToolExecution,
    cache: &mut Prepared<'_>,
) -> Option<Decision<'a>> {
    let all = rules.clone();
    let mut ask: Option<&Rule> = None;
    let mut maybe: Option<(&Rule, String)> = None;
    let mut opaque: Option<(&Rule, String, String)> = None;
    let mut reach: Option<(&Rule, String)> = None;
    let mut allow: Option<&Rule> = None;
    let mut partial: Vec<(String, Vec<bool>, Vec<&Rule>)> = Vec::new();
    for rule in rules {
        // Skip the matching work of rules that cannot change the outcome.
        let skip = match rule.action() {
            Action::Allow => ask.is_some() || maybe.is_some() || allow.is_some(),
            Action::Ask => ask.is_some(),
            Action::Deny => false,
        };
        if skip {
            continue;
        }
        match rule.check(exec, cache) {
            Check::No => {}
            Check::Yes => match rule.action() {
                Action::Deny => {
                    return Some(Decision {
                        action: Action::Deny,
                        rules: vec![rule],
                        unread: None,
                        reach: None,
                    });
                }
                Action::Ask => ask = Some(rule),
                Action::Allow => allow = Some(rule),
            },
            Check::Maybe(why) => {
                if maybe.is_none() {
                    maybe = Some((rule, why));
                }
            }
            Check::Opaque { arg, why } => {
                if opaque.is_none() {
                    opaque = Some((rule, arg, why));
                }
            }
            Check::Reach(why) => {
                if reach.is_none() {
                    reach = Some((rule, why));
                }
            }
            Check::Partial { arg, covered } => {
                match partial.iter_mut().find(|(a, _, _)| *a == arg) {
                    Some((_, all, by)) => {
                        let adds = covered.iter().zip(all.iter()).any(|(c, a)| *c && !*a);
                        if adds {
                            all.iter_mut().zip(&covered).for_each(|(a, c)| *a |= *c);
                            by.push(rule);
                        }
                    }
                    None => partial.push((arg, covered, vec![rule])),
                }
            }
        }
    }
    let decision = |action, rules, unread| {
        Some(Decision {
            action,
            rules,
            unread,
            reach: None,
        })
    };
    if let Some(rule) = ask {
        return decision(Action::Ask, vec![rule], None);
    }
    if let Some((rule, why)) = maybe {
        return decision(Action::Ask, vec![rule], Some(why));
    }
    if let Some((rule, arg, why)) = opaque {
        if !vouched(all, exec, cache, &arg) {
            return decision(Action::Ask, vec![rule], Some(why));
        }
    }
    if let Some((rule, why)) = reach {
        return Some(Decision {
            action: Action::Ask,
            rules: vec![rule],
            unread: None,
            reach: Some(why),
        });
    }
    if let Some(rule) = allow {
        return decision(Action::Allow, vec![rule], None);
    }
    partial
        .into_iter()
        .find(|(_, covered, _)| covered.iter().all(|c| *c))
        .and_then(|(_, _, rules)| decision(Action::Allow, rules, None))
}

/// Whether allow command rules name every simple command of `arg` that
/// runs an opaque program (the user's explicit choice vouches for it).
fn vouched<'a>(
    rules: impl Iterator<Item = &'a Rule>,
    exec: &ToolExecution,
    cache: &mut Prepared<'_>,
    arg: &str,
) -> bool {
    let Some(value) = exec.arg_str(arg) else {
        return false;
    };
    let opaque: Vec<bool> = cache
        .command(arg, value)
        .commands
        .iter()
        .map(|c| c.opaque.is_some())
        .collect();
    let mut covered = vec![false; opaque.len()];
    for rule in rules {
        rule.vouch(exec, arg, cache, &mut covered);
    }
    opaque.iter().zip(&covered).all(|(o, c)| !o || *c)
}
