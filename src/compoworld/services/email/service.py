"""Email service: a Gmail mailbox, modelled on klavis_gmail.json (Klavis Gmail MCP server).

All ten tools of the spec are modelled with their real names and parameters. Two label tools that
Gmail's API has and other Gmail MCP servers expose (`gmail_list_labels`, `gmail_create_label`) are
added, because `gmail_modify_email` takes label ids that an agent otherwise cannot discover.
"""

from __future__ import annotations

import re
import shlex
from datetime import datetime, timedelta
from typing import Any, Literal

from compoworld.core.clock import UTC, format_time
from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_emails, check_limit, norm
from compoworld.core.service import SeedContext, Service
from compoworld.core.state import META
from compoworld.core.tool import tool
from compoworld.services._contacts import search_contacts
from compoworld.services.email.seed import seed_email
from compoworld.services.email.state import EmailState

MimeType = Literal["text/plain", "text/html", "multipart/alternative"]
_PROTECTED = {"SENT", "DRAFT"}  # system labels Gmail does not let you add or remove by hand
_TOKEN = re.compile(r'(-?)(\w+):("[^"]*"|\S+)|(-?)"([^"]*)"|(\S+)')


def _summary(m: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": m["id"],
        "threadId": m["threadId"],
        "from": m["from"],
        "to": m["to"],
        "subject": m["subject"],
        "date": m["date"],
        "snippet": m["body"][:120],
        "labelIds": m["labelIds"],
    }


def _full(m: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in m.items() if k != "attachments"}
    out["messageId"] = m["id"]
    out["attachments"] = [
        {"filename": a["filename"], "mimeType": a["mimeType"], "size": a["size"]} for a in m["attachments"]
    ]
    return out


def _day(value: str, op: str) -> str:
    try:
        d = datetime.strptime(value.replace("-", "/"), "%Y/%m/%d").replace(tzinfo=UTC)
    except ValueError:
        raise InvalidArguments(f"'query': {op}: expects a date like 2026/03/01, got {value!r}") from None
    return format_time(d)


