"""How cells are executed: the runner and its committer, call order, retries and failures,
interruption, GC pacing and the provider batch driver.
"""
