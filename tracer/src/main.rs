fn main() -> std::process::ExitCode {
    fxvm_tracer::cli::main()
}
