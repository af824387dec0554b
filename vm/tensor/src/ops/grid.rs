//! Spatial transformers: `affine_grid_generator` (a sampling grid from
//! batches of affine matrices) and `grid_sampler` (the input read at grid
//! points by bilinear, nearest or bicubic interpolation), in 2-d and 3-d.
//! The 2-d sampler follows PyTorch's vectorised CPU kernel and the 3-d one
//! its scalar kernel, whose coordinate arithmetic differs in rounding.

use num_traits::Float;

use crate::dtype::DType;
use crate::error::{Result, TensorError, legacy_name, torch_size};
use crate::storage::Element;
use crate::tensor::Tensor;

/// How a value between grid points is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    Bilinear,
    Nearest,
    Bicubic,
}

/// What a point outside the input reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Padding {
    Zeros,
    Border,
    Reflection,
}

impl Interpolation {
    /// PyTorch's enum code, as `F.grid_sample` passes it to `torch.grid_sampler`.
    pub fn from_code(code: i64) -> Result<Interpolation> {
        match code {
            0 => Ok(Interpolation::Bilinear),
            1 => Ok(Interpolation::Nearest),
            2 => Ok(Interpolation::Bicubic),
            _ => Err(fail(format!(
                "grid_sampler(): expected interpolation_mode to be 0 (bilinear), 1 (nearest) or 2 (bicubic), but got: {code}"
            ))),
        }
    }
}

impl Padding {
    pub fn from_code(code: i64) -> Result<Padding> {
        match code {
            0 => Ok(Padding::Zeros),
            1 => Ok(Padding::Border),
            2 => Ok(Padding::Reflection),
            _ => Err(fail(format!(
                "grid_sampler(): expected padding_mode to be 0 (zeros), 1 (border) or 2 (reflection), but got: {code}"
            ))),
        }
    }
}

fn fail(message: String) -> TensorError {
    TensorError::runtime("grid_sampler", message)
}

fn float_only(op: &'static str, dtype: DType) -> Result<()> {
    if dtype.is_float() {
        Ok(())
    } else {
        Err(TensorError::not_implemented_for(op, dtype))
    }
}

/// `linspace(-1, 1, n)`, shrunk by `(n - 1) / n` unless corners align, in
/// the element type.
fn axis<F: Float>(n: usize, align_corners: bool) -> Vec<F> {
    let (one, count) = (F::one(), F::from(n).unwrap());
    if n <= 1 {
        return vec![F::zero(); n];
    }
    let step = (one + one) / F::from(n - 1).unwrap();
    (0..n)
        .map(|i| {
            let v = if i < n / 2 {
                -one + step * F::from(i).unwrap()
            } else {
                one - step * F::from(n - 1 - i).unwrap()
            };
            if align_corners {
                v
            } else {
                v * (count - one) / count
            }
        })
        .collect()
}

