"""The run's last stage: its results (:mod:`.results`) and the sections they carry: tokens
and cost (:mod:`.usage`), corpus paths (:mod:`.paths`), warnings (:mod:`.warnings`), the
review's numbers (:mod:`.review`, over the locked run of :mod:`.locked_run`)."""
