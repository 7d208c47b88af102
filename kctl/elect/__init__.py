"""``kctl partitions elect-leaders``, pure: the election options and file, and what a preferred
or unclean election would do to each partition (:mod:`kctl.elect.election`). The broker side is
:mod:`kctl.broker.elect`."""