/// `torch.affine_grid_generator(theta, size, align_corners)`: for `size`
/// `[N, C, H, W]` and `theta` `[N, 2, 3]`, the `[N, H, W, 2]` grid of
/// `theta · (x, y, 1)` over normalised coordinates; for `[N, C, D, H, W]`
/// and `[N, 3, 4]`, the `[N, D, H, W, 3]` grid of `theta · (x, y, z, 1)`.
pub fn affine_grid_generator(theta: &Tensor, size: &[i64], align_corners: bool) -> Result<Tensor> {
    let spatial = size.len().saturating_sub(2);
    if !(2..=3).contains(&spatial) || size.iter().any(|&s| s < 0) {
        return Err(TensorError::runtime(
            "affine_grid_generator",
            format!("affine_grid_generator(): expected a 4-D or 5-D size, got {size:?}"),
        ));
    }
    let n = size[0] as usize;
    if theta.shape() != [n, spatial, spatial + 1] {
        return Err(TensorError::runtime(
            "affine_grid_generator",
            format!(
                "Expected a batch of {spatial}D affine matrices of shape Nx{spatial}x{} for size {size:?}. Got {}.",
                spatial + 1,
                torch_size(theta.shape())
            ),
        ));
    }
    float_only("affine_grid_generator", theta.dtype())?;
    // Spatial sizes as x, y(, z): the grid's last axis is ordered that way.
    let dims: Vec<usize> = size[2..].iter().rev().map(|&s| s as usize).collect();
    let mut shape = vec![n];
    shape.extend(size[2..].iter().map(|&s| s as usize));
    shape.push(spatial);
    fn build<F: Float + Element>(theta: &Tensor, n: usize, dims: &[usize], align: bool) -> Vec<F> {
        let theta: Vec<F> = theta.contiguous().to_vec();
        let axes: Vec<Vec<F>> = dims.iter().map(|&s| axis(s, align)).collect();
        let k = dims.len();
        let points: usize = dims.iter().product();
        let mut out = Vec::with_capacity(n * points * k);
        let mut base = vec![F::zero(); k];
        for b in 0..n {
            let t = &theta[b * k * (k + 1)..(b + 1) * k * (k + 1)];
            for p in 0..points {
                // The point's coordinates, x varying fastest.
                let mut rest = p;
                for (c, axis) in axes.iter().enumerate() {
                    base[c] = axis[rest % dims[c]];
                    rest /= dims[c];
                }
                for row in t.chunks_exact(k + 1) {
                    let mut acc = F::zero();
                    for (c, &v) in base.iter().enumerate() {
                        acc = acc + v * row[c];
                    }
                    out.push(acc + row[k]);
                }
            }
        }
        out
    }
    Ok(match theta.dtype() {
        DType::F32 => Tensor::from_vec(build::<f32>(theta, n, &dims, align_corners), &shape),
        _ => Tensor::from_vec(build::<f64>(theta, n, &dims, align_corners), &shape),
    })
}

/// Where the grid's `[-1, 1]` coordinates fall in one input axis, with the
/// padding mode applied (bilinear and nearest read at this point).
#[derive(Clone, Copy)]
struct Axis<F> {
    size: usize,
    padding: Padding,
    align: bool,
    /// The vectorised 2-d kernel's arithmetic (`(x + 1)·s - 0.5`) rather
    /// than the scalar 3-d kernel's (`((x + 1)·size - 1) / 2`).
    fused: bool,
    _f: std::marker::PhantomData<F>,
}

impl<F: Float> Axis<F> {
    fn new(size: usize, padding: Padding, align: bool, fused: bool) -> Self {
        Axis {
            size,
            padding,
            align,
            fused,
            _f: std::marker::PhantomData,
        }
    }

    fn unnormalize(&self, x: F) -> F {
        let (one, two) = (F::one(), F::one() + F::one());
        let size = F::from(self.size).unwrap();
        match (self.fused, self.align) {
            (true, true) => (x + one) * ((size - one) / two),
            (true, false) => (x + one) * (size / two) - F::from(0.5).unwrap(),
            (false, true) => (x + one) / two * (size - one),
            (false, false) => ((x + one) * size - one) / two,
        }
    }

    fn clip(&self, x: F) -> F {
        let hi = F::from(self.size - 1).unwrap();
        x.max(F::zero()).min(hi)
    }

    /// Reflects `x` into `[min, min + span]` by folding at both edges.
    fn reflect(&self, x: F) -> F {
        let size = F::from(self.size).unwrap();
        let half = F::from(0.5).unwrap();
        let (min, span) = if self.align {
            (F::zero(), size - F::one())
        } else {
            (-half, size)
        };
        if span <= F::zero() {
            return F::zero();
        }
        let x = (x - min).abs();
        let extra = x % span;
        let flips = (x / span).floor();
        if flips % (F::one() + F::one()) == F::zero() {
            extra + min
        } else {
            span - extra + min
        }
    }

    /// Applies the padding mode to an unnormalised coordinate.
    fn pad(&self, x: F) -> F {
        let x = match self.padding {
            Padding::Zeros => x,
            Padding::Border => self.clip(x),
            Padding::Reflection => self.clip(self.reflect(x)),
        };
        if self.fused {
            x
        } else {
            // The scalar kernel sends what no int can hold far outside.
            let limit = F::from(i32::MAX).unwrap();
            if x.is_nan() || x.abs() > limit {
                F::from(-100.0).unwrap()
            } else {
                x
            }
        }
    }

    fn source(&self, x: F) -> F {
        self.pad(self.unnormalize(x))
    }

    /// The index of an integral coordinate, if inside the axis.
    fn index(&self, x: F) -> Option<usize> {
        let i = x.to_i64()?;
        (0..self.size as i64).contains(&i).then_some(i as usize)
    }
}

