//! cellguard's language server: the rules of `cellguard check` as editor diagnostics, with
//! quick fixes, hover, completion, go to definition and an action-count inlay hint.
//!
//! Built on `tower-lsp-server` + tokio over stdio. The design points, and the user bugs of other
//! linters' servers they avoid (`lsp-linter-anchors.md` §5):
//!
//! - **Ordering.** tower-lsp-server runs handlers concurrently, so every document mutation
//!   happens synchronously in the first poll of its notification handler (under one mutex,
//!   before any `.await`), which preserves the client's order.
//! - **Off the main loop.** Parsing and linting run in `spawn_blocking`; at most one lint per
//!   document runs at a time and a burst of edits coalesces into one re-lint of the latest
//!   text (no fixed debounce delay, so a single keystroke is answered at once). Each lint keeps
//!   the per-cell rule results (`lint::CellResults`): cells whose text an edit left unchanged
//!   (the other fences of a Markdown file, the other records of a trace) are not checked again.
//!   A single-cell Python file is still checked whole on every edit. A lint whose version is
//!   superseded while it runs is abandoned after its parse or its rules.
//! - **Requests never wait for a lint.** Hover, completion, definition and inlay hints work on
//!   the current text's trees (the lint result of the current version, else a parse without
//!   rules, which is incremental and takes milliseconds even where the rules take seconds), and
//!   a code action request waits only when it carries diagnostics to match or asks for
//!   fix-all by kind.
//! - **Stale results dropped.** Each result carries the document version (and the opening's
//!   epoch and the settings generation); a result whose version is no longer current is never
//!   published, and publications go through one ordered queue, so a cleared document never
//!   shows old diagnostics again.
//! - **One delivery path per client.** Pull (`textDocument/diagnostic`) when the client
//!   declares support, else push with the version; never both (ruff#11022, neovim#29927).
//! - **Positions** in the negotiated encoding (UTF-8 preferred, UTF-16 default, UTF-32).
//! - **Configuration** per document as the CLI finds it, editor settings from
//!   `initializationOptions` and `workspace/didChangeConfiguration` (which ruff ignores), and
//!   reload on watched config and knowledge-base files, with open documents re-diagnosed.
//! - **Never crashes** on a bad request: malformed JSON and bad params get JSON-RPC errors,
//!   out-of-range positions are clamped, a panicking lint is caught and reported.

pub mod actions;
pub mod analysis;
pub mod convert;
pub mod documents;
pub mod ide;
pub mod settings;
pub mod transport;

use crate::analysis::{LintResult, Snapshot};
use crate::documents::{Document, Language};
use crate::settings::ClientSettings;
use cellguard_lints::config::{Overrides, Resolver, CONFIG_NAMES};
use cellguard_lints::source::PositionEncoding;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Error as RpcError, Result as RpcResult};
use tower_lsp_server::ls_types as lsp;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

/// The command that prints version, encoding, config files and knowledge-base size.
pub const CMD_DEBUG_INFO: &str = "cellguard.printDebugInformation";
/// The command that applies every safe fix of a document (for editors without code actions
/// on save): arguments `[{"uri": ..., "version": ...}]` or `["uri"]`.
pub const CMD_APPLY_AUTOFIX: &str = "cellguard.applyAutofix";

/// How long the server waits for the client to answer one of its requests.
const CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the session may take to end by itself after `exit` before it is dropped.
const EXIT_GRACE: Duration = Duration::from_millis(150);
/// How long a code action request carrying diagnostics waits for the lint of the current text
/// (hover, completion, definition and inlay hints never wait: see `Shared::current_syntax`).
const FEATURE_WAIT: Duration = Duration::from_secs(5);
/// How long a code action request without `only` (and without diagnostics) waits for the
/// lint of the current text before answering from the last lint: long enough for a small
/// document's lint, short enough that a cursor move on a 5 MB document is not held up.
const MENU_WAIT: Duration = Duration::from_millis(500);
/// How long pull diagnostics and fix-all wait for the lint of the current text.
const DIAGNOSTIC_WAIT: Duration = Duration::from_secs(120);

/// LSP `ServerCancelled`: the server gave up on a request; with `retriggerRequest` the client
/// asks again.
const SERVER_CANCELLED: i64 = -32802;
/// LSP's `RequestFailed` error code: a valid request whose work failed (LSP 3.17).
const REQUEST_FAILED: i64 = -32803;

