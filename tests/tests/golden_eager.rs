//! Eager `torch` and `torch.nn` scripts whose output must equal real PyTorch's, byte for
//! byte (goldens made by `fixtures/regen.sh`); a mismatch shows a unified diff.

use fxvm_tests::{fixtures, run, unified_diff};

fn check(name: &str) {
    check_in("eager", name);
}

fn check_in(dir: &str, name: &str) {
    let script = fixtures().join(dir).join(format!("{name}.py"));
    let golden = script.with_extension("out");
    let expected = std::fs::read_to_string(&golden).expect("golden file");
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{name} failed:\n{}", out.stderr);
    let diff = unified_diff(&expected, &out.stdout, &golden.display().to_string());
    assert!(diff.is_empty(), "{name} differs from PyTorch:\n{diff}");
}

#[test]
fn module_calls_and_attribute_lookups_behave_as_pytorch() {
    // `nn.Module.__call__` (skipping `_call_impl` when it would only call
    // forward) and `__getattr__` are native.
    check_in("nn", "module_call");
}

#[test]
fn tensor_repr_indexing_and_torch_function() {
    check("basics");
}

#[test]
fn memory_formats_give_pytorchs_strides() {
    check("memory_format");
}

#[test]
fn set_printoptions_changes_prints_as_in_pytorch() {
    check("printoptions");
}

#[test]
fn numerics_promotion_broadcasting_and_views() {
    check("numerics");
}

#[test]
fn bad_input_raises_pytorchs_exceptions() {
    check("errors");
}

#[test]
fn functional_kernels_match_pytorch() {
    check("nn_ops");
}

#[test]
fn torch_namespace_functions_take_atens_signature_not_functionals() {
    check("torch_namespace_norms");
}

#[test]
fn nn_modules_print_register_and_run_as_pytorch() {
    check_in("nn", "models");
}

#[test]
fn narrow_in_place_functionals_explicit_reduction_dtypes_and_shift_clamp_edges_match_pytorch() {
    check("dtype_edges");
}

#[test]
fn argument_combinations_no_overload_takes_are_refused_as_pytorch_refuses_them() {
    check("overload_combinations");
}

#[test]
fn bad_arguments_the_fuzz_found_accepted_are_refused_as_pytorch_refuses_them() {
    check("argument_checks");
}

#[test]
fn kernels_refuse_the_dtypes_pytorch_has_no_kernel_for_after_argument_checks() {
    check("kernel_dtypes");
}

#[test]
fn python_written_functionals_raise_attribute_error_on_a_non_tensor_as_pytorch() {
    check("python_functional_reads");
}

#[test]
fn tensor_to_takes_pytorchs_three_overloads() {
    // x.to(device='cpu', dtype=...) and x.to(torch.float64, True) raised TypeError.
    check("tensor_to");
}

#[test]
fn bicubic_interpolation_and_its_gradient_match_pytorch() {
    check("interpolate_bicubic");
}

#[test]
fn random_fills_of_empty_tensors_check_parameters_not_dtypes() {
    check("random_fill_empty");
}

#[test]
fn threshold_writes_into_expanded_tensors_as_pytorch_allows() {
    check("threshold_expanded");
}

#[test]
fn functional_norms_check_their_statistics_before_the_kernels_as_pytorch() {
    check("norm_python_checks");
}

#[test]
fn objects_too_large_for_the_machine_raise_memory_error_not_abort() {
    check("memory_errors");
}

#[test]
fn huge_sizes_empty_and_0_dim_tensors_answer_as_pytorch() {
    check("robustness");
}

#[test]
fn tensors_pickle_and_deepcopy_as_pytorch_and_load_pytorchs_pickles() {
    check_in("serialization", "pickle_tensors");
}

#[test]
fn load_from_state_dict_overrides_take_pytorchs_seven_parameters() {
    check_in("nn", "load_state_dict_override");
}

#[test]
fn torch_load_reads_pytorch_checkpoints_and_runs_nothing_else() {
    check_in("serialization", "load");
}

#[test]
fn gradients_hooks_modes_and_autograd_errors_match_pytorch() {
    check_in("autograd", "gradients");
}

#[test]
fn layer_gradients_custom_functions_and_a_training_loop_match_pytorch() {
    check_in("autograd", "layers");
}

