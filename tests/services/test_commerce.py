"""Payments (Stripe), e-commerce (Shopify) and marketing (Mailchimp)."""

from __future__ import annotations

from compoworld.core.environment import Environment
from tests.services.helpers import err, ok

P, SH, M = "payments__", "shop__shopify_", "marketing__mailchimp_"


def test_invoice_life_cycle_and_refunds() -> None:
    env = Environment(services=["payments"], seed=5)
    cus = ok(env, P + "create_customer", {"name": "Acme", "email": "billing@acme.example"})
    err(env, P + "create_customer", {"name": "Acme", "email": "nope"}, 400)
    assert ok(env, P + "list_customers", {"email": "billing@acme.example"})[0]["id"] == cus["id"]
    prod = ok(env, P + "create_product", {"name": "Widget"})
    assert ok(env, P + "list_products", {"limit": 1})[0]["id"] == prod["id"]
    price = ok(env, P + "create_price", {"product": prod["id"], "unit_amount": 2500, "currency": "USD"})
    err(env, P + "create_price", {"product": prod["id"], "unit_amount": 100, "currency": "dollars"}, 400)
    err(env, P + "create_price", {"product": "prod_none", "unit_amount": 100, "currency": "usd"}, 404)
    assert ok(env, P + "list_prices", {"product": prod["id"]})[0]["id"] == price["id"]
    link = ok(env, P + "create_payment_link", {"price": price["id"], "quantity": 2})
    assert link["url"].startswith("https://buy.stripe.com/")
    err(env, P + "create_payment_link", {"price": price["id"], "quantity": 0}, 400)
    inv = ok(env, P + "create_invoice", {"customer": cus["id"], "days_until_due": 15})
    err(env, P + "finalize_invoice", {"invoice": inv["id"]}, 422, "invoice_empty")
    err(env, P + "pay_invoice", {"invoice": inv["id"]}, 422, "invoice_not_open")
    ok(env, P + "create_invoice_item", {"customer": cus["id"], "price": price["id"], "invoice": inv["id"]})
    other = ok(env, P + "create_customer", {"name": "Other"})
    err(
        env,
        P + "create_invoice_item",
        {"customer": other["id"], "price": price["id"], "invoice": inv["id"]},
        422,
        "customer_mismatch",
    )
    fin = ok(env, P + "finalize_invoice", {"invoice": inv["id"]})
    assert fin["status"] == "open" and fin["amount_due"] == 2500 and fin["due_date"] == "2026-03-17"
    err(
        env,
        P + "create_invoice_item",
        {"customer": cus["id"], "price": price["id"], "invoice": inv["id"]},
        422,
        "invoice_not_draft",
    )
    err(env, P + "finalize_invoice", {"invoice": inv["id"]}, 422)
    balance0 = ok(env, P + "retrieve_balance")["available"][0]["amount"]
    paid = ok(env, P + "pay_invoice", {"invoice": inv["id"]})
    assert paid["status"] == "paid" and paid["amount_paid"] == 2500
    assert ok(env, P + "retrieve_balance")["available"][0]["amount"] == balance0 + 2500
    err(env, P + "pay_invoice", {"invoice": inv["id"]}, 422, "invoice_already_paid")
    err(env, P + "void_invoice", {"invoice": inv["id"]}, 422)
    assert ok(env, P + "retrieve_invoice", {"invoice": inv["id"]})["status"] == "paid"
    assert ok(env, P + "list_invoices", {"customer": cus["id"]})[0]["id"] == inv["id"]
    pi = ok(env, P + "list_payment_intents", {"customer": cus["id"]})[0]["id"]
    ok(env, P + "create_refund", {"payment_intent": pi, "amount": 1000})
    err(env, P + "create_refund", {"payment_intent": pi, "amount": 2000}, 422, "amount_too_large")
    ok(env, P + "create_refund", {"payment_intent": pi})
    err(env, P + "create_refund", {"payment_intent": pi}, 422, "charge_already_refunded")
    inv2 = ok(env, P + "create_invoice", {"customer": cus["id"]})
    ok(env, P + "create_invoice_item", {"customer": cus["id"], "price": price["id"], "invoice": inv2["id"]})
    ok(env, P + "finalize_invoice", {"invoice": inv2["id"]})
    assert ok(env, P + "void_invoice", {"invoice": inv2["id"]})["status"] == "void"


