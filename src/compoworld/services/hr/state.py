"""Typed state of HR: BambooHR employees, time off (types, balances, requests), training,
goals, and the applicant tracking system (job openings, applications)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Employee(_M):
    id: str
    firstName: str
    lastName: str
    workEmail: str
    jobTitle: str = ""
    department: str = ""
    location: str = ""
    supervisorId: str | None = None
    hireDate: str | None = None
    dateOfBirth: str | None = None
    status: str = "Active"
    mobilePhone: str | None = None
    lastChanged: str


class TimeOffType(_M):
    id: str
    name: str
    units: str  # days | hours


class Balance(_M):
    id: str  # "<employee_id>:<type_id>"
    employee_id: str
    type_id: str
    balance: float
    policy: str
    accrual_start_date: str | None = None


class TimeOffRequest(_M):
    id: str
    employee_id: str
    type_id: str
    start: str
    end: str
    amount: float
    status: str  # requested | approved | denied | canceled
    notes: str = ""
    created: str


class TrainingType(_M):
    id: str
    name: str
    category: str
    required: bool = False


class TrainingRecord(_M):
    id: str
    employee_id: str
    type_id: str
    completed: str
    notes: str = ""
    cost: float | None = None
    credits: float | None = None
    hours: float | None = None
    instructor: str | None = None


class Goal(_M):
    id: str
    employee_id: str
    title: str
    description: str = ""
    due_date: str | None = None
    percent_complete: int = 0
    status: str = "in_progress"  # in_progress | completed | closed
    shared: bool = True
    comments: list[dict[str, str]] = []


class Job(_M):
    id: str
    title: str
    department: str
    location: str
    status: str  # Open | Draft | Filled | Canceled
    description: str = ""
    hiring_lead_id: str | None = None
    created: str


class Application(_M):
    id: str
    job_id: str
    first_name: str
    last_name: str
    email: str
    phone: str | None = None
    source: str | None = None
    status_id: str
    resume_text: str = ""
    comments: list[dict[str, str]] = []
    applied: str
