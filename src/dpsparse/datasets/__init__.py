"""Bundled public bounds of the default datasets (JSON files)."""