class EmailService(Service):
    """Gmail mailbox: search with Gmail query syntax, read threads, send, draft, label, delete."""

    name = "email"
    domain = "communication"
    spec = "klavis_gmail.json"
    state_model = EmailState

    def seed_data(self, ctx: SeedContext) -> None:
        self.store.put(META, "owner", ctx.company.me.email)
        seed_email(self, ctx)

    # ---- helpers ------------------------------------------------------------------------
    @property
    def _me(self) -> str:
        return self.store.tables[META]["owner"]

    def _compose(
        self,
        label: str,
        to: list[str],
        subject: str,
        body: str,
        htmlBody: str | None,
        mimeType: str,
        cc: list[str] | None,
        bcc: list[str] | None,
        threadId: str | None,
        inReplyTo: str | None,
    ) -> dict[str, Any]:
        if not to:
            raise InvalidArguments("'to' must list at least one recipient email address")
        rcpt = check_emails(to, "to")
        cc_l = check_emails(cc or [], "cc")
        bcc_l = check_emails(bcc or [], "bcc")
        if len(rcpt) + len(cc_l) + len(bcc_l) > 100:
            raise InvalidArguments("too many recipients: 'to', 'cc' and 'bcc' together allow at most 100")
        if len(subject) > 998:
            raise InvalidArguments("'subject' is longer than 998 characters")
        if mimeType != "text/plain" and not htmlBody:
            raise InvalidArguments(f"'htmlBody' is required when 'mimeType' is {mimeType!r}")
        if inReplyTo is not None:
            parent = self.require("messages", inReplyTo, "message")
            if threadId is not None and parent["threadId"] != threadId:
                raise RuleViolation(
                    f"message '{inReplyTo}' belongs to thread '{parent['threadId']}', not to '{threadId}'",
                    type="thread_mismatch",
                )
            threadId = parent["threadId"]
        elif threadId is not None and not self.store.lookup("messages", "threadId", threadId):
            raise NotFound(f"thread '{threadId}' not found", type="thread_not_found")
        msg_id = self.next_id("m", 16)
        record = {
            "id": msg_id,
            "threadId": threadId or self.next_id("t", 16),
            "from": self._me,
            "to": rcpt,
            "cc": cc_l,
            "bcc": bcc_l,
            "subject": subject,
            "body": body,
            "htmlBody": htmlBody,
            "mimeType": mimeType,
            "date": self.clock.iso(),
            "labelIds": [label],
            "inReplyTo": inReplyTo,
            "attachments": [],
        }
        self.insert("messages", record)
        return record

    def _labels_ok(self, add: list[str], remove: list[str]) -> None:
        labels = self.table("labels")
        for field, ids in (("addLabelIds", add), ("removeLabelIds", remove)):
            for lid in ids:
                if lid not in labels:
                    raise NotFound(
                        f"label '{lid}' in '{field}' not found; see gmail_list_labels", type="label_not_found"
                    )
                if lid in _PROTECTED:
                    raise RuleViolation(
                        f"system label '{lid}' cannot be added or removed by hand", type="label_protected"
                    )
        both = set(add) & set(remove)
        if both:
            raise InvalidArguments(f"label(s) {sorted(both)} are in both 'addLabelIds' and 'removeLabelIds'")

    def _relabel(self, msg: dict[str, Any], add: list[str], remove: list[str]) -> dict[str, Any]:
        labels = [lid for lid in msg["labelIds"] if lid not in remove]
        labels += [lid for lid in add if lid not in labels]
        return self.update("messages", msg["id"], labelIds=labels)

    def _search(self, query: str) -> list[dict[str, Any]]:
        filters = []
        labels_by_name = {norm(lab["name"]): lid for lid, lab in self.table("labels").items()}
        for neg1, key, val, neg2, phrase, word in _TOKEN.findall(query):
            if key:
                neg, key, val = bool(neg1), key.lower(), val.strip('"')
                filters.append((neg, self._filter(key, val, labels_by_name)))
            else:
                text = norm(phrase or word)
                if not text or text == "or":
                    continue
                neg = bool(neg2) or (word.startswith("-") and len(word) > 1)
                if word.startswith("-"):
                    text = text[1:]
                filters.append(
                    (
                        neg,
                        lambda m, t=text: (
                            t in norm(m["subject"]) or t in norm(m["body"]) or t in m["from"].lower()
                        ),
                    )
                )
        out = [m for m in self.table("messages").values() if all(f(m) != neg for neg, f in filters)]
        if "trash" not in query.lower() and "spam" not in query.lower():
            out = [m for m in out if "TRASH" not in m["labelIds"] and "SPAM" not in m["labelIds"]]
        out.sort(key=lambda m: (m["date"], m["id"]), reverse=True)
        return out

    def _filter(self, key: str, val: str, labels_by_name: dict[str, str]):
        v = norm(val)
        if key == "from":
            return lambda m: v in m["from"].lower()
        if key in ("to", "cc", "bcc"):
            return lambda m: any(v in a for a in m[key])
        if key == "subject":
            return lambda m: v in norm(m["subject"])
        if key in ("label", "in"):
            lid = labels_by_name.get(v) or labels_by_name.get(v.replace("-", " ")) or val.upper()
            if key == "in" and v == "anywhere":
                return lambda m: True
            return lambda m: lid in m["labelIds"]
        if key == "is":
            flag = {"unread": "UNREAD", "starred": "STARRED", "important": "IMPORTANT"}.get(v)
            if v == "read":
                return lambda m: "UNREAD" not in m["labelIds"]
            if flag is None:
                raise InvalidArguments(
                    f"'query': is:{val} is not supported (use unread, read, starred, important)"
                )
            return lambda m: flag in m["labelIds"]
        if key == "has":
            if v != "attachment":
                raise InvalidArguments(f"'query': has:{val} is not supported (use has:attachment)")
            return lambda m: bool(m["attachments"])
        if key == "filename":
            return lambda m: any(v in a["filename"].lower() for a in m["attachments"])
        if key in ("after", "before"):
            bound = _day(val, key)
            return (lambda m: m["date"] >= bound) if key == "after" else (lambda m: m["date"] < bound)
        if key in ("newer_than", "older_than"):
            m_ = re.fullmatch(r"(\d+)([dmy])", v)
            if not m_:
                raise InvalidArguments(f"'query': {key}: expects e.g. 7d, 2m or 1y, got {val!r}")
            days = int(m_.group(1)) * {"d": 1, "m": 30, "y": 365}[m_.group(2)]
            bound = format_time(self.clock.now() - timedelta(days=days))
            return (lambda m: m["date"] >= bound) if key == "newer_than" else (lambda m: m["date"] < bound)
        raise InvalidArguments(
            f"'query': operator {key}: is not supported; use from:, to:, cc:, subject:, label:, in:, is:, "
            "has:attachment, filename:, after:, before:, newer_than:, older_than:"
        )

    # ---- tools --------------------------------------------------------------------------
    @tool(mutates=True)
    def gmail_send_email(
        self,
        to: list[str],
        subject: str,
        body: str,
        htmlBody: str | None = None,
        mimeType: MimeType = "text/plain",
        cc: list[str] | None = None,
        bcc: list[str] | None = None,
        threadId: str | None = None,
        inReplyTo: str | None = None,
    ) -> dict[str, Any]:
        """Sends a new email. You MUST NOT assume the emails unless they are explicitly provided. You may use gmail_search_contacts tool to find contact emails.

        Args:
            to: List of recipient email addresses.
            subject: Email subject
            body: Email body content (used for text/plain or when htmlBody not provided)
            htmlBody: HTML version of the email body
            mimeType: Email content type
            cc: List of CC recipients.
            bcc: List of BCC recipients.
            threadId: Thread ID to reply to
            inReplyTo: Message ID being replied to
        """
        m = self._compose("SENT", to, subject, body, htmlBody, mimeType, cc, bcc, threadId, inReplyTo)
        return {"messageId": m["id"], "threadId": m["threadId"], "labelIds": m["labelIds"]}

    @tool(mutates=True)
    def gmail_draft_email(
        self,
        to: list[str],
        subject: str,
        body: str,
        htmlBody: str | None = None,
        mimeType: MimeType = "text/plain",
        cc: list[str] | None = None,
        bcc: list[str] | None = None,
        threadId: str | None = None,
        inReplyTo: str | None = None,
    ) -> dict[str, Any]:
        """Draft a new email

        Args:
            to: List of recipient email addresses.
            subject: Email subject
            body: Email body content (used for text/plain or when htmlBody not provided)
            htmlBody: HTML version of the email body
            mimeType: Email content type
            cc: List of CC recipients.
            bcc: List of BCC recipients.
            threadId: Thread ID to reply to
            inReplyTo: Message ID being replied to
        """
        m = self._compose("DRAFT", to, subject, body, htmlBody, mimeType, cc, bcc, threadId, inReplyTo)
        return {"draftId": m["id"], "messageId": m["id"], "threadId": m["threadId"]}

    @tool
    def gmail_read_email(self, messageId: str) -> dict[str, Any]:
        """Retrieves the content of a specific email and all messages in its thread, oldest first.

        Args:
            messageId: ID of the email message to retrieve
        """
        msg = self.require("messages", messageId, "message")
        thread = self.store.lookup("messages", "threadId", msg["threadId"])  # indexed, in table order
        thread.sort(key=lambda m: (m["date"], m["id"]))
        return {"messageId": messageId, "threadId": msg["threadId"], "messages": [_full(m) for m in thread]}

    @tool
    def gmail_search_emails(self, query: str, maxResults: int = 10) -> dict[str, Any]:
        """Searches for emails using Gmail search syntax (from:, to:, subject:, label:, is:unread, has:attachment, after:2026/03/01, before:, newer_than:7d, "exact phrase", -excluded), newest first.

        Args:
            query: Gmail search query (e.g., 'from:example@gmail.com')
            maxResults: Maximum number of results to return
        """
        check_limit(maxResults, "maxResults", 1, 500)
        try:
            shlex.split(query)
        except ValueError:
            raise InvalidArguments("'query' has an unbalanced quote") from None
        hits = self._search(query)
        return {"messages": [_summary(m) for m in hits[:maxResults]], "resultSizeEstimate": len(hits)}

    @tool(mutates=True)
    def gmail_modify_email(
        self, messageId: str, addLabelIds: list[str] | None = None, removeLabelIds: list[str] | None = None
    ) -> dict[str, Any]:
        """Modifies email labels (move to different folders)

        Args:
            messageId: ID of the email message to modify
            addLabelIds: List of label IDs to add to the message
            removeLabelIds: List of label IDs to remove from the message
        """
        msg = self.require("messages", messageId, "message")
        add, remove = addLabelIds or [], removeLabelIds or []
        self._labels_ok(add, remove)
        new = self._relabel(msg, add, remove)
        return {"messageId": messageId, "labelIds": new["labelIds"]}

    @tool(mutates=True)
    def gmail_delete_email(self, messageId: str) -> dict[str, Any]:
        """Permanently deletes an email

        Args:
            messageId: ID of the email message to delete
        """
        self.remove("messages", messageId)
        return {"deleted": messageId}

    @tool(mutates=True)
    def gmail_batch_modify_emails(
        self,
        messageIds: list[str],
        addLabelIds: list[str] | None = None,
        removeLabelIds: list[str] | None = None,
        batchSize: int = 50,
    ) -> dict[str, Any]:
        """Modifies labels for multiple emails in batches. All ids must exist, or nothing changes.

        Args:
            messageIds: List of message IDs to modify
            addLabelIds: List of label IDs to add to all messages
            removeLabelIds: List of label IDs to remove from all messages
            batchSize: Number of messages to process in each batch (default: 50)
        """
        check_limit(batchSize, "batchSize", 1, 1000)
        if not messageIds:
            raise InvalidArguments("'messageIds' must list at least one message id")
        missing = [i for i in messageIds if i not in self.table("messages")]
        if missing:
            raise NotFound(f"messages not found: {', '.join(missing[:10])}", type="message_not_found")
        add, remove = addLabelIds or [], removeLabelIds or []
        self._labels_ok(add, remove)
        for mid in dict.fromkeys(messageIds):
            self._relabel(self.table("messages")[mid], add, remove)
        n = len(dict.fromkeys(messageIds))
        return {"modified": n, "batches": -(-n // batchSize)}

    @tool(mutates=True)
    def gmail_batch_delete_emails(self, messageIds: list[str], batchSize: int = 50) -> dict[str, Any]:
        """Permanently deletes multiple emails in batches. All ids must exist, or nothing is deleted.

        Args:
            messageIds: List of message IDs to delete
            batchSize: Number of messages to process in each batch (default: 50)
        """
        check_limit(batchSize, "batchSize", 1, 1000)
        if not messageIds:
            raise InvalidArguments("'messageIds' must list at least one message id")
        missing = [i for i in messageIds if i not in self.table("messages")]
        if missing:
            raise NotFound(f"messages not found: {', '.join(missing[:10])}", type="message_not_found")
        ids = list(dict.fromkeys(messageIds))
        for mid in ids:
            self.remove("messages", mid)
        return {"deleted": len(ids), "batches": -(-len(ids) // batchSize)}

    @tool
    def gmail_get_email_attachments(self, messageId: str) -> dict[str, Any]:
        """Returns attachments for an email by message ID, with their extracted text.

        Args:
            messageId: ID of the email message to retrieve attachments for
        """
        msg = self.require("messages", messageId, "message")
        return {"messageId": messageId, "attachments": [dict(a) for a in msg["attachments"]]}

    @tool
    def gmail_search_contacts(
        self,
        query: str,
        contactType: Literal["all", "personal", "other", "directory"] = "all",
        pageSize: int = 10,
        pageToken: str | None = None,
        directorySources: Literal["UNSPECIFIED", "DOMAIN_DIRECTORY", "DOMAIN_CONTACTS"] = "UNSPECIFIED",
    ) -> dict[str, Any]:
        """Search for contacts when you need to know the contact details. Supports searching personal contacts, other contact sources, domain directory, or all sources.

        Args:
            query: The plain-text search query for contact names, email addresses, phone numbers, etc.
            contactType: Type of contacts to search: 'all', 'personal', 'other' or 'directory'.
            pageSize: Number of results to return. For personal/other: max 30, for directory: max 500
            pageToken: Page token for pagination (used with directory searches)
            directorySources: Directory sources to search (only used for directory type)
        """
        return search_contacts(
            self.table("contacts"), query, contactType, pageSize, pageToken, directorySources
        )

    @tool
    def gmail_list_labels(self) -> dict[str, Any]:
        """Lists all labels of the mailbox (system and user labels) with their ids and message counts."""
        counts: dict[str, int] = {}
        for m in self.table("messages").values():
            for lid in m["labelIds"]:
                counts[lid] = counts.get(lid, 0) + 1
        labels = sorted(self.table("labels").values(), key=lambda lab: (lab["type"], lab["id"]))
        return {"labels": [{**lab, "messagesTotal": counts.get(lab["id"], 0)} for lab in labels]}

    @tool(mutates=True)
    def gmail_create_label(self, name: str) -> dict[str, Any]:
        """Creates a new user label.

        Args:
            name: Display name of the label; must be unique (case-insensitive).
        """
        name = name.strip()
        if not name or len(name) > 225:
            raise InvalidArguments("'name' must be 1 to 225 characters")
        if any(norm(lab["name"]) == norm(name) for lab in self.table("labels").values()):
            raise Conflict(f"a label named '{name}' already exists", type="label_exists")
        n = len(self.table("labels")) + 1
        while f"Label_{n}" in self.table("labels"):
            n += 1
        lid = f"Label_{n}"
        return dict(self.insert("labels", {"id": lid, "name": name, "type": "user"}))
