//! The project KB as `cellguard check` and the language server see it: built from a source
//! directory named by `knowledge-base`, rebuilt after a source change (re-parsing only what
//! changed), with scan warnings surfaced as config warnings.

use cellguard_lints::config::{Overrides, Resolver};
use std::path::Path;

const CAP: &str =
    "from colony.base import AgentCapability\nfrom colony.dispatcher import action_executor\n\n";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn resolver_rebuilds_the_scanned_kb_after_a_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        &root.join("cellguard.toml"),
        "knowledge-base = [\"src\", \"extra.json\"]\n",
    );
    write(
        &root.join("extra.json"),
        r#"[{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]"#,
    );
    let base = root.join("src/pkg/base.py");
    write(
        &base,
        &format!("{CAP}class Base(AgentCapability):\n    @action_executor()\n    async def ping(self, n: int) -> int:\n        '''Ping.'''\n        return n\n"),
    );
    write(
        &root.join("src/pkg/sub.py"),
        "from .base import Base\n\nclass Sub(Base):\n    '''Sub.'''\n",
    );
    write(
        &root.join("src/pkg/bad.py"),
        &format!("{CAP}class Bad(AgentCapability):\n    @action_executor\n    async def oops(self):\n        '''x'''\n"),
    );
    // Not a KB, but at the top of a source directory: skipped with a warning.
    write(
        &root.join("src/pyrightconfig.json"),
        "{\"include\": [\"pkg\"]}\n",
    );
    let cell = root.join("cells/a.py");
    write(&cell, "await run('ping', n=1)\n");

    let resolver = Resolver::new(Overrides::default());
    let project = resolver.project_for(&cell).unwrap();
    let keys: Vec<&str> = project.kb.actions.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, vec!["Base.Base.ping", "Sub.Sub.ping", "lookup"]);
    // Colony dialect: the pseudo keys are known.
    assert!(project.kb.is_pseudo("__repl_guidance__"));
    // The bare decorator is a config warning with its position.
    let w: Vec<String> = project
        .settings
        .warnings
        .iter()
        .map(|w| w.to_string())
        .collect();
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[1].contains("src/pyrightconfig.json: skipped: not a knowledge base"),
        "{}",
        w[1]
    );
    assert!(w[0].ends_with("src/pkg/bad.py:5:5: bare `@action_executor` on `oops`: Colony's `action_executor` is a decorator factory, so this replaces `oops` with the factory's inner function and the action is never registered; write `@action_executor()`"), "{}", w[0]);

    // What the server asks on a watched-file event.
    assert!(project.kb_depends_on(&base));
    assert!(project.kb_depends_on(&root.join("src/pkg/new_module.py")));
    assert!(project.kb_depends_on(&root.join("extra.json")));
    assert!(!project.kb_depends_on(&cell));
    assert!(!project.kb_depends_on(&root.join("src/pkg/notes.json")));

    // Rename the action in the base class: every subclass follows after `clear()`.
    write(
        &base,
        &format!("{CAP}class Base(AgentCapability):\n    @action_executor()\n    async def pong(self, n: int) -> int:\n        '''Pong.'''\n        return n\n"),
    );
    // Unchanged without `clear()`: projects are cached.
    assert_eq!(
        resolver.project_for(&cell).unwrap().kb.actions[0].key,
        "Base.Base.ping"
    );
    resolver.clear();
    let project = resolver.project_for(&cell).unwrap();
    let keys: Vec<&str> = project.kb.actions.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, vec!["Base.Base.pong", "Sub.Sub.pong", "lookup"]);
    assert_eq!(
        project.kb.get("Sub.Sub.pong").unwrap().summary.as_deref(),
        Some("Pong.")
    );
}
