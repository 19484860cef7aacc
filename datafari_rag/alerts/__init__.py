"""DatafariUI's saved searches and alerts: kept per user in the relational store, the alerts run
on a schedule as their user (``runner.py``), each run recording the new documents that user may
read."""
