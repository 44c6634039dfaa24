//! Declarative predicates (spec §8): conditions on the proposed call's params (`applies-when`),
//! on prior records' params (`prior-params-match`) and on prior messages (`required-prior =
//! { message = ... }`).
//!
//! `applies-when` conditions (a table, or a list of tables that must all hold), each naming a
//! `param` (a dotted path into the params):
//! - `equals = v` / `not-equals = v`: JSON equality with the TOML value;
//! - `in = [..]` / `not-in = [..]`: membership;
//! - `present = true|false`: whether the param is given (and not null);
//! - `regex = "..."` (a Python `re` pattern, [`crate::pyregex`]): the param's text (a string; each string of a list; other values as JSON;
//!   a missing param as `""`, like Colony's `p.get("content", "")`) has at least one match.
//!   Every match yields a *capture*: group 1 when the regex has groups, else the whole match.
//!   `exclude-self = true` drops the matches whose capture *or* whole match equals the
//!   recording agent's own id (the speaker-aware status-claim rule, colony-reference §4.4; the
//!   whole match counts too so that `agent-([0-9a-f]+)` excludes `agent-abc123` for the agent
//!   `agent-abc123`, issue 6 T4-19); the condition then holds only when some capture remains.
//!
//! `prior-params-match` (a table; all given keys must hold for a prior record to count):
//! - `captures-subset-of = "p"`: every capture is in the prior record's param `p` (a list, or a
//!   single value) — the historical SessionAgent status-claim rule;
//! - `captures-any-in = "p"`: at least one capture is in it (Colony's test rule);
//! - `same = ["p", ...]`: the prior record's param equals the proposed call's param of the same
//!   name; when the prior record has no such param, the field of that name in its result (a
//!   JSON object, or a string holding one, as chat tool outputs are) is compared instead, so a
//!   `book_reservation` whose result carries `reservation_id` counts like a
//!   `get_reservation_details(reservation_id=...)`. A value that is missing or `null` on either
//!   side matches nothing (not even another missing value): an update naming no record has no
//!   "same record" before it (issue 6 T16). Equality is Python's `==` (`1 == 1.0 == True`),
//!   the comparison Colony's `ArgsAwareOrderConstraint` predicates make (colony-reference §4.4),
//!   but the missing-value case is cellguard's own: Colony's predicates are Python callables
//!   where `p.get("id") == q.get("id")` would hold for `None == None`;
//! - `equal = { prior_param = "target_param" }`: likewise across names.

use super::toml_view::SVal;
use crate::pyregex::PyRegex as Regex;
use crate::trace::MessageRecord;
use serde_json::{Map, Value};
use std::collections::VecDeque;

