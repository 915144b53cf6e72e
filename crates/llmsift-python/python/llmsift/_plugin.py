"""vLLM's ``vllm.general_plugins`` entry point of the wheel.

vLLM calls :func:`register_vllm` in each of its processes at start-up
(``vllm.plugins.load_general_plugins``), so an installed wheel registers
Sift's parsers (``sift_<name>``, see :mod:`llmsift.vllm`) without
``--reasoning-parser-plugin`` / ``--tool-parser-plugin``.

The entry point is visible to every program that lists the group, with or
without vLLM, so it must never fail: without vLLM it does nothing and says so
(logger ``llmsift``, INFO); with a vLLM whose plugin interface the module
does not fit, it logs a warning and leaves vLLM as it is instead of stopping
its start-up.
"""

from __future__ import annotations

import importlib.util
import logging

_log = logging.getLogger("llmsift")


def register_vllm() -> bool:
    """Registers Sift's vLLM parsers if vLLM is importable; returns whether it did.

    Idempotent (the managers' registrations are forced, the module imports once).
    """
    if importlib.util.find_spec("vllm") is None:
        _log.info("llmsift: vLLM is not installed; no vLLM parsers registered")
        return False
    try:
        import llmsift.vllm  # noqa: F401  (registering is what importing it does)
    except ImportError as e:
        _log.warning("llmsift: Sift's vLLM parsers not registered (llmsift.vllm is for vLLM 0.34): %s", e)
        return False
    _log.info("llmsift: Sift's parsers registered with vLLM as sift_<name>")
    return True
