"""Bitwise fingerprints of runs, to show a refactor changes no number: sha1 of every curve,
x* and x_T of every named problem (and seven own problems that take the less common paths) x
the given algorithms (default: all), float32, 3 seeds, T = 60, on the default back-end (and
the vmap back-end for the default algorithm).  Run it on two commits and compare the JSON files:

    python -m benchmarks.fingerprint before.json [ALGORITHM ...]   # on the old commit
    python -m benchmarks.fingerprint after.json [ALGORITHM ...]    # on the new one

One line per problem also goes to OUT.partial as it finishes (a long run survives a crash).
"""

import dataclasses
import hashlib
import json
import sys
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import problems as own
from jaxbco import Problem, constraints, losses, problems, sequences, sets, simulate
from jaxbco.algorithms import ALGORITHMS, DEFAULT
from jaxbco.compare.driver import make_algorithm

T = 60
D = 4
NAMED = [n for n in problems.PROBLEMS if not n.startswith("portfolio:")] + ["portfolio:djia"]


def _own():
    """Own problems on the less common paths: smoothing, cycled rows, shifts, user g's."""
    ball, box = sets.L2Ball(jnp.zeros(D), 1.0), sets.Box(-jnp.ones(D), jnp.ones(D))
    l1 = constraints.CustomConstraint(lambda x, r: jnp.sum(jnp.abs(x)) - r, smooth=False)
    shifted = constraints.Shifted(
        constraints.CustomConstraint(lambda x, c: jnp.sum((x - c) ** 2) - 0.3)
    )
    rows = (jnp.stack([jnp.ones(D), -jnp.ones(D)]), jnp.asarray([0.5, 0.5]))
    yield "box-ellipsoid", own.box_ellipsoid(D)
    yield "l1-ellipsoid", own.l1_ellipsoid(D)
    yield "box-custom", own.box_custom(D)
    yield (
        "box-l1budget-linear",
        Problem(
            box,
            losses.Linear(),
            sequences.IIDNormal(jnp.full(D, 0.3), 1.0),
            l1,
            sequences.Fixed(jnp.asarray(1.5)),
        ),
    )
    yield (
        "ball-absolute",
        Problem(
            ball,
            losses.Absolute(),
            sequences.IIDNormal(jnp.full(D, 0.5), 0.2),
            constraints.Linear(),
            sequences.Fixed((jnp.ones(D), 0.5)),
        ),
    )
    yield (
        "ball-huber-alternating",
        Problem(
            ball,
            losses.Huber(0.3),
            sequences.IIDNormal(jnp.full(D, 0.5), 0.2),
            constraints.Linear(),
            sequences.Alternating(rows),
        ),
    )
    yield (
        "simplex-shifted-custom",
        Problem(
            sets.Simplex(D),
            losses.Quadratic(),
            sequences.IIDNormal(jnp.full(D, 0.2), 0.3),
            shifted,
            sequences.Slackened(jnp.full(D, 0.25), 0.0, 0.1),
        ),
    )


def _plain(algorithm):
    """The same algorithm under a subclass that declares nothing: the vmap back-end."""
    cls = type(algorithm)
    plain = type("Plain" + cls.__name__, (cls,), {})
    return plain(
        **{f.name: getattr(algorithm, f.name) for f in dataclasses.fields(algorithm) if f.init}
    )


def _digest(res) -> dict:
    return {
        m: hashlib.sha1(np.ascontiguousarray(np.asarray(getattr(res, m))).tobytes()).hexdigest()[
            :12
        ]
        for m in simulate.METRICS + ("x_star", "x_final")
    }


def main(out: str, only: list[str]) -> None:
    warnings.simplefilter("ignore")
    found = {}
    for name, prob in [(n, None) for n in NAMED] + list(_own()):
        prob = prob if prob is not None else problems.make(name, horizon=T)
        for alg in [a for a in ALGORITHMS if not only or a in only]:
            start = time.time()
            for variant in ("default", "vmap") if alg == DEFAULT else ("default",):
                try:
                    algorithm = make_algorithm(alg, prob)
                    algorithm = _plain(algorithm) if variant == "vmap" else algorithm
                    res = simulate.sweep(
                        prob, T, seeds=np.arange(3), algorithm=algorithm, checkpoints=[1, 7, T]
                    )
                    found[f"{name}|{alg}|{variant}"] = _digest(res)
                except Exception as err:  # noqa: BLE001 (recorded: a run that fails, fails alike)
                    found[f"{name}|{alg}|{variant}"] = {
                        "error": f"{type(err).__name__}: {err}"[:160]
                    }
            print(name, alg, f"{time.time() - start:.1f}s", flush=True, file=sys.stderr)
        jax.clear_caches()  # compiled programs would exhaust the process's memory mappings
        with open(out + ".partial", "a") as fh:
            fh.write(
                json.dumps({k: v for k, v in found.items() if k.startswith(name + "|")}) + "\n"
            )
    with open(out, "w") as fh:
        json.dump(found, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
