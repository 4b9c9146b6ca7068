//! `--model PROVIDER:MODEL` (and the `model` settings key): which model a
//! session talks to, and building it from the settings and the environment.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use tack_agent::{ChatModel, MockModel, ScriptedModel};

/// A model as named on the command line or in a settings file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSpec {
    /// `mock`: the deterministic mock (no key, no network).
    Mock,
    /// `openai[:MODEL]`: an OpenAI-compatible chat-completions endpoint.
    OpenAi(Option<String>),
    /// `anthropic[:MODEL]`: Anthropic's messages endpoint.
    Anthropic(Option<String>),
    /// `script:FILE`: a scripted model.
    Script(PathBuf),
}

/// What every form looks like, for error messages.
const FORMS: &str = "use openai:MODEL (e.g. openai:gpt-4o-mini), anthropic:MODEL (e.g. anthropic:claude-sonnet-4-5), openai or anthropic (the model from OPENAI_MODEL or ANTHROPIC_MODEL), mock, or script:FILE";

impl FromStr for ModelSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (provider, rest) = match text.split_once(':') {
            Some((provider, rest)) => (provider, Some(rest)),
            None => (text, None),
        };
        let model = |provider: &str| match rest {
            None => Ok(None),
            Some(name) if name.trim().is_empty() => Err(format!(
                "`{text}` names no model after `{provider}:`; {FORMS}"
            )),
            Some(name) => Ok(Some(name.to_owned())),
        };
        match provider {
            "mock" if rest.is_none() => Ok(Self::Mock),
            "mock" => Err(format!(
                "`{text}`: the mock model takes no model name; use mock"
            )),
            "openai" => model("openai").map(Self::OpenAi),
            "anthropic" => model("anthropic").map(Self::Anthropic),
            "script" => match rest {
                Some(file) if !file.is_empty() => Ok(Self::Script(PathBuf::from(file))),
                _ => Err(format!("`{text}` names no file; use script:FILE")),
            },
            other => {
                let hint = if rest.is_some() {
                    format!("unknown provider `{other}`")
                } else if other.starts_with("claude") {
                    format!(
                        "unknown model `{other}` (a model name needs its provider: anthropic:{other})"
                    )
                } else if ["gpt", "o1", "o3", "o4", "chatgpt"]
                    .iter()
                    .any(|p| other.starts_with(p))
                {
                    format!(
                        "unknown model `{other}` (a model name needs its provider: openai:{other})"
                    )
                } else {
                    format!("unknown model `{other}`")
                };
                Err(format!("{hint}; {FORMS}"))
            }
        }
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Mock => f.write_str("mock"),
            Self::OpenAi(None) => f.write_str("openai"),
            Self::OpenAi(Some(m)) => write!(f, "openai:{m}"),
            Self::Anthropic(None) => f.write_str("anthropic"),
            Self::Anthropic(Some(m)) => write!(f, "anthropic:{m}"),
            Self::Script(file) => write!(f, "script:{}", file.display()),
        }
    }
}

/// Where an HTTP model's endpoint and key come from, besides the
/// environment's defaults (the `base_url` and `api_key_env` settings).
#[derive(Clone, Debug, Default)]
pub struct Endpoint {
    /// The base URL (`base_url`), over `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`.
    pub base_url: Option<String>,
    /// The variable holding the key (`api_key_env`), instead of
    /// `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`.
    pub api_key_env: Option<String>,
}

/// One provider's variable names and defaults.
#[cfg_attr(not(feature = "http-models"), allow(dead_code))]
struct Provider {
    name: &'static str,
    base_var: &'static str,
    default_base: &'static str,
    key_var: &'static str,
    model_var: &'static str,
    example: &'static str,
}

#[cfg_attr(not(feature = "http-models"), allow(dead_code))]
const OPENAI: Provider = Provider {
    name: "openai",
    base_var: "OPENAI_BASE_URL",
    default_base: "https://api.openai.com/v1",
    key_var: "OPENAI_API_KEY",
    model_var: "OPENAI_MODEL",
    example: "gpt-4o-mini",
};

#[cfg_attr(not(feature = "http-models"), allow(dead_code))]
const ANTHROPIC: Provider = Provider {
    name: "anthropic",
    base_var: "ANTHROPIC_BASE_URL",
    default_base: "https://api.anthropic.com",
    key_var: "ANTHROPIC_API_KEY",
    model_var: "ANTHROPIC_MODEL",
    example: "claude-sonnet-4-5",
};

