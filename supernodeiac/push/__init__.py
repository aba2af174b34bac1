"""Pushing the design into a source of truth: ``snc push nautobot``.

``nautobot_objects.wanted`` turns a Fabric into the Nautobot objects it asks for (data);
``sync.push`` makes a server hold them through an :class:`~.sync.Api` (create and update in
bulk, idempotent, never deleting what snc did not tag); ``nautobot_api.NautobotApi`` is that
API over HTTP with pynautobot.
"""

from .nautobot_api import MISSING, NautobotApi, check_url
from .nautobot_objects import KINDS, TAG, Kind, Ref, Want, wanted
from .sync import Api, KindReport, PushError, Report, push

__all__ = [
    "KINDS",
    "MISSING",
    "TAG",
    "Api",
    "Kind",
    "KindReport",
    "NautobotApi",
    "PushError",
    "Ref",
    "Report",
    "Want",
    "check_url",
    "push",
    "wanted",
]
