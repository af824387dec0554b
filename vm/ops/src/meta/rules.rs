//! Shape rules of the non-view families: ops whose output has their input's
//! sizes, reductions, `topk`, gathers, products (`matmul`, `linear`,
//! `einsum`) and creation. The nn layers' rules are in `layers`.

use fxvm_symbolic::Expr;
use fxvm_tensor::{DType, Result, TensorError};

use super::{Ctx, MetaOut, TensorMeta};
use crate::value::Value;

/// The output is shaped and typed like the first parameter (norms,
/// dropout, `contiguous`, `tril` …); a `dtype` parameter, when given,
/// decides the dtype.
pub(crate) fn same(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let first = cx.op.schema.params[0].name;
    let mut t = cx.tensor(first)?;
    if cx.op.schema.position("dtype").is_some()
        && let Some(d) = cx.dtype("dtype")
    {
        t.dtype = d;
    }
    if cx.op.schema.params[0].mutates {
        return Ok(MetaOut::Input(0));
    }
    Ok(MetaOut::Tensor(t))
}

/// `sum`, `mean`, `amax`, `max(dim)`, `argmax`, `var` … over `dim` (all
/// dims when absent or empty), kept as size 1 with `keepdim`; the dtypes
/// (int64 sums, indices, bools) are the kernel's own. `max(x, other)` is
/// elementwise.
pub(crate) fn reduce(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    if matches!(cx.arg("dim"), super::Meta::Tensor(_)) {
        return super::pointwise(cx);
    }
    let x = cx.tensor("input")?;
    let dims: Vec<i64> = match cx.arg("dim") {
        // `var(x, True)`: the old `unbiased` in dim's place.
        super::Meta::Value(Value::Bool(_) | Value::None) => Vec::new(),
        _ => cx
            .ints("dim")?
            .iter()
            .map(|e| e.as_int().map(|i| i as i64))
            .collect::<Option<_>>()
            .ok_or_else(|| cx.bad("dim"))?,
    };
    let keepdim = cx.bool("keepdim");
    let mut reduced = vec![dims.is_empty(); x.ndim()];
    for &d in &dims {
        reduced[cx.wrap_dim(d, x.ndim())?] = true;
    }
    let sizes: Vec<Expr> = x
        .sizes
        .iter()
        .zip(&reduced)
        .filter_map(|(s, &r)| match (r, keepdim) {
            (false, _) => Some(s.clone()),
            (true, true) => Some(Expr::int(1)),
            (true, false) => None,
        })
        .collect();
    super::pointwise::probe_with_sizes(cx, &sizes)
}

/// `topk(input, k, dim)`: values and int64 indices, `k` along `dim`.
pub(crate) fn topk(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let dim = cx.wrap_dim(cx.const_int("dim")?, x.ndim())?;
    let mut sizes = x.sizes.clone();
    if x.ndim() > 0 {
        sizes[dim] = cx.int("k")?;
    }
    Ok(MetaOut::Tuple(vec![
        TensorMeta::new(sizes.clone(), x.dtype),
        TensorMeta::new(sizes, DType::I64),
    ]))
}

/// `index_select(input, dim, index)`: `dim` becomes the index's length.
pub(crate) fn index_select(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let index = cx.tensor("index")?;
    let mut sizes = x.sizes.clone();
    if x.ndim() > 0 {
        let dim = cx.wrap_dim(cx.const_int("dim")?, x.ndim())?;
        sizes[dim] = cx.sym(super::numel(&index.sizes))?;
    }
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)))
}

/// `gather(input, dim, index)`: the index's sizes, the input's dtype.
pub(crate) fn gather(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let index = cx.tensor("index")?;
    Ok(MetaOut::Tensor(TensorMeta::new(index.sizes, x.dtype)))
}

fn matmul_error(cx: &mut Ctx<'_>, a: &[Expr], b: &[Expr]) -> TensorError {
    TensorError::MatmulShape {
        lhs: cx.hints(a),
        rhs: cx.hints(b),
    }
}

