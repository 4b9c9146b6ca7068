//! A test's scene: a scratch directory, a Restate server, endpoints, and
//! the sessions' scripts and files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use tack_restate::IngressClient;

use crate::fixture::EndpointProcess;
use crate::restate::{Restate, wait_until};

pub struct Scene {
    pub dir: PathBuf,
    pub restate: Restate,
    pub client: IngressClient,
    pub runtime: tokio::runtime::Runtime,
    _scratch: tempfile::TempDir,
}

impl Scene {
    /// `None` when restate-server is not installed (outside CI).
    pub fn new() -> Option<Self> {
        Self::with_server(Restate::start)
    }

    /// A scene whose server `start` starts in the scratch directory.
    pub fn with_server(start: impl FnOnce(&Path) -> Option<Restate>) -> Option<Self> {
        let scratch = tempfile::tempdir().expect("scratch");
        let dir = scratch.path().to_owned();
        eprintln!("scratch directory: {}", dir.display());
        std::fs::create_dir_all(dir.join("scripts")).expect("scripts");
        std::fs::create_dir_all(dir.join("files")).expect("files");
        let restate = start(&dir)?;
        let client = IngressClient::new(&restate.ingress).expect("ingress URL");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        Some(Self {
            dir,
            restate,
            client,
            runtime,
            _scratch: scratch,
        })
    }

    pub fn endpoint(&self, name: &str) -> EndpointProcess {
        EndpointProcess::spawn(name, &self.dir)
    }

    /// Registers `endpoint` with the server (its services then route there).
    pub fn register(&self, endpoint: &EndpointProcess) {
        let admin = self.restate.admin.clone();
        let uri = endpoint.uri();
        self.runtime
            .block_on(tack_restate::register_deployment(&admin, &uri))
            .unwrap_or_else(|e| panic!("register {uri}: {e}\n{}", self.restate.log()));
    }

    /// Writes the script of `session`: one step per entry, each a batch of
    /// `(call id, tool, file)` calls, then the final text.
    pub fn script(&self, session: &str, steps: &[&[(&str, &str, &str)]], text: &str) {
        let mut turns: Vec<Value> = steps
            .iter()
            .map(|calls| {
                let calls: Vec<Value> = calls
                    .iter()
                    .map(|(id, tool, file)| {
                        json!({"id": id, "name": tool, "arguments": json!({"file": file}).to_string()})
                    })
                    .collect();
                json!({"tool_calls": calls})
            })
            .collect();
        turns.push(json!({"text": text}));
        std::fs::write(
            self.dir.join("scripts").join(format!("{session}.json")),
            json!({"turns": turns}).to_string(),
        )
        .expect("script");
    }

    /// The lines of `DIR/files/{file}` (none when it does not exist).
    pub fn lines(&self, file: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("files").join(file))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    pub fn wait_for_file(&self, file: &str) {
        let path = self.dir.join("files").join(file);
        wait_until(
            &format!("{file} to be written"),
            Duration::from_secs(180),
            || path.exists(),
        );
    }

    pub fn open_gate(&self) {
        std::fs::write(self.dir.join("gate"), "open").expect("gate");
    }

    #[allow(dead_code)]
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        // TACK_RESTATE_KEEP=1 keeps the scratch directory (logs, files).
        if std::env::var_os("TACK_RESTATE_KEEP").is_some() {
            let _ =
                std::mem::replace(&mut self._scratch, tempfile::tempdir().expect("scratch")).keep();
        }
    }
}
