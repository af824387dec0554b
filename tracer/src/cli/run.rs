//! `fxvm run`: execute a script as `__main__`, with python's exit behaviour.

use std::path::Path;

use clap::Args;
use fxvm_vm::script::{self, Main};

use super::ExitStatus;

/// Run a Python script (or `-c CODE`, or `-m MODULE`) in the fxvm interpreter.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  fxvm run model.py --epochs 3\n  fxvm run -c \"import torch; print(torch.__version__)\"\n  fxvm run -m pytest -q tests/\n  fxvm run --profile train.py"
)]
pub(crate) struct RunArgs {
    /// Program passed in as a string, as `python -c`.
    #[arg(short = 'c', value_name = "CODE", conflicts_with = "module")]
    code: Option<String>,
    /// Run a library module as a script, as `python -m` (`sys.argv[0]` is the module's file).
    #[arg(short = 'm', value_name = "MODULE")]
    module: Option<String>,
    /// Time each op of the graphs and training steps torch.compile / fxvm.global_function replay, and print the table on stderr at exit.
    #[arg(long)]
    profile: bool,
    /// Also import pure-Python packages from DIR (repeatable; PYTHONPATH and an active virtualenv are used too).
    #[arg(long = "site-packages", value_name = "DIR")]
    site_packages: Vec<std::path::PathBuf>,
    /// The script to run, then the arguments it sees in `sys.argv[1:]`.
    #[arg(
        value_name = "FILE.py [ARGS]",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    argv: Vec<String>,
}

pub(crate) fn run(args: RunArgs) -> anyhow::Result<ExitStatus> {
    // As python, the flag stands in argv[0] until the program replaces it.
    let flagged = |flag: &str| {
        std::iter::once(flag.to_owned())
            .chain(args.argv.iter().cloned())
            .collect()
    };
    let (main, argv) = match (&args.code, &args.module) {
        (Some(code), _) => (Main::Code(code), flagged("-c")),
        (None, Some(module)) => (Main::Module(module), flagged("-m")),
        (None, None) => {
            let Some(file) = args.argv.first() else {
                anyhow::bail!("`fxvm run` needs a script, -c CODE or -m MODULE");
            };
            check_script(Path::new(file))?;
            (Main::File(Path::new(file)), args.argv.clone())
        }
    };

    let interp = crate::interpreter(&fxvm_vm::Config {
        argv,
        path: super::package_path(&args.site_packages),
        write_bytecode: true,
        ..Default::default()
    });
    let profile = args.profile;
    let status = interp.enter(|vm| {
        if profile {
            let start = vm
                .import("fxvm._compile", 0)
                .and_then(|m| m.get_attr("_compile", vm))
                .and_then(|m| m.get_attr("_profile_at_exit", vm))
                .and_then(|f| f.call((), vm));
            if let Err(e) = start {
                vm.print_exception(e);
            }
        }
        let result = script::run_main(vm, main);
        script::finish(vm, result)
    });
    // Skip heap teardown: exiting is all that is left, and the OS is faster.
    std::mem::forget(interp);
    // The OS keeps the low byte of a status, as it does for python.
    Ok(ExitStatus::Script((status & 0xff) as u8))
}

/// A script must be a readable file; python's messages for the usual mistakes.
fn check_script(path: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            anyhow::bail!("can't open file '{}': is a directory", path.display())
        }
        Ok(_) => Ok(()),
        Err(e) => anyhow::bail!(
            "can't open file '{}': {}",
            path.display(),
            super::io_reason(&e)
        ),
    }
}
