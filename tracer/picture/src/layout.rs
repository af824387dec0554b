//! A layered (Sugiyama-style) layout for dataflow graphs, linear-ish in
//! nodes plus edges so a 2,000-node GPT lays out in milliseconds (the
//! `layout-rs` crate took over a minute for 400 nodes).
//!
//! Ranks come from longest paths (sources other than inputs sit just above
//! their first user); edges spanning several ranks get virtual points; the
//! order inside a rank follows barycenter sweeps; x positions are the
//! closest, in least squares, to the neighbours' mean under the minimum
//! spacing (pool-adjacent-violators, exact per rank).

/// Horizontal gap between boxes of one rank.
const GAP_X: f64 = 24.0;
/// Vertical gap between ranks.
const GAP_Y: f64 = 36.0;
/// Width of a virtual point (a long edge passing through a rank).
const VIRTUAL_WIDTH: f64 = 12.0;
const SWEEPS: usize = 6;

/// A box to place: its size, and whether it stays on the top rank when it
/// has no inputs (graph inputs do; attributes move down to their user).
#[derive(Debug, Clone, Copy)]
pub struct Size {
    pub width: f64,
    pub height: f64,
    pub pinned_top: bool,
}

/// Where each box went (centres) and the polyline of each edge, from the
/// bottom of its source to the top of its target.
#[derive(Debug, Clone)]
pub struct Placement {
    pub centers: Vec<(f64, f64)>,
    pub edges: Vec<Vec<(f64, f64)>>,
    pub width: f64,
    pub height: f64,
}

/// Ranks by longest path over the edges that go forward in a topological
/// order (edges closing a cycle are ignored for ranking).
fn ranks(sizes: &[Size], edges: &[(usize, usize)]) -> Vec<usize> {
    let n = sizes.len();
    let mut succs = vec![vec![]; n];
    let mut indeg = vec![0usize; n];
    for &(a, b) in edges {
        succs[a].push(b);
        indeg[b] += 1;
    }
    let mut order = Vec::with_capacity(n);
    let mut ready: Vec<usize> = (0..n).rev().filter(|&i| indeg[i] == 0).collect();
    let mut seen = vec![false; n];
    while order.len() < n {
        let next = match ready.pop() {
            Some(i) => i,
            // A cycle: break it at the first node not yet placed.
            None => (0..n).find(|&i| !seen[i]).expect("nodes remain"),
        };
        if seen[next] {
            continue;
        }
        seen[next] = true;
        order.push(next);
        for &s in succs[next].iter().rev() {
            indeg[s] = indeg[s].saturating_sub(1);
            if indeg[s] == 0 && !seen[s] {
                ready.push(s);
            }
        }
    }
    let mut position = vec![0; n];
    for (i, &node) in order.iter().enumerate() {
        position[node] = i;
    }
    let mut rank = vec![0usize; n];
    let mut has_pred = vec![false; n];
    for &node in &order {
        for &s in &succs[node] {
            if position[s] > position[node] {
                rank[s] = rank[s].max(rank[node] + 1);
                has_pred[s] = true;
            }
        }
    }
    // Unpinned sources (attributes, constants) sit just above their first user.
    for &node in order.iter().rev() {
        if has_pred[node] || sizes[node].pinned_top {
            continue;
        }
        let first_use = succs[node]
            .iter()
            .filter(|&&s| position[s] > position[node])
            .map(|&s| rank[s])
            .min();
        if let Some(r) = first_use {
            rank[node] = r.saturating_sub(1);
        }
    }
    rank
}

/// The layered graph: real boxes then virtual points, edges between
/// consecutive ranks only, and each original edge's chain of points.
struct Layers {
    rank: Vec<usize>,
    width: Vec<f64>,
    up: Vec<Vec<usize>>,
    down: Vec<Vec<usize>>,
    chains: Vec<Vec<usize>>,
}

