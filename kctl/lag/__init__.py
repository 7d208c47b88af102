"""Consumer-group lag, pure: the arithmetic of lag and offset resets, and the lag sample (the
contract between ``groups lag --record`` and ``analytics``). No client library is imported."""
