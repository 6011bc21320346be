"""Typed state of e-commerce: a Shopify store's products and variants, inventory per location,
customers, orders with fulfillments, draft orders, collections and discounts."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Variant(_M):
    id: str
    title: str
    price: str
    sku: str | None = None
    inventory_item_id: str


class Product(_M):
    id: str
    title: str
    body_html: str = ""
    vendor: str = ""
    product_type: str = ""
    tags: str = ""
    status: str = "active"
    variants: list[Variant]
    created_at: str
    updated_at: str


class Location(_M):
    id: str
    name: str
    city: str
    active: bool = True


class InventoryItem(_M):
    id: str
    sku: str | None
    variant_id: str
    levels: dict[str, int]  # location id -> available


class Customer(_M):
    id: str
    email: str
    first_name: str
    last_name: str
    orders_count: int = 0
    total_spent: str = "0.00"
    created_at: str


class LineItem(_M):
    id: str
    variant_id: str
    title: str
    quantity: int
    price: str
    fulfilled_quantity: int = 0


class Order(_M):
    id: str
    name: str
    email: str | None = None
    customer_id: str | None = None
    line_items: list[LineItem]
    total_price: str
    financial_status: str  # pending | paid | refunded
    fulfillment_status: str | None = None  # None | partial | fulfilled
    cancelled_at: str | None = None
    closed_at: str | None = None
    shipping_address: dict[str, str] = {}
    created_at: str


class Fulfillment(_M):
    id: str
    order_id: str
    location_id: str
    line_items: list[dict[str, int | str]]
    tracking_number: str | None = None
    tracking_company: str | None = None
    tracking_url: str | None = None
    status: str = "success"
    created_at: str


class DraftOrder(_M):
    id: str
    name: str
    line_items: list[LineItem]
    customer_id: str | None = None
    email: str | None = None
    note: str = ""
    tags: str = ""
    status: str = "open"
    total_price: str
    shipping_address: dict[str, str] = {}
    billing_address: dict[str, str] = {}
    created_at: str


class Collection(_M):
    id: str
    title: str
    body_html: str = ""
    sort_order: str = "manual"
    collection_type: str = "custom"
    product_ids: list[str] = []


class PriceRule(_M):
    id: str
    title: str
    value_type: str
    value: str
    target_type: str
    target_selection: str
    allocation_method: str
    starts_at: str
    ends_at: str | None = None
    once_per_customer: bool = False
    usage_limit: int | None = None
