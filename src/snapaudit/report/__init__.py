"""The audit report: HTML and Markdown from results."""
