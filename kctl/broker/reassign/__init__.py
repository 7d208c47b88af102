"""``kctl partitions reassign`` on the cluster (kafka-reassign-partitions.sh's work):

- :mod:`.wire`: AlterPartitionReassignments and ListPartitionReassignments, requests and answers;
- :mod:`.throttles`: the replication throttles set, read and removed;
- :mod:`.log_dirs`: replica sizes, copies between a broker's log dirs, a plan's ``log_dirs``;
- :mod:`.seen`: the first-seen times of moves (``reassign status``'s age), in the state dir;
- :mod:`.ops`: the operations of the commands (the current assignment, verify, cancel, status);
- :mod:`.run`: the I/O of a run in waves, whose sequence is :mod:`kctl.reassign.run`.

The plans, rows and rules are pure, in :mod:`kctl.reassign`."""
