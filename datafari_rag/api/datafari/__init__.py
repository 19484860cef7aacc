"""Datafari's REST API (v2.0 and v1.0), as DatafariUI and scripts call it: answers, streams,
searches, exports, conversations, the assistant, saved searches and alerts, ``/update``."""
