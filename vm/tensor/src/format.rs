//! `repr(tensor)`, printed exactly as PyTorch prints it, under the
//! process-wide print options `torch.set_printoptions` sets.

use std::sync::RwLock;

use super::dtype::{Category, DType};
use super::tensor::Tensor;

/// `torch.set_printoptions`' settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrintOptions {
    /// Digits after the point.
    pub precision: usize,
    /// Elements above which a print is summarised (`inf` never).
    pub threshold: f64,
    /// Elements shown at each end of a summarised dim.
    pub edgeitems: usize,
    /// Characters per line before wrapping.
    pub linewidth: usize,
    /// Scientific notation forced on or off; `None` decides from the values.
    pub sci_mode: Option<bool>,
}

impl PrintOptions {
    /// PyTorch's defaults (the `default` profile).
    pub const DEFAULT: PrintOptions = PrintOptions {
        precision: 4,
        threshold: 1000.0,
        edgeitems: 3,
        linewidth: 80,
        sci_mode: None,
    };
}

static OPTIONS: RwLock<PrintOptions> = RwLock::new(PrintOptions::DEFAULT);

/// The print options in force.
pub fn print_options() -> PrintOptions {
    *OPTIONS.read().unwrap_or_else(|e| e.into_inner())
}

/// Sets the print options for every later print (in every thread, as
/// PyTorch's are global).
pub fn set_print_options(options: PrintOptions) {
    *OPTIONS.write().unwrap_or_else(|e| e.into_inner()) = options;
}

/// One element, as the formatter sees it.
#[derive(Clone, Copy)]
enum Value {
    Float(f64),
    Int(i64),
    Bool(bool),
}

/// Python's `f"{x:.{p}f}"`.
fn fixed(x: f64, precision: usize) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{x:.precision$}")
    }
}

/// Python's `f"{x:.{p}e}"`: a signed exponent of at least two digits.
fn sci(x: f64, precision: usize) -> String {
    if !x.is_finite() {
        return fixed(x, precision);
    }
    let s = format!("{x:.precision$e}");
    let (mantissa, exp) = s.split_once('e').expect("`e` formatting has an exponent");
    let exp: i32 = exp.parse().expect("integer exponent");
    format!(
        "{mantissa}e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    )
}

/// Decides width and notation from the values shown, as PyTorch's `_Formatter`.
struct Formatter {
    floating: bool,
    int_mode: bool,
    sci_mode: bool,
    max_width: usize,
    precision: usize,
}

impl Formatter {
    fn new(values: &[Value], floating: bool, options: &PrintOptions) -> Formatter {
        let precision = options.precision;
        let mut f = Formatter {
            floating,
            int_mode: true,
            sci_mode: false,
            max_width: 1,
            precision,
        };
        if !floating {
            for v in values {
                f.max_width = f.max_width.max(plain(*v, precision).len());
            }
            return f;
        }
        let finite: Vec<f64> = values
            .iter()
            .filter_map(|v| match v {
                Value::Float(x) if x.is_finite() && *x != 0.0 => Some(*x),
                _ => None,
            })
            .collect();
        if finite.is_empty() {
            return f;
        }
        let min = finite.iter().fold(f64::INFINITY, |m, x| m.min(x.abs()));
        let max = finite.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        f.int_mode = finite.iter().all(|x| x.ceil() == *x);
        // Integral values are at least 1, so the last test only ever
        // concerns fractions; a forced notation decides the widths too.
        f.sci_mode = options
            .sci_mode
            .unwrap_or(max / min > 1000.0 || max > 1.0e8 || min < 1.0e-4);
        for &x in &finite {
            let len = if f.sci_mode {
                sci(x, precision).len()
            } else if f.int_mode {
                fixed(x, 0).len() + 1
            } else {
                fixed(x, precision).len()
            };
            f.max_width = f.max_width.max(len);
        }
        f
    }

    fn format(&self, v: Value) -> String {
        let s = match v {
            Value::Float(x) if self.floating => {
                if self.sci_mode {
                    sci(x, self.precision)
                } else if self.int_mode {
                    let mut s = fixed(x, 0);
                    if x.is_finite() {
                        s.push('.');
                    }
                    s
                } else {
                    fixed(x, self.precision)
                }
            }
            v => plain(v, self.precision),
        };
        format!("{s:>width$}", width = self.max_width)
    }
}

/// Python's `str()` of an element.
fn plain(v: Value, precision: usize) -> String {
    match v {
        Value::Float(x) => fixed(x, precision),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => if b { "True" } else { "False" }.into(),
    }
}

fn values(t: &Tensor) -> Vec<Value> {
    match t.dtype().category() {
        Category::Bool => t.to_vec::<bool>().into_iter().map(Value::Bool).collect(),
        Category::Int => t.to_vec::<i64>().into_iter().map(Value::Int).collect(),
        Category::Float => t.to_vec::<f64>().into_iter().map(Value::Float).collect(),
    }
}

/// Row-major indices of the elements that a summarised print shows.
fn shown(shape: &[usize], edge: usize) -> Vec<Vec<usize>> {
    let axis = |size: usize| -> Vec<usize> {
        if size > 2 * edge {
            (0..edge).chain(size - edge..size).collect()
        } else {
            (0..size).collect()
        }
    };
    shape.iter().fold(vec![vec![]], |acc, &size| {
        acc.iter()
            .flat_map(|prefix| {
                axis(size)
                    .into_iter()
                    .map(move |i| [prefix.clone(), vec![i]].concat())
            })
            .collect()
    })
}

struct Printer<'a> {
    all: &'a [Value],
    strides: Vec<usize>,
    fmt: Formatter,
    summarize: bool,
    edge: usize,
    linewidth: usize,
}

