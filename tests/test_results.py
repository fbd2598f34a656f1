"""Results as labelled datasets: to_dataset, netCDF round trip, tidy table, plots from a file."""

import argparse
import dataclasses
import json

import numpy as np
import pytest
import xarray as xr

import jaxbco
from jaxbco import plotting, problems, results, simulate
from jaxbco.cli import plot as plot_cli

T, SEEDS = 50, 3
AXES = {"c": [0.5, 0.75], "eps": [0.1, 1.0]}
CONFIG = {
    "problem": "quadratic-ball",
    "dim": 3,
    "solver": "dual",
    "nested": {"a": [1, 2]},
    "flag": True,
}


@pytest.fixture(scope="module")
def res():
    problem = problems.make("quadratic-ball", 3, horizon=T)
    hyper = jaxbco.grid(**AXES, delta=[0.02], xi=[0.02])
    return jaxbco.sweep(
        problem, T, hyper, seeds=SEEDS, key=3, checkpoints=jaxbco.log_checkpoints(T, 10)
    )


@pytest.fixture(scope="module")
def ds(res):
    return results.to_dataset(res, grid_axes=AXES, config=CONFIG)


@pytest.fixture(scope="module")
def saved(ds, tmp_path_factory):
    path = tmp_path_factory.mktemp("saved") / "results.nc"
    results.save(ds, path)
    return path


def test_metric_names_match_the_engine():
    assert results.CURVES == simulate.METRICS


def test_grid_dims_coords_and_values_are_the_results(res, ds):
    K = res.rounds.size
    assert dict(ds.sizes) == {"c": 2, "eps": 2, "seed": SEEDS, "round": K, "dim": 3}
    assert ds["regret"].dims == ("c", "eps", "seed", "round")
    assert ds["failed"].dims == ("c", "eps", "seed") and ds["failed"].dtype == bool
    assert ds["x_star"].dims == ("seed", "dim")
    assert ds["x_final"].dims == ("c", "eps", "seed", "dim")
    np.testing.assert_array_equal(ds["c"].values, AXES["c"])
    np.testing.assert_array_equal(ds["eps"].values, AXES["eps"])
    np.testing.assert_array_equal(ds["round"].values, res.rounds)
    np.testing.assert_array_equal(ds["seed"].values, res.seed_ids)
    for m in simulate.METRICS:  # bitwise, in jaxbco.grid order (first name slowest)
        got = ds[m].values.reshape(4, SEEDS, K)
        assert got.dtype == res.regret.dtype
        assert np.array_equal(got, getattr(res, m), equal_nan=True), m
    assert ds["regret"].sel(c=0.75, eps=0.1).values.tobytes() == res.regret[2].tobytes()
    np.testing.assert_array_equal(ds["failed"].values.reshape(4, SEEDS), res.failed)
    np.testing.assert_array_equal(ds["failed_round"].values.reshape(4, SEEDS), res.failed_round)
    np.testing.assert_array_equal(ds["x_star"].values, res.x_star)
    np.testing.assert_array_equal(ds["x_final"].values.reshape(4, SEEDS, 3), res.x_final)
    # fields that were not swept: scalar coordinates
    assert ds["delta"].ndim == 0 and float(ds["delta"]) == pytest.approx(0.02)
    assert float(ds["alpha_scale"]) == 1.0


def test_provenance_attributes(ds):
    import jax

    a = ds.attrs
    assert a["format"] == results.FORMAT and a["horizon"] == T and a["dtype"] == "float32"
    assert a["algorithm"] == "rectified-bco" and a["wall_s"] > 0
    assert a["jax_version"] == jax.__version__ and a["jaxlib_version"]
    assert a["jaxbco_version"] and a["prng_impl"] == str(jax.config.jax_default_prng_impl)
    assert a["devices"] == str(jax.devices())  # this process's devices, as jax lists them
    assert a["backend"] == jax.default_backend() and a["created"] and a["platform"]
    assert a["config_problem"] == "quadratic-ball" and a["config_flag"] == 1
    assert results.config_of(ds) == CONFIG
    for v in a.values():  # netCDF-safe
        assert isinstance(v, (str, int, float))


def test_save_load_round_trip(ds, saved):
    back = results.load(saved)
    assert back.identical(ds)
    assert back["failed"].dtype == bool and back["failed_round"].dtype == np.int32
    assert back["regret"].dtype == ds["regret"].dtype
    assert results.config_of(back) == CONFIG
    assert back.attrs == ds.attrs
    assert [p.name for p in saved.parent.iterdir()] == ["results.nc"]  # no temporary left
    assert results.load(saved.parent).identical(ds)  # a folder holding results.nc


