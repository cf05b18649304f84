"""``python -m webshelf`` is the ``webshelf`` command (the console script's entry: core/surfaces/cli_entry.py)."""

from webshelf.core.surfaces.cli_entry import main

if __name__ == "__main__":
    main()
