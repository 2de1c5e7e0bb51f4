"""Commands over an existing run directory or a planned one: status, replay, rejudge, the judge
audit of a run, the pilot, the dry run and usage.
"""
