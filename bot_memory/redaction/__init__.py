"""redaction"""
