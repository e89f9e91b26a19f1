"""``shapeinfer.bindings``, a public name kept: it is :mod:`shapeinfer.inference.bindings` itself (the same
module object, private names included)."""

import sys

import shapeinfer.inference.bindings

sys.modules[__name__] = shapeinfer.inference.bindings
