"""kubectl win logs: a Windows node's component logs through the node log query API."""
