//! Guardrail evaluation throughput without JSON parsing: the synthetic benchmark trace
//! (bench/replay/gen_synthetic.py's vocabulary and mix) built in memory, replayed through the
//! five guardrails of bench/replay/synthetic.toml.
//!
//!     cargo bench -p cellguard-lints --bench replay_engine [-- CALLS]
//!
//! Prints calls per second of engine time (single thread). The end-to-end figure (reading the
//! file, parsing, reporting) and the comparison with Invariant are in bench/replay/bench.py.

use cellguard_lints::config::Profile;
use cellguard_lints::guardrails::config::parse_str;
use cellguard_lints::kb::KnowledgeBase;
use cellguard_lints::replay::{Decision, Options, Replayer};
use cellguard_lints::trace::*;
use std::path::Path;
use std::time::Instant;

const KEYS: [(&str, u32); 9] = [
    ("Store.store.list_records", 30),
    ("Search.search.search", 20),
    ("Store.store.get_record", 15),
    ("Store.store.update_record", 10),
    ("Planner.planner.check_plan_conflicts", 5),
    ("Planner.planner.propose_plan", 5),
    ("Booking.booking.book_slot", 5),
    ("Store.store.delete_record", 2),
    ("Pool.pool.spawn_worker", 1),
];

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn events(n: usize) -> Vec<Event> {
    let total: u32 = KEYS.iter().map(|k| k.1).sum();
    let mut rng = Lcg(7);
    let mut out = vec![Event::TraceStart(TraceInfo {
        name: "synthetic".into(),
        path: "synthetic".into(),
        format: Format::Native,
    })];
    let (mut calls, mut cell, mut t) = (0usize, 0u64, 1_780_000_000.0f64);
    while calls < n {
        if rng.next() % 100 < 8 {
            let mut m = MessageRecord::new(MessageKind::User);
            m.content = Some(
                if rng.next() % 2 == 0 {
                    "Yes, go ahead."
                } else {
                    "Check first?"
                }
                .into(),
            );
            out.push(Event::Record {
                line: 0,
                record: Record::Message(Box::new(m)),
            });
        }
        let k = [1, 1, 2, 3][(rng.next() % 4) as usize].min(n - calls);
        out.push(Event::Record {
            line: 0,
            record: Record::Cell(CellRecord {
                index: Some(cell),
                ..Default::default()
            }),
        });
        for i in 0..k {
            let mut r = (rng.next() % total as u64) as u32;
            let key = KEYS
                .iter()
                .find(|(_, w)| {
                    if r < *w {
                        true
                    } else {
                        r -= w;
                        false
                    }
                })
                .map_or(KEYS[0].0, |k| k.0);
            let params = Params::from_value(
                &serde_json::json!({"record_id": format!("r{}", rng.next() % 200)}),
            );
            out.push(Event::Record {
                line: 0,
                record: Record::from(CallRecord {
                    cell: Some(cell),
                    index: Some(i as u64),
                    raw_key: Some(key.into()),
                    params,
                    status: CallStatus::Ok,
                    start: Some(t),
                    end: Some(t + 0.005),
                    ..Default::default()
                }),
            });
            t += 0.01;
        }
        calls += k;
        cell += 1;
        t += 1.0;
    }
    out
}

/// User + system CPU seconds of this process (from /proc/self/stat; 0 elsewhere): the machine
/// may be shared, so throughput is reported per CPU second as well as per wall second.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|x| x.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|x| x.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/replay/synthetic.toml");
    let text = std::fs::read_to_string(&dir).expect("bench/replay/synthetic.toml");
    let cfg = parse_str(&dir, &text, Profile::Strict, None).expect("config");
    let evs = events(n);
    let kb = KnowledgeBase::new();
    let mut best = f64::MAX;
    let mut best_cpu = f64::MAX;
    let mut blocked = 0;
    for _ in 0..3 {
        let mut rp = Replayer::new(
            &cfg,
            &kb,
            Options {
                keep_decisions: false,
                ..Default::default()
            },
        );
        let mut sink = |_: &Decision| {};
        let c0 = cpu_seconds();
        let t0 = Instant::now();
        for e in &evs {
            rp.event(e, &mut sink);
        }
        let report = rp.finish();
        best = best.min(t0.elapsed().as_secs_f64());
        best_cpu = best_cpu.min(cpu_seconds() - c0);
        blocked = report.summary.blocked;
    }
    println!(
        "engine: {n} calls, 5 guardrails, {blocked} blocked: {best:.3} s wall ({:.0} calls/s), {best_cpu:.2} s CPU ({:.0} calls per CPU second)",
        n as f64 / best,
        n as f64 / best_cpu.max(0.01)
    );
}
