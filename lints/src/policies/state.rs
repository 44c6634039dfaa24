//! State policies: validators on agent-state fields, replayed over `state` records
//! (pyagentic-reference §1.3–§1.5).
//!
//! pyAgentic has no built-in state validators; these are the common ones users write as
//! `spec.State(policies=[...])`, modelled with pyAgentic's **actual** pipeline semantics
//! (HEAD `d8ca79a`), which differ from its docs:
//!
//! | write (`state.op`) | hook | a raise does | docs claim |
//! |---|---|---|---|
//! | `set` (`agent.x = v`, `state.set`) | `on_set` chain | printed as `[PolicyError]`, **ignored**: later policies still run with the last good value and the value is committed | the write is vetoed and the error goes back to the LLM |
//! | `mutate` (in-place list change) | `on_set` over the whole list, after the mutation | printed; the mutation stays | — |
//! | `append` (`PolicyList.append`) | `on_append` chain per item | **veto**: the item is not appended; the rest of the chain is skipped | same (correct) |
//!
//! A transform (a policy returning a new value) replaces the value for the next policy and is
//! what gets stored. For a `set` inside async code, pyAgentic's background write-back then
//! restores the raw input one loop tick later (reference §1.6), so the transform does not last;
//! the report notes it.
//!
//! Policies (config `kind`):
//!
//! - `range` (`min`, `max`, optional `clamp`): numbers (booleans count as 0/1, as in Python);
//!   anything else raises. With `clamp = true` an out-of-range number becomes the bound.
//! - `regex` (`pattern`, optional `match = "search" | "match" | "fullmatch"`): strings
//!   that match in the way Python's `re.<match>(pattern, value)` does (default `re.search`, a
//!   match anywhere). The pattern has Python `re` syntax and semantics ([`crate::pyregex`]:
//!   `$` also matches before a final newline, `\Z` is the very end, lookaround and
//!   backreferences work, no POSIX classes); anything but a string raises.
//! - `max-length` (`max`, optional `truncate`): Python `len` of strings (code points), lists
//!   and objects; anything else raises (`object has no len()`). With `truncate = true` a longer
//!   string or list is cut to `max`.
//! - `non-empty`: `null`, `""`, `[]` and `{}` raise; numbers and booleans are never empty.
//! - `one-of` (`values`): the value must equal one of the values, as Python's `in` compares
//!   them ([`json_eq`]: numbers and booleans by exact value at any depth, objects unordered).
//!
//! Element-wise policies (`range`, `regex`, `one-of`) check each element of a list value of a
//! `set`/`mutate` write; whole-value policies (`max-length`, `non-empty`) check the value itself.
//! For an `append` every policy checks the appended item.

use crate::guardrails::predicates::json_eq;
use crate::pyregex::MatchMode;
use crate::trace::nonfinite;
use crate::trace::{StateOp, StateRecord};
use serde_json::Value;
use std::sync::Arc;

/// What a state policy checks.
#[derive(Debug, Clone)]
pub enum Check {
    /// `range`.
    Range {
        /// Inclusive minimum.
        min: Option<f64>,
        /// Inclusive maximum.
        max: Option<f64>,
        /// Clamp instead of raising.
        clamp: bool,
    },
    /// `regex`: a Python `re` pattern and how it is applied (`re.search` by default).
    Regex(crate::pyregex::PyRegex, crate::pyregex::MatchMode),
    /// `max-length`.
    MaxLength {
        /// Maximum `len`.
        max: u64,
        /// Truncate instead of raising.
        truncate: bool,
    },
    /// `non-empty`.
    NonEmpty,
    /// `one-of`.
    OneOf(Vec<Value>),
}

/// One configured state policy.
#[derive(Debug, Clone)]
pub struct StatePolicy {
    /// Policy id.
    pub id: String,
    /// Fields it applies to (exact names; `*` for every field).
    pub fields: Vec<String>,
    /// The check.
    pub check: Check,
}

/// A policy's answer for one value.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Unchanged (`None` in pyAgentic).
    Pass,
    /// A raise, with its message.
    Raise(String),
    /// A replacement value, with a description.
    Transform(Value, String),
}

/// Short JSON rendering of a value for messages (long strings are cut). A value read from
/// `NaN`, `Infinity` or `-Infinity` is shown as that token, as Python's `json.dumps` writes
/// the float (never the reader's internal stand-in, [`crate::trace::nonfinite`]).
pub fn show(v: &Value) -> String {
    let s = nonfinite::display_json(v);
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// True when `v` is a string as Python sees it (not the stand-in of a non-finite float).
fn is_py_str(s: &str) -> bool {
    nonfinite::number_of_str(s).is_none()
}

fn py_len(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) if is_py_str(s) => Some(s.chars().count() as u64),
        Value::Array(a) => Some(a.len() as u64),
        Value::Object(o) => Some(o.len() as u64),
        _ => None,
    }
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => nonfinite::number_of_str(s),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