#[test]
fn a_nanogpt_style_model_trains_with_adamw_as_pytorch() {
    check_in("autograd", "gpt_training");
}

#[test]
fn gradients_of_indexing_reductions_shape_and_elementwise_ops_match_pytorch() {
    check_in("autograd", "ops");
}

#[test]
fn attention_runs_and_differentiates_as_flash_attention_where_pytorch_does() {
    check_in("autograd", "attention");
}

#[test]
fn recurrent_layers_record_and_differentiate_as_pytorch_cpu_build_does() {
    check_in("autograd", "recurrent_layers");
}

#[test]
fn module_backward_hooks_gradcheck_functional_and_anomaly_detection_match_pytorch() {
    check_in("autograd", "surface");
}

#[test]
fn sgd_adam_and_adamw_update_as_pytorch_step_for_step() {
    check_in("autograd", "optimizers");
}

#[test]
fn every_optimizer_updates_as_pytorch_step_for_step() {
    // Option sets, groups, state, hooks, closures, LBFGS and the errors.
    check_in("optim", "optimizers");
}

#[test]
fn every_lr_scheduler_sets_pytorchs_rates() {
    check_in("optim", "schedulers");
}

#[test]
fn a_run_checkpointed_by_pytorch_resumes_as_in_pytorch() {
    check_in("optim", "resume");
}

#[test]
fn clipping_flat_vectors_and_functional_call_match_pytorch() {
    check_in("optim", "grad_utils");
}

#[test]
fn indices_pushed_past_the_last_dim_raise_index_error() {
    // A repeated `...` once sent later items past the last dim into a Rust
    // panic; PyTorch itself is erratic here, so no golden: a clear IndexError.
    for index in ["..., ..., torch.tensor([0])", "..., ..., 0:1"] {
        let code = format!("import torch\na = torch.ones(2, 3)\na[{index}]");
        let out = run(&["run", "-c", &code]);
        assert_eq!(out.status, Some(1), "{out:?}");
        assert!(
            out.stderr
                .trim_end()
                .ends_with("IndexError: too many indices for tensor of dimension 2"),
            "{index}: {}",
            out.stderr
        );
    }
}

#[test]
fn tolist_of_a_tensor_with_100k_dims_converts() {
    // PyTorch itself overflows its stack here (SIGSEGV), so no golden.
    let code = "import torch\nx = torch.zeros([1] * 100000).tolist()\nn = 0\nwhile isinstance(x, list):\n    x = x[0]\n    n += 1\nprint(n, x)\nprint(torch.zeros(3, 0).tolist(), torch.zeros(0, 3).tolist(), torch.tensor(2).tolist())";
    let out = run(&["run", "-c", code]);
    assert_eq!(out.status, Some(0), "{out:?}");
    assert_eq!(out.stdout, "100000 0.0\n[[], [], []] [] 2\n");
}

#[test]
fn the_modules_model_files_import_answer_as_eager_cpu_pytorch() {
    check("imports");
}

/// What a CPU-only PyTorch build answers (the reference wheel has CUDA
/// libraries, so these cannot come from its goldens).
#[test]
fn cpu_only_answers_and_what_fxvm_cannot_do_are_clear() {
    let script = r#"
import torch
for f in (torch.cuda.current_device, torch.cuda.synchronize, lambda: torch.cuda.set_device(0),
          lambda: torch.zeros(2, device="cuda"), lambda: torch.ones(2).to(torch.device("cuda:0"))):
    try:
        f()
    except AssertionError as e:
        print("AssertionError:", e)
print(torch.backends.cudnn.is_available(), torch.accelerator.current_accelerator(), torch.accelerator.is_available())
try:
    torch.jit.script(torch.nn.Linear(2, 2))
except NotImplementedError as e:
    print("NotImplementedError:", e)
import os
os.environ["TORCH_HOME"] = "/nonexistent-fxvm-home"
try:
    torch.hub.load_state_dict_from_url("https://example.com/w/resnet18-f37072fd.pth")
except RuntimeError as e:
    print("RuntimeError:", e)
"#;
    let out = run(&["run", "-c", script]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "AssertionError: Torch not compiled with CUDA enabled\n".repeat(5)
            + "False None False\n"
            + "NotImplementedError: torch.jit.script: fxvm does not compile TorchScript; run the model eagerly, or capture its graph with torch.fx.symbolic_trace(model)\n"
            + "RuntimeError: fxvm has no network access to download https://example.com/w/resnet18-f37072fd.pth: place the file at /nonexistent-fxvm-home/hub/checkpoints/resnet18-f37072fd.pth (the hub cache, $TORCH_HOME/hub/checkpoints) and run again\n"
    );
}