def test_subscriptions_coupons_disputes_docs() -> None:
    env = Environment(services=["payments"], seed=5)
    sub = ok(env, P + "list_subscriptions", {"status": "active"})[0]
    price = ok(env, P + "list_prices", {"limit": 2})[1]["id"]
    upd = ok(
        env,
        P + "update_subscription",
        {
            "subscription": sub["id"],
            "items": [{"id": sub["items"][0]["id"], "quantity": 7}, {"price": price, "quantity": 1}],
        },
    )
    assert [i["quantity"] for i in upd["items"]] == [7, 1]
    err(
        env,
        P + "update_subscription",
        {"subscription": sub["id"], "items": [{"id": "si_none", "quantity": 2}]},
        404,
    )
    err(
        env,
        P + "update_subscription",
        {"subscription": sub["id"], "items": [{"id": i["id"], "deleted": True} for i in upd["items"]]},
        422,
        "no_items",
    )
    ok(env, P + "cancel_subscription", {"subscription": sub["id"]})
    err(env, P + "cancel_subscription", {"subscription": sub["id"]}, 422)
    err(env, P + "update_subscription", {"subscription": sub["id"], "items": [{"price": price}]}, 422)
    assert sub["id"] not in {s["id"] for s in ok(env, P + "list_subscriptions", {"limit": 100})}
    c = ok(
        env,
        P + "create_coupon",
        {"name": "Summer", "percent_off": 20, "duration": "repeating", "duration_in_months": 3},
    )
    assert any(x["id"] == c["id"] for x in ok(env, P + "list_coupons", {"limit": 100}))
    err(
        env,
        P + "create_coupon",
        {"name": "Both", "percent_off": 10, "amount_off": 500, "currency": "usd"},
        400,
    )
    err(env, P + "create_coupon", {"name": "Cash", "amount_off": 500}, 400)
    err(env, P + "create_coupon", {"name": "Rep", "percent_off": 5, "duration": "repeating"}, 400)
    d = ok(env, P + "list_disputes", {"limit": 100})[0]
    ok(env, P + "update_dispute", {"dispute": d["id"], "evidence": {"customer_name": "Acme"}})
    done = ok(env, P + "update_dispute", {"dispute": d["id"], "submit": True})
    assert done["status"] == "under_review"
    err(env, P + "update_dispute", {"dispute": d["id"], "evidence": {"x": "y"}}, 422, "dispute_closed")
    assert (
        ok(env, P + "search_stripe_documentation", {"question": "How do I refund a payment?"})[0]["title"]
        == "Refunds"
    )
    err(env, P + "search_stripe_documentation", {"question": ""}, 400)


