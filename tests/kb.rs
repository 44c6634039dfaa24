//! End-to-end tests of `cellguard kb scan|import|show|export` and of a scanned knowledge base
//! used by `cellguard check`, on the fixture package `fixtures/kb/capabilities/colony_app`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_in(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .args(args)
        .current_dir(dir)
        .env_remove("CELLGUARD_OUTPUT_FORMAT")
        .env_remove("CELLGUARD_OUTPUT_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("spawn cellguard");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/kb")
}

fn capabilities() -> PathBuf {
    fixtures().join("capabilities")
}

fn expected_kb() -> Value {
    let text = std::fs::read_to_string(capabilities().join("expected-kb.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn scan_of_the_fixture_package_is_exactly_the_expected_kb() {
    let out = run_in(&capabilities(), &["kb", "scan", "colony_app"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out.stdout), expected_kb());
    let warnings: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        warnings,
        vec![
            "warning: colony_app/planning.py:44:28: `plan_id` is positional-only, but `run(...)` passes every parameter by keyword: Colony's call of `review` fails with a TypeError when it is given",
            "warning: colony_app/tools.py:16:1: bare `@action_executor` on `bare_decorated`: Colony's `action_executor` is a decorator factory, so this replaces `bare_decorated` with the factory's inner function and the action is never registered; write `@action_executor()`",
            "warning: colony_app/tools.py:23:5: `@action_executor` on `nested`, a function nested in a function body: the dispatcher only sees module-level functions and class methods; ignored",
            "warning: colony_app/tools.py:38:5: `ReportingCapability.publish_report` and `ReportingCapability.publish_report_v2` both register `ReportingCapability.*.publish_report`; Colony keeps the one met last in MRO order (`ReportingCapability.publish_report_v2`)",
            "scanned 7 Python files (6 parsed): 13 actions in 8 groups",
        ]
    );
}

#[test]
fn expected_kb_reads_as_intended() {
    // The expected file is the contract; spell out what it must say so a regenerated file
    // cannot silently change meaning.
    let kb = expected_kb();
    let groups = kb["groups"].as_array().unwrap();
    let keys: Vec<&str> = groups
        .iter()
        .flat_map(|g| g["actions"].as_object().unwrap().keys())
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        vec![
            "GuardrailWaiverCapability.guardrail_waiver.request_guardrail_waiver",
            "PlanCoordinationCapability.PlanCoordinationCapability.propose_plan",
            "PlanCoordinationCapability.PlanCoordinationCapability.ActionType.ANALYZE",
            "PlanCoordinationCapability.PlanCoordinationCapability.deep_review",
            "PlannerActionPolicy.*.wait_for_next_event",
            "PlannerAgent.*.respond_to_user",
            "MemoryCapability.MemoryCapability.memory_forget",
            "MemoryCapability.MemoryCapability.store",
            "MemoryCapability.MemoryCapability.recall",
            "SessionMemoryCapability.session_memory.store",
            "SessionMemoryCapability.session_memory.memory_forget",
            "ReportingCapability.*.publish_report",
            "run_negotiation_game",
        ]
    );
    let action = |k: &str| -> &Value {
        groups
            .iter()
            .find_map(|g| g["actions"].get(k))
            .unwrap_or_else(|| panic!("{k}"))
    };
    // Planning tag on the group, Literal values, defaults as written.
    let propose = action("PlanCoordinationCapability.PlanCoordinationCapability.propose_plan");
    assert_eq!(propose["planning"], json!(true));
    assert_eq!(propose["params"][2]["allowed"], json!(["fast", "careful"]));
    assert_eq!(propose["params"][2]["default"], json!("\"careful\""));
    assert_eq!(
        propose["source"],
        json!({"path": "colony_app/planning.py", "line": 25, "column": 15})
    );
    // Excluded but dispatchable; inherited under the subclass name and capability key.
    assert_eq!(
        action("SessionMemoryCapability.session_memory.memory_forget")["exclude_from_planning"],
        json!(true)
    );
    // The subclass's override replaced the parameters and accepts **kwargs.
    let session_store = action("SessionMemoryCapability.session_memory.store");
    assert_eq!(session_store["accepts_extra_kwargs"], json!(true));
    assert_eq!(session_store["params"][1]["type"], json!("str"));
    // Keyword-only parameter of the inherited base method.
    assert_eq!(
        action("MemoryCapability.MemoryCapability.store")["params"][2]["keyword_only"],
        json!(true)
    );
    let wait = action("PlannerActionPolicy.*.wait_for_next_event");
    assert_eq!(
        (
            wait["emits_lifecycle"].clone(),
            wait["interruptible"].clone(),
            wait["dynamic_segment"].clone()
        ),
        (json!(false), json!(true), json!(true))
    );
    // The injected `owner: Agent` is hidden.
    let game = action("run_negotiation_game");
    assert_eq!(game["params"].as_array().unwrap().len(), 2);
    assert_eq!(
        kb["pseudo_keys"],
        json!([
            "ActionType.EXECUTE_CODE",
            "__repl_variables__",
            "__repl_guidance__"
        ])
    );
}

