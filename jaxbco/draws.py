"""Round t's data, drawn one way for every back-end, the offline comparator, its certificate
and the problem constants.

A seed's round t has three streams of numbers (``jaxbco.keys``): the loss data θₜ
(stream 0), the direction uₜ (stream 1, Alg. 1 line 3) and the constraint data φₜ
(stream 2).  A component draws from its stream's ``RoundKey`` when it declares ``blocks``
(seeds-minor blocks), else from a typed key derived from it (``keys.for_component``); a
sequence that declares ``shared`` (one value for every seed: ``Fixed``, ``Replay``, ...) is
sampled without a key.  So the comparator regenerates exactly the data each run saw, on any
back-end, in any batch.

``seed_key`` is one seed's typed key, or a ``KeyBlock`` of a block of seeds (their words on
trailing axes: the seeds-minor back-end and the fused kernel).

Example:
    >>> import jax, jax.numpy as jnp
    >>> from jaxbco import draws, problems
    >>> from jaxbco.keys import seed_keys
    >>> problem = problems.make("quadratic-ball")
    >>> key = seed_keys(jax.random.key(0), jnp.arange(1))[0]
    >>> theta, u, phi_next = draws.round_draws(problem, key, jnp.int32(1), jnp.float32)
    >>> theta.shape, u.shape
    ((10,), (10,))
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxbco._src import blocks
from jaxbco._src.prng import paired_keys
from jaxbco.keys import for_component, seed_words, stream_key

#: The round streams of the data (``jaxbco.keys``; 3 is the algorithm's own).
LOSS, DIRECTION, CONSTRAINT = 0, 1, 2


def sample(sequence, seed_key, t, stream: int, key=None):
    """``sequence``'s data of round ``t`` on ``stream`` of ``seed_key`` (a shared sequence:
    sampled without a key).

    Args:
        sequence: a data sequence (``jaxbco.sequences``).
        seed_key: one seed's typed key, or a ``KeyBlock`` of seeds.
        t: the round (int32).
        stream: ``LOSS`` or ``CONSTRAINT``.
        key: the stream's ``RoundKey`` when already made (``paired_keys``), else None.

    Returns:
        The sequence's data of round t.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import draws, problems
        >>> from jaxbco.keys import seed_keys
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> key = seed_keys(jax.random.key(0), jnp.arange(1))[0]
        >>> theta = draws.sample(problem.loss_data, key, jnp.int32(1), draws.LOSS)
        >>> bool((theta == draws.round_data(problem, key, jnp.int32(1))[0]).all())
        True
    """
    if blocks.shared(sequence):
        return sequence.sample(None, t)
    key = stream_key(seed_key, t, stream) if key is None else key
    return sequence.sample(for_component(sequence, key), t)


def direction(domain, seed_key, t, dtype, key=None):
    """uₜ, uniform on the unit sphere of X's span (Alg. 1 line 3), from stream 1."""
    key = stream_key(seed_key, t, DIRECTION) if key is None else key
    return domain.sample_direction(for_component(domain, key), dtype)


def round_data(problem, seed_key, t):
    """(θₜ, φₜ): round t's loss and constraint data, as the run drew them (the
    comparator's and the certificate's view).

    Args:
        problem: the ``Problem``.
        seed_key: one seed's typed key (``keys.seed_keys``), or a ``KeyBlock`` of seeds.
        t: the round (int32, 1..T).

    Returns:
        (θₜ, φₜ), each as the sequence's ``sample`` gives it.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import draws, problems
        >>> from jaxbco.keys import seed_keys
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> key = seed_keys(jax.random.key(0), jnp.arange(1))[0]
        >>> theta, (a, b) = draws.round_data(problem, key, jnp.int32(1))   # θ₁, φ₁ = (a, b)
        >>> theta.shape, a.shape
        ((2,), (2,))
    """
    return (
        sample(problem.loss_data, seed_key, t, LOSS),
        sample(problem.constraint_data, seed_key, t, CONSTRAINT),
    )


def shared_data(problem, t):
    """(θₜ, φₜ, φₜ₊₁) of the sequences that declare ``shared`` (else None): one
    sample per round for every seed (``problem`` as the back-end lays it out)."""
    loss = blocks.shared(problem.loss_data)
    con = blocks.shared(problem.constraint_data)
    return (
        problem.loss_data.sample(None, t) if loss else None,
        problem.constraint_data.sample(None, t) if con else None,
        problem.constraint_data.sample(None, t + 1) if con else None,
    )


def round_draws(problem, seed_key, t, dtype, *, directions: bool = True, paired: int = 0):
    """(θₜ, uₜ, φₜ₊₁): what a round draws per seed; a shared sequence's data (drawn
    once for every seed, ``shared_data``) and uₜ when not ``directions`` (replayed) are ().

    Args:
        problem: the ``Problem`` (laid out as the back-end runs it).
        seed_key: one seed's typed key, or a ``KeyBlock`` of seeds.
        t: the round (int32).
        dtype: uₜ's floating dtype.
        directions: draw uₜ (False: the caller replays given directions).
        paired: n > 0: θₜ's and uₜ's first n numbers share one hash each
            (``prng.paired_keys``: the fused kernel, where nothing merges equal hashes).

    Returns:
        (θₜ or (), uₜ or (), φₜ₊₁ or ()).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jaxbco import draws, problems
        >>> from jaxbco.keys import seed_keys
        >>> problem = problems.make("quadratic-ball", dim=2)
        >>> key = seed_keys(jax.random.key(0), jnp.arange(1))[0]
        >>> theta, u, phi_next = draws.round_draws(problem, key, jnp.int32(1), jnp.float32)
        >>> theta.shape, round(float(jnp.linalg.norm(u)), 5), phi_next   # a fixed φ is shared: ()
        ((2,), 1.0, ())
    """
    kl = ku = None
    if paired:
        kl, ku = paired_keys(*seed_words(seed_key), t, paired, 8 * jnp.dtype(dtype).itemsize)
    loss_drawn = not blocks.shared(problem.loss_data)
    con_drawn = not blocks.shared(problem.constraint_data)
    theta = sample(problem.loss_data, seed_key, t, LOSS, kl) if loss_drawn else ()
    u = direction(problem.domain, seed_key, t, dtype, ku) if directions else ()
    phi_next = sample(problem.constraint_data, seed_key, t + 1, CONSTRAINT) if con_drawn else ()
    return theta, u, phi_next
