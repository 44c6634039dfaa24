//! A small LSP test client: spawns `cellguard server`, frames JSON-RPC over its stdio, answers
//! the server's own requests, and records everything the server sends. Every wait has a
//! timeout, so a hanging server fails the test instead of hanging it.

#![allow(dead_code)]

use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Default time to wait for one message.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// The binary under test.
/// `CELLGUARD_TEST_BINARY` overrides it (to show a regression test failing on an older build).
pub fn binary() -> PathBuf {
    std::env::var_os("CELLGUARD_TEST_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cellguard")))
}

/// A running server and the client side of its connection.
pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Result<Value, String>>,
    next_id: i64,
    /// Messages received but not consumed yet (notifications, server requests).
    pub inbox: VecDeque<Value>,
    /// Requests the server sent to the client (already answered).
    pub server_requests: Vec<Value>,
    /// Answer to `workspace/configuration` (one value per item).
    pub configuration: Value,
    /// When true, server requests are kept in [`Client::held`] unanswered (a busy editor)
    /// until [`Client::answer_held`].
    pub hold_server_requests: bool,
    /// Server requests received and not answered yet.
    pub held: Vec<Value>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

fn read_message(r: &mut impl BufRead) -> Result<Option<Value>, String> {
    let mut len: Option<usize> = None;
    loop {
        let mut line = String::new();
        let n = r.read_line(&mut line).map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(None);
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| format!("stdout is not LSP framing: {line:?}"))?;
        if k.eq_ignore_ascii_case("content-length") {
            len = Some(v.trim().parse().map_err(|_| format!("bad length {v:?}"))?);
        }
    }
    let len = len.ok_or("header without Content-Length")?;
    let mut body = vec![0; len];
    r.read_exact(&mut body).map_err(|e| e.to_string())?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("body is not JSON ({e}): {}", String::from_utf8_lossy(&body)))
}

impl Client {
    /// Starts `cellguard server` in `cwd`.
    pub fn spawn(cwd: &Path) -> Self {
        Self::spawn_with_env(cwd, &[])
    }

