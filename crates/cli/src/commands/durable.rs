//! Sessions on Restate: `tack serve --restate ADDR` serves them as an
//! endpoint, `tack run --durable URL` runs a turn through Restate's
//! ingress and follows it, `tack approve --durable URL` answers an approval
//! a session waits for.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tack_agent::{ChatModel, PluginSet, ScriptedModel, escape_block};
use tack_permission::Permission;
use tack_pipeline::{Pipeline, ToolRegistry};
use tack_restate::{ApprovalAnswer, DurableApprover, IngressClient, SessionHost, TurnReport};
use tack_tools::BuiltinTools;

use crate::args::{AnswerFlag, ApproveArgs, DurableServeArgs};
use crate::exit;
use crate::guard_plugins;
use crate::model_spec::ModelSpec;
use crate::prompt::SystemPrompt;
use crate::session::workspace;
use crate::settings::Settings;

/// The sessions' model, pipeline and settings.
struct CliHost {
    model: Arc<dyn ChatModel>,
    pipeline: Pipeline,
    system_prompt: String,
    max_steps: usize,
}

impl SessionHost for CliHost {
    fn model(&self, _session: &str) -> Arc<dyn ChatModel> {
        Arc::clone(&self.model)
    }

    fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    fn system_prompt(&self) -> String {
        self.system_prompt.clone()
    }

    fn max_steps(&self) -> usize {
        self.max_steps
    }
}

