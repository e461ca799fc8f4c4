"""Benchmarks (not timed tests): `make bench` prints their tables."""
