"""What a run records durably: the protocol, the cohort, the run directory, its lock, the lock
chain and the SQLite ledger.
"""
