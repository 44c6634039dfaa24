//! Length-bounded edit distance for suggestions ("did you mean ...").
//!
//! Suggestions keep only candidates within a small distance (at most 3), so the full
//! `O(n·m)` table of `strsim::osa_distance` against every candidate is wasted work. The
//! bounded version here answers the same question (the optimal-string-alignment distance,
//! counted in Unicode scalar values exactly as `strsim::osa_distance` counts it) only when it is
//! at most `k`: it rejects on the length difference first, fills only the diagonal band of width
//! `2k + 1`, and stops as soon as a whole row exceeds `k`. ASCII strings are compared as bytes,
//! without allocating.

/// The optimal-string-alignment (restricted Damerau-Levenshtein) distance between `a` and `b`
/// in characters, when it is at most `k`; `None` when it is larger. Equal to
/// `strsim::osa_distance(a, b)` whenever that is `<= k`.
pub fn osa_within(a: &str, b: &str, k: usize) -> Option<usize> {
    if a.is_ascii() && b.is_ascii() {
        return banded(a.as_bytes(), b.as_bytes(), k);
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    banded(&a, &b, k)
}

fn banded<T: PartialEq>(a: &[T], b: &[T], k: usize) -> Option<usize> {
    let (n, m) = (a.len(), b.len());
    // Every edit changes the length by at most one.
    if n.abs_diff(m) > k {
        return None;
    }
    if n == 0 || m == 0 {
        return Some(n.max(m));
    }
    // Values above `k` are all the same to the caller: they are clamped to `big`, which also
    // stands for every cell outside the band.
    let big = k + 1;
    let mut prev2 = vec![big; m + 1];
    let mut prev: Vec<usize> = (0..=m).map(|j| j.min(big)).collect();
    let mut cur = vec![big; m + 1];
    for i in 1..=n {
        let lo = i.saturating_sub(k).max(1);
        let hi = (i + k).min(m);
        cur[0] = i.min(big);
        if lo > 1 {
            cur[lo - 1] = big;
        }
        let mut row_min = cur[0];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j - 1] + cost).min(prev[j] + 1).min(cur[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(prev2[j - 2] + 1);
            }
            cur[j] = d.min(big);
            row_min = row_min.min(cur[j]);
        }
        if hi < m {
            cur[hi + 1] = big;
        }
        if row_min > k {
            return None;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[m];
    (d <= k).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_distances() {
        assert_eq!(osa_within("ab", "ba", 3), Some(1));
        assert_eq!(osa_within("ab", "bca", 3), Some(3));
        assert_eq!(osa_within("ab", "bca", 2), None);
        assert_eq!(osa_within("", "abc", 3), Some(3));
        assert_eq!(osa_within("", "abcd", 3), None);
        assert_eq!(osa_within("damerau", "damerau", 0), Some(0));
        assert_eq!(osa_within("get_status", "get_statsu", 1), Some(1));
        assert_eq!(osa_within("é😀x", "😀éx", 1), Some(1));
        assert_eq!(osa_within("kitten", "sitting", 3), Some(3));
        assert_eq!(osa_within("kitten", "sitting", 2), None);
    }

    proptest::proptest! {
        /// The bounded distance agrees with `strsim::osa_distance` within the bound.
        #[test]
        fn agrees_with_strsim(a in "[abcé😀]{0,10}", b in "[abcé😀]{0,10}", k in 0usize..5) {
            let full = strsim::osa_distance(&a, &b);
            let want = (full <= k).then_some(full);
            proptest::prop_assert_eq!(osa_within(&a, &b, k), want);
        }

        /// Same on ASCII (the byte path).
        #[test]
        fn agrees_with_strsim_ascii(a in "[ab_.]{0,14}", b in "[ab_.]{0,14}", k in 0usize..5) {
            let full = strsim::osa_distance(&a, &b);
            let want = (full <= k).then_some(full);
            proptest::prop_assert_eq!(osa_within(&a, &b, k), want);
        }
    }
}