fn number_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

fn fmt_num(x: f64) -> String {
    show(&number_value(x))
}

impl Check {
    /// The config kind.
    pub fn kind(&self) -> &'static str {
        match self {
            Check::Range { .. } => "range",
            Check::Regex(..) => "regex",
            Check::MaxLength { .. } => "max-length",
            Check::NonEmpty => "non-empty",
            Check::OneOf(_) => "one-of",
        }
    }

    fn element_wise(&self) -> bool {
        matches!(
            self,
            Check::Range { .. } | Check::Regex(..) | Check::OneOf(_)
        )
    }

    /// Checks one scalar value (or one whole value for whole-value checks).
    pub fn check_one(&self, v: &Value) -> Verdict {
        match self {
            Check::Range { min, max, clamp } => {
                let Some(x) = as_number(v) else {
                    return Verdict::Raise(format!("{} is not a number", show(v)));
                };
                if let Some(lo) = min.filter(|lo| x < *lo) {
                    return if *clamp {
                        Verdict::Transform(
                            number_value(lo),
                            format!("{} clamped to the minimum {}", show(v), fmt_num(lo)),
                        )
                    } else {
                        Verdict::Raise(format!("{} is below the minimum {}", show(v), fmt_num(lo)))
                    };
                }
                if let Some(hi) = max.filter(|hi| x > *hi) {
                    return if *clamp {
                        Verdict::Transform(
                            number_value(hi),
                            format!("{} clamped to the maximum {}", show(v), fmt_num(hi)),
                        )
                    } else {
                        Verdict::Raise(format!("{} is above the maximum {}", show(v), fmt_num(hi)))
                    };
                }
                Verdict::Pass
            }
            Check::Regex(re, mode) => match v {
                Value::String(s) if is_py_str(s) => match re.is_match(*mode, s) {
                    Ok(true) => Verdict::Pass,
                    Ok(false) => Verdict::Raise(format!(
                        "{} does not match /{}/{}",
                        show(v),
                        re.as_str(),
                        match mode {
                            MatchMode::Search => String::new(),
                            m => format!(" (re.{})", m.name()),
                        }
                    )),
                    // The backtracking engine gave up (catastrophic backtracking, beyond its
                    // step limit): no finding rather than a guess (docs/policies.md).
                    Err(_) => Verdict::Pass,
                },
                _ => Verdict::Raise(format!("{} is not a string", show(v))),
            },
            Check::MaxLength { max, truncate } => {
                let Some(n) = py_len(v) else {
                    return Verdict::Raise(format!("{} has no len()", show(v)));
                };
                if n <= *max {
                    return Verdict::Pass;
                }
                let cut = match v {
                    Value::String(s) if *truncate => Some(Value::String(
                        super::clip::prefix_chars(s, *max as usize).to_string(),
                    )),
                    Value::Array(a) if *truncate => Some(Value::Array(
                        a.iter().take(*max as usize).cloned().collect(),
                    )),
                    _ => None,
                };
                match cut {
                    Some(c) => {
                        Verdict::Transform(c, format!("length {n} truncated to the maximum {max}"))
                    }
                    None => Verdict::Raise(format!("length {n} exceeds the maximum {max}")),
                }
            }
            Check::NonEmpty => match v {
                Value::Null => Verdict::Raise("the value is None".into()),
                _ if py_len(v) == Some(0) => Verdict::Raise(format!("{} is empty", show(v))),
                _ => Verdict::Pass,
            },
            Check::OneOf(values) => {
                if values.iter().any(|x| json_eq(x, v)) {
                    Verdict::Pass
                } else {
                    let list: Vec<String> = values.iter().map(show).collect();
                    Verdict::Raise(format!("{} is not one of {}", show(v), list.join(", ")))
                }
            }
        }
    }

    /// Checks a written value: element by element for element-wise checks of a list value
    /// (`whole = false`), else the value itself. The first failing element raises; element
    /// transforms rebuild the list.
    pub fn check(&self, v: &Value, whole: bool) -> Verdict {
        match v {
            Value::Array(items) if !whole && self.element_wise() => {
                let mut out: Option<Vec<Value>> = None;
                let mut notes = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match self.check_one(item) {
                        Verdict::Pass => {}
                        Verdict::Raise(m) => return Verdict::Raise(format!("element {i}: {m}")),
                        Verdict::Transform(x, m) => {
                            out.get_or_insert_with(|| items.clone())[i] = x;
                            notes.push(format!("element {i}: {m}"));
                        }
                    }
                }
                match out {
                    Some(list) => Verdict::Transform(Value::Array(list), notes.join("; ")),
                    None => Verdict::Pass,
                }
            }
            _ => self.check_one(v),
        }
    }
}

