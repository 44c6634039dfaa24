//! `args-aware-order` (Colony `ArgsAwareTemporalOrderGuardrail` + `ArgsAwareOrderingRule`,
//! colony-reference §4.4).
//!
//! Per rule, in order: skip unless the call matches `target`; skip unless `applies-when` holds
//! (its regex captures feed `prior-params-match`); skip when there is no `required-prior`. Then
//! look for a satisfying prior:
//!
//! - a **call** (`required-prior = "pattern"` or `{ call = "pattern", status = ... }`): scan the
//!   window (the last `max-age-calls` records of the history, or all of it) newest first for a
//!   record matching the pattern, with an allowed status (`status` / `require-status`; Colony
//!   ignores status, so by default an errored prior counts), no older than `max-age-seconds`
//!   (measured from the record's completion, as Colony stamps `start_wall` after dispatch, to
//!   the proposed call's time; a record or call without a time fails the bound), whose params
//!   satisfy `prior-params-match`. Colony's texts: `'{key}' requires a recent '{prior}' call
//!   matching its args; none in the last {max_age_calls or len(history)} call(s).` and the
//!   rule's suggestion, else `Call an action matching '{prior}' before '{key}'.`
//!   (`max-age-calls = 0` gives an empty window: the rule always blocks, as in Colony.)
//! - a **message** (`required-prior = { message = { role, content-regex, latest, consume,
//!   max-age-messages } }`, e.g. an explicit user "yes" before a booking): see
//!   [`super::predicates::MessageWatch`]. Texts: `'{key}' requires a prior {role} message
//!   matching '{regex}'; none found.` and the rule's suggestion, else `Obtain a {role} message
//!   matching '{regex}' before '{key}'.`

use super::matching::MatchMode;
use super::predicates::{eval_all, ParamCond, PriorMatch};
use super::{Block, Guardrail, GuardrailSet, Proposed, TraceState};

/// What must precede the target.
#[derive(Debug, Clone)]
pub enum Prior {
    /// Nothing (`required-prior` empty): the rule never blocks, as in Colony.
    Nothing,
    /// A call matching a pattern (watch id; the pattern as written).
    Call {
        /// Watch id.
        watch: usize,
        /// Pattern text.
        text: String,
    },
    /// A message (message watch id).
    Message {
        /// Message watch id.
        watch: usize,
    },
}

/// One rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Pattern id of the target.
    pub target: usize,
    /// `applies-when` conditions (all must hold).
    pub applies_when: Vec<ParamCond>,
    /// The required prior.
    pub prior: Prior,
    /// `max-age-calls`.
    pub max_age_calls: Option<u64>,
    /// `max-age-seconds`.
    pub max_age_seconds: Option<f64>,
    /// `prior-params-match`.
    pub prior_match: Option<PriorMatch>,
    /// `suggestion` (empty: the generic text).
    pub suggestion: String,
    /// Equality index answering `prior-params-match` (value comparisons only).
    pub eq_index: Option<usize>,
    /// Membership index narrowing the candidates of a capture test (`captures-subset-of` /
    /// `captures-any-in`).
    pub member_index: Option<usize>,
}

/// A compiled args-aware guardrail.
#[derive(Debug, Clone)]
pub struct ArgsAware {
    /// Rules in order.
    pub rules: Vec<Rule>,
}

impl ArgsAware {
    /// Where no satisfying prior was found, as the block reason says it (T8-2). `substring`
    /// mode keeps Colony's text byte for byte: `none in the last {max_age_calls or
    /// len(history)} call(s)` (`n`), even when no window was configured. `key` mode names the
    /// window actually configured: `none in the history` without one, the seconds of
    /// `max-age-seconds`, and an empty window for `max-age-calls = 0`.
    fn window_text(mode: MatchMode, rule: &Rule, n: u64) -> String {
        if mode == MatchMode::Substring {
            return format!("none in the last {n} call(s)");
        }
        match (rule.max_age_calls, rule.max_age_seconds) {
            (Some(0), _) => "none can be: max-age-calls = 0 leaves an empty window".into(),
            (Some(c), Some(s)) => format!("none in the last {c} call(s) within {s} second(s)"),
            (Some(c), None) => format!("none in the last {c} call(s)"),
            (None, Some(s)) => format!("none in the last {s} second(s)"),
            (None, None) => "none in the history".into(),
        }
    }

