//! `fxvm check`: snapshot testing of traced models. Each case renders a
//! script's model in one or more forms and compares them with goldens;
//! what differs waits as a pending snapshot (`*.new`) for `--review`.

mod case;
mod junit;
mod manifest;
mod review;
mod runner;
mod verdict;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use super::trace::{Format, TargetArgs, check_script, write_file};
use super::{ExitStatus, out, outln};
use case::{Case, Snapshot};
use verdict::{CaseResult, Mode, Verdict};

/// Check traced models against golden files (snapshot testing).
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct CheckArgs {
    /// A script (with --expect), a manifest (fxvm.toml, or pyproject.toml with [tool.fxvm]) or a
    /// folder holding one, or a folder of scripts with goldens beside them. By default, the
    /// manifest found from the current folder up.
    #[arg(value_name = "PATH")]
    path: Option<PathBuf>,
    #[command(flatten)]
    target: TargetArgs,
    /// The golden file to compare with (for a single script).
    #[arg(long, value_name = "GOLDEN")]
    expect: Option<PathBuf>,
    /// The form to compare (for a single script).
    #[arg(long, value_enum, default_value = "code")]
    format: Format,
    /// Write what is rendered as the goldens instead of comparing.
    #[arg(long, conflicts_with_all = ["ci", "review", "accept"])]
    bless: bool,
    /// Never write (no pending snapshots); a missing golden fails.
    #[arg(long)]
    ci: bool,
    /// Walk the pending snapshots: show each diff, then accept, reject or skip it.
    #[arg(long, conflicts_with_all = ["accept", "ci", "junit"])]
    review: bool,
    /// Take every pending snapshot as the golden.
    #[arg(long, conflicts_with_all = ["ci", "junit"])]
    accept: bool,
    /// Run only the K-th of N equal shares of the cases (for a CI job matrix).
    #[arg(long, value_name = "K/N", value_parser = case::parse_partition)]
    partition: Option<(usize, usize)>,
    /// Write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Cases to run at once (one per core by default).
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,
    /// Relative tolerance of numeric snapshots (with --atol; torch.testing's per-dtype default otherwise).
    #[arg(long, value_name = "RTOL")]
    rtol: Option<f64>,
    /// Absolute tolerance of numeric snapshots.
    #[arg(long, value_name = "ATOL")]
    atol: Option<f64>,
}

const AFTER_HELP: &str = "\
A folder checks every *.py with goldens beside it, named <stem>.<format>
(model.py → model.code, model.graph, …, model.outputs.safetensors).
A manifest lists cases, each a script with what to trace and its forms; goldens live in
its `snapshots` folder as <name>.<format>. A mismatch in a form that shows the graph
(graph, dot, svg, html) also lists the nodes added, removed and changed; the outputs form
(the model run on seeded --example inputs) is compared as torch.testing.assert_close does.

A mismatch or a missing golden writes the rendered form beside the golden as <golden>.new;
`fxvm check --review` walks those, `--accept` takes them all.

Examples:
  fxvm check model.py --expect model.code
  fxvm check model.py --expect model.graph --format graph --bless
  fxvm check fixtures/models/
  fxvm check                                  # the cases of ./fxvm.toml or ./pyproject.toml
  fxvm check --review
  fxvm check --ci --partition 2/4 --junit report.xml";

/// The cases a command line names, and the packages their scripts import.
struct Plan {
    cases: Vec<Case>,
    site_packages: Vec<PathBuf>,
    /// A single script compared with one golden: reported in one line.
    single: bool,
}

pub(crate) fn run(args: CheckArgs) -> anyhow::Result<ExitStatus> {
    let mut plan = plan(&args)?;
    if let Some((k, n)) = args.partition {
        plan.cases = case::partition(plan.cases, k, n);
    }
    if args.review {
        return review::review(&plan.cases, &plan.site_packages);
    }
    if args.accept {
        return review::accept_all(&plan.cases);
    }
    let mode = if args.bless {
        Mode::Bless
    } else if args.ci {
        Mode::Ci
    } else {
        Mode::Local
    };
    let jobs = args.jobs.unwrap_or_else(runner::default_jobs);
    run_plan(&plan, mode, jobs, &args)
}

