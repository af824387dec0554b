//! The cases of a project: `fxvm.toml`, or `[tool.fxvm]` in its
//! `pyproject.toml`. Paths in it are relative to the file's folder.
//!
//! ```toml
//! snapshots = "snapshots"          # where goldens live (the default)
//! site-packages = [".venv/lib/python3.11/site-packages"]
//! formats = ["code"]               # each case's forms unless it names its own
//!
//! [[case]]
//! name = "gpt"                     # the golden's stem; the file's stem by default
//! file = "models/gpt.py"
//! module = "GPT(GPTConfig(n_layer=2))"
//! example = ["idx=1x8:int64:50"]
//! formats = ["graph", "outputs"]
//! rtol = 1e-4                      # tolerances of the outputs form
//! atol = 1e-5
//! ```

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde::Deserialize;

use super::case::{Case, Snapshot};
use crate::cli::session::Target;
use crate::cli::trace::Format;

/// A manifest as read, with the folder its paths are relative to.
pub(crate) struct Manifest {
    pub(crate) path: PathBuf,
    pub(crate) site_packages: Vec<PathBuf>,
    pub(crate) cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Spec {
    #[serde(default = "default_snapshots")]
    snapshots: PathBuf,
    #[serde(default)]
    site_packages: Vec<PathBuf>,
    formats: Option<Vec<String>>,
    #[serde(default, rename = "case")]
    cases: Vec<CaseSpec>,
}

fn default_snapshots() -> PathBuf {
    PathBuf::from("snapshots")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct CaseSpec {
    name: Option<String>,
    file: PathBuf,
    module: Option<String>,
    function: Option<String>,
    #[serde(default)]
    concrete: Vec<String>,
    #[serde(default)]
    example: Vec<String>,
    #[serde(default)]
    dynamic: Vec<String>,
    formats: Option<Vec<String>>,
    rtol: Option<f64>,
    atol: Option<f64>,
    #[serde(default)]
    seed: u64,
}

/// `pyproject.toml`: only `[tool.fxvm]` is read.
#[derive(Deserialize)]
struct Pyproject {
    tool: Option<Tool>,
}

#[derive(Deserialize)]
struct Tool {
    fxvm: Option<Spec>,
}

/// The manifest governing `start`: the first folder from `start` up that
/// has an `fxvm.toml` or a `pyproject.toml` with a `[tool.fxvm]` table.
/// Its paths are relative to `start` (`snapshots/m.code`, `../models/m.py`),
/// as a user standing there would write them.
pub(crate) fn find(start: &Path) -> anyhow::Result<Option<Manifest>> {
    let mut relative = PathBuf::new();
    for dir in start.ancestors() {
        if let Some(manifest) = in_folder(dir, &relative)? {
            return Ok(Some(manifest));
        }
        relative.push("..");
    }
    Ok(None)
}

/// The manifest in `dir` itself, if it has one; `shown` is how paths
/// name that folder.
pub(crate) fn in_folder(dir: &Path, shown: &Path) -> anyhow::Result<Option<Manifest>> {
    let own = dir.join("fxvm.toml");
    if own.is_file() {
        let path = shown.join("fxvm.toml");
        let text = read_text(&own)?;
        let spec = toml::from_str(&text).map_err(|e| syntax_error(&path, &text, &e))?;
        return build(&path, spec).map(Some);
    }
    let pyproject = dir.join("pyproject.toml");
    if pyproject.is_file() {
        let path = shown.join("pyproject.toml");
        let text = read_text(&pyproject)?;
        if let Some(spec) = pyproject_spec(&path, &text)? {
            return build(&path, spec).map(Some);
        }
    }
    Ok(None)
}

/// The manifest at `path` (`fxvm.toml`, or a `pyproject.toml` with `[tool.fxvm]`).
pub(crate) fn read(path: &Path) -> anyhow::Result<Manifest> {
    let text = read_text(path)?;
    let spec = if path.file_name().is_some_and(|n| n == "pyproject.toml") {
        pyproject_spec(path, &text)?
            .ok_or_else(|| anyhow::anyhow!("{} has no [tool.fxvm] table", path.display()))?
    } else {
        toml::from_str(&text).map_err(|e| syntax_error(path, &text, &e))?
    };
    build(path, spec)
}

fn read_text(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        anyhow::anyhow!(
            "can't read manifest '{}': {}",
            path.display(),
            crate::cli::io_reason(&e)
        )
    })
}

fn pyproject_spec(path: &Path, text: &str) -> anyhow::Result<Option<Spec>> {
    let project: Pyproject = toml::from_str(text).map_err(|e| syntax_error(path, text, &e))?;
    Ok(project.tool.and_then(|t| t.fxvm))
}

