"""Run by tests/test_long_runs.py in a fresh process (device count and distributed runtime are
fixed at JAX start-up).  Modes:

  shard OUT        sweep on all local devices and on the first device alone -> OUT.npz
  host I N PORT OUT  process I of N under jax.distributed; its share of the seeds -> OUT.npz
"""

import sys

import numpy as np

WORK = dict(horizon=40, seeds=np.arange(37), checkpoints=np.array([1, 7, 40]))
GRID = dict(c=[0.5, 0.7], eps=[0.1], xi=[0.05], delta=[0.05])


def _problem():
    from jaxbco import problems

    return problems.make("quadratic-ball", 4)


def _arrays(res, prefix):
    from jaxbco import simulate

    names = simulate.METRICS + ("failed", "x_star", "x_final")
    return {f"{prefix}_{m}": getattr(res, m) for m in names}


def main(argv):
    import jax

    if argv[0] == "host":  # jaxbco's rendezvous, then jax.distributed.initialize
        from jaxbco._src import hosts

        hosts.join(f"127.0.0.1:{argv[3]}", int(argv[2]), int(argv[1]), timeout=120)
    from jaxbco import hyper, simulate
    from jaxbco.runner import devices

    grid = hyper.grid(**GRID)
    if argv[0] == "shard":
        out = {"n_devices": np.asarray(len(jax.local_devices()))}
        p = _problem()
        many = simulate.sweep(
            p, WORK["horizon"], grid, seeds=WORK["seeds"], checkpoints=WORK["checkpoints"]
        )
        chunked = simulate.sweep(
            p, WORK["horizon"], grid, seeds=WORK["seeds"], checkpoints=WORK["checkpoints"], chunk=6
        )
        one = simulate.sweep(
            p,
            WORK["horizon"],
            grid,
            seeds=WORK["seeds"],
            checkpoints=WORK["checkpoints"],
            devices=jax.local_devices()[:1],
        )
        out.update(_arrays(many, "many"), **_arrays(chunked, "chunked"), **_arrays(one, "one"))
        np.savez(argv[1], **out)
    elif argv[0] == "host":
        path = argv[4]
        ids = devices.host_share(WORK["seeds"])
        res = simulate.sweep(
            _problem(), WORK["horizon"], grid, seeds=ids, checkpoints=WORK["checkpoints"]
        )
        np.savez(
            path,
            seed_ids=res.seed_ids,
            process_count=np.asarray(jax.process_count()),
            **_arrays(res, "host"),
        )
        jax.distributed.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
