"""Generator backends behind one interface, registered by name, imported lazily."""
