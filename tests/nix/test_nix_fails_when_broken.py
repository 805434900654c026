"""The offline Nix checks can fail: each case breaks a copy of the tree the way a bad edit would and runs the test
that guards against it on that copy, expecting it to fail."""
import importlib.util, inspect, json, pathlib
import pytest

HERE = pathlib.Path(__file__).resolve().parent
SERIES = "patches/master"   # the series the overlay applies

def edit(path:pathlib.Path, old:str, new:str):
  text = path.read_text()
  assert old in text, (path, old)
  path.write_text(text.replace(old, new, 1))

def write_series(tree:pathlib.Path, names:list[str], present:list[str]):
  (tree/SERIES).mkdir(parents=True, exist_ok=True)
  (tree/SERIES/"series").write_text("".join(f"{n}\n" for n in names))
  for n in present: (tree/SERIES/n).write_text(f"From: fixture\nSubject: [PATCH] {n}\n\n---\n")

def users_option_mistyped(t): edit(t/"nixos/default.nix", "type = types.listOf types.str;", "type = types.str;")
def clock_option_renamed(t): edit(t/"nixos/default.nix", "clockControl = mkOption", "clockcontrol = mkOption")
def udev_rules_sort_before_l4t(t): edit(t/"nixos/default.nix", "/etc/udev/rules.d/99-tinygrad-orin.rules", "/etc/udev/rules.d/60-tinygrad-orin.rules")
def performance_option_does_nothing(t): edit(t/"nixos/default.nix", "profileNumber = maxProfile.${jetpack.som or \"\"} or null;", "")
def nano_super_takes_the_nanos_15w(t): edit(t/"nixos/default.nix", "if jetpack.super or false then 2 else 0", "0")
def only_the_agx_accepted(t): edit(t/"nixos/default.nix", "builtins.elem (jetpack.som or null) (builtins.attrNames maxProfile)", 'jetpack.som or null == "orin-agx"')
def service_binds_every_interface(t): edit(t/"nixos/default.nix", '"--host"\n              llm.listenAddress\n', "")
def service_closes_the_gpu_nodes(t): edit(t/"nixos/default.nix", "NoNewPrivileges = true;", "NoNewPrivileges = true; ProtectClock = true;")
def service_model_has_a_default(t): edit(t/"nixos/default.nix", "type = types.path;", 'type = types.path; default = "/var/lib/model.gguf";')
def nix_drops_a_listed_patch(t):
  write_series(t, ["0001-a.patch", "0002-b.patch"], ["0001-a.patch", "0002-b.patch"])
  edit(t/"overlays/default.nix", "import ./series.nix ../patches/master;", "builtins.tail (import ./series.nix ../patches/master);")
def patch_moves_a_substituted_line(t):
  write_series(t, ["0001-cuda.patch"], [])
  (t/SERIES/"0001-cuda.patch").write_text("--- a/tinygrad/runtime/autogen/cuda.py\n+++ b/tinygrad/runtime/autogen/cuda.py\n"
                                          "@@ -8 +8 @@\n-dll = c.DLL('cuda', 'nvcuda' if WIN else 'cuda')\n+dll = c.DLL('cuda', ['cuda'])\n")
def series_lists_a_missing_patch(t): write_series(t, ["0001-a.patch", "0002-b.patch"], ["0001-a.patch"])
def source_hash_changed(t): edit(t/"overlays/tinygrad.nix", 'hash = "sha256-DPzJ', 'hash = "sha256-AAAA')
def cuda_from_default_set(t): edit(t/"overlays/tinygrad.nix", "cuda = cudaPackages_12_6;", "cuda = cudaPackages;")
def lock_drifted(t): edit(t/"flake.lock", "c217913993d6c6f6805c3b1a3bda5e639adfde6d", "0000000000000000000000000000000000000000")
def lock_lacks_cuda_legacy(t):   # the lock before jetpack-nixos's own input was added
  lock = json.loads((t/"flake.lock").read_text())
  del lock["nodes"]["cuda-legacy"], lock["nodes"]["jetpack-nixos"]["inputs"]["cuda-legacy"]
  (t/"flake.lock").write_text(json.dumps(lock))
def follows_dropped_without_relocking(t): edit(t/"flake.nix", 'inputs.nixpkgs.follows = "nixpkgs";', "")
def shell_output_broken(t): edit(t/"flake.nix", "pkgs.clang\n        ];\n        env", "pkgs.clang-nonexistent\n        ];\n        env")

@pytest.mark.parametrize("break_tree, test_file, expected", [
  (users_option_mistyped, "test_nix_module.py", "test_listed_users_join_the_device_group"),
  (clock_option_renamed, "test_nix_module.py", "test_options_have_types_defaults_and_descriptions"),
  (udev_rules_sort_before_l4t, "test_nix_module.py", "test_udev_rule_sorts_after_l4t_rules"),
  (performance_option_does_nothing, "test_nix_module.py", "test_max_performance_goes_through_jetpack_options"),
  (nano_super_takes_the_nanos_15w, "test_nix_module.py", "test_every_orin_module_runs_its_fastest_profile"),
  (only_the_agx_accepted, "test_nix_module.py", "test_every_orin_module_runs_its_fastest_profile"),
  (service_binds_every_interface, "test_nix_module.py", "test_service_runs_the_app_on_the_gpu_on_localhost"),
  (service_closes_the_gpu_nodes, "test_nix_module.py", "test_service_hardening_leaves_the_gpu_nodes_open"),
  (service_model_has_a_default, "test_nix_module.py", "test_service_needs_a_model"),
  (nix_drops_a_listed_patch, "test_nix_overlay.py", "test_patch_list_equals_patches_series"),
  (series_lists_a_missing_patch, "test_nix_overlay.py", "test_patch_list_equals_patches_series"),
  (patch_moves_a_substituted_line, "test_nix_overlay.py", "test_series_and_post_patch_apply_to_the_source_as_in_nix_build"),
  (source_hash_changed, "test_nix_overlay.py", "test_src_is_the_master_series_base"),
  (cuda_from_default_set, "test_nix_overlay.py", "test_library_lookups_point_at_cuda_12_6_driver_and_libc"),
  (lock_drifted, "test_nix_files.py", "test_flake_lock_holds_exactly_the_pinned_nodes"),
  (lock_lacks_cuda_legacy, "test_nix_lock.py", "test_lock_gives_every_flake_its_inputs"),
  (follows_dropped_without_relocking, "test_nix_files.py", "test_nix_takes_the_lock_as_is"),
  (shell_output_broken, "test_nix_flake.py", "test_flake_exposes_every_output"),
], ids=lambda v: v.__name__ if callable(v) else None)
def test_broken_tree_fails_its_check(nix, fresh_tree, request, break_tree, test_file, expected):
  spec = importlib.util.spec_from_file_location(f"broken_{test_file[:-3]}", HERE/test_file)
  spec.loader.exec_module(mod:=importlib.util.module_from_spec(spec))
  check = getattr(mod, expected)
  given = {"nix": nix, "tree": fresh_tree, "source": fresh_tree, "tmp_path": fresh_tree.parent}
  run = lambda: check(**{p: given[p] if p in given else request.getfixturevalue(p) for p in inspect.signature(check).parameters})
  run()  # passes on the intact copy, so the failure below is the breakage's doing
  break_tree(fresh_tree)
  with pytest.raises((AssertionError, RuntimeError, pytest.fail.Exception)): run()   # the last: a pytest.raises that saw nothing
