"""Test configuration: 64-bit JAX available (runs choose float32 or float64 explicitly)."""

import jax

jax.config.update("jax_enable_x64", True)
