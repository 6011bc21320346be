"""Typed state of payments: Stripe customers, products, prices, invoices (with lines), payment
intents, refunds, subscriptions, coupons, disputes and payment links. Amounts are in cents."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Customer(_M):
    id: str
    name: str
    email: str | None = None
    created: int


class Product(_M):
    id: str
    name: str
    description: str | None = None
    active: bool = True
    created: int


class Price(_M):
    id: str
    product: str
    unit_amount: int
    currency: str
    active: bool = True
    recurring: str | None = None  # month | year | None


class InvoiceLine(_M):
    id: str
    price: str
    description: str
    quantity: int
    amount: int


class Invoice(_M):
    id: str
    customer: str
    status: str  # draft | open | paid | void | uncollectible
    number: str | None = None
    currency: str = "usd"
    lines: list[InvoiceLine] = []
    total: int = 0
    amount_paid: int = 0
    amount_due: int = 0
    days_until_due: int = 30
    due_date: str | None = None
    created: int
    payment_intent: str | None = None


class PaymentIntent(_M):
    id: str
    customer: str | None
    amount: int
    currency: str
    status: str  # succeeded | requires_payment_method | canceled
    amount_refunded: int = 0
    invoice: str | None = None
    created: int
    description: str | None = None  # Stripe's free text ("Daily usage 2026-02-20")


class Refund(_M):
    id: str
    payment_intent: str
    amount: int
    status: str
    created: int


class SubscriptionItem(_M):
    id: str
    price: str
    quantity: int


class Subscription(_M):
    id: str
    customer: str
    status: str  # active | past_due | trialing | canceled
    items: list[SubscriptionItem]
    current_period_end: str
    canceled_at: str | None = None


class Coupon(_M):
    id: str
    name: str
    percent_off: float | None = None
    amount_off: int | None = None
    currency: str | None = None
    duration: str  # once | repeating | forever
    duration_in_months: int | None = None
    valid: bool = True


class Dispute(_M):
    id: str
    charge: str
    payment_intent: str
    amount: int
    currency: str
    reason: str
    status: str  # warning_needs_response | needs_response | under_review | won | lost
    evidence: dict[str, str] = {}


class PaymentLink(_M):
    id: str
    url: str
    price: str
    quantity: int
    redirect_url: str | None = None
    active: bool = True
