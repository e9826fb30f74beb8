from celery import shared_task

from loopguard_site.transcripts.selectors import session_count


@shared_task
def ping() -> dict:
    """Answers from whichever worker ran it, with the number of stored
    sessions: proof that the worker reached the same database. Writes nothing."""
    return {"pong": True, "worker": ping.request.hostname, "sessions": session_count()}
