"""`vllm serve` accepts the wheel's parser names with no plugin flag.

vLLM 0.34 order (files under vllm/): `vllm serve` builds its parser in
entrypoints/cli/serve.py:172 (`make_arg_parser`); entrypoints/common/
cli_args.py:484 calls `AsyncEngineArgs.add_cli_args`, which calls
`load_general_plugins()` first (engine/arg_utils.py:3293): the wheel's
`vllm.general_plugins` entry point registers every `sift_*` name before the
command line is even parsed. The names are checked later, when the server
starts: entrypoints/launchers/launcher.py:366 `setup_server` runs
`init_parser_plugin` and then `validate_api_server_args`
(entrypoints/common/cli_args.py:624, `invalid tool call parser: …`).

This runs that validation as `setup_server` does, after the plugin load
`vllm serve`'s parser makes (building the whole parser needs a GPU
platform's defaults, which the oracle's CPU install lacks), and checks the
order above in vLLM's own source so the check fails if vLLM moves it.
Without the wheel the same validation must refuse `sift_hermes`.
"""
import argparse
import inspect
import types

from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.entrypoints.common.cli_args import init_parser_plugin, make_arg_parser, validate_api_server_args
from vllm.entrypoints.launchers.launcher import setup_server
from vllm.plugins import load_general_plugins

src = inspect.getsource(make_arg_parser)
assert "AsyncEngineArgs.add_cli_args(parser)" in src, "make_arg_parser no longer adds the engine args"
assert "load_general_plugins()" in inspect.getsource(AsyncEngineArgs.add_cli_args), "plugins no longer load with the parser"
s = inspect.getsource(setup_server)
assert s.index("init_parser_plugin(args)") < s.index("validate_api_server_args(args)")
args = argparse.Namespace(
    enable_auto_tool_choice=True,
    tool_call_parser="sift_hermes",
    tool_parser_plugin=None,
    reasoning_parser_plugin=None,
    structured_outputs_config=types.SimpleNamespace(reasoning_parser="sift_qwen3"),
)
try:
    validate_api_server_args(args)
    raise SystemExit("vLLM accepted sift_hermes before any plugin loaded: the check cannot fail")
except KeyError:
    pass
load_general_plugins()
init_parser_plugin(args)
validate_api_server_args(args)
print("vllm serve --enable-auto-tool-choice --tool-call-parser sift_hermes --reasoning-parser sift_qwen3:"
      " accepted, no plugin flag")
