"""The ``shapeinfer`` subcommands, one module each, named for the command: its click command
and its text / JSON reports. They import what they share (errors, flag parsers, writing the
model) from :mod:`shapeinfer.cli.common`; :mod:`shapeinfer.cli.main` imports them and registers
them on its group. Nothing here imports the group."""
