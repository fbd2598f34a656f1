"""``jaxbco.compile_cache``: the Python API's persistent compilation cache, one call, JAX's own
settings restored after (``import jaxbco`` changes nothing)."""

import jax
import jax.numpy as jnp
import pytest

import jaxbco

FLAGS = (
    "jax_compilation_cache_dir",
    "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_min_entry_size_bytes",
    "jax_enable_compilation_cache",
)


def _settings():
    return {f: getattr(jax.config, f) for f in FLAGS}


def test_programs_are_kept_in_the_folder_and_jaxs_settings_restored(tmp_path):
    before = _settings()
    with jaxbco.compile_cache(tmp_path / "cache") as folder:
        assert folder == str(tmp_path / "cache") and jax.config.jax_enable_compilation_cache
        jax.jit(lambda x: jnp.sin(x) * 3.0 + 0.25)(jnp.arange(7.0)).block_until_ready()
    assert any(p.name.endswith("-cache") for p in (tmp_path / "cache").iterdir())
    assert _settings() == before


def test_a_plain_call_holds_until_close_and_false_turns_the_cache_off(tmp_path):
    before = _settings()
    cache = jaxbco.compile_cache(tmp_path)
    assert jax.config.jax_compilation_cache_dir == str(tmp_path)
    cache.close()
    cache.close()  # a second close does nothing
    assert _settings() == before
    with jaxbco.compile_cache(False) as folder:
        assert folder is None and not jax.config.jax_enable_compilation_cache
    assert _settings() == before


def test_a_folder_that_cannot_be_made_runs_without_it(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with jaxbco.compile_cache(blocker / "cache") as folder:
        assert folder is None and not jax.config.jax_enable_compilation_cache
    assert "cannot be created or written" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [True, 3, ["dir"]])
def test_a_path_of_the_wrong_kind_is_refused_naming_it(bad):
    before = _settings()
    with pytest.raises(TypeError, match="compile_cache's path must be a folder"):
        jaxbco.compile_cache(bad)
    assert _settings() == before
