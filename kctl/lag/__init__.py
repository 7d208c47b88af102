"""Consumer groups, pure: the arithmetic of lag and offset resets (``arithmetic``), the lag sample
(``samples``, the contract between ``groups lag --record`` and ``analytics``), the groups as data
(``model``), the rules and rows of the ``groups`` commands (``rules``, and ``report`` for
``groups lag``) and the sequence of lag passes (``watch``). No client library is imported."""