/// `file:line:column: message`, as compilers report.
fn syntax_error(path: &Path, text: &str, e: &toml::de::Error) -> anyhow::Error {
    let at = e.span().map(|span| {
        let before = &text[..span.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        format!(":{line}:{column}")
    });
    anyhow::anyhow!(
        "{}{}: {}",
        path.display(),
        at.unwrap_or_default(),
        e.message()
    )
}

fn build(path: &Path, spec: Spec) -> anyhow::Result<Manifest> {
    // `a/fxvm.toml` → `a/models/m.py`; `fxvm.toml` → `models/m.py`.
    let root = path.parent().unwrap_or(Path::new(""));
    let snapshots = root.join(&spec.snapshots);
    let default_formats = formats(path, "formats", spec.formats.as_deref())?;
    let mut names = HashSet::new();
    let mut cases = Vec::with_capacity(spec.cases.len());
    for case in spec.cases {
        let name = match case.name {
            Some(name) => name,
            None => case
                .file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        if name.is_empty() || name.contains(['/', '\\']) {
            anyhow::bail!(
                "{}: case name '{name}' must be a non-empty file stem",
                path.display()
            );
        }
        if !names.insert(name.clone()) {
            anyhow::bail!(
                "{}: two cases are named '{name}' (their goldens would collide); give one a `name`",
                path.display()
            );
        }
        let forms = match &case.formats {
            Some(own) => formats(path, &format!("case '{name}' formats"), Some(own))?,
            None => default_formats.clone(),
        };
        let snapshots = forms
            .into_iter()
            .map(|format| Snapshot {
                format,
                golden: snapshots.join(format!("{name}.{}", format.extension())),
            })
            .collect();
        cases.push(Case {
            label: name,
            target: Target {
                file: root.join(&case.file),
                module: case.module,
                function: case.function,
                concrete: case.concrete,
                example: case.example,
                dynamic: case.dynamic,
                seed: case.seed,
            },
            snapshots,
            rtol: case.rtol,
            atol: case.atol,
        });
    }
    if cases.is_empty() {
        anyhow::bail!(
            "{} lists no cases: add a [[case]] table with a `file`",
            path.display()
        );
    }
    Ok(Manifest {
        path: path.to_owned(),
        site_packages: spec.site_packages.iter().map(|p| root.join(p)).collect(),
        cases,
    })
}

fn formats(path: &Path, what: &str, names: Option<&[String]>) -> anyhow::Result<Vec<Format>> {
    let Some(names) = names else {
        return Ok(vec![Format::Code]);
    };
    if names.is_empty() {
        anyhow::bail!("{}: {what} is empty", path.display());
    }
    names
        .iter()
        .map(|name| {
            Format::from_str(name, false).map_err(|_| {
                let choices: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                anyhow::anyhow!(
                    "{}: {what}: unknown format '{name}' (choose from {})",
                    path.display(),
                    choices.join(", ")
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &str, name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fxvm-manifest-{dir}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn cases_take_defaults_and_paths_are_relative_to_the_manifest() {
        let path = write(
            "defaults",
            "fxvm.toml",
            "formats = [\"graph\", \"code\"]\n\n[[case]]\nfile = \"models/mlp.py\"\n\n[[case]]\nname = \"gpt\"\nfile = \"gpt.py\"\nformats = [\"outputs\"]\nexample = [\"idx=1x8:int64\"]\natol = 0.001\n",
        );
        let manifest = read(&path).unwrap();
        let root = path.parent().unwrap();
        let [mlp, gpt] = &manifest.cases[..] else {
            panic!("two cases")
        };
        assert_eq!(mlp.label, "mlp");
        assert_eq!(mlp.target.file, root.join("models/mlp.py"));
        assert_eq!(mlp.formats(), [Format::Graph, Format::Code]);
        assert_eq!(mlp.snapshots[0].golden, root.join("snapshots/mlp.graph"));
        assert_eq!(
            gpt.snapshots[0].golden,
            root.join("snapshots/gpt.outputs.safetensors")
        );
        assert_eq!(gpt.atol, Some(0.001));
    }

    #[test]
    fn pyproject_tables_are_found_from_a_subfolder() {
        let path = write(
            "pyproject",
            "pyproject.toml",
            "[project]\nname = \"demo\"\n\n[tool.fxvm]\nsnapshots = \"goldens\"\n\n[[tool.fxvm.case]]\nfile = \"m.py\"\n",
        );
        let sub = path.parent().unwrap().join("src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        let manifest = find(&sub).unwrap().expect("found");
        assert_eq!(manifest.path, Path::new("../../pyproject.toml"));
        assert_eq!(
            manifest.cases[0].snapshots[0].golden,
            Path::new("../../goldens/m.code")
        );
    }

    #[test]
    fn mistakes_are_reported_with_their_place() {
        let path = write(
            "typo",
            "fxvm.toml",
            "[[case]]\nfile = \"m.py\"\nformat = [\"code\"]\n",
        );
        let err = read(&path).err().unwrap().to_string();
        assert!(
            err.contains("fxvm.toml:3:1: unknown field `format`"),
            "{err}"
        );
        let path = write(
            "dup",
            "fxvm.toml",
            "[[case]]\nfile = \"a/m.py\"\n[[case]]\nfile = \"b/m.py\"\n",
        );
        let err = read(&path).err().unwrap().to_string();
        assert!(err.contains("two cases are named 'm'"), "{err}");
        let path = write(
            "form",
            "fxvm.toml",
            "formats = [\"pdf\"]\n[[case]]\nfile = \"m.py\"\n",
        );
        let err = read(&path).err().unwrap().to_string();
        assert!(
            err.contains("unknown format 'pdf' (choose from graph, code"),
            "{err}"
        );
        let path = write("empty", "fxvm.toml", "snapshots = \"s\"\n");
        let err = read(&path).err().unwrap().to_string();
        assert!(err.contains("lists no cases"), "{err}");
    }
}
