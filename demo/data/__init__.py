"""The public UCI Adult files the demo and the experiments use (package data, no code; see README.md here).

A package of its own so that setuptools ships the files as ``rldp.demo.data`` package data
instead of warning about an importable folder missing from ``packages``."""
