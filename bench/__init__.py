"""Benchmarks that print JSON. Run each as a module: `.venv/bin/python -m bench.ingest`."""
