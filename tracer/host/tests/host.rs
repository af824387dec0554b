//! The embedding API as a Rust program uses it.

use std::time::{Duration, Instant};

use fxvm::tensor::{DType, Tensor};
use fxvm::{Arg, ErrorKind, Host, Node, Opcode, Target, Value};

#[path = "../examples/embed.rs"]
#[allow(dead_code)]
mod embed;

#[test]
fn the_example_runs_a_model_script_and_walks_its_graph() {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/cli/gpt_block.py");
    let out = embed::run(&script, "Block()").expect("the example runs");
    assert!(out.starts_with("output [2, 8, 16], first values"), "{out}");
    assert!(out.contains("x            placeholder    x"), "{out}");
    assert!(
        out.contains("attn_qkv     call_module    attn.qkv"),
        "{out}"
    );
    // The sequence length is symbolic in every shape that depends on it.
    let shape = out
        .lines()
        .find(|l| l.trim_start().starts_with("softmax"))
        .expect("softmax node");
    assert!(
        shape.contains("torch.nn.functional.softmax") && shape.contains("f32[2, 2, s"),
        "{shape}"
    );
}

#[test]
fn scripts_raise_errors_with_their_traceback() {
    let host = Host::new().unwrap();
    host.run_str("x = 1\nraise ValueError('bad ' + str(x))")
        .map(|_| ())
        .unwrap_err();
    let e = host
        .run_str("x = 1\nraise ValueError('bad ' + str(x))")
        .unwrap_err();
    assert_eq!(e.exception_type(), Some("ValueError"));
    let class = e.exception_class().unwrap();
    assert_eq!(
        class.mro,
        ["ValueError", "Exception", "BaseException", "object"]
    );
    assert_eq!(e.message, "bad 1");
    assert_eq!(e.to_string(), "ValueError: bad 1");
    assert!(
        e.traceback.contains("File \"<string>\", line 2"),
        "{}",
        e.traceback
    );
    assert!(
        e.traceback.contains("raise ValueError('bad ' + str(x))"),
        "{}",
        e.traceback
    );
    let module = host
        .import_source(
            "broken",
            "import torch\n\ndef f(x):\n    return x.view(5)\n",
        )
        .unwrap();
    let t = Tensor::zeros(&[2, 3], DType::F32);
    let e = module.call("f", &[Value::Tensor(t)]).unwrap_err();
    assert_eq!(e.exception_type(), Some("RuntimeError"));
    assert!(
        e.traceback.contains("File \"broken.py\", line 4, in f"),
        "{}",
        e.traceback
    );
    // The host stays usable.
    host.run_str("y = 2").unwrap();
}

