"""The background pipeline: discovery, claims, extraction, consolidation."""