def test_save_is_atomic_over_an_existing_file(ds, tmp_path):
    path = tmp_path / "r.nc"
    results.save(ds, path)
    results.save(ds.isel(seed=[0]), path)
    assert results.load(path).sizes["seed"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.nc"]


def test_tidy_frame(res, ds):
    frame = results.to_frame(ds)
    K = res.rounds.size
    assert len(frame) == 4 * SEEDS * K
    for col in ("c", "eps", "seed", "round", "failed", "failed_round", *simulate.METRICS):
        assert col in frame.columns
    row = frame[
        (frame.c == 0.75)
        & (frame.eps == 1.0)
        & (frame.seed == 2)
        & (frame["round"] == res.rounds[4])
    ]
    assert len(row) == 1
    assert row["regret"].item() == res.regret[3, 2, 4]
    assert row["lam"].item() == res.lam[3, 2, 4]
    assert not row["failed"].item()


def test_setting_dimension_without_grid_axes(res):
    ds = results.to_dataset(res)
    assert ds["regret"].dims == ("setting", "seed", "round")
    assert ds.sizes["setting"] == 4
    np.testing.assert_array_equal(ds["c"].values, np.asarray(res.hyper.c))
    np.testing.assert_array_equal(ds["eps"].values, np.asarray(res.hyper.eps))
    assert ds["delta"].dims == ("setting",)
    assert np.array_equal(ds["regret"].values, res.regret, equal_nan=True)
    assert len(results.to_frame(ds)) == 4 * SEEDS * res.rounds.size
    assert ds.attrs["feasibility_undecided"] == 0  # a fixed halfspace: decided up front
    flagged = results.to_dataset(dataclasses.replace(res, feasibility_undecided=True))
    assert flagged.attrs["feasibility_undecided"] == 1


def test_single_run_shapes(res):
    one = dataclasses.replace(  # what jaxbco.run returns: curves (K,)
        res,
        **{m: getattr(res, m)[1, 0] for m in simulate.METRICS},
        failed=res.failed[1, 0],
        failed_round=res.failed_round[1, 0],
        x_star=res.x_star[0],
        x_final=res.x_final[1, 0],
        seed_ids=res.seed_ids[:1],
        hyper=jaxbco.grid(c=[0.5], eps=[1.0], delta=[0.02], xi=[0.02]),
    )
    ds = results.to_dataset(one)
    assert dict(ds.sizes) == {"setting": 1, "seed": 1, "round": res.rounds.size, "dim": 3}
    assert ds["regret"].values[0, 0].tobytes() == res.regret[1, 0].tobytes()
    assert ds["x_final"].values[0, 0].tobytes() == res.x_final[1, 0].tobytes()


def test_grid_axes_must_match(res):
    with pytest.raises(ValueError, match="give 2 settings but the result has G = 4"):
        results.to_dataset(res, grid_axes={"c": [0.5, 0.75]})
    with pytest.raises(ValueError, match="jaxbco.grid order"):
        results.to_dataset(res, grid_axes={"eps": [0.1, 1.0], "c": [0.5, 0.75]})
    with pytest.raises(ValueError, match="clash"):
        results.to_dataset(res, grid_axes={"seed": [0, 1, 2, 3]})


def test_summary_table(res, ds):
    table = results.summary_table(ds)
    assert len(table) == 4 and list(table.columns[:2]) == ["c", "eps"]
    row = table[(table.c == 0.5) & (table.eps == 1.0)].iloc[0]
    want = np.asarray(res.regret[1, :, -1], np.float64) / T
    assert row["regret_over_T_mean"] == pytest.approx(want.mean())
    assert row["regret_over_T_ci_lo"] < row["regret_over_T_mean"] < row["regret_over_T_ci_hi"]
    assert row["seeds"] == SEEDS and row["failed"] == 0


def test_combine_algorithms(res, tmp_path):
    a = results.to_dataset(res, algorithm="rectified-bco")
    b = results.to_dataset(res, algorithm="flaxman-bgd", config={"problem": "other"})
    both = results.combine({"rectified-bco": a, "flaxman-bgd": b})
    assert both["regret"].dims == ("algorithm", "setting", "seed", "round")
    assert results.algorithms_of(both) == ["rectified-bco", "flaxman-bgd"]
    assert both["wall_s"].dims == ("algorithm",)
    assert set(json.loads(both.attrs["config_json"])["per_algorithm"]) == {
        "rectified-bco",
        "flaxman-bgd",
    }
    results.save(both, tmp_path / "both.nc")
    back = results.load(tmp_path / "both.nc")
    assert back.identical(both)
    assert len(results.to_frame(back)) == 2 * 4 * SEEDS * res.rounds.size
    assert len(results.summary_table(back)) == 8
    files = plotting.plot_dataset(back, tmp_path / "both.png")
    assert all((tmp_path / f).exists() for f in ("both.png", "both.pdf")) and len(files) == 2
    with pytest.raises(ValueError, match="equal 'round'"):
        results.combine({"x": a, "y": a.isel(round=slice(1, None))})


def test_plot_dataset_marks_failed_seeds(ds, tmp_path):
    bad = ds.copy(deep=True)
    bad["failed"][0, 0, 1] = True
    bad["regret"][0, 0, 1, 4:] = np.nan
    files = plotting.plot_dataset(
        bad, tmp_path / "fig", metrics=simulate.METRICS, theory_slopes={"regret": 0.5}
    )
    assert [f.rsplit(".", 1)[1] for f in files] == ["png", "pdf"]
    png = (tmp_path / "fig.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    assert (tmp_path / "fig.pdf").read_bytes()[:5] == b"%PDF-"
    series = plotting.dataset._series(bad, ["regret"])
    assert sum(int(s["failed"].sum()) for s in series) == 1
    with pytest.raises(ValueError, match="unknown metric"):
        plotting.plot_dataset(ds, tmp_path / "x", metrics=["nope"])


def test_algorithm_colours_are_fixed():
    from jaxbco.algorithms import ALGORITHMS

    colours = [plotting.algorithm_color(n) for n in ALGORITHMS]
    assert len(set(colours)) == len(ALGORITHMS)
    assert plotting.algorithm_color("rectified-bco") == "#0072B2"


# ---------------------------------------------------------------------------------------------
# jaxbco plot


def test_plot_command_redraws_from_file(saved, tmp_path, capsys):
    out = tmp_path / "figs"
    assert (
        plot_cli.main([str(saved), "--out", str(out), "--metrics", "regret,hard_violation,lam"])
        == 0
    )
    text = capsys.readouterr().out
    assert "regret_over_T_mean" in text and "wrote" in text
    png = (out / "results.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    assert (out / "results.pdf").exists()


def test_plot_subcommand_registers_func(saved, tmp_path):
    parser = argparse.ArgumentParser(prog="jaxbco")
    sub = parser.add_subparsers(dest="command", required=True)
    plot_cli.add_parser(sub)
    args = parser.parse_args(["plot", str(saved.parent), "--out", str(tmp_path), "--no-theory"])
    assert args.func(args) == 0
    assert (tmp_path / "results.png").exists() and (tmp_path / "results.pdf").exists()


def _one_line_error(capsys, code):
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("jaxbco plot: error: ") and "\n" not in err
    return err


def test_load_errors_are_one_line(tmp_path, capsys):
    missing = tmp_path / "nope.nc"
    with pytest.raises(ValueError, match=r"nope\.nc.*does not exist"):
        results.load(missing)
    err = _one_line_error(capsys, plot_cli.main([str(missing)]))
    assert "does not exist" in err
    text = tmp_path / "text.nc"
    text.write_text("not a netCDF file\n")
    err = _one_line_error(capsys, plot_cli.main([str(text)]))
    assert "text.nc" in err and "is not a jaxbco results file" in err
    other = tmp_path / "other.nc"
    xr.Dataset({"v": ("x", np.arange(3.0))}).to_netcdf(other, engine="h5netcdf")
    err = _one_line_error(capsys, plot_cli.main([str(other)]))
    assert "not a jaxbco results file" in err and "format" in err
    with pytest.raises(ValueError, match="has no results.nc"):
        results.load(tmp_path)
    err = _one_line_error(capsys, plot_cli.main([str(missing), "--metrics", "bogus"]))
    assert "unknown --metrics" in err


def test_plot_unwritable_out_folder(saved, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    err = _one_line_error(capsys, plot_cli.main([str(saved), "--out", str(blocker / "sub")]))
    assert "cannot be written" in err


def test_figures_of_runs_without_a_finite_curve(res, ds, saved, tmp_path, capsys):
    """Every seed failed (all curves NaN), or no seed at all: each figure is drawn with a
    note that says so (before: matplotlib's "too many values to unpack" / "Data cannot be
    log-scaled" after the run had finished), and ``jaxbco plot`` on such a file exits 0."""
    failed = ds.copy(deep=True)
    failed["failed"][...] = True
    for m in simulate.METRICS:
        failed[m][...] = np.nan
    for name, bad in (("failed", failed), ("empty", ds.isel(seed=slice(0, 0)))):
        files = plotting.plot_dataset(bad, tmp_path / name)
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", files
    (tmp_path / "f").mkdir()
    path = tmp_path / "f" / "results.nc"
    results.save(failed, path)
    assert plot_cli.main([str(path), "--out", str(tmp_path / "figs")]) == 0
    assert (tmp_path / "figs" / "results.png").exists()
    nan_run = dataclasses.replace(
        res,
        failed=np.ones_like(np.asarray(res.failed)),
        regret=np.full_like(np.asarray(res.regret), np.nan),
    )
    assert plotting.plot_curves(nan_run, tmp_path / "curves.png") == tmp_path / "curves.png"
    assert (tmp_path / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
