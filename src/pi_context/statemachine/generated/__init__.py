"""Generated reset-control packages, one per spec (see `pi-context generate`)."""