    /// Starts `cellguard server` in `cwd` with extra environment variables.
    pub fn spawn_with_env(cwd: &Path, env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(binary())
            .arg("server")
            .envs(env.iter().copied())
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn cellguard server");
        let stdout = child.stdout.take().unwrap();
        let mut stderr_pipe = child.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr_pipe.read_to_end(&mut buf);
            sink.lock().unwrap().extend(buf);
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                match read_message(&mut r) {
                    Ok(Some(v)) => {
                        if tx.send(Ok(v)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => return,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            rx,
            next_id: 1,
            inbox: VecDeque::new(),
            server_requests: Vec::new(),
            configuration: Value::Null,
            hold_server_requests: false,
            held: Vec::new(),
            stderr,
        }
    }

    /// Writes raw bytes to the server.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to server");
        stdin.flush().expect("flush");
    }

    /// Sends one JSON-RPC message.
    pub fn send(&mut self, msg: &Value) {
        let body = serde_json::to_vec(msg).unwrap();
        let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        framed.extend(body);
        self.send_raw(&framed);
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Receives the next message (answering server requests on the way), or `None` on timeout.
    fn recv(&mut self, timeout: Duration) -> Option<Value> {
        match self.rx.recv_timeout(timeout) {
            Ok(Ok(v)) => {
                if v.get("method").is_some() && v.get("id").is_some() {
                    if self.hold_server_requests {
                        self.held.push(v.clone());
                    } else {
                        self.answer_server_request(&v);
                    }
                }
                Some(v)
            }
            Ok(Err(e)) => panic!("protocol error from server: {e}"),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    fn answer_server_request(&mut self, req: &Value) {
        self.server_requests.push(req.clone());
        let result = match req["method"].as_str() {
            Some("workspace/configuration") => {
                let n = req["params"]["items"].as_array().map_or(1, Vec::len);
                Value::Array(vec![self.configuration.clone(); n])
            }
            Some("workspace/applyEdit") => json!({"applied": true}),
            _ => Value::Null,
        };
        let id = req["id"].clone();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Answers every held server request, in the order they came.
    pub fn answer_held(&mut self) {
        for req in std::mem::take(&mut self.held) {
            self.answer_server_request(&req);
        }
    }

    /// Waits up to `limit` for the response to request `id`, keeping other messages in the
    /// inbox; `None` when none came.
    pub fn response_within(&mut self, id: i64, limit: Duration) -> Option<Value> {
        let deadline = Instant::now() + limit;
        loop {
            let msg = self.recv(deadline.saturating_duration_since(Instant::now()))?;
            if msg.get("method").is_none() && msg.get("id") == Some(&json!(id)) {
                return Some(msg);
            }
            self.inbox.push_back(msg);
        }
    }

    /// Waits for the response to request `id`, keeping other messages in the inbox.
    pub fn response(&mut self, id: i64) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = self
                .recv(left)
                .unwrap_or_else(|| panic!("no response to request {id}"));
            if msg.get("method").is_none() && msg.get("id") == Some(&json!(id)) {
                return msg;
            }
            self.inbox.push_back(msg);
        }
    }

    /// Sends a request and returns its `result` (panics on an error response).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        let resp = self.response(id);
        if let Some(e) = resp.get("error") {
            panic!("{method} failed: {e}");
        }
        resp["result"].clone()
    }

    /// Waits for a notification `method` whose params satisfy `pred`; earlier messages that do
    /// not match stay in the inbox.
    pub fn wait_for(&mut self, method: &str, pred: impl Fn(&Value) -> bool) -> Value {
        self.try_wait_for(method, pred, TIMEOUT).unwrap_or_else(|| {
            panic!(
                "no {method} notification matched in time; inbox: {:?}",
                self.inbox
            )
        })
    }

    /// Like [`Client::wait_for`] with a timeout, `None` when nothing matched.
    pub fn try_wait_for(
        &mut self,
        method: &str,
        pred: impl Fn(&Value) -> bool,
        timeout: Duration,
    ) -> Option<Value> {
        if let Some(i) = self
            .inbox
            .iter()
            .position(|m| m["method"] == method && pred(&m["params"]))
        {
            return self.inbox.remove(i).map(|m| m["params"].clone());
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = self.recv(left)?;
            if msg["method"] == method && pred(&msg["params"]) {
                return Some(msg["params"].clone());
            }
            self.inbox.push_back(msg);
        }
    }

    /// Collects every message that arrives within `d`, into the inbox.
    pub fn drain_for(&mut self, d: Duration) {
        let deadline = Instant::now() + d;
        while let Some(m) = self.recv(deadline.saturating_duration_since(Instant::now())) {
            self.inbox.push_back(m);
        }
    }

    /// Removes and returns every inbox notification `method` (params only), in order.
    pub fn take_notifications(&mut self, method: &str) -> Vec<Value> {
        let (hit, rest): (Vec<_>, Vec<_>) =
            self.inbox.drain(..).partition(|m| m["method"] == method);
        self.inbox = rest.into();
        hit.into_iter().map(|m| m["params"].clone()).collect()
    }

    /// The diagnostics published for `uri` at `version`.
    pub fn diagnostics_at(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let p = self.wait_for("textDocument/publishDiagnostics", |p| {
            p["uri"] == uri && p["version"] == version
        });
        p["diagnostics"].as_array().cloned().unwrap_or_default()
    }

    /// `initialize` + `initialized` with these client capabilities and options.
    pub fn initialize(&mut self, root: &Path, capabilities: Value, options: Value) -> Value {
        let root_uri = file_uri(root);
        let result = self.request(
            "initialize",
            json!({
                "processId": std::process::id(),
                "rootUri": root_uri,
                "workspaceFolders": [{"uri": root_uri, "name": "ws"}],
                "capabilities": capabilities,
                "initializationOptions": options,
            }),
        );
        self.notify("initialized", json!({}));
        result
    }

    /// Opens a document.
    pub fn open(&mut self, uri: &str, language: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}}),
        );
    }

    /// Sends one `didChange` with a single ranged edit (or a full replacement when `range` is
    /// `None`).
    pub fn change(&mut self, uri: &str, version: i64, range: Option<[u32; 4]>, text: &str) {
        let change = match range {
            Some([sl, sc, el, ec]) => json!({
                "range": {"start": {"line": sl, "character": sc}, "end": {"line": el, "character": ec}},
                "text": text
            }),
            None => json!({"text": text}),
        };
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        );
    }

    /// `shutdown` + `exit`; returns the exit status and asserts stderr stayed empty.
    pub fn shutdown(mut self) -> ExitStatus {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r, Value::Null);
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// Waits up to `limit` for the process to exit on its own, with stdin kept open (an end
    /// of input would end the session by itself); `None` when it is still running.
    pub fn exit_status_within(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return Some(s);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes stdin and waits for the process (at most [`TIMEOUT`]); asserts an empty stderr.
    pub fn wait_exit(mut self) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("server did not exit");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        std::thread::sleep(Duration::from_millis(50));
        let err = String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned();
        assert!(err.is_empty(), "server wrote to stderr: {err}");
        status
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `file://` URI of a path.
pub fn file_uri(p: &Path) -> String {
    let s = p.to_string_lossy().replace('\\', "/");
    let s = if s.starts_with('/') {
        s
    } else {
        format!("/{s}")
    };
    let mut out = String::from("file://");
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Client capabilities: push diagnostics, UTF-16, dynamic file watching, versioned edits.
pub fn push_caps() -> Value {
    json!({
        "workspace": {
            "didChangeWatchedFiles": {"dynamicRegistration": true},
            "workspaceEdit": {"documentChanges": true},
            "applyEdit": true
        },
        "textDocument": {
            "publishDiagnostics": {"versionSupport": true},
            "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source.fixAll"]}}}
        }
    })
}