/// `a @ b` for operands of any rank, as `torch.matmul` broadcasts them.
fn matmul_sizes(cx: &mut Ctx<'_>, a: &[Expr], b: &[Expr]) -> Result<Vec<Expr>> {
    if a.is_empty() || b.is_empty() {
        return Err(TensorError::Runtime {
            op: cx.name(),
            message: "both arguments to matmul need to be at least 1D".into(),
        });
    }
    let inner_a = &a[a.len() - 1];
    let inner_b = if b.len() == 1 { &b[0] } else { &b[b.len() - 2] };
    if !cx.equal(inner_a, inner_b)? {
        return Err(matmul_error(cx, a, b));
    }
    let rows = if a.len() >= 2 {
        vec![a[a.len() - 2].clone()]
    } else {
        vec![]
    };
    let cols = if b.len() >= 2 {
        vec![b[b.len() - 1].clone()]
    } else {
        vec![]
    };
    let batch_a = &a[..a.len().saturating_sub(2)];
    let batch_b = &b[..b.len().saturating_sub(2)];
    let mut out = super::pointwise::broadcast(cx, batch_a, batch_b)?;
    out.extend(rows);
    out.extend(cols);
    Ok(out)
}

/// `matmul`, `mm`, `bmm`: the product of the two tensor parameters.
pub(crate) fn product(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let params = &cx.op.schema.params;
    let (a, b) = (params[0].name, params[1].name);
    let (a, b) = (cx.tensor(a)?, cx.tensor(b)?);
    let sizes = matmul_sizes(cx, &a.sizes, &b.sizes)?;
    Ok(MetaOut::Tensor(TensorMeta::new(
        sizes,
        DType::promote(a.dtype, b.dtype),
    )))
}

/// `linear(input, weight, bias)`: `input @ weight.T`.
pub(crate) fn linear(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let w = cx.tensor("weight")?;
    let wt: Vec<Expr> = w.sizes.iter().rev().cloned().collect();
    let sizes = matmul_sizes(cx, &x.sizes, &wt)?;
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)))
}

/// `addmm`/`baddbmm`: the product, broadcast with `input`.
pub(crate) fn add_product(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let params = &cx.op.schema.params;
    let (c, a, b) = (params[0].name, params[1].name, params[2].name);
    let (c, a, b) = (cx.tensor(c)?, cx.tensor(a)?, cx.tensor(b)?);
    let prod = matmul_sizes(cx, &a.sizes, &b.sizes)?;
    let sizes = super::pointwise::broadcast(cx, &c.sizes, &prod)?;
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, c.dtype)))
}

/// Creation from a size list (`zeros`, `ones`, `empty`, `full`, `rand` …):
/// the default float dtype unless `dtype` says otherwise (`full` takes its
/// value's kind).
pub(crate) fn create(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let sizes = cx.ints("size")?;
    let dtype = cx.dtype("dtype").unwrap_or_else(|| {
        match (cx.op.schema.position("fill_value"), cx.value_of_fill()) {
            (Some(_), Some(d)) => d,
            _ => fxvm_tensor::dtype::default_float(),
        }
    });
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, dtype)))
}

impl Ctx<'_> {
    fn value_of_fill(&self) -> Option<DType> {
        match self.value("fill_value") {
            Value::Scalar(s) => Some(s.category().default_dtype()),
            _ => None,
        }
    }
}

/// `x.new_zeros(size)` and the other `new_*`: the sizes given, `x`'s dtype
/// unless `dtype` says otherwise.
pub(crate) fn new_like(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let sizes = cx.ints("size")?;
    let dtype = cx.dtype("dtype").unwrap_or(x.dtype);
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, dtype)))
}

/// `zeros_like` and the other `*_like`: the input's sizes and dtype (or
/// the `dtype` given).
pub(crate) fn like(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let dtype = cx.dtype("dtype").unwrap_or(x.dtype);
    Ok(MetaOut::Tensor(TensorMeta::new(x.sizes, dtype)))
}

/// `arange(start, end, step)`: `ceil((end - start) / step)` values, int64
/// when every bound is an integer.
pub(crate) fn arange(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let bound = |cx: &Ctx<'_>, p: &str| -> Option<Expr> {
        match cx.arg(p) {
            super::Meta::Int(e) => Some(e.clone()),
            super::Meta::Value(Value::Scalar(s)) if s.category().default_dtype() == DType::I64 => {
                Some(Expr::int(s.to_f64() as i128))
            }
            _ => None,
        }
    };
    let (start, end, step) = match cx.value("end") {
        Value::None if !matches!(cx.arg("end"), super::Meta::Int(_)) => {
            (Some(Expr::int(0)), bound(cx, "start"), bound(cx, "step"))
        }
        _ => (bound(cx, "start"), bound(cx, "end"), bound(cx, "step")),
    };
    let (Some(start), Some(end), Some(step)) = (start, end, step) else {
        return Err(cx.bad("non-integer bounds"));
    };
    // ceil(a / b) = -((-a) // b)
    let len = cx.sym(
        end.sub(&start)
            .and_then(|d| d.neg()?.floor_div(&step)?.neg()),
    )?;
    let dtype = cx.dtype("dtype").unwrap_or(DType::I64);
    Ok(MetaOut::Tensor(TensorMeta::new(vec![len], dtype)))
}