fn layer(sizes: &[Size], edges: &[(usize, usize)], rank: Vec<usize>) -> Layers {
    let n = sizes.len();
    let mut layers = Layers {
        width: sizes.iter().map(|s| s.width).collect(),
        up: vec![vec![]; n],
        down: vec![vec![]; n],
        chains: Vec::with_capacity(edges.len()),
        rank,
    };
    for &(a, b) in edges {
        let (lo, hi) = if layers.rank[a] <= layers.rank[b] {
            (a, b)
        } else {
            (b, a)
        };
        let mut chain = vec![lo];
        for r in layers.rank[lo] + 1..layers.rank[hi] {
            let v = layers.rank.len();
            layers.rank.push(r);
            layers.width.push(VIRTUAL_WIDTH);
            layers.up.push(vec![]);
            layers.down.push(vec![]);
            chain.push(v);
        }
        chain.push(hi);
        for pair in chain.windows(2) {
            if layers.rank[pair[0]] < layers.rank[pair[1]] {
                layers.down[pair[0]].push(pair[1]);
                layers.up[pair[1]].push(pair[0]);
            }
        }
        if lo != a {
            chain.reverse();
        }
        layers.chains.push(chain);
    }
    layers
}

fn mean(items: &[usize], value: &[f64]) -> Option<f64> {
    (!items.is_empty()).then(|| items.iter().map(|&i| value[i]).sum::<f64>() / items.len() as f64)
}

/// Orders each rank by the mean position of neighbours, sweeping down and up.
fn order(layers: &Layers) -> Vec<Vec<usize>> {
    let ranks = layers.rank.iter().max().map_or(0, |r| r + 1);
    let mut rows: Vec<Vec<usize>> = vec![vec![]; ranks];
    for (node, &r) in layers.rank.iter().enumerate() {
        rows[r].push(node);
    }
    let mut slot = vec![0.0; layers.rank.len()];
    let renumber = |rows: &[Vec<usize>], slot: &mut [f64]| {
        for row in rows {
            for (i, &node) in row.iter().enumerate() {
                slot[node] = i as f64;
            }
        }
    };
    renumber(&rows, &mut slot);
    for sweep in 0..SWEEPS {
        let downward = sweep % 2 == 0;
        let sequence: Vec<usize> = if downward {
            (1..ranks).collect()
        } else {
            (0..ranks.saturating_sub(1)).rev().collect()
        };
        for r in sequence {
            let neighbours = if downward { &layers.up } else { &layers.down };
            let mut keyed: Vec<(f64, usize)> = rows[r]
                .iter()
                .map(|&node| (mean(&neighbours[node], &slot).unwrap_or(slot[node]), node))
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            rows[r] = keyed.into_iter().map(|(_, node)| node).collect();
            for (i, &node) in rows[r].iter().enumerate() {
                slot[node] = i as f64;
            }
        }
    }
    rows
}

/// Positions for one row, in order, closest in least squares to `wanted`
/// with at least `gap[i]` between centres `i` and `i + 1`.
fn fit_row(wanted: &[f64], gap: &[f64]) -> Vec<f64> {
    // Shift out the spacing: y_i = x_i - offset_i must be non-decreasing.
    let mut offset = vec![0.0; wanted.len()];
    for i in 1..wanted.len() {
        offset[i] = offset[i - 1] + gap[i - 1];
    }
    // Pool adjacent violators: blocks of (mean, count).
    let mut blocks: Vec<(f64, usize)> = Vec::with_capacity(wanted.len());
    for (w, o) in wanted.iter().zip(&offset) {
        blocks.push((w - o, 1));
        while blocks.len() > 1 {
            let (m2, c2) = blocks[blocks.len() - 1];
            let (m1, c1) = blocks[blocks.len() - 2];
            if m1 <= m2 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (
                (m1 * c1 as f64 + m2 * c2 as f64) / (c1 + c2) as f64,
                c1 + c2,
            );
        }
    }
    let mut out = Vec::with_capacity(wanted.len());
    for (m, c) in blocks {
        for _ in 0..c {
            out.push(m + offset[out.len()]);
        }
    }
    out
}

