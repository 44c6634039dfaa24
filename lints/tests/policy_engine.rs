//! The append/compile machinery with custom policies (pyagentic-reference §1.4–§1.5 and §5
//! cases 28–31, which need policies the config cannot express): chain order, vetoes, error
//! isolation, write-back, empty replacements.

use cellguard_lints::policies::{CompileCx, MessagePolicy, Msg, Simulator};
use cellguard_lints::trace::{InferenceRecord, MessageKind, MessageRecord};
use std::sync::Arc;

struct Suffix(&'static str, &'static str);

impl MessagePolicy for Suffix {
    fn id(&self) -> &str {
        self.0
    }
    fn kind(&self) -> &str {
        "suffix"
    }
    fn on_append(&self, item: &Msg) -> Result<Option<Msg>, String> {
        let text = format!("{}{}", item.content().unwrap_or(""), self.1);
        Ok(Some(item.with_content(Some(&text))))
    }
}

struct RaiseOnAssistant;

impl MessagePolicy for RaiseOnAssistant {
    fn id(&self) -> &str {
        "no-assistant"
    }
    fn kind(&self) -> &str {
        "custom"
    }
    fn on_append(&self, item: &Msg) -> Result<Option<Msg>, String> {
        if item.kind == MessageKind::Assistant {
            Err("ValueError: no assistant messages".into())
        } else {
            Ok(None)
        }
    }
}

struct KeepLast1;

impl MessagePolicy for KeepLast1 {
    fn id(&self) -> &str {
        "keep-last-1"
    }
    fn kind(&self) -> &str {
        "custom"
    }
    fn on_compile(&self, _cx: &mut CompileCx, items: &[Msg]) -> Result<Option<Vec<Msg>>, String> {
        Ok(items.last().map(|m| vec![m.clone()]))
    }
}

struct RaiseOnCompile;

impl MessagePolicy for RaiseOnCompile {
    fn id(&self) -> &str {
        "broken"
    }
    fn kind(&self) -> &str {
        "custom"
    }
    fn on_compile(&self, _cx: &mut CompileCx, _items: &[Msg]) -> Result<Option<Vec<Msg>>, String> {
        Err("RuntimeError: boom".into())
    }
}

struct Wipe;

impl MessagePolicy for Wipe {
    fn id(&self) -> &str {
        "wipe"
    }
    fn kind(&self) -> &str {
        "custom"
    }
    fn on_compile(&self, _cx: &mut CompileCx, _items: &[Msg]) -> Result<Option<Vec<Msg>>, String> {
        Ok(Some(Vec::new()))
    }
}

/// A policy class passed instead of an instance: every `on_append` call fails with a
/// missing-argument `TypeError`, which the append path treats as a veto.
struct ClassNotInstance;

impl MessagePolicy for ClassNotInstance {
    fn id(&self) -> &str {
        "ToolEvictionPolicy"
    }
    fn kind(&self) -> &str {
        "class"
    }
    fn on_append(&self, _item: &Msg) -> Result<Option<Msg>, String> {
        Err("TypeError: on_append() missing 1 required positional argument: 'item'".into())
    }
}

fn sim(policies: Vec<Arc<dyn MessagePolicy>>) -> Simulator {
    Simulator::new(policies, "t".into(), "t".into(), true)
}

fn msg(kind: MessageKind, text: &str) -> MessageRecord {
    let mut m = MessageRecord::new(kind);
    m.content = Some(text.into());
    m
}

fn notation(ctx: &[Msg]) -> Vec<String> {
    ctx.iter().map(Msg::notation).collect()
}

fn inference() -> InferenceRecord {
    InferenceRecord::default()
}

#[test]
fn case_28_append_chain_runs_in_order_and_a_raise_vetoes() {
    let mut s = sim(vec![
        Arc::new(Suffix("a", "-a")),
        Arc::new(Suffix("b", "-b")),
        Arc::new(RaiseOnAssistant),
    ]);
    s.append(&msg(MessageKind::User, "x"), 1);
    s.compile(&inference(), 2);
    s.append(&msg(MessageKind::Assistant, "reply"), 3);
    s.append(&msg(MessageKind::User, "y"), 4);
    s.compile(&inference(), 5);
    assert_eq!(notation(s.context()), vec!["U(x-a-b)", "U(y-a-b)"]);
    let out = s.finish();
    // The raw log keeps the unchanged texts and the vetoed reply.
    assert_eq!(out.totals.raw_messages, 3);
    assert_eq!(out.totals.raw_chars, 1 + 5 + 1);
    assert_eq!(out.inferences[0].clipped, vec![0]);
    assert_eq!(out.inferences[1].clipped, vec![2]);
    assert_eq!(out.inferences[1].vetoed, vec![1]);
    assert_eq!(
        out.inferences[1].errors,
        vec![
            "[PolicyError] no-assistant.on_append vetoed append: ValueError: no assistant messages"
        ]
    );
    assert_eq!(out.totals.final_chars, 10);
    assert_eq!(out.totals.chars_removed, 7 - 10);
}

