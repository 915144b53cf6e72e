"""The installed wheel as pip left it: portable tags (abi3, manylinux_2_28 or
older), the vLLM entry point, and what that entry point does where vLLM is
not installed (this venv: a logged no-op, nothing imported from vLLM)."""

import importlib.metadata as md
import re
import subprocess
import sys


def _dist():
    return md.distribution("llmsift")


def test_wheel_is_abi3_and_manylinux_2_28_or_older():
    tags = [line.split(":", 1)[1].strip() for line in _dist().read_text("WHEEL").splitlines() if line.startswith("Tag:")]
    assert tags, "the WHEEL file lists no tag"
    for tag in tags:
        python, abi, platform = tag.split("-")
        assert (python, abi) == ("cp39", "abi3"), tag
        for plat in platform.split("."):
            m = re.fullmatch(r"manylinux_2_(\d+)_\w+", plat)
            assert m and int(m.group(1)) <= 28, f"{tag}: needs glibc newer than 2.28"


def test_the_vllm_entry_point_is_declared():
    eps = [(e.name, e.value) for e in _dist().entry_points if e.group == "vllm.general_plugins"]
    assert eps == [("llmsift", "llmsift._plugin:register_vllm")]


def test_loading_it_as_vllm_does_without_vllm_is_a_logged_noop(tmp_path):
    # A process of its own, started outside the repository: pytest puts this
    # directory on sys.path, and its `vllm/` folder would pass for vLLM.
    code = """
import importlib.metadata as md, importlib.util, logging, sys
logging.basicConfig(level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
assert importlib.util.find_spec("vllm") is None, "vLLM is installed in this venv"
# vllm.plugins.load_general_plugins: every entry point of the group, loaded, then called.
funcs = [e.load() for e in md.entry_points(group="vllm.general_plugins") if e.name == "llmsift"]
assert len(funcs) == 1, funcs
print(funcs[0](), funcs[0]())  # once per vLLM process; twice is harmless
assert "llmsift.vllm" not in sys.modules and "vllm" not in sys.modules
"""
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "False False\n"
    assert r.stderr.count("llmsift INFO llmsift: vLLM is not installed; no vLLM parsers registered\n") == 2, r.stderr
