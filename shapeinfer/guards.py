"""``shapeinfer.guards``, a public name kept: it is :mod:`shapeinfer.symbolic.guards` itself (the same
module object, private names included)."""

import sys

import shapeinfer.symbolic.guards

sys.modules[__name__] = shapeinfer.symbolic.guards
