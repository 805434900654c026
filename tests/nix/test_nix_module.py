"""nixos/: what the module declares and what it sets on a machine, evaluated against the stub lib."""
import pathlib
import pytest

ORIN = {"enable": True, "som": "orin-agx", "majorVersion": "6"}

def module(nix, tree:pathlib.Path, settings:dict, jetpack:dict=ORIN) -> dict:
  return nix.eval(tree/"tests/nix/eval-module.nix", root=tree, settings=settings, jetpack=jetpack)

def failed_assertions(config:dict) -> list[str]: return [a["message"] for a in config["assertions"] if not a["assertion"]]

def udev_rules(config:dict) -> dict:
  return {p["destination"]: p["text"] for p in config["services"]["udev"]["packages"]}

def test_options_have_types_defaults_and_descriptions(nix, tree):
  options = {o["name"]: o for o in module(nix, tree, {})["options"]}
  assert {n: o["type"] for n, o in options.items()} == {
    "enable": "bool", "users": "listOf str", "group": "str", "clockControl": "bool", "maxPerformance": "bool",
    "python.enable": "bool", "python.package": "package"}
  for name, o in options.items(): assert o["hasDefault"] and len(o["description"] or "") > 20, name

def test_disabled_module_changes_nothing(nix, tree):
  assert module(nix, tree, {"users": ["alice"]})["config"] == {}

def test_listed_users_join_the_device_group(nix, tree):
  config = module(nix, tree, {"enable": True, "users": ["alice", "bob"]})["config"]
  assert config["users"]["users"] == {"alice": {"extraGroups": ["video"]}, "bob": {"extraGroups": ["video"]}}
  assert config["users"]["groups"] == {"video": {}}
  config = module(nix, tree, {"enable": True, "users": ["alice"], "group": "tinygrad"})["config"]
  assert config["users"]["users"] == {"alice": {"extraGroups": ["tinygrad"]}} and config["users"]["groups"] == {"tinygrad": {}}

def test_udev_rule_grants_nvmap_and_every_igpu0_node(nix, tree):
  rules = udev_rules(module(nix, tree, {"enable": True, "group": "tinygrad"})["config"])
  assert list(rules) == ["/etc/udev/rules.d/99-tinygrad-orin.rules"]
  lines = rules["/etc/udev/rules.d/99-tinygrad-orin.rules"].splitlines()
  assert lines == ['KERNEL=="nvmap", GROUP="tinygrad", MODE="0660"',
                   'ENV{DEVNAME}=="/dev/nvgpu/igpu0/*", GROUP="tinygrad", MODE="0660"']

def test_udev_rule_sorts_after_l4t_rules(nix, tree):
  # udev applies rules files in file name order; L4T's GROUP=video/debug assignments (jetpack-nixos installs them as L4T names them,
  # test_nix_real_sources reads the name from its module) must come first
  name = pathlib.PurePath(next(iter(udev_rules(module(nix, tree, {"enable": True})["config"])))).name
  assert name > "99-tegra-devices.rules" and name > "99-local.rules"

def test_clock_control_is_opt_in(nix, tree):
  text = next(iter(udev_rules(module(nix, tree, {"enable": True})["config"]).values()))
  assert "devfreq" not in text
  text = next(iter(udev_rules(module(nix, tree, {"enable": True, "clockControl": True, "group": "tinygrad"})["config"]).values()))
  devfreq = [l for l in text.splitlines() if "devfreq" in l]
  assert devfreq == ['ACTION=="add", SUBSYSTEM=="devfreq", KERNEL=="17000000.gpu", '
                     'RUN+="/stub/coreutils/bin/chgrp tinygrad /sys%p/min_freq /sys%p/max_freq", '
                     'RUN+="/stub/coreutils/bin/chmod g+w /sys%p/min_freq /sys%p/max_freq"']

def test_max_performance_goes_through_jetpack_options(nix, tree):
  config = module(nix, tree, {"enable": True})["config"]
  assert config["services"]["nvpmodel"] == {"enable": True, "profileNumber": 0}  # MAXN on the AGX
  assert config["hardware"]["nvidia-jetpack"] == {"maxClock": True}
  assert "systemd" not in config, "jetpack-nixos's own options do this, no services of our own"
  config = module(nix, tree, {"enable": True, "maxPerformance": False})["config"]
  assert "nvpmodel" not in config["services"] and "nvidia-jetpack" not in config["hardware"]

def test_adds_overlay_and_optionally_python_with_patched_tinygrad(nix, tree):
  config = module(nix, tree, {"enable": True})["config"]
  assert config["nixpkgs"]["overlays"] == ["<function>"] and "environment" not in config
  assert config["hardware"]["graphics"] == {"enable": True}
  config = module(nix, tree, {"enable": True, "python": {"enable": True}})["config"]
  assert config["environment"]["systemPackages"] == [{"name": "python3-env", "pythonPackages": ["tinygrad", "numpy"]}]

# (som, super) -> the fastest profile of L4T r36's /etc/nvpmodel/nvpmodel_<module>[_super].conf, as nvpower.sh picks it per module
FASTEST = {
  ("orin-agx", False): 0,              # p3701_0000, p3701_0004: MAXN
  ("orin-agx-industrial", False): 0,   # p3701_0008: MAXN
  ("orin-nx", False): 0,               # p3767_0000, p3767_0001: MAXN
  ("orin-nx", True): 0,                # p3767_0000_super, p3767_0001_super: MAXN_SUPER
  ("orin-nano", False): 0,             # p3767_0003, p3767_0004: 15W, 10W (no MAXN)
  ("orin-nano", True): 2}              # p3767_0003_super, p3767_0004_super: MAXN_SUPER

def test_every_orin_module_runs_its_fastest_profile(nix, tree):
  for (som, sup), profile in FASTEST.items():
    config = module(nix, tree, {"enable": True}, {**ORIN, "som": som, "super": sup})["config"]
    assert failed_assertions(config) == [] and config["services"]["nvpmodel"] == {"enable": True, "profileNumber": profile}, (som, sup)

@pytest.mark.parametrize("jetpack, wrong", [
  ({}, "jetpack-nixos"),
  ({**ORIN, "enable": False}, "jetpack-nixos"),
  ({**ORIN, "som": "generic"}, '"orin-agx", "orin-agx-industrial", "orin-nano", "orin-nx"'),
  ({**ORIN, "som": "xavier-nx"}, "Jetson Orin"),
  ({**ORIN, "majorVersion": "5"}, 'majorVersion = "6"')])
def test_assertions_name_what_to_set(nix, tree, jetpack, wrong):
  assert failed_assertions(module(nix, tree, {"enable": True}, ORIN)["config"]) == []
  failed = failed_assertions(module(nix, tree, {"enable": True}, jetpack)["config"])
  assert len(failed) >= 1 and all("hardware.nvidia-jetpack" in m for m in failed) and any(wrong in m for m in failed)

def test_settings_are_type_checked(nix, tree):
  with pytest.raises(RuntimeError, match="users: value is not a listOf str"): module(nix, tree, {"enable": True, "users": "alice"})
  with pytest.raises(RuntimeError, match="no such option"): module(nix, tree, {"enable": True, "clockcontrol": True})
