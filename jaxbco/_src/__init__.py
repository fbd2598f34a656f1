"""jaxbco's ground floor (optax's ``_src`` habit): keys and counters (``prng``, ``threefry``,
``normal``), array helpers (``ops``, ``blocks``, ``shaping``, ``specs``, ``xla``), argument
checks (``checks``, ``numeric_fields``), the data a problem replays (``recorded_data``), progress,
resume files, output folders, the machine and hosts.  It imports nothing public: every layer
above may use it.  Nothing here is public API; the public modules re-export what users call."""