/// `torch.grid_sampler(input, grid, interpolation_mode, padding_mode,
/// align_corners)`: `input` `[N, C, H, W]` read at the `[N, H', W', 2]`
/// grid's (x, y) points gives `[N, C, H', W']`; 5-d inputs read at
/// `[N, D', H', W', 3]` (x, y, z) grids.
pub fn grid_sampler(
    input: &Tensor,
    grid: &Tensor,
    mode: Interpolation,
    padding: Padding,
    align_corners: bool,
) -> Result<Tensor> {
    let (is, gs) = (input.shape(), grid.shape());
    if input.dtype() != grid.dtype() {
        return Err(fail(format!(
            "expected scalar type {} but found {}",
            legacy_name(input.dtype()),
            legacy_name(grid.dtype())
        )));
    }
    if !(is.len() == 4 || is.len() == 5) || is.len() != gs.len() {
        return Err(fail(format!(
            "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input with sizes {} and grid with sizes {}",
            sizes(is),
            sizes(gs)
        )));
    }
    if is[0] != gs[0] {
        return Err(fail(format!(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes {} and grid with sizes {}",
            sizes(is),
            sizes(gs)
        )));
    }
    let spatial = is.len() - 2;
    if gs[spatial + 1] != spatial {
        return Err(fail(format!(
            "grid_sampler(): expected grid to have size {spatial} in last dimension, but got grid with sizes {}",
            sizes(gs)
        )));
    }
    if let Some(d) = (2..is.len()).find(|&d| is[d] == 0) {
        return Err(fail(format!(
            "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes {} with dimension {d} being empty",
            sizes(is)
        )));
    }
    if spatial == 3 && mode == Interpolation::Bicubic {
        return Err(fail(
            "grid_sampler(): bicubic interpolation only supports 4D input".into(),
        ));
    }
    float_only("grid_sampler_2d_cpu", input.dtype())?;
    let shape: Vec<usize> = [is[0], is[1]]
        .into_iter()
        .chain(gs[1..=spatial].iter().copied())
        .collect();
    let sampler = Sampler {
        input_shape: is,
        points: gs[1..=spatial].iter().product(),
        mode,
        padding,
        align: align_corners,
    };
    Ok(match input.dtype() {
        DType::F32 => Tensor::from_vec(sampler.run::<f32>(input, grid), &shape),
        _ => Tensor::from_vec(sampler.run::<f64>(input, grid), &shape),
    })
}

fn sizes(shape: &[usize]) -> String {
    format!("{shape:?}")
}

struct Sampler<'a> {
    input_shape: &'a [usize],
    points: usize,
    mode: Interpolation,
    padding: Padding,
    align: bool,
}

impl Sampler<'_> {
    fn run<F: Float + Element>(&self, input: &Tensor, grid: &Tensor) -> Vec<F> {
        let input: Vec<F> = input.contiguous().to_vec();
        let grid: Vec<F> = grid.contiguous().to_vec();
        let (n, c) = (self.input_shape[0], self.input_shape[1]);
        let spatial = &self.input_shape[2..];
        let plane: usize = spatial.iter().product();
        let k = spatial.len();
        let fused = k == 2;
        // Axes in the grid's order: x (width), y (height)(, z (depth)).
        let axes: Vec<Axis<F>> = spatial
            .iter()
            .rev()
            .map(|&s| Axis::new(s, self.padding, self.align, fused))
            .collect();
        let mut out = vec![F::zero(); n * c * self.points];
        for b in 0..n {
            let src = &input[b * c * plane..(b + 1) * c * plane];
            let dst = &mut out[b * c * self.points..(b + 1) * c * self.points];
            for p in 0..self.points {
                let g = &grid[(b * self.points + p) * k..(b * self.points + p + 1) * k];
                for ch in 0..c {
                    let s = &src[ch * plane..(ch + 1) * plane];
                    dst[ch * self.points + p] = match (self.mode, k) {
                        (Interpolation::Bilinear, 2) => bilinear_2d(s, &axes, g),
                        (Interpolation::Bilinear, _) => trilinear_3d(s, &axes, g),
                        (Interpolation::Nearest, _) => nearest(s, &axes, g),
                        (Interpolation::Bicubic, _) => bicubic_2d(s, &axes, g),
                    };
                }
            }
        }
        out
    }
}

