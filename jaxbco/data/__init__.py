"""Real data sets shipped with jaxbco (package data) and the problems built on them."""
