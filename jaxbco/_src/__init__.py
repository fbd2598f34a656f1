"""jaxbco's private implementation (optax's ``_src`` habit): the run machinery,
keys and counters, checks and shared helpers.  Nothing here is public API; the public
modules (``jaxbco``, ``jaxbco.simulate``, ``jaxbco.backends``, ...) re-export what users
call."""
