//! Work (not time) of a lint on growing inputs: the bytes the engine allocates while checking a
//! cell made of the same block repeated `k` times must grow linearly in `k`. A copy of a
//! per-name list at every use of the name (issue 5: `Sbx::assignments_of` cloned the
//! right-hand sides of every assignment of a name each time the name was read as an attribute
//! object, quadratic in a long cell that assigns and reads the same names over and over) shows
//! up here as allocation volume quadratic in `k`.
//!
//! Bytes are counted by a global allocator of this test binary (one test, so nothing else runs
//! meanwhile); the count is deterministic for a given input, unlike time.

use cellguard_lints::{check_file, KnowledgeBase, Settings, SourceFile};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATED: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(layout.size() as u64, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new_size as u64, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes allocated by one lint of `src` (default settings, empty knowledge base).
fn allocated(src: &str) -> u64 {
    let settings = Settings::default();
    let kb = KnowledgeBase::new();
    let file = SourceFile::new("cell.py", src);
    // Warm-up: the worker pool, thread-locals and lazily built tables are allocated once.
    let _ = check_file(&SourceFile::new("cell.py", "x = 1\n"), &settings, &kb);
    let before = ALLOCATED.load(Ordering::SeqCst);
    let found = check_file(&file, &settings, &kb);
    let after = ALLOCATED.load(Ordering::SeqCst);
    drop(found);
    after - before
}

/// The block of `bench/lsp_latency.py`'s benchmark cell (and of the 5 MB file of
/// `bench/lsp_big_file.py`), `k` times: the same names assigned and read in every block.
fn repeated(k: usize) -> String {
    blocks(k, 10)
}

/// The same block with one name for every block: `status_0` assigned `k` times and read four
/// times after each assignment.
fn reassigned(k: usize) -> String {
    blocks(k, 1)
}

/// `k` blocks cycling through `names` result names.
fn blocks(k: usize, names: usize) -> String {
    let mut src = String::from("\"\"\"A long recorded cell.\"\"\"\n");
    for b in 0..k {
        let i = b % names;
        src.push_str(&format!(
            "status_{i} = await run(\"AgentPoolCapability.AgentPoolCapability.get_agent_status\", agent_ids=[\"agent-{i}\"])\n\
             if status_{i}.success and status_{i}.data.get(\"state\") == \"idle\":\n    \
             results[\"agent-{i}\"] = json.dumps(status_{i}.data, sort_keys=True)\n\
             else:\n    \
             log(\"agent-{i} is busy: \" + str(status_{i}.error))  # retry later\n\
             counts = Counter(w for w in goals[{}].split() if len(w) > 3)\n",
            i % 7
        ));
    }
    src.push_str("await signal_completion()\n");
    src
}

#[test]
fn lint_allocations_grow_linearly_in_the_cell_length() {
    for (shape, make) in [
        ("benchmark block", repeated as fn(usize) -> String),
        ("reassigned name", reassigned),
    ] {
        let (small, large) = (100, 800);
        let a = allocated(&make(small));
        let b = allocated(&make(large));
        let ratio = b as f64 / a as f64;
        let expected = (large / small) as f64;
        // Linear work gives the size ratio (x7.97 for both shapes) up to the rounding of
        // growing buffers; the quadratic copy gave x8.54 (benchmark block, ten names) and
        // x13.24 (one name).
        assert!(
            ratio < expected * 1.25,
            "{shape}: {a} bytes for {small} blocks, {b} for {large}: x{ratio:.2} for x{expected}"
        );
    }
}
