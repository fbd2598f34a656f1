"""The run machinery: from a call of ``jaxbco.sweep`` or ``jaxbco.make_run`` to a ``Result``.

The layer above the back-ends (``jaxbco.backends``, ``jaxbco.fused``), the comparator and the
certificate, and below ``jaxbco.simulate``, ``jaxbco.compare``, ``jaxbco.study`` and the CLI:

- ``validation``: every argument of a run checked against the problem, in one place (the
  grid's values: ``hyper_values``);
- ``memory``: the run's memory estimate and the chunk that fits;
- ``whole_run``: ``prepare`` (validate, select the back-end and the comparator once) and
  ``make_run`` (one compiled function of the hyperparameters);
- ``dispatch``: the back-end's ``advance`` on one chunk of seeds, and ``devices``: the same
  sharded over devices;
- ``sweep_stages``: ``sweep``'s stages (plan, start or resume, advance, finish, result);
- ``run_result``: the ``Result`` a sweep returns.

Nothing here is public API: ``jaxbco`` and ``jaxbco.simulate`` re-export what users call.
"""
