"""Deterministic mailbox for the environment's user, drawn from the shared company."""

from __future__ import annotations

from datetime import timedelta

from compoworld.core.clock import format_time
from compoworld.core.service import SeedContext
from compoworld.services._contacts import seed_contacts

SYSTEM_LABELS = ("INBOX", "SENT", "DRAFT", "TRASH", "SPAM", "STARRED", "UNREAD", "IMPORTANT")
USER_LABELS = ("Customers", "Invoices", "Follow-up", "Newsletters", "Travel", "Hiring")

SUBJECTS = (
    (
        "Renewal quote for {customer}",
        "Hi {to_first},\n\nAttached is the renewal quote for {customer}: {qty} x {product} at ${price} each. Let me know if the terms work.\n\nBest,\n{from_first}",
        "Customers",
    ),
    (
        "Invoice {invoice} from {company}",
        "Hello {to_first},\n\nPlease find invoice {invoice} for ${amount} attached, due in 30 days.\n\nRegards,\n{from_first}",
        "Invoices",
    ),
    (
        "Meeting notes: {customer} sync",
        "Notes from today's sync with {customer}:\n- rollout of {product} on track\n- next check-in in two weeks\n- open question on pricing\n\n{from_first}",
        "Follow-up",
    ),
    (
        "Question about {product}",
        "Hi {to_first},\n\nWe are seeing an issue with {product} since the last update. Could someone take a look?\n\nThanks,\n{from_first}",
        "Customers",
    ),
    (
        "Candidate for {team}",
        "Hi {to_first},\n\nSharing a strong candidate for the open {team} role. Can you interview them this week?\n\n{from_first}",
        "Hiring",
    ),
    (
        "Trip to {city}",
        "Hi {to_first},\n\nYour trip to {city} is booked. Hotel confirmation attached.\n\n{from_first}",
        "Travel",
    ),
    (
        "{company} weekly digest",
        "This week at {company}: {team} shipped an update to {product}; welcome to our new colleagues.",
        "Newsletters",
    ),
    (
        "Re: onboarding plan for {customer}",
        "Hi {to_first},\n\nThe onboarding plan for {customer} looks good. Kickoff is proposed for next Tuesday.\n\n{from_first}",
        "Customers",
    ),
    (
        "Budget review {quarter}",
        "Hi {to_first},\n\nCan you send me the {team} numbers for the {quarter} budget review by Friday?\n\n{from_first}",
        "Follow-up",
    ),
)


# the answer and the follow-up in a thread begun by SUBJECTS[i] (a thread's later messages say
# something of their own, not the first one's words again)
REPLIES = (
    (
        "Hi {to_first},\n\nThanks, the terms look fine. I'll confirm the quantity with the team this week.\n\n{from_first}",
        "Hi {to_first},\n\nGreat, thanks. I'll hold the price until the end of the month.\n\n{from_first}",
    ),
    (
        "Hi {to_first},\n\nThanks, received. It's with accounts payable for the next payment run.\n\n{from_first}",
        "Thanks {to_first}, much appreciated.\n\n{from_first}",
    ),
    (
        "Thanks {to_first}, that matches my notes. I'll follow up on the pricing question.\n\n{from_first}",
        "Sounds good. I'll put the next check-in in the calendar.\n\n{from_first}",
    ),
    (
        "Hi {to_first},\n\nSorry about that. Could you send when it started and a screenshot? I'll get the team to look.\n\n{from_first}",
        "Hi {to_first},\n\nSent the details just now. It started after the update on Tuesday.\n\n{from_first}",
    ),
    (
        "Hi {to_first},\n\nThanks, the profile looks good. Thursday afternoon works for an interview.\n\n{from_first}",
        "Great, I'll send the invite for Thursday.\n\n{from_first}",
    ),
    (
        "Thanks {to_first}! Could you also book the airport transfer?\n\n{from_first}",
        "Done, the transfer is booked too.\n\n{from_first}",
    ),
    (
        "Thanks for putting this together, {to_first}.\n\n{from_first}",
        "Glad it helps!\n\n{from_first}",
    ),
    (
        "Hi {to_first},\n\nTuesday works for us. I'll send the kickoff invite.\n\n{from_first}",
        "Perfect, see you Tuesday.\n\n{from_first}",
    ),
    (
        "Hi {to_first},\n\nWill do: the {team} numbers will be with you by Thursday.\n\n{from_first}",
        "Thanks, Thursday is perfect.\n\n{from_first}",
    ),
)
assert len(REPLIES) == len(SUBJECTS)