/// `tack serve --restate ADDR`: serves until the process is stopped.
pub async fn serve(args: DurableServeArgs) -> Result<ExitCode, String> {
    if args.policy.mcp_config.is_some() {
        eprintln!(
            "tack: error: tack serve --restate loads no MCP servers (its sessions use the builtin tools); leave out --mcp-config"
        );
        return Ok(ExitCode::from(exit::USAGE));
    }
    let session = args.session();
    let root = workspace(session.policy.workspace.as_deref())?;
    let settings = Settings::load(&root, &session)?;
    for warning in &settings.warnings {
        eprintln!("tack: warning: {}", escape_block(warning, "  "));
    }
    // A script serves every session from its own place in it.
    let model: Arc<dyn ChatModel> = match &settings.model.value {
        ModelSpec::Script(file) => Arc::new(
            ScriptedModel::from_file(file)
                .map_err(|e| e.to_string())?
                .positioned_by_history(),
        ),
        spec => {
            let endpoint = crate::model_spec::Endpoint {
                base_url: settings.base_url.value.clone(),
                api_key_env: settings.api_key_env.value.clone(),
            };
            crate::model_spec::build(spec, &endpoint, settings.model_timeout.value)?
        }
    };
    let registry = ToolRegistry::new();
    let pipeline = Pipeline::new(registry);
    // An `ask` suspends the session on a Restate awakeable.
    let permission = Permission::new(
        guard_plugins::permission(&settings, &root).approver(Arc::new(DurableApprover)),
    );
    let _plugins = PluginSet::over(pipeline.clone())
        .with(guard_plugins::timeout(&settings)?)
        .with(permission)
        .with(guard_plugins::sandbox(&settings, &root, &session)?)
        .with(BuiltinTools)
        .build()
        .map_err(|e| format!("cannot install the plugins: {e}"))?;
    let prompt = SystemPrompt::build(session.agent.system_prompt.as_deref(), &root)?;
    let host = Arc::new(CliHost {
        model,
        pipeline,
        system_prompt: prompt.text,
        max_steps: settings.max_steps.value,
    });
    let listener = tokio::net::TcpListener::bind(args.restate)
        .await
        .map_err(|e| format!("--restate {}: cannot listen: {e}", args.restate))?;
    let address = listener
        .local_addr()
        .map_err(|e| format!("--restate {}: {e}", args.restate))?;
    let uri = format!("http://{address}");
    eprintln!("tack: serving sessions to Restate at {uri}");
    if !address.ip().is_loopback() && args.identity_key.is_empty() {
        eprintln!(
            "tack: warning: {uri} accepts every request that reaches it: anyone who can connect can run turns in {}; give the Restate server's request-signing key (--identity-key), or keep it on a network only the server reaches",
            root.display()
        );
    }
    let endpoint = tack_restate::endpoint(host, &args.identity_key)
        .map_err(|e| format!("--identity-key: {e}"))?;
    let serving = tokio::spawn(tack_restate::serve(listener, endpoint));
    match &args.register {
        Some(admin) => {
            tack_restate::register_deployment(admin, &uri)
                .await
                .map_err(|e| format!("--register: {e}"))?;
            eprintln!("tack: registered {uri} with {admin}");
        }
        None => eprintln!(
            "tack: register it with the Restate server: curl -X POST ADMIN_URL/deployments -H 'content-type: application/json' -d '{{\"uri\": \"{uri}\"}}' (or pass --register ADMIN_URL)"
        ),
    }
    serving
        .await
        .map_err(|e| format!("the endpoint stopped: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

/// `tack run --durable URL [--session ID] PROMPT`: starts the turn, shows
/// the approvals it waits for (asking on the terminal when there is one),
/// and prints its answer.
pub async fn run(url: &str, session: Option<String>, prompt: &str) -> Result<ExitCode, String> {
    let client = IngressClient::new(url).map_err(|e| format!("--durable: {e}"))?;
    let session = session.unwrap_or_else(new_session_id);
    eprintln!(
        "tack: session {session} (answer its approvals with: tack approve --durable {url} --session {session} yes|no)"
    );
    let invocation = client
        .send_turn(&session, prompt)
        .await
        .map_err(|e| e.to_string())?;
    let attach = client.attach(&invocation);
    tokio::pin!(attach);
    let mut shown: Option<String> = None;
    loop {
        tokio::select! {
            report = &mut attach => return finish(report.map_err(|e| e.to_string())?),
            () = tokio::time::sleep(Duration::from_millis(300)) => {}
        }
        let Ok(Some(pending)) = client.pending_approval(&session).await else {
            continue;
        };
        if shown.as_deref() == Some(pending.awakeable.as_str()) {
            continue;
        }
        shown = Some(pending.awakeable.clone());
        let request = &pending.request;
        eprintln!(
            "tack: session {session} waits for approval of {} ({}): {}",
            escape_block(&request.summary, "  "),
            request.call_id,
            escape_block(&request.reason, "  ")
        );
        if std::io::stdin().is_terminal() {
            let allow = tokio::task::spawn_blocking(ask_terminal)
                .await
                .map_err(|e| e.to_string())?;
            client
                .answer(
                    &session,
                    &ApprovalAnswer {
                        allow,
                        reason: None,
                    },
                )
                .await
                .map_err(|e| e.to_string())?;
        }
    }
}

fn ask_terminal() -> bool {
    eprint!("allow? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    let _ = std::io::stdin().lock().read_line(&mut line);
    matches!(line.trim(), "y" | "Y" | "yes")
}

fn finish(report: TurnReport) -> Result<ExitCode, String> {
    if let Some(text) = &report.text {
        println!("{}", escape_block(text, ""));
    }
    Ok(match report.end.as_str() {
        "answered" | "concluded" => ExitCode::SUCCESS,
        "step_limit" => ExitCode::from(exit::STEP_LIMIT),
        "empty_reply" => ExitCode::from(exit::EMPTY_REPLY),
        _ => ExitCode::from(exit::FAILURE),
    })
}

fn new_session_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("s{nanos:x}{:x}", std::process::id())
}

/// `tack approve --durable URL --session ID yes|no`.
pub async fn approve(args: ApproveArgs) -> Result<ExitCode, String> {
    let client = IngressClient::new(&args.durable).map_err(|e| format!("--durable: {e}"))?;
    let allow = args.answer == AnswerFlag::Yes;
    client
        .answer(
            &args.session,
            &ApprovalAnswer {
                allow,
                reason: args.reason,
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}
