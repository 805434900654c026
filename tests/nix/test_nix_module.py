"""nixos/: what the module declares and what it sets on a machine, evaluated against the stub lib."""
import pathlib, re
import pytest

ORIN = {"enable": True, "som": "orin-agx", "majorVersion": "6"}

def module(nix, tree:pathlib.Path, settings:dict, jetpack:dict=ORIN, service:dict|None=None) -> dict:
  return nix.eval(tree/"tests/nix/eval-module.nix", root=tree, settings=settings, jetpack=jetpack, service=service or {})

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

# services.tinygrad-llm
MODEL = "/var/lib/models/SmolLM2-135M-Instruct.Q4_1.gguf"
EXE = r'"/nix/store/[0-9a-z]{32}-tinygrad-llm/bin/tinygrad-llm"'

def llm(nix, tree:pathlib.Path, service:dict, settings:dict|None=None, jetpack:dict=ORIN) -> dict:
  return module(nix, tree, {"enable": True} if settings is None else settings, jetpack, {"enable": True, "model": MODEL, **service})["config"]

def test_service_options_have_types_defaults_and_descriptions(nix, tree):
  options = {o["name"]: o for o in module(nix, tree, {})["serviceOptions"]}
  assert {n: o["type"] for n, o in options.items()} == {
    "enable": "bool", "package": "package", "model": "path", "port": "unsignedInt16", "listenAddress": "str", "extraArgs": "listOf str",
    "user": "str", "group": "str"}
  assert [n for n, o in options.items() if not o["hasDefault"]] == ["model"]
  for name, o in options.items(): assert len(o["description"] or "") > 20, name

def test_service_is_off_by_default(nix, tree):
  assert "systemd" not in module(nix, tree, {"enable": True})["config"]
  assert module(nix, tree, {}, service={"model": MODEL})["config"] == {}

def test_service_runs_the_app_on_the_gpu_on_localhost(nix, tree):
  unit = llm(nix, tree, {})["systemd"]["services"]["tinygrad-llm"]
  assert re.fullmatch(EXE + f' "--model" "{MODEL}" "--serve" "8000" "--host" "127.0.0.1"', unit["serviceConfig"]["ExecStart"])
  assert unit["environment"] == {"DEV": "NV", "XDG_CACHE_HOME": "/var/cache/tinygrad-llm"} and unit["serviceConfig"]["CacheDirectory"] == "tinygrad-llm"
  assert {k: unit["serviceConfig"][k] for k in ("User", "Group", "SupplementaryGroups", "Restart")} == {
    "User": "tinygrad-llm", "Group": "tinygrad-llm", "SupplementaryGroups": ["video"], "Restart": "on-failure"}
  assert unit["wantedBy"] == ["multi-user.target"]

def test_service_port_address_and_arguments(nix, tree):
  unit = llm(nix, tree, {"port": 8080, "listenAddress": "0.0.0.0", "extraArgs": ["--max_context", "8192"],
                         "model": "/srv/100% $HOME.gguf"})["systemd"]["services"]["tinygrad-llm"]
  # systemd expands %-specifiers and $VARIABLES in ExecStart, so they arrive doubled
  assert re.fullmatch(EXE + r' "--model" "/srv/100%% \$\$HOME.gguf" "--serve" "8080" "--host" "0.0.0.0" "--max_context" "8192"',
                      unit["serviceConfig"]["ExecStart"])
  with pytest.raises(RuntimeError, match="port: value is not a unsignedInt16"): llm(nix, tree, {"port": 80000})

def test_service_needs_a_model(nix, tree):
  with pytest.raises(RuntimeError, match="services.tinygrad-llm.model: no default and not set"):
    module(nix, tree, {"enable": True}, service={"enable": True})
  with pytest.raises(RuntimeError, match="model: value is not a path"): llm(nix, tree, {"model": "models/m.gguf"})

def test_service_user_is_a_system_user_in_the_gpu_group(nix, tree):
  config = llm(nix, tree, {}, {"enable": True, "users": ["alice"], "group": "tinygrad"})
  assert config["users"]["users"] == {"alice": {"extraGroups": ["tinygrad"]},
                                      "tinygrad-llm": {"isSystemUser": True, "group": "tinygrad-llm", "extraGroups": ["tinygrad"]}}
  assert config["users"]["groups"] == {"tinygrad": {}, "tinygrad-llm": {}}
  assert config["systemd"]["services"]["tinygrad-llm"]["serviceConfig"]["SupplementaryGroups"] == ["tinygrad"]
  # a user of your own is not created, and still gets the GPU group in the unit
  config = llm(nix, tree, {"user": "alice", "group": "users"}, {"enable": True, "users": ["alice"]})
  assert config["users"]["users"] == {"alice": {"extraGroups": ["video"]}} and config["users"]["groups"] == {"video": {}}
  assert {k: config["systemd"]["services"]["tinygrad-llm"]["serviceConfig"][k] for k in ("User", "Group", "SupplementaryGroups")} == {
    "User": "alice", "Group": "users", "SupplementaryGroups": ["video"]}

def test_service_hardening_leaves_the_gpu_nodes_open(nix, tree):
  sc = llm(nix, tree, {})["systemd"]["services"]["tinygrad-llm"]["serviceConfig"]
  assert {k: sc[k] for k in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp", "CapabilityBoundingSet")} == {
    "NoNewPrivileges": True, "ProtectSystem": "strict", "ProtectHome": "read-only", "PrivateTmp": True, "CapabilityBoundingSet": ""}
  # each of these hides /dev/nvmap and /dev/nvgpu/igpu0/* (ProtectClock implies DeviceAllow=char-rtc, closing the rest), or maps the GPU
  # group away (PrivateUsers), or /dev/kmsg, where TegraIface reads a GPU fault's address (ProtectKernelLogs)
  assert not {"PrivateDevices", "DeviceAllow", "DevicePolicy", "ProtectClock", "PrivateUsers", "ProtectKernelLogs"} & set(sc)

def test_service_needs_the_gpu_module_and_takes_every_orin(nix, tree):
  failed = failed_assertions(llm(nix, tree, {}, {}))
  assert len(failed) == 1 and "hardware.tinygrad-orin.enable = true" in failed[0]
  for som, sup in FASTEST:
    config = llm(nix, tree, {}, jetpack={**ORIN, "som": som, "super": sup})
    assert failed_assertions(config) == [] and "tinygrad-llm" in config["systemd"]["services"], som
