"""kubectl win hns: a Windows node's Host Networking Service state, read and compared with the cluster."""
