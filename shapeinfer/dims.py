"""``shapeinfer.dims``, a public name kept: it is :mod:`shapeinfer.symbolic.dims` itself (the same
module object, private names included)."""

import sys

import shapeinfer.symbolic.dims

sys.modules[__name__] = shapeinfer.symbolic.dims
