"""A problem: feasible set, loss family with its data sequence, constraint family with its data;
its validation before a run (``validate``; the rounds' feasibility: ``jaxbco.offline.feasibility``)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from jaxbco._src import checks, curvature, xla
from jaxbco.constraints import AbstractConstraint
from jaxbco.losses import AbstractLoss
from jaxbco.offline import convexity
from jaxbco.offline.convexity import NonConvexWarning as NonConvexWarning  # noqa: F401
from jaxbco.offline.feasibility import FeasibilityWarning as FeasibilityWarning  # noqa: F401
from jaxbco.offline.feasibility import _recorded, check_fixed, recorded_rows
from jaxbco.offline.feasibility import check_feasible as check_feasible  # noqa: F401 (re-exported)
from jaxbco.sequences import AbstractSequence
from jaxbco.sets import AbstractSet


class Problem(eqx.Module):
    """An online problem with hard constraints: minimise ∑ₜ fₜ(xₜ) over xₜ ∈ X with gₜ(xₜ) ≤ 0.

    Round t's loss is fₜ(x) = loss.value(x, θₜ) with θₜ = loss_data.sample(key, t), its
    constraint gₜ(x) = constraint.value(x, φₜ) with φₜ = constraint_data.sample(key, t), and
    x ∈ X = domain (Hikima (2023), Sec. 2).  Validated before a run (``validate``):
    the data's shapes against X's dimension, finiteness, convexity of a user's function on
    samples.

    Args:
        domain: the feasible set X ⊂ ℝᵈ (``jaxbco.sets``).
        loss: the loss family f (``jaxbco.losses``).
        loss_data: the sequence of θₜ (``jaxbco.sequences``).
        constraint: the constraint family g (``jaxbco.constraints``).
        constraint_data: the sequence of φₜ (``jaxbco.sequences``).
        x1: (d,) the initial decision x₁ ∈ X (default None: the centre of X's inscribed ball).
        strongly_convex: run the strongly convex schedule of Theorems 3-4 (αₜ = σt) on this
            problem (static; algorithms with such a schedule read it; ``problems.make`` sets
            it).

    Raises:
        TypeError: for a component of the wrong kind (e.g. a loss given as the domain).
        ValueError: for an ``x1`` that is not a (d,) vector.

    Example:
        >>> import jax.numpy as jnp, jaxbco
        >>> from jaxbco import sets, losses, constraints, sequences
        >>> d = 3
        >>> a = jnp.ones(d) / d**0.5
        >>> problem = jaxbco.Problem(
        ...     domain=sets.L2Ball(jnp.zeros(d), 1.0),                   # X
        ...     loss=losses.Quadratic(),                                  # ‖x − θₜ‖₂²
        ...     loss_data=sequences.IIDNormal(0.6 * a, jnp.full(d, 0.1)),
        ...     constraint=constraints.Linear(),                          # ⟨a, x⟩ − b
        ...     constraint_data=sequences.Fixed((a, jnp.asarray(0.3))),
        ... )
        >>> problem.dim, problem.initial_point().shape
        (3, (3,))
    """

    domain: AbstractSet
    loss: AbstractLoss
    loss_data: AbstractSequence
    constraint: AbstractConstraint
    constraint_data: AbstractSequence
    x1: jax.Array | None = eqx.field(
        default=None, converter=lambda v: None if v is None else checks.real(v)
    )
    strongly_convex: bool = eqx.field(static=True, default=False)

    def __check_init__(self):
        for name, kind, what in (
            ("domain", AbstractSet, "a jaxbco.sets set (L2Ball, Box, Simplex, L1Ball, ...)"),
            ("loss", AbstractLoss, "a jaxbco.losses loss (Quadratic(), Linear(), ...)"),
            (
                "loss_data",
                AbstractSequence,
                "a jaxbco.sequences sequence (Fixed, Replay, IIDNormal, ...)",
            ),
            (
                "constraint",
                AbstractConstraint,
                "a jaxbco.constraints family (Linear(), Ball(), ...)",
            ),
            (
                "constraint_data",
                AbstractSequence,
                "a jaxbco.sequences sequence (Fixed, Replay, ...)",
            ),
        ):
            checks.check_kind(name, getattr(self, name), kind, what)
        checks.check_bool("strongly_convex", self.strongly_convex)
        if self.x1 is not None:
            checks.check_real("x1", self.x1)
            if jnp.shape(self.x1) != (self.domain.dim,):
                raise ValueError(
                    f"dimension mismatch: x1 must be a vector of shape "
                    f"({self.domain.dim},) (a point of "
                    f"the feasible set in R^{self.domain.dim}); got shape "
                    f"{jnp.shape(self.x1)}"
                )

    @property
    def dim(self) -> int:
        """The dimension d of X."""
        return self.domain.dim

    def initial_point(self):
        """x₁, (d,): ``x1`` if given, else the centre of X's inscribed ball."""
        return self.domain.inscribed_ball()[0] if self.x1 is None else self.x1


CurvatureWarning = curvature.CurvatureWarning  # a custom component's bound below the truth


def validate(problem: Problem, horizon: int) -> None:
    """Check a problem before a run, on concrete values.

    Checks the problem's kind, 1 ≤ T ≤ ``checks.MAX_HORIZON``, each round's data shapes
    against X's dimension (``data_shape`` of the loss and constraint: nothing broadcasts),
    data values (``check_data``), finiteness, replay lengths of at least T, x₁ ∈ X, and a fixed
    constraint that meets X.  Time-varying constraints: ``check_feasible``.

    Args:
        problem: the ``Problem``.
        horizon: T, the number of rounds.

    Raises:
        TypeError: for a wrong kind (a ``KindError``).
        ValueError: naming the parameter, for any other failed check.
    """
    hint = (
        " (use jaxbco.problems.make(name) for a registered problem)"
        if isinstance(problem, str)
        else ""
    )
    checks.check_kind("problem", problem, Problem, "a jaxbco.Problem", hint)
    horizon = checks.check_horizon(horizon)
    d = problem.dim
    key = checks.threefry_key(0)
    t1 = np.asarray(1, np.int32)
    for name, seq in (
        ("loss_data", problem.loss_data),
        ("constraint_data", problem.constraint_data),
    ):
        if seq.length is not None and seq.length < horizon:
            raise ValueError(
                f"{name} replays {seq.length} rounds but the horizon T is {horizon}; "
                f"T must lie in [1, {seq.length}]"
            )
    pieces = (
        ("loss_data", problem.loss, problem.loss_data),
        ("constraint_data", problem.constraint, problem.constraint_data),
    )
    for name, family, seq in pieces:  # shapes first (traced, nothing computed)
        spec = family.data_shape(d)
        if spec is not None:
            label = (
                f"{name} (one round's values[t - 1])"
                if seq.recorded() is not None and not seq.constant
                else name
            )
            checks.check_data_shapes(
                f"dimension mismatch: {label}",
                jax.eval_shape(seq.sample, key, t1),
                spec,
                type(family).__name__,
                d,
            )
    theta, phi = _round_data(problem.loss_data, problem.constraint_data, key, t1)
    checks.check_finite("loss data", theta)
    checks.check_finite("constraint data", phi)
    for (name, family, seq), sample in zip(pieces, (theta, phi)):
        recorded = _recorded(seq, horizon)
        family.check_data(
            jax.tree_util.tree_map(np.asarray, sample) if recorded is None else recorded, name
        )
    x = np.zeros(
        d,
        dtype=jax.tree_util.tree_leaves(problem.domain)[0].dtype
        if jax.tree_util.tree_leaves(problem.domain)
        else jnp.float32,
    )
    f, g = jax.eval_shape(  # shapes and dtypes only: nothing compiled
        lambda x, theta, phi: (
            _evaluate("loss", "theta", problem.loss, x, theta),
            _evaluate("constraint", "phi", problem.constraint, x, phi),
        ),
        x,
        theta,
        phi,
    )
    if f.shape != () or g.shape != ():
        raise ValueError(
            f"dimension mismatch: the loss and constraint must return scalars on "
            f"x in R^{d}; got shapes {f.shape} and {g.shape}"
        )
    curvature.check_bounds(problem.loss, problem.constraint, x, theta, phi)
    curvature.check_modulus(problem)
    convexity.check_user_functions(problem)  # a user's f, g: finite at x_1, and convex
    if problem.x1 is not None:
        checks.check_dim("x1", problem.x1, d)
        checks.check_finite("x1", problem.x1)
        x1 = np.asarray(problem.x1, float)
        dist = np.linalg.norm(np.asarray(problem.domain.project(jnp.asarray(problem.x1))) - x1)
        if dist > 1e-6 * (1 + np.linalg.norm(x1)):
            raise ValueError(f"x1 must lie in the feasible set X; it is {dist:.3g} away from X")
    if problem.constraint_data.constant:
        check_fixed(problem, phi)


@xla.one_shot
def _round_data(loss_data, constraint_data, key, t):
    """Round t's data of both sequences: one compiled program (op by op, a sequence's draws
    compiled dozens of small programs, ~1 s of a run's start-up)."""
    return loss_data.sample(key, t), constraint_data.sample(key, t)


def _evaluate(what: str, data: str, family, x, sample):
    """``family.value(x, sample)`` at X's centre on round 1's data, refusing an error (a
    dimension mismatch, or a function of another signature) or a value that is not one real
    floating-point number (an integer has no gradient; a complex one no order) in one line."""
    try:
        v = family.value(x, sample)
    except (TypeError, ValueError, IndexError, KeyError) as err:
        raise ValueError(
            f"{what}.value(x, {data}) fails on x in R^{x.shape[0]} and round 1's "
            f"{what} data ({type(family).__name__}: a dimension mismatch, data of another "
            f"shape than the function reads, or a function that does not take (x, {data})): "
            f"{type(err).__name__}: "
            f"{' '.join(str(err).split())[:200]}"
        ) from None
    dtype = v.dtype if hasattr(v, "dtype") else np.asarray(v).dtype
    if not jnp.issubdtype(dtype, jnp.floating):
        raise checks.KindError(
            f"the {what} ({type(family).__name__}) must return a real "
            f"floating-point number; it returned {checks.describe(v)} "
            f"(dtype {dtype})"
        )
    return v


def check_row_scale(problem: Problem, horizon: int, dtype) -> None:
    """Recorded rows a of a linear or polyhedral constraint (fixed, replayed or alternating
    data) must have ‖a‖² representable in the run's dtype, with room to spare: the exact prox
    divides by it, so a halfspace scaled by 1e-30 or 1e30 would be silently lost in float32
    (ValueError naming the round's row, its |a| and the remedy)."""
    if problem.constraint.kind not in ("linear", "polyhedral"):
        return
    data = _recorded(problem.constraint_data, horizon)
    if data is None:
        return
    A = recorded_rows(problem.constraint, data)[0]  # (rounds, m, d)
    norm2 = np.sum(A * A, axis=-1)
    info = jnp.finfo(dtype)
    low, high = float(info.tiny) * 1e4, float(info.max) * 1e-4
    bad = (norm2 > 0) & ((norm2 < low) | (norm2 > high))
    if np.any(bad):
        t, row = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"constraint_data row {row} (round {t + 1}) has |a| = {np.sqrt(norm2[t, row]):.3g}: "
            f"|a|^2 must lie in [{low:.3g}, {high:.3g}] to be representable in {np.dtype(dtype)} "
            f"(the prox divides by it); rescale the constraint (e.g. divide a and b by |a|) or "
            f"run in float64"
        )
