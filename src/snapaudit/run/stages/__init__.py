"""The stages of a run as typed objects: cell keys, cells, one executor (:mod:`.base`)."""
