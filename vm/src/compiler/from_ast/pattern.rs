//! `match` patterns of a Python AST as RustPython's.

use rustpython_vm::compiler::ast::{self as ast, AtomicNodeIndex, Identifier};
use rustpython_vm::{AsObject, PyObjectRef};

use super::{Conv, R, Unsupported, class_name};

impl Conv<'_> {
    pub(super) fn patterns(&self, obj: &PyObjectRef, name: &'static str) -> R<Vec<ast::Pattern>> {
        self.list(obj, name)?
            .iter()
            .map(|p| self.pattern(p))
            .collect()
    }

    pub(super) fn pattern(&self, p: &PyObjectRef) -> R<ast::Pattern> {
        let range = self.range(p);
        Ok(match class_name(p).as_str() {
            "MatchValue" => ast::Pattern::MatchValue(ast::PatternMatchValue {
                node_index: AtomicNodeIndex::NONE,
                range,
                value: self.expr_field(p, "value")?,
            }),
            "MatchSingleton" => {
                let value = self.get(p, "value")?;
                let vm = self.vm;
                ast::Pattern::MatchSingleton(ast::PatternMatchSingleton {
                    node_index: AtomicNodeIndex::NONE,
                    range,
                    value: if vm.is_none(&value) {
                        ast::Singleton::None
                    } else if value.is(&vm.ctx.true_value) {
                        ast::Singleton::True
                    } else if value.is(&vm.ctx.false_value) {
                        ast::Singleton::False
                    } else {
                        return Err(Unsupported);
                    },
                })
            }
            "MatchSequence" => ast::Pattern::MatchSequence(ast::PatternMatchSequence {
                node_index: AtomicNodeIndex::NONE,
                range,
                patterns: self.patterns(p, "patterns")?,
            }),
            "MatchMapping" => ast::Pattern::MatchMapping(ast::PatternMatchMapping {
                node_index: AtomicNodeIndex::NONE,
                range,
                keys: self.exprs(p, "keys")?,
                patterns: self.patterns(p, "patterns")?,
                rest: self.opt_ident(p, "rest", range)?,
            }),
            "MatchClass" => {
                let attrs = self.list(p, "kwd_attrs")?;
                let kwd_patterns = self.patterns(p, "kwd_patterns")?;
                if attrs.len() != kwd_patterns.len() {
                    return Err(Unsupported);
                }
                let keywords = attrs
                    .iter()
                    .zip(kwd_patterns)
                    .map(|(attr, pattern)| {
                        Ok(ast::PatternKeyword {
                            range,
                            node_index: AtomicNodeIndex::NONE,
                            attr: Identifier::new(self.string(attr)?, range),
                            pattern,
                        })
                    })
                    .collect::<R<_>>()?;
                ast::Pattern::MatchClass(ast::PatternMatchClass {
                    node_index: AtomicNodeIndex::NONE,
                    range,
                    cls: self.expr_field(p, "cls")?,
                    arguments: ast::PatternArguments {
                        range,
                        node_index: AtomicNodeIndex::NONE,
                        patterns: self.patterns(p, "patterns")?,
                        keywords,
                    },
                })
            }
            "MatchStar" => ast::Pattern::MatchStar(ast::PatternMatchStar {
                node_index: AtomicNodeIndex::NONE,
                range,
                name: self.opt_ident(p, "name", range)?,
            }),
            "MatchAs" => ast::Pattern::MatchAs(ast::PatternMatchAs {
                node_index: AtomicNodeIndex::NONE,
                range,
                pattern: match self.opt(p, "pattern")? {
                    Some(inner) => Some(Box::new(self.pattern(&inner)?)),
                    None => None,
                },
                name: self.opt_ident(p, "name", range)?,
            }),
            "MatchOr" => ast::Pattern::MatchOr(ast::PatternMatchOr {
                node_index: AtomicNodeIndex::NONE,
                range,
                patterns: self.patterns(p, "patterns")?,
            }),
            _ => return Err(Unsupported),
        })
    }
}
