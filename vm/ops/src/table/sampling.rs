//! Resampling at computed points: spatial transformer grids, fractional
//! max pooling, and distances between sets of rows.

use fxvm_tensor::Tensor;
use fxvm_tensor::ops::distance::{self, ComputeMode};
use fxvm_tensor::ops::fractional_pool;
use fxvm_tensor::ops::grid::{self, Interpolation, Padding};

use crate::op::{Op, Place, op};
use crate::value::Value;

use Place::{FunctionalIsTorch, FunctionalNative, Torch, TorchFunctional};

/// `torch._C._nn.fractional_max_pool{2,3}d`: both results, always;
/// `F.fractional_max_pool*` (Python, as in PyTorch) draws the samples.
fn fractional_max_pool_row(decl: &'static str, spatial: usize) -> Op {
    op(
        decl,
        &[FunctionalNative],
        move |(x, kernel, output, samples): (Tensor, Vec<i64>, Vec<i64>, Tensor)| {
            let (values, indices) =
                fractional_pool::fractional_max_pool(&x, &kernel, &output, &samples, spatial)?;
            Ok(Value::Tuple(vec![
                Value::Tensor(values),
                Value::Tensor(indices),
            ]))
        },
    )
    .grad(crate::derivatives::conv::fractional_max_pool(spatial))
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "affine_grid_generator(Tensor theta, int[] size, bool align_corners)",
            &[Torch],
            |(theta, size, align): (Tensor, Vec<i64>, bool)| {
                grid::affine_grid_generator(&theta, &size, align)
            },
        )
        .grad(crate::derivatives::resample::affine_grid()),
        op(
            "grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners)",
            &[Torch],
            |(x, g, mode, padding, align): (Tensor, Tensor, i64, i64, bool)| {
                grid::grid_sampler(
                    &x,
                    &g,
                    Interpolation::from_code(mode)?,
                    Padding::from_code(padding)?,
                    align,
                )
            },
        )
        .grad(crate::derivatives::resample::grid_sampler()),
        fractional_max_pool_row(
            "fractional_max_pool2d(Tensor input, int[] kernel_size, int[] output_size, Tensor random_samples)",
            2,
        ),
        fractional_max_pool_row(
            "fractional_max_pool3d(Tensor input, int[] kernel_size, int[] output_size, Tensor random_samples)",
            3,
        ),
        op(
            "pdist(Tensor input, float p=2)",
            &[Torch, FunctionalIsTorch],
            |(x, p): (Tensor, f64)| distance::pdist(&x, p),
        )
        .kernel_dtypes("pdist", crate::kernels::NOT_NARROW_FLOAT)
        .grad(crate::derivatives::select::pdist()),
        op(
            "cdist(Tensor x1, Tensor x2, float p=2.0, str compute_mode='use_mm_for_euclid_dist_if_necessary')",
            &[TorchFunctional(2)],
            |(x1, x2, p, mode): (Tensor, Tensor, f64, String)| {
                distance::cdist(&x1, &x2, p, ComputeMode::parse(&mode)?)
            },
        )
        .kernel_dtypes("cdist", crate::kernels::NOT_NARROW_FLOAT)
        .grad(crate::derivatives::select::cdist()),
    ]
}