def seed_email(svc, ctx: SeedContext) -> None:
    company, rng = ctx.company, ctx.rng
    me = company.me
    for lid in SYSTEM_LABELS:
        svc.insert("labels", {"id": lid, "name": lid, "type": "system"})
    for i, name in enumerate(USER_LABELS, 1):
        svc.insert("labels", {"id": f"Label_{i}", "name": name, "type": "user"})
    label_of = {name: f"Label_{i}" for i, name in enumerate(USER_LABELS, 1)}
    for c in seed_contacts(company, rng):
        svc.insert("contacts", c)

    people = [p for p in company.people if p.id != me.id]
    n_threads = ctx.scale(20, 160, 640)
    start = ctx.clock.now()
    for t in range(n_threads):
        other = rng.choice(people)
        pick = rng.randrange(len(SUBJECTS))
        subj_t, body_t, label = SUBJECTS[pick]
        cust = company.customer(other.company_id) if other.company_id else rng.choice(company.customers)
        prod = rng.choice(company.products)
        fill = {
            "customer": cust.name,
            "product": prod.name,
            "price": f"{prod.price:.2f}",
            "qty": rng.randrange(2, 40),
            "invoice": f"INV-{rng.randrange(10000, 99999)}",
            "amount": f"{rng.randrange(200, 20000)}.00",
            "company": company.name,
            "team": other.team if other.team != "external" else "Sales",
            "city": rng.choice(("Lisbon", "Austin", "Tokyo", "Oslo", "Denver")),
            "quarter": rng.choice(("Q1", "Q2", "Q3")),
        }
        when = start - timedelta(
            days=rng.randrange(0, 45), hours=rng.randrange(0, 10), minutes=rng.randrange(60)
        )
        thread_id = svc.next_id("t", 16)
        n_msgs = rng.choice((1, 1, 1, 2, 2, 3))
        # replies come 3 hours apart: a thread begun this morning ends by now, not after it (from play:
        # a reply dated half an hour after the clock)
        when = min(when, start - timedelta(hours=3 * (n_msgs - 1)))
        prev = None
        for k in range(n_msgs):
            incoming = k % 2 == 0
            sender, rcpt = (other, me) if incoming else (me, other)
            labels = ["INBOX"] if incoming else ["SENT"]
            if incoming and rng.random() < 0.3 and t < n_threads // 2:
                labels.append("UNREAD")
            if incoming and rng.random() < 0.1:
                labels.append("STARRED")
            if incoming and rng.random() < 0.6:
                labels.append(label_of[label])
            subject = subj_t.format(**fill)
            msg_id = svc.next_id("m", 16)
            attachments = []
            if "invoice" in body_t and incoming:
                attachments.append(
                    {
                        "filename": f"{fill['invoice']}.pdf",
                        "mimeType": "application/pdf",
                        "size": 20480 + rng.randrange(5000),
                        "content": f"INVOICE {fill['invoice']}\nBill to: {cust.name}\nAmount due: ${fill['amount']}\nTerms: Net 30",
                    }
                )
                if k:  # the invoice came with the first mail, not with the thanks (drawn all the same)
                    attachments.clear()
            svc.insert(
                "messages",
                {
                    "id": msg_id,
                    "threadId": thread_id,
                    "from": sender.email,
                    "to": [rcpt.email],
                    "cc": [],
                    "bcc": [],
                    "subject": subject if k == 0 else f"Re: {subject}",
                    "body": (body_t if k == 0 else REPLIES[pick][min(k, 2) - 1]).format(
                        to_first=rcpt.first, from_first=sender.first, **fill
                    ),
                    "htmlBody": None,
                    "mimeType": "text/plain",
                    "date": format_time(when + timedelta(hours=3 * k)),
                    "labelIds": labels,
                    "inReplyTo": prev,
                    "attachments": attachments,
                },
            )
            prev = msg_id