def test_shop_orders_inventory_fulfillment() -> None:
    env = Environment(services=["shop"], seed=4)
    prod = ok(
        env,
        SH + "create_product",
        {"title": "Cable", "variants": [{"price": "9.50", "sku": "CBL-1", "inventory_quantity": 5}]},
    )
    assert ok(env, SH + "get_product", {"product_id": prod["id"]})["variants"][0]["inventory_quantity"] == 5
    err(env, SH + "create_product", {"title": "Free", "variants": [{"price": "-1"}]}, 400)
    err(env, SH + "create_product", {"title": "NoVariants", "variants": []}, 400)
    ok(env, SH + "update_product", {"product_id": prod["id"], "tags": "cables"})
    err(env, SH + "update_product", {"product_id": prod["id"]}, 400)
    listed = ok(env, SH + "list_products", {"limit": 250, "since_id": str(int(prod["id"]) - 1)})["products"]
    assert [p["id"] for p in listed] == [prod["id"]]
    vid = prod["variants"][0]["id"]
    err(
        env,
        SH + "create_order",
        {"line_items": [{"variant_id": vid, "quantity": 6}]},
        422,
        "insufficient_inventory",
    )
    order = ok(
        env,
        SH + "create_order",
        {
            "line_items": [{"variant_id": vid, "quantity": 4}],
            "customer": {"email": "buyer@x.example", "first_name": "B"},
        },
    )
    assert order["total_price"] == "38.00"
    assert ok(env, SH + "get_product", {"product_id": prod["id"]})["variants"][0]["inventory_quantity"] == 1
    cust = ok(env, SH + "get_customer", {"customer_id": order["customer_id"]})
    assert cust["orders"] == [order["id"]]
    assert any(c["id"] == cust["id"] for c in ok(env, SH + "list_customers", {"limit": 250})["customers"])
    err(env, SH + "create_order", {"line_items": [{"variant_id": "0", "quantity": 1}]}, 404)
    line = order["line_items"][0]["id"]
    f1 = ok(
        env,
        SH + "create_fulfillment",
        {"order_id": order["id"], "line_items": [{"id": line, "quantity": 3}], "tracking_number": "1Z"},
    )
    err(
        env,
        SH + "create_fulfillment",
        {"order_id": order["id"], "line_items": [{"id": line, "quantity": 2}]},
        422,
        "quantity_exceeds_unfulfilled",
    )
    ok(env, SH + "create_fulfillment", {"order_id": order["id"]})
    err(env, SH + "create_fulfillment", {"order_id": order["id"]}, 422, "already_fulfilled")
    assert [f["id"] for f in ok(env, SH + "list_fulfillments", {"order_id": order["id"]})][0] == f1["id"]
    assert ok(env, SH + "get_order", {"order_id": order["name"]})["fulfillment_status"] == "fulfilled"
    assert order["id"] in {
        o["id"] for o in ok(env, SH + "list_orders", {"status": "closed", "limit": 250})["orders"]
    }
    cancelled = next(o for o in env.services["shop"].orders.all() if o["cancelled_at"])
    err(env, SH + "create_fulfillment", {"order_id": cancelled["id"]}, 422, "order_cancelled")
    loc = ok(env, SH + "list_locations")[0]["id"]
    assert ok(env, SH + "get_location", {"location_id": loc})["id"] == loc
    inv = prod["variants"][0]["inventory_item_id"]
    assert (
        ok(
            env,
            SH + "adjust_inventory",
            {"location_id": loc, "inventory_item_id": inv, "available_adjustment": 10},
        )["available"]
        == 11
    )
    err(
        env,
        SH + "adjust_inventory",
        {"location_id": loc, "inventory_item_id": inv, "available_adjustment": -12},
        422,
    )
    assert (
        ok(env, SH + "get_inventory_levels", {"inventory_item_ids": inv})["inventory_levels"][0]["available"]
        == 11
    )
    err(env, SH + "get_inventory_levels", {}, 400)
    assert (
        ok(env, SH + "list_inventory_items", {"query": "CBL", "limit": 250})["inventory_items"][0]["id"]
        == inv
    )
    draft = ok(
        env, SH + "create_draft_order", {"line_items": [{"variant_id": vid, "quantity": 50}], "note": "quote"}
    )
    assert ok(env, SH + "get_draft_order", {"draft_order_id": draft["id"]})["total_price"] == "475.00"
    assert ok(env, SH + "list_draft_orders", {"status": "open"})["draft_orders"][0]["id"] == draft["id"]
    col = ok(env, SH + "create_collection", {"title": "Summer"})
    err(env, SH + "create_collection", {"title": "summer"}, 422)
    assert ok(env, SH + "get_collection", {"collection_id": col["id"]})["products"] == []
    assert ok(env, SH + "list_collections", {"title": "summer"})["collections"][0]["id"] == col["id"]
    rule = ok(
        env,
        SH + "create_discount",
        {
            "title": "10 off",
            "value_type": "fixed_amount",
            "value": "-10.00",
            "target_type": "line_item",
            "target_selection": "all",
            "starts_at": "2026-03-10T00:00:00Z",
            "ends_at": "2026-03-31T00:00:00Z",
        },
    )
    err(
        env,
        SH + "create_discount",
        {
            "title": "Bad",
            "value_type": "percentage",
            "value": "10",
            "target_type": "line_item",
            "target_selection": "all",
        },
        400,
    )
    err(
        env,
        SH + "create_discount",
        {
            "title": "Back",
            "value_type": "percentage",
            "value": "-5",
            "target_type": "line_item",
            "target_selection": "all",
            "starts_at": "2026-03-10T00:00:00Z",
            "ends_at": "2026-03-01T00:00:00Z",
        },
        422,
    )
    assert ok(env, SH + "get_discount", {"price_rule_id": rule["id"]})["value"] == "-10.00"
    assert rule["id"] in {r["id"] for r in ok(env, SH + "list_discounts")["price_rules"]}