/// `einsum(equation, *operands)`: each output letter's size, from the
/// operand dims it labels (`...` broadcast across operands).
pub(crate) fn einsum(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let Value::Str(equation) = cx.value("equation").clone() else {
        return Err(cx.bad("equation"));
    };
    let ops = cx.tensors("operands")?;
    let equation: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l.to_owned(), Some(r.to_owned())),
        None => (equation.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ops.len() {
        return Err(TensorError::Runtime {
            op: cx.name(),
            message: "einsum(): more operands were provided than specified in the equation".into(),
        });
    }
    let mut sizes: std::collections::BTreeMap<char, Expr> = Default::default();
    let mut ellipsis: Vec<Expr> = Vec::new();
    let mut counts: std::collections::BTreeMap<char, usize> = Default::default();
    for (term, t) in terms.iter().zip(&ops) {
        let (before, after) = match term.split_once("...") {
            Some((b, a)) => (b, Some(a)),
            None => (*term, None),
        };
        let letters_before: Vec<char> = before.chars().collect();
        let letters_after: Vec<char> = after.map(|a| a.chars().collect()).unwrap_or_default();
        let named = letters_before.len() + letters_after.len();
        if named > t.ndim() || (after.is_none() && named != t.ndim()) {
            return Err(cx.bad("an equation term that does not fit its operand"));
        }
        let mut dims: Vec<(char, Expr)> = letters_before
            .iter()
            .copied()
            .zip(t.sizes.iter().cloned())
            .collect();
        let tail = t.ndim() - letters_after.len();
        dims.extend(
            letters_after
                .iter()
                .copied()
                .zip(t.sizes[tail..].iter().cloned()),
        );
        if after.is_some() {
            let middle = t.sizes[letters_before.len()..tail].to_vec();
            ellipsis = super::pointwise::broadcast(cx, &ellipsis, &middle)?;
        }
        for (c, s) in dims {
            *counts.entry(c).or_default() += 1;
            match sizes.get(&c).cloned() {
                Some(prev) if prev != s => {
                    let one = Expr::int(1);
                    if cx.equal(&prev, &one)? {
                        sizes.insert(c, s);
                    } else if !cx.equal(&s, &one)? && !cx.equal(&prev, &s)? {
                        return Err(cx.bad("operands whose labelled sizes differ"));
                    }
                }
                Some(_) => {}
                None => {
                    sizes.insert(c, s);
                }
            }
        }
    }
    let output: Vec<Expr> = match rhs {
        Some(r) => {
            let (before, after) = match r.split_once("...") {
                Some((b, a)) => (b.to_owned(), Some(a.to_owned())),
                None => (r.clone(), None),
            };
            let mut out: Vec<Expr> = Vec::new();
            for c in before.chars() {
                out.push(
                    sizes
                        .get(&c)
                        .cloned()
                        .ok_or_else(|| cx.bad("an output letter"))?,
                );
            }
            if let Some(after) = after {
                out.extend(ellipsis.iter().cloned());
                for c in after.chars() {
                    out.push(
                        sizes
                            .get(&c)
                            .cloned()
                            .ok_or_else(|| cx.bad("an output letter"))?,
                    );
                }
            }
            out
        }
        // Implicit output: the ellipsis, then letters seen once, sorted.
        None => {
            let mut out = ellipsis.clone();
            out.extend(
                counts
                    .iter()
                    .filter(|(_, n)| **n == 1)
                    .map(|(c, _)| sizes[c].clone()),
            );
            out
        }
    };
    let dtype = ops
        .iter()
        .map(|t| t.dtype)
        .reduce(DType::promote)
        .unwrap_or(DType::F32);
    Ok(MetaOut::Tensor(TensorMeta::new(output, dtype)))
}

#[cfg(test)]
mod tests {
    use fxvm_tensor::Scalar;

