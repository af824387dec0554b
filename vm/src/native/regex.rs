//! `_fxvm_regex`: the native half of the frozen `regex` package — a
//! compiled pattern (`fxvm-regex` over fancy-regex) whose searches return
//! match spans in characters, and replacement templates. The package
//! builds its `Pattern` and `Match` objects from these.

pub(crate) use _regex::module_def;

use rustpython_vm::builtins::{PyStrRef, PyType};
use rustpython_vm::types::Constructor;
use rustpython_vm::{Py, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};

use fxvm_regex::{Anchor, Error, Flags, Regex, Spans, Template};

use crate::text::Utf8;

/// A compiled pattern: `Compiled(pattern, flags)`.
#[pyclass(module = "_fxvm_regex", name = "Compiled")]
#[derive(Debug, PyPayload)]
struct PyCompiled {
    regex: Regex,
}

/// A parsed replacement template: `compiled.template(text)`.
#[pyclass(module = "_fxvm_regex", name = "Template")]
#[derive(Debug, PyPayload)]
struct PyTemplate {
    template: Template,
}

#[pyclass]
impl PyTemplate {
    /// The template filled from a match's groups: `starts`/`ends` are the
    /// character spans into `text` (-1 for a group that did not take part).
    #[pymethod]
    fn expand(
        &self,
        text: PyStrRef,
        starts: Vec<isize>,
        ends: Vec<isize>,
        vm: &VirtualMachine,
    ) -> PyResult<String> {
        let text = text.text(vm)?;
        let n = text.chars().count() as isize;
        let spans = starts
            .iter()
            .zip(&ends)
            .map(|(&a, &b)| match (a, b) {
                (-1, -1) => Ok(None),
                (a, b) if 0 <= a && a <= b && b <= n => Ok(Some((a as usize, b as usize))),
                _ => Err(vm.new_value_error("a span outside the text")),
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(self.template.expand_chars(text, &spans))
    }
}

/// A pattern or template error as `ValueError(message, position)`; the
/// package raises its `regex.error` from it. A template naming a group the
/// pattern lacks is the `regex` package's IndexError.
fn error(e: Error, vm: &VirtualMachine) -> rustpython_vm::builtins::PyBaseExceptionRef {
    if e.no_such_group {
        return vm.new_index_error(e.message);
    }
    let pos: PyObjectRef = match e.pos {
        Some(p) => vm.ctx.new_int(p).into(),
        None => vm.ctx.none(),
    };
    vm.new_exception(
        vm.ctx.exceptions.value_error.to_owned(),
        vec![vm.ctx.new_str(e.message).into(), pos],
    )
}

fn spans_to_py(spans: &Spans, vm: &VirtualMachine) -> PyObjectRef {
    let items: Vec<PyObjectRef> = spans
        .iter()
        .map(|s| match s {
            Some((a, b)) => vm
                .ctx
                .new_tuple(vec![vm.ctx.new_int(*a).into(), vm.ctx.new_int(*b).into()])
                .into(),
            None => vm.ctx.none(),
        })
        .collect();
    vm.ctx.new_tuple(items).into()
}

impl Constructor for PyCompiled {
    type Args = (PyStrRef, u32);

    fn py_new(
        _cls: &Py<PyType>,
        (pattern, flags): Self::Args,
        vm: &VirtualMachine,
    ) -> PyResult<Self> {
        let regex =
            Regex::new(pattern.text(vm)?, Flags::from_bits(flags)).map_err(|e| error(e, vm))?;
        Ok(PyCompiled { regex })
    }
}

#[pyclass(with(Constructor))]
impl PyCompiled {
    /// Capture groups, not counting the whole match.
    #[pygetset]
    fn groups(&self) -> usize {
        self.regex.groups()
    }

    /// The flags given with those set inline.
    #[pygetset]
    fn flags(&self) -> u32 {
        self.regex.flags().bits()
    }

    /// `[(name, number)]` of the named groups.
    #[pygetset]
    fn names(&self, vm: &VirtualMachine) -> PyObjectRef {
        let items = self
            .regex
            .names()
            .iter()
            .map(|(n, i)| {
                vm.ctx
                    .new_tuple(vec![
                        vm.ctx.new_str(n.as_str()).into(),
                        vm.ctx.new_int(*i).into(),
                    ])
                    .into()
            })
            .collect();
        vm.ctx.new_list(items).into()
    }

    /// The spans of the first match in `text[pos:endpos]` (None if none);
    /// `anchor` 0 searches, 1 matches at `pos`, 2 matches `pos` to `endpos`.
    #[pymethod]
    fn find(
        &self,
        text: PyStrRef,
        pos: usize,
        endpos: usize,
        anchor: u8,
        vm: &VirtualMachine,
    ) -> PyResult {
        let anchor = match anchor {
            0 => Anchor::Search,
            1 => Anchor::Start,
            _ => Anchor::Full,
        };
        let found = self
            .regex
            .find(text.text(vm)?, pos, endpos, anchor)
            .map_err(|e| error(e, vm))?;
        Ok(found.map_or_else(|| vm.ctx.none(), |spans| spans_to_py(&spans, vm)))
    }

    /// The spans of each match in `text[pos:endpos]`, stepping past empty
    /// matches as Python does; at most `limit` (0: all).
    #[pymethod]
    fn find_all(
        &self,
        text: PyStrRef,
        pos: usize,
        endpos: usize,
        limit: usize,
        vm: &VirtualMachine,
    ) -> PyResult {
        let found = self
            .regex
            .find_all(text.text(vm)?, pos, endpos, limit)
            .map_err(|e| error(e, vm))?;
        Ok(vm
            .ctx
            .new_list(found.iter().map(|s| spans_to_py(s, vm)).collect())
            .into())
    }

    /// `findall`'s result: the matched strings, the one group's, or tuples of all groups'.
    #[pymethod]
    fn find_strings(
        &self,
        text: PyStrRef,
        pos: usize,
        endpos: usize,
        vm: &VirtualMachine,
    ) -> PyResult {
        let found = self
            .regex
            .find_texts(text.text(vm)?, pos, endpos)
            .map_err(|e| error(e, vm))?;
        let items = found
            .into_iter()
            .map(|groups| match groups.as_slice() {
                [one] => vm.ctx.new_str(*one).into(),
                many => vm
                    .ctx
                    .new_tuple(many.iter().map(|g| vm.ctx.new_str(*g).into()).collect())
                    .into(),
            })
            .collect();
        Ok(vm.ctx.new_list(items).into())
    }

    /// A replacement template parsed against this pattern's groups.
    #[pymethod]
    fn template(&self, text: PyStrRef, vm: &VirtualMachine) -> PyResult<PyTemplate> {
        let template = Template::parse(text.text(vm)?, self.regex.groups(), self.regex.names())
            .map_err(|e| error(e, vm))?;
        Ok(PyTemplate { template })
    }

    /// `(new text, replacements)` with the first `count` matches (0: all)
    /// replaced by `template`.
    #[pymethod]
    fn sub(
        &self,
        template: rustpython_vm::PyRef<PyTemplate>,
        text: PyStrRef,
        count: usize,
        vm: &VirtualMachine,
    ) -> PyResult {
        let (out, n) = self
            .regex
            .sub(text.text(vm)?, &template.template, count)
            .map_err(|e| error(e, vm))?;
        Ok(vm
            .ctx
            .new_tuple(vec![vm.ctx.new_str(out).into(), vm.ctx.new_int(n).into()])
            .into())
    }

    /// `text` split at the first `maxsplit` matches (0: all), with each match's groups.
    #[pymethod]
    fn split(&self, text: PyStrRef, maxsplit: usize, vm: &VirtualMachine) -> PyResult {
        let parts = self
            .regex
            .split(text.text(vm)?, maxsplit)
            .map_err(|e| error(e, vm))?;
        let items = parts
            .into_iter()
            .map(|p| p.map_or_else(|| vm.ctx.none(), |s| vm.ctx.new_str(s).into()))
            .collect();
        Ok(vm.ctx.new_list(items).into())
    }
}

#[rustpython_vm::pymodule(name = "_fxvm_regex")]
mod _regex {
    use rustpython_vm::VirtualMachine;
    use rustpython_vm::class::PyClassImpl;

    #[pyattr(name = "Compiled")]
    fn compiled_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        super::PyTemplate::make_static_type();
        super::PyCompiled::make_static_type()
    }
}
