//! `pad` (constant, reflect, replicate, circular) and `interpolate`
//! (nearest, nearest-exact, linear, bilinear, trilinear, area). Both map each
//! output position to input positions one dim at a time.

use crate::dtype::{DType, Scalar};
use crate::error::{ErrorKind, Result, TensorError};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

use super::pool::adaptive_avg_pool;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadMode {
    Constant,
    Reflect,
    Replicate,
    Circular,
}

impl PadMode {
    pub fn parse(s: &str) -> Result<PadMode> {
        Ok(match s {
            "constant" => PadMode::Constant,
            "reflect" => PadMode::Reflect,
            "replicate" => PadMode::Replicate,
            "circular" => PadMode::Circular,
            _ => return Err(not_implemented(format!("Unrecognised padding mode {s}"))),
        })
    }
}

fn not_implemented(message: String) -> TensorError {
    TensorError::Other {
        kind: ErrorKind::NotImplemented,
        message,
    }
}

/// The source index of each output index along one dim (`None`: the fill value).
type DimMap = Vec<Option<usize>>;

/// Copies `t` through per-dim index maps, filling unmapped positions with `fill`.
fn remap(t: &Tensor, maps: &[DimMap], fill: Scalar) -> Tensor {
    let shape: Vec<usize> = maps.iter().map(Vec::len).collect();
    let numel: usize = shape.iter().product();
    with_dtype!(t.dtype(), T => {
        let storage = t.read();
        let src = T::slice(&storage).expect("storage dtype matches tensor dtype");
        let fill = T::from_scalar(fill);
        let strides = &t.layout().strides;
        crate::alloc::ensure::<T>(numel);
        let mut out = Vec::with_capacity(numel);
        let mut index = vec![0usize; shape.len()];
        for _ in 0..numel {
            let mut offset = Some(t.layout().offset);
            for (d, &i) in index.iter().enumerate() {
                offset = offset.and_then(|o| maps[d][i].map(|s| o + s * strides[d]));
            }
            out.push(offset.map_or(fill, |o| src[o]));
            for d in (0..shape.len()).rev() {
                index[d] += 1;
                if index[d] < shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Tensor::from_vec(out, &shape)
    })
}

fn identity(n: usize) -> DimMap {
    (0..n).map(Some).collect()
}

/// `F.pad`: `pad` lists (before, after) pairs starting from the last dim.
pub fn pad(t: &Tensor, pad: &[i64], mode: PadMode, value: Option<f64>) -> Result<Tensor> {
    if !pad.len().is_multiple_of(2) {
        return Err(TensorError::runtime(
            "pad",
            "Padding length must be divisible by 2",
        ));
    }
    let dims = pad.len() / 2;
    let r = t.ndim();
    if dims > r {
        return Err(TensorError::runtime("pad", "Padding length should be less than or equal to two times the input dimension but got padding length 6 and input of dimension 4".replace("6", &pad.len().to_string()).replace("4", &r.to_string())));
    }
    if mode != PadMode::Constant {
        if value.is_some_and(|v| v != 0.0) {
            return Err(TensorError::runtime(
                "pad",
                format!(
                    "Padding mode \"{}\" doesn't take in value argument",
                    format!("{mode:?}").to_lowercase()
                ),
            ));
        }
        let ok = match dims {
            1 => r == 2 || r == 3,
            2 => r == 3 || r == 4,
            3 => r == 4 || r == 5,
            _ => false,
        };
        if !ok {
            return Err(not_implemented(format!(
                "Padding size {} is not supported for {r}D input tensor.\nSupported combinations for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)",
                pad.len()
            )));
        }
    }
    let mut out_shape = t.shape().to_vec();
    for k in 0..dims {
        let d = r - 1 - k;
        let size = (out_shape[d] as i64)
            .checked_add(pad[2 * k])
            .and_then(|s| s.checked_add(pad[2 * k + 1]));
        match size.map(usize::try_from) {
            Some(Ok(s)) => out_shape[d] = s,
            Some(Err(_)) => out_shape[d] = 0,
            None => return Err(TensorError::SizeOverflow { sizes: out_shape }),
        }
    }
    crate::alloc::new_numel(&out_shape, t.dtype())?;
    let mut maps: Vec<DimMap> = t.shape().iter().map(|&n| identity(n)).collect();
    for k in 0..dims {
        let d = r - 1 - k;
        let n = t.shape()[d] as i64;
        let (before, after) = (pad[2 * k], pad[2 * k + 1]);
        let size = n + before + after;
        if size < 0 {
            return Err(TensorError::runtime(
                "pad",
                format!(
                    "The input size {n}, plus negative padding {before} and {after} resulted in a negative output size, which is invalid. Check dimension {d} of your input."
                ),
            ));
        }
        if mode == PadMode::Reflect && (before >= n || after >= n) {
            return Err(TensorError::runtime(
                "pad",
                format!(
                    "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding ({before}, {after}) at dimension {d} of input {:?}",
                    t.shape()
                ),
            ));
        }
        if mode == PadMode::Circular && (before > n || after > n) {
            return Err(TensorError::runtime(
                "pad",
                "Padding value causes wrapping around more than once.",
            ));
        }
        if mode != PadMode::Constant && n == 0 {
            return Err(TensorError::runtime(
                "pad",
                format!("Expected a non-empty dimension {d} to pad with mode {mode:?}"),
            ));
        }
        maps[d] = (0..size)
            .map(|i| {
                let s = i - before;
                match mode {
                    _ if (0..n).contains(&s) => Some(s as usize),
                    PadMode::Constant => None,
                    PadMode::Reflect => Some(if s < 0 { -s } else { 2 * (n - 1) - s } as usize),
                    PadMode::Replicate => Some(s.clamp(0, n - 1) as usize),
                    PadMode::Circular => Some(s.rem_euclid(n) as usize),
                }
            })
            .collect();
    }
    Ok(remap(t, &maps, Scalar::Float(value.unwrap_or(0.0))))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpMode {
    Nearest,
    NearestExact,
    Linear,
    Bilinear,
    Bicubic,
    Trilinear,
    Area,
}

impl InterpMode {
    pub fn parse(s: &str, ndim: usize) -> Result<InterpMode> {
        Ok(match s {
            "nearest" => InterpMode::Nearest,
            "nearest-exact" => InterpMode::NearestExact,
            "linear" => InterpMode::Linear,
            "bilinear" => InterpMode::Bilinear,
            "bicubic" => InterpMode::Bicubic,
            "trilinear" => InterpMode::Trilinear,
            "area" => InterpMode::Area,
            _ => {
                return Err(not_implemented(format!(
                    "Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {s})"
                )));
            }
        })
    }

    fn interpolating(self) -> bool {
        matches!(
            self,
            InterpMode::Linear | InterpMode::Bilinear | InterpMode::Bicubic | InterpMode::Trilinear
        )
    }
}

/// What `interpolate` scales to.
pub enum Target {
    Size(Vec<i64>),
    Scale(Vec<f64>),
}

/// `F.interpolate` over the dims after (N, C).
pub fn interpolate(
    t: &Tensor,
    target: Target,
    mode: InterpMode,
    align_corners: Option<bool>,
    recompute_scale_factor: bool,
) -> Result<Tensor> {
    let r = t.ndim();
    let spatial = r.saturating_sub(2);
    if align_corners.is_some() && !mode.interpolating() {
        return Err(TensorError::value(
            "interpolate",
            "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear",
        ));
    }
    let needs = match mode {
        InterpMode::Linear => Some((3, "linear")),
        InterpMode::Bilinear => Some((4, "bilinear")),
        InterpMode::Trilinear => Some((5, "trilinear")),
        _ => None,
    };
    if let Some((want, name)) = needs
        && r != want
    {
        return Err(not_implemented(format!(
            "Got {r}D input, but {name} mode needs {want}D input"
        )));
    }
    // Bicubic has only a 4-d kernel; PyTorch reports other ranks as it
    // reports unsupported ones.
    if !(3..=5).contains(&r) || (mode == InterpMode::Bicubic && r != 4) {
        return Err(not_implemented(format!(
            "Input Error: Only 3D, 4D and 5D input Tensors supported (got {r}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {})",
            format!("{mode:?}").to_lowercase()
        )));
    }
    let in_sizes = &t.shape()[2..];
    let broadcast = |n: usize, what: &str| -> Result<()> {
        if n != 1 && n != spatial {
            let target = match &target {
                Target::Size(s) => format!("output size of {}", tuple(s)),
                Target::Scale(s) => format!("scale_factor of {}", tuple(s)),
            };
            return Err(TensorError::value(
                "interpolate",
                format!(
                    "Input and {what} must have the same number of spatial dimensions, but got input with spatial dimensions of {in_sizes:?} and {target}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and {what} in (o1, o2, ...,oK) format."
                ),
            ));
        }
        Ok(())
    };
    // Per dim: the output size and the scale the coordinate mapping uses
    // (1/scale_factor when a factor was given and not recomputed).
    let (out_sizes, scales): (Vec<usize>, Vec<Option<f64>>) = match &target {
        Target::Size(s) => {
            broadcast(s.len(), "output")?;
            let at = |d: usize| s[if s.len() == 1 { 0 } else { d }];
            let sizes = (0..spatial).map(|d| usize::try_from(at(d)).map_err(|_| TensorError::runtime("interpolate", format!("Input and output sizes should be greater than 0, but got input ({:?}) and output ({:?})", in_sizes, s)))).collect::<Result<Vec<_>>>()?;
            (sizes, vec![None; spatial])
        }
        Target::Scale(f) => {
            broadcast(f.len(), "scale_factor")?;
            let at = |d: usize| f[if f.len() == 1 { 0 } else { d }];
            let sizes: Vec<usize> = (0..spatial)
                .map(|d| (in_sizes[d] as f64 * at(d)).floor().max(0.0) as usize)
                .collect();
            let scales = (0..spatial)
                .map(|d| (!recompute_scale_factor).then(|| at(d)))
                .collect();
            (sizes, scales)
        }
    };
    if out_sizes.contains(&0) || in_sizes.contains(&0) {
        return Err(TensorError::runtime(
            "interpolate",
            format!(
                "Input and output sizes should be greater than 0, but got input ({}) and output ({})",
                sizes_text(in_sizes),
                sizes_text(&out_sizes)
            ),
        ));
    }
    // An output too large to hold is PyTorch's error, not an abort.
    let mut full = t.shape()[..2].to_vec();
    full.extend(&out_sizes);
    crate::alloc::new_numel(&full, t.dtype())?;
    if mode == InterpMode::Area {
        if spatial == 3 {
            return Err(not_implemented(
                "interpolate: mode 'area' supports 3D and 4D inputs in fxvm".into(),
            ));
        }
        let out: Vec<Option<i64>> = out_sizes.iter().map(|&s| Some(s as i64)).collect();
        return adaptive_avg_pool(t, &out, spatial);
    }
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for(
            format!("upsample_{}", format!("{mode:?}").to_lowercase()),
            t.dtype(),
        ));
    }
    // Linear modes stay in f64 between dims so that results round once.
    let mut x = if mode.interpolating() {
        t.to_dtype(DType::F64)
    } else {
        t.clone()
    };
    // Separable: interpolate the last dim first, as PyTorch's kernels nest
    // the weights (innermost dim innermost).
    for d in (0..spatial).rev() {
        let (n_in, n_out) = (in_sizes[d], out_sizes[d]);
        if n_in == n_out && scales[d].is_none() {
            continue;
        }
        let dim = d + 2;
        x = match mode {
            InterpMode::Nearest | InterpMode::NearestExact => {
                let scale = scales[d]
                    .filter(|&s| s > 0.0)
                    .map_or(n_in as f32 / n_out as f32, |s| (1.0 / s) as f32);
                let exact = mode == InterpMode::NearestExact;
                let map: DimMap = (0..n_out)
                    .map(|i| {
                        let src = if exact {
                            ((i as f32 + 0.5) * scale).floor()
                        } else {
                            (i as f32 * scale).floor()
                        };
                        Some((src as usize).min(n_in - 1))
                    })
                    .collect();
                let mut maps: Vec<DimMap> = x.shape().iter().map(|&n| identity(n)).collect();
                maps[dim] = map;
                remap(&x, &maps, Scalar::Int(0))
            }
            InterpMode::Bicubic => {
                cubic_along(&x, dim, n_out, scales[d], align_corners.unwrap_or(false))
            }
            _ => linear_along(&x, dim, n_out, scales[d], align_corners.unwrap_or(false)),
        };
    }
    Ok(x.to_dtype(t.dtype()))
}

fn sizes_text(s: &[usize]) -> String {
    s.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn tuple<T: std::fmt::Debug>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(", "))
    }
}

