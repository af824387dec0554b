//! Families of rows that graph rewrites recognise — an elementwise op, a
//! batch normalization, a linear layer, a convolution, a max pooling — so a
//! pass asks `op.family()` and matches a typed value. The rows' names are
//! spelled here once; a row renamed leaves its family empty, which this
//! module's test catches instead of a pass silently never matching.

use fxvm_tensor::ops::elementwise::Unary;

use crate::Op;

/// What a pass may know a row to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// An elementwise op of one tensor (`relu`, `sigmoid`, `exp` …), as a
    /// function or an activation with an `inplace` flag.
    Unary(Unary),
    BatchNorm,
    Linear,
    /// `conv1d`/`conv2d`/`conv3d`.
    Convolution,
    /// `max_pool1d`/`max_pool2d`/`max_pool3d`.
    MaxPool,
}

/// The family of the row `op`, by its name.
pub(crate) fn of(op: &Op) -> Option<Family> {
    Some(match op.name() {
        "batch_norm" => Family::BatchNorm,
        "linear" => Family::Linear,
        "conv1d" | "conv2d" | "conv3d" => Family::Convolution,
        "max_pool1d" | "max_pool2d" | "max_pool3d" => Family::MaxPool,
        name => Family::Unary(*Unary::ALL.iter().find(|u| u.name() == name)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn every_family_has_its_rows() {
        let count = |f: Family| {
            registry()
                .ops()
                .iter()
                .filter(|op| op.family() == Some(f))
                .count()
        };
        assert!(count(Family::BatchNorm) >= 1);
        assert!(count(Family::Linear) >= 1);
        assert_eq!(count(Family::Convolution), 3);
        assert_eq!(count(Family::MaxPool), 3);
        for u in [Unary::Relu, Unary::Sigmoid, Unary::Exp] {
            assert!(count(Family::Unary(u)) >= 1, "{u:?}");
        }
        let relu = registry().function("relu").unwrap();
        assert_eq!(relu.family(), Some(Family::Unary(Unary::Relu)));
        assert_eq!(registry().function("add").unwrap().family(), None);
    }
}
