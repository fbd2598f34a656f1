"""The README's Python block and those of the pages it leads to (docs/architecture.md's
back-end sketch, docs/guide.md's multi-host and results blocks) run as written, in that
order, in one namespace.

Two kinds of change, each an exact textual substitution that must apply (so a README edit that
moves them makes this test fail, to be updated here):

* size: the README's "first study" runs 4 settings x 1000 seeds x 10^4 rounds (about a minute on
  the 2-core VM); here 4 x 16 x 200 rounds, the same program otherwise;
* paths: the multi-host block reads ``/shared/study/results.host*-of-2.nc`` and the results
  block ``DIR/results.nc``; both become one temporary folder, in which the host files are
  what two hosts would write: the first block's result split into two seed blocks.

No block asks for float64 (the README's x64 note is about ``dtype="float64"``, which no block
passes), so every block runs with x64 off, as users run them.

The Python blocks of docs/: ``own-problem.md`` runs in ``tests/test_docs.py``; the one block
of ``tuning.md`` is a fragment (it uses a ``problem`` and ``T`` defined in the text) whose call
``tests/test_tune.py`` makes; ``test_docs_python_blocks_are_accounted_for`` fails when another
page gains a Python block.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)
SEEDS, T = 16, 200

# block index -> [(README text, replacement, occurrences)]; the folder is filled in per run.
SUBSTITUTIONS = {
    0: [
        (
            "jaxbco.sweep(problem, 10_000, hyper, seeds=1000)",
            f"jaxbco.sweep(problem, {T}, hyper, seeds={SEEDS})",
            1,
        )
    ],
    2: [("/shared/study/", "{folder}/", 2)],
    3: [('"DIR/results.nc"', '"{folder}/results.nc"', 1)],
}


#: The pages whose Python blocks run here, in order (the README's example first: the others
#: use its names).
PAGES = ("README.md", "docs/architecture.md", "docs/guide.md")


def _blocks(path: pathlib.Path) -> list:
    return BLOCK.findall(path.read_text())


def _all_blocks() -> list:
    return [b for page in PAGES for b in _blocks(ROOT / page)]


def _substituted(index: int, block: str, folder: str) -> str:
    for old, new, count in SUBSTITUTIONS.get(index, []):
        assert block.count(old) == count, (
            f"README block {index}: expected {count} x {old!r} to substitute; the README changed, "
            f"update SUBSTITUTIONS in tests/test_readme.py"
        )
        block = block.replace(old, new.format(folder=folder))
    return block


def _host_files(scope: dict, folder: str) -> list:
    """What ``jaxbco sweep ... --num-processes 2`` writes: each host its block of the seeds of one
    study (here the first block's result, split in two)."""
    from jaxbco import results

    ds = results.to_dataset(scope["res"])
    half = ds.sizes["seed"] // 2
    paths = []
    for i, part in enumerate((ds.isel(seed=slice(0, half)), ds.isel(seed=slice(half, None)))):
        paths.append(results.save(part, f"{folder}/results.host{i}-of-2.nc"))
    return paths


@pytest.fixture(scope="module")
def readme(tmp_path_factory):
    """Every block executed in order; the namespace after each block."""
    folder = str(tmp_path_factory.mktemp("study"))
    blocks = _all_blocks()
    assert [len(_blocks(ROOT / p)) for p in PAGES] == [1, 1, 2], (
        "the Python blocks of README.md, docs/architecture.md or docs/guide.md changed: update "
        "SUBSTITUTIONS and the checks"
    )
    scope: dict = {}
    after = []
    for index, block in enumerate(blocks):
        if index == 2:
            _host_files(scope, folder)
        code = _substituted(index, block, folder)
        exec(compile(code, f"python block {index} of {', '.join(PAGES)}", "exec"), scope)  # noqa: S102
        after.append(dict(scope))
    return after, folder


def test_what_one_call_computes(readme):
    after, _ = readme
    res = after[0]["res"]
    # "(4 settings, 1000 seeds, ~100 log-spaced checkpoints)", at this test's sizes
    assert res.regret.shape == (4, SEEDS, len(res.rounds)) and res.rounds[-1] == T
    assert 10 <= len(res.rounds) <= 100 and np.all(np.diff(res.rounds) > 0)
    assert not np.asarray(res.failed).any()
    for m in ("regret", "hard_violation", "soft_violation", "lam", "loss"):
        assert np.all(np.isfinite(getattr(res, m))), m
    hard = np.asarray(res.hard_violation)
    assert np.all(hard >= 0) and np.all(np.diff(hard, axis=-1) >= 0)  # sum_s [g_s(x_s)]_+
    soft = np.asarray(res.soft_violation)
    assert np.all(hard >= soft - 1e-5 * (1 + np.abs(soft)))  # sum [g]_+ >= sum g
    assert (
        res.engine == "seeds-minor"
    )  # "seeds as the minor axis ... where the components declare it"
    assert res.regret.dtype == np.float32  # float32 by default
    # x* is feasible for the fixed halfspace <a, x> <= 0.3 and lies in the unit ball
    a = np.ones(10) / 10**0.5
    x_star = np.asarray(res.x_star).reshape(-1, 10)
    assert np.all(x_star @ a <= 0.3 + 1e-5) and np.all(np.linalg.norm(x_star, axis=1) <= 1 + 1e-5)


def test_own_components_declare_blocks(readme):
    """The "Back-ends" sketch: ``MyLoss`` evaluates a (d, runs) block to (runs,), reducing over
    axis 0, and a problem with it takes the seeds-minor back-end; ``MyData`` is a sketch (no
    ``sample``), so only its declarations are checked."""
    import jax.numpy as jnp

    from jaxbco import plan
    from jaxbco.algorithms import RectifiedBCO

    scope = readme[0][1]  # after the "Back-ends" block (the first block's names too)
    MyLoss, MyData, problem = scope["MyLoss"], scope["MyData"], scope["problem"]
    assert MyLoss.blocks is True and MyData.blocks is True and MyData.shared is False
    x, theta = jnp.zeros((10, 3)), jnp.ones((10, 1))
    np.testing.assert_allclose(MyLoss().value(x, theta), np.full(3, 10.0))
    mine = scope["jaxbco"].Problem(
        domain=problem.domain,
        loss=MyLoss(),
        loss_data=problem.loss_data,
        constraint=problem.constraint,
        constraint_data=problem.constraint_data,
    )
    assert plan.before(mine, RectifiedBCO(), 100).engine == "seeds-minor"


def test_host_files_merge_and_load(readme):
    """The multi-host block joins the two hosts' files into results.nc, which the results
    block loads and summarises: the first block's study, all its seeds."""
    from jaxbco import results

    after, folder = readme
    merged, ds = after[2]["ds"], after[3]["ds"]
    res = after[0]["res"]
    assert list(merged["seed"].values) == list(range(SEEDS))
    assert list(ds["seed"].values) == list(range(SEEDS))
    whole = results.to_dataset(res)
    for m in results.CURVES + ("failed", "x_star", "x_final"):
        np.testing.assert_array_equal(ds[m].values, whole[m].values, err_msg=m)
    frame = after[3]["df"]
    assert len(frame) == 4 * SEEDS * len(res.rounds)  # one row per (setting, seed, round)
    table = results.summary_table(ds)
    assert len(table) == 4
    final = np.asarray(res.regret)[:, :, -1] / T
    np.testing.assert_allclose(table["regret_over_T_mean"], final.mean(axis=1), rtol=1e-5)
    assert (table["seeds"] == SEEDS).all() and (table["failed"] == 0).all()


def test_docs_python_blocks_are_accounted_for():
    """Every docs page with a Python block is executed (own-problem.md, own-algorithm.md:
    tests/test_docs.py; architecture.md, guide.md: here) or
    a fragment whose call a test makes (tuning.md, tests/test_tune.py)."""
    pages = {p.name: len(_blocks(p)) for p in sorted((ROOT / "docs").glob("*.md"))}
    with_code = {name: n for name, n in pages.items() if n}
    indented = {
        p.name
        for p in (ROOT / "docs").glob("*.md")
        if re.search(r"^[ \t]+```python", p.read_text(), flags=re.M)
    }
    assert with_code == {
        "own-problem.md": 4,
        "own-algorithm.md": 7,
        "architecture.md": 1,
        "guide.md": 2,
    } and indented == {"tuning.md"}, (with_code, indented)
