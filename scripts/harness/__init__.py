"""The real-Kafka test harness, one module per concern; ``scripts/kafka_harness.py`` is its front door."""