#[test]
fn tensors_cross_without_copies_both_ways() {
    let host = Host::new().unwrap();
    let m = host
        .import_source(
            "shared",
            "import torch\nkept = None\ndef bump(x):\n    x.add_(1)\n    return x\ndef keep(x):\n    global kept\n    kept = x\ndef total():\n    return float(kept.sum())\n",
        )
        .unwrap();
    // Python writes, Rust reads.
    let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]);
    let back = m.call("bump", &[Value::Tensor(t.clone())]).unwrap();
    assert_eq!(t.to_vec::<f32>(), [2.0, 3.0, 4.0]);
    assert_eq!(back.as_tensor().unwrap().to_vec::<f32>(), [2.0, 3.0, 4.0]);
    // Rust writes, Python reads.
    m.call("keep", &[Value::Tensor(t.clone())]).unwrap();
    t.fill(fxvm::tensor::Scalar::Float(10.0));
    match m.call("total", &[]).unwrap() {
        Value::Float(x) => assert_eq!(x, 30.0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn values_convert_and_oversized_ints_are_errors() {
    let host = Host::new().unwrap();
    let m = host
        .import_source("vals", "def echo(*a):\n    return a\ndef big():\n    return 2 ** 70\nclass C: pass\ndef obj():\n    return C()\n")
        .unwrap();
    let args = [
        Value::None,
        Value::Bool(true),
        Value::Int(-3),
        Value::Float(0.5),
        Value::Str("s".into()),
        Value::List(vec![Value::Int(1)]),
    ];
    match m.call("echo", &args).unwrap() {
        Value::Tuple(items) => {
            assert_eq!(format!("{items:?}"), format!("{:?}", args.to_vec()));
        }
        other => panic!("{other:?}"),
    }
    let e = m.call("big", &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conversion);
    assert!(e.message.contains("1180591620717411303424"), "{e}");
    let Value::Object(handle) = m.call("obj", &[]).unwrap() else {
        panic!("an object")
    };
    let obj = host.object(&handle);
    assert!(format!("{obj:?}").contains("C object"));
}

#[test]
fn rust_functions_are_callable_and_traced_as_leaves() {
    let host = Host::new().unwrap();
    host.register_function("scale", |args| match args {
        [Value::Tensor(t), Value::Float(k)] => {
            let data: Vec<f32> = t.to_vec::<f32>().iter().map(|v| v * *k as f32).collect();
            Ok(Value::Tensor(Tensor::from_vec(data, t.shape())))
        }
        _ => Err(format!(
            "scale(tensor, float), not {} arguments",
            args.len()
        )),
    })
    .unwrap();
    let m = host
        .import_source(
            "uses",
            "import torch\nfrom fxvm_host import scale\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(scale(x, 2.0)) + 1\n",
        )
        .unwrap();
    let model = m.eval_expr("M()").unwrap();
    let x = Tensor::from_vec(vec![-1.0f32, 2.0], &[2]);
    let y = model.call_self(&[Value::Tensor(x)]).unwrap();
    assert_eq!(y.as_tensor().unwrap().to_vec::<f32>(), [1.0, 5.0]);
    let graph = model.trace().unwrap();
    let node = graph.node("scale").expect("a scale node");
    assert_eq!(node.op, Opcode::CallFunction);
    assert_eq!(node.target, Target::Callable("fxvm_host.scale".into()));
    assert_eq!(node.target_name, "fxvm_host.scale");
    assert_eq!(node.args, [Arg::Node("x".into()), Arg::Float(2.0)]);
    assert_eq!(node.users, ["relu"]);
    assert!(
        graph.code.contains("scale = fxvm_host_scale(x, 2.0)"),
        "{}",
        graph.code
    );
    let e = m.call("scale", &[Value::Int(1)]).unwrap_err();
    assert_eq!(e.exception_type(), Some("RuntimeError"));
    assert_eq!(e.message, "scale(tensor, float), not 1 arguments");
}

#[test]
fn graphs_name_registry_ops_modules_and_arguments_by_type() {
    let host = Host::new().unwrap();
    let m = host
        .import_source(
            "typed",
            "import torch\nimport torch.nn.functional as F\n\nclass M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = torch.nn.Linear(4, 4)\n        self.w = torch.nn.Parameter(torch.ones(4))\n\n    def forward(self, x):\n        y = torch.relu(self.lin(x)).view(-1, 2) * 3\n        z = F.softmax(y, dim=-1).float()\n        return {'z': z + self.w.sum(), 'n': y.size(0), 't': (y, [None, True, 'a'])}\n",
        )
        .unwrap();
    let graph = m.eval_expr("M()").unwrap().trace().unwrap();
    let by_name = |name: &str| {
        graph
            .node(name)
            .unwrap_or_else(|| panic!("{name} in\n{graph}"))
    };
    let registry_op = |node: &Node| match &node.target {
        Target::Op(id) => id.op().name(),
        other => panic!("{} is not a registry op: {other:?}", node.name),
    };
    assert_eq!(by_name("x").target, Target::Input("x".into()));
    assert_eq!(by_name("lin").target, Target::Module("lin".into()));
    assert_eq!(by_name("w").target, Target::Attr("w".into()));
    assert_eq!(registry_op(by_name("relu")), "relu");
    assert_eq!(by_name("relu").args, [Arg::Node("lin".into())]);
    let view = by_name("view");
    assert_eq!((view.op, registry_op(view)), (Opcode::CallMethod, "view"));
    assert_eq!(
        view.args,
        [Arg::Node("relu".into()), Arg::Int(-1), Arg::Int(2)]
    );
    assert_eq!(
        by_name("mul").target,
        Target::Callable("operator.mul".into())
    );
    let softmax = by_name("softmax");
    assert_eq!(registry_op(softmax), "softmax");
    assert_eq!(softmax.kwargs[0], ("dim".into(), Arg::Int(-1)));
    assert_eq!(registry_op(by_name("float_1")), "float");
    let Target::Op(relu) = by_name("relu").target else {
        unreachable!()
    };
    assert_eq!(graph.calls_of(relu).count(), 1);
    assert_eq!(graph.nodes_of(Opcode::CallModule).count(), 1);
    let output = graph.nodes_of(Opcode::Output).next().unwrap();
    assert_eq!(output.target, Target::Output);
    let Arg::Dict(out) = &output.args[0] else {
        panic!("{:?}", output.args)
    };
    assert_eq!(out[1], ("n".into(), Arg::Node("size".into())));
    assert_eq!(
        out[2].1,
        Arg::Tuple(vec![
            Arg::Node("mul".into()),
            Arg::List(vec![Arg::None, Arg::Bool(true), Arg::Str("a".into())])
        ])
    );
}

#[test]
fn runaway_scripts_stop_at_the_time_limit_even_when_they_catch_everything() {
    let host = Host::builder()
        .time_limit(Duration::from_millis(200))
        .build()
        .unwrap();
    for script in [
        "while True:\n    pass\n",
        "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass\n",
        "def spin():\n    try:\n        while True:\n            pass\n    except:\n        spin()\nspin()\n",
        // The trace hook the budget turns on, taken away beforehand.
        "import sys\nsys.settrace = lambda f: None\nwhile True:\n    pass\n",
        "import sys\nsys.settrace = None\ndef spin():\n    while True:\n        pass\nspin()\n",
        // A loop under importlib's name (importlib's own code may finish).
        "exec(compile('while True:\\n    pass\\n', '_frozen_importlib', 'exec'))\n",
        "import _frozen_importlib as b\nexec(compile('while True:\\n    pass\\n', '_frozen_importlib', 'exec'), vars(b))\n",
        // Blocked in native calls, not running instructions.
        "import time\ntime.sleep(3600)\n",
        "import time\nwhile True:\n    try:\n        time.sleep(3600)\n    except BaseException:\n        pass\n",
    ] {
        let start = Instant::now();
        let e = host.run_str(script).unwrap_err();
        assert_eq!(e.kind, ErrorKind::TimeLimit, "{script}: {e}");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{script}: {:?}",
            start.elapsed()
        );
    }
    // A script's own exception of the same name is the script's error.
    let e = host
        .run_str("class TimeLimitExceeded(Exception):\n    pass\nraise TimeLimitExceeded('mine')\n")
        .unwrap_err();
    assert_eq!(e.exception_type(), Some("TimeLimitExceeded"), "{e}");
    // The next call runs normally, with a fresh budget.
    host.run_str("total = sum(range(1000))").unwrap();
}

#[test]
fn recursion_is_limited() {
    let host = Host::builder().recursion_limit(200).build().unwrap();
    let e = host
        .run_str("def f(n):\n    return f(n + 1)\nf(0)")
        .unwrap_err();
    assert_eq!(e.exception_type(), Some("RecursionError"), "{e}");
    host.run_str("def g(n):\n    return 0 if n == 0 else g(n - 1)\ng(100)")
        .unwrap();
}

#[test]
fn many_hosts_run_on_many_threads() {
    let workers: Vec<_> = (0..4)
        .map(|i| {
            std::thread::spawn(move || {
                let host = Host::builder()
                    .time_limit(Duration::from_secs(30))
                    .build()
                    .unwrap();
                let m = host
                    .import_source(
                        "w",
                        "import torch\ndef f(n):\n    return int(torch.arange(n).sum())\n",
                    )
                    .unwrap();
                match m.call("f", &[Value::Int(10 + i)]).unwrap() {
                    Value::Int(v) => v,
                    other => panic!("{other:?}"),
                }
            })
        })
        .collect();
    let sums: Vec<i64> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    assert_eq!(sums, [45, 55, 66, 78]);
}

#[test]
fn deep_recursion_on_a_small_stack_raises_instead_of_crashing() {
    // Python frames run on the calling thread's stack: the host sizes the
    // recursion limit to the stack left, so a 1 MiB thread gets a
    // RecursionError, not a segfault.
    let worker = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let host = Host::new().unwrap();
            let e = host.run_str("import sys\nsys.setrecursionlimit(100000)\ndef f(n):\n    return f(n + 1)\nf(0)").unwrap_err();
            let spin = host
                .run_str("def spin(n):\n    try:\n        spin(n + 1)\n    except RecursionError:\n        if n < 5:\n            spin(n + 1)\n        raise\nspin(0)")
                .unwrap_err();
            (e.exception_type().map(str::to_owned), spin.exception_type().map(str::to_owned))
        })
        .unwrap();
    let (plain, spin) = worker.join().expect("no crash");
    assert_eq!(plain.as_deref(), Some("RecursionError"));
    assert_eq!(spin.as_deref(), Some("RecursionError"));
}

