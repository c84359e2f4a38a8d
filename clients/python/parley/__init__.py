# SPDX-License-Identifier: MIT
"""parley - a client for the Parley broker (proto/PROTOCOL.md).

    import parley
    with parley.Client("tcp://127.0.0.1:5555", "Scout") as c:
        c.send_to("Agent1", "hello")
        mail = c.fetch()

``parley.Client`` is the blocking API (a background thread keeps the
session alive), ``parley.aio.Client`` the asyncio one; both raise the
classes of ``parley.errors``, one per protocol error code.
"""
from . import errors, security
from .client import Client, Replica
from .errors import ParleyError
from .types import (AgentEvent, AgentInfo, CheckpointEntry, CheckpointInfo, CheckpointList,
                    CheckpointState, Confirmed, Mail, MailItem, MailReady, Message, ModelReport,
                    Observation,
                    PartError, Sent, State, StateEntry, Stepped, StateUpdate, Stats, Welcome,
                    WorkflowEvent,
                    WorkflowEventKind, WorkflowInfo, WorkflowStatus, WorldEvent, WorldSummary,
                    WriteOp, Written)

__version__ = "0.1.0"
__all__ = ["Client", "Replica", "ParleyError", "errors", "security", "AgentEvent", "AgentInfo", "Mail",
           "MailItem", "MailReady", "Message", "ModelReport", "Observation", "Sent", "State", "StateEntry",
           "StateUpdate", "Stats", "Welcome", "WorldEvent", "WorldSummary", "WriteOp",
           "Written", "CheckpointEntry", "CheckpointInfo", "CheckpointList", "CheckpointState",
           "WorkflowEvent", "WorkflowEventKind", "WorkflowInfo", "WorkflowStatus",
           "PartError", "Stepped", "Confirmed"]