/// Lays the graph out top to bottom.
pub fn place(sizes: &[Size], edges: &[(usize, usize)]) -> Placement {
    let rank = ranks(sizes, edges);
    let layers = layer(sizes, edges, rank);
    let rows = order(&layers);
    let total = layers.rank.len();
    let mut x = vec![0.0; total];
    // Spacing between neighbours of a row: fixed, as widths and order are.
    let gaps: Vec<Vec<f64>> = rows
        .iter()
        .map(|row| {
            row.windows(2)
                .map(|p| (layers.width[p[0]] + layers.width[p[1]]) / 2.0 + GAP_X)
                .collect()
        })
        .collect();
    for (row, g) in rows.iter().zip(&gaps) {
        let mut at = 0.0;
        for (i, &node) in row.iter().enumerate() {
            x[node] = at;
            at += g.get(i).copied().unwrap_or(0.0);
        }
    }
    for sweep in 0..SWEEPS * 3 {
        let downward = sweep % 2 == 0;
        let sequence: Vec<usize> = if downward {
            (0..rows.len()).collect()
        } else {
            (0..rows.len()).rev().collect()
        };
        for r in sequence {
            let row = &rows[r];
            // First sweeps follow one side (to untangle), later ones both
            // (so chains straighten and rows do not drift apart).
            let both = sweep >= 2;
            let wanted: Vec<f64> = row
                .iter()
                .map(|&node| {
                    let (up, down) = (&layers.up[node], &layers.down[node]);
                    let side = if downward { up } else { down };
                    if both && !up.is_empty() && !down.is_empty() {
                        let sum: f64 = up.iter().chain(down).map(|&n| x[n]).sum();
                        sum / (up.len() + down.len()) as f64
                    } else {
                        mean(side, &x)
                            .or_else(|| mean(if downward { down } else { up }, &x))
                            .unwrap_or(x[node])
                    }
                })
                .collect();
            for (node, value) in row.iter().zip(fit_row(&wanted, &gaps[r])) {
                x[*node] = value;
            }
        }
    }
    let left = (0..total)
        .map(|i| x[i] - layers.width[i] / 2.0)
        .fold(f64::INFINITY, f64::min);
    let right = (0..total)
        .map(|i| x[i] + layers.width[i] / 2.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let (left, right) = if left.is_finite() {
        (left, right)
    } else {
        (0.0, 0.0)
    };
    let mut row_top = Vec::with_capacity(rows.len());
    let mut row_height = Vec::with_capacity(rows.len());
    let mut y = GAP_Y / 2.0;
    for row in &rows {
        let h = row
            .iter()
            .filter(|&&n| n < sizes.len())
            .map(|&n| sizes[n].height)
            .fold(0.0, f64::max);
        row_top.push(y);
        row_height.push(h);
        y += h + GAP_Y;
    }
    let margin = GAP_X / 2.0;
    let center = |node: usize| -> (f64, f64) {
        let r = layers.rank[node];
        (x[node] - left + margin, row_top[r] + row_height[r] / 2.0)
    };
    let half_height = |node: usize| {
        if node < sizes.len() {
            sizes[node].height / 2.0
        } else {
            0.0
        }
    };
    let edges_out = layers
        .chains
        .iter()
        .map(|chain| {
            let last = chain.len() - 1;
            let forward = layers.rank[chain[0]] <= layers.rank[chain[last]];
            chain
                .iter()
                .enumerate()
                .map(|(i, &node)| {
                    let (cx, cy) = center(node);
                    let leaving = (i == 0) == forward;
                    match (i == 0 || i == last, leaving) {
                        (true, true) => (cx, cy + half_height(node)),
                        (true, false) => (cx, cy - half_height(node)),
                        _ => (cx, cy),
                    }
                })
                .collect()
        })
        .collect();
    Placement {
        centers: (0..sizes.len()).map(center).collect(),
        edges: edges_out,
        width: right - left + 2.0 * margin,
        height: y - GAP_Y / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxes(n: usize) -> Vec<Size> {
        (0..n)
            .map(|i| Size {
                width: 80.0,
                height: 30.0,
                pinned_top: i == 0,
            })
            .collect()
    }

    fn overlaps(p: &Placement, sizes: &[Size]) -> bool {
        for i in 0..sizes.len() {
            for j in i + 1..sizes.len() {
                let (a, b) = (p.centers[i], p.centers[j]);
                let dx = (a.0 - b.0).abs() < (sizes[i].width + sizes[j].width) / 2.0;
                let dy = (a.1 - b.1).abs() < (sizes[i].height + sizes[j].height) / 2.0;
                if dx && dy {
                    return true;
                }
            }
        }
        false
    }

    #[test]
    fn a_chain_is_a_vertical_line() {
        let sizes = boxes(4);
        let p = place(&sizes, &[(0, 1), (1, 2), (2, 3)]);
        assert!(
            p.centers
                .windows(2)
                .all(|w| w[0].1 < w[1].1 && (w[0].0 - w[1].0).abs() < 1e-9)
        );
        assert_eq!(
            p.edges[0],
            vec![
                (p.centers[0].0, p.centers[0].1 + 15.0),
                (p.centers[1].0, p.centers[1].1 - 15.0)
            ]
        );
    }

    #[test]
    fn branches_sit_side_by_side_and_merge_below() {
        // 0 -> {1, 2} -> 3, and a residual 0 -> 3.
        let sizes = boxes(4);
        let p = place(&sizes, &[(0, 1), (0, 2), (1, 3), (2, 3), (0, 3)]);
        assert!(!overlaps(&p, &sizes));
        assert!((p.centers[1].1 - p.centers[2].1).abs() < 1e-9);
        assert!(p.centers[3].1 > p.centers[1].1);
        // The residual edge passes through a virtual point on the middle rank.
        assert_eq!(p.edges[4].len(), 3);
        assert!(p.width >= 2.0 * 80.0);
    }

    #[test]
    fn attributes_sit_just_above_their_user() {
        // 0 (input) -> 1 -> 2 -> 3; 4 (an attribute) -> 3.
        let mut sizes = boxes(5);
        sizes[4].pinned_top = false;
        let p = place(&sizes, &[(0, 1), (1, 2), (2, 3), (4, 3)]);
        assert!((p.centers[4].1 - p.centers[2].1).abs() < 1e-9);
        assert!(!overlaps(&p, &sizes));
    }

    #[test]
    fn cycles_and_isolated_nodes_still_get_places() {
        let sizes = boxes(4);
        let p = place(&sizes, &[(1, 2), (2, 1)]);
        assert_eq!(p.centers.len(), 4);
        assert!(!overlaps(&p, &sizes));
        assert!(p.centers.iter().all(|c| c.0.is_finite() && c.1.is_finite()));
    }

    #[test]
    fn rows_fit_wanted_positions_under_spacing() {
        assert_eq!(fit_row(&[0.0, 0.0], &[10.0]), vec![-5.0, 5.0]);
        assert_eq!(fit_row(&[0.0, 100.0], &[10.0]), vec![0.0, 100.0]);
        let got = fit_row(&[5.0, 0.0, 50.0], &[10.0, 10.0]);
        assert_eq!(got, vec![-2.5, 7.5, 50.0]);
    }

    #[test]
    fn two_thousand_nodes_lay_out() {
        // A GPT-like stack: a chain with residual edges and shared inputs.
        let n = 2000;
        let mut sizes = boxes(n);
        sizes[1].pinned_top = true;
        let mut edges = vec![];
        for i in 2..n {
            edges.push((i - 1, i));
            if i % 10 == 0 {
                edges.push((i - 10, i));
                edges.push((1, i));
            }
        }
        let p = place(&sizes, &edges);
        assert_eq!(p.edges.len(), edges.len());
        assert!(p.height > 0.0 && p.width > 0.0);
    }
}