fn plan(args: &CheckArgs) -> anyhow::Result<Plan> {
    let path = args.path.clone();
    let manifest = match &path {
        Some(path) if path.extension().is_some_and(|e| e == "toml") => Some(manifest::read(path)?),
        // A project folder: its manifest; a folder of scripts: their goldens.
        Some(path) if path.is_dir() => manifest::in_folder(path, path)?,
        Some(_) => None,
        None => {
            let here = std::env::current_dir()?;
            Some(manifest::find(&here)?.ok_or_else(|| {
                anyhow::anyhow!(
                    "no cases to check: no fxvm.toml (or pyproject.toml with [tool.fxvm]) in this folder or above; give a script with --expect, or a folder"
                )
            })?)
        }
    };
    if let Some(manifest) = manifest {
        let t = &args.target;
        if t.module.is_some()
            || t.function.is_some()
            || !t.concrete.is_empty()
            || !t.example.is_empty()
            || !t.dynamic.is_empty()
            || args.expect.is_some()
            || args.rtol.is_some()
            || args.atol.is_some()
        {
            anyhow::bail!(
                "{} gives each case its own --module, --function, --concrete, --example, --dynamic, tolerances and goldens",
                manifest.path.display()
            );
        }
        let mut site_packages = manifest.site_packages;
        site_packages.extend(t.site_packages.iter().cloned());
        return Ok(Plan {
            cases: manifest.cases,
            site_packages,
            single: false,
        });
    }
    let path = path.expect("a path when there is no manifest");
    let site_packages = args.target.site_packages.clone();
    let tolerances = |mut case: Case| {
        case.rtol = args.rtol;
        case.atol = args.atol;
        case
    };
    if path.is_dir() {
        let cases = goldens_in(&path, &args.target).map_err(|e| {
            anyhow::anyhow!(
                "can't read directory '{}': {}",
                path.display(),
                super::io_reason(&e)
            )
        })?;
        if cases.is_empty() {
            anyhow::bail!(
                "no goldens in {}: expected <stem>.<format> files beside the scripts",
                path.display()
            );
        }
        return Ok(Plan {
            cases: cases.into_iter().map(tolerances).collect(),
            site_packages,
            single: false,
        });
    }
    check_script(&path)?;
    let Some(golden) = &args.expect else {
        anyhow::bail!(
            "`fxvm check FILE.py` needs --expect GOLDEN (or give a directory or a manifest)"
        );
    };
    let case = Case {
        label: path.display().to_string(),
        target: args.target.target(path),
        snapshots: vec![Snapshot {
            format: args.format,
            golden: golden.clone(),
        }],
        rtol: None,
        atol: None,
    };
    Ok(Plan {
        cases: vec![tolerances(case)],
        site_packages,
        single: true,
    })
}

/// Every `*.py` in `dir` with the goldens beside it, one case per script.
fn goldens_in(dir: &Path, target: &TargetArgs) -> std::io::Result<Vec<Case>> {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    scripts.sort();
    Ok(scripts
        .into_iter()
        .filter_map(|script| {
            let snapshots: Vec<Snapshot> = Format::ALL
                .into_iter()
                .map(|format| Snapshot {
                    format,
                    golden: script.with_extension(format.extension()),
                })
                .filter(|s| s.golden.is_file())
                .collect();
            (!snapshots.is_empty()).then(|| Case {
                label: script.display().to_string(),
                target: target.target(script),
                snapshots,
                rtol: None,
                atol: None,
            })
        })
        .collect())
}

fn run_plan(plan: &Plan, mode: Mode, jobs: usize, args: &CheckArgs) -> anyhow::Result<ExitStatus> {
    let started = Instant::now();
    let color = std::io::stdout().is_terminal();
    let bar = progress_bar(plan.cases.len());
    let (mut passed, mut failed, mut pending) = (0, 0, 0);
    let mut results: Vec<CaseResult> = Vec::with_capacity(plan.cases.len());
    runner::run_cases(
        &plan.cases,
        mode,
        &plan.site_packages,
        jobs,
        |case, result| {
            bar.suspend(|| {
                if !result.log.is_empty() {
                    eprint!("{}", result.log);
                }
                for (snapshot, verdict) in case.snapshots.iter().zip(&result.verdicts) {
                    if verdict.passed() {
                        passed += 1;
                    } else {
                        failed += 1;
                    }
                    if matches!(
                        verdict,
                        Verdict::Differs {
                            pending: Some(_),
                            ..
                        } | Verdict::Missing { pending: Some(_) }
                    ) {
                        pending += 1;
                    }
                    report(case, snapshot, verdict, color, plan.single);
                }
            });
            bar.inc(1);
            results.push(result);
        },
    );
    bar.finish_and_clear();
    if !plan.single {
        outln!("{passed} passed, {failed} failed");
    }
    if pending > 0 {
        eprintln!(
            "fxvm: {pending} pending snapshot{} (*.new): review with `fxvm check --review`, or take all with `fxvm check --accept`",
            if pending == 1 { "" } else { "s" }
        );
    }
    // After the summary: a report that cannot be written loses nothing else.
    if let Some(path) = &args.junit {
        let suite = match args.partition {
            Some((k, n)) => format!("fxvm check (partition {k}/{n})"),
            None => "fxvm check".to_owned(),
        };
        let pairs: Vec<(&Case, &CaseResult)> = plan.cases.iter().zip(&results).collect();
        write_file(
            path,
            junit::report(&suite, &pairs, started.elapsed()).as_bytes(),
        )?;
    }
    Ok(if failed > 0 {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

/// What a snapshot's verdict prints: nothing for a pass (one line for a
/// single script), the difference and a `FAILED:` line otherwise.
fn report(case: &Case, snapshot: &Snapshot, verdict: &Verdict, color: bool, single: bool) {
    let golden = snapshot.golden.display();
    let failed = |why: &str| {
        outln!("FAILED: {} ({}){why}", case.label, snapshot.format.name());
    };
    match verdict {
        Verdict::Passed if single => outln!("ok: {} matches {golden}", case.label),
        Verdict::Passed => {}
        Verdict::Blessed => outln!("blessed: wrote {golden}"),
        Verdict::Differs {
            difference,
            pending,
        } => {
            out(format_args!(
                "{}",
                difference.report(&snapshot.golden, color)
            ));
            failed(
                &pending
                    .as_ref()
                    .map(|p| format!(": wrote {p}"))
                    .unwrap_or_default(),
            );
        }
        Verdict::Missing { pending } => failed(&match pending {
            Some(p) => format!(": no golden {golden}; wrote {p}"),
            None => format!(": no golden {golden}"),
        }),
        Verdict::Error { reason } => failed(&format!(": {reason}")),
    }
}

/// A bar on standard error when it is a terminal; hidden otherwise.
fn progress_bar(cases: usize) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(cases as u64);
    let style = indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} cases {elapsed}")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}
