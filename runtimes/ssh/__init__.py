"""The ``ssh`` runtime: the adapter, its one paramiko connection per host, and the tar-over-exec transport."""
