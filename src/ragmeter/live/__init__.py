"""Live traffic: the app-side request log and the watcher that scores a sample of it."""

from ragmeter.live.logger import configure, log_feedback, log_request

__all__ = ["log_request", "log_feedback", "configure"]
