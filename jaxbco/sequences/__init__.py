"""Data sequences: θₜ (loss data) and φₜ (constraint data) as pure functions of (key, t).

A sequence is sampled inside the scan, round by round, from round t's stream
(``jaxbco.keys``: a ``RoundKey``, stream 0 the loss data, 2 the constraint data; a sequence
that does not declare ``blocks`` gets a typed key derived from it): nothing of size
seeds × T × d is ever materialised, and round t's data is the same whatever batch, chunk or
order it is computed in.
"""

from __future__ import annotations

# the interface (_base), data given in advance (_recorded), data drawn from round t's key (_drawn)
from jaxbco.sequences._base import AbstractSequence as AbstractSequence
from jaxbco.sequences._drawn import Classification as Classification
from jaxbco.sequences._drawn import IIDNormal as IIDNormal
from jaxbco.sequences._drawn import IIDUniform as IIDUniform
from jaxbco.sequences._drawn import Slackened as Slackened
from jaxbco.sequences._drawn import Switching as Switching
from jaxbco.sequences._recorded import Alternating as Alternating
from jaxbco.sequences._recorded import Fixed as Fixed
from jaxbco.sequences._recorded import Replay as Replay

__all__ = [
    "AbstractSequence",
    "Fixed",
    "IIDUniform",
    "IIDNormal",
    "Switching",
    "Replay",
    "Classification",
    "Slackened",
    "Alternating",
]
