"""Telephony: SMS and voice calls in the style of Twilio's Messaging and Voice APIs.

No spec in shared/mcp-specs covers telephony, so tool and parameter names follow Twilio's REST
resources (Messages, Calls, IncomingPhoneNumbers, Lookup). Numbers are E.164; a message is sent
from one of the account's numbers; a recipient who replied STOP is refused (Twilio error 21610);
bodies over 1600 characters are refused (21617); only a live call can be ended.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from compoworld.core.envelope import InvalidArguments, RuleViolation
from compoworld.core.query import check_limit, paginate, parse_datetime_arg
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.services.sms.seed import seed_sms
from compoworld.services.sms.state import Call, Message, OptOut, PhoneNumber

_E164 = re.compile(r"^\+[1-9]\d{7,14}$")


def _number(value: str, field: str) -> str:
    v = re.sub(r"[\s().-]", "", value or "")
    if not _E164.match(v):
        raise InvalidArguments(
            f"'{field}' {value!r} is not an E.164 phone number such as '+15551234567'",
            type="invalid_phone_number",
        )
    return v


class SmsService(Service):
    """Twilio-style SMS and voice: send and read messages, place and end calls, look up numbers."""

    name = "sms"
    domain = "communication"

    numbers = Resource("phone_numbers", PhoneNumber, label="phone number")
    messages = Resource("messages", Message)
    calls = Resource("calls", Call)
    optouts = Resource("opt_outs", OptOut, label="opt-out")

    def seed_data(self, ctx: SeedContext) -> None:
        seed_sms(self, ctx)

    def _sid(self, prefix: str) -> str:
        return prefix + self.next_id("", 32)

    def _from(self, from_number: str | None) -> str:
        if from_number is None:
            return sorted(self.numbers.all(), key=lambda n: n["phone_number"])[0]["phone_number"]
        num = _number(from_number, "from_number")
        if not self.store.lookup("phone_numbers", "phone_number", num):
            raise RuleViolation(
                f"{num} is not a number of this account; see list_phone_numbers", type="from_not_owned"
            )
        return num

    @tool(mutates=True)
    def send_sms(self, to: str, body: str, from_number: str | None = None) -> dict[str, Any]:
        """Send an SMS from one of the account's numbers (default: the main line).

        Args:
            to: Recipient in E.164, e.g. '+15551234567'.
            body: Message text (at most 1600 characters).
            from_number: One of the account's numbers (see list_phone_numbers).
        """
        dest = _number(to, "to")
        if not body.strip():
            raise InvalidArguments("'body' must not be empty", type="empty_body")
        if len(body) > 1600:
            raise InvalidArguments("'body' exceeds 1600 characters (Twilio 21617)", type="body_too_long")
        src = self._from(from_number)
        if dest == src:
            raise RuleViolation("'to' and 'from' are the same number (Twilio 21266)", type="same_to_from")
        if self.optouts.get(dest):
            raise RuleViolation(
                f"{dest} has replied STOP and unsubscribed (Twilio 21610)", type="recipient_unsubscribed"
            )
        segments = 1 + (len(body) - 1) // 153 if len(body) > 160 else 1
        return self.messages.create(
            {
                "to": dest,
                "from_": src,
                "body": body,
                "direction": "outbound-api",
                "status": "sent",
                "date_sent": self.clock.iso(),
                "num_segments": segments,
            },
            id=self._sid("SM"),
        )

    @tool
    def list_messages(
        self,
        to: str | None = None,
        from_number: str | None = None,
        date_sent_after: str | None = None,
        page_size: int = 50,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        """List messages, newest first, optionally by recipient, sender and date.

        Args:
            to: Only messages to this number.
            from_number: Only messages from this number.
            date_sent_after: Only messages sent after this time (ISO 8601).
            page_size: Page size (max 1000).
            page_token: Token of the next page.
        """
        check_limit(page_size, "page_size", 1, 1000)
        dest = _number(to, "to") if to else None
        src = _number(from_number, "from_number") if from_number else None
        after = (
            parse_datetime_arg(date_sent_after, "date_sent_after").strftime("%Y-%m-%dT%H:%M:%SZ")
            if date_sent_after
            else ""
        )
        recs = sort_records(
            self.messages.find(lambda m: m["date_sent"] > after, to=dest, from_=src),
            "date_sent",
            descending=True,
        )
        page, nxt = paginate(recs, page_token, page_size, "page_token")
        return {"messages": page, "next_page_token": nxt}

    @tool
    def get_message(self, sid: str) -> dict[str, Any]:
        """Get a message by its SID (SM...).

        Args:
            sid: The message SID.
        """
        return self.messages.require(sid, "sid")

    @tool(mutates=True)
    def delete_message(self, sid: str) -> dict[str, Any]:
        """Delete a message record from the account's logs.

        Args:
            sid: The message SID.
        """
        self.messages.delete(sid)
        return {"deleted": sid}

    @tool(mutates=True)
    def make_call(self, to: str, from_number: str | None = None, twiml: str | None = None) -> dict[str, Any]:
        """Place an outbound call; it is ringing until ended with end_call.

        Args:
            to: Number to call in E.164.
            from_number: One of the account's numbers.
            twiml: TwiML instructions for the call (e.g. <Response><Say>Hello</Say></Response>).
        """
        dest = _number(to, "to")
        src = self._from(from_number)
        if twiml is not None and not twiml.strip().startswith("<Response"):
            raise InvalidArguments("'twiml' must be a <Response> document")
        live = self.calls.find(lambda c: c["status"] in ("queued", "ringing", "in-progress"), to=dest)
        if live:
            raise RuleViolation(
                f"a call to {dest} is already active ({live[0]['id']})", type="call_in_progress"
            )
        return self.calls.create(
            {
                "to": dest,
                "from_": src,
                "direction": "outbound-api",
                "status": "ringing",
                "start_time": self.clock.iso(),
            },
            id=self._sid("CA"),
        )

    @tool
    def list_calls(
        self,
        to: str | None = None,
        status: Literal["queued", "ringing", "in-progress", "completed", "busy", "no-answer", "canceled"]
        | None = None,
        page_size: int = 50,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        """List calls, newest first.

        Args:
            to: Only calls to this number.
            status: Only calls with this status.
            page_size: Page size (max 1000).
            page_token: Token of the next page.
        """
        check_limit(page_size, "page_size", 1, 1000)
        dest = _number(to, "to") if to else None
        page, nxt = paginate(
            sort_records(self.calls.find(to=dest, status=status), "start_time", descending=True),
            page_token,
            page_size,
            "page_token",
        )
        return {"calls": page, "next_page_token": nxt}

    @tool
    def get_call(self, sid: str) -> dict[str, Any]:
        """Get a call by its SID (CA...).

        Args:
            sid: The call SID.
        """
        return self.calls.require(sid, "sid")

    @tool(mutates=True)
    def end_call(self, sid: str) -> dict[str, Any]:
        """End a live call (ringing calls are canceled, answered ones completed).

        Args:
            sid: The call SID.
        """
        c = self.calls.require(sid, "sid")
        if c["status"] not in ("queued", "ringing", "in-progress"):
            raise RuleViolation(f"call {sid} is already {c['status']}", type="call_not_live")
        return self.calls.update(
            sid, {"status": "canceled" if c["status"] in ("queued", "ringing") else "completed"}
        )

    @tool
    def list_phone_numbers(self) -> list[dict[str, Any]]:
        """List the account's phone numbers and what they can do."""
        return sort_records(self.numbers.all(), "phone_number")

    @tool
    def lookup_phone_number(self, phone_number: str) -> dict[str, Any]:
        """Look up a number: its normalised form, country code, and whether it opted out of SMS.

        Args:
            phone_number: The number to look up.
        """
        num = _number(phone_number, "phone_number")
        last = sort_records(
            self.messages.find(lambda m: num in (m["to"], m["from_"])), "date_sent", descending=True
        )
        return {
            "phone_number": num,
            "country_code": "US" if num.startswith("+1") else "unknown",
            "valid": True,
            "sms_opted_out": self.optouts.get(num) is not None,
            "last_message": last[0]["date_sent"] if last else None,
        }
