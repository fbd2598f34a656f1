"""What ``jaxbco tune`` writes: tune.json (the table's rows, the options, the returned
hyperparameters, the estimator and its checks, the runs, the validation and the training
trajectory) and tune.png (held-out J per method and the training J per step)."""

from __future__ import annotations

import dataclasses
import textwrap

import numpy as np

from jaxbco._src.output_folders import write_json

FILES = ("tune.json", "tune.png")


def _evaluation(e) -> dict:
    if e is None:
        return None
    return {
        "J": float(e.J),
        "se": float(e.se),
        "regret_over_T": float(e.regret),
        "violation": float(e.violation),
        "failed_seeds": int(e.failed),
    }


def _write_json(path, args, head, rows, res, problem) -> None:
    """The table's rows (held-out J, R_T/T, V_T, runs, wall time, the chosen values), the
    options, and for gradient tuning the tuned hyperparameters and the training trajectory."""
    skip = ("func", "traceback", "compile_cache", "no_compile_cache", "overwrite")
    data = {
        "command": "jaxbco tune",
        "summary": head,
        "dim": problem.dim,
        "options": {k: v for k, v in vars(args).items() if k not in skip},
        "rows": [
            {
                "method": r.method,
                "heldout": _evaluation(r.heldout),
                "full_runs": int(r.runs),
                "wall_s": float(r.wall_s),
                "compile_s": float(r.compile_s),
                "values": {k: float(v) for k, v in r.values.items()},
            }
            for r in rows
        ],
    }
    if res is not None:
        hyper = {
            f.name: np.asarray(getattr(res.hyper, f.name)).tolist()
            for f in dataclasses.fields(res.hyper)
        }
        traj = res.trajectory
        data["tuned_hyper"] = hyper
        data["returned"] = "defaults" if res.kept_defaults else "tuned"
        data["estimator"] = {
            "asked": res.estimator,
            "used": res.estimator_used,
            "switched_at": res.switched_at,
            "checks": [c._asdict() for c in res.checks],
        }
        data["runs"] = {
            "steps": res.step_runs,
            "checks": res.check_runs,
            "validation": res.validation_runs,
        }
        data["validation_J"] = np.asarray(res.trajectory["validation"], np.float64).tolist()
        data["trajectory"] = {
            **{
                k: np.asarray(traj[k], np.float64).tolist()
                for k in ("J", "regret", "violation", "multiplier")
            },
            "values": {k: np.asarray(v, np.float64).tolist() for k, v in traj["values"].items()},
        }
    write_json(path, data)


def _figure(path, rows, res, head) -> None:
    """Held-out J of each method (+- one standard error) and, for gradient tuning, the
    training J per step; in the package's figure settings (``plotting.PAPER_RC``), saved with
    a tight bounding box so nothing is clipped."""
    import matplotlib
    import matplotlib.ticker
    from matplotlib.figure import Figure

    from jaxbco.plotting.style import PAPER_RC, WIDE_COLORS  # matplotlib: only when drawn

    panels = 2 if res is not None else 1
    with matplotlib.rc_context(PAPER_RC):
        fig = Figure(figsize=(3.4 * panels + 1.2, 2.8), constrained_layout=True)
        axes = np.atleast_1d(fig.subplots(1, panels))
        ax = axes[0]
        names = [r.method.split(" (")[0] for r in rows]
        J = [r.heldout.J if r.heldout is not None else np.nan for r in rows]
        se = [r.heldout.se if r.heldout is not None else 0.0 for r in rows]
        colors = [WIDE_COLORS[i % len(WIDE_COLORS)] for i in range(len(rows))]
        ax.barh(range(len(rows)), J, xerr=se, color=colors)
        ax.set_yticks(range(len(rows)), names)
        ax.invert_yaxis()
        ax.set_xlabel(r"held-out $J = R_T/T + \kappa\, V_T/T$ ($\pm$ 1 s.e.)")
        ax.set_title("held-out seeds")
        if res is not None:
            ax = axes[1]
            steps = np.arange(1, len(res.trajectory["J"]) + 1)
            ax.plot(steps, res.trajectory["J"], "o-", ms=3, color=WIDE_COLORS[0])
            ax.set_xlabel("gradient step")
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
            ax.set_ylabel("training $J$")
            ax.set_title(f"gradient tuning ({res.mode})")
        width = int(40 * panels + 20)
        fig.suptitle("\n".join(textwrap.wrap(head.removeprefix("jaxbco tune: "), width)))
        fig.savefig(path, dpi=200, bbox_inches="tight", pad_inches=0.04)
