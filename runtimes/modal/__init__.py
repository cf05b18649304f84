"""The ``modal`` runtime: the adapter, the Volume fleet, the narrow seam to Modal and its SDK implementation."""