/// Like [`push_caps`] plus pull diagnostics (`textDocument.diagnostic`) and refresh support.
pub fn pull_caps() -> Value {
    let mut c = push_caps();
    c["textDocument"]["diagnostic"] = json!({"dynamicRegistration": false});
    c["workspace"]["diagnostics"] = json!({"refreshSupport": true});
    c
}

/// The UTF-16 length of `s` (LSP's default column unit).
pub fn utf16_len(s: &str) -> u32 {
    s.encode_utf16().count() as u32
}

/// The codes of a diagnostic list.
pub fn codes(diags: &[Value]) -> Vec<String> {
    diags
        .iter()
        .map(|d| d["code"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A temporary workspace with the server fixtures (config, KB, capability source) copied from
/// `fixtures/server`.
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/server");
    for name in ["kb.json", "caps.py", "cellguard.toml"] {
        std::fs::copy(fixtures.join(name), dir.path().join(name)).unwrap();
    }
    dir
}

/// An empty temporary workspace (no config: built-in defaults).
pub fn empty_workspace() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Spawns the server in `root` and initializes it with `caps` and `options`; returns the client
/// and the `initialize` result.
pub fn start(root: &Path, caps: Value, options: Value) -> (Client, Value) {
    let mut c = Client::spawn(root);
    let init = c.initialize(root, caps, options);
    (c, init)
}

/// The `file://` URI of `name` under `root`.
pub fn uri(root: &Path, name: &str) -> String {
    file_uri(&root.join(name))
}

/// The first diagnostic with `code`; panics with the whole list when there is none.
pub fn find<'a>(diags: &'a [Value], code: &str) -> &'a Value {
    diags
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code} in {diags:?}"))
}

/// Completion inside `run("wait")` in a workspace whose knowledge base is the Python source
/// `policy_src` (written to `src/policy.py`, config `knowledge-base = ["src"]`): returns the
/// running client (version 1 of `c.py` open and linted), the document URI, the completion items
/// and the workspace (keep it alive while the client runs).
pub fn complete_wait_in(policy_src: &str) -> (Client, String, Value, tempfile::TempDir) {
    let ws = empty_workspace();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/policy.py"), policy_src).unwrap();
    std::fs::write(
        ws.path().join("cellguard.toml"),
        "knowledge-base = [\"src\"]\n",
    )
    .unwrap();
    let (mut c, _) = start(ws.path(), push_caps(), Value::Null);
    let u = uri(ws.path(), "c.py");
    c.open(&u, "python", 1, "r = await run(\"wait\")\n");
    c.diagnostics_at(&u, 1);
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": u}, "position": {"line": 0, "character": 19}}),
    );
    (c, u, items, ws)
}
