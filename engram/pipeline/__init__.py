"""Pipeline logic shared by a consumer and an API (classification, conflict judging, promotion)."""