/// The value at a dotted path (`a.b`) of an object.
pub fn lookup<'a>(params: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut cur = params.get(parts.next()?)?;
    for p in parts {
        cur = match cur {
            Value::Object(m) => m.get(p)?,
            Value::Array(a) => a.get(p.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// One test of a param condition.
#[derive(Debug, Clone)]
pub enum Test {
    /// `equals`.
    Equals(Value),
    /// `not-equals`.
    NotEquals(Value),
    /// `in`.
    In(Vec<Value>),
    /// `not-in`.
    NotIn(Vec<Value>),
    /// `present`.
    Present(bool),
    /// `regex` (with `exclude-self`).
    Regex {
        /// The regex.
        re: Regex,
        /// Drop captures equal to the agent's own id.
        exclude_self: bool,
    },
}

/// One `applies-when` condition.
#[derive(Debug, Clone)]
pub struct ParamCond {
    /// Dotted param path.
    pub param: String,
    /// Its test.
    pub test: Test,
}

/// A string value as a regex sees it.
fn py_text(s: &str) -> String {
    if let Some(digits) = crate::trace::nonfinite::big_int_of_str(s) {
        // A big integer (issue 6 T6-12): Python's `str()` of an `int` is its digits.
        return digits.to_string();
    }
    crate::trace::nonfinite::python_str(s).map_or_else(|| s.to_string(), str::to_string)
}

/// Texts a regex is applied to: a string; each string of a list (other items as JSON); other
/// values as JSON; a missing param as the empty string.
fn texts(v: Option<&Value>) -> Vec<String> {
    match v {
        None | Some(Value::Null) => vec![String::new()],
        // A non-finite stand-in reads as Python's `str()` of the float (`nan`, `inf`).
        Some(Value::String(s)) => vec![py_text(s)],
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| match x {
                Value::String(s) => py_text(s),
                o => o.to_string(),
            })
            .collect(),
        Some(o) => vec![o.to_string()],
    }
}

/// A JSON number or boolean as Python's `==` compares it (Colony's predicates compare parsed
/// values): integral values, whether written `1`, `1.0`, `-0.0` or `true`, are exact integers
/// (`int` and `float` compare by exact value in Python, so `2**53 + 1 != 2**53` even though
/// both round to the same `f64`); every other number is its `f64`. Integers beyond `u64` are
/// read exactly (big-integer stand-ins, issue 6 T6-12): an `Int` up to `i128`; beyond, no
/// `PyNumber` (such a literal equals only itself).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PyNumber {
    /// An integral value.
    Int(i128),
    /// A non-integral or non-finite value (never equal to an `Int`).
    Float(f64),
}

impl PyNumber {
    /// The value of a JSON number or boolean; `None` for anything else.
    pub fn of(v: &Value) -> Option<Self> {
        match v {
            // `NaN` / `Infinity` as a trace reader read them (`trace::nonfinite`).
            // A big integer (`trace::nonfinite::big_int_of_str`): exact while it fits `i128`;
            // beyond, `None`, so that it equals only the same literal (compared as text).
            Value::String(s) => match crate::trace::nonfinite::big_int_of_str(s) {
                Some(digits) => digits.parse::<i128>().ok().map(Self::Int),
                None => crate::trace::nonfinite::number_of_str(s).map(Self::Float),
            },
            Value::Bool(b) => Some(Self::Int(i128::from(*b))),
            Value::Number(n) => Some(if let Some(i) = n.as_i64() {
                Self::Int(i128::from(i))
            } else if let Some(u) = n.as_u64() {
                Self::Int(i128::from(u))
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // 2^127: every integral f64 below it converts to i128 exactly.
                if f.is_finite() && f.fract() == 0.0 && f.abs() < 1.7e38 {
                    Self::Int(f as i128)
                } else {
                    Self::Float(f)
                }
            }),
            _ => None,
        }
    }

    /// Canonical text, equal for two numbers exactly when they are equal (`Int` texts are
    /// digits with an optional sign; `Float` texts always hold `.`, `e`, `inf` or `NaN`).
    pub fn text(self) -> String {
        match self {
            Self::Int(i) => i.to_string(),
            Self::Float(f) => format!("{f:?}"),
        }
    }
}

/// JSON equality as Python's `==` compares the parsed values (Colony's predicates): numbers and
/// booleans by exact value at any depth (`1 == 1.0`, `True == 1`, `-0.0 == 0`,
/// `2**53 + 1 != 2**53`), arrays element by element, objects as unordered maps
/// (`{"a":1,"b":2} == {"b":2,"a":1}`).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| json_eq(p, q)))
        }
        _ => match (PyNumber::of(a), PyNumber::of(b)) {
            (Some(p), Some(q)) => p == q,
            (None, None) => a == b,
            _ => false,
        },
    }
}

/// The capture an undecidable regex adds (see [`ParamCond::eval_noting`]): no list holds it, so
/// `captures-subset-of` cannot be satisfied by the captures found before the engine gave up.
pub const UNDECIDED_CAPTURE: &str = "\u{0}<regex not evaluated>";

impl ParamCond {
    /// Evaluates the condition; `Some(captures)` when it holds.
    pub fn eval(&self, params: &Map<String, Value>, agent_id: Option<&str>) -> Option<Vec<String>> {
        self.eval_noting(params, agent_id, &mut Vec::new())
    }

