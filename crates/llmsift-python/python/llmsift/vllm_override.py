"""The second vLLM plugin module: Sift also under vLLM's own parser names.

    vllm serve MODEL --reasoning-parser-plugin llmsift.vllm_override --reasoning-parser qwen3 ...

Same classes as :mod:`llmsift.vllm` (which it imports), registered a second time
under each name without the ``sift_`` prefix, so an unchanged command line
runs Sift. Equivalent to ``SIFT_OVERRIDE=1`` with ``llmsift.vllm``.
"""

from llmsift.vllm import register

register(override=True)