/// The source-to-output ratio of an interpolating mode along one dim.
fn source_ratio(n_in: usize, n_out: usize, scale: Option<f64>, align_corners: bool) -> f64 {
    if align_corners {
        if n_out > 1 {
            (n_in - 1) as f64 / (n_out - 1) as f64
        } else {
            0.0
        }
    } else {
        scale
            .filter(|&s| s > 0.0)
            .map_or(n_in as f64 / n_out as f64, |s| 1.0 / s)
    }
}

/// Where output position `i` falls on the source axis: corners aligned, or
/// pixel centres (`(i + 0.5) * ratio - 0.5`, before the first one for the
/// edge outputs).
fn source_position(ratio: f64, i: usize, align_corners: bool) -> f64 {
    if align_corners {
        ratio * i as f64
    } else {
        ratio * (i as f64 + 0.5) - 0.5
    }
}

/// Keys' cubic convolution weights (A = -0.75, as PyTorch's bicubic) of
/// the four taps around a source point `t` past the second of them.
fn cubic_weights(t: f64) -> [f64; 4] {
    const A: f64 = -0.75;
    let near = |x: f64| ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;
    let far = |x: f64| ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A;
    [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]
}

/// Bicubic interpolation of `x` along `dim` (one of the two separable
/// passes), in f64: four taps around each source point, clamped to the
/// edge; the source point is not clamped at 0 as the linear modes' is.
fn cubic_along(
    x: &Tensor,
    dim: usize,
    n_out: usize,
    scale: Option<f64>,
    align_corners: bool,
) -> Tensor {
    let n_in = x.shape()[dim];
    let ratio = source_ratio(n_in, n_out, scale, align_corners);
    let last = n_in as i64 - 1;
    let taps: Vec<[(usize, f64); 4]> = (0..n_out)
        .map(|i| {
            let src = source_position(ratio, i, align_corners);
            let floor = src.floor();
            let at = |k: i64| (floor as i64 + k).clamp(0, last) as usize;
            let w = cubic_weights(src - floor);
            [(at(-1), w[0]), (at(0), w[1]), (at(1), w[2]), (at(2), w[3])]
        })
        .collect();
    weighted_rows(x, dim, &taps)
}