    /// [`ParamCond::eval`], noting in `undecided` each regex the engine gave up on (its
    /// backtracking limit, [`crate::pyregex::BACKTRACK_LIMIT`]). Such a regex is decided
    /// conservatively for a restricting condition (`applies-when`, `precondition`: the gate
    /// applies): it counts as matching, with the captures found so far plus
    /// [`UNDECIDED_CAPTURE`], never as "no match" (issue 6 T13).
    pub fn eval_noting(
        &self,
        params: &Map<String, Value>,
        agent_id: Option<&str>,
        undecided: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        let v = lookup(params, &self.param);
        let holds = |b: bool| if b { Some(Vec::new()) } else { None };
        match &self.test {
            Test::Equals(x) => holds(v.is_some_and(|v| json_eq(v, x))),
            Test::NotEquals(x) => holds(!v.is_some_and(|v| json_eq(v, x))),
            Test::In(xs) => holds(v.is_some_and(|v| xs.iter().any(|x| json_eq(v, x)))),
            Test::NotIn(xs) => holds(!v.is_some_and(|v| xs.iter().any(|x| json_eq(v, x)))),
            Test::Present(p) => holds(v.is_some_and(|v| !v.is_null()) == *p),
            Test::Regex { re, exclude_self } => {
                let mut caps = Vec::new();
                let mut matched = false;
                for t in texts(v) {
                    // `re.finditer`; a regex the engine gives up on counts as a match.
                    let found = match re.find_captures_partial(&t) {
                        (found, None) => found,
                        (found, Some(e)) => {
                            undecided.push(format!(
                                "regex `{}` on param `{}` could not be evaluated ({}); treated as matching",
                                re.as_str(),
                                self.param,
                                e.0
                            ));
                            matched = true;
                            caps.push(UNDECIDED_CAPTURE.to_string());
                            found
                        }
                    };
                    for (m, whole) in found {
                        matched = true;
                        // A group 1 that took no part captures "" (Python's `re.findall`).
                        let s = m.unwrap_or_default();
                        // The agent's own id, as the capture or as the whole match (a group
                        // that captures only part of an id, issue 6 T4-19).
                        if *exclude_self
                            && (agent_id == Some(s.as_str()) || agent_id == Some(&whole))
                        {
                            continue;
                        }
                        caps.push(s);
                    }
                }
                if !matched || (*exclude_self && caps.is_empty()) {
                    None
                } else {
                    Some(caps)
                }
            }
        }
    }
}

/// All conditions must hold; captures are concatenated in order.
/// Regexes the engine gave up on are noted in `undecided` and count as matching
/// ([`ParamCond::eval_noting`]).
pub fn eval_all(
    conds: &[ParamCond],
    params: &Map<String, Value>,
    agent_id: Option<&str>,
    undecided: &mut Vec<String>,
) -> Option<Vec<String>> {
    let mut caps = Vec::new();
    for c in conds {
        caps.extend(c.eval_noting(params, agent_id, undecided)?);
    }
    Some(caps)
}

/// `prior-params-match`.
#[derive(Debug, Clone, Default)]
pub struct PriorMatch {
    /// `captures-subset-of`.
    pub captures_subset_of: Option<String>,
    /// `captures-any-in`.
    pub captures_any_in: Option<String>,
    /// `same` and `equal`: (prior param, target param).
    pub equal: Vec<(String, String)>,
}

fn contains(list: Option<&Value>, s: &str) -> bool {
    match list {
        Some(Value::Array(a)) => a.iter().any(|x| x.as_str() == Some(s)),
        Some(Value::String(x)) => x == s,
        Some(other) => *other == s,
        None => false,
    }
}

impl PriorMatch {
    /// True when a prior record with `prior` params (and `prior_result`, its result object)
    /// satisfies the match for a proposed call with `target` params and `captures`.
    pub fn eval(
        &self,
        prior: &Map<String, Value>,
        prior_result: &Map<String, Value>,
        target: &Map<String, Value>,
        captures: &[String],
    ) -> bool {
        if let Some(p) = &self.captures_subset_of {
            let list = lookup(prior, p);
            if !captures.iter().all(|c| contains(list, c)) {
                return false;
            }
        }
        if let Some(p) = &self.captures_any_in {
            let list = lookup(prior, p);
            if !captures.iter().any(|c| contains(list, c)) {
                return false;
            }
        }
        self.equal.iter().all(|(pp, tp)| {
            match (
                lookup(prior, pp).or_else(|| lookup(prior_result, pp)),
                lookup(target, tp),
            ) {
                // A missing or null value (on either side) equals nothing, not even another
                // missing value: a call naming no record is not "the same record" (T16).
                (Some(a), Some(b)) if !a.is_null() && !b.is_null() => json_eq(a, b),
                _ => false,
            }
        })
    }
}

/// A required prior message: `{ role, kind, content-regex, latest, consume, max-age-messages }`.
#[derive(Debug, Clone)]
pub struct MessageWatch {
    /// Role the message must have (`user`, `assistant`, `tool`, `system`), if any.
    pub role: Option<String>,
    /// pyAgentic kind the message must have, if any.
    pub kind: Option<String>,
    /// Regex its content must match.
    pub content: Regex,
    /// Only the most recent message of that role/kind counts.
    pub latest: bool,
    /// A matching message satisfies one call only.
    pub consume: bool,
    /// The message must be among the last N messages (of any role).
    pub max_age_messages: Option<u64>,
}

