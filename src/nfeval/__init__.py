"""nfeval: evaluate long-form answers to open-ended questions.

Reproduces two methods and makes them usable on your own answers:

* DebateQA (EACL 2026): Perspective Diversity (P.D.) and Dispute Awareness (D.A.).
* LINKAGE (EMNLP 2024): listwise ranking of a candidate among graded references.

The package is thin on purpose: ``nfeval.data`` finds and loads the public
release files, ``nfeval.models`` gives every metric one language-model
interface, ``nfeval.metrics`` holds the kernels, ``nfeval.results`` writes the
tables with their signatures.
"""

__version__ = "0.1.0"


class NfevalError(Exception):
    """An error with a message meant for the user: what went wrong and the fix."""
