"""Typed state of the CRM: HubSpot objects (all values are strings, as in HubSpot), property
definitions, and associations between objects."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

PropValue = str | None


class CrmObject(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    object_type: str
    properties: dict[str, PropValue]
    createdAt: str
    updatedAt: str


class PropertyDef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str  # "<object_type>.<name>"
    object_type: str
    name: str
    label: str
    description: str
    type: str  # string | number | enumeration | datetime
    options: list[str] = []
    custom: bool = False


class Association(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str  # "<from_type>:<from_id>-><to_type>:<to_id>"
    from_object_type: str
    from_object_id: str
    to_object_type: str
    to_object_id: str
    association_type_id: int
