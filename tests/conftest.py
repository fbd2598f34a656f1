"""Test configuration: the users' configuration (JAX's default: 64-bit off).

A test that needs float64 turns it on for itself only: ``with jax.enable_x64(True):`` around
the lines that need it, the ``x64`` fixture (one test), or ``FLOAT64 = True`` at the top of a
module whose every test is a float64 reference check (the whole module, its module-scoped
fixtures included, runs inside the context).  Nothing may switch 64-bit JAX on for the
process: each module's teardown checks that it is still off.
"""

import json
import os
import pathlib
import shutil
import sys
import tempfile

import jax
import pytest

#: Memory mappings a worker may hold before its compiled programs are dropped.  XLA:CPU keeps
#: each kernel of a compiled program in three mappings for as long as JAX's caches hold it
#: (~1,100 for one sweep program), and a process past the kernel's ``vm.max_map_count``
#: (65,530 by default) dies in its next compile ("LLVM ERROR: Unable to allocate section
#: memory!", SIGABRT or SIGSEGV) instead of raising: benchmarks/xla_abort_repro.py reproduces
#: it with JAX alone.  A suite worker compiles hundreds of programs.
MAX_MAPPINGS = 40_000

assert not jax.config.jax_enable_x64, "the suite runs with x64 off, as users do"

#: One persistent compilation cache for a test run, shared by its xdist workers (created by
#: the controlling process before they start, removed when it ends): a program compiled in
#: one test file is loaded, not compiled again, by another that builds the same program
#: (the same HLO: a new problem object, another worker, after ``jax.clear_caches``).  It caches
#: executables only; what they compute is unchanged.
_CACHE_ENV = "JAXBCO_TESTS_COMPILATION_CACHE"


def pytest_configure(config):
    if not hasattr(config, "workerinput") and _CACHE_ENV not in os.environ:
        os.environ[_CACHE_ENV] = tempfile.mkdtemp(prefix="jaxbco-tests-xla-")
        config._jaxbco_cache_owner = True
    jax.config.update("jax_compilation_cache_dir", os.environ[_CACHE_ENV])
    # every program, however small: after ``jax.clear_caches`` (between the matrix's problems,
    # ``compare``'s algorithms) the op-by-op programs of the checks and constants (~150 of
    # ~0.1 s per matrix pair) are loaded, not compiled again (measured: 6 pairs 176 -> 161 s)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)


#: The fast tier (``-m "not slow"``, for local iteration; CI runs everything): the test files
#: a full run measured (tests/durations.json, written by tests/record_durations.py) at no
#: more than this many seconds in all.  Whole files, not single tests: a file's tests share
#: compiled programs, so one test run without its siblings compiles what they would have.
FAST_FILE_LIMIT_S = 20.0
_DURATIONS = pathlib.Path(__file__).with_name("durations.json")


def pytest_collection_modifyitems(config, items):
    measured = json.loads(_DURATIONS.read_text()) if _DURATIONS.exists() else {}
    per_file: dict[str, float] = {}
    for nodeid, seconds in measured.items():
        per_file[nodeid.split("::")[0]] = per_file.get(nodeid.split("::")[0], 0.0) + seconds
    for item in items:
        if per_file.get(item.nodeid.split("::")[0], 0.0) > FAST_FILE_LIMIT_S:
            item.add_marker(pytest.mark.slow)


def pytest_unconfigure(config):
    if getattr(config, "_jaxbco_cache_owner", False):
        shutil.rmtree(os.environ.pop(_CACHE_ENV), ignore_errors=True)


@pytest.fixture
def x64():
    """64-bit JAX for the duration of one test (float64 runs and references)."""
    with jax.enable_x64(True):
        yield


def _mappings() -> int:
    try:
        with open("/proc/self/maps", "rb") as fh:
            return sum(1 for _ in fh)
    except OSError:  # not Linux: no such limit to watch
        return 0


@pytest.fixture(autouse=True)
def _bounded_mappings():
    """Before each test, drop the compiled programs when the worker holds more than
    ``MAX_MAPPINGS`` mappings (costs a recompile only of what later tests reuse)."""
    if _mappings() > MAX_MAPPINGS:
        jax.clear_caches()
    yield


@pytest.fixture(scope="module", autouse=True)
def _module_precision(request):
    """``FLOAT64 = True`` modules run inside ``jax.enable_x64(True)``; every module leaves
    64-bit JAX off for the process as it found it."""
    if getattr(request.module, "FLOAT64", False):
        with jax.enable_x64(True):
            yield
    else:
        yield
    if jax.config.jax_enable_x64:
        jax.config.update("jax_enable_x64", False)
        pytest.fail(f"{request.module.__name__} left jax_enable_x64 on for the process")


@pytest.fixture(autouse=True)
def _registries_restored():
    """A test that registers an algorithm or a problem of its own (tests/own_plugin.py
    registers on import) leaves the registries as it found them: its records are removed
    and the plugin module forgotten, so the next import registers again."""
    from jaxbco import problems
    from jaxbco.algorithms import registry

    algorithms, named = set(registry.ALGORITHMS), set(problems.PROBLEMS)
    yield
    for name in set(registry.ALGORITHMS) - algorithms:
        registry.unregister(name)
    for name in set(problems.PROBLEMS) - named:
        problems.unregister(name)
    sys.modules.pop("own_plugin", None)
