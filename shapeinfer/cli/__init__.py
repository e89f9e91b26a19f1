"""The ``shapeinfer`` command: the click group and the console-script entry
(:mod:`.main`), the plumbing the commands share (:mod:`.common`) and one module per
subcommand (:mod:`.commands`). Commands import :mod:`.common`, never :mod:`.main`; main
imports the commands and registers them."""
