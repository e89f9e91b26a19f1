"""``shapeinfer.profile``, a public name kept: it is :mod:`shapeinfer.analysis.deployment` itself (the same
module object, private names included)."""

import sys

import shapeinfer.analysis.deployment

sys.modules[__name__] = shapeinfer.analysis.deployment
