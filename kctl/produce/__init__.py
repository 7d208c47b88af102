"""What ``kctl produce`` decides around the sending, pure: its options checked
(:mod:`~kctl.produce.options`), the input's line shapes and record splitting
(:mod:`~kctl.produce.lines`) and what it reports at the end (:mod:`~kctl.produce.summary`).
The sending is :mod:`kctl.broker.produce`'s."""
