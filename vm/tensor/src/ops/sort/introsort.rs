//! The orderings PyTorch's CPU kernels get from the C++ standard library
//! (GCC's): introsort for `sort`, introselect for `nth_element`, heap
//! selection for `partial_sort`. They are not stable, so the order of
//! equal keys — which indices `sort` and `topk` return for ties — is a
//! property of these exact algorithms; reproducing them step for step is
//! what makes fxvm's indices match PyTorch's.

/// Ranges this short finish with insertion sort.
const THRESHOLD: usize = 16;

/// `2 * floor(log2(n))`, the recursion budget before falling back to heapsort.
fn depth_limit(n: usize) -> usize {
    2 * n.max(1).ilog2() as usize
}

/// Sorts `v` by `less` (unstable, as `std::sort`).
pub fn sort<E: Copy>(v: &mut [E], less: &impl Fn(&E, &E) -> bool) {
    if v.len() < 2 {
        return;
    }
    introsort_loop(v, depth_limit(v.len()), less);
    final_insertion_sort(v, less);
}

/// Partially orders `v` so that `v[nth]` holds the element a full sort
/// would put there, with no greater element before it and no smaller after
/// (as `std::nth_element`).
pub fn nth_element<E: Copy>(v: &mut [E], nth: usize, less: &impl Fn(&E, &E) -> bool) {
    if nth >= v.len() {
        return;
    }
    let (mut lo, mut hi) = (0, v.len());
    let mut depth = depth_limit(v.len());
    while hi - lo > 3 {
        if depth == 0 {
            heap_select(&mut v[lo..hi], nth - lo + 1, less);
            v.swap(lo, nth);
            return;
        }
        depth -= 1;
        let cut = lo + partition_pivot(&mut v[lo..hi], less);
        if cut <= nth {
            lo = cut;
        } else {
            hi = cut;
        }
    }
    insertion_sort(&mut v[lo..hi], less);
}

/// Puts the `middle` smallest elements, sorted, at the front of `v` (as
/// `std::partial_sort`).
pub fn partial_sort<E: Copy>(v: &mut [E], middle: usize, less: &impl Fn(&E, &E) -> bool) {
    heap_select(v, middle, less);
    sort_heap(&mut v[..middle], less);
}

/// [`partial_sort`] of `front` followed by `rest`, where only `front`'s
/// length is kept: the elements of `rest` are read once, in order, and
/// never needed again, so they are not stored.
pub fn partial_sort_from<E: Copy>(
    front: &mut [E],
    rest: impl Iterator<Item = E>,
    less: &impl Fn(&E, &E) -> bool,
) {
    if front.is_empty() {
        return;
    }
    make_heap(front, less);
    for x in rest {
        if less(&x, &front[0]) {
            adjust_heap(front, 0, x, less);
        }
    }
    sort_heap(front, less);
}

