"""Marketing campaigns: Mailchimp, modelled on klavis_mailchimp.json (Klavis Mailchimp MCP server).

All 22 tools of the spec are modelled with their real names and parameters. Members are keyed by
Mailchimp's subscriber hash (md5 of the lower-cased email); a campaign needs content and a
subscribed audience before it is sent, is sent once, and can be scheduled only in the future on a
quarter hour (as Mailchimp requires).
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from compoworld.core.envelope import Conflict, InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_emails, check_limit, parse_datetime_arg
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.services.marketing.seed import seed_marketing
from compoworld.services.marketing.state import Audience, Campaign, Member

Status = Literal["subscribed", "unsubscribed", "cleaned", "pending", "transactional"]
CONTACT_KEYS = {"company", "address1", "city", "state", "zip", "country"}


def subscriber_hash(email: str) -> str:
    return hashlib.md5(email.strip().lower().encode()).hexdigest()  # noqa: S324 (Mailchimp's own id scheme)


class MarketingService(Service):
    """Mailchimp: audiences, members with tags and activity, and email campaigns."""

    name = "marketing"
    domain = "marketing"
    spec = "klavis_mailchimp.json"

    audiences = Resource("audiences", Audience, label="audience", width=10)
    members = Resource("members", Member)
    campaigns = Resource("campaigns", Campaign, width=10)

    def seed_data(self, ctx: SeedContext) -> None:
        seed_marketing(self, ctx)

    def _add_member(
        self, list_id: str, email: str, status: str, merge: dict[str, str], tags: list[str], when: str
    ) -> dict[str, Any]:
        return self.members.create(
            {
                "list_id": list_id,
                "email_address": email.lower(),
                "status": status,
                "merge_fields": merge,
                "tags": tags,
                "timestamp_signup": when,
                "last_changed": when,
            },
            id=f"{list_id}:{subscriber_hash(email)}",
        )

    def _deliver(self, camp: dict[str, Any], when: str) -> int:
        n = 0
        for m in self.members.find(list_id=camp["list_id"], status="subscribed"):
            self.members.update(
                m["id"],
                {
                    "activity": [
                        *m["activity"],
                        {"action": "sent", "campaign_id": camp["id"], "timestamp": when},
                    ]
                },
            )
            n += 1
        self.campaigns.update(camp["id"], {"emails_sent": n})
        return n

    def _member(self, list_id: str, email_address: str) -> dict[str, Any]:
        self.audiences.require(list_id, "list_id")
        m = self.members.get(f"{list_id}:{subscriber_hash(email_address)}")
        if m is None:
            raise NotFound(f"{email_address} is not a member of audience {list_id}", type="member_not_found")
        return m

    def _audience_fields(
        self, contact, permission_reminder, from_name, from_email, subject
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if contact is not None:
            missing = {"company", "address1", "city", "country"} - set(contact)
            bad = set(contact) - CONTACT_KEYS - {"address2", "phone"}
            if missing or bad:
                raise InvalidArguments(
                    f"'contact' needs company, address1, city, country; missing {sorted(missing)}, unknown {sorted(bad)}"
                )
            out["contact"] = {k: str(v) for k, v in contact.items()}
        if from_email is not None:
            out["from_email"] = check_emails([from_email], "from_email")[0]
        for k, v in (
            ("permission_reminder", permission_reminder),
            ("from_name", from_name),
            ("subject", subject),
        ):
            if v is not None:
                if not v.strip():
                    raise InvalidArguments(f"'{k}' must not be empty")
                out[k] = v
        return out

    # ---- account --------------------------------------------------------------------
    @tool
    def mailchimp_ping(self) -> dict[str, Any]:
        """Check that the Mailchimp API is reachable."""
        return {"health_status": "Everything's Chimpy!"}

    @tool
    def mailchimp_get_account_info(self) -> dict[str, Any]:
        """Get account details: name, totals of audiences, members and campaigns."""
        return {
            "account_name": "Marketing",
            "total_audiences": len(self.audiences.rows),
            "total_subscribers": sum(m["status"] == "subscribed" for m in self.members.all()),
            "total_campaigns": len(self.campaigns.rows),
        }

    # ---- audiences ------------------------------------------------------------------
    @tool
    def mailchimp_get_all_audiences(self, count: int = 10, offset: int = 0) -> dict[str, Any]:
        """Get all audiences (lists) with their member counts.

        Args:
            count: Number of audiences to return (max 1000).
            offset: Number of audiences to skip.
        """
        check_limit(count, "count", 1, 1000)
        check_limit(offset, "offset", 0, 10**6)
        recs = sort_records(self.audiences.all(), "date_created")
        out = [
            {**a, "stats": {"member_count": len(self.members.find(list_id=a["id"], status="subscribed"))}}
            for a in recs[offset : offset + count]
        ]
        return {"lists": out, "total_items": len(recs)}

    @tool(mutates=True)
    def mailchimp_create_audience(
        self,
        name: str,
        contact: dict[str, str],
        permission_reminder: str,
        from_name: str,
        from_email: str,
        subject: str,
        language: str = "en",
        email_type_option: bool = False,
        double_optin: bool = False,
        has_welcome: bool = False,
    ) -> dict[str, Any]:
        """Create an audience (list).

        Args:
            name: The audience name.
            contact: The sender's postal contact: company, address1, city, state, zip, country.
            permission_reminder: Why recipients are on this list.
            from_name: Default from name of campaigns.
            from_email: Default from email of campaigns.
            subject: Default subject of campaigns.
            language: Default language.
            email_type_option: Let members choose HTML or plain text.
            double_optin: Require a confirmation email.
            has_welcome: Send a welcome email.
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        fields = self._audience_fields(contact, permission_reminder, from_name, from_email, subject)
        return self.audiences.create(
            {
                "name": name,
                **fields,
                "language": language,
                "email_type_option": email_type_option,
                "double_optin": double_optin,
                "has_welcome": has_welcome,
                "date_created": self.clock.iso(),
            }
        )

    @tool
    def mailchimp_get_audience_info(self, list_id: str) -> dict[str, Any]:
        """Get an audience with its member counts by status.

        Args:
            list_id: The audience (list) ID.
        """
        a = self.audiences.require(list_id, "list_id")
        counts: dict[str, int] = {}
        for m in self.members.find(list_id=list_id):
            counts[m["status"]] = counts.get(m["status"], 0) + 1
        return {**a, "stats": counts}

    @tool(mutates=True)
    def mailchimp_update_audience(
        self,
        list_id: str,
        name: str | None = None,
        contact: dict[str, str] | None = None,
        permission_reminder: str | None = None,
        from_name: str | None = None,
        from_email: str | None = None,
        subject: str | None = None,
        language: str | None = None,
        email_type_option: bool | None = None,
        double_optin: bool | None = None,
        has_welcome: bool | None = None,
    ) -> dict[str, Any]:
        """Update an audience's settings.

        Args:
            list_id: The audience ID.
            name: New name.
            contact: New postal contact.
            permission_reminder: New permission reminder.
            from_name: New default from name.
            from_email: New default from email.
            subject: New default subject.
            language: New language.
            email_type_option: New email type option.
            double_optin: New double opt-in setting.
            has_welcome: New welcome setting.
        """
        self.audiences.require(list_id, "list_id")
        if name is not None and not name.strip():
            raise InvalidArguments("'name' must not be empty")
        changes = {
            **self._audience_fields(contact, permission_reminder, from_name, from_email, subject),
            **{
                k: v
                for k, v in {
                    "name": name,
                    "language": language,
                    "email_type_option": email_type_option,
                    "double_optin": double_optin,
                    "has_welcome": has_welcome,
                }.items()
                if v is not None
            },
        }
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self.audiences.update(list_id, changes)

    @tool(mutates=True)
    def mailchimp_delete_audience(self, list_id: str) -> dict[str, Any]:
        """Delete an audience with all its members (campaigns that target it cannot be sent any more).

        Args:
            list_id: The audience ID.
        """
        self.audiences.require(list_id, "list_id")
        for m in self.members.find(list_id=list_id):
            self.members.delete(m["id"])
        self.audiences.delete(list_id)
        return {"deleted": list_id}

    # ---- members --------------------------------------------------------------------
    @tool
    def mailchimp_get_audience_members(
        self,
        list_id: str,
        count: int = 10,
        offset: int = 0,
        status: Status | None = None,
        since_timestamp_opt: str | None = None,
    ) -> dict[str, Any]:
        """List the members of an audience, optionally by status.

        Args:
            list_id: The audience ID.
            count: Number of members to return (max 1000).
            offset: Number of members to skip.
            status: Only members with this status.
            since_timestamp_opt: Only members who opted in since this time (ISO 8601).
        """
        self.audiences.require(list_id, "list_id")
        check_limit(count, "count", 1, 1000)
        check_limit(offset, "offset", 0, 10**6)
        since = (
            parse_datetime_arg(since_timestamp_opt, "since_timestamp_opt").strftime("%Y-%m-%dT%H:%M:%SZ")
            if since_timestamp_opt
            else ""
        )
        recs = sorted(
            self.members.find(
                lambda m: (m["timestamp_signup"] or "") >= since, list_id=list_id, status=status
            ),
            key=lambda m: m["email_address"],
        )
        return {
            "members": [
                {k: v for k, v in m.items() if k != "activity"} for m in recs[offset : offset + count]
            ],
            "total_items": len(recs),
        }

    @tool(mutates=True)
    def mailchimp_add_member_to_audience(
        self,
        list_id: str,
        email_address: str,
        status: Status = "subscribed",
        merge_fields: dict[str, str] | None = None,
        interests: dict[str, bool] | None = None,
        language: str | None = None,
        vip: bool = False,
        tags: list[str] | None = None,
        ip_signup: str | None = None,
        timestamp_signup: str | None = None,
        ip_opt: str | None = None,
        timestamp_opt: str | None = None,
    ) -> dict[str, Any]:
        """Add a member to an audience. An address already on the list is a conflict ("Member Exists").

        Args:
            list_id: The audience ID.
            email_address: The member's email.
            status: subscribed, unsubscribed, cleaned, pending or transactional.
            merge_fields: Merge fields such as FNAME, LNAME.
            interests: Interest ids mapped to true/false.
            language: The member's language.
            vip: VIP status.
            tags: Tags to apply.
            ip_signup: Signup IP.
            timestamp_signup: Signup time (ISO 8601).
            ip_opt: Opt-in IP.
            timestamp_opt: Opt-in time.
        """
        a = self.audiences.require(list_id, "list_id")
        email = check_emails([email_address], "email_address")[0]
        if self.members.get(f"{list_id}:{subscriber_hash(email)}"):
            raise Conflict(f"{email} is already a list member", type="member_exists")
        if status == "subscribed" and a["double_optin"]:
            status = "pending"
        m = self._add_member(
            list_id,
            email,
            status,
            {k: str(v) for k, v in (merge_fields or {}).items()},
            list(dict.fromkeys(tags or [])),
            self.clock.iso(),
        )
        return self.members.update(
            m["id"], {"interests": interests or {}, "language": language or "", "vip": vip}
        )

    @tool
    def mailchimp_get_member_info(self, list_id: str, email_address: str) -> dict[str, Any]:
        """Get a member of an audience by email.

        Args:
            list_id: The audience ID.
            email_address: The member's email.
        """
        m = self._member(list_id, email_address)
        return {
            **{k: v for k, v in m.items() if k != "activity"},
            "subscriber_hash": subscriber_hash(email_address),
        }

    @tool(mutates=True)
    def mailchimp_update_member(
        self,
        list_id: str,
        email_address: str,
        status: Status | None = None,
        merge_fields: dict[str, str] | None = None,
        interests: dict[str, bool] | None = None,
        language: str | None = None,
        vip: bool | None = None,
        ip_opt: str | None = None,
        timestamp_opt: str | None = None,
    ) -> dict[str, Any]:
        """Update a member: status, merge fields, interests, language or VIP. A cleaned address cannot be resubscribed.

        Args:
            list_id: The audience ID.
            email_address: The member's email.
            status: New status.
            merge_fields: Merge fields to set (merged into existing ones).
            interests: Interests to set.
            language: New language.
            vip: New VIP status.
            ip_opt: Opt-in IP.
            timestamp_opt: Opt-in time.
        """
        m = self._member(list_id, email_address)
        if status == "subscribed" and m["status"] == "cleaned":
            raise RuleViolation(
                f"{email_address} bounced and was cleaned; it cannot be resubscribed", type="member_cleaned"
            )
        changes: dict[str, Any] = {
            k: v for k, v in {"status": status, "language": language, "vip": vip}.items() if v is not None
        }
        if merge_fields:
            changes["merge_fields"] = {**m["merge_fields"], **{k: str(v) for k, v in merge_fields.items()}}
        if interests:
            changes["interests"] = {**m["interests"], **interests}
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self.members.update(m["id"], {**changes, "last_changed": self.clock.iso()})

    @tool(mutates=True)
    def mailchimp_delete_member(self, list_id: str, email_address: str) -> dict[str, Any]:
        """Permanently delete a member from an audience.

        Args:
            list_id: The audience ID.
            email_address: The member's email.
        """
        m = self._member(list_id, email_address)
        self.members.delete(m["id"])
        return {"deleted": email_address}

    @tool(mutates=True)
    def mailchimp_add_member_tags(self, list_id: str, email_address: str, tags: list[str]) -> dict[str, Any]:
        """Add tags to a member.

        Args:
            list_id: The audience ID.
            email_address: The member's email.
            tags: Tags to add.
        """
        m = self._member(list_id, email_address)
        if not tags or any(not t.strip() for t in tags):
            raise InvalidArguments("'tags' must list at least one non-empty tag")
        new = [t for t in dict.fromkeys(tags) if t not in m["tags"]]
        if not new:
            raise Conflict("the member already has every one of these tags", type="tags_exist")
        return {"tags": self.members.update(m["id"], {"tags": [*m["tags"], *new]})["tags"]}

    @tool(mutates=True)
    def mailchimp_remove_member_tags(
        self, list_id: str, email_address: str, tags: list[str]
    ) -> dict[str, Any]:
        """Remove tags from a member.

        Args:
            list_id: The audience ID.
            email_address: The member's email.
            tags: Tags to remove.
        """
        m = self._member(list_id, email_address)
        absent = [t for t in tags if t not in m["tags"]]
        if not tags or absent:
            raise RuleViolation(
                f"the member does not have tag(s): {', '.join(absent) or '(none given)'}",
                type="tag_not_found",
            )
        return {
            "tags": self.members.update(m["id"], {"tags": [t for t in m["tags"] if t not in tags]})["tags"]
        }

    @tool
    def mailchimp_get_member_activity(
        self, list_id: str, email_address: str, count: int = 10
    ) -> dict[str, Any]:
        """Get a member's recent activity (campaigns sent to them), newest first.

        Args:
            list_id: The audience ID.
            email_address: The member's email.
            count: Number of events (max 50).
        """
        check_limit(count, "count", 1, 50)
        m = self._member(list_id, email_address)
        return {"activity": sorted(m["activity"], key=lambda e: e["timestamp"], reverse=True)[:count]}

    # ---- campaigns ------------------------------------------------------------------
    @tool
    def mailchimp_get_all_campaigns(
        self,
        count: int = 10,
        offset: int = 0,
        type: Literal["regular", "plaintext", "absplit", "rss", "variate"] | None = None,
        status: Literal["save", "paused", "schedule", "sending", "sent"] | None = None,
        before_send_time: str | None = None,
        since_send_time: str | None = None,
        before_create_time: str | None = None,
        since_create_time: str | None = None,
        list_id: str | None = None,
        folder_id: str | None = None,
        sort_field: Literal["create_time", "send_time"] = "create_time",
        sort_dir: Literal["ASC", "DESC"] = "DESC",
    ) -> dict[str, Any]:
        """List campaigns with filters on type, status, audience and times.

        Args:
            count: Number of campaigns (max 1000).
            offset: Number to skip.
            type: Campaign type.
            status: save, paused, schedule, sending or sent.
            before_send_time: Sent before this time.
            since_send_time: Sent since this time.
            before_create_time: Created before this time.
            since_create_time: Created since this time.
            list_id: Only campaigns of this audience.
            folder_id: Only campaigns in this folder.
            sort_field: create_time or send_time.
            sort_dir: ASC or DESC.
        """
        check_limit(count, "count", 1, 1000)
        check_limit(offset, "offset", 0, 10**6)
        b = {
            k: parse_datetime_arg(v, k).strftime("%Y-%m-%dT%H:%M:%SZ")
            for k, v in (
                ("before_send_time", before_send_time),
                ("since_send_time", since_send_time),
                ("before_create_time", before_create_time),
                ("since_create_time", since_create_time),
            )
            if v
        }
        recs = self.campaigns.find(
            lambda c: (
                (c["send_time"] or "9") < b.get("before_send_time", "99")
                and (c["send_time"] or "") >= b.get("since_send_time", "")
                and c["create_time"] < b.get("before_create_time", "9")
                and c["create_time"] >= b.get("since_create_time", "")
            ),
            type=type,
            status=status,
            list_id=list_id,
            folder_id=folder_id,
        )
        recs = sort_records(recs, sort_field, descending=sort_dir == "DESC")
        return {"campaigns": recs[offset : offset + count], "total_items": len(recs)}

    @tool(mutates=True)
    def mailchimp_create_campaign(
        self,
        type: Literal["regular", "plaintext", "absplit", "rss", "variate"],
        list_id: str,
        subject_line: str,
        from_name: str,
        reply_to: str,
        title: str | None = None,
        folder_id: str | None = None,
        authenticate: bool = True,
        auto_footer: bool = False,
        inline_css: bool = False,
        auto_tweet: bool = False,
        fb_comments: bool = True,
        timewarp: bool = False,
        template_id: int | None = None,
        drag_and_drop: bool = False,
    ) -> dict[str, Any]:
        """Create a campaign for an audience (status 'save' until it is sent or scheduled).

        Args:
            type: regular, plaintext, absplit, rss or variate.
            list_id: The audience to send to.
            subject_line: The subject line.
            from_name: The from name.
            reply_to: The reply-to email.
            title: Internal title.
            folder_id: Folder to file it in.
            authenticate: Authenticate the campaign.
            auto_footer: Add an automatic footer.
            inline_css: Inline CSS.
            auto_tweet: Tweet when sent.
            fb_comments: Allow Facebook comments.
            timewarp: Send in each recipient's time zone.
            template_id: Template to use.
            drag_and_drop: Use the drag-and-drop editor.
        """
        self.audiences.require(list_id, "list_id")
        if not subject_line.strip() or len(subject_line) > 150:
            raise InvalidArguments("'subject_line' must be 1 to 150 characters")
        if not from_name.strip():
            raise InvalidArguments("'from_name' must not be empty")
        reply = check_emails([reply_to], "reply_to")[0]
        return self.campaigns.create(
            {
                "type": type,
                "list_id": list_id,
                "subject_line": subject_line,
                "from_name": from_name,
                "reply_to": reply,
                "title": title or subject_line,
                "folder_id": folder_id,
                "create_time": self.clock.iso(),
            }
        )

    @tool
    def mailchimp_get_campaign_info(self, campaign_id: str) -> dict[str, Any]:
        """Get a campaign with its settings, status and content.

        Args:
            campaign_id: The campaign ID.
        """
        return self.campaigns.require(campaign_id, "campaign_id")

    @tool(mutates=True)
    def mailchimp_set_campaign_content(
        self,
        campaign_id: str,
        html: str | None = None,
        plain_text: str | None = None,
        url: str | None = None,
        template: dict[str, Any] | None = None,
        archive: dict[str, Any] | None = None,
        variate_contents: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Set the content of a campaign that has not been sent (html and/or plain text; url, template, archive are not fetched here).

        Args:
            campaign_id: The campaign ID.
            html: The HTML content.
            plain_text: The plain-text content.
            url: A URL to import content from (not supported: no network).
            template: A template with sections.
            archive: An archive to import.
            variate_contents: Contents of a variate campaign.
        """
        c = self.campaigns.require(campaign_id, "campaign_id")
        if c["status"] in ("sent", "sending"):
            raise RuleViolation(
                f"campaign {campaign_id} was already sent; its content is final", type="campaign_sent"
            )
        if url is not None:
            raise RuleViolation(
                "importing content from a URL needs the network; send html or plain_text",
                type="source_not_allowed",
            )
        if html is None and plain_text is None and not template:
            raise InvalidArguments("give 'html', 'plain_text' or 'template'")
        if template and html is None:
            html = "".join(f"<div>{v}</div>" for v in (template.get("sections") or {}).values())
        return self.campaigns.update(
            campaign_id,
            {
                "html": html if html is not None else c["html"],
                "plain_text": plain_text if plain_text is not None else c["plain_text"],
            },
        )

    def _ready(self, c: dict[str, Any]) -> None:
        if c["status"] in ("sent", "sending"):
            raise RuleViolation(f"campaign {c['id']} was already sent", type="campaign_sent")
        if not (c["html"] or c["plain_text"]):
            raise RuleViolation(
                "the campaign has no content; set it with mailchimp_set_campaign_content",
                type="campaign_not_ready",
            )
        if not self.audiences.get(c["list_id"]):
            raise RuleViolation("the campaign's audience no longer exists", type="campaign_not_ready")
        if not self.members.find(list_id=c["list_id"], status="subscribed"):
            raise RuleViolation("the audience has no subscribed members", type="campaign_not_ready")

    @tool(mutates=True)
    def mailchimp_send_campaign(self, campaign_id: str) -> dict[str, Any]:
        """Send a campaign now to the audience's subscribed members (once).

        Args:
            campaign_id: The campaign ID.
        """
        c = self.campaigns.require(campaign_id, "campaign_id")
        self._ready(c)
        now = self.clock.iso()
        c = self.campaigns.update(campaign_id, {"status": "sent", "send_time": now})
        return {"id": campaign_id, "status": "sent", "emails_sent": self._deliver(c, now)}

    @tool(mutates=True)
    def mailchimp_schedule_campaign(
        self, campaign_id: str, schedule_time: str, timewarp: bool = False, batch_delay: int | None = None
    ) -> dict[str, Any]:
        """Schedule a campaign for a future time on a quarter hour (e.g. 14:00, 14:15), as Mailchimp requires.

        Args:
            campaign_id: The campaign ID.
            schedule_time: When to send (ISO 8601, UTC, minutes 00/15/30/45).
            timewarp: Send at that local time in each recipient's zone.
            batch_delay: Minutes between batches.
        """
        c = self.campaigns.require(campaign_id, "campaign_id")
        self._ready(c)
        when = parse_datetime_arg(schedule_time, "schedule_time")
        if when <= self.clock.now():
            raise RuleViolation("the schedule time must be in the future", type="schedule_in_past")
        if when.minute % 15 or when.second:
            raise RuleViolation(
                "campaigns can only be scheduled on the quarter hour (:00, :15, :30, :45)",
                type="invalid_schedule_time",
            )
        return self.campaigns.update(
            campaign_id, {"status": "schedule", "send_time": when.strftime("%Y-%m-%dT%H:%M:%SZ")}
        )

    @tool(mutates=True)
    def mailchimp_delete_campaign(self, campaign_id: str) -> dict[str, Any]:
        """Delete a campaign that is not being sent.

        Args:
            campaign_id: The campaign ID.
        """
        c = self.campaigns.require(campaign_id, "campaign_id")
        if c["status"] == "sending":
            raise RuleViolation("a campaign that is sending cannot be deleted", type="campaign_sending")
        self.campaigns.delete(campaign_id)
        return {"deleted": campaign_id}
