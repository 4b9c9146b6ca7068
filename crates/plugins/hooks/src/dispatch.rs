//! Firing an event: the matching commands (identical ones once), in
//! parallel, and what each one's exit and output mean.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::{Map, Value};

use crate::condition::CallView;
use crate::config::{HookCommand, HookEvent, HooksConfig};
use crate::report::{HookReport, ReportLevel, Reporter};
use crate::runner::{HookExit, HookRun, MAX_OUTPUT_BYTES, PreRun, refused, run};
use crate::session::HookSession;

/// Ends the agent's turn, with the reason (a hook's `"continue": false`
/// and `stopReason`, or a deferred call). Set by the host
/// ([`Hooks::set_turn_stopper`](crate::Hooks::set_turn_stopper)).
pub type TurnStopper = Arc<dyn Fn(&str) + Send + Sync>;

/// One command's answer, interpreted by Claude Code's rules.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) command: String,
    /// Exit 2 (its stderr), or an error of a fail-closed hook.
    pub(crate) blocking: Option<String>,
    /// The JSON object printed on exit 0.
    pub(crate) json: Option<Map<String, Value>>,
    /// Text printed on exit 0 that is not JSON.
    pub(crate) plain: Option<String>,
    /// Whether `blocking` is an error of a fail-closed hook (not exit 2).
    pub(crate) failed_closed: bool,
    /// A handler tack cannot run: why (PreToolUse asks instead).
    pub(crate) unsupported: Option<String>,
}

impl Answer {
    /// A string field of the JSON output.
    pub(crate) fn field(&self, key: &str) -> Option<&str> {
        self.json.as_ref()?.get(key)?.as_str()
    }

    /// A field of `hookSpecificOutput`.
    pub(crate) fn specific(&self, key: &str) -> Option<&Value> {
        self.json.as_ref()?.get("hookSpecificOutput")?.get(key)
    }

    /// Whether the JSON output says `"continue": false`.
    pub(crate) fn stops(&self) -> bool {
        self.json
            .as_ref()
            .and_then(|j| j.get("continue"))
            .and_then(Value::as_bool)
            == Some(false)
    }
}

pub(crate) struct Inner {
    pub(crate) config: HooksConfig,
    pub(crate) session: RwLock<HookSession>,
    pub(crate) reporter: Option<Reporter>,
    /// Checked right before each command runs.
    pub(crate) pre_run: Option<PreRun>,
    /// Hooks with `once` that already ran.
    pub(crate) ran_once: Mutex<HashSet<String>>,
    /// `additionalContext` of `PreToolUse` hooks, by call id, until the
    /// call's outcome carries it.
    pub(crate) pre_context: Mutex<HashMap<String, Vec<String>>>,
    /// Ends the agent's turn (`"continue": false`, `defer`).
    pub(crate) stopper: RwLock<Option<TurnStopper>>,
    /// What finished `async` hooks said for the model, until its next
    /// batch of results or prompt carries it.
    pub(crate) async_context: Mutex<Vec<String>>,
}