/// Runtime state of one message watch.
#[derive(Debug, Clone, Default)]
pub struct MessageState {
    /// Unconsumed matching messages (message sequence numbers), oldest first.
    matches: VecDeque<u64>,
    /// Whether the most recent message of the watched role/kind matched.
    latest_matched: bool,
    /// Matching messages observed in the trace (for the reason text, [`MessageWatch::unmet`]).
    ever: u64,
    /// Matches consumed by calls (`consume = true`).
    consumed: u64,
    /// The most recent message of the role/kind matched and a call consumed it.
    latest_consumed: bool,
}

/// Bound on remembered matches when nothing else bounds them.
const MESSAGE_MATCHES_CAP: usize = 10_000;

impl MessageWatch {
    fn applies_to(&self, m: &MessageRecord) -> bool {
        self.role.as_deref().is_none_or(|r| m.role() == r)
            && self.kind.as_deref().is_none_or(|k| m.kind.as_str() == k)
    }

    /// Observes message number `seq`. A content regex the engine gives up on counts as not
    /// matching (a required message grants) and is noted in `undecided` (issue 6 T13).
    pub fn observe(
        &self,
        st: &mut MessageState,
        seq: u64,
        m: &MessageRecord,
        undecided: &mut Vec<String>,
    ) {
        if self.applies_to(m) {
            let hit = match self.content.search(m.content.as_deref().unwrap_or("")) {
                Ok(hit) => hit,
                Err(e) => {
                    undecided.push(format!(
                        "message regex `{}` could not be evaluated ({}); the message is treated as not matching",
                        self.content.as_str(),
                        e.0
                    ));
                    false
                }
            };
            st.latest_matched = hit;
            st.latest_consumed = false;
            if hit {
                st.ever += 1;
                if !self.consume {
                    // Only the newest match matters.
                    st.matches.clear();
                }
                st.matches.push_back(seq);
                if st.matches.len() > MESSAGE_MATCHES_CAP {
                    st.matches.pop_front();
                }
            }
        }
        // A `tool_call` (or `agent_call`) message is the request of the call that follows it:
        // it is not a message *before* that call, so it does not age the window yet; it counts
        // from the next message on (issue 6 T4-28: chat traces carry one before each call,
        // native traces usually none).
        let issues_call = matches!(
            m.kind,
            crate::trace::MessageKind::ToolCall | crate::trace::MessageKind::AgentCall
        );
        if let Some(n) = self.max_age_messages.filter(|_| !issues_call) {
            let oldest = (seq + 1).saturating_sub(n);
            while st.matches.front().is_some_and(|&s| s < oldest) {
                st.matches.pop_front();
            }
        }
    }

    /// True when a matching message satisfies a call now. Consumes nothing: with `consume`, the
    /// caller spends the message with [`MessageWatch::consume`] once the whole stack has
    /// allowed the call (issue 6 T5-19).
    pub fn satisfied(&self, st: &MessageState) -> bool {
        (st.latest_matched || !self.latest) && !st.matches.is_empty()
    }

    /// Spends the newest matching message on a call the stack allowed (`consume = true`): it
    /// satisfies no later call. Does nothing when no match is left.
    pub fn consume(&self, st: &mut MessageState) {
        if st.matches.pop_back().is_none() {
            return;
        }
        st.consumed += 1;
        if self.latest {
            st.latest_matched = false;
            st.latest_consumed = true;
        }
    }

    /// Why [`MessageWatch::satisfied`] said no, for the block reason (issue 6 T4): `none found`
    /// when no message of the role/kind matched in the trace; else the condition that failed:
    /// `latest = true` (the latest such message does not match, or it already satisfied a
    /// call), `consume = true` (every match already satisfied a call) or `max-age-messages`
    /// (no match among the last N messages).
    pub fn unmet(&self, st: &MessageState) -> String {
        let who = self.who();
        if st.ever == 0 {
            return "none found".into();
        }
        if self.latest && !st.latest_matched {
            return if st.latest_consumed {
                format!("the latest {who} matched but already satisfied an earlier call (consume = true)")
            } else {
                format!("an earlier {who} matched, but the latest {who} does not (latest = true)")
            };
        }
        if self.consume && st.consumed >= st.ever {
            return format!(
                "every matching {who} already satisfied an earlier call (consume = true)"
            );
        }
        match self.max_age_messages {
            Some(n) => format!("none among the last {n} message(s) (max-age-messages = {n})"),
            None => "none found".into(),
        }
    }

