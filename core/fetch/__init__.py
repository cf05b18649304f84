"""The local backend's fetch path: address policy, resolve-once connections, capped bodies, file:// URLs."""
