"""metashell: walk a Kafka KRaft cluster's metadata like a filesystem."""

__version__ = "0.1.0"
