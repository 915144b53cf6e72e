"""A stand-in for `torch`, for running vLLM's parser layer without a GPU.

vLLM's serving path (parsers, detokenizer, request models) never computes
with tensors, but many modules it imports touch `torch` at import time
(dtypes in tables, `torch.cuda.is_available()`, base classes such as
`torch.nn.Module`). Every attribute and submodule of this package is a
permissive placeholder class: it can be called, subclassed, indexed and
compared, it is falsy (so `torch.cuda.is_available()` says no), and any
attribute of it is another placeholder. Nothing here computes: if the
oracle ever reached real tensor code, the answer would be a placeholder,
not a number, and the recorder checks its outputs are plain strings.
"""

import importlib.abc as _abc
import importlib.machinery as _machinery
import sys as _sys
import types as _types

__version__ = "2.14.0"
version = _types.SimpleNamespace(cuda=None, hip=None, xpu=None, git_version="stub", __version__=__version__)


class _Meta(type):
    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _make(name)

    def __getitem__(cls, item):
        return cls

    def __bool__(cls):
        return True

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __repr__(cls):
        return f"<torch stub {cls.__name__}>"


class _Stub(metaclass=_Meta):
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Stub()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _make(name)()

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __getitem__(self, item):
        return _Stub()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __float__(self):
        return 0.0

    def __str__(self):
        return ""

    def __radd__(self, other):
        return other if isinstance(other, str) else _Stub()

    def __add__(self, other):
        return other if isinstance(other, str) else _Stub()

    __mul__ = __rmul__ = __sub__ = __rsub__ = __truediv__ = __floordiv__ = __call__


def _make(name):
    return _Meta(str(name), (_Stub,), {})


def __getattr__(name):
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    value = _make(name)
    globals()[name] = value
    return value


class _Loader(_abc.Loader):
    def create_module(self, spec):
        mod = _types.ModuleType(spec.name)
        mod.__path__ = []
        mod.__getattr__ = __getattr__
        return mod

    def exec_module(self, module):
        return None


class _Finder(_abc.MetaPathFinder):
    """Answers every `torch.*` (and `triton*`) submodule import with a placeholder module."""

    def find_spec(self, fullname, path, target=None):
        if fullname.startswith("torch."):
            return _machinery.ModuleSpec(fullname, _Loader(), is_package=True)
        return None


class dtype:
    """A named dtype with its item size (vLLM checks sizes in import-time tables)."""

    def __init__(self, name, itemsize, is_floating_point=False):
        self.name, self.itemsize, self.is_floating_point = name, itemsize, is_floating_point

    def __repr__(self):
        return f"torch.{self.name}"


for _n, _s, _f in [
    ("float16", 2, True), ("half", 2, True), ("bfloat16", 2, True), ("float32", 4, True),
    ("float", 4, True), ("float64", 8, True), ("double", 8, True), ("uint8", 1, False),
    ("uint16", 2, False), ("uint32", 4, False), ("uint64", 8, False), ("int8", 1, False),
    ("int16", 2, False), ("int32", 4, False), ("int", 4, False), ("int64", 8, False),
    ("long", 8, False), ("bool", 1, False), ("float8_e4m3fn", 1, True), ("float8_e5m2", 1, True),
    ("float8_e4m3fnuz", 1, True), ("float8_e5m2fnuz", 1, True), ("float8_e8m0fnu", 1, True),
    ("float4_e2m1fn_x2", 1, True), ("complex64", 8, False),
]:
    globals()[_n] = dtype(_n, _s, _f)

_sys.meta_path.append(_Finder())
is_available = _make("is_available")
