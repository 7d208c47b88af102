"""``kctl partitions reassign``, pure (the cluster side: :mod:`kctl.broker.reassign`):

- plans: :mod:`.assign` (``--topic T --brokers B``), :mod:`.plan_file`
  (kafka-reassign-partitions.sh's JSON, read and checked);
- the whole-cluster planner of ``generate``: :mod:`.generate` (options, snapshot, plan),
  :mod:`.layout` (what it is given and returns), :mod:`.passes` (the passes), :mod:`.leaders`
  (the leader pass), :mod:`.load` (bands and heaps), :mod:`.report` (document, figures, summary);
- running a plan: :mod:`.run` (the sequence of a run in waves, its I/O handed in),
  :mod:`.waves` (states and schedule), :mod:`.progress` (bytes, rate, ETA, stalls),
  :mod:`.throttles` (which configs, and their changes between waves);
- what the commands show: :mod:`.rows` (execute, verify, cancel), :mod:`.status`."""
