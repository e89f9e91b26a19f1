"""``shapeinfer.summary``, a public name kept: it is :mod:`shapeinfer.analysis.summary` itself (the same
module object, private names included)."""

import sys

import shapeinfer.analysis.summary

sys.modules[__name__] = shapeinfer.analysis.summary