fn introsort_loop<E: Copy>(mut v: &mut [E], mut depth: usize, less: &impl Fn(&E, &E) -> bool) {
    while v.len() > THRESHOLD {
        if depth == 0 {
            let n = v.len();
            partial_sort(v, n, less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, less);
        let (left, right) = v.split_at_mut(cut);
        introsort_loop(right, depth, less);
        v = left;
    }
}

/// Moves the median of the second, middle and last elements to the front
/// and partitions the rest around it; returns where the right part starts.
fn partition_pivot<E: Copy>(v: &mut [E], less: &impl Fn(&E, &E) -> bool) -> usize {
    let (a, b, c) = (1, v.len() / 2, v.len() - 1);
    let median = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(0, median);
    // Hoare's scheme without bounds checks in the original: the pivot and
    // the median-of-three guarantee both scans stop inside the range.
    let pivot = v[0];
    let (mut first, mut last) = (1, v.len());
    loop {
        while less(&v[first], &pivot) {
            first += 1;
        }
        last -= 1;
        while less(&pivot, &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort<E: Copy>(v: &mut [E], less: &impl Fn(&E, &E) -> bool) {
    if v.len() > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], less);
        for i in THRESHOLD..v.len() {
            linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

fn insertion_sort<E: Copy>(v: &mut [E], less: &impl Fn(&E, &E) -> bool) {
    for i in 1..v.len() {
        if less(&v[i], &v[0]) {
            v[..=i].rotate_right(1);
        } else {
            linear_insert(v, i, less);
        }
    }
}

/// Shifts `v[i]` left past the greater elements before it; something not
/// greater is known to precede it.
fn linear_insert<E: Copy>(v: &mut [E], mut i: usize, less: &impl Fn(&E, &E) -> bool) {
    let x = v[i];
    while less(&x, &v[i - 1]) {
        v[i] = v[i - 1];
        i -= 1;
    }
    v[i] = x;
}

/// Leaves the `middle` smallest elements of `v` in a max-heap at its front.
fn heap_select<E: Copy>(v: &mut [E], middle: usize, less: &impl Fn(&E, &E) -> bool) {
    if middle == 0 {
        return;
    }
    make_heap(&mut v[..middle], less);
    for i in middle..v.len() {
        if less(&v[i], &v[0]) {
            let x = v[i];
            v[i] = v[0];
            adjust_heap(&mut v[..middle], 0, x, less);
        }
    }
}

fn make_heap<E: Copy>(v: &mut [E], less: &impl Fn(&E, &E) -> bool) {
    let n = v.len();
    if n < 2 {
        return;
    }
    for parent in (0..=(n - 2) / 2).rev() {
        let x = v[parent];
        adjust_heap(v, parent, x, less);
    }
}

fn sort_heap<E: Copy>(v: &mut [E], less: &impl Fn(&E, &E) -> bool) {
    for last in (1..v.len()).rev() {
        let x = v[last];
        v[last] = v[0];
        adjust_heap(&mut v[..last], 0, x, less);
    }
}

/// Fills the hole at `hole` by walking down to a leaf along the greater
/// children, then sifts `x` up from there (GCC's two-phase sift).
fn adjust_heap<E: Copy>(v: &mut [E], mut hole: usize, x: E, less: &impl Fn(&E, &E) -> bool) {
    let n = v.len();
    let top = hole;
    let mut child = hole;
    while n >= 1 && child < (n - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if n.is_multiple_of(2) && n >= 2 && child == (n - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    while hole > top {
        let parent = (hole - 1) / 2;
        if !less(&v[parent], &x) {
            break;
        }
        v[hole] = v[parent];
        hole = parent;
    }
    v[hole] = x;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::SmallRng};

    fn keyed(keys: &[i32]) -> Vec<(i32, usize)> {
        keys.iter().copied().zip(0..).collect()
    }

    fn by_key(a: &(i32, usize), b: &(i32, usize)) -> bool {
        a.0 < b.0
    }

    #[test]
    fn sorts_like_a_sort_at_every_size_including_the_heapsort_fallback() {
        let mut rng = SmallRng::seed_from_u64(7);
        for n in [0, 1, 2, 3, 15, 16, 17, 40, 100, 1000] {
            let keys: Vec<i32> = (0..n).map(|_| rng.random_range(0..5)).collect();
            let mut v = keyed(&keys);
            sort(&mut v, &by_key);
            assert!(v.windows(2).all(|w| w[0].0 <= w[1].0), "n={n}");
            let mut seen: Vec<usize> = v.iter().map(|e| e.1).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
        // Median-of-three killers exhaust the depth budget: heapsort finishes.
        let mut v = keyed(&(0..500).map(|i| (i % 2) * 1000 + i / 2).collect::<Vec<_>>());
        introsort_loop(&mut v, 0, &by_key);
        assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn ties_come_out_in_gccs_order() {
        // PyTorch 2.15: torch.sort(y).indices for this 40-element int tensor.
        let keys = [
            1, 2, 2, 1, 2, 1, 2, 1, 1, 1, 2, 2, 2, 1, 2, 1, 2, 1, 1, 1, 2, 2, 2, 1, 2, 1, 2, 1, 1,
            1, 2, 2, 2, 1, 2, 1, 2, 1, 1, 1,
        ];
        let mut v = keyed(&keys);
        sort(&mut v, &by_key);
        let order: Vec<usize> = v.iter().map(|e| e.1).collect();
        assert_eq!(
            order,
            [
                13, 27, 25, 28, 23, 29, 0, 19, 18, 17, 15, 33, 35, 9, 8, 7, 5, 37, 3, 38, 39, 34,
                20, 32, 31, 36, 30, 26, 24, 22, 21, 16, 14, 12, 11, 10, 6, 4, 2, 1
            ]
        );
    }

    #[test]
    fn nth_element_and_partial_sort_place_what_a_sort_would() {
        let mut rng = SmallRng::seed_from_u64(3);
        for n in [1, 4, 5, 33, 257] {
            let keys: Vec<i32> = (0..n).map(|_| rng.random_range(-50..50)).collect();
            let mut sorted = keys.clone();
            sorted.sort();
            for k in [0, n / 2, n - 1] {
                let mut v = keyed(&keys);
                nth_element(&mut v, k, &by_key);
                assert_eq!(v[k].0, sorted[k]);
                assert!(v[..k].iter().all(|e| e.0 <= sorted[k]));
                assert!(v[k..].iter().all(|e| e.0 >= sorted[k]));
                let mut v = keyed(&keys);
                partial_sort(&mut v, k + 1, &by_key);
                let front: Vec<i32> = v[..=k].iter().map(|e| e.0).collect();
                assert_eq!(front, sorted[..=k]);
                let all = keyed(&keys);
                let mut lazy = all[..=k].to_vec();
                partial_sort_from(&mut lazy, all[k + 1..].iter().copied(), &by_key);
                assert_eq!(lazy, v[..=k]);
            }
        }
    }
}
