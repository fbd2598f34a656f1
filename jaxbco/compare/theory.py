"""Theory (Hikima, Thms. 1-4) for rectified-bco: the bound constants and bound curves.

With its defaults c = 1/2, ε = 0.1, δ = 1/T (αₜ = tᶜ, or σt when strongly convex;
γₜ = t^(c+ε), ηₜ = tᶜ):

.. code-block:: text

    Thm. 1 (convex, fixed g)    R_T ≤ (9F²d²/(4(1−c)) + D²/2 + 2F) T^max(c, 1−c)
                                V_T ≤ 27F²d²/4 + 3FdD(1+ε)/ε + D²
    Thm. 2 (convex, varying g)  V_T ≤ ((27F²d² + G²)/4 + 3FdD(8 + 1/ε) + 2D²) T^(1−c/2)
                                (its regret: Thm. 1's, whose proof never uses a fixed g)
    Thm. 3 (strongly, fixed)    R_T ≤ (9F²d²/(4σ) + 2F)(1 + log T)
                                V_T ≤ 27F²d²/(4σ) + 3FdD(1+ε)/ε
    Thm. 4 (strongly, varying)  V_T ≤ (27F²d²/(4σ) + G²/4 + 3FdD(1 + 1/ε + 4/σ) + D²)
                                      · √(T(1 + log T))

F, G are estimated from the problem (``jaxbco.offline.problem_constants.problem_constants``, the same numbers
the baselines' default step sizes use); D = diameter of X; d = the estimator's dimension (X's affine hull).  ``LITERATURE``:
the orders the baselines' sources state.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from jaxbco.algorithms import registry
from jaxbco.offline.problem_constants import problem_constants


class _Literature(Mapping):
    """name -> (regret order, violation order) as each algorithm's source states them: read
    from the algorithm registry (``jaxbco.algorithms.registry``), so a researcher's registered
    algorithm appears like a built-in's."""

    def __getitem__(self, name):
        if not isinstance(name, str) or name not in registry.ALGORITHMS:
            raise KeyError(name)
        record = registry.get(name)
        return (record.regret_order, record.violation_order)

    def __iter__(self):
        return iter(registry.names())

    def __len__(self):
        return len(registry.names())


#: Orders the algorithms' sources state (exponent of T; see each algorithm's docstring).
LITERATURE = _Literature()


def literature_cells(name: str) -> tuple[str, str]:
    """The theory cells of a table's row for a baseline: the orders its source states, with the
    exponents its registry record gives (``Record.exponents``).

    Args:
        name: the algorithm's registered name.

    Returns:
        (regret cell, violation cell); ("?", "?") for an unknown name.

    Example:
        >>> from jaxbco.compare.theory import literature_cells
        >>> literature_cells("mahdavi-pd")
        ('T^(1/2) (exponent 0.5)', 'soft T^(3/4) (exponent soft 0.75)')
        >>> literature_cells("no-such-algorithm")
        ('?', '?')
    """
    regret, violation = LITERATURE.get(name, ("?", "?"))
    exps = registry.get(name).exponents if name in registry.ALGORITHMS else {}
    if "regret" in exps:
        regret += f" (exponent {exps['regret']:g})"
    shown = [f"{k.split('_')[0]} {v:g}" for k, v in exps.items() if k != "regret"]
    if shown:
        violation += f" (exponent {', '.join(shown)})"
    return regret, violation


def bound_constants(
    problem, horizon: int, *, strongly_convex: bool | None = None, hyper=None, seeds: int = 4
):
    """The constants F, G, D, d, σ, c, ε of Hikima, Theorems 1-4, for a problem.

    F and G are estimated from the problem (``jaxbco.offline.problem_constants.problem_constants``, the same
    numbers the baselines' default step sizes use); D is the diameter of X and d the dimension
    of X's affine hull.

    Args:
        problem: the problem.
        horizon: the number of rounds T.
        strongly_convex: which schedule's theorems (None: the problem's own flag).
        hyper: the hyperparameters whose c, ε and σ enter the bounds (None: c = 1/2, ε = 0.1,
            σ = 1).
        seeds: seeds of the sampled data the estimates of F and G use.

    Returns:
        {"F", "G", "D", "d", "sigma", "c", "eps", "fixed_g", "strongly_convex", "radius",
        "F_from", "G_from"} (the last two say how F and G were found).

    Example:
        >>> from jaxbco import problems
        >>> from jaxbco.compare.theory import bound_constants
        >>> k = bound_constants(problems.make("quadratic-ball", dim=2), 100, seeds=2)
        >>> k["c"], k["eps"], k["fixed_g"], k["strongly_convex"]
        (0.5, 0.1, True, False)
    """
    if strongly_convex is None:
        strongly_convex = problem.strongly_convex

    pc = problem_constants(problem, horizon, seeds=seeds)
    F, G, radius, f_how, g_how = pc["F"], pc["G"], pc["radius"], pc["F_from"], pc["G_from"]
    c = float(np.asarray(getattr(hyper, "c", 0.5)).ravel()[0])
    eps = float(np.asarray(getattr(hyper, "eps", 0.1)).ravel()[0])
    sigma = float(np.asarray(getattr(hyper, "sigma", 1.0)).ravel()[0]) if strongly_convex else None
    return dict(
        F=F,
        G=G,
        D=float(problem.domain.diameter()),
        d=int(problem.domain.hull_dim),
        sigma=sigma,
        c=c,
        eps=eps,
        fixed_g=problem.constraint_data.constant,
        strongly_convex=strongly_convex,
        radius=radius,
        F_from=f_how,
        G_from=g_how,
    )


