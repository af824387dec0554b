//! Quickselect as PyTorch's `kthvalue` runs it: the
//! median-of-three partitioning selection of *Numerical Recipes*, which
//! decides which of several equal elements is reported.

/// Moves the `k`-th smallest element of `v` (0-based, by `greater`, a
/// strict "orders after") to `v[k]`.
pub fn select<E: Copy>(v: &mut [E], k: usize, greater: impl Fn(&E, &E) -> bool) {
    if v.is_empty() {
        return;
    }
    let (mut lo, mut hi) = (0usize, v.len() - 1);
    loop {
        if hi <= lo {
            return;
        }
        if hi == lo + 1 {
            if greater(&v[lo], &v[hi]) {
                v.swap(lo, hi);
            }
            return;
        }
        // Order v[lo] <= ... with the median of lo, mid, hi at lo and
        // sentinels at lo + 1 (no greater than it) and hi (no less).
        let mid = lo + (hi - lo) / 2;
        v.swap(mid, lo + 1);
        if greater(&v[lo + 1], &v[hi]) {
            v.swap(lo + 1, hi);
        }
        if greater(&v[lo], &v[hi]) {
            v.swap(lo, hi);
        }
        if greater(&v[lo + 1], &v[lo]) {
            v.swap(lo + 1, lo);
        }
        let pivot = v[lo];
        let (mut i, mut j) = (lo + 1, hi);
        loop {
            i += 1;
            while greater(&pivot, &v[i]) {
                i += 1;
            }
            j -= 1;
            while greater(&v[j], &pivot) {
                j -= 1;
            }
            if j < i {
                break;
            }
            v.swap(i, j);
        }
        v.swap(lo, j);
        if j <= k {
            lo = i;
        }
        if j >= k {
            hi = j - 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::SmallRng};

    #[test]
    fn selects_the_kth_smallest() {
        let mut rng = SmallRng::seed_from_u64(11);
        for n in [1, 2, 3, 4, 9, 64, 301] {
            let v: Vec<i32> = (0..n).map(|_| rng.random_range(-20..20)).collect();
            let mut sorted = v.clone();
            sorted.sort();
            for k in 0..n {
                let mut w = v.clone();
                select(&mut w, k, |a, b| a > b);
                assert_eq!(w[k], sorted[k], "n={n} k={k}");
            }
        }
    }
}