/// Base URL, key and model name of an HTTP model, every missing piece
/// reported in one message.
#[cfg_attr(not(feature = "http-models"), allow(dead_code))]
fn resolve(
    provider: &Provider,
    model: Option<&str>,
    endpoint: &Endpoint,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(String, String, String), String> {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let base = endpoint
        .base_url
        .clone()
        .or_else(|| var(provider.base_var))
        .unwrap_or_else(|| provider.default_base.to_owned());
    let key_var = endpoint.api_key_env.as_deref().unwrap_or(provider.key_var);
    let key = var(key_var);
    let model = model.map(str::to_owned).or_else(|| var(provider.model_var));
    let mut missing = Vec::new();
    if key.is_none() {
        missing.push(format!("{key_var} is not set: export your API key in it"));
    }
    if model.is_none() {
        missing.push(format!(
            "no model name: pass --model {}:MODEL (e.g. {}:{}) or export {}",
            provider.name, provider.name, provider.example, provider.model_var
        ));
    }
    match (key, model) {
        (Some(key), Some(model)) => Ok((base, key, model)),
        _ => Err(format!(
            "the {} model cannot start:\n  - {}\n(or use the default mock model: --model mock)",
            provider.name,
            missing.join("\n  - ")
        )),
    }
}

/// Builds the model `spec` names.
///
/// # Errors
///
/// A script that cannot be read, or every setting an HTTP model lacks.
pub fn build(
    spec: &ModelSpec,
    endpoint: &Endpoint,
    timeout: Duration,
) -> Result<Arc<dyn ChatModel>, String> {
    #[cfg(feature = "http-models")]
    let env = |name: &str| std::env::var(name).ok();
    match spec {
        ModelSpec::Mock => Ok(Arc::new(MockModel::new())),
        ModelSpec::Script(file) => ScriptedModel::from_file(Path::new(file))
            .map(|m| Arc::new(m) as Arc<dyn ChatModel>)
            .map_err(|e| e.to_string()),
        #[cfg(feature = "http-models")]
        ModelSpec::OpenAi(model) => {
            let (base, key, model) = resolve(&OPENAI, model.as_deref(), endpoint, &env)?;
            let config = tack_agent::OpenAiConfig::new(base, key, model).with_timeout(timeout);
            Ok(Arc::new(
                tack_agent::OpenAiCompatible::new(config).map_err(|e| e.to_string())?,
            ))
        }
        #[cfg(feature = "http-models")]
        ModelSpec::Anthropic(model) => {
            let (base, key, model) = resolve(&ANTHROPIC, model.as_deref(), endpoint, &env)?;
            let config = tack_agent::AnthropicConfig::new(base, key, model).with_timeout(timeout);
            Ok(Arc::new(
                tack_agent::AnthropicMessages::new(config).map_err(|e| e.to_string())?,
            ))
        }
        #[cfg(not(feature = "http-models"))]
        ModelSpec::OpenAi(_) | ModelSpec::Anthropic(_) => {
            let _ = (endpoint, timeout);
            Err(format!(
                "`{spec}`: this tack was built without the HTTP models; build it with its default features (or `--features http-models`)"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_is_read_and_written_back() {
        for text in [
            "mock",
            "openai",
            "openai:gpt-4o-mini",
            "anthropic",
            "anthropic:claude-sonnet-4-5",
            "script:/tmp/s.json",
            "openai:org/model:latest",
        ] {
            let spec: ModelSpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
        }
    }

    #[test]
    fn bad_forms_say_what_to_write() {
        let err = |t: &str| t.parse::<ModelSpec>().unwrap_err();
        assert!(err("gpt4").contains("openai:gpt4"), "{}", err("gpt4"));
        assert!(err("claude-x").contains("anthropic:claude-x"));
        assert!(err("groq:llama").contains("unknown provider `groq`"));
        assert!(err("openai:").contains("names no model"));
        assert!(err("script:").contains("script:FILE"));
        assert!(err("mock:x").contains("takes no model name"));
    }

    #[test]
    fn every_missing_piece_is_named_at_once() {
        let none = |_: &str| None;
        let Err(e) = resolve(&OPENAI, None, &Endpoint::default(), &none) else {
            panic!()
        };
        assert!(
            e.contains("OPENAI_API_KEY") && e.contains("OPENAI_MODEL"),
            "{e}"
        );
        let endpoint = Endpoint {
            base_url: Some("http://h/v1".into()),
            api_key_env: Some("MY_KEY".into()),
        };
        let env = |name: &str| (name == "MY_KEY").then(|| "k".to_owned());
        let (base, key, model) = resolve(&OPENAI, Some("m"), &endpoint, &env).unwrap();
        assert_eq!(
            (base.as_str(), key.as_str(), model.as_str()),
            ("http://h/v1", "k", "m")
        );
    }
}