#[test]
fn safetensors_files_load_and_save_as_the_safetensors_package() {
    check_in("serialization", "safetensors_files");
}

#[test]
fn narrow_dtypes_load_from_pytorch_and_safetensors_files_and_round_trip() {
    check_in("serialization", "narrow_dtypes");
}

#[test]
fn safetensors_of_a_dtype_fxvm_lacks_say_which() {
    let file = fixtures().join("checkpoints/float8.safetensors");
    let code = format!(
        "from safetensors.torch import load_file\nload_file({:?})",
        file.to_str().unwrap()
    );
    let out = run(&["run", "-c", &code]);
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr.trim_end().ends_with(
            "safetensors.SafetensorError: Error while deserializing: fxvm cannot load tensors of type F8_E4M3 yet"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn optimizers_and_schedules_behave_as_torch_optim() {
    check("optim");
}

#[test]
fn seeded_random_streams_and_inits_match_pytorchs_generator() {
    check("random_streams");
}

#[test]
fn activation_layers_match_pytorch() {
    check_in("nn", "activations");
}

#[test]
fn padding_and_dropout_layers_match_pytorch() {
    check_in("nn", "padding_dropout");
}

#[test]
fn instance_and_3d_batch_norm_match_pytorch() {
    check_in("nn", "normalization");
}

/// The API coverage report: a change in which PyTorch names fxvm provides
/// shows here as a diff (bless with `fixtures/regen.sh`).
#[test]
fn api_coverage_report_is_current() {
    check_in("api", "coverage");
}

/// `inspect.signature` of every layer's `forward` (return annotations) and
/// of the functionals PyTorch writes in Python.
#[test]
fn layer_and_functional_signatures_match_pytorch() {
    check_in("nn", "signatures");
}

#[test]
fn shuffle_and_distance_layers_match_pytorch() {
    check_in("nn", "shuffle_distance");
}

#[test]
fn bce_smooth_l1_huber_and_kl_losses_match_pytorch() {
    check_in("nn", "losses");
}

#[test]
fn sort_topk_and_multinomial_pick_pytorchs_indices() {
    check("ordering");
}

#[test]
fn advanced_indexing_with_several_tensors_matches_pytorch() {
    check("indexing");
}

#[test]
fn conv3d_and_transposed_convolutions_match_pytorch() {
    check_in("nn", "convolution");
}

#[test]
fn recurrent_layers_cells_and_packed_sequences_match_pytorch() {
    check_in("nn", "recurrent");
}

#[test]
fn transformer_layers_and_stacks_match_pytorch() {
    check_in("nn", "transformer");
}

#[test]
fn pooling_in_three_dims_adaptive_max_lp_and_unpooling_match_pytorch() {
    check_in("nn", "pooling");
}

#[test]
fn fold_unfold_rms_and_local_response_norms_and_upsampling_match_pytorch() {
    check_in("nn", "fold_norm_upsample");
}

#[test]
fn margin_ranking_embedding_triplet_and_likelihood_losses_match_pytorch() {
    check_in("nn", "losses_margin");
}

#[test]
fn embedding_bags_sync_batch_norm_and_multi_class_margins_match_pytorch() {
    check_in("nn", "bags_and_margins");
}

#[test]
fn linalg_qr_and_orthogonal_init_match_pytorch() {
    check("qr_orthogonal");
}

#[test]
fn in_place_functional_activations_match_pytorch() {
    check_in("nn", "inplace_activations");
}

#[test]
fn diagonal_views_diag_and_trace_match_pytorch() {
    check("diagonals");
}

#[test]
fn nn_utils_package_and_parameter_vectors_match_pytorch() {
    check_in("nn", "utils_vectors");
}

#[test]
fn spatial_transformers_fractional_pooling_and_distances_match_pytorch() {
    check_in("nn", "spatial_transformers");
}

#[test]
fn ctc_adaptive_softmax_linear_cross_entropy_and_attention_match_pytorch() {
    check_in("nn", "ctc_adaptive_softmax");
}

#[test]
fn index_add_copy_fill_put_scatter_reduce_and_nonzero_match_pytorch() {
    check("index_family");
}

#[test]
fn narrow_dtypes_promote_compute_and_round_as_pytorch() {
    check("narrow_dtypes");
}

#[test]
fn remaining_pointwise_functions_and_aliases_match_pytorch() {
    check("pointwise_more");
}

#[test]
fn scans_splits_stacks_and_combinatorics_match_pytorch() {
    check("scans_and_joins");
}

#[test]
fn unique_counting_searching_and_blas_products_match_pytorch() {
    check("counting_and_products");
}

#[test]
fn linalg_inverse_solve_decompositions_and_norms_match_pytorch() {
    check("linalg_basics");
}

#[test]
fn rng_state_round_trips_in_pytorchs_layout() {
    check("rng_state");
}

#[test]
fn weight_norm_spectral_norm_and_parametrizations_match_pytorch() {
    check_in("nn", "weight_norm");
}

#[test]
fn tensor_helpers_closeness_windows_and_splits_match_pytorch() {
    check("tensor_helpers");
}

#[test]
fn torch_library_operators_kernels_and_their_graphs_match_pytorch() {
    check("torch_library");
}

#[test]
fn what_model_libraries_use_besides_layers_matches_pytorch() {
    check("library_support");
}

#[test]
fn symbolic_ints_floats_and_bools_compute_and_print_as_pytorch() {
    check("sym_types");
}

#[test]
fn div_takes_a_rounding_mode() {
    check("div_rounding");
}

#[test]
fn numpy_prints_as_numpy() {
    check_in("numpy", "printing");
}

#[test]
fn numpy_ufuncs_promote_and_compute_as_numpy() {
    check_in("numpy", "ufuncs");
}

#[test]
fn numpy_astype_from_floats_to_integers_gives_numpys_values_out_of_range() {
    check_in("numpy", "float_to_int");
}

#[test]
fn tensor_data_past_int64_or_a_float_range_is_taken_or_refused_as_pytorch() {
    check("tensor_data_ranges");
}

#[test]
fn float_to_integer_conversions_give_pytorchs_values_out_of_range() {
    check("float_to_int");
}

#[test]
fn numpy_arrays_index_reshape_join_sort_and_reduce_as_numpy() {
    check_in("numpy", "arrays");
}

#[test]
fn numpy_random_gives_numpys_streams() {
    check_in("numpy", "random_streams");
}

#[test]
fn numpy_default_rng_gives_numpys_pcg64_streams() {
    check_in("numpy", "generator_streams");
}

#[test]
fn numpy_and_torch_share_memory_both_ways() {
    check_in("numpy", "interop");
}

#[test]
fn numpy_reads_and_writes_numpys_files() {
    check_in("numpy", "files");
}

#[test]
fn numpy_top_level_helpers_match_numpy() {
    check_in("numpy", "functions");
}

#[test]
fn a_training_loop_with_numpy_data_matches_pytorch_step_for_step() {
    // Also pins the DataLoader's random draws (a base seed per iteration,
    // samplers with their own generator, replacement draws 32 at a time).
    check_in("numpy", "training_loop");
}

#[test]
fn numpy_testing_asserts_fail_with_numpys_messages() {
    check_in("numpy", "testing_asserts");
}

#[test]
fn grad_scaler_scales_skips_and_adapts_as_pytorchs() {
    // nanoGPT builds torch.cuda.amp.GradScaler(enabled=...) on its first lines.
    check_in("optim", "grad_scaler");
}

#[test]
fn numpy_bad_input_raises_numpys_errors() {
    check_in("numpy", "errors");
}

#[test]
fn every_pytorch_dtype_has_a_name_and_the_default_float_dtype_is_settable() {
    // complex/float8/wide unsigned dtypes exist as objects (transformers names
    // float8 at class level); torch.set_default_dtype changes float defaults.
    check("dtypes_named");
}

#[test]
fn legacy_tensor_types_construct_and_check_as_pytorchs() {
    check("legacy_tensor_types");
}

#[test]
fn storages_report_pytorchs_sizes_and_addresses() {
    check("storages");
}

#[test]
fn pytree_registry_flattens_registered_nodes_and_key_paths() {
    check("pytree");
}

#[test]
fn standard_library_views_and_audit_hooks_behave_as_cpython() {
    check("stdlib_behaviour");
}

#[test]
fn module_to_set_submodule_extra_state_and_state_dict_hooks_match_pytorch() {
    check_in("nn", "module_surface");
}

#[test]
fn safetensors_save_model_and_load_model_handle_tied_weights() {
    check_in("serialization", "safetensors_model");
}

/// Devices and TLS fxvm does not have: the errors a CPU-only PyTorch gives,
/// or fxvm's own naming what is missing.
#[test]
fn other_devices_and_tls_are_refused_clearly() {
    let script = r#"
import torch, ssl
m = torch.nn.Linear(2, 2)
for f in (m.cuda, lambda: m.to("cuda"), lambda: torch.nn.ReLU().cuda(), lambda: torch.cuda.FloatTensor(2),
          lambda: torch.zeros(2, device="meta"), lambda: torch.ones(1).to("mps"), lambda: torch.ones(1).to("xpu"),
          lambda: torch.set_default_device("cuda"), lambda: torch.zeros(1, dtype=torch.complex64),
          ssl.create_default_context):
    try:
        print("returned", f())
    except BaseException as e:
        print(type(e).__name__ + ":", e)
"#;
    let out = run(&["run", "-c", script]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "AssertionError: Torch not compiled with CUDA enabled\n".repeat(2)
            + "returned ReLU()\n"
            + "TypeError: type torch.cuda.FloatTensor not available. Torch not compiled with CUDA enabled.\n"
            + "returned tensor([0., 0.])\n"
            + "RuntimeError: PyTorch is not linked with support for mps devices\n"
            + "AssertionError: Torch not compiled with XPU enabled\n"
            + "AssertionError: Torch not compiled with CUDA enabled\n"
            + "NotImplementedError: fxvm has no torch.complex64 tensors: its tensors are bool, uint8, int8/16/32/64, float16, bfloat16, float32 and float64\n"
            + "SSLError: fxvm has no TLS: https and other SSL connections are not available (download files beforehand and load them from disk)\n"
    );
}

#[test]
fn regex_answers_as_the_regex_package() {
    // Tokenizer pre-tokenisation patterns (GPT-2, Llama 3, CLIP), Unicode
    // classes, Python's empty-match stepping, pos/endpos, templates, errors.
    check_in("regex", "corpus");
}

#[test]
fn flex_attention_and_block_masks_match_pytorch() {
    check_in("nn", "flex_attention");
}

#[test]
fn torch_function_modes_see_functions_methods_operators_and_subscripts() {
    check("torch_function_mode");
}

#[test]
fn distribution_constraints_check_as_pytorchs() {
    check("distribution_constraints");
}

#[test]
fn attention_rows_with_every_key_masked_give_zeros() {
    check("sdpa_masked_rows");
}

#[test]
fn tokenizers_build_train_encode_and_round_trip_as_the_package() {
    check_in("tokenizers", "basics");
}

#[test]
fn tokenizer_encodings_map_pad_truncate_and_merge_as_the_package() {
    check_in("tokenizers", "encoding");
}

#[test]
fn scopes_in_finally_bodies_left_by_return_or_break_compile_as_in_cpython() {
    check_in("python", "compiler_finally");
}

#[test]
fn code_compiled_from_an_ast_tree_keeps_the_trees_line_numbers() {
    check_in("python", "compile_ast");
}

#[test]
fn in_place_view_ops_restride_the_tensor_itself_as_pytorch() {
    check("in_place_views");
}

#[test]
fn ordered_dict_behaves_as_cpythons_over_the_native_dict() {
    check_in("python", "ordered_dict");
}

#[test]
fn torch_testing_assert_close_and_make_tensor_match_pytorch() {
    check("testing_assert_close");
}

#[test]
fn linspace_and_tanh_equal_pytorchs_to_the_last_bit() {
    check("last_bit");
}