    /// `user message`, `` `kind` message `` or `message`.
    fn who(&self) -> String {
        match (&self.role, &self.kind) {
            (Some(r), _) => format!("{r} message"),
            (None, Some(k)) => format!("`{k}` message"),
            (None, None) => "message".into(),
        }
    }

    /// A short description for messages: `user message matching '(?i)\byes\b'`.
    pub fn describe(&self) -> String {
        format!("{} matching '{}'", self.who(), self.content.as_str())
    }
}

/// Converts a TOML value to JSON for equality tests.
pub fn json_of(v: &SVal) -> Value {
    v.to_json()
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_compare_as_python_does() {
        let eq = |a: &str, b: &str| {
            let (a, b): (Value, Value) = (
                serde_json::from_str(a).unwrap(),
                serde_json::from_str(b).unwrap(),
            );
            json_eq(&a, &b)
        };
        assert!(!eq("9007199254740993", "9007199254740992"));
        assert!(!eq("18446744073709551615", "18446744073709551614"));
        assert!(eq("-0.0", "0"));
        assert!(eq("1", "1.0"));
        assert!(eq("1e0", "true"));
        assert!(eq("{\"a\": [0.5, 2]}", "{\"a\": [0.50, 2.0]}"));
        assert!(!eq("0.5", "1"));
        assert!(!eq("\"1\"", "1"));
        assert!(!eq("null", "0"));
        assert!(eq("null", "null"));
        assert_eq!(PyNumber::of(&json!(-0.0)), Some(PyNumber::Int(0)));
        assert_eq!(
            PyNumber::of(&json!(2.5)).map(PyNumber::text).as_deref(),
            Some("2.5")
        );
        assert_eq!(
            PyNumber::of(&json!(1e300)).map(PyNumber::text).as_deref(),
            Some("1e300")
        );
        assert_eq!(
            PyNumber::of(&json!(1e20)).map(PyNumber::text).as_deref(),
            Some("100000000000000000000")
        );
    }

    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn regex_captures_and_self_exclusion() {
        let c = ParamCond {
            param: "content".into(),
            test: Test::Regex {
                re: Regex::new("agent-[0-9a-f]+").unwrap(),
                exclude_self: true,
            },
        };
        let p = obj(json!({"content": "agent-abc123 and agent-owner and agent-0f"}));
        // `agent-owner` is no match (the regex needs a hex digit); the own id is excluded.
        assert_eq!(
            c.eval(&p, Some("agent-0f")),
            Some(vec!["agent-abc123".to_string()])
        );
        let only_self = obj(json!({"content": "I am agent-0f"}));
        assert_eq!(c.eval(&only_self, Some("agent-0f")), None);
        assert_eq!(c.eval(&obj(json!({"content": "Hi there!"})), None), None);
        assert_eq!(c.eval(&obj(json!({})), None), None);
        // Issue 6 T4-19: with a group, the own id is recognised by the whole match too; the
        // others' captures stay the group.
        let g = ParamCond {
            param: "content".into(),
            test: Test::Regex {
                re: Regex::new("agent-([0-9a-f]+)").unwrap(),
                exclude_self: true,
            },
        };
        assert_eq!(
            g.eval(
                &obj(json!({"content": "agent-abc123 is up"})),
                Some("agent-abc123")
            ),
            None
        );
        assert_eq!(
            g.eval(&p, Some("agent-0f")),
            Some(vec!["abc123".to_string()])
        );
        // An id stored without its prefix is still recognised by the capture.
        assert_eq!(g.eval(&p, Some("0f")), Some(vec!["abc123".to_string()]));
    }

    #[test]
    fn regex_has_python_semantics() {
        // Lookahead (a Python-only construct before pyregex) and Python's `$`.
        let c = ParamCond {
            param: "content".into(),
            test: Test::Regex {
                re: Regex::new(r"agent-(?!coord)([0-9a-f]+)\b").unwrap(),
                exclude_self: false,
            },
        };
        let p = obj(json!({"content": "agent-coord and agent-9f"}));
        assert_eq!(c.eval(&p, None), Some(vec!["9f".to_string()]));
        let dollar = ParamCond {
            param: "status".into(),
            test: Test::Regex {
                re: Regex::new("^done$").unwrap(),
                exclude_self: false,
            },
        };
        assert_eq!(
            dollar.eval(&obj(json!({"status": "done\n"})), None),
            Some(vec!["done".to_string()])
        );
        assert_eq!(dollar.eval(&obj(json!({"status": "done\n\n"})), None), None);
    }

    #[test]
    fn subset_and_any() {
        let m = PriorMatch {
            captures_subset_of: Some("agent_ids".into()),
            ..Default::default()
        };
        let prior = obj(json!({"agent_ids": ["agent-a1", "agent-b2"]}));
        let none = Map::new();
        assert!(m.eval(&prior, &none, &none, &["agent-a1".into()]));
        assert!(!m.eval(
            &prior,
            &none,
            &none,
            &["agent-a1".into(), "agent-c3".into()]
        ));
        let any = PriorMatch {
            captures_any_in: Some("agent_ids".into()),
            ..Default::default()
        };
        assert!(any.eval(
            &prior,
            &none,
            &none,
            &["agent-a1".into(), "agent-c3".into()]
        ));
        let same = PriorMatch {
            equal: vec![("reservation_id".into(), "reservation_id".into())],
            ..Default::default()
        };
        let target = obj(json!({"reservation_id": "X1"}));
        assert!(same.eval(&obj(json!({"reservation_id": "X1"})), &none, &target, &[]));
        assert!(!same.eval(&obj(json!({"reservation_id": "X2"})), &none, &target, &[]));
        // Missing or null on either side matches nothing (issue 6 T16).
        let empty = obj(json!({}));
        let null = obj(json!({"reservation_id": null}));
        assert!(!same.eval(&empty, &none, &empty, &[]));
        assert!(!same.eval(&null, &none, &null, &[]));
        assert!(!same.eval(&null, &none, &empty, &[]));
        assert!(!same.eval(&empty, &none, &null, &[]));
        assert!(!same.eval(&empty, &none, &target, &[]));
        // A booking whose result names the reservation counts.
        assert!(same.eval(&obj(json!({"user_id": "u"})), &target, &target, &[]));
    }

    #[test]
    fn messages_latest_and_consume() {
        let w = MessageWatch {
            role: Some("user".into()),
            kind: None,
            content: Regex::new(r"(?i)\byes\b").unwrap(),
            latest: true,
            consume: true,
            max_age_messages: None,
        };
        let mut st = MessageState::default();
        let mut user = MessageRecord::new(crate::trace::MessageKind::User);
        user.content = Some("Yes, please.".into());
        w.observe(&mut st, 0, &user, &mut Vec::new());
        assert!(w.satisfied(&st));
        assert!(w.satisfied(&st), "checking spends nothing");
        w.consume(&mut st);
        assert!(!w.satisfied(&st), "consumed");
        user.content = Some("yes".into());
        w.observe(&mut st, 1, &user, &mut Vec::new());
        user.content = Some("wait, no".into());
        w.observe(&mut st, 2, &user, &mut Vec::new());
        assert!(!w.satisfied(&st), "latest user message is not a yes");
    }

    /// Issue 6 T4-28: the `tool_call` message that issues a call does not age the
    /// `max-age-messages` window for that call; it counts from the next message on.
    #[test]
    fn tool_call_messages_do_not_age_the_window_of_their_call() {
        use crate::trace::MessageKind;
        let w = MessageWatch {
            role: Some("user".into()),
            kind: None,
            content: Regex::new(r"(?i)\byes\b").unwrap(),
            latest: false,
            consume: false,
            max_age_messages: Some(2),
        };
        let mut st = MessageState::default();
        let mut user = MessageRecord::new(MessageKind::User);
        user.content = Some("yes".into());
        let mut asst = MessageRecord::new(MessageKind::Assistant);
        asst.role = Some("assistant".into());
        let mut call = MessageRecord::new(MessageKind::ToolCall);
        call.role = Some("assistant".into());
        let mut result = MessageRecord::new(MessageKind::ToolResult);
        result.role = Some("tool".into());
        w.observe(&mut st, 0, &user, &mut Vec::new());
        w.observe(&mut st, 1, &asst, &mut Vec::new());
        w.observe(&mut st, 2, &call, &mut Vec::new());
        assert!(w.satisfied(&st), "the yes is 2 messages before the call");
        w.observe(&mut st, 3, &result, &mut Vec::new());
        assert!(
            !w.satisfied(&st),
            "3 messages later (the tool call counts now)"
        );
    }
}
