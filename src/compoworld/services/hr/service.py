"""HR: BambooHR, modelled on bamboohr.json (twentytwokhz/bamboohr-mcp).

39 of the spec's 81 tools are modelled with their real names and parameters: the employee
directory and records, time off (types, policies, balances, requests and their approval), training
records, goals, and hiring (job openings, candidates, applications). Not modelled, by design:
file and photo uploads (binary documents), dependents and benefits (SSNs and insurance data that no
task should touch), clock-in time tracking, certification and assessment reports, and the dataset /
custom-report query engine; they are further surfaces over the same employees, left for a later
issue. Every tool takes BambooHR's `response_format` ('json' or 'markdown').
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any, Literal

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_emails, parse_datetime_arg
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services.hr.seed import STATUSES, seed_hr
from compoworld.services.hr.state import (
    Application,
    Balance,
    Employee,
    Goal,
    Job,
    TimeOffRequest,
    TimeOffType,
    TrainingRecord,
    TrainingType,
)

Fmt = Literal["json", "markdown"]
FIELDS = (
    "firstName",
    "lastName",
    "workEmail",
    "jobTitle",
    "department",
    "location",
    "supervisorId",
    "hireDate",
    "dateOfBirth",
    "status",
    "mobilePhone",
)


def _md(data: Any, depth: int = 0) -> str:
    pad = "  " * depth
    if isinstance(data, dict):
        return "\n".join(
            f"{pad}- **{k}**: {v}"
            if not isinstance(v, dict | list)
            else f"{pad}- **{k}**:\n{_md(v, depth + 1)}"
            for k, v in data.items()
        )
    if isinstance(data, list):
        return (
            "\n".join(_md(x, depth) if isinstance(x, dict | list) else f"{pad}- {x}" for x in data)
            or f"{pad}(none)"
        )
    return f"{pad}{data}"


def _out(data: Any, fmt: str) -> Any:
    return data if fmt == "json" else {"markdown": _md(data)}


def _day(value: str, field: str) -> date:
    return parse_datetime_arg(value, field).date()


class HrService(Service):
    """BambooHR: employees, time off, training, goals and applicant tracking."""

    name = "hr"
    domain = "hr"
    spec = "bamboohr.json"

    employees = Resource("employees", Employee, text=("firstName", "lastName", "workEmail"))
    types = Resource("time_off_types", TimeOffType, label="time off type")
    balances = Resource("balances", Balance, label="time off balance")
    requests = Resource("time_off_requests", TimeOffRequest, label="time off request")
    ttypes = Resource("training_types", TrainingType, label="training type")
    trainings = Resource("training_records", TrainingRecord, label="training record")
    goals = Resource("goals", Goal)
    jobs = Resource("jobs", Job, label="job opening")
    apps = Resource("applications", Application, label="application")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_hr(self, ctx)

    def _emp(self, employee_id: str) -> dict[str, Any]:
        if employee_id in ("me", "0"):
            employee_id = self.store.tables[META]["me"]
        return self.employees.require(employee_id, "employee_id")

    def _new_id(self, seq: str, base: int) -> str:
        return str(base + self.next_seq(seq))

    # ---- employees ------------------------------------------------------------------
    @tool
    def bamboohr_get_employee_directory(self, response_format: Fmt = "markdown") -> Any:
        """Retrieve the company employee directory with basic information for all employees.

        Args:
            response_format: Output format: 'json' or 'markdown'.
        """
        rows = [
            {
                "id": e["id"],
                "displayName": f"{e['firstName']} {e['lastName']}",
                "jobTitle": e["jobTitle"],
                "department": e["department"],
                "workEmail": e["workEmail"],
                "location": e["location"],
            }
            for e in sorted(self.employees.find(status="Active"), key=lambda e: int(e["id"]))
        ]
        return _out({"employees": rows}, response_format)

    @tool
    def bamboohr_get_employee(
        self,
        employee_id: str,
        fields: list[str] | None = None,
        only_current: bool = True,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Get detailed information for a specific employee by ID ('0' or 'me' for yourself).

        Args:
            employee_id: Employee ID.
            fields: Field names to retrieve (e.g. ["firstName", "workEmail"]); default all.
            only_current: Only current values.
            response_format: Output format: 'json' or 'markdown'.
        """
        e = self._emp(employee_id)
        bad = [f for f in fields or [] if f not in FIELDS]
        if bad:
            raise InvalidArguments(f"unknown field(s) {bad}; see bamboohr_get_fields")
        return _out({"id": e["id"], **{f: e[f] for f in (fields or FIELDS)}}, response_format)

    @tool(mutates=True)
    def bamboohr_create_employee(
        self,
        first_name: str,
        last_name: str,
        email: str | None = None,
        hire_date: str | None = None,
        job_title: str | None = None,
        department: str | None = None,
        location: str | None = None,
        additional_fields: dict[str, Any] | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Create a new employee record (work emails are unique).

        Args:
            first_name: First name.
            last_name: Last name.
            email: Work email.
            hire_date: Hire date (YYYY-MM-DD).
            job_title: Job title.
            department: Department.
            location: Location.
            additional_fields: Other fields by name (supervisorId, mobilePhone, dateOfBirth).
            response_format: Output format: 'json' or 'markdown'.
        """
        if not first_name.strip() or not last_name.strip():
            raise InvalidArguments("'first_name' and 'last_name' must not be empty")
        extra = dict(additional_fields or {})
        bad = set(extra) - {"supervisorId", "mobilePhone", "dateOfBirth"}
        if bad:
            raise InvalidArguments(f"'additional_fields' has unknown field(s) {sorted(bad)}")
        if extra.get("supervisorId"):
            self.employees.require(str(extra["supervisorId"]), "additional_fields.supervisorId")
        mail = (
            check_emails([email], "email")[0]
            if email
            else f"{first_name}.{last_name}@pending.local".lower().replace(" ", "")
        )
        if self.employees.find(lambda e: e["workEmail"].lower() == mail):
            raise Conflict(f"an employee with work email {mail} already exists", type="duplicate_email")
        e = self.employees.create(
            {
                "firstName": first_name,
                "lastName": last_name,
                "workEmail": mail,
                "jobTitle": job_title or "",
                "department": department or "",
                "location": location or "",
                "hireDate": _day(hire_date, "hire_date").isoformat()
                if hire_date
                else self.clock.now().date().isoformat(),
                "lastChanged": self.clock.iso(),
                **{k: str(v) for k, v in extra.items()},
            },
            id=self._new_id("employee", 900),
        )
        for t, pol in (("77", "Standard PTO"), ("78", "Sick leave"), ("79", "Personal hours")):
            self.balances.create(
                {"employee_id": e["id"], "type_id": t, "balance": 0.0, "policy": pol}, id=f"{e['id']}:{t}"
            )
        return _out(e, response_format)

    @tool(mutates=True)
    def bamboohr_update_employee(
        self, employee_id: str, update_data: dict[str, Any], response_format: Fmt = "markdown"
    ) -> Any:
        """Update an employee's fields (firstName, lastName, workEmail, jobTitle, department, location, supervisorId, status, ...).

        Args:
            employee_id: Employee ID.
            update_data: Field names mapped to new values.
            response_format: Output format: 'json' or 'markdown'.
        """
        e = self._emp(employee_id)
        bad = set(update_data) - set(FIELDS)
        if bad or not update_data:
            raise InvalidArguments(f"'update_data' must set known fields; unknown: {sorted(bad)}")
        changes = {k: (None if v is None else str(v)) for k, v in update_data.items()}
        if changes.get("workEmail"):
            changes["workEmail"] = check_emails([changes["workEmail"]], "update_data.workEmail")[0]
            if self.employees.find(
                lambda x: x["id"] != e["id"] and x["workEmail"].lower() == changes["workEmail"]
            ):
                raise Conflict(
                    f"another employee has work email {changes['workEmail']}", type="duplicate_email"
                )
        if changes.get("supervisorId"):
            if changes["supervisorId"] == e["id"]:
                raise RuleViolation("an employee cannot supervise themselves", type="self_supervisor")
            self.employees.require(changes["supervisorId"], "update_data.supervisorId")
        if "status" in changes and changes["status"] not in ("Active", "Inactive"):
            raise InvalidArguments("'update_data.status' must be Active or Inactive")
        return _out(
            self.employees.update(e["id"], {**changes, "lastChanged": self.clock.iso()}), response_format
        )

    @tool
    def bamboohr_get_changed_employees(self, since_timestamp: str, response_format: Fmt = "markdown") -> Any:
        """List employees changed since a time.

        Args:
            since_timestamp: ISO 8601 time.
            response_format: Output format: 'json' or 'markdown'.
        """
        since = parse_datetime_arg(since_timestamp, "since_timestamp").strftime("%Y-%m-%dT%H:%M:%SZ")
        rows = [
            {"id": e["id"], "lastChanged": e["lastChanged"]}
            for e in sort_records(self.employees.find(lambda e: e["lastChanged"] >= since), "lastChanged")
        ]
        return _out({"employees": rows}, response_format)

    @tool
    def bamboohr_get_employee_birthdays(self, response_format: Fmt = "markdown") -> Any:
        """List upcoming birthdays (next 30 days)."""
        today = self.clock.now().date()
        out = []
        for e in self.employees.find(status="Active"):
            if not e["dateOfBirth"]:
                continue
            b = date.fromisoformat(e["dateOfBirth"])
            try:
                nxt = b.replace(year=today.year)
            except ValueError:
                nxt = date(today.year, 3, 1)
            if nxt < today:
                nxt = (
                    nxt.replace(year=today.year + 1)
                    if not (b.month == 2 and b.day == 29)
                    else date(today.year + 1, 3, 1)
                )
            if (nxt - today).days <= 30:
                out.append(
                    {"id": e["id"], "name": f"{e['firstName']} {e['lastName']}", "birthday": nxt.isoformat()}
                )
        return _out({"birthdays": sorted(out, key=lambda x: x["birthday"])}, response_format)

    @tool
    def bamboohr_get_fields(self, response_format: Fmt = "markdown") -> Any:
        """List the employee fields that can be read and updated."""
        return _out(
            {
                "fields": [
                    {"name": f, "type": "date" if f.endswith("Date") or f == "dateOfBirth" else "text"}
                    for f in FIELDS
                ]
            },
            response_format,
        )

    @tool
    def bamboohr_get_company_info(self, response_format: Fmt = "markdown") -> Any:
        """Get company information: name, headcount and departments."""
        emps = self.employees.find(status="Active")
        return _out(
            {
                "headcount": len(emps),
                "departments": sorted({e["department"] for e in emps if e["department"]}),
                "locations": sorted({e["location"] for e in emps if e["location"]}),
            },
            response_format,
        )

    # ---- time off -------------------------------------------------------------------
    @tool
    def bamboohr_get_time_off_types(self, response_format: Fmt = "markdown") -> Any:
        """List time off types (id, name, units)."""
        return _out({"timeOffTypes": sorted(self.types.all(), key=lambda t: t["id"])}, response_format)

    @tool
    def bamboohr_get_time_off_policies(self, response_format: Fmt = "markdown") -> Any:
        """List time off policies and the types they cover."""
        pols = sorted({(b["policy"], b["type_id"]) for b in self.balances.all()})
        return _out({"policies": [{"name": p, "timeOffTypeId": t} for p, t in pols]}, response_format)

    @tool
    def bamboohr_get_employee_time_off_policies(
        self, employee_id: str, response_format: Fmt = "markdown"
    ) -> Any:
        """List an employee's time off policies with their current balances.

        Args:
            employee_id: Employee ID.
            response_format: Output format: 'json' or 'markdown'.
        """
        e = self._emp(employee_id)
        return _out(
            {
                "employeeId": e["id"],
                "policies": [
                    {
                        "timeOffTypeId": b["type_id"],
                        "policy": b["policy"],
                        "balance": b["balance"],
                        "units": self.types.get(b["type_id"])["units"],
                    }
                    for b in sorted(self.balances.find(employee_id=e["id"]), key=lambda b: b["type_id"])
                ],
            },
            response_format,
        )

    @tool
    def bamboohr_get_time_off_requests(
        self,
        start_date: str | None = None,
        end_date: str | None = None,
        employee_id: str | None = None,
        status: Literal["approved", "denied", "superceded", "requested", "canceled"] | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """List time off requests overlapping a date range, optionally of one employee or status.

        Args:
            start_date: Range start (YYYY-MM-DD).
            end_date: Range end (YYYY-MM-DD).
            employee_id: Only this employee.
            status: Only this status.
            response_format: Output format: 'json' or 'markdown'.
        """
        lo = _day(start_date, "start_date").isoformat() if start_date else ""
        hi = _day(end_date, "end_date").isoformat() if end_date else "9999"
        if lo > hi:
            raise InvalidArguments("'start_date' is after 'end_date'")
        emp = self._emp(employee_id)["id"] if employee_id else None
        recs = self.requests.find(
            lambda r: r["end"] >= lo and r["start"] <= hi, employee_id=emp, status=status
        )
        return _out({"requests": sort_records(recs, "start")}, response_format)

    @tool
    def bamboohr_get_whos_out(
        self, start_date: str | None = None, end_date: str | None = None, response_format: Fmt = "markdown"
    ) -> Any:
        """List who is out (approved time off) between two dates (default: the next 14 days).

        Args:
            start_date: Range start (YYYY-MM-DD).
            end_date: Range end (YYYY-MM-DD).
            response_format: Output format: 'json' or 'markdown'.
        """
        today = self.clock.now().date()
        lo = _day(start_date, "start_date") if start_date else today
        hi = _day(end_date, "end_date") if end_date else lo + timedelta(days=14)
        out = []
        for r in sort_records(
            self.requests.find(
                lambda r: r["end"] >= lo.isoformat() and r["start"] <= hi.isoformat(), status="approved"
            ),
            "start",
        ):
            e = self.employees.get(r["employee_id"])
            out.append(
                {
                    "employeeId": r["employee_id"],
                    "name": f"{e['firstName']} {e['lastName']}" if e else "?",
                    "start": r["start"],
                    "end": r["end"],
                }
            )
        return _out({"whosOut": out}, response_format)

    @tool(mutates=True)
    def bamboohr_create_time_off_request(
        self,
        employee_id: str,
        start_date: str,
        end_date: str,
        time_off_type_id: str,
        amount: float,
        status: Literal["approved", "requested"] = "requested",
        notes: str | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Create a time off request; an approved request takes the amount from the balance, which cannot go negative.

        Args:
            employee_id: Employee ID.
            start_date: First day (YYYY-MM-DD).
            end_date: Last day (YYYY-MM-DD).
            time_off_type_id: Time off type ID (see bamboohr_get_time_off_types).
            amount: Amount in the type's units (days or hours).
            status: requested or approved.
            notes: Notes.
            response_format: Output format: 'json' or 'markdown'.
        """
        e = self._emp(employee_id)
        self.types.require(time_off_type_id, "time_off_type_id")
        lo, hi = _day(start_date, "start_date"), _day(end_date, "end_date")
        if hi < lo:
            raise RuleViolation("time off cannot end before it starts", type="invalid_time_range")
        if amount <= 0:
            raise InvalidArguments("'amount' must be positive")
        clash = self.requests.find(
            lambda r: (
                r["status"] in ("approved", "requested")
                and r["end"] >= lo.isoformat()
                and r["start"] <= hi.isoformat()
            ),
            employee_id=e["id"],
        )
        if clash:
            raise Conflict(
                f"overlaps request {clash[0]['id']} ({clash[0]['start']} to {clash[0]['end']})",
                type="overlapping_request",
            )
        if status == "approved":
            self._debit(e["id"], time_off_type_id, amount)
        r = self.requests.create(
            {
                "employee_id": e["id"],
                "type_id": time_off_type_id,
                "start": lo.isoformat(),
                "end": hi.isoformat(),
                "amount": float(amount),
                "status": status,
                "notes": notes or "",
                "created": self.clock.iso(),
            },
            id=self._new_id("request", 1000),
        )
        return _out(r, response_format)

    def _debit(self, emp: str, type_id: str, amount: float) -> None:
        b = self.balances.get(f"{emp}:{type_id}")
        if b is None:
            raise RuleViolation(
                "the employee has no policy for this time off type; assign one first", type="no_policy"
            )
        if b["balance"] < amount:
            raise RuleViolation(
                f"only {b['balance']} left of this time off type, {amount} requested",
                type="insufficient_balance",
            )
        self.balances.update(b["id"], {"balance": round(b["balance"] - amount, 2)})

    @tool(mutates=True)
    def bamboohr_change_time_off_request_status(
        self,
        request_id: str,
        status: Literal["approved", "denied", "canceled"],
        note: str | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Approve, deny, or cancel a time off request. Denial needs a note; approving takes the amount from the balance, canceling an approved request gives it back.

        Args:
            request_id: Time off request ID.
            status: approved, denied or canceled.
            note: Note explaining the decision (required for denial).
            response_format: Output format: 'json' or 'markdown'.
        """
        r = self.requests.require(request_id, "request_id")
        if status == "denied" and not (note or "").strip():
            raise InvalidArguments("a 'note' explaining the reason is required to deny a request")
        allowed = {"requested": {"approved", "denied", "canceled"}, "approved": {"canceled"}}
        if status not in allowed.get(r["status"], set()):
            raise RuleViolation(
                f"a {r['status']} request cannot become {status}", type="invalid_status_change"
            )
        if status == "approved":
            self._debit(r["employee_id"], r["type_id"], r["amount"])
        if status == "canceled" and r["status"] == "approved":
            b = self.balances.get(f"{r['employee_id']}:{r['type_id']}")
            self.balances.update(b["id"], {"balance": round(b["balance"] + r["amount"], 2)})
        return _out(
            self.requests.update(
                request_id,
                {"status": status, "notes": (r["notes"] + "\n" + note).strip() if note else r["notes"]},
            ),
            response_format,
        )

    @tool(mutates=True)
    def bamboohr_adjust_time_off_balance(
        self,
        employee_id: str,
        time_off_type_id: str,
        adjustment_amount: float,
        effective_date: str,
        note: str,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Adjust an employee's time off balance by a positive or negative amount (the balance cannot go negative).

        Args:
            employee_id: Employee ID.
            time_off_type_id: Time off type ID.
            adjustment_amount: Amount to add (negative to remove).
            effective_date: Date of the adjustment (YYYY-MM-DD).
            note: Why the balance changes.
            response_format: Output format: 'json' or 'markdown'.
        """
        e = self._emp(employee_id)
        _day(effective_date, "effective_date")
        if not note.strip():
            raise InvalidArguments("'note' must explain the adjustment")
        if adjustment_amount == 0:
            raise InvalidArguments("'adjustment_amount' must not be zero")
        b = self.balances.get(f"{e['id']}:{time_off_type_id}")
        if b is None:
            self.types.require(time_off_type_id, "time_off_type_id")
            raise RuleViolation(
                "the employee has no policy for this type; assign one first", type="no_policy"
            )
        new = round(b["balance"] + adjustment_amount, 2)
        if new < 0:
            raise RuleViolation(f"the balance would become {new}", type="insufficient_balance")
        return _out(self.balances.update(b["id"], {"balance": new}), response_format)

    @tool(mutates=True)
    def bamboohr_assign_time_off_policy(
        self,
        employee_id: str,
        time_off_type_id: str,
        accrual_start_date: str,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Assign the standard policy of a time off type to an employee who has none for it.

        Args:
            employee_id: Employee ID.
            time_off_type_id: Time off type ID.
            accrual_start_date: When accrual starts (YYYY-MM-DD).
            response_format: Output format: 'json' or 'markdown'.
        """
        e = self._emp(employee_id)
        t = self.types.require(time_off_type_id, "time_off_type_id")
        start = _day(accrual_start_date, "accrual_start_date").isoformat()
        key = f"{e['id']}:{t['id']}"
        if self.balances.get(key):
            raise Conflict(f"the employee already has a {t['name']} policy", type="policy_exists")
        return _out(
            self.balances.create(
                {
                    "employee_id": e["id"],
                    "type_id": t["id"],
                    "balance": 0.0,
                    "policy": f"{t['name']} standard",
                    "accrual_start_date": start,
                },
                id=key,
            ),
            response_format,
        )

    # ---- training -------------------------------------------------------------------
    @tool
    def bamboohr_get_training_types(self, response_format: Fmt = "markdown") -> Any:
        """List training types."""
        return _out({"trainingTypes": sorted(self.ttypes.all(), key=lambda t: t["id"])}, response_format)

    @tool
    def bamboohr_get_training_categories(self, response_format: Fmt = "markdown") -> Any:
        """List training categories."""
        return _out({"categories": sorted({t["category"] for t in self.ttypes.all()})}, response_format)

    @tool
    def bamboohr_get_training_records(
        self,
        employee_id: str | None = None,
        training_type_id: str | None = None,
        completed_after: str | None = None,
        completed_before: str | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """List training records, optionally by employee, type and completion dates.

        Args:
            employee_id: Only this employee.
            training_type_id: Only this training type.
            completed_after: Completed on or after (YYYY-MM-DD).
            completed_before: Completed on or before (YYYY-MM-DD).
            response_format: Output format: 'json' or 'markdown'.
        """
        emp = self._emp(employee_id)["id"] if employee_id else None
        lo = _day(completed_after, "completed_after").isoformat() if completed_after else ""
        hi = _day(completed_before, "completed_before").isoformat() if completed_before else "9999"
        recs = self.trainings.find(
            lambda r: lo <= r["completed"] <= hi, employee_id=emp, type_id=training_type_id
        )
        return _out({"records": sort_records(recs, "completed")}, response_format)

    @tool(mutates=True)
    def bamboohr_add_training_record(
        self,
        employee_id: str,
        training_type_id: str,
        completed_date: str,
        notes: str | None = None,
        cost: float | None = None,
        credits: float | None = None,
        hours: float | None = None,
        instructor: str | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Record a completed training (not in the future).

        Args:
            employee_id: Employee ID.
            training_type_id: Training type ID.
            completed_date: Completion date (YYYY-MM-DD).
            notes: Notes.
            cost: Cost.
            credits: Credits.
            hours: Hours.
            instructor: Instructor.
            response_format: Output format: 'json' or 'markdown'.
        """
        e = self._emp(employee_id)
        self.ttypes.require(training_type_id, "training_type_id")
        done = _day(completed_date, "completed_date")
        if done > self.clock.now().date():
            raise RuleViolation("a training cannot be completed in the future", type="future_completion")
        if any(x is not None and x < 0 for x in (cost, credits, hours)):
            raise InvalidArguments("cost, credits and hours must not be negative")
        return _out(
            self.trainings.create(
                {
                    "employee_id": e["id"],
                    "type_id": training_type_id,
                    "completed": done.isoformat(),
                    "notes": notes or "",
                    "cost": cost,
                    "credits": credits,
                    "hours": hours,
                    "instructor": instructor,
                },
                id=self._new_id("training", 3000),
            ),
            response_format,
        )

    @tool(mutates=True)
    def bamboohr_update_training_record(
        self,
        record_id: str,
        completed_date: str | None = None,
        notes: str | None = None,
        cost: float | None = None,
        credits: float | None = None,
        hours: float | None = None,
        instructor: str | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Update a training record.

        Args:
            record_id: Training record ID.
            completed_date: New completion date.
            notes: New notes.
            cost: New cost.
            credits: New credits.
            hours: New hours.
            instructor: New instructor.
            response_format: Output format: 'json' or 'markdown'.
        """
        self.trainings.require(record_id, "record_id")
        changes = {
            k: v
            for k, v in {
                "notes": notes,
                "cost": cost,
                "credits": credits,
                "hours": hours,
                "instructor": instructor,
            }.items()
            if v is not None
        }
        if completed_date is not None:
            done = _day(completed_date, "completed_date")
            if done > self.clock.now().date():
                raise RuleViolation("a training cannot be completed in the future", type="future_completion")
            changes["completed"] = done.isoformat()
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return _out(self.trainings.update(record_id, changes), response_format)

    @tool(mutates=True)
    def bamboohr_delete_training_record(
        self, record_id: str, confirm: bool, response_format: Fmt = "markdown"
    ) -> Any:
        """Delete a training record (confirm must be true).

        Args:
            record_id: Training record ID.
            confirm: Must be true to delete.
            response_format: Output format: 'json' or 'markdown'.
        """
        if not confirm:
            raise InvalidArguments("set 'confirm' to true to delete the record")
        self.trainings.delete(record_id)
        return _out({"deleted": record_id}, response_format)

    # ---- goals ----------------------------------------------------------------------
    def _goal(self, employee_id: str, goal_id: str) -> dict[str, Any]:
        e = self._emp(employee_id)
        g = self.goals.require(goal_id, "goal_id")
        if g["employee_id"] != e["id"]:
            raise NotFound(f"goal {goal_id} is not a goal of employee {e['id']}", type="goal_not_found")
        return g

    @tool
    def bamboohr_get_employee_goals(
        self,
        employee_id: str,
        status: Literal["in_progress", "completed", "closed"] | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """List an employee's goals.

        Args:
            employee_id: Employee ID.
            status: Only goals with this status.
            response_format: Output format: 'json' or 'markdown'.
        """
        e = self._emp(employee_id)
        return _out(
            {"goals": sort_records(self.goals.find(employee_id=e["id"], status=status), "due_date")},
            response_format,
        )

    @tool
    def bamboohr_get_goal(self, employee_id: str, goal_id: str, response_format: Fmt = "markdown") -> Any:
        """Get one goal of an employee.

        Args:
            employee_id: Employee ID.
            goal_id: Goal ID.
            response_format: Output format: 'json' or 'markdown'.
        """
        return _out(self._goal(employee_id, goal_id), response_format)

    @tool
    def bamboohr_get_goal_comments(
        self, employee_id: str, goal_id: str, response_format: Fmt = "markdown"
    ) -> Any:
        """List the comments of a goal.

        Args:
            employee_id: Employee ID.
            goal_id: Goal ID.
            response_format: Output format: 'json' or 'markdown'.
        """
        return _out({"comments": self._goal(employee_id, goal_id)["comments"]}, response_format)

    @tool(mutates=True)
    def bamboohr_create_goal(
        self,
        employee_id: str,
        title: str,
        description: str | None = None,
        due_date: str | None = None,
        percent_complete: float = 0,
        shared_with_employee: bool = True,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Create a goal for an employee.

        Args:
            employee_id: Employee ID.
            title: Goal title.
            description: Description.
            due_date: Due date (YYYY-MM-DD).
            percent_complete: Progress 0-100.
            shared_with_employee: Whether the employee sees it.
            response_format: Output format: 'json' or 'markdown'.
        """
        e = self._emp(employee_id)
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        if not 0 <= percent_complete <= 100:
            raise InvalidArguments("'percent_complete' must be between 0 and 100")
        return _out(
            self.goals.create(
                {
                    "employee_id": e["id"],
                    "title": title,
                    "description": description or "",
                    "due_date": _day(due_date, "due_date").isoformat() if due_date else None,
                    "percent_complete": int(percent_complete),
                    "shared": shared_with_employee,
                    "status": "completed" if percent_complete == 100 else "in_progress",
                },
                id=self._new_id("goal", 7000),
            ),
            response_format,
        )

    @tool(mutates=True)
    def bamboohr_update_goal(
        self,
        employee_id: str,
        goal_id: str,
        title: str | None = None,
        description: str | None = None,
        due_date: str | None = None,
        percent_complete: float | None = None,
        status: Literal["in_progress", "completed", "closed"] | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Update a goal. Completing it sets progress to 100; a closed goal cannot change.

        Args:
            employee_id: Employee ID.
            goal_id: Goal ID.
            title: New title.
            description: New description.
            due_date: New due date.
            percent_complete: New progress 0-100.
            status: in_progress, completed or closed.
            response_format: Output format: 'json' or 'markdown'.
        """
        g = self._goal(employee_id, goal_id)
        if g["status"] == "closed":
            raise RuleViolation("a closed goal cannot be changed", type="goal_closed")
        if percent_complete is not None and not 0 <= percent_complete <= 100:
            raise InvalidArguments("'percent_complete' must be between 0 and 100")
        changes: dict[str, Any] = {
            k: v
            for k, v in {"title": title, "description": description, "status": status}.items()
            if v is not None
        }
        if percent_complete is not None:
            changes["percent_complete"] = int(percent_complete)
        if due_date is not None:
            changes["due_date"] = _day(due_date, "due_date").isoformat()
        if status == "completed":
            changes["percent_complete"] = 100
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return _out(self.goals.update(goal_id, changes), response_format)

    @tool(mutates=True)
    def bamboohr_delete_goal(
        self, employee_id: str, goal_id: str, confirm: bool, response_format: Fmt = "markdown"
    ) -> Any:
        """Delete a goal (confirm must be true).

        Args:
            employee_id: Employee ID.
            goal_id: Goal ID.
            confirm: Must be true to delete.
            response_format: Output format: 'json' or 'markdown'.
        """
        self._goal(employee_id, goal_id)
        if not confirm:
            raise InvalidArguments("set 'confirm' to true to delete the goal")
        self.goals.delete(goal_id)
        return _out({"deleted": goal_id}, response_format)

    @tool(mutates=True)
    def bamboohr_add_goal_comment(
        self, employee_id: str, goal_id: str, comment: str, response_format: Fmt = "markdown"
    ) -> Any:
        """Comment on a goal.

        Args:
            employee_id: Employee ID.
            goal_id: Goal ID.
            comment: The comment.
            response_format: Output format: 'json' or 'markdown'.
        """
        g = self._goal(employee_id, goal_id)
        if not comment.strip():
            raise InvalidArguments("'comment' must not be empty")
        c = {"author": self.store.tables[META]["me"], "text": comment, "created": self.clock.iso()}
        return _out(
            self.goals.update(goal_id, {"comments": [*g["comments"], c]})["comments"][-1], response_format
        )

    # ---- hiring ---------------------------------------------------------------------
    @tool
    def bamboohr_get_job_summaries(
        self,
        status: Literal["Open", "Draft", "Filled", "Canceled", "All"] = "All",
        response_format: Fmt = "markdown",
    ) -> Any:
        """List job openings with their number of applications.

        Args:
            status: Only openings with this status (default All).
            response_format: Output format: 'json' or 'markdown'.
        """
        jobs = self.jobs.find(status=None if status == "All" else status)
        return _out(
            {
                "jobs": [
                    {**j, "applications": len(self.apps.find(job_id=j["id"]))}
                    for j in sorted(jobs, key=lambda j: j["id"])
                ]
            },
            response_format,
        )

    @tool
    def bamboohr_get_job_details(self, job_id: str, response_format: Fmt = "markdown") -> Any:
        """Get a job opening.

        Args:
            job_id: Job ID.
            response_format: Output format: 'json' or 'markdown'.
        """
        return _out(self.jobs.require(job_id, "job_id"), response_format)

    @tool
    def bamboohr_get_job_applications(
        self, job_id: str, status: str | None = None, response_format: Fmt = "markdown"
    ) -> Any:
        """List the applications of a job opening, optionally by status id or name.

        Args:
            job_id: Job ID.
            status: Status id or name (see bamboohr_get_application_statuses).
            response_format: Output format: 'json' or 'markdown'.
        """
        self.jobs.require(job_id, "job_id")
        sid = next((i for i, n in STATUSES if status in (i, n)), None) if status else None
        if status and sid is None:
            raise InvalidArguments(f"'status' {status!r} is not an application status")
        return _out(
            {"applications": sort_records(self.apps.find(job_id=job_id, status_id=sid), "applied")},
            response_format,
        )

    @tool
    def bamboohr_get_application_details(self, application_id: str, response_format: Fmt = "markdown") -> Any:
        """Get an application with its status and comments.

        Args:
            application_id: Application ID.
            response_format: Output format: 'json' or 'markdown'.
        """
        a = self.apps.require(application_id, "application_id")
        return _out({**a, "status": dict(STATUSES)[a["status_id"]]}, response_format)

    @tool
    def bamboohr_get_application_statuses(self, response_format: Fmt = "markdown") -> Any:
        """List the application statuses of the hiring pipeline."""
        return _out({"statuses": [{"id": i, "name": n} for i, n in STATUSES]}, response_format)

    @tool(mutates=True)
    def bamboohr_create_job_opening(
        self,
        title: str,
        department_id: str | None = None,
        location_id: str | None = None,
        description: str | None = None,
        minimum_experience: str | None = None,
        employment_status_id: str | None = None,
        hiring_lead_id: str | None = None,
        internal_job_code: str | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Create a job opening (status Open).

        Args:
            title: Job title.
            department_id: Department name.
            location_id: Location name.
            description: Job description.
            minimum_experience: Minimum experience.
            employment_status_id: Employment status (full-time, part-time, ...).
            hiring_lead_id: Employee ID of the hiring lead.
            internal_job_code: Internal code.
            response_format: Output format: 'json' or 'markdown'.
        """
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        if hiring_lead_id:
            self._emp(hiring_lead_id)
        return _out(
            self.jobs.create(
                {
                    "title": title,
                    "department": department_id or "",
                    "location": location_id or "",
                    "status": "Open",
                    "description": description or "",
                    "hiring_lead_id": hiring_lead_id,
                    "created": self.clock.iso(),
                },
                id=self._new_id("job", 40),
            ),
            response_format,
        )

    @tool(mutates=True)
    def bamboohr_create_candidate(
        self,
        job_id: str,
        first_name: str,
        last_name: str,
        email: str,
        phone: str | None = None,
        source: str | None = None,
        resume_text: str | None = None,
        cover_letter: str | None = None,
        response_format: Fmt = "markdown",
    ) -> Any:
        """Add a candidate's application to an open job (one application per email and job).

        Args:
            job_id: Job ID.
            first_name: First name.
            last_name: Last name.
            email: Email.
            phone: Phone.
            source: Where the candidate came from.
            resume_text: Resume as text.
            cover_letter: Cover letter.
            response_format: Output format: 'json' or 'markdown'.
        """
        j = self.jobs.require(job_id, "job_id")
        if j["status"] != "Open":
            raise RuleViolation(
                f"job {job_id} is {j['status']}, not open for applications", type="job_not_open"
            )
        mail = check_emails([email], "email")[0]
        if self.apps.find(lambda a: a["email"].lower() == mail, job_id=job_id):
            raise Conflict(f"{mail} already applied to this job", type="duplicate_application")
        if not first_name.strip() or not last_name.strip():
            raise InvalidArguments("'first_name' and 'last_name' must not be empty")
        return _out(
            self.apps.create(
                {
                    "job_id": job_id,
                    "first_name": first_name,
                    "last_name": last_name,
                    "email": mail,
                    "phone": phone,
                    "source": source,
                    "status_id": "1",
                    "resume_text": (resume_text or "") + (f"\n\n{cover_letter}" if cover_letter else ""),
                    "applied": self.clock.iso(),
                },
                id=self._new_id("app", 900),
            ),
            response_format,
        )

    @tool(mutates=True)
    def bamboohr_update_applicant_status(
        self, application_id: str, status_id: str, response_format: Fmt = "markdown"
    ) -> Any:
        """Move an application through the hiring pipeline (hired and rejected applications are final).

        Args:
            application_id: Application ID.
            status_id: New status ID (see bamboohr_get_application_statuses).
            response_format: Output format: 'json' or 'markdown'.
        """
        a = self.apps.require(application_id, "application_id")
        if status_id not in dict(STATUSES):
            raise InvalidArguments(
                f"'status_id' {status_id!r} is not a status; use one of {', '.join(dict(STATUSES))}"
            )
        if a["status_id"] in ("6", "7"):
            raise RuleViolation(
                f"the application is already {dict(STATUSES)[a['status_id']]}", type="application_closed"
            )
        if a["status_id"] == status_id:
            raise Conflict("the application already has this status", type="same_status")
        return _out(self.apps.update(application_id, {"status_id": status_id}), response_format)

    @tool(mutates=True)
    def bamboohr_add_application_comment(
        self, application_id: str, comment: str, response_format: Fmt = "markdown"
    ) -> Any:
        """Comment on an application.

        Args:
            application_id: Application ID.
            comment: The comment.
            response_format: Output format: 'json' or 'markdown'.
        """
        a = self.apps.require(application_id, "application_id")
        if not comment.strip():
            raise InvalidArguments("'comment' must not be empty")
        c = {"author": self.store.tables[META]["me"], "text": comment, "created": self.clock.iso()}
        return _out(
            self.apps.update(application_id, {"comments": [*a["comments"], c]})["comments"][-1],
            response_format,
        )
