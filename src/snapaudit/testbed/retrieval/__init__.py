"""Retrieval backends over nested corpus prefixes."""
