"""The blind semantic judge: packets, judges, validation and audits."""
