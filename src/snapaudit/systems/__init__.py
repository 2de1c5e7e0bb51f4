"""Systems under audit: what answers a question in one state."""