def theorem(k: dict) -> str:
    """Which of Hikima's Theorems 1-4 covers the paper's algorithm on a problem.

    Args:
        k: the constants of ``bound_constants`` (its "strongly_convex" and "fixed_g").

    Returns:
        "Thm. 1" (convex, fixed g), "Thm. 2" (convex, time-varying g), "Thm. 3" (strongly
        convex, fixed g) or "Thm. 4" (strongly convex, time-varying g).

    Example:
        >>> from jaxbco.compare.theory import theorem
        >>> theorem({"strongly_convex": False, "fixed_g": True})
        'Thm. 1'
    """
    return {
        (False, True): "Thm. 1",
        (False, False): "Thm. 2",
        (True, True): "Thm. 3",
        (True, False): "Thm. 4",
    }[(k["strongly_convex"], k["fixed_g"])]


def bound_curves(k: dict, t) -> dict:
    """The theorem's bounds on Rₜ and on the hard Vₜ at rounds t, with their orders.

    Thm. 1: R_T ≤ (9F²d²/(4(1−c)) + D²/2 + 2F)·T^max(c, 1−c) and
    V_T ≤ 27F²d²/4 + 3FdD(1+ε)/ε + D²; Thm. 2: V_T ≤ ((27F²d² + G²)/4 + 3FdD(8 + 1/ε) +
    2D²)·T^(1−c/2); Thm. 3: R_T ≤ (9F²d²/(4σ) + 2F)(1 + log T) and
    V_T ≤ 27F²d²/(4σ) + 3FdD(1+ε)/ε; Thm. 4: V_T ≤ (27F²d²/(4σ) + G²/4 +
    3FdD(1 + 1/ε + 4/σ) + D²)·√(T(1 + log T)).

    Args:
        k: the constants of ``bound_constants``.
        t: the rounds.

    Returns:
        {"regret", "hard_violation" (arrays over t), "regret_order", "violation_order",
        "regret_exponent", "violation_exponent", "label"}.

    Example:
        >>> import numpy as np
        >>> from jaxbco import problems
        >>> from jaxbco.compare.theory import bound_constants, bound_curves
        >>> k = bound_constants(problems.make("quadratic-ball", dim=2), 100, seeds=2)
        >>> bounds = bound_curves(k, np.array([10, 100]))
        >>> bounds["regret"].shape, bounds["regret_order"], bounds["label"]
        ((2,), 'T^0.5', 'Thm. 1 bound (rectified-bco)')
    """
    t = np.asarray(t, np.float64)
    F, G, D, d, c, eps, s = k["F"], k["G"], k["D"], k["d"], k["c"], k["eps"], k["sigma"]
    name = theorem(k)
    if k["strongly_convex"]:
        regret = (9 * F**2 * d**2 / (4 * s) + 2 * F) * (1 + np.log(t))  # Thm. 3
        r_order, r_exp = "log T", 0.0
    else:
        regret = (9 * F**2 * d**2 / (4 * (1 - c)) + D**2 / 2 + 2 * F) * t ** max(c, 1 - c)  # Thm. 1
        r_order, r_exp = f"T^{max(c, 1 - c):g}", max(c, 1 - c)
    if name == "Thm. 1":
        viol = np.full_like(t, 27 * F**2 * d**2 / 4 + 3 * F * d * D * (1 + eps) / eps + D**2)
        v_order, v_exp = "O(1)", 0.0
    elif name == "Thm. 2":
        viol = ((27 * F**2 * d**2 + G**2) / 4 + 3 * F * d * D * (8 + 1 / eps) + 2 * D**2) * t ** (
            1 - c / 2
        )
        v_order, v_exp = f"T^{1 - c / 2:g}", 1 - c / 2
    elif name == "Thm. 3":
        viol = np.full_like(t, 27 * F**2 * d**2 / (4 * s) + 3 * F * d * D * (1 + eps) / eps)
        v_order, v_exp = "O(1)", 0.0
    else:
        viol = (
            27 * F**2 * d**2 / (4 * s) + G**2 / 4 + 3 * F * d * D * (1 + 1 / eps + 4 / s) + D**2
        ) * np.sqrt(t * (1 + np.log(t)))
        v_order, v_exp = "sqrt(T log T)", 0.5
    return dict(
        regret=regret,
        hard_violation=viol,
        regret_order=r_order,
        violation_order=v_order,
        regret_exponent=r_exp,
        violation_exponent=v_exp,
        label=f"{name} bound ({registry.reference().name})",
    )