    /// Checks one call.
    pub fn check(
        &self,
        g: &Guardrail,
        set: &GuardrailSet,
        call: &Proposed,
        st: &mut TraceState,
    ) -> Option<Block> {
        for rule in &self.rules {
            if !call.matches(set, rule.target) {
                continue;
            }
            let captures = if rule.applies_when.is_empty() {
                Vec::new()
            } else {
                let n = st.undecided.len();
                let caps = eval_all(
                    &rule.applies_when,
                    call.params(),
                    st.agent_id.as_deref(),
                    &mut st.undecided,
                );
                for w in &mut st.undecided[n..] {
                    *w = format!("guardrail `{}`, applies-when: {w} (the rule applies)", g.id);
                }
                match caps {
                    Some(c) => c,
                    None => continue,
                }
            };
            let key = call.key(g.mode);
            match &rule.prior {
                Prior::Nothing => continue,
                Prior::Call { watch, text } => {
                    if Self::prior_call(set, rule, *watch, call, st, &captures) {
                        continue;
                    }
                    let n = match rule.max_age_calls {
                        Some(n) if n > 0 => n,
                        _ => st.history.len() as u64,
                    };
                    // Calls of the prior's pattern whose age cannot be known (no time on them or
                    // on this call) never count as recent (issue 6 T4-10): say so.
                    let mut unknown_note = String::new();
                    if let Some(max) = rule.max_age_seconds {
                        let h = &st.history;
                        let start = h.next_seq().saturating_sub(n).max(h.first_seq());
                        let unknown = h
                            .hits(*watch)
                            .iter()
                            .filter(|&&seq| seq >= start)
                            .filter(|&&seq| {
                                call.now.is_none() || h.get(seq).is_some_and(|r| r.wall.is_none())
                            })
                            .count();
                        if unknown > 0 {
                            st.note_unknown_time(&g.id, "max-age-seconds");
                            unknown_note = format!(
                                " ({unknown} '{text}' call(s) there have no known age: {}, and max-age-seconds = {max} does not count them as recent)",
                                if call.now.is_none() {
                                    "this call has no recorded time"
                                } else {
                                    "no recorded time"
                                }
                            );
                        }
                    }
                    let window = Self::window_text(g.mode, rule, n);
                    return Some(Block {
                        guardrail: g.id.clone(),
                        reason: format!(
                            "'{key}' requires a recent '{text}' call matching its args; {window}{unknown_note}."
                        ),
                        suggestion: if rule.suggestion.is_empty() {
                            format!("Call an action matching '{text}' before '{key}'.")
                        } else {
                            rule.suggestion.clone()
                        },
                    });
                }
                Prior::Message { watch } => {
                    let w = &set.message_watches[*watch];
                    if w.satisfied(&st.messages[*watch]) {
                        if w.consume && !st.pending_consume.contains(watch) {
                            st.pending_consume.push(*watch);
                        }
                        continue;
                    }
                    let what = w.describe();
                    let unmet = w.unmet(&st.messages[*watch]);
                    return Some(Block {
                        guardrail: g.id.clone(),
                        reason: format!("'{key}' requires a prior {what}; {unmet}."),
                        suggestion: if rule.suggestion.is_empty() {
                            format!("Obtain a {what} before '{key}'.")
                        } else {
                            rule.suggestion.clone()
                        },
                    });
                }
            }
        }
        None
    }