/// The element at integral coordinates `xs` (x first) of a plane, or zero
/// outside it.
fn at<F: Float>(src: &[F], axes: &[Axis<F>], xs: &[F]) -> F {
    let mut offset = 0;
    let mut stride = 1;
    for (axis, &x) in axes.iter().zip(xs) {
        match axis.index(x) {
            Some(i) => offset += i * stride,
            None => return F::zero(),
        }
        stride *= axis.size;
    }
    src[offset]
}

fn nearest<F: Float>(src: &[F], axes: &[Axis<F>], g: &[F]) -> F {
    let mut xs = [F::zero(); 3];
    for (c, axis) in axes.iter().enumerate() {
        xs[c] = round_half_even(axis.source(g[c]));
    }
    at(src, axes, &xs[..axes.len()])
}

fn round_half_even<F: Float>(x: F) -> F {
    let r = x.round();
    if (x - x.trunc()).abs() == F::from(0.5).unwrap() {
        let two = F::one() + F::one();
        (x / two).round() * two
    } else {
        r
    }
}

fn bilinear_2d<F: Float>(src: &[F], axes: &[Axis<F>], g: &[F]) -> F {
    let (x, y) = (axes[0].source(g[0]), axes[1].source(g[1]));
    let (x_w, y_n) = (x.floor(), y.floor());
    let one = F::one();
    let (w, n) = (x - x_w, y - y_n);
    let (e, s) = (one - w, one - n);
    let (x_e, y_s) = (x_w + one, y_n + one);
    at(src, axes, &[x_w, y_n]) * (s * e)
        + at(src, axes, &[x_e, y_n]) * (s * w)
        + at(src, axes, &[x_w, y_s]) * (n * e)
        + at(src, axes, &[x_e, y_s]) * (n * w)
}

fn trilinear_3d<F: Float>(src: &[F], axes: &[Axis<F>], g: &[F]) -> F {
    let (x, y, z) = (
        axes[0].source(g[0]),
        axes[1].source(g[1]),
        axes[2].source(g[2]),
    );
    let one = F::one();
    let (x0, y0, z0) = (x.floor(), y.floor(), z.floor());
    let (x1, y1, z1) = (x0 + one, y0 + one, z0 + one);
    // Corners in PyTorch's order (top/bottom = z, north/south = y,
    // west/east = x), each weighted by the volume opposite it.
    let corners = [
        ([x0, y0, z0], (x1 - x) * (y1 - y) * (z1 - z)),
        ([x1, y0, z0], (x - x0) * (y1 - y) * (z1 - z)),
        ([x0, y1, z0], (x1 - x) * (y - y0) * (z1 - z)),
        ([x1, y1, z0], (x - x0) * (y - y0) * (z1 - z)),
        ([x0, y0, z1], (x1 - x) * (y1 - y) * (z - z0)),
        ([x1, y0, z1], (x - x0) * (y1 - y) * (z - z0)),
        ([x0, y1, z1], (x1 - x) * (y - y0) * (z - z0)),
        ([x1, y1, z1], (x - x0) * (y - y0) * (z - z0)),
    ];
    corners
        .iter()
        .fold(F::zero(), |acc, (xs, w)| match in_bounds(axes, xs) {
            true => acc + at(src, axes, xs) * *w,
            false => acc,
        })
}

fn in_bounds<F: Float>(axes: &[Axis<F>], xs: &[F]) -> bool {
    axes.iter().zip(xs).all(|(a, &x)| a.index(x).is_some())
}

/// Keys' cubic convolution weights (A = -0.75) for a point `t` past the
/// second of four samples.
fn cubic_weights<F: Float>(t: F) -> [F; 4] {
    let a = F::from(-0.75).unwrap();
    let (one, two, three) = (F::one(), F::from(2.0).unwrap(), F::from(3.0).unwrap());
    let near = |x: F| ((a + two) * x - (a + three)) * x * x + one;
    let far = |x: F| {
        let (four, five, eight) = (
            F::from(4.0).unwrap(),
            F::from(5.0).unwrap(),
            F::from(8.0).unwrap(),
        );
        ((a * x - five * a) * x + eight * a) * x - four * a
    };
    [far(t + one), near(t), near(one - t), far(two - t)]
}

