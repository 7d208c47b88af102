"""What ``kctl produce`` decides before anything is sent, pure: the input's line shapes and
record splitting. The sending is :mod:`kctl.broker.produce`'s."""