#[test]
fn files_run_and_modules_import_from_the_host_path() {
    let dir = std::env::temp_dir().join(format!("fxvm-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("helper.py"),
        "SCALE = 3\ndef triple(x):\n    return x * SCALE\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("main.py"),
        "import helper\nassert helper.triple(2) == 6\nraise KeyError('done')\n",
    )
    .unwrap();
    let host = Host::builder()
        .import_path(dir.to_string_lossy())
        .build()
        .unwrap();
    let helper = host.import("helper").unwrap();
    assert!(matches!(helper.get("SCALE").unwrap(), Value::Int(3)));
    assert!(matches!(
        helper.call("triple", &[Value::Int(5)]).unwrap(),
        Value::Int(15)
    ));
    let script = dir.join("main.py");
    let e = host.run_file(&script).unwrap_err();
    assert_eq!(e.exception_type(), Some("KeyError"));
    assert!(e.exception_class().unwrap().is_a("LookupError"), "{e:?}");
    assert!(!e.exception_class().unwrap().is_a("ValueError"), "{e:?}");
    let at = format!("File \"{}\", line 3, in <module>", script.display());
    assert!(e.traceback.contains(&at), "{}", e.traceback);
    let missing = host.run_file(dir.join("absent.py")).unwrap_err();
    assert_eq!(missing.kind, ErrorKind::Io);
    assert!(missing.message.starts_with("can't read '"), "{missing}");
    let e = host.import("no_such_module").unwrap_err();
    assert_eq!(e.exception_type(), Some("ModuleNotFoundError"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn what_scripts_print_is_flushed_when_the_host_is_dropped() {
    const NAME: &str = "what_scripts_print_is_flushed_when_the_host_is_dropped";
    if std::env::var_os("FXVM_FLUSH_CHILD").is_some() {
        let host = Host::new().unwrap();
        host.run_str("print('printed', 'before', end=' the drop')")
            .unwrap();
        return;
    }
    // In a child process whose stdout is a pipe (block-buffered in Python).
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env("FXVM_FLUSH_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("printed before the drop"), "{stdout}");
}
