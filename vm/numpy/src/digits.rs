//! The shortest decimal digits that read back as the same float of the
//! array's own width — what numpy's Dragon4 prints in its `unique` mode
//! (`np.float32(0.1)` prints `0.1`, not float64's `0.10000000149011612`).

use half::f16;

/// The float widths numpy prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    F16,
    F32,
    F64,
}

/// `x` (a value of `width`) in scientific notation with the fewest
/// significant digits that round-trip at `width`: `1.5e-3`, `1e0`. Not
/// meant for nan or infinities (numpy prints those by name).
pub fn shortest(x: f64, width: Width) -> String {
    match width {
        Width::F64 => format!("{x:e}"),
        // Rust prints the shortest round-tripping digits of its own type.
        Width::F32 => format!("{:e}", x as f32),
        Width::F16 => {
            let v = f16::from_f64(x);
            // Five significant digits always identify a half float; the
            // closest decimal at each shorter length is the candidate.
            (0..5)
                .map(|p| format!("{:.p$e}", v.to_f64()))
                .find(|s| s.parse::<f64>().is_ok_and(|d| f16::from_f64(d) == v))
                .unwrap_or_else(|| format!("{:.4e}", v.to_f64()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_width_prints_its_own_shortest_digits() {
        assert_eq!(shortest(0.1f32 as f64, Width::F32), "1e-1");
        assert_eq!(shortest(0.1f32 as f64, Width::F64), "1.0000000149011612e-1");
        assert_eq!(shortest(0.1, Width::F16), "1e-1");
        assert_eq!(shortest(f16::from_f64(0.3).to_f64(), Width::F16), "3e-1");
        assert_eq!(shortest(65504.0, Width::F16), "6.55e4");
        assert_eq!(shortest(-2.5, Width::F64), "-2.5e0");
        assert_eq!(shortest(0.0, Width::F32), "0e0");
    }
}