impl Inner {
    pub(crate) fn session(&self) -> HookSession {
        self.session
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn report(
        &self,
        event: HookEvent,
        command: &str,
        level: ReportLevel,
        message: String,
    ) {
        let report = HookReport {
            event,
            command: command.to_owned(),
            level,
            message,
        };
        match level {
            ReportLevel::Warning => tracing::warn!(target: "tack_hooks", "{report}"),
            ReportLevel::Blocked | ReportLevel::Message => {
                tracing::info!(target: "tack_hooks", "{report}");
            }
        }
        if let Some(reporter) = &self.reporter {
            reporter(&report);
        }
    }

    /// The commands of `event` whose matcher accepts one of `names` and
    /// whose `if` holds for `call`, identical command lines once
    /// (fail-closed if any copy is), `once` hooks that already ran left out.
    pub(crate) fn matching(
        &self,
        event: HookEvent,
        names: &[&str],
        call: Option<&CallView<'_>>,
    ) -> Vec<HookCommand> {
        let mut out: Vec<HookCommand> = Vec::new();
        for group in self.config.groups(event).filter(|g| g.matches(names)) {
            for hook in &group.hooks {
                if let (Some(condition), Some(call)) = (&hook.condition, call)
                    && !condition.matches(call)
                {
                    continue;
                }
                match out.iter_mut().find(|h| h.key() == hook.key()) {
                    Some(seen) => seen.fail_closed |= hook.fail_closed,
                    None => out.push(hook.clone()),
                }
            }
        }
        let mut ran = self
            .ran_once
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        out.retain(|hook| !hook.once || ran.insert(hook.key()));
        out
    }

    /// Asks the host to end the agent's turn.
    pub(crate) fn stop_turn(&self, reason: &str) {
        let stopper = self
            .stopper
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if let Some(stop) = stopper {
            stop(reason);
        }
    }

    /// Runs `hooks` in parallel with the common input fields plus `fields`.
    pub(crate) async fn fire(
        self: &Arc<Self>,
        event: HookEvent,
        hooks: Vec<HookCommand>,
        fields: Map<String, Value>,
    ) -> Vec<Answer> {
        let session = self.session();
        let mut input = Map::new();
        input.insert("session_id".into(), session.session_id.clone().into());
        input.insert(
            "transcript_path".into(),
            session
                .transcript_path
                .as_ref()
                .map_or(Value::Null, |p| p.to_string_lossy().into_owned().into()),
        );
        input.insert(
            "cwd".into(),
            session.cwd.to_string_lossy().into_owned().into(),
        );
        input.insert("hook_event_name".into(), event.as_str().into());
        input.insert(
            "permission_mode".into(),
            session.permission_mode.clone().into(),
        );
        input.extend(fields);
        let input = Value::Object(input).to_string().into_bytes();
        let project = session.project_dir.to_string_lossy().into_owned();
        let env = [
            ("CLAUDE_PROJECT_DIR", project.clone()),
            ("TACK_PROJECT_DIR", project),
            ("TACK_HOOK_EVENT", event.as_str().to_owned()),
        ];
        let (background, hooks): (Vec<HookCommand>, Vec<HookCommand>) =
            hooks.into_iter().partition(|h| h.run_async);
        for hook in background {
            let check = self.pre_run.as_ref().map_or(Ok(()), |check| check(&hook));
            let inner = Arc::clone(self);
            let input = input.clone();
            let cwd = session.cwd.clone();
            let env = env.clone();
            tokio::spawn(async move {
                let env: Vec<(&str, String)> = env.iter().map(|(k, v)| (*k, v.clone())).collect();
                let run = match check {
                    Ok(()) => run(&hook, &input, &cwd, &env).await,
                    Err(why) => refused(&hook, why),
                };
                // Nothing it says changes the call; what it says for the
                // model waits for the model's next batch or prompt.
                let rewake = hook.rewake;
                let answer = inner.interpret(event, run);
                let mut said = Vec::new();
                if let Some(context) = answer.specific("additionalContext").and_then(Value::as_str)
                {
                    said.push(context.to_owned());
                }
                if let Some(message) = answer.field("systemMessage") {
                    said.push(message.to_owned());
                }
                if rewake
                    && !answer.failed_closed
                    && let Some(reason) = &answer.blocking
                {
                    said.push(reason.clone());
                }
                if !said.is_empty() {
                    let said = said.join("\n");
                    inner
                        .async_context
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(format!(
                            "the async {event} hook `{}` said: {said}",
                            answer.command
                        ));
                }
            });
        }
        let (unsupported, hooks): (Vec<HookCommand>, Vec<HookCommand>) =
            hooks.into_iter().partition(|h| h.unsupported.is_some());
        let runs = futures::future::join_all(hooks.iter().map(|hook| {
            let check = self.pre_run.as_ref().map_or(Ok(()), |check| check(hook));
            let input = &input;
            let cwd = &session.cwd;
            let env = &env;
            async move {
                match check {
                    Ok(()) => run(hook, input, cwd, env).await,
                    Err(why) => refused(hook, why),
                }
            }
        }))
        .await;
        let mut answers: Vec<Answer> = runs.into_iter().map(|r| self.interpret(event, r)).collect();
        answers.extend(unsupported.into_iter().map(|hook| Answer {
            command: hook.command.clone(),
            blocking: None,
            json: None,
            plain: None,
            failed_closed: false,
            unsupported: hook.unsupported,
        }));
        answers
    }

    fn interpret(&self, event: HookEvent, run: HookRun) -> Answer {
        let mut answer = Answer {
            command: run.command.clone(),
            blocking: None,
            json: None,
            plain: None,
            failed_closed: false,
            unsupported: None,
        };
        let stderr = run.stderr.trim();
        if let HookExit::Refused(why) = &run.exit {
            self.report(
                event,
                &run.command,
                ReportLevel::Blocked,
                format!("not run: {why}"),
            );
            answer.failed_closed = true;
            answer.blocking = Some(format!(
                "the {event} hook `{}` was not run: {why}",
                run.command
            ));
            return answer;
        }
        let failure = match &run.exit {
            HookExit::Code(0) => None,
            HookExit::Code(2) if event.ignores_exit_2() => {
                self.report(
                    event,
                    &run.command,
                    ReportLevel::Warning,
                    format!(
                        "exited 2, which blocks nothing on {event} (as in Claude Code); ignored{}",
                        detail(stderr)
                    ),
                );
                return answer;
            }
            HookExit::Code(2) => {
                let reason = if stderr.is_empty() {
                    format!(
                        "the {event} hook `{}` blocked (exit 2) without a reason on stderr",
                        run.command
                    )
                } else {
                    stderr.to_owned()
                };
                self.report(
                    event,
                    &run.command,
                    ReportLevel::Blocked,
                    format!("blocked (exit 2): {reason}"),
                );
                answer.blocking = Some(reason);
                return answer;
            }
            HookExit::Code(code) => Some(format!("failed with exit {code}{}", detail(stderr))),
            HookExit::Signal(signal) => {
                Some(format!("was killed by signal {signal}{}", detail(stderr)))
            }
            HookExit::TimedOut(after) => Some(format!(
                "timed out after {} s; its process group was killed",
                after.as_secs_f64()
            )),
            HookExit::SpawnFailed(why) | HookExit::Refused(why) => {
                Some(format!("could not run: {why}"))
            }
        };
        if run.truncated {
            self.report(
                event,
                &run.command,
                ReportLevel::Warning,
                format!("printed more than {MAX_OUTPUT_BYTES} bytes; the rest was dropped"),
            );
        }
        let failure = failure.or_else(|| {
            let out = run.stdout.trim();
            if out.is_empty() {
                return None;
            }
            if out.starts_with('{') {
                match serde_json::from_str::<Value>(out) {
                    Ok(Value::Object(map)) => {
                        answer.json = Some(map);
                        return None;
                    }
                    Ok(_) | Err(_) => {
                        return Some(format!(
                            "printed output that starts like JSON but is not a JSON object ({} bytes)",
                            out.len()
                        ));
                    }
                }
            }
            answer.plain = Some(out.to_owned());
            None
        });
        if let Some(failure) = failure {
            if run.fail_closed {
                self.report(
                    event,
                    &run.command,
                    ReportLevel::Blocked,
                    format!("{failure}; it fails closed, so this blocks"),
                );
                answer.failed_closed = true;
                answer.json = None;
                answer.plain = None;
                answer.blocking = Some(format!(
                    "the {event} hook `{}` {failure}, and it is set to fail closed",
                    run.command
                ));
            } else {
                self.report(
                    event,
                    &run.command,
                    ReportLevel::Warning,
                    format!("{failure}; ignored (a non-blocking error)"),
                );
            }
        }
        // Claude Code ignores a StopFailure hook's output.
        if event == HookEvent::StopFailure {
            answer.json = None;
            answer.plain = None;
        }
        if let Some(message) = answer.field("systemMessage") {
            let message = message.to_owned();
            self.report(event, &run.command, ReportLevel::Message, message);
        }
        answer
    }
}

fn detail(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        let first: String = stderr
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(300)
            .collect();
        format!(": {first}")
    }
}