    fn prior_call(
        set: &GuardrailSet,
        rule: &Rule,
        watch: usize,
        call: &Proposed,
        st: &TraceState,
        captures: &[String],
    ) -> bool {
        let h = &st.history;
        let window_start = match rule.max_age_calls {
            Some(n) => h.next_seq().saturating_sub(n).max(h.first_seq()),
            None => h.first_seq(),
        };
        let age_ok = |rec: &super::HistEntry| match rule.max_age_seconds {
            None => true,
            Some(max) => {
                matches!((call.now, rec.wall), (Some(now), Some(wall)) if now - wall <= max)
            }
        };
        if let Some(i) = rule.eq_index {
            // The newest record with equal values decides: older ones are further back in the
            // window and in time.
            let mut key = String::new();
            let complete = super::index_key_into(
                &set.eq_indexes[i],
                call.params,
                &crate::trace::RawJson::none(),
                false,
                &mut key,
            );
            // A target without the value (missing or null) names no record: it satisfies no
            // `same` / `equal` (issue 6 T16).
            if !complete {
                return false;
            }
            return match st.eq[i].get(&key) {
                Some(&seq) if seq >= window_start => h.get(seq).is_some_and(age_ok),
                _ => false,
            };
        }
        // A capture test holds only on records whose list holds a capture: with a membership
        // index the candidates are the records holding them (every capture for
        // `captures-subset-of`: the intersection of the captures' posting lists; any for
        // `captures-any-in`: their union), newest first. Same records, same order, same verdict
        // as the scan below, but a capture held by no record in the window answers at once
        // and the work is bounded by the shortest list (issue 6 R11).
        let scan: Box<dyn Iterator<Item = u64> + '_> = match (rule.member_index, &rule.prior_match)
        {
            (Some(i), Some(m)) if !captures.is_empty() => {
                let index = &st.members[i];
                let mut caps: Vec<&str> = captures.iter().map(String::as_str).collect();
                caps.sort_unstable();
                caps.dedup();
                let mut lists = Vec::with_capacity(caps.len());
                for c in caps {
                    let list = index.get(c).map(|q| window(q, window_start));
                    match list {
                        Some(l) if !l.is_empty() => lists.push(l),
                        // No record in the window holds this capture.
                        _ if m.captures_subset_of.is_some() => return false,
                        _ => {}
                    }
                }
                if m.captures_subset_of.is_some() {
                    Box::new(Intersect::new(lists))
                } else {
                    Box::new(Union::new(lists))
                }
            }
            _ => Box::new(h.hits(watch).iter().rev().copied()),
        };
        for seq in scan {
            if seq < window_start {
                break;
            }
            let Some(rec) = h.get(seq) else { continue };
            if !age_ok(rec) {
                continue;
            }
            if let Some(m) = &rule.prior_match {
                let (prior, result) = rec.objects();
                if !m.eval(prior, result, call.params(), captures) {
                    continue;
                }
            }
            return true;
        }
        false
    }
}

/// The part of an ascending posting list at or after `start`, as two slices (a ring buffer's
/// halves), both ascending.
fn window(q: &std::collections::VecDeque<u64>, start: u64) -> Posting<'_> {
    let from = q.partition_point(|&s| s < start);
    let (a, b) = q.as_slices();
    let (a, b) = if from <= a.len() {
        (&a[from..], b)
    } else {
        (&a[a.len()..], &b[from - a.len()..])
    };
    Posting { a, b }
}

/// An ascending posting list held as two ascending slices (`a` before `b`).
#[derive(Debug, Clone, Copy)]
struct Posting<'q> {
    a: &'q [u64],
    b: &'q [u64],
}

impl Posting<'_> {
    fn len(&self) -> usize {
        self.a.len() + self.b.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn at(&self, i: usize) -> u64 {
        if i < self.a.len() {
            self.a[i]
        } else {
            self.b[i - self.a.len()]
        }
    }

    /// The number of elements `<= x` within the first `end` elements (galloping down from
    /// `end`, so a walk from the newest element costs the log of the distance moved).
    fn count_le(&self, x: u64, end: usize) -> usize {
        // Find a bound lo with at(lo - 1) <= x (or lo = 0), stepping back exponentially.
        let mut hi = end;
        let mut step = 1;
        let mut lo = end;
        while lo > 0 && self.at(lo - 1) > x {
            hi = lo - 1;
            lo = lo.saturating_sub(step);
            step *= 2;
        }
        // Now at(lo - 1) <= x (or lo == 0), and every element in [hi, end) is > x.
        let (mut l, mut h) = (lo, hi);
        while l < h {
            let mid = l + (h - l) / 2;
            if self.at(mid) <= x {
                l = mid + 1;
            } else {
                h = mid;
            }
        }
        l
    }
}

/// Newest-first intersection of ascending posting lists: the shortest list drives, the others
/// are searched by galloping, so the work is about the shortest list's length times the log of
/// the length ratio.
struct Intersect<'q> {
    lists: Vec<Posting<'q>>,
    /// Per list: how many of its elements are still unvisited (a prefix).
    ends: Vec<usize>,
}

