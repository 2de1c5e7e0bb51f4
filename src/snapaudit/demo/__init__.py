"""The self-generated demo world."""