def test_marketing_audiences_members_campaigns() -> None:
    env = Environment(services=["marketing"], seed=6)
    assert ok(env, M + "ping")["health_status"]
    assert ok(env, M + "get_account_info")["total_audiences"] == 3
    contact = {"company": "Acme", "address1": "1 Main St", "city": "Springfield", "country": "US"}
    aud = ok(
        env,
        M + "create_audience",
        {
            "name": "Beta",
            "contact": contact,
            "permission_reminder": "You joined the beta",
            "from_name": "Acme",
            "from_email": "beta@acme.example",
            "subject": "Beta news",
        },
    )
    err(
        env,
        M + "create_audience",
        {
            "name": "Bad",
            "contact": {"city": "x"},
            "permission_reminder": "p",
            "from_name": "f",
            "from_email": "a@b.example",
            "subject": "s",
        },
        400,
    )
    assert ok(env, M + "get_all_audiences", {"count": 10})["total_items"] == 4
    ok(env, M + "update_audience", {"list_id": aud["id"], "double_optin": True})
    err(env, M + "update_audience", {"list_id": aud["id"]}, 400)
    m = ok(
        env,
        M + "add_member_to_audience",
        {"list_id": aud["id"], "email_address": "Fan@Example.com", "merge_fields": {"FNAME": "Fan"}},
    )
    assert m["status"] == "pending"  # double opt-in
    err(
        env,
        M + "add_member_to_audience",
        {"list_id": aud["id"], "email_address": "fan@example.com"},
        409,
        "member_exists",
    )
    ok(
        env,
        M + "update_member",
        {"list_id": aud["id"], "email_address": "fan@example.com", "status": "subscribed"},
    )
    info = ok(env, M + "get_member_info", {"list_id": aud["id"], "email_address": "FAN@example.com"})
    assert info["status"] == "subscribed" and len(info["subscriber_hash"]) == 32
    ok(
        env,
        M + "add_member_tags",
        {"list_id": aud["id"], "email_address": "fan@example.com", "tags": ["vip"]},
    )
    err(
        env,
        M + "add_member_tags",
        {"list_id": aud["id"], "email_address": "fan@example.com", "tags": ["vip"]},
        409,
    )
    ok(
        env,
        M + "remove_member_tags",
        {"list_id": aud["id"], "email_address": "fan@example.com", "tags": ["vip"]},
    )
    err(
        env,
        M + "remove_member_tags",
        {"list_id": aud["id"], "email_address": "fan@example.com", "tags": ["vip"]},
        422,
    )
    assert ok(env, M + "get_audience_info", {"list_id": aud["id"]})["stats"] == {"subscribed": 1}
    camp = ok(
        env,
        M + "create_campaign",
        {
            "type": "regular",
            "list_id": aud["id"],
            "subject_line": "Hello beta",
            "from_name": "Acme",
            "reply_to": "beta@acme.example",
        },
    )
    err(env, M + "send_campaign", {"campaign_id": camp["id"]}, 422, "campaign_not_ready")
    err(env, M + "set_campaign_content", {"campaign_id": camp["id"]}, 400)
    err(env, M + "set_campaign_content", {"campaign_id": camp["id"], "url": "https://example.com"}, 422)
    ok(env, M + "set_campaign_content", {"campaign_id": camp["id"], "html": "<p>Hi *|FNAME|*</p>"})
    err(
        env,
        M + "schedule_campaign",
        {"campaign_id": camp["id"], "schedule_time": "2026-03-01T10:00:00Z"},
        422,
        "schedule_in_past",
    )
    ok(env, M + "schedule_campaign", {"campaign_id": camp["id"], "schedule_time": "2026-03-05T10:15:00Z"})
    sent = ok(env, M + "send_campaign", {"campaign_id": camp["id"]})
    assert sent["emails_sent"] == 1
    err(env, M + "send_campaign", {"campaign_id": camp["id"]}, 422, "campaign_sent")
    act = ok(env, M + "get_member_activity", {"list_id": aud["id"], "email_address": "fan@example.com"})[
        "activity"
    ]
    assert act[0]["campaign_id"] == camp["id"]
    assert ok(env, M + "get_campaign_info", {"campaign_id": camp["id"]})["status"] == "sent"
    assert camp["id"] in {
        c["id"] for c in ok(env, M + "get_all_campaigns", {"status": "sent", "count": 100})["campaigns"]
    }
    assert (
        ok(env, M + "get_audience_members", {"list_id": aud["id"], "status": "subscribed"})["total_items"]
        == 1
    )
    ok(env, M + "delete_campaign", {"campaign_id": camp["id"]})
    ok(env, M + "delete_member", {"list_id": aud["id"], "email_address": "fan@example.com"})
    err(env, M + "get_member_info", {"list_id": aud["id"], "email_address": "fan@example.com"}, 404)
    ok(env, M + "delete_audience", {"list_id": aud["id"]})
    err(env, M + "get_audience_info", {"list_id": aud["id"]}, 404)
