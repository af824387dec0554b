//! `repr(tensor)`, printed exactly as PyTorch prints it (its default print
//! options: precision 4, threshold 1000, edgeitems 3, linewidth 80).

use super::dtype::{Category, DType};
use super::tensor::Tensor;

const PRECISION: usize = 4;
const THRESHOLD: usize = 1000;
const EDGEITEMS: usize = 3;
const LINEWIDTH: usize = 80;

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
}

impl Formatter {
    fn new(values: &[Value], floating: bool) -> Formatter {
        let mut f = Formatter {
            floating,
            int_mode: true,
            sci_mode: false,
            max_width: 1,
        };
        if !floating {
            for v in values {
                f.max_width = f.max_width.max(plain(*v).len());
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
        let wide = max / min > 1000.0 || max > 1.0e8;
        f.sci_mode = if f.int_mode {
            wide
        } else {
            wide || min < 1.0e-4
        };
        for &x in &finite {
            let len = if f.sci_mode {
                sci(x, PRECISION).len()
            } else if f.int_mode {
                fixed(x, 0).len() + 1
            } else {
                fixed(x, PRECISION).len()
            };
            f.max_width = f.max_width.max(len);
        }
        f
    }

    fn format(&self, v: Value) -> String {
        let s = match v {
            Value::Float(x) if self.floating => {
                if self.sci_mode {
                    sci(x, PRECISION)
                } else if self.int_mode {
                    let mut s = fixed(x, 0);
                    if x.is_finite() {
                        s.push('.');
                    }
                    s
                } else {
                    fixed(x, PRECISION)
                }
            }
            v => plain(v),
        };
        format!("{s:>width$}", width = self.max_width)
    }
}

/// Python's `str()` of an element.
fn plain(v: Value) -> String {
    match v {
        Value::Float(x) => fixed(x, PRECISION),
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
fn shown(shape: &[usize], summarize: bool) -> Vec<Vec<usize>> {
    let axis = |size: usize| -> Vec<usize> {
        if summarize && size > 2 * EDGEITEMS {
            (0..EDGEITEMS).chain(size - EDGEITEMS..size).collect()
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
                if self.summarize && size > 2 * EDGEITEMS {
                    for i in 0..EDGEITEMS {
                        slices.push(sub(i, prefix));
                    }
                    slices.push("...".into());
                    for i in size - EDGEITEMS..size {
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
        let per_line = ((LINEWIDTH.saturating_sub(indent)) / element_length).max(1);
        let mut item = |i: usize| {
            prefix.push(i);
            let s = self.fmt.format(self.value(prefix));
            prefix.pop();
            s
        };
        let data: Vec<String> = if self.summarize && size > 2 * EDGEITEMS {
            let mut d: Vec<String> = (0..EDGEITEMS).map(&mut item).collect();
            d.push(" ...".into());
            d.extend((size - EDGEITEMS..size).map(&mut item));
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
fn body(t: &Tensor, indent: usize) -> String {
    let all = values(t);
    let summarize = t.numel() > THRESHOLD;
    let strides = super::layout::contiguous_strides(t.shape());
    let shown_values: Vec<Value> = if summarize {
        shown(t.shape(), true)
            .iter()
            .map(|ix| all[ix.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>()])
            .collect()
    } else {
        all.clone()
    };
    let fmt = Formatter::new(&shown_values, t.dtype().is_float());
    let printer = Printer {
        all: &all,
        strides,
        fmt,
        summarize,
    };
    printer.tensor(t.shape(), &mut Vec::new(), indent)
}

/// Appends `, suffix` items, wrapping onto a new line past the line width.
fn add_suffixes(text: String, suffixes: &[String], indent: usize) -> String {
    let mut out = text;
    // PyTorch's count, off by two from the visible length: `len - rfind("\n") + 1`.
    let newline = out.rfind('\n').map_or(-1, |p| p as isize);
    let mut last_line_len = (out.len() as isize - newline + 1) as usize;
    for suffix in suffixes {
        if last_line_len + suffix.len() + 2 > LINEWIDTH {
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
    let prefix = "tensor(";
    let indent = prefix.len();
    let mut suffixes = Vec::new();
    let default_dtype = matches!(t.dtype(), DType::F32 | DType::I64 | DType::Bool);
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
        body(t, indent)
    };
    suffixes.extend(extra.iter().cloned());
    add_suffixes(format!("{prefix}{text}"), &suffixes, indent)
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
