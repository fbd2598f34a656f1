"""The command line's limits on its numbers (``jaxbco.cli`` and study files read them)."""

#: Rounds are counted in int32 and the next round T + 1 must fit.
MAX_HORIZON = 2**31 - 2
#: Seed ids are uint32.
MAX_SEEDS = 2**32
#: The master key: ``jax.random.key`` takes a 64-bit seed; the CLI keeps to [0, 2^32 - 1] so
#: the same key means the same numbers with and without 64-bit JAX.
MAX_KEY = 2**32 - 1
#: The largest dimension the CLI accepts (the memory estimate refuses large d x seeds anyway).
MAX_DIM = 100_000
