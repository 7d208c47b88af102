"""How the kctl process runs, whatever the command: the C extension or its Python twins
(:mod:`.native`), glibc heap tuning (:mod:`.heap`), SIGINT/SIGTERM handling (:mod:`.signals`)."""