#[test]
fn case_29_compile_results_are_written_back() {
    let mut s = sim(vec![Arc::new(KeepLast1)]);
    s.append(&msg(MessageKind::User, "first"), 1);
    s.compile(&inference(), 2);
    s.append(&msg(MessageKind::Assistant, "one"), 3);
    s.append(&msg(MessageKind::User, "second"), 4);
    s.compile(&inference(), 5);
    s.append(&msg(MessageKind::Assistant, "two"), 6);
    assert_eq!(notation(s.context()), vec!["U(second)", "A(two)"]);
    let out = s.finish();
    assert_eq!(out.totals.raw_messages, 4);
    assert_eq!(out.inferences[1].dropped, vec![0, 1]);
    assert_eq!(out.totals.final_messages, 2);
}

#[test]
fn case_30_a_raising_compile_policy_is_isolated_and_an_empty_result_wipes() {
    let mut s = sim(vec![Arc::new(RaiseOnCompile), Arc::new(KeepLast1)]);
    s.append(&msg(MessageKind::User, "hello"), 1);
    s.append(&msg(MessageKind::User, "again"), 2);
    s.compile(&inference(), 3);
    assert_eq!(notation(s.context()), vec!["U(again)"]);
    let out = s.finish();
    assert_eq!(
        out.inferences[0].errors,
        vec!["[PolicyError] broken.on_compile: RuntimeError: boom"]
    );
    assert_eq!(out.inferences[0].dropped, vec![0]);

    let mut s = sim(vec![Arc::new(Wipe)]);
    s.append(&msg(MessageKind::User, "hello"), 1);
    s.compile(&inference(), 2);
    assert!(s.context().is_empty());
    let out = s.finish();
    assert_eq!(
        (
            out.inferences[0].messages,
            out.inferences[0].dropped.clone()
        ),
        (0, vec![0])
    );
}

#[test]
fn case_31_a_class_instead_of_an_instance_vetoes_every_append() {
    let mut s = sim(vec![Arc::new(ClassNotInstance)]);
    s.append(&msg(MessageKind::User, "hi"), 1);
    s.append(&msg(MessageKind::Assistant, "yo"), 2);
    s.compile(&inference(), 3);
    assert_eq!(s.raw_messages(), 2);
    assert!(s.context().is_empty());
    let out = s.finish();
    assert_eq!(out.inferences[0].vetoed, vec![0, 1]);
    assert_eq!(out.inferences[0].errors.len(), 2);
}

#[test]
fn a_vetoed_tool_call_orphans_its_result_and_a_vetoed_result_is_a_fact_at_risk() {
    struct VetoKind(MessageKind);
    impl MessagePolicy for VetoKind {
        fn id(&self) -> &str {
            "veto"
        }
        fn kind(&self) -> &str {
            "custom"
        }
        fn on_append(&self, item: &Msg) -> Result<Option<Msg>, String> {
            if item.kind == self.0 {
                Err("no".into())
            } else {
                Ok(None)
            }
        }
    }
    let call = |id: &str| {
        let mut m = MessageRecord::new(MessageKind::ToolCall);
        m.id = Some(id.into());
        m.name = Some("t".into());
        m
    };
    let result = |id: &str| {
        let mut m = msg(MessageKind::ToolResult, "out");
        m.tool_call_id = Some(id.into());
        m.name = Some("t".into());
        m
    };
    let mut s = sim(vec![Arc::new(VetoKind(MessageKind::ToolCall))]);
    s.append(&call("c1"), 1);
    s.append(&result("c1"), 2);
    s.compile(&inference(), 3);
    let out = s.finish();
    assert_eq!(out.inferences[0].orphaned, vec![1]);
    assert_eq!(out.totals.orphaned_pairs, 1);

    let mut s = sim(vec![Arc::new(VetoKind(MessageKind::ToolResult))]);
    s.append(&call("c1"), 1);
    s.append(&result("c1"), 2);
    s.compile(&inference(), 3);
    let out = s.finish();
    assert_eq!(out.inferences[0].orphaned, vec![0]);
    assert_eq!(
        (out.facts.len(), out.facts[0].effect, out.facts[0].inference),
        (1, "vetoed", None)
    );
}
