"""``python -m shapeinfer``: the ``shapeinfer`` command (:func:`shapeinfer.cli.main.entry`)."""

from shapeinfer.cli.main import entry

if __name__ == "__main__":
    entry()
