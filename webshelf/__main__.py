"""``python -m webshelf`` is the ``webshelf`` command."""

from webshelf.core.surfaces.cli import main

if __name__ == "__main__":
    main()