    use super::super::Meta;
    use super::*;
    use crate::meta::testing::{Examples, n, s};
    use crate::registry;

    fn t(sizes: Vec<Expr>, dtype: DType) -> Meta {
        Meta::Tensor(TensorMeta::new(sizes, dtype))
    }

    fn out(o: MetaOut) -> TensorMeta {
        match o {
            MetaOut::Tensor(t) => t,
            other => panic!("not one tensor: {other:?}"),
        }
    }

    fn infer(op: &crate::Op, args: Vec<Meta>, ex: &mut Examples) -> TensorMeta {
        out(op.infer(args, ex).expect("a rule").expect("inferred"))
    }

    #[test]
    fn linear_and_matmul_keep_symbolic_batch_dims() {
        let mut ex = Examples::with(&[("s0", 8)]);
        let linear = registry().functional("linear").unwrap();
        let y = infer(
            linear,
            vec![
                t(vec![n(2), s("s0"), n(16)], DType::F32),
                t(vec![n(32), n(16)], DType::F32),
                Meta::Value(Value::None),
            ],
            &mut ex,
        );
        assert_eq!(y.sizes, [n(2), s("s0"), n(32)]);
        let matmul = registry().function("matmul").unwrap();
        let y = infer(
            matmul,
            vec![
                t(vec![n(2), s("s0"), n(16)], DType::F32),
                t(vec![n(2), n(16), s("s0")], DType::F32),
            ],
            &mut ex,
        );
        assert_eq!(y.sizes, [n(2), s("s0"), s("s0")]);
        let err = matmul
            .infer(
                vec![
                    t(vec![s("s0"), n(3)], DType::F32),
                    t(vec![n(4), n(5)], DType::F32),
                ],
                &mut ex,
            )
            .unwrap()
            .unwrap_err();
        assert!(
            err.to_string()
                .ends_with("mat1 and mat2 shapes cannot be multiplied (8x3 and 4x5)")
        );
    }

    #[test]
    fn reductions_drop_or_keep_dims_and_widen_integer_sums() {
        let mut ex = Examples::default();
        let sum = registry().function("sum").unwrap();
        let y = infer(
            sum,
            vec![
                t(vec![s("s0"), n(3), n(4)], DType::I32),
                Meta::Value(Value::Ints(vec![-1])),
                Meta::Value(Value::Bool(true)),
                Meta::Value(Value::None),
            ],
            &mut ex,
        );
        assert_eq!(y, TensorMeta::new(vec![s("s0"), n(3), n(1)], DType::I64));
        let y = infer(
            sum,
            vec![
                t(vec![s("s0"), n(3)], DType::F32),
                Meta::Value(Value::None),
                Meta::Value(Value::Bool(false)),
                Meta::Value(Value::None),
            ],
            &mut ex,
        );
        assert_eq!(y, TensorMeta::new(vec![], DType::F32));
    }

    #[test]
    fn arange_counts_symbolic_ends_and_conv_floors_spatial_sizes() {
        let mut ex = Examples::with(&[("s0", 9)]);
        let arange = registry().function("arange").unwrap();
        let y = infer(
            arange,
            vec![
                Meta::Value(Value::Scalar(Scalar::Int(0))),
                Meta::Int(s("s0")),
                Meta::Value(Value::Scalar(Scalar::Int(1))),
                Meta::Value(Value::None),
                Meta::Value(Value::None),
                Meta::Value(Value::Bool(false)),
            ],
            &mut ex,
        );
        assert_eq!(y, TensorMeta::new(vec![s("s0")], DType::I64));
        let conv = registry().functional("conv2d").unwrap();
        let y = infer(
            conv,
            vec![
                t(vec![s("s0"), n(3), s("s1"), n(32)], DType::F32),
                t(vec![n(8), n(3), n(3), n(3)], DType::F32),
                Meta::Value(Value::None),
                Meta::Value(Value::Ints(vec![2])),
                Meta::Value(Value::Ints(vec![1])),
                Meta::Value(Value::Ints(vec![1])),
                Meta::Value(Value::Int(1)),
            ],
            &mut ex,
        );
        assert_eq!(
            y.sizes[..3],
            [
                s("s0"),
                n(8),
                s("s1")
                    .sub(&n(1))
                    .unwrap()
                    .floor_div(&n(2))
                    .unwrap()
                    .add(&n(1))
                    .unwrap()
            ]
        );
        assert_eq!(y.sizes[3], n(16));
    }
}
