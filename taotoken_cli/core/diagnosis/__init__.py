"""Failure knowledge shared by every command: the catalogue, the classifier, model-ID matching."""