/// How long a pull of diagnostics waits: [`DIAGNOSTIC_WAIT`], or
/// `CELLGUARD_SERVER_DIAGNOSTIC_WAIT_MS` (read once; a test hook).
fn diagnostic_wait() -> Duration {
    static WAIT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *WAIT.get_or_init(|| {
        std::env::var("CELLGUARD_SERVER_DIAGNOSTIC_WAIT_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
            .unwrap_or(DIAGNOSTIC_WAIT)
    })
}

/// Runs the language server on stdio until the client sends `exit` or closes stdin.
///
/// Returns `Ok(true)` after a clean `shutdown` + `exit`, `Ok(false)` when the client exited
/// without `shutdown` (the LSP asks for exit code 1 then).
///
/// Errors: the async runtime cannot start.
pub fn run_stdio() -> Result<bool, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(8)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let clean = runtime.block_on(async {
        let (service, socket) = LspService::new(Backend::new);
        let shared = service.inner().shared.clone();
        // stdin -> framing guard -> server -> frame splitter -> one writer -> stdout.
        let (to_server, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, from_server) = tokio::io::duplex(1 << 20);
        let (frames_tx, frames_rx) = mpsc::unbounded_channel();
        let frames_tx_out = frames_tx.clone();
        let exit_seen = Arc::new(tokio::sync::Notify::new());
        let input = {
            let exit_seen = exit_seen.clone();
            tokio::spawn(async move {
                transport::pump_input_watching_exit(
                    tokio::io::stdin(),
                    to_server,
                    frames_tx.clone(),
                    &exit_seen,
                )
                .await
            })
        };
        let output = tokio::spawn(transport::pump_output(from_server, frames_tx_out));
        let writer = tokio::spawn(transport::write_frames(tokio::io::stdout(), frames_rx));
        let serve = Server::new(server_in, server_out, socket)
            .concurrency_level(32)
            .serve(service);
        // `exit` ends the process at once (LSP), even while a handler still waits on the
        // client (the `workspace/configuration` request of `initialized`, up to
        // CLIENT_REQUEST_TIMEOUT): the session gets EXIT_GRACE to end by itself, then is
        // dropped.
        tokio::select! {
            _ = serve => {}
            _ = async {
                exit_seen.notified().await;
                tokio::time::sleep(EXIT_GRACE).await;
            } => {}
        }
        // The server's output half is dropped with `Server`: the splitter ends, then the
        // writer once the input pump (stopped here) lets go of its sender.
        input.abort();
        let _ = input.await;
        let _ = output.await;
        let _ = writer.await;
        shared.shutdown_requested.load(Ordering::SeqCst)
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(clean)
}

/// What the client can do, read once from `initialize`.
#[derive(Debug, Clone, Default)]
struct Caps {
    encoding: PositionEncoding,
    pull: bool,
    diagnostic_refresh: bool,
    inlay_refresh: bool,
    dynamic_watch: bool,
    relative_patterns: bool,
    config_pull: bool,
    document_changes: bool,
    apply_edit: bool,
}

impl Caps {
    fn from_client(c: &lsp::ClientCapabilities) -> Self {
        let ws = c.workspace.as_ref();
        let watch = ws.and_then(|w| w.did_change_watched_files.as_ref());
        Caps {
            encoding: convert::negotiate_encoding(
                c.general
                    .as_ref()
                    .and_then(|g| g.position_encodings.as_deref()),
            ),
            pull: c
                .text_document
                .as_ref()
                .is_some_and(|t| t.diagnostic.is_some()),
            diagnostic_refresh: ws
                .and_then(|w| w.diagnostics.as_ref())
                .and_then(|d| d.refresh_support)
                .unwrap_or(false),
            inlay_refresh: ws
                .and_then(|w| w.inlay_hint.as_ref())
                .and_then(|d| d.refresh_support)
                .unwrap_or(false),
            dynamic_watch: watch.and_then(|w| w.dynamic_registration).unwrap_or(false),
            relative_patterns: watch
                .and_then(|w| w.relative_pattern_support)
                .unwrap_or(false),
            config_pull: ws.and_then(|w| w.configuration).unwrap_or(false),
            document_changes: ws
                .and_then(|w| w.workspace_edit.as_ref())
                .and_then(|e| e.document_changes)
                .unwrap_or(false),
            apply_edit: ws.and_then(|w| w.apply_edit).unwrap_or(false),
        }
    }
}

/// Editor settings and the resolver built from them.
struct ConfigState {
    settings: ClientSettings,
    resolver: Arc<Resolver>,
    root: PathBuf,
}

/// A publication for the ordered queue.
struct Publish {
    uri: lsp::Uri,
    diagnostics: Vec<lsp::Diagnostic>,
    version: Option<i32>,
}

/// State shared by the handlers and the lint tasks.
struct Shared {
    client: Client,
    docs: Mutex<HashMap<lsp::Uri, Document>>,
    caps: RwLock<Caps>,
    config: RwLock<ConfigState>,
    /// Bumped on every settings or config reload; results of older generations are re-done.
    generation: AtomicU64,
    next_epoch: AtomicU64,
    publish: mpsc::UnboundedSender<Publish>,
    shutdown_requested: AtomicBool,
    /// The watchers cellguard wants the client to hold; [`watcher_registrar`] brings the
    /// client's registration to it. Handlers only ever set it, never wait for the client.
    watch_wanted: tokio::sync::watch::Sender<Option<WatchSet>>,
    /// Watch globs the client holds (as far as its answers tell), for the debug information.
    watch_registered: Arc<Mutex<Option<BTreeSet<String>>>>,
    /// Every config, extended config and knowledge-base path that was part of an open
    /// document's project since documents were last all closed: still watched when a broken
    /// file drops out of the project, so that fixing it reloads (issue 5 L7-1).
    watch_sticky: Mutex<BTreeSet<PathBuf>>,
    /// Asks [`settings_puller`] to pull `workspace/configuration`: `Some(force)` when a pull
    /// is pending, `force` meaning reload even when the settings did not change.
    settings_pull: Arc<(Mutex<Option<bool>>, tokio::sync::Notify)>,
    /// Config errors already shown (cleared on reload), so each is shown once.
    reported: Mutex<HashSet<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|e| e.into_inner())
}

/// The language server.
pub struct Backend {
    shared: Arc<Shared>,
}

impl Backend {
    /// A backend talking to `client`. Must be called inside a tokio runtime (it starts the
    /// publication task).
    pub fn new(client: Client) -> Self {
        let (watch_wanted, wanted) = tokio::sync::watch::channel(None);
        let watch_registered = Arc::new(Mutex::new(None));
        tokio::spawn(watcher_registrar(
            client.clone(),
            wanted,
            watch_registered.clone(),
        ));
        let (tx, mut rx) = mpsc::unbounded_channel::<Publish>();
        let publisher = client.clone();
        tokio::spawn(async move {
            while let Some(p) = rx.recv().await {
                publisher
                    .publish_diagnostics(p.uri, p.diagnostics, p.version)
                    .await;
            }
        });
        let root = std::env::current_dir().unwrap_or_default();
        let shared = Arc::new(Shared {
            client,
            docs: Mutex::new(HashMap::new()),
            caps: RwLock::new(Caps::default()),
            config: RwLock::new(ConfigState {
                settings: ClientSettings::default(),
                resolver: Arc::new(Resolver::new(Overrides::default())),
                root,
            }),
            generation: AtomicU64::new(0),
            next_epoch: AtomicU64::new(1),
            publish: tx,
            shutdown_requested: AtomicBool::new(false),
            watch_wanted,
            watch_registered,
            watch_sticky: Mutex::new(BTreeSet::new()),
            settings_pull: Arc::new((Mutex::new(None), tokio::sync::Notify::new())),
            reported: Mutex::new(HashSet::new()),
        });
        tokio::spawn(settings_puller(Arc::downgrade(&shared)));
        Backend { shared }
    }
}

/// The path a document is checked as: its file path, or for `untitled:` and other schemes a
/// virtual file in the workspace root named after the URI's last segment (with `.py`/`.md`
/// added from the language when it has no extension).
fn document_path(uri: &lsp::Uri, language: Language, root: &Path) -> PathBuf {
    if uri.scheme().as_str().eq_ignore_ascii_case("file") {
        if let Some(p) = uri.to_file_path() {
            return p.into_owned();
        }
    }
    let decoded = uri.path().decode().to_string_lossy().into_owned();
    let name = decoded
        .rsplit(['/', '\\', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or("untitled")
        .to_string();
    let mut path = root.join(name);
    if path.extension().is_none() {
        match language {
            Language::Python => {
                path.set_extension("py");
            }
            Language::Markdown => {
                path.set_extension("md");
            }
            Language::Other => {}
        }
    }
    path
}

/// Builds the resolver for `settings`; problems are returned as messages (the server then
/// carries on with what could be built).
fn build_resolver(settings: &ClientSettings, root: &Path) -> (Arc<Resolver>, Vec<String>) {
    let mut errors = Vec::new();
    let mut overrides = match settings.overrides(root) {
        Ok(o) => o,
        Err(e) => {
            errors.push(e);
            Overrides::default()
        }
    };
    overrides.knowledge_base.retain(|p| {
        let ok = p.exists();
        if !ok {
            errors.push(format!(
                "setting `knowledgeBase`: `{}` does not exist",
                p.display()
            ));
        }
        ok
    });
    if let Some(cfg) = settings.configuration_path(root) {
        match Resolver::with_config(&cfg, overrides.clone()) {
            Ok(r) => return (Arc::new(r), errors),
            Err(e) => errors.push(format!("setting `configuration`: {e}")),
        }
    }
    // Validate the overrides once (unknown selectors), so the error is shown even before a
    // document opens.
    if let Err(e) =
        cellguard_lints::config::Settings::resolve(&Default::default(), None, &overrides)
    {
        // `e` names its origin: `editor settings: unknown rule selector ...`.
        errors.push(e.to_string());
        overrides = Overrides {
            knowledge_base: overrides.knowledge_base,
            ..Overrides::default()
        };
    }
    (Arc::new(Resolver::new(overrides)), errors)
}

impl Shared {
    fn caps(&self) -> Caps {
        read(&self.caps).clone()
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Starts the lint task of `doc` unless it runs or the current text is already linted.
    fn schedule(self: &Arc<Self>, doc: &mut Document) {
        if doc.lint_running {
            return;
        }
        let generation = self.generation();
        if doc.linted_version == Some(doc.version)
            && doc
                .result
                .as_ref()
                .is_some_and(|r| r.generation >= generation)
        {
            return;
        }
        doc.lint_running = true;
        let shared = self.clone();
        let uri = doc.uri.clone();
        let epoch = doc.epoch;
        tokio::spawn(async move { shared.lint_loop(uri, epoch).await });
    }

    /// A snapshot of `doc` for a lint or a parse under settings `generation`.
    fn snapshot(&self, doc: &Document, generation: u64) -> Snapshot {
        let (resolver, lint_enabled) = {
            let c = read(&self.config);
            (c.resolver.clone(), c.settings.lint_enable)
        };
        Snapshot {
            epoch: doc.epoch,
            version: doc.version,
            generation,
            rope: doc.rope.clone(),
            path: doc.path.clone(),
            language: doc.language,
            tree: doc.tree.clone(),
            cells: doc.cells.clone(),
            rules: doc.rules.clone(),
            resolver,
            encoding: self.caps().encoding,
            lint_enabled,
        }
    }

    /// Lints a document until its latest text (and settings generation) is linted. A lint
    /// whose version is superseded while it runs is abandoned (after its parse or its rules)
    /// and the loop goes on with the latest text.
    async fn lint_loop(self: Arc<Self>, uri: lsp::Uri, epoch: u64) {
        loop {
            let generation = self.generation();
            let (snap, previous_project, latest) = {
                let mut docs = lock(&self.docs);
                let Some(doc) = docs.get_mut(&uri) else {
                    return;
                };
                if doc.epoch != epoch {
                    return;
                }
                // The generation is read again under the documents lock: `reload` bumps it
                // before taking the lock, and skips documents whose lint is running, so a bump
                // that happened after `generation` was read above must keep this loop going
                // (else the new settings would never be linted).
                let current = self.generation();
                if doc.linted_version == Some(doc.version)
                    && doc.result.as_ref().is_some_and(|r| r.generation >= current)
                {
                    doc.lint_running = false;
                    return;
                }
                (
                    self.snapshot(doc, generation),
                    doc.result.as_ref().map(|r| r.project.clone()),
                    doc.latest.clone(),
                )
            };
            let (version, rope, path) = (snap.version, snap.rope.clone(), snap.path.clone());
            let superseded = move || latest.load(Ordering::SeqCst) != version;
            let run = move || analysis::run_unless(snap, superseded);
            let result = match tokio::task::spawn_blocking(run).await {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => {
                    let msg = format!(
                        "cellguard: linting {} failed: {e}; please report this with the file",
                        uri.as_str()
                    );
                    self.client.log_message(lsp::MessageType::ERROR, msg).await;
                    LintResult::empty(epoch, version, generation, path, rope)
                }
            };
            let result = Arc::new(result);
            let pull = self.caps().pull;
            {
                let mut docs = lock(&self.docs);
                let Some(doc) = docs.get_mut(&uri) else {
                    return;
                };
                if doc.epoch != epoch {
                    return;
                }
                doc.cells = result.cell_cache.clone();
                doc.rules = result.rule_cache.clone();
                if doc.version == version {
                    doc.tree = result.whole_tree.clone();
                    doc.linted_version = Some(version);
                    doc.result = Some(result.clone());
                    // The lint result serves requests from now on.
                    doc.syntax = None;
                    doc.results.send_replace(Some(result.clone()));
                    if !pull {
                        // Sent under the documents lock: `didClose` clears through the same
                        // queue under the same lock, so a clear is never overtaken.
                        let _ = self.publish.send(Publish {
                            uri: uri.clone(),
                            diagnostics: result.lsp.clone(),
                            version: Some(version),
                        });
                    }
                } else if doc.tree.is_none() {
                    // A stale first parse is still a better old tree than none, once the edits
                    // made since are replayed on it.
                    doc.tree = doc.replay_edits_since(version, result.whole_tree.clone());
                }
                doc.prune_edits(version);
            }
            if let Some(e) = &result.config_error {
                self.report_once(e.clone()).await;
            }
            let project_changed = previous_project
                .as_ref()
                .is_none_or(|p| !Arc::ptr_eq(p, &result.project));
            if project_changed {
                self.ensure_watchers();
            }
        }
    }

    /// Shows an error message once per distinct text (until the next reload).
    async fn report_once(&self, message: String) {
        if lock(&self.reported).insert(message.clone()) {
            self.client
                .show_message(lsp::MessageType::ERROR, format!("cellguard: {message}"))
                .await;
        }
    }

    /// Waits for the result of the document's current text (and current settings).
    async fn fresh_result(
        self: &Arc<Self>,
        uri: &lsp::Uri,
        timeout: Duration,
    ) -> Option<Arc<LintResult>> {
        let generation = self.generation();
        let (mut rx, version) = {
            let mut docs = lock(&self.docs);
            let doc = docs.get_mut(uri)?;
            if let Some(r) = &doc.result {
                if r.version == doc.version && r.generation >= generation {
                    return Some(r.clone());
                }
            }
            self.schedule(doc);
            (doc.results.subscribe(), doc.version)
        };
        let wait = async {
            loop {
                if let Some(r) = rx.borrow_and_update().as_ref() {
                    if r.version >= version && r.generation >= generation {
                        return Some(r.clone());
                    }
                }
                if rx.changed().await.is_err() {
                    return None;
                }
            }
        };
        tokio::time::timeout(timeout, wait).await.ok().flatten()
    }

    /// The document's current text parsed, for hover, completion, definition and inlay hints:
    /// the lint result of the current version when there is one, else a parse of the current
    /// text without rules (`analysis::parse_only`, shared by concurrent requests). Never waits
    /// for a running lint.
    async fn current_syntax(self: &Arc<Self>, uri: &lsp::Uri) -> Option<Arc<LintResult>> {
        let parsing = lock(&self.docs).get(uri)?.syntax_lock.clone();
        let _one_at_a_time = parsing.lock().await;
        let snap = {
            let mut docs = lock(&self.docs);
            let doc = docs.get_mut(uri)?;
            let generation = self.generation();
            let current = |r: &Option<Arc<LintResult>>| {
                r.as_ref()
                    .filter(|r| r.version == doc.version && r.generation >= generation)
                    .cloned()
            };
            if let Some(r) = current(&doc.result).or_else(|| current(&doc.syntax)) {
                return Some(r);
            }
            self.schedule(doc);
            self.snapshot(doc, generation)
        };
        let r = Arc::new(
            tokio::task::spawn_blocking(move || analysis::parse_only(snap))
                .await
                .ok()?,
        );
        let mut docs = lock(&self.docs);
        if let Some(doc) = docs.get_mut(uri) {
            if doc.epoch == r.epoch && doc.version == r.version {
                // The new trees are the best old trees for the lint of this text too.
                doc.tree = r.whole_tree.clone();
                doc.cells = r.cell_cache.clone();
                doc.syntax = Some(r.clone());
            }
        }
        Some(r)
    }

    /// Re-reads configuration and re-diagnoses every open document.
    async fn reload(self: &Arc<Self>, rebuild_resolver: bool) {
        if rebuild_resolver {
            let errors = {
                let mut c = write(&self.config);
                let (resolver, errors) = build_resolver(&c.settings, &c.root);
                c.resolver = resolver;
                errors
            };
            lock(&self.reported).clear();
            for e in errors {
                self.report_once(e).await;
            }
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        {
            let mut docs = lock(&self.docs);
            for doc in docs.values_mut() {
                self.schedule(doc);
            }
        }
        let caps = self.caps();
        if caps.pull && caps.diagnostic_refresh {
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ = tokio::time::timeout(
                    CLIENT_REQUEST_TIMEOUT,
                    client.workspace_diagnostic_refresh(),
                )
                .await;
            });
        }
        if caps.inlay_refresh {
            let client = self.client.clone();
            tokio::spawn(async move {
                let _ =
                    tokio::time::timeout(CLIENT_REQUEST_TIMEOUT, client.inlay_hint_refresh()).await;
            });
        }
        self.ensure_watchers();
    }

    /// Applies new editor settings.
    async fn apply_settings(self: &Arc<Self>, value: &Value) {
        let (settings, warnings) = ClientSettings::from_value(value);
        for w in warnings {
            self.client
                .show_message(lsp::MessageType::WARNING, format!("cellguard: {w}"))
                .await;
        }
        write(&self.config).settings = settings;
        self.reload(true).await;
    }

    /// Asks the client for the `cellguard` settings section (`workspace/configuration`).
    async fn pull_settings(&self) -> Option<Value> {
        let item = lsp::ConfigurationItem {
            scope_uri: None,
            section: Some("cellguard".to_string()),
        };
        let answer = tokio::time::timeout(
            CLIENT_REQUEST_TIMEOUT,
            self.client.configuration(vec![item]),
        )
        .await
        .ok()?
        .ok()?;
        answer
            .into_iter()
            .next()
            .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
    }

    /// Files whose change requires a reload: config files in use (with the files they
    /// extend), the `configuration` setting, and knowledge-base files and directories.
    fn watched_paths(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        {
            let c = read(&self.config);
            if let Some(p) = c.settings.configuration_path(&c.root) {
                out.push(p);
            }
            if let Ok(o) = c.settings.overrides(&c.root) {
                out.extend(o.knowledge_base);
            }
        }
        let docs = lock(&self.docs);
        for doc in docs.values() {
            if let Some(r) = &doc.result {
                if let Some(c) = &r.project.config {
                    out.push(c.path.clone());
                    out.extend(c.extended.iter().cloned());
                }
                out.extend(r.project.kb_paths.iter().cloned());
            }
        }
        let current: BTreeSet<PathBuf> = out.iter().flat_map(|p| normal_forms(p)).collect();
        // Paths of a project stay watched while a document is open, even when a broken file
        // drops them (and itself) from the project; with no document open they are forgotten.
        let mut sticky = lock(&self.watch_sticky);
        if docs.is_empty() {
            sticky.clear();
        } else {
            sticky.extend(current.iter().cloned());
        }
        current.union(&sticky).cloned().collect()
    }

    /// True when a changed file affects configuration or knowledge bases.
    fn is_relevant_change(&self, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if CONFIG_NAMES.contains(&name) {
            return true;
        }
        let forms = normal_forms(path);
        let watched = self.watched_paths();
        forms
            .iter()
            .any(|p| watched.iter().any(|w| p == w || p.starts_with(w)))
    }

    /// Sets the file watchers cellguard wants (config names and the files in
    /// [`Self::watched_paths`]) when the client supports dynamic registration. Never waits for
    /// the client: [`watcher_registrar`] registers them, so no handler or lint task holds up
    /// the message loop on a client round-trip (issue 5 L7-12).
    fn ensure_watchers(&self) {
        let caps = self.caps();
        if !caps.dynamic_watch {
            return;
        }
        let mut globs: BTreeSet<String> = CONFIG_NAMES.iter().map(|n| format!("**/{n}")).collect();
        for p in self.watched_paths() {
            let s = p.to_string_lossy().replace('\\', "/");
            if p.is_dir() {
                globs.insert(format!("{}/**", s.trim_end_matches('/')));
            } else {
                globs.insert(s);
            }
        }
        let wanted = WatchSet {
            globs,
            relative: caps.relative_patterns,
        };
        self.watch_wanted.send_if_modified(|w| {
            if w.as_ref() == Some(&wanted) {
                return false;
            }
            *w = Some(wanted);
            true
        });
    }

    /// Asks [`settings_puller`] to pull the settings from the client; with `force`, open
    /// documents are re-diagnosed even when the settings did not change. Pulls asked for
    /// while one runs collapse into one more.
    fn request_settings_pull(&self, force: bool) {
        let (pending, notify) = &*self.settings_pull;
        {
            let mut p = lock(pending);
            *p = Some(p.unwrap_or(false) || force);
        }
        notify.notify_one();
    }

    /// The text of `cellguard.printDebugInformation`.
    fn debug_information(&self) -> String {
        use std::fmt::Write as _;
        let caps = self.caps();
        let mut s = String::new();
        let _ = writeln!(s, "cellguard {}", env!("CARGO_PKG_VERSION"));
        if let Ok(exe) = std::env::current_exe() {
            let _ = writeln!(s, "executable: {}", exe.display());
        }
        let _ = writeln!(
            s,
            "position encoding: {}",
            convert::encoding_kind(caps.encoding).as_str()
        );
        let _ = writeln!(
            s,
            "diagnostics: {}",
            if caps.pull {
                "pull (textDocument/diagnostic)"
            } else {
                "push (textDocument/publishDiagnostics)"
            }
        );
        {
            let c = read(&self.config);
            let _ = writeln!(s, "workspace root: {}", c.root.display());
            let _ = writeln!(
                s,
                "editor settings: {}",
                serde_json::to_string(&c.settings).unwrap_or_default()
            );
        }
        if let Some(globs) = lock(&self.watch_registered).clone() {
            let _ = writeln!(
                s,
                "watched files: {}",
                globs.into_iter().collect::<Vec<_>>().join(", ")
            );
        } else {
            let _ = writeln!(
                s,
                "watched files: none registered (the client watches no files for cellguard)"
            );
        }
        let docs = lock(&self.docs);
        let _ = writeln!(s, "open documents: {}", docs.len());
        let mut uris: Vec<_> = docs.keys().collect();
        uris.sort();
        for uri in uris {
            let doc = &docs[uri];
            let _ = writeln!(
                s,
                "- {} (version {}, {:?})",
                uri.as_str(),
                doc.version,
                doc.language
            );
            match &doc.result {
                Some(r) => {
                    match &r.project.config {
                        Some(c) => {
                            let _ = write!(s, "  config: {}", c.path.display());
                            for e in &c.extended {
                                let _ = write!(s, " (extends {})", lexical_absolute(e).display());
                            }
                            s.push('\n');
                        }
                        None => {
                            let _ = writeln!(s, "  config: none (built-in defaults)");
                        }
                    }
                    if let Some(e) = &r.config_error {
                        let _ = writeln!(s, "  config error: {e}");
                    }
                    // The inputs as configured: KB files, and the source directories and
                    // Python files that were scanned.
                    let _ = writeln!(
                        s,
                        "  knowledge base: {} actions, {} pseudo keys, from {} input(s)",
                        r.project.kb.actions.len(),
                        r.project.kb.pseudo_keys.len(),
                        r.project.kb_paths.len()
                    );
                    for src in &r.project.kb_paths {
                        let kind = if src.is_dir() {
                            " (sources, scanned)"
                        } else {
                            ""
                        };
                        let _ = writeln!(s, "    {}{kind}", src.display());
                    }
                    let _ = writeln!(
                        s,
                        "  profile: {:?}, dialect: {:?}, extraction: {:?}, cells: {}, diagnostics: {}",
                        r.settings.profile,
                        r.settings.dialect,
                        r.settings.extract,
                        r.cells.len(),
                        r.diagnostics.len()
                    );
                }
                None => {
                    let _ = writeln!(s, "  not linted yet");
                }
            }
        }
        s
    }
}

/// `path` made absolute with `.` and `..` resolved lexically (`team/../shared/base.toml` is
/// `shared/base.toml`), as a client reports a changed file.
fn lexical_absolute(path: &Path) -> PathBuf {
    use std::path::Component;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                // `..` at the root stays at the root.
                if !matches!(
                    out.components().next_back(),
                    None | Some(Component::RootDir) | Some(Component::Prefix(_))
                ) {
                    out.pop();
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The forms under which a client may report a change to `path`: the lexically normalised
/// absolute path, and the canonical one (symlinks resolved) when it exists and differs. Both
/// are watched and matched, so config and knowledge-base files reached through `..` or a
/// symlink are reloaded (issue 5 S4).
fn normal_forms(path: &Path) -> Vec<PathBuf> {
    let lexical = lexical_absolute(path);
    let mut out = vec![lexical.clone()];
    if let Ok(canonical) = std::fs::canonicalize(&lexical).or_else(|_| std::fs::canonicalize(path))
    {
        if canonical != lexical {
            out.push(canonical);
        }
    }
    out
}

/// A watcher glob: relative to its parent directory when the client supports relative
/// patterns (needed for files outside the workspace), else the plain glob.
fn watch_pattern(glob: &str, relative: bool) -> lsp::GlobPattern {
    if relative && glob.starts_with('/') {
        let (base, pattern) = match glob.strip_suffix("/**") {
            Some(dir) => (dir.to_string(), "**".to_string()),
            None => {
                let p = Path::new(glob);
                (
                    p.parent()
                        .map(|d| d.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    p.file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                )
            }
        };
        if let Some(uri) = lsp::Uri::from_file_path(&base) {
            return lsp::GlobPattern::Relative(lsp::RelativePattern {
                base_uri: lsp::OneOf::Right(uri),
                pattern,
            });
        }
    }
    lsp::GlobPattern::String(glob.to_string())
}

/// File watchers cellguard wants registered: globs, and whether the client takes relative
/// patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WatchSet {
    globs: BTreeSet<String>,
    relative: bool,
}

/// The one task that (un)registers file watchers with the client: it waits for each answer
/// (up to [`CLIENT_REQUEST_TIMEOUT`]) before sending the next request, so unregistrations
/// and registrations reach the client in order, and wanted sets that change meanwhile
/// collapse into the latest. Handlers never await these round-trips: tower-lsp reads the
/// client's answers on the same loop that feeds the handlers (at most 32 at once, 100
/// queued), so a handler waiting for an answer behind a full queue waits for ever
/// (issue 5 L7-12).
async fn watcher_registrar(
    client: Client,
    mut wanted: tokio::sync::watch::Receiver<Option<WatchSet>>,
    registered: Arc<Mutex<Option<BTreeSet<String>>>>,
) {
    const ID: &str = "cellguard-watched-files";
    const METHOD: &str = "workspace/didChangeWatchedFiles";
    // Whether the client may hold our registration (a timed-out register counts: the
    // request was sent).
    let mut held = false;
    while wanted.changed().await.is_ok() {
        let Some(want) = wanted.borrow_and_update().clone() else {
            continue;
        };
        if held && lock(&registered).as_ref() == Some(&want.globs) {
            continue;
        }
        if held {
            let _ = tokio::time::timeout(
                CLIENT_REQUEST_TIMEOUT,
                client.unregister_capability(vec![lsp::Unregistration {
                    id: ID.to_string(),
                    method: METHOD.to_string(),
                }]),
            )
            .await;
            held = false;
            *lock(&registered) = None;
        }
        let watchers: Vec<lsp::FileSystemWatcher> = want
            .globs
            .iter()
            .map(|g| lsp::FileSystemWatcher {
                glob_pattern: watch_pattern(g, want.relative),
                kind: None,
            })
            .collect();
        let options = lsp::DidChangeWatchedFilesRegistrationOptions { watchers };
        let answer = tokio::time::timeout(
            CLIENT_REQUEST_TIMEOUT,
            client.register_capability(vec![lsp::Registration {
                id: ID.to_string(),
                method: METHOD.to_string(),
                register_options: serde_json::to_value(options).ok(),
            }]),
        )
        .await;
        if !matches!(answer, Ok(Err(_))) {
            held = true;
            *lock(&registered) = Some(want.globs);
        }
    }
}

/// The one task that pulls `workspace/configuration` when [`Shared::request_settings_pull`]
/// asks, off the message loop (see [`watcher_registrar`]); ends with the server.
async fn settings_puller(shared: std::sync::Weak<Shared>) {
    let wake = match shared.upgrade() {
        Some(s) => s.settings_pull.clone(),
        None => return,
    };
    loop {
        wake.1.notified().await;
        let Some(force) = lock(&wake.0).take() else {
            continue;
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        match shared.pull_settings().await {
            Some(v) => {
                let (settings, _) = ClientSettings::from_value(&v);
                if force || read(&shared.config).settings != settings {
                    shared.apply_settings(&v).await;
                }
            }
            // Nothing to read: still re-read config files, as the user expects a refresh.
            None if force => shared.reload(true).await,
            None => {}
        }
    }
}

fn invalid_params(msg: impl Into<String>) -> RpcError {
    RpcError::invalid_params(msg.into())
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: lsp::InitializeParams) -> RpcResult<lsp::InitializeResult> {
        let caps = Caps::from_client(&params.capabilities);
        *write(&self.shared.caps) = caps.clone();
        #[allow(deprecated)]
        let root = params
            .workspace_folders
            .as_ref()
            .and_then(|f| f.first())
            .and_then(|f| f.uri.to_file_path().map(|p| p.into_owned()))
            .or_else(|| {
                params
                    .root_uri
                    .as_ref()
                    .and_then(|u| u.to_file_path().map(|p| p.into_owned()))
            })
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let (settings, warnings) = params
            .initialization_options
            .as_ref()
            .map(ClientSettings::from_value)
            .unwrap_or_default();
        let (resolver, errors) = build_resolver(&settings, &root);
        {
            let mut c = write(&self.shared.config);
            c.settings = settings;
            c.resolver = resolver;
            c.root = root;
        }
        // Shown once the client is initialized (it may not accept messages before).
        let shared = self.shared.clone();
        let notes: Vec<(lsp::MessageType, String)> = warnings
            .into_iter()
            .map(|w| (lsp::MessageType::WARNING, format!("cellguard: {w}")))
            .chain(
                errors
                    .into_iter()
                    .map(|e| (lsp::MessageType::ERROR, format!("cellguard: {e}"))),
            )
            .collect();
        if !notes.is_empty() {
            tokio::spawn(async move {
                for (t, m) in notes {
                    lock(&shared.reported).insert(m.trim_start_matches("cellguard: ").to_string());
                    shared.client.show_message(t, m).await;
                }
            });
        }
        let capabilities = lsp::ServerCapabilities {
            position_encoding: Some(convert::encoding_kind(caps.encoding)),
            text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
                lsp::TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                    ..Default::default()
                },
            )),
            hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
            completion_provider: Some(lsp::CompletionOptions {
                trigger_characters: Some(
                    ["\"", "'", ".", "(", ","]
                        .iter()
                        .map(|s| s.to_string())
                        .collect(),
                ),
                resolve_provider: Some(false),
                ..Default::default()
            }),
            definition_provider: Some(lsp::OneOf::Left(true)),
            code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
                lsp::CodeActionOptions {
                    code_action_kinds: Some(vec![
                        lsp::CodeActionKind::QUICKFIX,
                        lsp::CodeActionKind::new(actions::FIX_ALL_KIND),
                    ]),
                    resolve_provider: Some(false),
                    ..Default::default()
                },
            )),
            inlay_hint_provider: Some(lsp::OneOf::Left(true)),
            execute_command_provider: Some(lsp::ExecuteCommandOptions {
                commands: vec![CMD_DEBUG_INFO.to_string(), CMD_APPLY_AUTOFIX.to_string()],
                ..Default::default()
            }),
            diagnostic_provider: caps.pull.then(|| {
                lsp::DiagnosticServerCapabilities::Options(lsp::DiagnosticOptions {
                    identifier: Some("cellguard".to_string()),
                    inter_file_dependencies: false,
                    workspace_diagnostics: false,
                    ..Default::default()
                })
            }),
            ..Default::default()
        };
        Ok(lsp::InitializeResult {
            capabilities,
            server_info: Some(lsp::ServerInfo {
                name: "cellguard".to_string(),
                version: Some(env!("CARGO_PKG_VERSION").to_string()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: lsp::InitializedParams) {
        let shared = self.shared.clone();
        if shared.caps().config_pull {
            shared.request_settings_pull(false);
        }
        shared.ensure_watchers();
    }

    async fn shutdown(&self) -> RpcResult<()> {
        self.shared.shutdown_requested.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        let item = params.text_document;
        let language = Language::from_id(&item.language_id);
        let root = read(&self.shared.config).root.clone();
        let path = document_path(&item.uri, language, &root);
        let epoch = self.shared.next_epoch.fetch_add(1, Ordering::SeqCst);
        let mut docs = lock(&self.shared.docs);
        let mut doc = Document::new(
            item.uri.clone(),
            path,
            language,
            item.version,
            epoch,
            &item.text,
        );
        self.shared.schedule(&mut doc);
        docs.insert(item.uri, doc);
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        let encoding = self.shared.caps().encoding;
        let uri = params.text_document.uri;
        let problem = {
            let mut docs = lock(&self.shared.docs);
            match docs.get_mut(&uri) {
                None => Some(format!(
                    "cellguard: didChange for {} which is not open; ignored",
                    uri.as_str()
                )),
                Some(doc) => {
                    match doc.apply_changes(params.text_document.version, params.content_changes, encoding) {
                        Ok(()) => {
                            self.shared.schedule(doc);
                            None
                        }
                        Err(documents::ChangeError::StaleVersion { current, received }) => Some(format!(
                            "cellguard: didChange for {} with version {received} after version {current}; ignored",
                            uri.as_str()
                        )),
                        Err(documents::ChangeError::InvalidRange { index, range }) => Some(format!(
                            "cellguard: didChange for {} version {}: change {index} has a reversed range (start {}:{} after end {}:{}); ignored",
                            uri.as_str(),
                            params.text_document.version,
                            range.start.line,
                            range.start.character,
                            range.end.line,
                            range.end.character
                        )),
                    }
                }
            }
        };
        if let Some(msg) = problem {
            self.shared
                .client
                .log_message(lsp::MessageType::WARNING, msg)
                .await;
        }
    }

    async fn did_close(&self, params: lsp::DidCloseTextDocumentParams) {
        let pull = self.shared.caps().pull;
        let mut docs = lock(&self.shared.docs);
        if docs.remove(&params.text_document.uri).is_some() && !pull {
            let _ = self.shared.publish.send(Publish {
                uri: params.text_document.uri,
                diagnostics: Vec::new(),
                version: None,
            });
        }
    }

    async fn did_change_configuration(&self, params: lsp::DidChangeConfigurationParams) {
        let shared = self.shared.clone();
        let v = params.settings;
        let empty = v.is_null() || v.as_object().is_some_and(|o| o.is_empty());
        if empty {
            if shared.caps().config_pull {
                // Pulled off the message loop: a slow client answer must not hold it up.
                shared.request_settings_pull(true);
                return;
            }
            // Nothing to read: still re-read config files, as the user expects a refresh.
            shared.reload(true).await;
            return;
        }
        shared.apply_settings(&v).await;
    }

    async fn did_change_watched_files(&self, params: lsp::DidChangeWatchedFilesParams) {
        let shared = self.shared.clone();
        let relevant = params.changes.iter().any(|c| {
            c.uri
                .to_file_path()
                .is_some_and(|p| shared.is_relevant_change(&p))
        });
        if relevant {
            shared.reload(true).await;
        }
    }

    async fn diagnostic(
        &self,
        params: lsp::DocumentDiagnosticParams,
    ) -> RpcResult<lsp::DocumentDiagnosticReportResult> {
        let uri = params.text_document.uri;
        let open = lock(&self.shared.docs).contains_key(&uri);
        let result = self.shared.fresh_result(&uri, diagnostic_wait()).await;
        if result.is_none() && open {
            // The lint of the current text is still running (a very large document): an empty
            // report would clear the document's diagnostics, and nothing would ask again. The
            // LSP's answer is `ServerCancelled` with `retriggerRequest`: the client re-pulls.
            return Err(RpcError {
                code: tower_lsp_server::jsonrpc::ErrorCode::ServerError(SERVER_CANCELLED),
                message: "cellguard is still linting this document; ask again".into(),
                data: Some(serde_json::json!({"retriggerRequest": true})),
            });
        }
        let full = |items: Vec<lsp::Diagnostic>, result_id: Option<String>| {
            lsp::DocumentDiagnosticReportResult::Report(lsp::DocumentDiagnosticReport::Full(
                lsp::RelatedFullDocumentDiagnosticReport {
                    related_documents: None,
                    full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport {
                        result_id,
                        items,
                    },
                },
            ))
        };
        let Some(r) = result else {
            return Ok(full(Vec::new(), None));
        };
        let result_id = format!("{}.{}.{}", r.epoch, r.version, r.generation);
        if params.previous_result_id.as_deref() == Some(result_id.as_str()) {
            return Ok(lsp::DocumentDiagnosticReportResult::Report(
                lsp::DocumentDiagnosticReport::Unchanged(
                    lsp::RelatedUnchangedDocumentDiagnosticReport {
                        related_documents: None,
                        unchanged_document_diagnostic_report:
                            lsp::UnchangedDocumentDiagnosticReport { result_id },
                    },
                ),
            ));
        }
        Ok(full(r.lsp.clone(), Some(result_id)))
    }

    async fn code_action(
        &self,
        params: lsp::CodeActionParams,
    ) -> RpcResult<Option<lsp::CodeActionResponse>> {
        let uri = params.text_document.uri;
        let caps = self.shared.caps();
        let settings = read(&self.shared.config).settings.clone();
        let only = params.context.only.as_deref();
        if !lock(&self.shared.docs).contains_key(&uri) {
            return Ok(None);
        }
        let wants_quickfix = actions::kind_requested(only, "quickfix");
        // Quick fixes come from the diagnostics the client sends: with none (a code action
        // request on every cursor move) nothing needs the lint of the current text, so the
        // request never waits for it; with some, they are matched against it (S3).
        // Without `only` (the menu a user opens right after typing), the lint of the current
        // text is waited for briefly, so fix-all is offered from the current text rather
        // than left out while that lint runs (issue 5 L7-7).
        let stored = || {
            lock(&self.shared.docs)
                .get(&uri)
                .and_then(|d| d.result.clone())
        };
        let current = if wants_quickfix && !params.context.diagnostics.is_empty() {
            self.shared.fresh_result(&uri, FEATURE_WAIT).await
        } else if only.is_none() {
            match self.shared.fresh_result(&uri, MENU_WAIT).await {
                Some(r) => Some(r),
                None => stored(),
            }
        } else {
            stored()
        };
        // The version the actions must fit: a diagnostic (and its stored fix) of any other
        // version is re-found in the current result or dropped.
        let Some(current_version) = lock(&self.shared.docs).get(&uri).map(|d| d.version) else {
            return Ok(None);
        };
        let mut out = Vec::new();
        if wants_quickfix {
            // Clients that drop `data`, or send a diagnostic of an older version (its range
            // moved with the text by the client, or not), get actions from the current result.
            let fallback = |d: &lsp::Diagnostic| {
                let r = current.as_ref().filter(|r| r.version == current_version)?;
                r.lsp
                    .iter()
                    .find(|x| x.range == d.range && x.code == d.code)
                    .and_then(convert::diagnostic_data)
            };
            let ignore_for = |data: &convert::DiagnosticData| {
                let r = current.as_ref().filter(|r| r.version == data.version)?;
                let d = r
                    .diagnostics
                    .get(data.index)
                    .filter(|d| d.rule.code == data.code)?;
                let e = analysis::ignore_edit(r, d)?;
                Some(convert::DataEdit {
                    range: convert::range_of(&r.rope, e.range, caps.encoding),
                    new_text: e.content,
                })
            };
            out.extend(actions::quick_fixes(
                &uri,
                &params.context.diagnostics,
                &settings,
                caps.document_changes,
                Some(current_version),
                fallback,
                ignore_for,
            ));
        }
        // Fix-all when asked for by kind (`only`, e.g. on save): computed for the current text,
        // waiting for its lint. Without `only` (the light bulb, on every cursor move) it is
        // offered when the current text is linted (waited for up to MENU_WAIT above) and has
        // a safe fix.
        let fix_all = match only {
            Some(_) => actions::kind_requested(only, actions::FIX_ALL_KIND),
            None => current.as_ref().is_some_and(|r| {
                r.version == current_version
                    && r.generation >= self.shared.generation()
                    && r.diagnostics.iter().any(|d| {
                        d.fix
                            .as_ref()
                            .is_some_and(|f| convert::is_fix_all_applicable(f.applicability))
                    })
            }),
        };
        if settings.fix_all && fix_all {
            if let Some(action) = self.fix_all_action(&uri, &caps).await {
                out.push(lsp::CodeActionOrCommand::CodeAction(action));
            }
        }
        Ok(Some(out))
    }

    async fn hover(&self, params: lsp::HoverParams) -> RpcResult<Option<lsp::Hover>> {
        let p = params.text_document_position_params;
        let enc = self.shared.caps().encoding;
        let Some(r) = self.shared.current_syntax(&p.text_document.uri).await else {
            return Ok(None);
        };
        let offset = convert::offset_of(&r.rope, p.position, enc);
        Ok(ide::hover(&r, offset, enc))
    }

    async fn completion(
        &self,
        params: lsp::CompletionParams,
    ) -> RpcResult<Option<lsp::CompletionResponse>> {
        let p = params.text_document_position;
        let enc = self.shared.caps().encoding;
        let Some(r) = self.shared.current_syntax(&p.text_document.uri).await else {
            return Ok(None);
        };
        let offset = convert::offset_of(&r.rope, p.position, enc);
        let items = ide::completion(&r, offset, enc);
        Ok((!items.is_empty()).then_some(lsp::CompletionResponse::Array(items)))
    }

    async fn goto_definition(
        &self,
        params: lsp::GotoDefinitionParams,
    ) -> RpcResult<Option<lsp::GotoDefinitionResponse>> {
        let p = params.text_document_position_params;
        let enc = self.shared.caps().encoding;
        let Some(r) = self.shared.current_syntax(&p.text_document.uri).await else {
            return Ok(None);
        };
        let offset = convert::offset_of(&r.rope, p.position, enc);
        Ok(ide::definition(&r, offset, enc).map(lsp::GotoDefinitionResponse::Scalar))
    }

    async fn inlay_hint(
        &self,
        params: lsp::InlayHintParams,
    ) -> RpcResult<Option<Vec<lsp::InlayHint>>> {
        if !read(&self.shared.config).settings.inlay_hints {
            return Ok(None);
        }
        let enc = self.shared.caps().encoding;
        let Some(r) = self.shared.current_syntax(&params.text_document.uri).await else {
            return Ok(None);
        };
        let range = convert::text_range_of(&r.rope, params.range, enc);
        Ok(Some(ide::inlay_hints(&r, range, enc)))
    }

    async fn execute_command(&self, params: lsp::ExecuteCommandParams) -> RpcResult<Option<Value>> {
        match params.command.as_str() {
            CMD_DEBUG_INFO => {
                let info = self.shared.debug_information();
                self.shared
                    .client
                    .log_message(lsp::MessageType::INFO, info.clone())
                    .await;
                Ok(Some(Value::String(info)))
            }
            CMD_APPLY_AUTOFIX => {
                let arg = params.arguments.first().ok_or_else(|| {
                    invalid_params(format!("{CMD_APPLY_AUTOFIX} needs a document URI argument"))
                })?;
                let uri_str = arg
                    .as_str()
                    .or_else(|| arg.get("uri").and_then(Value::as_str))
                    .ok_or_else(|| invalid_params("expected a URI string or {\"uri\": ...}"))?;
                let uri: lsp::Uri = uri_str
                    .parse()
                    .map_err(|e| invalid_params(format!("invalid URI `{uri_str}`: {e}")))?;
                let caps = self.shared.caps();
                if let Some(action) = self.fix_all_action(&uri, &caps).await {
                    if let Some(edit) = action.edit {
                        if !caps.apply_edit {
                            return Ok(Some(serde_json::to_value(edit).unwrap_or(Value::Null)));
                        }
                        let applied = tokio::time::timeout(
                            CLIENT_REQUEST_TIMEOUT,
                            self.shared.client.apply_edit(edit),
                        )
                        .await;
                        let why = match applied {
                            Ok(Ok(r)) if r.applied => None,
                            Ok(Ok(r)) => Some(match r.failure_reason {
                                Some(reason) => {
                                    format!("the client did not apply the fixes: {reason}")
                                }
                                None => "the client did not apply the fixes".to_string(),
                            }),
                            Ok(Err(e)) => Some(format!(
                                "the client answered workspace/applyEdit with an error: {}",
                                e.message
                            )),
                            Err(_) => Some(format!(
                                "the client did not answer workspace/applyEdit within {} s",
                                CLIENT_REQUEST_TIMEOUT.as_secs()
                            )),
                        };
                        if let Some(message) = why {
                            // LSP's RequestFailed: the request was valid, the work could not
                            // be done (not an internal error of the server).
                            return Err(RpcError {
                                code: tower_lsp_server::jsonrpc::ErrorCode::ServerError(
                                    REQUEST_FAILED,
                                ),
                                message: format!("{CMD_APPLY_AUTOFIX}: {message}").into(),
                                data: None,
                            });
                        }
                    }
                }
                Ok(None)
            }
            other => Err(invalid_params(format!("unknown command `{other}`"))),
        }
    }
}

impl Backend {
    /// `source.fixAll.cellguard` for the document's current text, `None` when there is
    /// nothing to fix.
    async fn fix_all_action(&self, uri: &lsp::Uri, caps: &Caps) -> Option<lsp::CodeAction> {
        let r = self.shared.fresh_result(uri, DIAGNOSTIC_WAIT).await?;
        let r2 = r.clone();
        let fixed = tokio::task::spawn_blocking(move || actions::fix_all_text(&r2))
            .await
            .ok()
            .flatten()?;
        let edit = actions::minimal_edit(&r.text, &fixed, &r.rope, caps.encoding);
        Some(lsp::CodeAction {
            title: "cellguard: fix all safe fixes".to_string(),
            kind: Some(lsp::CodeActionKind::new(actions::FIX_ALL_KIND)),
            edit: Some(actions::workspace_edit(
                uri,
                Some(r.version),
                vec![edit],
                caps.document_changes,
            )),
            ..Default::default()
        })
    }
}
