"""``python -m shapeinfer``: the ``shapeinfer`` command (:func:`shapeinfer.cli.entry`)."""

from shapeinfer.cli import entry

if __name__ == "__main__":
    entry()
