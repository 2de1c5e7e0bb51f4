"""Commented protocol templates (package data) written by ``snapaudit init``."""
