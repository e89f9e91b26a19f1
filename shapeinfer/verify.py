"""``shapeinfer.verify``, a public name kept: it is :mod:`shapeinfer.analysis.verify` itself (the same
module object, private names included)."""

import sys

import shapeinfer.analysis.verify

sys.modules[__name__] = shapeinfer.analysis.verify
