"""The ``shapeinfer`` subcommands, one module each, named for the command: its click command
and its text / JSON reports. The group, the console-script entry and the plumbing the commands
share (errors, flag parsers, writing the model) are :mod:`shapeinfer.cli`, which imports these
modules and registers them on its group.

The command modules import that plumbing from :mod:`shapeinfer.cli`; importing it here first
means the group and the plumbing exist whichever module is imported first.
"""

import shapeinfer.cli  # noqa: F401
