"""The ``local`` runtime: bubblewrap, its minimal system view and its owned scratch directories."""