impl StatePolicy {
    /// True when the policy applies to `field`.
    pub fn applies_to(&self, field: &str) -> bool {
        self.fields.iter().any(|f| f == "*" || f == field)
    }
}

/// What happened to one write under one policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// An `append` item is vetoed (not appended) — real in pyAgentic.
    Vetoed,
    /// A `set`/`mutate` validator raises; pyAgentic prints `[PolicyError]` and commits anyway.
    Raised,
    /// The value is replaced by the policy's output.
    Transformed,
}

impl Outcome {
    /// `would-veto`, `would-raise` or `transformed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Vetoed => "would-veto",
            Outcome::Raised => "would-raise",
            Outcome::Transformed => "transformed",
        }
    }
}

/// One state write a policy would veto, raise on, or transform.
#[derive(Debug, Clone, PartialEq)]
pub struct StateFinding {
    /// Trace name.
    pub trace: Arc<str>,
    /// Input file.
    pub file: Arc<str>,
    /// One-based line of the `state` record.
    pub line: u64,
    /// Field written.
    pub field: String,
    /// `set`, `append`, `mutate` (others as written).
    pub op: String,
    /// The value written (the item for `append`).
    pub value: Value,
    /// The policy.
    pub policy: String,
    /// Its kind.
    pub kind: &'static str,
    /// What it would do.
    pub outcome: Outcome,
    /// The policy's message (why it raises, or what it changed).
    pub message: String,
    /// The value after this policy (the transform's output; unchanged after a raise).
    pub result: Option<Value>,
    /// What pyAgentic would store: the final value of the chain (`None` when vetoed).
    pub committed: Option<Value>,
    /// What pyAgentic's code does (HEAD `d8ca79a`).
    pub actual: String,
    /// What its docs say, when that differs.
    pub documented: Option<String>,
}

/// Counters over all state writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StateTotals {
    /// `state` records seen.
    pub writes: u64,
    /// Writes to a field that has policies.
    pub checked: u64,
    /// Append items vetoed.
    pub vetoed: u64,
    /// Writes on which a validator raised (committed anyway).
    pub raised: u64,
    /// Writes transformed.
    pub transformed: u64,
}

fn op_name(op: &StateOp) -> String {
    match op {
        StateOp::Set => "set".into(),
        StateOp::Append => "append".into(),
        StateOp::Mutate => "mutate".into(),
        StateOp::Other(o) => o.clone(),
    }
}

/// Replays one write through the policies of its field (config order) and returns the
/// findings; `totals` is updated.
pub fn replay_write(
    policies: &[StatePolicy],
    rec: &StateRecord,
    trace: &Arc<str>,
    file: &Arc<str>,
    line: u64,
    totals: &mut StateTotals,
) -> Vec<StateFinding> {
    totals.writes += 1;
    // An unknown `op` or a missing `value` cannot be replayed (the reader warned).
    if matches!(rec.op, StateOp::Other(_)) || rec.value.is_none() {
        return Vec::new();
    }
    let chain: Vec<&StatePolicy> = policies
        .iter()
        .filter(|p| p.applies_to(&rec.field))
        .collect();
    if chain.is_empty() {
        return Vec::new();
    }
    totals.checked += 1;
    let append = rec.op == StateOp::Append;
    let written = rec.value.clone().unwrap_or_default();
    let mut value = written.clone();
    let mut out: Vec<StateFinding> = Vec::new();
    let mut vetoed = false;
    let (mut raised, mut transformed) = (false, false);
    for p in chain {
        let verdict = p.check.check(&value, append);
        let (outcome, message, result) = match verdict {
            Verdict::Pass => continue,
            Verdict::Raise(m) if append => (Outcome::Vetoed, m, None),
            Verdict::Raise(m) => (Outcome::Raised, m, Some(value.clone())),
            Verdict::Transform(x, m) => {
                value = x.clone();
                (Outcome::Transformed, m, Some(x))
            }
        };
        out.push(StateFinding {
            trace: trace.clone(),
            file: file.clone(),
            line,
            field: rec.field.clone(),
            op: op_name(&rec.op),
            value: written.clone(),
            policy: p.id.clone(),
            kind: p.check.kind(),
            outcome,
            message,
            result,
            committed: None,
            actual: String::new(),
            documented: None,
        });
        match outcome {
            Outcome::Vetoed => {
                vetoed = true;
                break;
            }
            Outcome::Raised => raised = true,
            Outcome::Transformed => transformed = true,
        }
    }
    if vetoed {
        totals.vetoed += 1;
    }
    if raised {
        totals.raised += 1;
    }
    if transformed {
        totals.transformed += 1;
    }
    let committed = (!vetoed).then(|| value.clone());
    for f in out.iter_mut() {
        f.committed = committed.clone();
        let (actual, documented) = describe(f, &written);
        f.actual = actual;
        f.documented = documented;
    }
    out
}