impl<'q> Intersect<'q> {
    fn new(mut lists: Vec<Posting<'q>>) -> Self {
        lists.sort_by_key(Posting::len);
        let ends = lists.iter().map(Posting::len).collect();
        Self { lists, ends }
    }
}

impl Iterator for Intersect<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        'candidates: while self.ends.first().is_some_and(|&e| e > 0) {
            self.ends[0] -= 1;
            let x = self.lists[0].at(self.ends[0]);
            for k in 1..self.lists.len() {
                let n = self.lists[k].count_le(x, self.ends[k]);
                self.ends[k] = n;
                if n == 0 {
                    self.ends[0] = 0;
                    return None;
                }
                if self.lists[k].at(n - 1) != x {
                    continue 'candidates;
                }
                // `x` itself stays unvisited in list k only until the next candidate, which
                // is smaller: drop it now.
                self.ends[k] = n - 1;
            }
            return Some(x);
        }
        None
    }
}

/// Newest-first union of ascending posting lists (each sequence number once).
struct Union<'q> {
    lists: Vec<Posting<'q>>,
    ends: Vec<usize>,
}

impl<'q> Union<'q> {
    fn new(lists: Vec<Posting<'q>>) -> Self {
        let ends = lists.iter().map(Posting::len).collect();
        Self { lists, ends }
    }
}

impl Iterator for Union<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let x = (0..self.lists.len())
            .filter(|&k| self.ends[k] > 0)
            .map(|k| self.lists[k].at(self.ends[k] - 1))
            .max()?;
        for k in 0..self.lists.len() {
            if self.ends[k] > 0 && self.lists[k].at(self.ends[k] - 1) == x {
                self.ends[k] -= 1;
            }
        }
        Some(x)
    }
}

#[cfg(test)]
mod posting_tests {
    use super::*;
    use std::collections::VecDeque;

    fn deque(v: &[u64], shift: usize) -> VecDeque<u64> {
        // A ring buffer whose contents wrap around its end, so both slices are used.
        let mut q: VecDeque<u64> = VecDeque::with_capacity(v.len().max(1));
        let skip = q.capacity().saturating_sub(v.len() / 2 + shift % 3);
        for _ in 0..skip {
            q.push_back(0);
            q.pop_front();
        }
        q.extend(v.iter().copied());
        q
    }

    fn naive_intersect(lists: &[Vec<u64>], start: u64) -> Vec<u64> {
        let mut out: Vec<u64> = lists[0]
            .iter()
            .copied()
            .filter(|&x| x >= start && lists.iter().all(|l| l.contains(&x)))
            .collect();
        out.reverse();
        out
    }

    fn naive_union(lists: &[Vec<u64>], start: u64) -> Vec<u64> {
        let mut out: Vec<u64> = lists
            .iter()
            .flatten()
            .copied()
            .filter(|&x| x >= start)
            .collect();
        out.sort_unstable();
        out.dedup();
        out.reverse();
        out
    }

    #[test]
    fn intersection_and_union_agree_with_the_naive_ones() {
        // Deterministic pseudo-random lists (an LCG), wrapped ring buffers, several windows.
        let mut seed = 12345u64;
        let mut rand = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..300 {
            let k = 1 + rand(4) as usize;
            let lists: Vec<Vec<u64>> = (0..k)
                .map(|_| {
                    let density = 1 + rand(6);
                    (0..200u64).filter(|_| rand(density) == 0).collect()
                })
                .collect();
            let start = rand(120);
            let deques: Vec<VecDeque<u64>> = lists.iter().map(|l| deque(l, round % 7)).collect();
            let postings = || deques.iter().map(|q| window(q, start)).collect::<Vec<_>>();
            let got: Vec<u64> = Intersect::new(postings()).collect();
            assert_eq!(got, naive_intersect(&lists, start), "round {round}");
            let got: Vec<u64> = Union::new(postings()).collect();
            assert_eq!(got, naive_union(&lists, start), "round {round}");
        }
    }

    #[test]
    fn window_drops_the_records_before_the_start() {
        let q = deque(&[3, 5, 8, 13], 3);
        let w = window(&q, 6);
        assert_eq!(
            (0..w.len()).map(|i| w.at(i)).collect::<Vec<_>>(),
            vec![8, 13]
        );
        assert!(window(&q, 14).is_empty());
        assert_eq!(window(&q, 0).len(), 4);
    }
}
