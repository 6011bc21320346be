"""Payments and invoicing: Stripe, modelled on stripe-official.json (Stripe's agent toolkit).

All 22 tools of the spec are modelled with their real names and parameters, plus `pay_invoice`,
`void_invoice` and `retrieve_invoice` from Stripe's API, without which an invoice's life cycle
(draft -> open -> paid | void) cannot be completed. The rules are Stripe's: only a draft invoice
takes new items or can be finalized, a paid invoice cannot be paid again, a refund cannot exceed
what was charged, a canceled subscription cannot change. Amounts are integers in cents.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from compoworld.core.envelope import InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_limit, norm, valid_email
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.services.payments.seed import seed_payments
from compoworld.services.payments.state import (
    Coupon,
    Customer,
    Dispute,
    Invoice,
    PaymentIntent,
    PaymentLink,
    Price,
    Product,
    Refund,
    Subscription,
)

_CURRENCY = re.compile(r"^[a-z]{3}$")
DOCS = (
    (
        "Invoices",
        "An invoice starts as a draft. Add invoice items while it is a draft, then finalize it to make it open; "
        "an open invoice can be paid or voided. A paid invoice cannot be paid again.",
    ),
    (
        "Refunds",
        "Refund a payment intent fully or partially with create_refund. The total refunded cannot exceed the amount charged.",
    ),
    (
        "Subscriptions",
        "A subscription bills a customer on a recurring price. Update items or cancel it; a canceled subscription cannot be changed.",
    ),
    (
        "Coupons",
        "A coupon gives percent_off or amount_off (with a currency), once, forever, or repeating for duration_in_months.",
    ),
    (
        "Disputes",
        "A dispute opens when a customer questions a charge. Submit evidence with update_dispute before the deadline.",
    ),
    (
        "Payment links",
        "A payment link is a hosted page that sells a price in a quantity; share its URL with customers.",
    ),
    (
        "Prices",
        "Prices define how much and how often to charge for a product: unit_amount in the smallest currency unit.",
    ),
)


class ItemUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    price: str | None = None
    quantity: int | None = None
    deleted: bool = False


class PaymentsService(Service):
    """Stripe: customers, products and prices, invoices, payments, refunds, subscriptions, coupons, disputes."""

    name = "payments"
    domain = "payments"
    spec = "stripe-official.json"

    customers = Resource("customers", Customer, prefix="cus_", width=14, text=("name", "email"))
    products = Resource("products", Product, prefix="prod_", width=14)
    prices = Resource("prices", Price, prefix="price_", width=14)
    invoices = Resource("invoices", Invoice, prefix="in_", width=14)
    intents = Resource("payment_intents", PaymentIntent, label="payment intent", prefix="pi_", width=14)
    refunds = Resource("refunds", Refund, prefix="re_", width=14)
    subs = Resource("subscriptions", Subscription, prefix="sub_", width=14)
    coupons = Resource("coupons", Coupon, prefix="co_", width=8)
    disputes = Resource("disputes", Dispute, prefix="dp_", width=14)
    links = Resource("payment_links", PaymentLink, label="payment link", prefix="plink_", width=14)

    def seed_data(self, ctx: SeedContext) -> None:
        seed_payments(self, ctx)

    def _now(self) -> int:
        return int(self.clock.epoch())

    def _list(self, records: list[dict[str, Any]], limit: int, key: str = "created") -> list[dict[str, Any]]:
        check_limit(limit, "limit", 1, 100)
        return sort_records(records, key, descending=True)[:limit]

    # ---- customers, products, prices ------------------------------------------------------
    @tool(mutates=True)
    def create_customer(self, name: str, email: str | None = None) -> dict[str, Any]:
        """This tool will create a customer in Stripe.

        Args:
            name: The name of the customer.
            email: The email of the customer.
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        if email is not None and not valid_email(email):
            raise InvalidArguments(f"'email' {email!r} is not a valid email address")
        return self.customers.create({"name": name, "email": email and email.lower(), "created": self._now()})

    @tool
    def list_customers(self, limit: int = 10, email: str | None = None) -> list[dict[str, Any]]:
        """This tool will fetch a list of Customers from Stripe, newest first.

        Args:
            limit: A limit on the number of objects to be returned. Limit can range between 1 and 100.
            email: A case-sensitive filter on the list based on the customer's email field.
        """
        return self._list(self.customers.find(email=email), limit)

    @tool(mutates=True)
    def create_product(self, name: str, description: str | None = None) -> dict[str, Any]:
        """This tool will create a product in Stripe.

        Args:
            name: The name of the product.
            description: The description of the product.
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        return self.products.create({"name": name, "description": description, "created": self._now()})

    @tool
    def list_products(self, limit: int = 10) -> list[dict[str, Any]]:
        """This tool will fetch a list of Products from Stripe.

        Args:
            limit: A limit on the number of objects to be returned, between 1 and 100.
        """
        return self._list(self.products.all(), limit)

    @tool(mutates=True)
    def create_price(self, product: str, unit_amount: int, currency: str) -> dict[str, Any]:
        """This tool will create a price in Stripe. If a product has not already been specified, a product should be created first.

        Args:
            product: The ID of the product to create the price for.
            unit_amount: The unit amount of the price in cents.
            currency: The currency of the price (ISO code, e.g. usd).
        """
        p = self.products.require(product, "product")
        if not p["active"]:
            raise RuleViolation(f"product {product} is archived", type="product_inactive")
        if unit_amount < 0:
            raise InvalidArguments("'unit_amount' must be zero or more (in cents)")
        if not _CURRENCY.match(currency.lower()):
            raise InvalidArguments(f"'currency' {currency!r} must be a 3-letter ISO code such as 'usd'")
        return self.prices.create(
            {"product": product, "unit_amount": unit_amount, "currency": currency.lower()}
        )

    @tool
    def list_prices(self, product: str | None = None, limit: int = 10) -> list[dict[str, Any]]:
        """This tool will fetch a list of Prices from Stripe.

        Args:
            product: The ID of the product to list prices for.
            limit: A limit on the number of objects to be returned, between 1 and 100.
        """
        if product is not None:
            self.products.require(product, "product")
        check_limit(limit, "limit", 1, 100)
        return sort_records(self.prices.find(product=product), "id")[:limit]

    @tool(mutates=True)
    def create_payment_link(
        self, price: str, quantity: int, redirect_url: str | None = None
    ) -> dict[str, Any]:
        """This tool will create a payment link in Stripe.

        Args:
            price: The ID of the price to create the payment link for.
            quantity: The quantity of the product to include.
            redirect_url: The URL the customer will be redirected to after the purchase is complete.
        """
        p = self.prices.require(price, "price")
        if not p["active"]:
            raise RuleViolation(f"price {price} is not active", type="price_inactive")
        if quantity < 1:
            raise InvalidArguments("'quantity' must be at least 1")
        if redirect_url is not None and not redirect_url.startswith(("https://", "http://")):
            raise InvalidArguments("'redirect_url' must be an http(s) URL")
        lid = self.links.new_id()
        return self.links.create(
            {
                "url": f"https://buy.stripe.com/{lid[6:]}",
                "price": price,
                "quantity": quantity,
                "redirect_url": redirect_url,
            },
            id=lid,
        )

    # ---- invoices ---------------------------------------------------------------------
    @tool(mutates=True)
    def create_invoice(self, customer: str, days_until_due: int = 30) -> dict[str, Any]:
        """This tool will create a draft invoice in Stripe.

        Args:
            customer: The ID of the customer to create the invoice for.
            days_until_due: The number of days until the invoice is due.
        """
        self.customers.require(customer, "customer")
        check_limit(days_until_due, "days_until_due", 0, 365)
        return self.invoices.create(
            {
                "customer": customer,
                "status": "draft",
                "days_until_due": days_until_due,
                "created": self._now(),
            }
        )

    @tool
    def list_invoices(self, customer: str | None = None, limit: int = 10) -> list[dict[str, Any]]:
        """This tool will fetch a list of Invoices from Stripe, newest first.

        Args:
            customer: The ID of the customer to list invoices for.
            limit: A limit on the number of objects to be returned, between 1 and 100.
        """
        if customer is not None:
            self.customers.require(customer, "customer")
        return self._list(self.invoices.find(customer=customer), limit)

    @tool
    def retrieve_invoice(self, invoice: str) -> dict[str, Any]:
        """Retrieve an invoice with its lines and status.

        Args:
            invoice: The ID of the invoice.
        """
        return self.invoices.require(invoice, "invoice")

    @tool(mutates=True)
    def create_invoice_item(self, customer: str, price: str, invoice: str) -> dict[str, Any]:
        """This tool will create an invoice item in Stripe (the invoice must be a draft of the same customer).

        Args:
            customer: The ID of the customer to create the invoice item for.
            price: The ID of the price for the item.
            invoice: The ID of the invoice to create the item for.
        """
        self.customers.require(customer, "customer")
        p = self.prices.require(price, "price")
        inv = self.invoices.require(invoice, "invoice")
        if inv["customer"] != customer:
            raise RuleViolation(f"invoice {invoice} belongs to another customer", type="customer_mismatch")
        if inv["status"] != "draft":
            raise RuleViolation(
                f"invoice {invoice} is {inv['status']}; items can only be added to a draft",
                type="invoice_not_draft",
            )
        if inv["lines"] and inv["currency"] != p["currency"]:
            raise RuleViolation("all items of an invoice must share its currency", type="currency_mismatch")
        line = {
            "id": self.next_id("il_", 14),
            "price": price,
            "quantity": 1,
            "amount": p["unit_amount"],
            "description": self.products.get(p["product"])["name"],
        }
        total = inv["total"] + p["unit_amount"]
        self.invoices.update(
            invoice,
            {"lines": [*inv["lines"], line], "total": total, "amount_due": total, "currency": p["currency"]},
        )
        return {
            "id": line["id"],
            "invoice": invoice,
            "price": price,
            "amount": p["unit_amount"],
            "currency": p["currency"],
        }

    @tool(mutates=True)
    def finalize_invoice(self, invoice: str) -> dict[str, Any]:
        """This tool will finalize an invoice in Stripe: a draft with at least one item becomes open and gets a number and due date.

        Args:
            invoice: The ID of the invoice to finalize.
        """
        inv = self.invoices.require(invoice, "invoice")
        if inv["status"] != "draft":
            raise RuleViolation(f"invoice {invoice} is already {inv['status']}", type="invoice_not_draft")
        if not inv["lines"]:
            raise RuleViolation(
                "an invoice needs at least one item before it is finalized", type="invoice_empty"
            )
        due = (self.clock.now() + timedelta(days=inv["days_until_due"])).date().isoformat()
        return self.invoices.update(
            invoice,
            {
                "status": "open",
                "number": f"{inv['customer'][-6:].upper()}-{self.next_seq('invno'):04d}",
                "due_date": due,
                "amount_due": inv["total"],
            },
        )

    @tool(mutates=True)
    def pay_invoice(self, invoice: str) -> dict[str, Any]:
        """Pay an open invoice with the customer's default payment method. A paid invoice cannot be paid again.

        Args:
            invoice: The ID of the invoice to pay.
        """
        inv = self.invoices.require(invoice, "invoice")
        if inv["status"] == "paid":
            raise RuleViolation(f"invoice {invoice} is already paid", type="invoice_already_paid")
        if inv["status"] != "open":
            raise RuleViolation(
                f"invoice {invoice} is {inv['status']}; only an open invoice can be paid",
                type="invoice_not_open",
            )
        pi = self.intents.create(
            {
                "customer": inv["customer"],
                "amount": inv["amount_due"],
                "currency": inv["currency"],
                "status": "succeeded",
                "invoice": invoice,
                "created": self._now(),
            }
        )
        return self.invoices.update(
            invoice,
            {"status": "paid", "amount_paid": inv["amount_due"], "amount_due": 0, "payment_intent": pi["id"]},
        )

    @tool(mutates=True)
    def void_invoice(self, invoice: str) -> dict[str, Any]:
        """Void an open invoice (it will not be collected).

        Args:
            invoice: The ID of the invoice to void.
        """
        inv = self.invoices.require(invoice, "invoice")
        if inv["status"] != "open":
            raise RuleViolation(
                f"invoice {invoice} is {inv['status']}; only an open invoice can be voided",
                type="invoice_not_open",
            )
        return self.invoices.update(invoice, {"status": "void", "amount_due": 0})

    # ---- balance, payments, refunds --------------------------------------------------------
    @tool
    def retrieve_balance(self) -> dict[str, Any]:
        """This tool will retrieve the balance from Stripe: charges less refunds and disputed amounts, in cents."""
        paid = sum(
            p["amount"] - p["amount_refunded"] for p in self.intents.all() if p["status"] == "succeeded"
        )
        disputed = sum(d["amount"] for d in self.disputes.all() if d["status"] != "won")
        return {
            "available": [{"amount": paid - disputed, "currency": "usd"}],
            "pending": [{"amount": 0, "currency": "usd"}],
            "disputed": [{"amount": disputed, "currency": "usd"}],
        }

    @tool
    def list_payment_intents(self, customer: str | None = None, limit: int = 10) -> list[dict[str, Any]]:
        """This tool will list payment intents in Stripe, newest first.

        Args:
            customer: The ID of the customer to list payment intents for.
            limit: A limit on the number of objects to be returned, between 1 and 100.
        """
        return self._list(self.intents.find(customer=customer), limit)

    @tool(mutates=True)
    def create_refund(self, payment_intent: str, amount: int | None = None) -> dict[str, Any]:
        """This tool will refund a payment intent in Stripe, fully or for an amount in cents.

        Args:
            payment_intent: The ID of the PaymentIntent to refund.
            amount: The amount to refund in cents (default: everything not yet refunded).
        """
        pi = self.intents.require(payment_intent, "payment_intent")
        if pi["status"] != "succeeded":
            raise RuleViolation(
                f"payment intent {payment_intent} is {pi['status']}; only a successful charge can be refunded",
                type="charge_not_succeeded",
            )
        left = pi["amount"] - pi["amount_refunded"]
        amt = left if amount is None else amount
        if amt <= 0:
            raise (
                RuleViolation("this payment is already fully refunded", type="charge_already_refunded")
                if left == 0
                else InvalidArguments("'amount' must be positive")
            )
        if amt > left:
            raise RuleViolation(
                f"refund of {amt} exceeds the {left} cents left to refund", type="amount_too_large"
            )
        self.intents.update(payment_intent, {"amount_refunded": pi["amount_refunded"] + amt})
        return self.refunds.create(
            {"payment_intent": payment_intent, "amount": amt, "status": "succeeded", "created": self._now()}
        )

    # ---- subscriptions ----------------------------------------------------------------
    @tool
    def list_subscriptions(
        self,
        customer: str | None = None,
        price: str | None = None,
        status: Literal["active", "past_due", "unpaid", "canceled", "incomplete", "trialing", "all"]
        | None = None,
        limit: int = 10,
    ) -> list[dict[str, Any]]:
        """This tool will list all subscriptions in Stripe (canceled ones only with status 'canceled' or 'all').

        Args:
            customer: The ID of the customer to list subscriptions for.
            price: The ID of the price to list subscriptions for.
            status: The status of the subscriptions to retrieve.
            limit: A limit on the number of objects to be returned, between 1 and 100.
        """
        check_limit(limit, "limit", 1, 100)
        recs = self.subs.find(
            lambda s: (
                (status == "all" or (s["status"] == status if status else s["status"] != "canceled"))
                and (price is None or any(i["price"] == price for i in s["items"]))
            ),
            customer=customer,
        )
        return sort_records(recs, "id")[:limit]

    @tool(mutates=True)
    def cancel_subscription(self, subscription: str) -> dict[str, Any]:
        """This tool will cancel a subscription in Stripe.

        Args:
            subscription: The ID of the subscription to cancel.
        """
        s = self.subs.require(subscription, "subscription")
        if s["status"] == "canceled":
            raise RuleViolation(
                f"subscription {subscription} is already canceled", type="subscription_canceled"
            )
        return self.subs.update(subscription, {"status": "canceled", "canceled_at": self.clock.iso()})

    @tool(mutates=True)
    def update_subscription(
        self,
        subscription: str,
        proration_behavior: Literal["create_prorations", "none", "always_invoice"] = "create_prorations",
        items: list[ItemUpdate] | None = None,
    ) -> dict[str, Any]:
        """This tool will update an existing subscription in Stripe: change item quantities or prices, add items, or delete items.

        Args:
            subscription: The ID of the subscription to update.
            proration_behavior: How to handle prorations: create_prorations, none, always_invoice.
            items: Items to change: {id, quantity} or {id, price}, {price, quantity} to add, {id, deleted: true} to remove.
        """
        s = self.subs.require(subscription, "subscription")
        if s["status"] == "canceled":
            raise RuleViolation(
                f"subscription {subscription} is canceled and cannot be updated", type="subscription_canceled"
            )
        if not items:
            raise InvalidArguments("'items' must list at least one change")
        current = {i["id"]: dict(i) for i in s["items"]}
        for k, it in enumerate(items):
            if it.price is not None:
                self.prices.require(it.price, f"items[{k}].price")
            if it.quantity is not None and it.quantity < 1:
                raise InvalidArguments(f"'items[{k}].quantity' must be at least 1")
            if it.id is None:
                if it.price is None or it.deleted:
                    raise InvalidArguments(f"'items[{k}]': a new item needs a price")
                nid = self.next_id("si_", 14)
                current[nid] = {"id": nid, "price": it.price, "quantity": it.quantity or 1}
                continue
            if it.id not in current:
                raise NotFound(
                    f"'items[{k}].id': subscription item {it.id} is not on this subscription",
                    type="item_not_found",
                )
            if it.deleted:
                del current[it.id]
            else:
                current[it.id].update(
                    {k2: v for k2, v in (("price", it.price), ("quantity", it.quantity)) if v is not None}
                )
        if not current:
            raise RuleViolation("a subscription needs at least one item; cancel it instead", type="no_items")
        return self.subs.update(subscription, {"items": list(current.values())})

    # ---- docs, coupons, disputes --------------------------------------------------------
    @tool
    def search_stripe_documentation(self, question: str, language: str | None = None) -> list[dict[str, str]]:
        """This tool will search the Stripe documentation (a built-in digest) for the question's words.

        Args:
            question: The user question about integrating with Stripe.
            language: The programming language to search for in the documentation.
        """
        if not question.strip():
            raise InvalidArguments("'question' must not be empty")
        words = [w for w in norm(question).split() if len(w) > 3]
        scored = sorted(
            ((sum(w.rstrip("s") in norm(t + " " + body) for w in words), t, body) for t, body in DOCS),
            reverse=True,
        )
        return [{"title": t, "content": body} for score, t, body in scored if score > 0][:3]

    @tool
    def list_coupons(self, limit: int = 10) -> list[dict[str, Any]]:
        """This tool will fetch a list of Coupons from Stripe.

        Args:
            limit: A limit on the number of objects to be returned, between 1 and 100.
        """
        check_limit(limit, "limit", 1, 100)
        return sort_records(self.coupons.all(), "id")[:limit]

    @tool(mutates=True)
    def create_coupon(
        self,
        name: str,
        amount_off: float | None = None,
        percent_off: float | None = None,
        currency: str | None = None,
        duration: Literal["once", "repeating", "forever"] = "once",
        duration_in_months: float | None = None,
    ) -> dict[str, Any]:
        """This tool will create a coupon in Stripe: exactly one of percent_off or amount_off (in cents, with a currency).

        Args:
            name: Name of the coupon displayed to customers.
            amount_off: A positive integer representing the amount to subtract from an invoice total (cents).
            percent_off: A number between 0 and 100 (exclusive of 0) of the total to take off.
            currency: Three-letter ISO code for the currency of amount_off.
            duration: once, repeating or forever.
            duration_in_months: Required for repeating: the number of months the coupon applies.
        """
        if not name.strip():
            raise InvalidArguments("'name' must not be empty")
        if (amount_off is None) == (percent_off is None):
            raise InvalidArguments("give exactly one of 'amount_off' or 'percent_off'")
        if percent_off is not None and not 0 < percent_off <= 100:
            raise InvalidArguments("'percent_off' must be in (0, 100]")
        if amount_off is not None:
            if amount_off <= 0 or not float(amount_off).is_integer():
                raise InvalidArguments("'amount_off' must be a positive whole number of cents")
            if not currency or not _CURRENCY.match(currency.lower()):
                raise InvalidArguments("'currency' is required with 'amount_off' (e.g. 'usd')")
        if duration == "repeating" and not duration_in_months:
            raise InvalidArguments("'duration_in_months' is required when duration is 'repeating'")
        if duration != "repeating" and duration_in_months is not None:
            raise InvalidArguments("'duration_in_months' is only for duration 'repeating'")
        return self.coupons.create(
            {
                "name": name,
                "percent_off": percent_off,
                "amount_off": int(amount_off) if amount_off else None,
                "currency": currency.lower() if currency else None,
                "duration": duration,
                "duration_in_months": int(duration_in_months) if duration_in_months else None,
            }
        )

    @tool
    def list_disputes(
        self, charge: str | None = None, payment_intent: str | None = None, limit: int = 10
    ) -> list[dict[str, Any]]:
        """This tool will fetch a list of disputes in Stripe.

        Args:
            charge: Only disputes of this charge.
            payment_intent: Only disputes of this payment intent.
            limit: A limit on the number of objects to be returned, between 1 and 100.
        """
        check_limit(limit, "limit", 1, 100)
        return sort_records(self.disputes.find(charge=charge, payment_intent=payment_intent), "id")[:limit]

    @tool(mutates=True)
    def update_dispute(
        self, dispute: str, evidence: dict[str, str] | None = None, submit: bool = False
    ) -> dict[str, Any]:
        """When you receive a dispute, you can add evidence (e.g. customer_name, product_description, uncategorized_text) and submit it.

        Args:
            dispute: The ID of the dispute to update.
            evidence: Evidence fields to add.
            submit: Whether to submit the evidence now (no further changes after).
        """
        d = self.disputes.require(dispute, "dispute")
        if d["status"] not in ("needs_response", "warning_needs_response"):
            raise RuleViolation(
                f"dispute {dispute} is {d['status']}; evidence can no longer be changed",
                type="dispute_closed",
            )
        merged = {**d["evidence"], **{k: str(v) for k, v in (evidence or {}).items()}}
        if submit and not merged:
            raise RuleViolation("submit evidence before submitting the dispute", type="no_evidence")
        if not evidence and not submit:
            raise InvalidArguments("give 'evidence' or submit=true")
        return self.disputes.update(
            dispute, {"evidence": merged, "status": "under_review" if submit else d["status"]}
        )