fn bicubic_2d<F: Float>(src: &[F], axes: &[Axis<F>], g: &[F]) -> F {
    let (x, y) = (axes[0].unnormalize(g[0]), axes[1].unnormalize(g[1]));
    let (x0, y0) = (x.floor(), y.floor());
    let (wx, wy) = (cubic_weights(x - x0), cubic_weights(y - y0));
    // Each tap is padded on its own, then truncated to an index.
    let tap = |dx: i32, dy: i32| {
        let px = axes[0].pad(x0 + F::from(dx).unwrap()).trunc();
        let py = axes[1].pad(y0 + F::from(dy).unwrap()).trunc();
        at(src, axes, &[px, py])
    };
    let row = |dy: i32| {
        (-1..3)
            .zip(wx)
            .fold(F::zero(), |acc, (dx, w)| acc + tap(dx, dy) * w)
    };
    (-1..3)
        .zip(wy)
        .fold(F::zero(), |acc, (dy, w)| acc + row(dy) * w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(data: Vec<f32>, shape: &[usize]) -> Tensor {
        Tensor::from_vec(data, shape)
    }

    #[test]
    fn identity_theta_gives_the_normalised_pixel_centres() {
        let theta = t(vec![1., 0., 0., 0., 1., 0.], &[1, 2, 3]);
        let grid = affine_grid_generator(&theta, &[1, 1, 2, 2], false).unwrap();
        assert_eq!(grid.shape(), [1, 2, 2, 2]);
        assert_eq!(
            grid.to_vec::<f32>(),
            [-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5]
        );
        let grid = affine_grid_generator(&theta, &[1, 1, 1, 3], true).unwrap();
        assert_eq!(grid.to_vec::<f32>(), [-1., 0., 0., 0., 1., 0.]);
    }

    #[test]
    fn sampling_the_identity_grid_returns_the_input() {
        let input = t((0..12).map(|v| v as f32).collect(), &[1, 1, 3, 4]);
        let theta = t(vec![1., 0., 0., 0., 1., 0.], &[1, 2, 3]);
        for align in [false, true] {
            let grid = affine_grid_generator(&theta, &[1, 1, 3, 4], align).unwrap();
            for mode in [
                Interpolation::Bilinear,
                Interpolation::Nearest,
                Interpolation::Bicubic,
            ] {
                let out = grid_sampler(&input, &grid, mode, Padding::Zeros, align).unwrap();
                let got = out.to_vec::<f32>();
                for (g, w) in got.iter().zip(0..12) {
                    assert!((g - w as f32).abs() < 1e-4, "{mode:?} {align}: {got:?}");
                }
            }
        }
    }

    #[test]
    fn points_outside_read_the_padding() {
        let input = t(vec![1., 2., 3., 4.], &[1, 1, 2, 2]);
        // x = 3 lies far right of the input; y = 0 in the middle.
        let grid = t(vec![3., 0.], &[1, 1, 1, 2]);
        let read = |padding| {
            grid_sampler(&input, &grid, Interpolation::Bilinear, padding, true)
                .unwrap()
                .to_vec::<f32>()[0]
        };
        assert_eq!(read(Padding::Zeros), 0.0);
        assert_eq!(read(Padding::Border), 3.0);
        // Reflected back across x = 1 twice lands at x = -1 → the left column.
        assert_eq!(read(Padding::Reflection), 2.0);
    }

    #[test]
    fn trilinear_matches_a_hand_weighted_corner_sum() {
        let input = t((0..8).map(|v| v as f32).collect(), &[1, 1, 2, 2, 2]);
        // The centre of the cube averages all eight corners.
        let grid = t(vec![0., 0., 0.], &[1, 1, 1, 1, 3]);
        let out =
            grid_sampler(&input, &grid, Interpolation::Bilinear, Padding::Zeros, true).unwrap();
        assert_eq!(out.to_vec::<f32>(), [3.5]);
    }

    #[test]
    fn mismatched_operands_are_refused() {
        let input = t(vec![0.; 4], &[1, 1, 2, 2]);
        let grid = t(vec![0.; 3], &[1, 1, 1, 3]);
        let err = grid_sampler(
            &input,
            &grid,
            Interpolation::Bilinear,
            Padding::Zeros,
            false,
        )
        .unwrap_err();
        assert!(err.to_string().contains("size 2 in last dimension"));
    }
}