fn describe(f: &StateFinding, written: &Value) -> (String, Option<String>) {
    let stored = f.committed.as_ref().map(show).unwrap_or_default();
    match (f.outcome, f.op.as_str()) {
        (Outcome::Vetoed, _) => (
            "on_append raises: the item is not appended and the rest of the append chain is skipped (pyAgentic's code and docs agree)".into(),
            None,
        ),
        (Outcome::Raised, "mutate") => (
            format!("on_set raises after the in-place mutation: printed as [PolicyError], the mutation stays; {stored} is kept"),
            None,
        ),
        (Outcome::Raised, _) => (
            format!("would raise [PolicyError]; value committed anyway: pyAgentic prints the error, runs the later policies with the last good value and stores {stored}"),
            Some("the write is vetoed and the error goes back to the LLM".into()),
        ),
        (Outcome::Transformed, "set") => (
            format!("{} is stored as {stored}; inside async code pyAgentic's background write-back restores {} one loop tick later", show(written), show(written)),
            Some("background hooks cannot change values".into()),
        ),
        (Outcome::Transformed, _) => (format!("stored as {stored}"), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(id: &str, field: &str, check: Check) -> StatePolicy {
        StatePolicy {
            id: id.into(),
            fields: vec![field.into()],
            check,
        }
    }

    fn write(field: &str, op: &str, value: Value) -> StateRecord {
        StateRecord {
            field: field.into(),
            op: StateOp::parse(op),
            value: Some(value),
            previous: None,
        }
    }

    fn run(policies: &[StatePolicy], rec: &StateRecord) -> (Vec<StateFinding>, StateTotals) {
        let mut t = StateTotals::default();
        let f = replay_write(policies, rec, &"t".into(), &"t".into(), 1, &mut t);
        (f, t)
    }

    #[test]
    fn python_truthiness_and_len() {
        assert_eq!(Check::NonEmpty.check_one(&json!(0)), Verdict::Pass);
        assert!(matches!(
            Check::NonEmpty.check_one(&json!({})),
            Verdict::Raise(_)
        ));
        let ml = Check::MaxLength {
            max: 3,
            truncate: false,
        };
        assert!(matches!(ml.check_one(&json!(12345)), Verdict::Raise(m) if m.contains("no len()")));
        assert_eq!(ml.check_one(&json!("héé")), Verdict::Pass);
        let r = Check::Range {
            min: Some(0.0),
            max: Some(1.0),
            clamp: false,
        };
        assert_eq!(r.check_one(&json!(true)), Verdict::Pass);
        assert!(matches!(r.check_one(&json!("1")), Verdict::Raise(_)));
        let one = Check::OneOf(vec![json!(1), json!("a")]);
        assert_eq!(one.check_one(&json!(1.0)), Verdict::Pass);
        assert!(matches!(one.check_one(&json!("A")), Verdict::Raise(_)));
        // Python's `==` inside containers and for integers beyond 2**53 (`json_eq`).
        let nested = Check::OneOf(vec![json!([1, {"a": 2}]), json!(9007199254740993_u64)]);
        assert_eq!(nested.check_one(&json!([1.0, {"a": 2.0}])), Verdict::Pass);
        assert!(matches!(
            nested.check_one(&json!([1, {"a": 3}])),
            Verdict::Raise(_)
        ));
        assert!(matches!(
            nested.check_one(&json!(9007199254740992_u64)),
            Verdict::Raise(_)
        ));
    }

    #[test]
    fn element_wise_checks_lists_on_set_but_items_on_append() {
        let p = [policy(
            "r",
            "xs",
            Check::Range {
                min: Some(0.0),
                max: Some(10.0),
                clamp: false,
            },
        )];
        let (f, t) = run(&p, &write("xs", "set", json!([1, 20, 3])));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].message, "element 1: 20 is above the maximum 10");
        assert_eq!((t.raised, t.vetoed), (1, 0));
        let (f, t) = run(&p, &write("xs", "append", json!(20)));
        assert_eq!(
            (f[0].outcome, f[0].committed.clone()),
            (Outcome::Vetoed, None)
        );
        assert_eq!((t.raised, t.vetoed), (0, 1));
    }

    #[test]
    fn clamp_of_a_list_rebuilds_it() {
        let p = [policy(
            "r",
            "xs",
            Check::Range {
                min: None,
                max: Some(10.0),
                clamp: true,
            },
        )];
        let (f, _) = run(&p, &write("xs", "set", json!([1, 20, 30.5])));
        assert_eq!(f[0].committed, Some(json!([1, 10, 10])));
        assert_eq!(
            f[0].message,
            "element 1: 20 clamped to the maximum 10; element 2: 30.5 clamped to the maximum 10"
        );
    }
}
