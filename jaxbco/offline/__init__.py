"""What is computed over a problem's whole horizon, outside the round loop.

The layer above the components (``sets``, ``losses``, ``constraints``, ``solvers``, ``draws``)
and below the problem's checks, the comparator and the certificate:

- ``region``: the feasible region over all rounds (reduced constraint, every-round slacks, the
  projector onto it) and ``feasibility``: the rounds' feasibility check before a run;
- ``round_sums``: the data's sums over the rounds, from which mean-theta methods solve x*;
- ``barrier``, ``absolute``, ``fista``: the offline solvers' numerics (log-barrier method, the
  absolute loss's local LPs, FISTA on a smoothed loss);
- ``cuts``, ``one_cut``: the certificate's cuts and its one-cut bound;
- ``convexity``: the sampled convexity check of a user's f and g;
- ``problem_constants``: F, G, D and a value bound for the theorems' step sizes.

Nothing here is public API: ``jaxbco.comparator``, ``jaxbco.certificate`` and
``jaxbco.problem`` re-export what users call.
"""