#[test]
fn round_trip_scan_export_import_gives_the_same_kb() {
    let dir = tempfile::tempdir().unwrap();
    let exported = dir.path().join("kb.json");
    let out = run_in(
        &capabilities(),
        &[
            "kb",
            "scan",
            "colony_app",
            "-q",
            "-o",
            exported.to_str().unwrap(),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    // Import the exported file: the same KB comes out.
    let out = run_in(dir.path(), &["kb", "import", "kb.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out.stdout), expected_kb());
    assert_eq!(out.stderr, "");
    // And importing the sources directly equals scanning them.
    let out = run_in(&capabilities(), &["kb", "import", "-q", "colony_app"]);
    assert_eq!(json(&out.stdout), expected_kb());
}

#[test]
fn show_resolves_like_the_dispatcher() {
    let dir = capabilities();
    let out = run_in(
        &dir,
        &[
            "kb",
            "show",
            "--kb",
            "colony_app",
            "--output-format",
            "json",
            "deep_review",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        json(&out.stdout),
        json!([{
            "key": "PlanCoordinationCapability.PlanCoordinationCapability.deep_review",
            "short_key": "deep_review",
            "params": [
                {"name": "plan_id", "type": "str", "required": true, "default": null},
                {"name": "depth", "type": "int", "required": false, "default": "2"},
                {"name": "strict", "type": "bool", "required": true, "default": null}
            ],
            "summary": "Review a plan in depth.",
            "source": {"path": "colony_app/planning.py", "line": 44, "column": 15}
        }])
    );
    // A per-process key from a recording resolves through the wildcard.
    let out = run_in(
        &dir,
        &[
            "kb",
            "show",
            "--kb",
            "colony_app",
            "PlannerActionPolicy.3f9a01c2.wait_for_next_event",
        ],
    );
    assert_eq!(out.code, 0);
    assert!(out.stdout.starts_with("PlannerActionPolicy.*.wait_for_next_event\n  resolved from `PlannerActionPolicy.3f9a01c2.wait_for_next_event`"), "{}", out.stdout);
    assert!(out
        .stdout
        .contains("  defined at colony_app/policy.py:12:15\n"));
    // Ambiguous short key: both candidates, exit 1.
    let out = run_in(
        &dir,
        &[
            "kb",
            "show",
            "--kb",
            "colony_app",
            "--output-format",
            "json",
            "store",
        ],
    );
    assert_eq!(out.code, 1);
    let keys: Vec<Value> = json(&out.stdout)
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["key"].clone())
        .collect();
    assert_eq!(
        keys,
        vec![
            json!("MemoryCapability.MemoryCapability.store"),
            json!("SessionMemoryCapability.session_memory.store")
        ]
    );
    // Pseudo keys are known and not callable.
    let out = run_in(
        &dir,
        &["kb", "show", "--kb", "colony_app", "__repl_guidance__"],
    );
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("is a pseudo key"), "{}", out.stdout);
    // Unknown key: suggestion, exit 1.
    let out = run_in(
        &dir,
        &["kb", "show", "--kb", "colony_app", "respond_to_usr"],
    );
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stdout,
        "`respond_to_usr` does not resolve to any known action. Did you mean `PlannerAgent.*.respond_to_user`?\n"
    );
    // The whole KB as JSON: one entry per action.
    let out = run_in(
        &dir,
        &[
            "kb",
            "show",
            "--kb",
            "colony_app",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(json(&out.stdout).as_array().unwrap().len(), 13);
    // No KB at all is a usage error.
    let empty = tempfile::tempdir().unwrap();
    let out = run_in(empty.path(), &["kb", "show"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no knowledge base"), "{}", out.stderr);
}

#[test]
fn export_json_schema_describes_valid_calls() {
    let out = run_in(
        &capabilities(),
        &[
            "kb",
            "export",
            "--kb",
            "colony_app",
            "--format",
            "json-schema",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let schema = json(&out.stdout);
    let branches = schema["oneOf"].as_array().unwrap();
    assert_eq!(branches.len(), 13);
    let propose = branches
        .iter()
        .find(|b| {
            b["title"] == "PlanCoordinationCapability.PlanCoordinationCapability.propose_plan"
        })
        .unwrap();
    assert_eq!(
        propose["properties"]["action_key"],
        json!({"const": "PlanCoordinationCapability.PlanCoordinationCapability.propose_plan"})
    );
    assert_eq!(
        propose["properties"]["params"],
        json!({
            "type": "object",
            "properties": {
                "goal": {"type": "string"},
                "steps": {"type": "array", "items": {"type": "string"}},
                "mode": {"enum": ["fast", "careful"], "default": "careful"},
                "priority": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}
            },
            "required": ["goal", "steps"],
            "additionalProperties": false
        })
    );
    assert_eq!(propose["required"], json!(["action_key", "params"]));
    assert_eq!(propose["additionalProperties"], json!(false));
    // **kwargs: extra parameters allowed.
    let session_store = branches
        .iter()
        .find(|b| b["title"] == "SessionMemoryCapability.session_memory.store")
        .unwrap();
    assert_eq!(
        session_store["properties"]["params"]["additionalProperties"],
        json!(true)
    );
    // A dynamic key: the per-process form, or the unique short key.
    let wait = branches
        .iter()
        .find(|b| b["title"] == "PlannerActionPolicy.*.wait_for_next_event")
        .unwrap();
    assert_eq!(
        wait["properties"]["action_key"],
        json!({"anyOf": [
            {"const": "wait_for_next_event"},
            {"type": "string", "pattern": "^PlannerActionPolicy\\.[0-9a-f]{8}\\.wait_for_next_event$"}
        ]})
    );
    // Export as a KB gives the scan result back.
    let out = run_in(&capabilities(), &["kb", "export", "--kb", "colony_app"]);
    assert_eq!(json(&out.stdout), expected_kb());
}

#[test]
fn import_merges_prompt_and_tools_with_precedence_and_conflicts() {
    let dir = fixtures().join("import");
    // The prompt (lossy types) after the sources: the exact types of the sources are kept, and
    // the summary and the location too; the conflicting definition is reported.
    let out = run_in(
        &dir,
        &[
            "kb",
            "import",
            "../capabilities/colony_app",
            "recorded-prompt.md",
            "-q",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let kb = json(&out.stdout);
    let find = |k: &str| -> Value {
        kb["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(|g| g["actions"].get(k).cloned())
            .unwrap_or_else(|| panic!("{k}"))
    };
    let propose = find("PlanCoordinationCapability.PlanCoordinationCapability.propose_plan");
    assert_eq!(propose["params"][1]["type"], json!("list[str]"));
    assert_eq!(propose["params"][1].get("approximate_type"), None);
    assert_eq!(propose["params"][2]["allowed"], json!(["fast", "careful"]));
    assert_eq!(propose["source"]["line"], json!(25));
    // The prompt's own action, unknown to the sources, is added with approximate types.
    let status = find("AgentPoolCapability.AgentPoolCapability.get_agent_status");
    assert_eq!(
        status["params"][0],
        json!({"name": "agent_ids", "type": "list", "display_type": "list", "approximate_type": true, "required": true, "default": null})
    );
    // A recorded per-process key is stored as a wildcard.
    find("PlannerActionPolicy.*.wait_for_next_event");

    let out = run_in(
        &dir,
        &[
            "kb",
            "import",
            "../capabilities/colony_app",
            "recorded-prompt.md",
        ],
    );
    let warnings: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("defined differently"))
        .collect();
    assert_eq!(
        warnings,
        vec!["warning: recorded-prompt.md: action `GuardrailWaiverCapability.guardrail_waiver.request_guardrail_waiver` is defined differently by ../capabilities/colony_app and recorded-prompt.md (parameter `reason` only in the earlier source; parameter `note` only in the later source); recorded-prompt.md wins"]
    );

    // OpenAI tools.
    let out = run_in(&dir, &["kb", "import", "openai-tools.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let kb = json(&out.stdout);
    assert_eq!(
        kb["groups"][0]["actions"]["book_flight"]["params"],
        json!([
            {"name": "cabin", "type": "str", "required": true, "default": null, "allowed": ["economy", "business"], "description": "Cabin class."},
            {"name": "passengers", "type": "int", "required": false, "default": "1"}
        ])
    );
    // Then an MCP tools/list result: its `book_flight` comes later and wins; what it does not
    // say (the description) is kept; the differences are reported.
    let out = run_in(
        &dir,
        &["kb", "import", "openai-tools.json", "mcp-tools.json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let kb = json(&out.stdout);
    let actions = &kb["groups"][0]["actions"];
    assert_eq!(
        actions["book_flight"]["params"],
        json!([{"name": "cabin", "type": "str", "required": true, "default": null, "description": "Cabin class."}])
    );
    assert_eq!(
        actions["book_flight"]["summary"],
        json!("Book a flight through the MCP server.")
    );
    assert_eq!(actions["read_file"]["params"][0]["type"], json!("str"));
    assert_eq!(
        actions["read_file"]["params"][1]["type"],
        json!("int | None")
    );
    assert_eq!(
        out.stderr,
        "warning: mcp-tools.json: action `book_flight` is defined differently by openai-tools.json and mcp-tools.json (parameter `cabin`: allowed values [\"economy\",\"business\"] vs any value; parameter `passengers` only in the earlier source); mcp-tools.json wins\n"
    );

    // Explicit formats, and errors located.
    let out = run_in(
        &dir,
        &["kb", "import", "--format", "prompt", "openai-tools.json"],
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("no `## Available Actions` section"),
        "{}",
        out.stderr
    );
    let out = run_in(&dir, &["kb", "import", "missing.json"]);
    assert_eq!(out.code, 2);
}

#[test]
fn check_sees_a_renamed_action_after_the_source_changes() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("app")).unwrap();
    for f in ["__init__.py", "planning.py", "action_types.py"] {
        std::fs::copy(
            capabilities().join("colony_app").join(f),
            src.join("app").join(f),
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("cellguard.toml"),
        "knowledge-base = [\"src\"]\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("cells")).unwrap();
    std::fs::write(
        dir.path().join("cells/plan.py"),
        "r = await run(\"PlanCoordinationCapability.PlanCoordinationCapability.propose_plan\", goal=\"g\", steps=[\"a\"])\nif r.success:\n    results[\"plan\"] = r.output\n",
    )
    .unwrap();
    let out = run_in(dir.path(), &["check", "cells"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "All checks passed!\n"),
        "{}",
        out.stderr
    );

    // Rename the method in the source: the next run rebuilds the scanned KB.
    let planning = src.join("app/planning.py");
    let text = std::fs::read_to_string(&planning).unwrap();
    std::fs::write(
        &planning,
        text.replace("def propose_plan(", "def propose_plans("),
    )
    .unwrap();
    let out = run_in(dir.path(), &["check", "cells", "--output-format", "json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let diags = json(&out.stdout);
    let codes: Vec<&str> = diags
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, vec!["API001"]);
    assert!(diags[0]["message"]
        .as_str()
        .unwrap()
        .contains("PlanCoordinationCapability.PlanCoordinationCapability.propose_plan"));
}

/// Field names used at each level of a KB file: top level, group, action, parameter.
fn kb_fields(v: &Value) -> [std::collections::BTreeSet<String>; 4] {
    let mut out: [std::collections::BTreeSet<String>; 4] = Default::default();
    out[0].extend(v.as_object().unwrap().keys().cloned());
    for g in v["groups"].as_array().unwrap() {
        out[1].extend(g.as_object().unwrap().keys().cloned());
        for a in g["actions"].as_object().unwrap().values() {
            out[2].extend(a.as_object().unwrap().keys().cloned());
            for p in a["params"].as_array().unwrap() {
                out[3].extend(p.as_object().unwrap().keys().cloned());
            }
        }
    }
    out
}

#[test]
fn the_format_doc_covers_colony_kb_and_cellguard_kb_fields() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/knowledge-base.md"),
    )
    .unwrap();
    let section = |title: &str| -> String {
        let start = doc
            .find(&format!("### {title}\n"))
            .unwrap_or_else(|| panic!("{title}"));
        let rest = &doc[start + 4..];
        rest[..rest.find("\n### ").unwrap_or(rest.len())].to_string()
    };
    let sections = [
        section("Top level"),
        section("Group"),
        section("Action"),
        section("Parameter"),
    ];
    // A colony-kb/1 file as the corpus ships it (the example project's subset of Colony's
    // static extraction), and what cellguard writes.
    let colony: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/kb/colony-actions.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for file in [colony, expected_kb()] {
        for (level, fields) in kb_fields(&file).iter().enumerate() {
            for f in fields {
                let documented = sections[level].contains(&format!("| `{f}` |"));
                assert!(documented, "field `{f}` (level {level}) is not documented");
            }
        }
    }
    // And the colony-kb/1 file is read as is.
    let out = run_in(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example"),
        &[
            "kb",
            "show",
            "--kb",
            "kb/colony-actions.json",
            "--output-format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out.stdout).as_array().unwrap().len(), 4);
}

/// `fixtures/kb/regressions/NAME/`: inputs that once produced a wrong KB. In each directory,
/// `cellguard` run with the arguments in `args` (one a line; default `kb scan src`) must print
/// exactly `expected-kb.json` and, when that file is present, exactly `expected-stderr.txt` on
/// standard error.
#[test]
fn regression_fixtures_give_their_expected_kb() {
    let root = fixtures().join("regressions");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected-kb.json").is_file())
        .collect();
    cases.sort();
    assert!(cases.len() >= 2);
    for case in cases {
        let args: Vec<String> = match std::fs::read_to_string(case.join("args")) {
            Ok(text) => text.lines().map(str::to_string).collect(),
            Err(_) => vec!["kb".into(), "scan".into(), "src".into()],
        };
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_in(&case, &args);
        assert_eq!(out.code, 0, "{}: {}", case.display(), out.stderr);
        let expected = std::fs::read_to_string(case.join("expected-kb.json")).unwrap();
        assert_eq!(json(&out.stdout), json(&expected), "{}", case.display());
        if let Ok(stderr) = std::fs::read_to_string(case.join("expected-stderr.txt")) {
            assert_eq!(out.stderr, stderr, "{}", case.display());
        }
    }
}

/// A recorded prompt does not show `**kwargs`: the imported KB says `null` (unknown), and
/// that survives an export and a re-import.
#[test]
fn prompt_import_keeps_unknown_kwargs_through_a_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let prompt = fixtures().join("regressions/prompt_after_kb/prompt.md");
    let out = run_in(
        dir.path(),
        &["kb", "import", prompt.to_str().unwrap(), "-o", "kb.json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = json(&std::fs::read_to_string(dir.path().join("kb.json")).unwrap());
    let action =
        &first["groups"][0]["actions"]["AgentPoolCapability.AgentPoolCapability.create_agent"];
    assert_eq!(action["accepts_extra_kwargs"], Value::Null);
    let out = run_in(dir.path(), &["kb", "import", "kb.json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json(&out.stdout), first);
}

/// `kb show --output-format json KEY` prints the (empty or ambiguous) list on standard output
/// and why on standard error; the text form states keyword-only parameters after `*`.
#[test]
fn show_explains_unresolved_keys_in_json_mode_and_marks_keyword_only() {
    let dir = capabilities();
    let out = run_in(
        &dir,
        &[
            "kb",
            "show",
            "--kb",
            "colony_app",
            "--output-format",
            "json",
            "__repl_guidance__",
        ],
    );
    assert_eq!(out.code, 1);
    assert_eq!(json(&out.stdout), json!([]));
    assert_eq!(out.stderr, "`__repl_guidance__` is a pseudo key: Colony's prompt lists it under `## Available Actions`, but it is not a callable action (APIKnowledgeBase rejects it).\n");
    let out = run_in(
        &dir,
        &[
            "kb",
            "show",
            "--kb",
            "colony_app",
            "--output-format",
            "json",
            "propose_plna",
        ],
    );
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr, "`propose_plna` does not resolve to any known action. Did you mean `PlanCoordinationCapability.PlanCoordinationCapability.propose_plan`?\n");
    let out = run_in(&dir, &["kb", "show", "--kb", "colony_app"]);
    assert!(out.stdout.contains("  PlanCoordinationCapability.PlanCoordinationCapability.deep_review(plan_id: str, depth: int = 2, *, strict: bool, **kwargs) -> dict\n"), "{}", out.stdout);
    assert!(out.stdout.contains("  MemoryCapability.MemoryCapability.store(key: str, value: dict[str, Any], *, ttl_seconds: int | None = None) -> str\n"), "{}", out.stdout);
}

/// A reader that stops early (`cellguard kb show | head`) is not an error: no message, and the
/// exit code is the command's.
#[test]
fn closed_output_pipe_is_not_an_error() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_cellguard"))
        .args([
            "kb",
            "show",
            "--kb",
            "fixtures/corpus/colony/colony-kb.json",
        ])
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the reading end at once: the ~90 kB listing cannot fit in the pipe buffer.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
}

/// `knowledge-base` mixing a source directory, a tool file and a recorded prompt: every input
/// contributes, the later one wins on a conflict, and the conflict names the inputs relative
/// to the working directory as the user wrote them.
#[test]
fn config_mixes_directories_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("src/app");
    std::fs::create_dir_all(&app).unwrap();
    for f in [
        "__init__.py",
        "guardrails.py",
        "planning.py",
        "action_types.py",
    ] {
        std::fs::copy(capabilities().join("colony_app").join(f), app.join(f)).unwrap();
    }
    std::fs::create_dir(dir.path().join("kbs")).unwrap();
    for (from, to) in [
        ("import/openai-tools.json", "kbs/tools.json"),
        ("import/recorded-prompt.md", "kbs/prompt.md"),
    ] {
        std::fs::copy(fixtures().join(from), dir.path().join(to)).unwrap();
    }
    std::fs::write(
        dir.path().join("cellguard.toml"),
        "knowledge-base = [\"src\", \"kbs/tools.json\", \"kbs/prompt.md\"]\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("cells")).unwrap();
    std::fs::write(
        dir.path().join("cells/c.py"),
        concat!(
            // from the sources
            "a = await run(\"propose_plan\", goal=\"g\", steps=[\"a\"], mode=\"slow\")\n",
            // from the tool file
            "b = await run(\"book_flight\", cabin=\"first\")\n",
            // from the prompt, which wins over the sources: `note`, not `reason`
            "c = await run(\"GuardrailWaiverCapability.guardrail_waiver.request_guardrail_waiver\", guardrail_id=\"g\", note=\"n\")\n",
        ),
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &[
            "check",
            "cells",
            "--output-format",
            "concise",
            "--ignore",
            "SHP001",
        ],
    );
    assert_eq!(
        out.stdout,
        concat!(
            "cells/c.py:1:15: API002 [*] Action key `propose_plan` is not canonical: the dispatcher resolves it to `PlanCoordinationCapability.PlanCoordinationCapability.propose_plan`\n",
            "cells/c.py:1:59: API006 Argument `mode` of `propose_plan` expects one of 'fast', 'careful', got 'slow'\n",
            "cells/c.py:2:36: API006 Argument `cabin` of `book_flight` expects one of 'economy', 'business', got 'first'\n",
            "Found 3 diagnostics (2 errors, 1 warning).\n[*] 1 fixable with the `--fix` option.\n",
        ),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("warning: kbs/prompt.md: action `GuardrailWaiverCapability.guardrail_waiver.request_guardrail_waiver` is defined differently by src and kbs/prompt.md (parameter `reason` only in the earlier source; parameter `note` only in the later source); kbs/prompt.md wins\n"), "{}", out.stderr);
}
