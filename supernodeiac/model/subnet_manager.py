"""Who runs an InfiniBand fabric's subnet manager, and the settings that follow from it.

OpenSM elects its master by ``sm_priority`` (0-15, the highest wins; equal priorities go to the
lowest port GUID, IBTA vol. 1 sec. 14.4.1), so an HA pair (two UFM appliances, or two hosts) is two
instances with different priorities: the standby polls the master and takes over when it stops
answering. ``lmc`` gives every HCA port 2^lmc LIDs (multipath for engines that use them).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from .base import Name, Strict


class SmInstance(Strict):
    """One machine that runs OpenSM on the fabric."""

    name: Name = Field(description="the machine (host or UFM appliance); its file is opensm/<fabric>/opensm.<name>.conf")
    priority: Annotated[int, Field(ge=0, le=15)] = Field(
        description="sm_priority, 0-15: the highest is master, the others standby (equal: the lowest port GUID wins)"
    )


class SubnetManager(Strict):
    """The fabric's subnet managers and LID settings."""

    lmc: Annotated[int, Field(ge=0, le=7)] = Field(
        0, description="LID mask control: 2^lmc LIDs per HCA port (ftree supports only 0; updn, dfsssp, minhop use more)"
    )
    instances: list[SmInstance] = Field(
        default_factory=list,
        max_length=16,
        description="the machines that run OpenSM, each with its sm_priority; one opensm.<name>.conf each",
    )

    @model_validator(mode="after")
    def _distinct(self) -> SubnetManager:
        names = [i.name.lower() for i in self.instances]
        if len(set(names)) != len(names):
            raise ValueError("subnet manager instance names must be distinct (case-insensitively)")
        priorities = [i.priority for i in self.instances]
        if len(set(priorities)) != len(priorities):
            # Equal priorities elect by port GUID, which the plan does not know before binding:
            # the master would be whichever machine happens to have the lower GUID.
            raise ValueError("subnet manager priorities must differ, so the blueprint says which one is master")
        return self