impl Printer<'_> {
    fn value(&self, index: &[usize]) -> Value {
        self.all[index
            .iter()
            .zip(&self.strides)
            .map(|(i, s)| i * s)
            .sum::<usize>()]
    }

    fn tensor(&self, shape: &[usize], prefix: &mut Vec<usize>, indent: usize) -> String {
        match shape.len() {
            0 => self.fmt.format(self.value(prefix)),
            1 => self.vector(shape[0], prefix, indent),
            dim => {
                let size = shape[0];
                let mut slices = Vec::new();
                let sub = |i: usize, prefix: &mut Vec<usize>| {
                    prefix.push(i);
                    let s = self.tensor(&shape[1..], prefix, indent + 1);
                    prefix.pop();
                    s
                };
                if self.summarize && size > 2 * self.edge {
                    for i in 0..self.edge {
                        slices.push(sub(i, prefix));
                    }
                    slices.push("...".into());
                    for i in size - self.edge..size {
                        slices.push(sub(i, prefix));
                    }
                } else {
                    for i in 0..size {
                        slices.push(sub(i, prefix));
                    }
                }
                let sep = format!(",{}{}", "\n".repeat(dim - 1), " ".repeat(indent + 1));
                format!("[{}]", slices.join(&sep))
            }
        }
    }

    fn vector(&self, size: usize, prefix: &mut Vec<usize>, indent: usize) -> String {
        let element_length = self.fmt.max_width + 2;
        let per_line = ((self.linewidth.saturating_sub(indent)) / element_length).max(1);
        let mut item = |i: usize| {
            prefix.push(i);
            let s = self.fmt.format(self.value(prefix));
            prefix.pop();
            s
        };
        let data: Vec<String> = if self.summarize && size > 2 * self.edge {
            let mut d: Vec<String> = (0..self.edge).map(&mut item).collect();
            d.push(" ...".into());
            d.extend((size - self.edge..size).map(&mut item));
            d
        } else {
            (0..size).map(item).collect()
        };
        let lines: Vec<String> = data.chunks(per_line).map(|line| line.join(", ")).collect();
        format!(
            "[{}]",
            lines.join(&format!(",\n{}", " ".repeat(indent + 1)))
        )
    }
}

/// The body of `repr(t)` between `prefix(` and the suffixes.
fn body(t: &Tensor, indent: usize, options: &PrintOptions) -> String {
    let all = values(t);
    let summarize = t.numel() as f64 > options.threshold;
    let strides = super::layout::contiguous_strides(t.shape());
    let shown_values: Vec<Value> = if summarize {
        shown(t.shape(), options.edgeitems)
            .iter()
            .map(|ix| all[ix.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>()])
            .collect()
    } else {
        all.clone()
    };
    let fmt = Formatter::new(&shown_values, t.dtype().is_float(), options);
    let printer = Printer {
        all: &all,
        strides,
        fmt,
        summarize,
        edge: options.edgeitems,
        linewidth: options.linewidth,
    };
    printer.tensor(t.shape(), &mut Vec::new(), indent)
}

/// Appends `, suffix` items, wrapping onto a new line past the line width.
fn add_suffixes(text: String, suffixes: &[String], indent: usize, linewidth: usize) -> String {
    let mut out = text;
    // PyTorch's count, off by two from the visible length: `len - rfind("\n") + 1`.
    let newline = out.rfind('\n').map_or(-1, |p| p as isize);
    let mut last_line_len = (out.len() as isize - newline + 1) as usize;
    for suffix in suffixes {
        if last_line_len + suffix.len() + 2 > linewidth {
            out.push_str(&format!(",\n{}{suffix}", " ".repeat(indent)));
            last_line_len = indent + suffix.len();
        } else {
            out.push_str(", ");
            out.push_str(suffix);
            last_line_len += suffix.len() + 2;
        }
    }
    out.push(')');
    out
}

/// `repr(t)`; `extra` suffixes (e.g. `requires_grad=True`) follow the dtype.
pub fn repr(t: &Tensor, extra: &[String]) -> String {
    let options = print_options();
    let prefix = "tensor(";
    let indent = prefix.len();
    let mut suffixes = Vec::new();
    let default_dtype =
        matches!(t.dtype(), DType::I64 | DType::Bool) || t.dtype() == crate::dtype::default_float();
    let text = if t.numel() == 0 {
        if t.ndim() != 1 {
            let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
            let tuple = if dims.len() == 1 {
                format!("({},)", dims[0])
            } else {
                format!("({})", dims.join(", "))
            };
            suffixes.push(format!("size={tuple}"));
        }
        if t.dtype() != DType::F32 {
            suffixes.push(format!("dtype={}", t.dtype()));
        }
        "[]".to_owned()
    } else {
        if !default_dtype {
            suffixes.push(format!("dtype={}", t.dtype()));
        }
        body(t, indent, &options)
    };
    suffixes.extend(extra.iter().cloned());
    add_suffixes(
        format!("{prefix}{text}"),
        &suffixes,
        indent,
        options.linewidth,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_style_scientific_notation() {
        assert_eq!(sci(123456.0, 4), "1.2346e+05");
        assert_eq!(sci(0.00001234, 4), "1.2340e-05");
    }

    #[test]
    fn small_matrices() {
        let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.5], &[2, 2]);
        assert_eq!(
            repr(&t, &[]),
            "tensor([[1.0000, 2.0000],\n        [3.0000, 4.5000]])"
        );
        let t = Tensor::from_vec(vec![1i64, -20, 3], &[3]);
        assert_eq!(repr(&t, &[]), "tensor([  1, -20,   3])");
        let t = Tensor::from_vec(vec![1.0f64, 2.0], &[2]);
        assert_eq!(repr(&t, &[]), "tensor([1., 2.], dtype=torch.float64)");
    }
}
