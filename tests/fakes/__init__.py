"""Loopback fakes that tests start at the network boundary."""
