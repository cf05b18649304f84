"""The ``docker`` runtime: the container adapter and the owner labels that let orphans be found."""
