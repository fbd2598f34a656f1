"""Benchmarks (never timed tests): each prints JSON and the machine it ran on."""
