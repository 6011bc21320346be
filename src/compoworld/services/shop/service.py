"""E-commerce orders: Shopify, modelled on klavis_shopify.json (Klavis Shopify MCP server).

All 25 tools of the spec are modelled with their real names and parameters. Orders take stock
from a location and are refused when it is short; fulfillments cannot ship more than was ordered,
nor anything of a cancelled order; inventory never goes below zero.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from compoworld.core.envelope import InvalidArguments, NotFound, RuleViolation
from compoworld.core.query import check_emails, check_limit, matches, norm, paginate, parse_datetime_arg
from compoworld.core.resource import Resource, sort_records
from compoworld.core.service import SeedContext, Service
from compoworld.core.tool import tool
from compoworld.services.shop.seed import seed_shop
from compoworld.services.shop.state import (
    Collection,
    Customer,
    DraftOrder,
    Fulfillment,
    InventoryItem,
    Location,
    Order,
    PriceRule,
    Product,
)


class _A(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LineItemArg(_A):
    variant_id: int | str
    quantity: int


class CustomerArg(_A):
    email: str
    first_name: str | None = None
    last_name: str | None = None


class VariantArg(_A):
    price: str
    sku: str | None = None
    title: str | None = None
    inventory_quantity: int | None = None


class FulfillArg(_A):
    id: str
    quantity: int


def _money(v: str, field: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InvalidArguments(f"'{field}' must be a decimal string like '29.99', got {v!r}") from None
    if x < 0:
        raise InvalidArguments(f"'{field}' must not be negative")
    return x


class ShopService(Service):
    """Shopify store: products and variants, inventory by location, customers, orders, fulfillments, discounts."""

    name = "shop"
    domain = "ecommerce"
    spec = "klavis_shopify.json"

    products = Resource("products", Product, id_kind="numeric", start=7100000)
    locations = Resource("locations", Location, id_kind="numeric", start=880000)
    inventory = Resource(
        "inventory_items", InventoryItem, label="inventory item", id_kind="numeric", start=50000000
    )
    customers = Resource("customers", Customer, id_kind="numeric", start=6200000)
    orders = Resource("orders", Order, id_kind="numeric", start=5500000)
    fulfillments = Resource("fulfillments", Fulfillment, id_kind="numeric", start=4400000)
    drafts = Resource("draft_orders", DraftOrder, label="draft order", id_kind="numeric", start=9900000)
    collections = Resource("collections", Collection, id_kind="numeric", start=3300000)
    rules = Resource("price_rules", PriceRule, label="price rule", id_kind="numeric", start=1100000)

    def seed_data(self, ctx: SeedContext) -> None:
        seed_shop(self, ctx)

    # ---- helpers ----------------------------------------------------------------------
    def _variant(self, vid: Any, field: str) -> tuple[dict[str, Any], dict[str, Any]]:
        for p in self.products.all():
            for v in p["variants"]:
                if v["id"] == str(vid):
                    return p, v
        raise NotFound(f"'{field}': variant {vid} not found", type="variant_not_found")

    def _page(
        self, records: list[Any], limit: float, cursor: str | None, key: str = "items"
    ) -> dict[str, Any]:
        if not float(limit).is_integer() or not 1 <= limit <= 250:
            raise InvalidArguments("'limit' must be a whole number between 1 and 250")
        page, nxt = paginate(records, cursor, int(limit))
        return {key: page, "next_cursor": nxt}

    def _lines(self, items: list[LineItemArg]) -> tuple[list[dict[str, Any]], float]:
        if not items:
            raise InvalidArguments("'line_items' must hold at least one item")
        lines, total = [], 0.0
        for k, it in enumerate(items):
            if it.quantity < 1:
                raise InvalidArguments(f"'line_items[{k}].quantity' must be at least 1")
            prod, v = self._variant(it.variant_id, f"line_items[{k}].variant_id")
            if prod["status"] != "active":
                raise RuleViolation(
                    f"product '{prod['title']}' is {prod['status']} and cannot be sold",
                    type="product_not_active",
                )
            lines.append(
                {
                    "id": str(60000000 + self.next_seq("line")),
                    "variant_id": v["id"],
                    "title": f"{prod['title']} - {v['title']}",
                    "quantity": it.quantity,
                    "price": v["price"],
                }
            )
            total += float(v["price"]) * it.quantity
        return lines, total

    def _customer_for(self, c: CustomerArg | None) -> dict[str, Any] | None:
        if c is None:
            return None
        email = check_emails([c.email], "customer.email")[0]
        found = self.customers.find(lambda x: x["email"].lower() == email)
        if found:
            return found[0]
        return self.customers.create(
            {
                "email": email,
                "first_name": c.first_name or "",
                "last_name": c.last_name or "",
                "created_at": self.clock.iso(),
            }
        )

    # ---- products -----------------------------------------------------------------------
    @tool
    def shopify_list_products(
        self,
        limit: float = 50,
        cursor: str | None = None,
        collection_id: str | None = None,
        status: Literal["active", "draft", "archived"] | None = None,
        vendor: str | None = None,
        product_type: str | None = None,
        since_id: str | None = None,
        created_at_min: str | None = None,
        created_at_max: str | None = None,
        updated_at_min: str | None = None,
        updated_at_max: str | None = None,
    ) -> dict[str, Any]:
        """List products with filters (collection, status, vendor, type, dates) and cursor pagination.

        Args:
            limit: Products per page (max 250).
            cursor: Cursor of the next page.
            collection_id: Only products in this collection.
            status: active, draft or archived.
            vendor: Only this vendor.
            product_type: Only this product type.
            since_id: Only products with an id greater than this.
            created_at_min: Created at or after (ISO 8601).
            created_at_max: Created at or before (ISO 8601).
            updated_at_min: Updated at or after (ISO 8601).
            updated_at_max: Updated at or before (ISO 8601).
        """
        members = (
            set(self.collections.require(collection_id, "collection_id")["product_ids"])
            if collection_id
            else None
        )
        bounds = {
            k: parse_datetime_arg(v, k).strftime("%Y-%m-%dT%H:%M:%SZ")
            for k, v in (
                ("created_at_min", created_at_min),
                ("created_at_max", created_at_max),
                ("updated_at_min", updated_at_min),
                ("updated_at_max", updated_at_max),
            )
            if v
        }
        recs = self.products.find(
            lambda p: (
                (members is None or p["id"] in members)
                and (vendor is None or norm(p["vendor"]) == norm(vendor))
                and (product_type is None or norm(p["product_type"]) == norm(product_type))
                and (since_id is None or (since_id.isdigit() and int(p["id"]) > int(since_id)))
                and p["created_at"] >= bounds.get("created_at_min", "")
                and p["created_at"] <= bounds.get("created_at_max", "9")
                and p["updated_at"] >= bounds.get("updated_at_min", "")
                and p["updated_at"] <= bounds.get("updated_at_max", "9")
            ),
            status=status,
        )
        return self._page(sorted(recs, key=lambda p: int(p["id"])), limit, cursor, "products")

    @tool
    def shopify_get_product(self, product_id: str) -> dict[str, Any]:
        """Get a product with its variants and their stock.

        Args:
            product_id: The product ID.
        """
        p = self.products.require(product_id, "product_id")
        return {
            **p,
            "variants": [
                {
                    **v,
                    "inventory_quantity": sum(self.inventory.get(v["inventory_item_id"])["levels"].values()),
                }
                for v in p["variants"]
            ],
        }

    @tool(mutates=True)
    def shopify_create_product(
        self,
        title: str,
        body_html: str | None = None,
        vendor: str | None = None,
        product_type: str | None = None,
        tags: str | None = None,
        status: Literal["active", "draft", "archived"] = "active",
        variants: list[VariantArg] | None = None,
    ) -> dict[str, Any]:
        """Create a product with variants (price as a decimal string, optional sku and starting stock at the first location).

        Args:
            title: The product title.
            body_html: The description in HTML.
            vendor: The vendor.
            product_type: The product type.
            tags: Comma-separated tags.
            status: active, draft or archived.
            variants: The variants; at least one.
        """
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        if not variants:
            raise InvalidArguments("'variants' must hold at least one variant")
        loc = sorted(self.locations.all(), key=lambda x: x["id"])[0]["id"]
        vs = []
        for k, v in enumerate(variants):
            price = _money(v.price, f"variants[{k}].price")
            if v.inventory_quantity is not None and v.inventory_quantity < 0:
                raise InvalidArguments(f"'variants[{k}].inventory_quantity' must not be negative")
            vid, inv = str(40000000 + self.next_seq("variant")), str(50000000 + self.next_seq("invitem"))
            self.inventory.create(
                {"sku": v.sku, "variant_id": vid, "levels": {loc: v.inventory_quantity or 0}}, id=inv
            )
            vs.append(
                {
                    "id": vid,
                    "title": v.title or f"Variant {k + 1}",
                    "price": f"{price:.2f}",
                    "sku": v.sku,
                    "inventory_item_id": inv,
                }
            )
        now = self.clock.iso()
        return self.products.create(
            {
                "title": title,
                "body_html": body_html or "",
                "vendor": vendor or "",
                "product_type": product_type or "",
                "tags": tags or "",
                "status": status,
                "variants": vs,
                "created_at": now,
                "updated_at": now,
            }
        )

    @tool(mutates=True)
    def shopify_update_product(
        self,
        product_id: str,
        title: str | None = None,
        body_html: str | None = None,
        vendor: str | None = None,
        product_type: str | None = None,
        tags: str | None = None,
        status: Literal["active", "draft", "archived"] | None = None,
    ) -> dict[str, Any]:
        """Update a product's title, description, vendor, type, tags or status.

        Args:
            product_id: The product ID.
            title: New title.
            body_html: New description.
            vendor: New vendor.
            product_type: New product type.
            tags: New comma-separated tags.
            status: active, draft or archived.
        """
        self.products.require(product_id, "product_id")
        if title is not None and not title.strip():
            raise InvalidArguments("'title' must not be empty")
        changes = {
            k: v
            for k, v in {
                "title": title,
                "body_html": body_html,
                "vendor": vendor,
                "product_type": product_type,
                "tags": tags,
                "status": status,
            }.items()
            if v is not None
        }
        if not changes:
            raise InvalidArguments("give at least one field to update")
        return self.products.update(product_id, {**changes, "updated_at": self.clock.iso()})

    # ---- orders -------------------------------------------------------------------------
    @tool
    def shopify_list_orders(
        self,
        limit: float = 50,
        status: Literal["open", "closed", "cancelled", "any"] = "any",
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """List orders, newest first: open (not closed or cancelled), closed, cancelled or any.

        Args:
            limit: Orders per page (max 250).
            status: open, closed, cancelled or any.
            cursor: Cursor of the next page.
        """

        def state(o: dict[str, Any]) -> str:
            return "cancelled" if o["cancelled_at"] else "closed" if o["closed_at"] else "open"

        recs = [o for o in self.orders.all() if status == "any" or state(o) == status]
        return self._page(sort_records(recs, "created_at", descending=True), limit, cursor, "orders")

    @tool
    def shopify_get_order(self, order_id: str) -> dict[str, Any]:
        """Get an order with its line items and fulfillments.

        Args:
            order_id: The order ID (or its name, like '#1042').
        """
        o = self.orders.get(order_id) or next(
            (o for o in self.orders.all() if o["name"] == order_id or o["name"] == f"#{order_id}"), None
        )
        if o is None:
            raise NotFound(f"order '{order_id}' not found", type="order_not_found")
        return {**o, "fulfillments": self.fulfillments.find(order_id=o["id"])}

    @tool(mutates=True)
    def shopify_create_order(
        self,
        line_items: list[LineItemArg],
        customer: CustomerArg | None = None,
        shipping_address: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Create an order. Stock is taken from the first location that holds each item; the order is refused if stock is short.

        Args:
            line_items: Variants and quantities.
            customer: The customer (linked by email, created if new).
            shipping_address: Address fields (address1, city, province, country, zip).
        """
        lines, total = self._lines(line_items)
        locs = sorted(self.locations.find(active=True), key=lambda x: x["id"])
        for k, line in enumerate(lines):
            inv_id = self._variant(line["variant_id"], f"line_items[{k}].variant_id")[1]["inventory_item_id"]
            inv = self.inventory.get(inv_id)
            loc = next(
                (loc["id"] for loc in locs if inv["levels"].get(loc["id"], 0) >= line["quantity"]), None
            )
            if loc is None:
                raise RuleViolation(
                    f"not enough stock of '{line['title']}' at any single location for {line['quantity']}",
                    type="insufficient_inventory",
                )
            self.inventory.update(
                inv_id, {"levels": {**inv["levels"], loc: inv["levels"][loc] - line["quantity"]}}
            )
        c = self._customer_for(customer)
        if c:
            self.customers.update(
                c["id"],
                {
                    "orders_count": c["orders_count"] + 1,
                    "total_spent": f"{float(c['total_spent']) + total:.2f}",
                },
            )
        n = self.next_seq("order_number") + 1000
        return self.orders.create(
            {
                "name": f"#{n}",
                "email": c["email"] if c else None,
                "customer_id": c["id"] if c else None,
                "line_items": lines,
                "total_price": f"{total:.2f}",
                "financial_status": "paid",
                "shipping_address": shipping_address or {},
                "created_at": self.clock.iso(),
            }
        )

    # ---- customers ----------------------------------------------------------------------
    @tool
    def shopify_list_customers(self, limit: float = 50, cursor: str | None = None) -> dict[str, Any]:
        """List customers.

        Args:
            limit: Customers per page (max 250).
            cursor: Cursor of the next page.
        """
        return self._page(
            sorted(self.customers.all(), key=lambda c: int(c["id"])), limit, cursor, "customers"
        )

    @tool
    def shopify_get_customer(self, customer_id: str) -> dict[str, Any]:
        """Get a customer with their order count and total spent.

        Args:
            customer_id: The customer ID.
        """
        c = self.customers.require(customer_id, "customer_id")
        return {**c, "orders": [o["id"] for o in self.orders.find(customer_id=customer_id)]}

    # ---- collections --------------------------------------------------------------------
    @tool
    def shopify_list_collections(
        self, limit: float = 50, cursor: str | None = None, title: str | None = None
    ) -> dict[str, Any]:
        """List collections, optionally by title.

        Args:
            limit: Collections per page (max 250).
            cursor: Cursor of the next page.
            title: Only collections whose title contains this.
        """
        recs = [c for c in self.collections.all() if not title or matches(title, c["title"])]
        return self._page(sorted(recs, key=lambda c: c["title"]), limit, cursor, "collections")

    @tool
    def shopify_get_collection(
        self, collection_id: str, type: Literal["custom", "smart"] | None = None
    ) -> dict[str, Any]:
        """Get a collection and its products.

        Args:
            collection_id: The collection ID.
            type: custom or smart (checked if given).
        """
        c = self.collections.require(collection_id, "collection_id")
        if type and c["collection_type"] != type:
            raise NotFound(
                f"collection {collection_id} is not a {type} collection", type="collection_not_found"
            )
        return {
            **c,
            "products": [
                {"id": p["id"], "title": p["title"]}
                for pid in c["product_ids"]
                if (p := self.products.get(pid))
            ],
        }

    @tool(mutates=True)
    def shopify_create_collection(
        self,
        title: str,
        body_html: str | None = None,
        sort_order: Literal[
            "alpha-asc",
            "alpha-desc",
            "best-selling",
            "created",
            "created-desc",
            "manual",
            "price-asc",
            "price-desc",
        ] = "manual",
        collection_type: Literal["custom", "smart"] = "custom",
    ) -> dict[str, Any]:
        """Create a collection (titles are unique).

        Args:
            title: The collection title.
            body_html: Its description.
            sort_order: How products are sorted.
            collection_type: custom or smart.
        """
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        if self.collections.find(lambda c: norm(c["title"]) == norm(title)):
            raise RuleViolation(f"a collection titled {title!r} already exists", type="duplicate_collection")
        return self.collections.create(
            {
                "title": title,
                "body_html": body_html or "",
                "sort_order": sort_order,
                "collection_type": collection_type,
            }
        )

    # ---- inventory ----------------------------------------------------------------------
    @tool
    def shopify_list_locations(self) -> list[dict[str, Any]]:
        """List the store's locations."""
        return sorted(self.locations.all(), key=lambda x: x["id"])

    @tool
    def shopify_get_location(self, location_id: str) -> dict[str, Any]:
        """Get a location.

        Args:
            location_id: The location ID.
        """
        return self.locations.require(location_id, "location_id")

    @tool
    def shopify_list_inventory_items(
        self, limit: float = 50, query: str | None = None, cursor: str | None = None
    ) -> dict[str, Any]:
        """List inventory items, optionally by SKU text.

        Args:
            limit: Items per page (max 250).
            query: Only items whose SKU contains this.
            cursor: Cursor of the next page.
        """
        recs = [i for i in self.inventory.all() if not query or matches(query, i["sku"] or "")]
        view = [
            {
                "id": i["id"],
                "sku": i["sku"],
                "variant_id": i["variant_id"],
                "available": sum(i["levels"].values()),
            }
            for i in sorted(recs, key=lambda i: i["id"])
        ]
        return self._page(view, limit, cursor, "inventory_items")

    @tool
    def shopify_get_inventory_levels(
        self, inventory_item_ids: str | None = None, location_ids: str | None = None, limit: float = 50
    ) -> dict[str, Any]:
        """Get stock levels per inventory item and location (comma-separated id filters).

        Args:
            inventory_item_ids: Comma-separated inventory item IDs.
            location_ids: Comma-separated location IDs.
            limit: Maximum levels to return (max 250).
        """
        if not inventory_item_ids and not location_ids:
            raise InvalidArguments("give 'inventory_item_ids' or 'location_ids'")
        items = [x.strip() for x in (inventory_item_ids or "").split(",") if x.strip()]
        locs = [x.strip() for x in (location_ids or "").split(",") if x.strip()]
        for i in items:
            self.inventory.require(i, "inventory_item_ids")
        for loc in locs:
            self.locations.require(loc, "location_ids")
        levels = [
            {"inventory_item_id": i["id"], "location_id": loc, "available": n}
            for i in sorted(self.inventory.all(), key=lambda i: i["id"])
            if not items or i["id"] in items
            for loc, n in sorted(i["levels"].items())
            if not locs or loc in locs
        ]
        check_limit(int(limit), "limit", 1, 250)
        return {"inventory_levels": levels[: int(limit)]}

    @tool(mutates=True)
    def shopify_adjust_inventory(
        self, location_id: str, inventory_item_id: str, available_adjustment: float
    ) -> dict[str, Any]:
        """Adjust the stock of an item at a location by a positive or negative amount (stock cannot go below zero).

        Args:
            location_id: The location ID.
            inventory_item_id: The inventory item ID.
            available_adjustment: The change in available quantity (e.g. 5 or -3).
        """
        self.locations.require(location_id, "location_id")
        inv = self.inventory.require(inventory_item_id, "inventory_item_id")
        if not float(available_adjustment).is_integer() or available_adjustment == 0:
            raise InvalidArguments("'available_adjustment' must be a non-zero whole number")
        new = inv["levels"].get(location_id, 0) + int(available_adjustment)
        if new < 0:
            raise RuleViolation(
                f"only {inv['levels'].get(location_id, 0)} available at this location",
                type="insufficient_inventory",
            )
        self.inventory.update(inventory_item_id, {"levels": {**inv["levels"], location_id: new}})
        return {"inventory_item_id": inventory_item_id, "location_id": location_id, "available": new}

    # ---- fulfillments -------------------------------------------------------------------
    @tool
    def shopify_list_fulfillments(self, order_id: str) -> list[dict[str, Any]]:
        """List the fulfillments (shipments) of an order.

        Args:
            order_id: The order ID.
        """
        self.orders.require(order_id, "order_id")
        return sort_records(self.fulfillments.find(order_id=order_id), "created_at")

    @tool(mutates=True)
    def shopify_create_fulfillment(
        self,
        order_id: str,
        location_id: str | None = None,
        tracking_number: str | None = None,
        tracking_company: str | None = None,
        tracking_url: str | None = None,
        notify_customer: bool = False,
        line_items: list[FulfillArg] | None = None,
    ) -> dict[str, Any]:
        """Ship items of an order (all unfulfilled items if line_items is omitted); cancelled or fully fulfilled orders are refused.

        Args:
            order_id: The order ID.
            location_id: The location shipping the items.
            tracking_number: The carrier's tracking number.
            tracking_company: The carrier (UPS, FedEx, USPS, DHL, ...).
            tracking_url: The tracking URL.
            notify_customer: Email the customer.
            line_items: Line items to ship: id and quantity (at most the unfulfilled quantity).
        """
        o = self.orders.require(order_id, "order_id")
        if o["cancelled_at"]:
            raise RuleViolation(f"order {o['name']} is cancelled", type="order_cancelled")
        if o["fulfillment_status"] == "fulfilled":
            raise RuleViolation(f"order {o['name']} is already fulfilled", type="already_fulfilled")
        loc = (
            self.locations.require(location_id, "location_id")["id"]
            if location_id
            else sorted(self.locations.all(), key=lambda x: x["id"])[0]["id"]
        )
        by_id = {x["id"]: dict(x) for x in o["line_items"]}
        wanted = (
            [(x.id, x.quantity) for x in line_items]
            if line_items
            else [(i, x["quantity"] - x["fulfilled_quantity"]) for i, x in by_id.items()]
        )
        shipped = []
        for k, (lid, q) in enumerate(wanted):
            if lid not in by_id:
                raise NotFound(
                    f"'line_items[{k}].id': line item {lid} is not on order {o['name']}",
                    type="line_item_not_found",
                )
            left = by_id[lid]["quantity"] - by_id[lid]["fulfilled_quantity"]
            if q < 0 or q > left:
                raise RuleViolation(
                    f"line item {lid}: {q} requested but {left} left to fulfil",
                    type="quantity_exceeds_unfulfilled",
                )
            if q:
                by_id[lid]["fulfilled_quantity"] += q
                shipped.append({"id": lid, "quantity": q})
        if not shipped:
            raise RuleViolation("nothing left to fulfil in the given line items", type="nothing_to_fulfill")
        done = all(x["fulfilled_quantity"] == x["quantity"] for x in by_id.values())
        self.orders.update(
            order_id,
            {
                "line_items": list(by_id.values()),
                "fulfillment_status": "fulfilled" if done else "partial",
                "closed_at": self.clock.iso() if done and o["financial_status"] == "paid" else o["closed_at"],
            },
        )
        return self.fulfillments.create(
            {
                "order_id": order_id,
                "location_id": loc,
                "line_items": shipped,
                "tracking_number": tracking_number,
                "tracking_company": tracking_company,
                "tracking_url": tracking_url,
                "created_at": self.clock.iso(),
            }
        )

    # ---- draft orders -------------------------------------------------------------------
    @tool
    def shopify_list_draft_orders(
        self,
        limit: float = 50,
        cursor: str | None = None,
        status: Literal["open", "invoice_sent", "completed"] | None = None,
    ) -> dict[str, Any]:
        """List draft orders.

        Args:
            limit: Drafts per page (max 250).
            cursor: Cursor of the next page.
            status: open, invoice_sent or completed.
        """
        return self._page(
            sort_records(self.drafts.find(status=status), "created_at", descending=True),
            limit,
            cursor,
            "draft_orders",
        )

    @tool
    def shopify_get_draft_order(self, draft_order_id: str) -> dict[str, Any]:
        """Get a draft order.

        Args:
            draft_order_id: The draft order ID.
        """
        return self.drafts.require(draft_order_id, "draft_order_id")

    @tool(mutates=True)
    def shopify_create_draft_order(
        self,
        line_items: list[LineItemArg],
        customer: CustomerArg | None = None,
        shipping_address: dict[str, str] | None = None,
        billing_address: dict[str, str] | None = None,
        note: str | None = None,
        email: str | None = None,
        tags: str | None = None,
    ) -> dict[str, Any]:
        """Create a draft order (a quote; no stock is taken until it becomes an order).

        Args:
            line_items: Variants and quantities.
            customer: The customer (linked by email, created if new).
            shipping_address: Shipping address fields.
            billing_address: Billing address fields.
            note: A note on the draft.
            email: Email for the draft (default: the customer's).
            tags: Comma-separated tags.
        """
        lines, total = self._lines(line_items)
        if email is not None:
            email = check_emails([email], "email")[0]
        c = self._customer_for(customer)
        n = self.next_seq("draft_number") + 1000
        return self.drafts.create(
            {
                "name": f"#D{n}",
                "line_items": lines,
                "customer_id": c["id"] if c else None,
                "email": email or (c["email"] if c else None),
                "note": note or "",
                "tags": tags or "",
                "total_price": f"{total:.2f}",
                "shipping_address": shipping_address or {},
                "billing_address": billing_address or {},
                "created_at": self.clock.iso(),
            }
        )

    # ---- discounts ----------------------------------------------------------------------
    @tool
    def shopify_list_discounts(self, limit: float = 50, cursor: str | None = None) -> dict[str, Any]:
        """List discounts (price rules).

        Args:
            limit: Rules per page (max 250).
            cursor: Cursor of the next page.
        """
        return self._page(sorted(self.rules.all(), key=lambda r: r["id"]), limit, cursor, "price_rules")

    @tool
    def shopify_get_discount(self, price_rule_id: str) -> dict[str, Any]:
        """Get a discount (price rule).

        Args:
            price_rule_id: The price rule ID.
        """
        return self.rules.require(price_rule_id, "price_rule_id")

    @tool(mutates=True)
    def shopify_create_discount(
        self,
        title: str,
        value_type: Literal["percentage", "fixed_amount"],
        value: str,
        target_type: Literal["line_item", "shipping_line"],
        target_selection: Literal["all", "entitled"],
        allocation_method: Literal["across", "each"] = "across",
        starts_at: str | None = None,
        ends_at: str | None = None,
        once_per_customer: bool = False,
        usage_limit: float | None = None,
    ) -> dict[str, Any]:
        """Create a discount: value is negative ('-10.0' = 10% off for percentage, '-10.00' = $10 off for fixed_amount).

        Args:
            title: Internal name of the rule.
            value_type: percentage or fixed_amount.
            value: The discount as a negative decimal string.
            target_type: line_item or shipping_line.
            target_selection: all or entitled.
            allocation_method: across or each.
            starts_at: When it becomes active (ISO 8601; default now).
            ends_at: When it expires (ISO 8601).
            once_per_customer: Whether each customer can use it once.
            usage_limit: Maximum total uses.
        """
        if not title.strip():
            raise InvalidArguments("'title' must not be empty")
        try:
            v = float(value)
        except ValueError:
            raise InvalidArguments(
                f"'value' must be a negative decimal string like '-10.0', got {value!r}"
            ) from None
        if v >= 0:
            raise InvalidArguments("'value' must be negative, e.g. '-10.0' for 10% off")
        if value_type == "percentage" and v < -100:
            raise InvalidArguments("a percentage discount cannot exceed 100%")
        start = parse_datetime_arg(starts_at, "starts_at") if starts_at else self.clock.now()
        end = parse_datetime_arg(ends_at, "ends_at") if ends_at else None
        if end and end <= start:
            raise RuleViolation("a discount cannot end before it starts", type="invalid_time_range")
        if usage_limit is not None and (usage_limit < 1 or not float(usage_limit).is_integer()):
            raise InvalidArguments("'usage_limit' must be a positive whole number")
        if self.rules.find(lambda r: norm(r["title"]) == norm(title)):
            raise RuleViolation(f"a discount titled {title!r} already exists", type="duplicate_discount")
        return self.rules.create(
            {
                "title": title,
                "value_type": value_type,
                "value": f"{v:.2f}",
                "target_type": target_type,
                "target_selection": target_selection,
                "allocation_method": allocation_method,
                "starts_at": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "ends_at": end.strftime("%Y-%m-%dT%H:%M:%SZ") if end else None,
                "once_per_customer": once_per_customer,
                "usage_limit": int(usage_limit) if usage_limit else None,
            }
        )