/// `x` along `dim` resampled to `taps.len()` positions, each the weighted
/// sum of source rows `(index, weight)` in order, in f64.
fn weighted_rows<const K: usize>(x: &Tensor, dim: usize, taps: &[[(usize, f64); K]]) -> Tensor {
    let n_in = x.shape()[dim];
    let outer: usize = x.shape()[..dim].iter().product();
    let inner: usize = x.shape()[dim + 1..].iter().product();
    let src: Vec<f64> = x.to_vec();
    let mut out = Vec::with_capacity(crate::alloc::ensure_numel::<f64>(&[
        outer,
        taps.len(),
        inner,
    ]));
    for o in 0..outer {
        let base = o * n_in * inner;
        for tap in taps {
            let rows = tap.map(|(i, w)| (&src[base + i * inner..base + (i + 1) * inner], w));
            out.extend((0..inner).map(|j| {
                rows.iter()
                    .skip(1)
                    .fold(rows[0].0[j] * rows[0].1, |acc, (row, w)| acc + row[j] * w)
            }));
        }
    }
    let mut shape = x.shape().to_vec();
    shape[dim] = taps.len();
    Tensor::from_vec(out, &shape)
}

/// Linear interpolation of `x` along `dim` to `n_out` positions, in f64.
fn linear_along(
    x: &Tensor,
    dim: usize,
    n_out: usize,
    scale: Option<f64>,
    align_corners: bool,
) -> Tensor {
    let n_in = x.shape()[dim];
    let ratio = source_ratio(n_in, n_out, scale, align_corners);
    let taps: Vec<[(usize, f64); 2]> = (0..n_out)
        .map(|i| {
            // Before the first source point the linear modes hold its value.
            let src = source_position(ratio, i, align_corners).max(0.0);
            let i0 = (src.floor() as usize).min(n_in - 1);
            let i1 = if i0 < n_in - 1 { i0 + 1 } else { i0 };
            let l1 = (src - i0 as f64).clamp(0.0, 1.0);
            [(i0, 1.0 - l1), (i1, l1)]
        })
        .collect();
    weighted_rows(x, dim, &taps)
}
